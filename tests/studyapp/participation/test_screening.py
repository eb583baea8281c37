"""Screening rules and the income band -> JPY rule, against the paper's Appendix B.1."""

from __future__ import annotations

import pytest

from recourse_engine import carloan_schema
from studyapp.definition import screening

QS = screening.questions(carloan_schema().to_dict())
BASE = {"age": 30, "gender": 2, "occupation": 1, "income": 4, "car_purchase": 1, "loans": [8]}


@pytest.mark.parametrize(
    ("label", "jpy"),
    [("4M-5M", 4_500_000), ("2M-3M", 2_500_000), ("-2M", 1_000_000), ("10M-", 10_000_000)],
)
def test_income_band_rule(label: str, jpy: float) -> None:
    assert screening.income_band_to_jpy(label) == jpy


@pytest.mark.parametrize("label", ["", "abc", "5M-4M", "-"])
def test_bad_income_band(label: str) -> None:
    with pytest.raises(screening.ScreeningError, match="income band"):
        screening.income_band_to_jpy(label)


@pytest.mark.parametrize(
    ("change", "eligible"),
    [
        ({}, True),
        ({"occupation": 5}, True),  # government worker
        ({"occupation": 6}, False),  # self-employed: excluded (#6-#11)
        ({"occupation": 9}, False),  # student
        ({"income": 9}, True),  # 9M-10M
        ({"income": 10}, False),  # 10M-: excluded
        ({"car_purchase": 4}, True),
        ({"car_purchase": 5}, False),  # no plan to buy
        ({"loans": [1]}, False),  # card loan
        ({"loans": [1, 8]}, False),  # contradictory, has a loan
        ({"loans": []}, False),
    ],
)
def test_eligibility_follows_appendix_b1(change: dict, eligible: bool) -> None:
    assert screening.is_eligible(QS, {**BASE, **change}) is eligible


def test_group_attributes_are_labels_and_jpy() -> None:
    attrs = screening.group_attributes(QS, BASE)
    assert attrs == {"gender": "Male", "age": 30, "income_band": "4M-5M", "income_jpy": 4_500_000}
