"""The page script's payload is checked before anything is stored (no database)."""

from __future__ import annotations

import json

import pytest

from studyapp.integrity.payload import MAX_BYTES, PayloadError, payload_parse

FORM = ("acceptance", "acceptance_why", "action", "action_why", "q_budget")


def _raw(**over: object) -> str:
    data = {
        "v": 1,
        "page_ms": 30_000,
        "blurs": 1,
        "hidden": 1,
        "away_ms": 2_500,
        "fields": {"acceptance_why": {"pastes": 1, "pasted_chars": 80, "inputs": 1}},
    }
    data.update(over)
    return json.dumps(data)


def test_a_payload_of_the_scripts_shape_is_read():
    p = payload_parse(_raw(), FORM)
    assert p.page_ms == 30_000 and p.hidden == 1
    assert p.fields["acceptance_why"].pastes == 1
    assert p.fields["acceptance_why"].first_ms is None


def test_a_part_of_a_multi_part_item_belongs_to_its_field():
    p = payload_parse(_raw(fields={"q_budget_1": {"inputs": 2}, "q_budget.rent": {}}), FORM)
    assert p.fields["q_budget_1"].inputs == 2 and p.fields["q_budget.rent"].inputs == 0


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("{not json", "not JSON"),
        (_raw(v=2), "v"),
        (_raw(page_ms=-1), "page_ms"),
        (_raw(page_ms=10**12), "page_ms"),
        (_raw(extra=1), "extra"),
        (_raw(fields={"acceptance": {"pastes": "many"}}), "fields.acceptance.pastes"),
        (_raw(fields={"password": {"inputs": 1}}), "'password' is not a field of this page"),
        (_raw(fields={"q_budget_x": {"inputs": 1}}), "not a field of this page"),
        (_raw(fields={"q_other.rent": {"inputs": 1}}), "not a field of this page"),
        (_raw(fields={"q_budget rent": {"inputs": 1}}), "not a field of this page"),
        (json.dumps([1, 2]), "payload"),
    ],
)
def test_a_bad_payload_is_refused_with_its_reason(raw: str, says: str):
    with pytest.raises(PayloadError, match=None) as info:
        payload_parse(raw, FORM)
    assert says in str(info.value)


def test_an_oversized_payload_is_refused_before_it_is_read():
    raw = _raw(pad="x" * MAX_BYTES)
    with pytest.raises(PayloadError, match="bytes; at most"):
        payload_parse(raw, FORM)
