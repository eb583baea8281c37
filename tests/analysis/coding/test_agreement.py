"""Coder agreement: kappa and alpha against hand-computed values on a tiny table, and on the
committed codings (make_codings.py) against direct slow formulas written out here (the
product uses scikit-learn's kappa and the `krippendorff` package)."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.coding import Codebook, CodingError, agreement, coding_matrix
from analysis.coding.codebook import CodebookError

HERE = Path(__file__).parent
BOOK = Codebook.of([{"code": "cost"}, {"code": "effort"}, {"code": "unrealistic"}])


def _row(result: pd.DataFrame, code: str, **where: str) -> pd.Series:
    sel = result[result["code"] == code]
    for k, v in where.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1
    return sel.iloc[0]


def test_by_hand_on_three_answers():
    c = pd.DataFrame(
        {
            "unit": ["u1", "u2", "u3"] * 2,
            "coder": ["a"] * 3 + ["b"] * 3,
            "codes": ["cost", "effort;cost", "", "cost", "effort", ""],
        }
    )
    r = agreement(c, BOOK)
    # cost: a = 1,1,0; b = 1,0,0. p_o = 2/3, p_e = 2/3*1/3 + 1/3*2/3 = 4/9 -> (2/9)/(5/9)
    assert _row(r.kappa, "cost")["kappa"] == pytest.approx(0.4)
    # alpha, nominal: pairs (1,1), (1,0), (0,0): D_o = 2/6, D_e = 2*3*3/(6*5) = 0.6
    assert _row(r.alpha, "cost")["alpha"] == pytest.approx(1 - (2 / 6) / 0.6)
    assert _row(r.kappa, "effort")["kappa"] == pytest.approx(1.0)
    # nobody gave "unrealistic": kappa and alpha are 0/0, reported as NaN, never as 1
    assert np.isnan(_row(r.kappa, "unrealistic")["kappa"])
    assert np.isnan(_row(r.alpha, "unrealistic")["alpha"])
    # overall: labels {cost}, {cost,effort}, {} against {cost}, {effort}, {}: 2 of 3 agree
    overall = _row(r.alpha, "(all codes)")
    assert overall["n_units"] == 3 and overall["n_coders"] == 2


def _kappa_direct(x: list[str], y: list[str]) -> float:
    n = len(x)
    po = sum(a == b for a, b in zip(x, y, strict=True)) / n
    cx, cy = Counter(x), Counter(y)
    pe = sum(cx[k] * cy[k] for k in set(x) | set(y)) / n**2
    return (po - pe) / (1 - pe)


def _alpha_direct(matrix: pd.DataFrame) -> float:
    """Krippendorff's nominal alpha from the coincidence matrix, written out."""
    pairs: Counter = Counter()
    for unit in matrix.columns:
        values = [v for v in matrix[unit] if isinstance(v, str) or not pd.isna(v)]
        m = len(values)
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            pairs[(values[i], values[j])] += 1 / (m - 1)
    n_c: Counter = Counter()
    for (a, _), w in pairs.items():
        n_c[a] += w
    n = sum(n_c.values())
    d_o = sum(w for (a, b), w in pairs.items() if a != b) / n
    d_e = sum(n_c[a] * n_c[b] for a in n_c for b in n_c if a != b) / (n * (n - 1))
    return 1 - d_o / d_e


def test_committed_codings_against_direct_formulas():
    codings = pd.read_csv(HERE / "codings.csv", dtype=str, keep_default_na=False)
    r = agreement(codings, BOOK)
    for code in [*BOOK.names, None]:
        name = "(all codes)" if code is None else code
        matrix = coding_matrix(codings, code)
        assert _row(r.alpha, name)["alpha"] == pytest.approx(_alpha_direct(matrix), abs=1e-9)
        for a, b in itertools.combinations("abc", 2):
            both = matrix.loc[[a, b]].dropna(axis=1)
            row = _row(r.kappa, name, coder_a=a, coder_b=b)
            assert row["n_units"] == both.shape[1] == (32 if "c" in (a, b) else 40)
            x, y = both.loc[a].astype(str).tolist(), both.loc[b].astype(str).tolist()
            assert row["kappa"] == pytest.approx(_kappa_direct(x, y), abs=1e-9)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [("u1", "a", "cost"), ("u1", "a", "effort"), ("u1", "b", "")],
            "coded unit 'u1' more than once",
        ),
        ([("u1", "a", "costs"), ("u1", "b", "")], "code 'costs' is not in the codebook"),
        ([("u1", "a", "cost")], "at least two coders"),
    ],
)
def test_bad_codings_are_refused(rows, message):
    frame = pd.DataFrame(rows, columns=["unit", "coder", "codes"])
    with pytest.raises(CodingError, match=message):
        agreement(frame, BOOK)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"code": "cost"}, {"code": "cost"}], "row 2: duplicate code 'cost'"),
        ([{"code": "Cost!"}], "row 1: code 'Cost!' must be"),
        ([], "holds no code"),
    ],
)
def test_bad_codebooks_are_refused(rows, message):
    with pytest.raises(CodebookError, match=message):
        Codebook.of(rows)
