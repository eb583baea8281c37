"""The experiment's thread limit: every numeric library at the limit inside the block, as
before after it."""

from __future__ import annotations

import pytest
import torch
from threadpoolctl import threadpool_info

from analysis.experiment.threads import thread_limit


def test_thread_limit_sets_and_restores_every_library():
    before_torch = torch.get_num_threads()
    before = {(i["prefix"], i["filepath"]): i["num_threads"] for i in threadpool_info()}
    with thread_limit(1):
        assert torch.get_num_threads() == 1
        assert all(i["num_threads"] == 1 for i in threadpool_info())
    assert torch.get_num_threads() == before_torch
    after = {(i["prefix"], i["filepath"]): i["num_threads"] for i in threadpool_info()}
    assert after == before


def test_no_limit_changes_nothing_and_zero_is_refused():
    n = torch.get_num_threads()
    with thread_limit(None):
        assert torch.get_num_threads() == n
    with pytest.raises(ValueError, match="at least 1"), thread_limit(0):
        pass
