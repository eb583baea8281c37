"""The method-comparison report of a study export (`python -m analysis methods`).

A study that shows each participant recourses from several strategies or methods asks three
things of its ratings, for acceptance and for action alike:

* how much each method moves the rating against a reference method, with a 95% interval
  (``y ~ method + s(distance) + s(participant, bs = 're')``, REML);
* how the rating falls or rises with the recourse's distance under each method
  (``y ~ method + s(distance, by = method) + s(participant, bs = 're')``, REML, predictions
  with pointwise 95% bands);
* whether that distance effect differs by method at all: the two models refitted by ML and
  compared with mgcv's likelihood-ratio test (``anova.gam(..., test = "Chisq")``).

Every model is fitted to the same evaluations, so that the comparison is of nested models of
one data set; which evaluations those are, and why the others were left out, is part of the
report (``analysis.study_selection``). Fitting and comparing is ``analysis.gamm``'s (checked against mgcv);
this module only chooses the data and the models and reads the numbers out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from analysis.export import StudyExport
from analysis.gamm import GammFit, anova_chisq, fit_gamm
from analysis.gamm.fit import Z95
from analysis.study_selection import (
    MIN_PER_LEVEL,
    OUTCOMES,
    PARTICIPANT,
    Selection,
    select_evaluations,
)


@dataclass
class Contrast:
    """One level against the reference: estimate, se, t-based 95% interval, t, p."""

    term: str
    level: str
    estimate: float
    se: float
    lower: float
    upper: float
    t: float
    p: float


@dataclass
class Comparison:
    """Common smooth vs smooth by level, both by ML: AICs and mgcv's likelihood-ratio test."""

    aic_common: float
    aic_by: float
    ml_common: float
    ml_by: float
    df: float
    deviance: float
    p: float
    differs: bool
    verdict: str


@dataclass
class OutcomeReport:
    outcome: str
    n: int
    formula_common: str
    formula_by: str
    contrasts: list[Contrast]
    curves: pd.DataFrame
    smooths: dict[str, dict[str, float]]
    comparison: Comparison
    fits: dict[str, GammFit] = field(repr=False, default_factory=dict)


def model_formulas(outcome: str, factor: str, distance: str, k: int) -> tuple[str, str]:
    """(common smooth, smooth by level), in mgcv's syntax."""
    re = f"s({PARTICIPANT}, bs = 're')"
    return (
        f"{outcome} ~ {factor} + s({distance}, k = {k}) + {re}",
        f"{outcome} ~ {factor} + s({distance}, by = {factor}, k = {k}) + {re}",
    )


def factor_contrasts(fit: GammFit, factor: str, reference: str | None = None) -> list[Contrast]:
    """Each level of `factor` against `reference` (default: mgcv's, the first sorted level).

    The fit has mgcv's treatment contrasts against the first level; another reference is the
    difference of two coefficients, var = scale * c' P c over the fixed block of H^-1. This is
    exactly what refitting with `relevel()` gives, since the penalized fit does not depend on
    how its unpenalized factor columns are parameterised (checked against mgcv's relevel fit)."""
    term = next(t for t in fit.design.terms if t.kind == "parametric" and t.label == factor)
    levels = list(term.spec.levels)
    reference = levels[0] if reference is None else reference
    start = term.fixed_slice.start
    index = {lv: (None if i == 0 else start + i - 1) for i, lv in enumerate(levels)}
    beta, cov = fit.state.beta_f, fit.scale * fit.state.fac.p
    crit = float(stats.t.ppf(0.975, fit.residual_df))
    out = []
    for level in levels:
        if level == reference:
            continue
        w = np.zeros(beta.size)
        if index[level] is not None:
            w[index[level]] += 1.0
        if index[reference] is not None:
            w[index[reference]] -= 1.0
        est, se = float(w @ beta), float(np.sqrt(w @ cov @ w))
        t = est / se
        p = float(2.0 * stats.t.sf(abs(t), fit.residual_df))
        out.append(
            Contrast(f"{factor}{level}", level, est, se, est - crit * se, est + crit * se, t, p)
        )
    return out


