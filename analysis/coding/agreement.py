"""Agreement between coders, per code and overall.

Input: one row per answer (`unit`) and coder, with the codes that coder gave it
(`codes`, ';'-joined, possibly empty: "coded, no code applies"). Per code, each coder's
judgement of a unit is binary (given or not); overall, it is the whole set of codes, a
nominal label. Cohen's kappa (scikit-learn's `cohen_kappa_score`) for every pair of coders
over the units both coded; Krippendorff's alpha (the `krippendorff` package, nominal level)
over all coders, units coded by one coder only counting as missing. A coder who codes the
same unit twice, or gives a code outside the codebook, is refused: agreement is computed on
exactly one judgement per coder and unit. Where every judgement of a code is the same
label (nobody ever gave it, say), kappa and alpha are 0/0 and reported as NaN, not as a
perfect 1.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.coding.codebook import Codebook

OVERALL = "(all codes)"


class CodingError(ValueError):
    """Codings that cannot be compared; the message names the unit, coder or code."""


@dataclass
class Agreement:
    """`kappa`: code, coder_a, coder_b, kappa, n_units; `alpha`: code, alpha, n_units
    (coded by at least two coders), n_coders."""

    kappa: pd.DataFrame
    alpha: pd.DataFrame


def _sets(codings: pd.DataFrame, codebook: Codebook | None) -> pd.DataFrame:
    missing = {"unit", "coder", "codes"} - set(codings.columns)
    if missing:
        raise CodingError(f"codings need the columns unit, coder, codes; missing {sorted(missing)}")
    frame = codings[["unit", "coder", "codes"]].fillna("").astype(str)
    dup = frame.duplicated(["unit", "coder"], keep=False)
    if dup.any():
        row = frame[dup].iloc[0]
        raise CodingError(f"coder {row['coder']!r} coded unit {row['unit']!r} more than once")
    sets = frame["codes"].map(lambda s: frozenset(c.strip() for c in s.split(";") if c.strip()))
    if codebook is not None:
        known = set(codebook.names)
        for (unit, coder), given in zip(
            zip(frame["unit"], frame["coder"], strict=True), sets, strict=True
        ):
            unknown = sorted(given - known)
            if unknown:
                raise CodingError(
                    f"coder {coder!r}, unit {unit!r}: code {unknown[0]!r} is not in the codebook"
                )
    return frame.assign(codes=sets)


def coding_matrix(codings: pd.DataFrame, code: str | None = None) -> pd.DataFrame:
    """Coders x units: 1/0 for `code` given or not, or the sorted code set as a label when
    `code` is None; NaN where a coder did not code the unit."""
    frame = _sets(codings, None)
    if code is None:
        values = frame["codes"].map(lambda s: ";".join(sorted(s)))
    else:
        values = frame["codes"].map(lambda s: float(code in s))
    return frame.assign(v=values).pivot(index="coder", columns="unit", values="v")


def _alpha(matrix: pd.DataFrame) -> tuple[float, int]:
    import krippendorff

    pairable = matrix.notna().sum(axis=0) >= 2
    m = matrix.loc[:, pairable]
    if m.shape[1] == 0:
        return float("nan"), 0
    labels = sorted(
        {v for v in m.to_numpy().ravel() if isinstance(v, str) or not pd.isna(v)}, key=str
    )
    if len(labels) < 2:
        return float("nan"), int(m.shape[1])  # one value throughout: alpha is undefined
    index = {v: float(i) for i, v in enumerate(labels)}
    data = m.map(lambda v: np.nan if (not isinstance(v, str) and pd.isna(v)) else index[v])
    value = krippendorff.alpha(
        reliability_data=data.to_numpy(float), level_of_measurement="nominal"
    )
    return float(value), int(m.shape[1])


def agreement(codings: pd.DataFrame, codebook: Codebook | None = None) -> Agreement:
    """Kappa for each pair of coders and alpha over all coders, for each code and overall."""
    from sklearn.metrics import cohen_kappa_score

    sets = _sets(codings, codebook)
    coders = sorted(sets["coder"].unique())
    if len(coders) < 2:
        raise CodingError(f"agreement needs at least two coders; found {len(coders)}")
    codes = codebook.names if codebook is not None else sorted(set().union(*sets["codes"]))
    kappa_rows, alpha_rows = [], []
    for code in [*codes, None]:
        matrix = coding_matrix(codings, code)
        name = OVERALL if code is None else code
        for a, b in itertools.combinations(coders, 2):
            both = matrix.loc[[a, b]].dropna(axis=1)
            ya, yb = both.loc[a].astype(str).tolist(), both.loc[b].astype(str).tolist()
            if not ya:
                value = float("nan")
            elif len(set(ya) | set(yb)) < 2:
                value = float("nan")  # one label throughout: kappa is 0/0, undefined
            else:
                value = float(cohen_kappa_score(ya, yb))
            kappa_rows.append({"code": name, "coder_a": a, "coder_b": b, "kappa": value,
                               "n_units": len(ya)})  # fmt: skip
        alpha, n_units = _alpha(matrix)
        alpha_rows.append({"code": name, "alpha": alpha, "n_units": n_units,
                           "n_coders": len(coders)})  # fmt: skip
    return Agreement(pd.DataFrame(kappa_rows), pd.DataFrame(alpha_rows))
