"""The synthetic data against the paper's recipe (four Gaussian groups, max-abs scaling)."""

from __future__ import annotations

import numpy as np
import pytest

from recourse_engine.datasets import DatasetError, load_dataset, synthetic


def test_four_groups_of_200_scaled_to_the_unit_square():
    d = synthetic(seed=11)
    assert len(d) == 800
    for g in (0, 1):
        for y in (0, 1):
            assert ((d.group == g) & (d.y == y)).sum() == 200
    xy = d.codes[:, :2]
    assert xy.min() >= 0 and xy.max() <= 1
    # (v / max|v| + 1) / 2: the most extreme point of each feature lands on 0 or 1
    assert np.allclose(np.abs(2 * xy - 1).max(axis=0), 1.0)
    assert np.array_equal(d.codes[:, 2], d.group + 1.0)


def test_group_means_follow_the_paper_parameters():
    """Scaling is affine per feature, so differences of group means keep the ratios of the
    paper's means: (0,10) M-repay, (5,5) F-repay, (-5,-10) M-default, (0,-15) F-default."""
    ratios = []
    for seed in range(5):
        d = synthetic(seed=seed)
        m = {
            (g, y): d.codes[(d.group == g) & (d.y == y), :2].mean(axis=0)
            for g in (0, 1)
            for y in (0, 1)
        }
        # x1: (M-repay - F-repay) / (M-default - F-default) = (0 - 5) / (-5 - 0) = 1
        ratios.append((m[1, 1][0] - m[0, 1][0]) / (m[1, 0][0] - m[0, 0][0]))
        # x2: (M-repay - M-default) / (F-repay - F-default) = 20 / 20 = 1
        ratios.append((m[1, 1][1] - m[1, 0][1]) / (m[0, 1][1] - m[0, 0][1]))
        # x2 gap repay-default is 4x the x2 gap between the repay groups: 20 / 5
        assert (m[1, 1][1] - m[1, 0][1]) / (m[1, 1][1] - m[0, 1][1]) == pytest.approx(4, rel=0.25)
    assert np.mean(ratios) == pytest.approx(1.0, abs=0.05)


def test_seeds_differ_and_repeat():
    assert np.array_equal(synthetic(1).codes, synthetic(1).codes)
    assert not np.array_equal(synthetic(1).codes, synthetic(2).codes)


def test_bad_dataset_requests():
    with pytest.raises(DatasetError, match="unknown dataset .mnist."):
        load_dataset("mnist")
    with pytest.raises(DatasetError, match="n_per_group"):
        synthetic(n_per_group=1)