def level_curves(fit: GammFit, data: pd.DataFrame, factor: str, distance: str, points: int = 50):
    """The fitted rating (intercept + level + its smooth; participant effects excluded) on
    `points` values spanning each level's own distances, with pointwise 95% bands."""
    frames = []
    for level in sorted(data[factor].unique()):
        x = data.loc[data[factor] == level, distance]
        grid = pd.DataFrame(
            {
                factor: level,
                distance: np.linspace(x.min(), x.max(), points),
                PARTICIPANT: data[PARTICIPANT].iloc[0],
            }
        )
        pred = fit.predict_se(grid, exclude=[f"s({PARTICIPANT})"])
        frames.append(
            pd.DataFrame(
                {
                    "level": level,
                    distance: grid[distance],
                    "fit": pred["fit"],
                    "se": pred["se"],
                    "lower": pred["fit"] - Z95 * pred["se"],
                    "upper": pred["fit"] + Z95 * pred["se"],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def compare_distance_effect(ml0: GammFit, ml1: GammFit, outcome: str, factor: str) -> Comparison:
    """anova.gam's likelihood-ratio test of the common-smooth fit against the by-level fit.

    "Differs" needs p < 0.05 with the by-level model both larger and closer to the data; the
    sentence says which, with the test and both AICs."""
    an = anova_chisq(ml0, ml1)
    differs = bool(an.p < 0.05 and an.df > 0 and an.deviance > 0)
    words = "differs" if differs else "does not clearly differ"
    verdict = (
        f"For {outcome}, the distance effect {words} by {factor} (likelihood-ratio test of the "
        f"ML fits: chi-square df {an.df:.2f}, p = {_p(an.p)}; AIC {ml1.aic:.1f} with a smooth "
        f"per {factor} vs {ml0.aic:.1f} with one common smooth)."
    )
    return Comparison(
        ml0.aic, ml1.aic, ml0.reml, ml1.reml, an.df, an.deviance, an.p, differs, verdict
    )


def _p(p: float) -> str:
    return "nan" if not np.isfinite(p) else f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


def fit_outcome(
    sel: Selection, outcome: str, reference: str | None = None, points: int = 50
) -> OutcomeReport:
    """The three steps of the module docstring for one rating."""
    factor, distance = sel.factor, sel.distance
    data = sel.kept[[outcome, factor, distance, PARTICIPANT]].reset_index(drop=True)
    common, by = model_formulas(outcome, factor, distance, sel.k)
    fits = {
        "common": fit_gamm(common, data),
        "by": fit_gamm(by, data),
        "ml_common": fit_gamm(common, data, method="ML"),
        "ml_by": fit_gamm(by, data, method="ML"),
    }
    prefix = f"s({distance}):{factor}"
    smooths = {
        name[len(prefix) :]: {"edf": row.edf, "F": row.F, "p": row.p}
        for name, row in fits["by"].smooth.items()
        if name.startswith(prefix)
    }
    return OutcomeReport(
        outcome=outcome,
        n=len(data),
        formula_common=common,
        formula_by=by,
        contrasts=factor_contrasts(fits["common"], factor, reference),
        curves=level_curves(fits["by"], data, factor, distance, points),
        smooths=smooths,
        comparison=compare_distance_effect(fits["ml_common"], fits["ml_by"], outcome, factor),
        fits=fits,
    )


@dataclass
class StudyReport:
    source: str
    selection: Selection
    reference: str
    outcomes: dict[str, OutcomeReport]

    def to_json(self) -> dict[str, Any]:
        """Every number of the report, for scripts (`--json`)."""
        sel = self.selection
        return {
            "source": self.source,
            "factor": sel.factor,
            "distance": sel.distance,
            "reference": self.reference,
            "levels": sel.levels,
            "levels_in_export": sel.all_levels,
            "k": sel.k,
            "evaluations": {
                "total": int(len(sel.evaluations)),
                "kept": sel.n_kept,
                "dropped": sel.n_dropped,
                "dropped_by_reason": sel.dropped_by_reason(),
                "by_level": {
                    str(lv): {str(k): int(v) for k, v in row.items()}
                    for lv, row in sel.by_level().iterrows()
                },
            },
            "participants": sel.participants,
            "outcomes": {name: _outcome_json(o, sel) for name, o in self.outcomes.items()},
        }


def _outcome_json(o: OutcomeReport, sel: Selection) -> dict[str, Any]:
    return {
        "n_kept": o.n,
        "n_dropped": sel.n_dropped,
        "formula_common": o.formula_common,
        "formula_by": o.formula_by,
        "contrasts": [vars(x) for x in o.contrasts],
        "smooths": o.smooths,
        "comparison": dict(vars(o.comparison)),
        "curves": o.curves.to_dict(orient="list"),
    }


def build_report(
    export: StudyExport,
    source: str,
    factor: str = "strategy",
    distance: str = "proximity",
    reference: str | None = None,
    *,
    min_per_level: int = MIN_PER_LEVEL,
    k: int = 10,
    points: int = 50,
) -> StudyReport:
    """Select the evaluations and fit both outcomes; raises before anything is written."""
    sel = select_evaluations(
        export, factor, distance, reference=reference, min_per_level=min_per_level, k=k
    )
    ref = reference if reference is not None else sel.levels[0]
    outcomes = {o: fit_outcome(sel, o, ref, points) for o in OUTCOMES}
    return StudyReport(source, sel, ref, outcomes)
