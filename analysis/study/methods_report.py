"""The method-comparison report of a study export (`python -m analysis methods`).

A study that shows each participant recourses from several strategies or methods asks three
things of its ratings, for acceptance and for action alike, after a plain look at them (n, mean
and SD of each rating per condition and level, ``rating_descriptives``):

* how much each method moves the rating against a reference method, with a 95% interval
  (``y ~ method + s(distance) + s(participant, bs = 're')``, REML);
* how the rating falls or rises with the recourse's distance under each method
  (``y ~ method + s(distance, by = method) + s(participant, bs = 're')``, REML, predictions
  with pointwise 95% bands);
* whether that distance effect differs by method at all: the two models refitted by ML and
  compared with mgcv's likelihood-ratio test (``anova.gam(..., test = "Chisq")``) where that
  test applies (nested, the by-level model with more effective degrees of freedom and closer
  to the data); otherwise only their AICs, with a sentence saying why there is no test.

Every model is fitted to the same evaluations, so that the comparison is of nested models of
one data set; which evaluations those are, and why the others were left out, is part of the
report (``analysis.study.selection``). Fitting and comparing is ``analysis.gamm``'s (checked against mgcv);
this module only chooses the data and the models and reads the numbers out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from analysis.export import StudyExport
from analysis.gamm import GammFit, anova_chisq, fit_gamm, why_no_lr_test
from analysis.gamm.fit import Z95
from analysis.study.selection import (
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
    """Common smooth vs smooth by level, both by ML: AICs and mgcv's likelihood-ratio test;
    where the test does not apply, ``p`` is None and ``no_test`` says why."""

    aic_common: float
    aic_by: float
    ml_common: float
    ml_by: float
    df: float
    deviance: float
    p: float | None
    no_test: str
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


#: the export's column naming each participant's condition (empty: a single condition)
CONDITION = "condition"
NO_CONDITION = "(empty)"


def rating_descriptives(sel: Selection) -> pd.DataFrame:
    """n, mean and SD (n - 1 in the denominator) of each rating per condition and level, over
    the kept evaluations: the data the models are fitted to, seen plainly before any model.
    One n serves both ratings, since the export has no evaluation without both. An export
    without a condition column, or with it empty, has the one condition "(empty)"."""
    kept = sel.kept
    if CONDITION in kept:
        condition = kept[CONDITION].astype("string").str.strip().fillna("")
        condition = condition.replace("", NO_CONDITION).astype(str)
    else:
        condition = pd.Series(NO_CONDITION, index=kept.index)
    keys = [kept[sel.factor]]  # comparing the conditions themselves: one key
    if sel.factor != CONDITION:
        keys.insert(0, condition.rename(CONDITION))
    grouped = kept.groupby(keys, sort=True)
    table = grouped.size().rename("n").to_frame()
    for outcome in OUTCOMES:
        table[f"{outcome}_mean"] = grouped[outcome].mean()
        table[f"{outcome}_sd"] = grouped[outcome].std(ddof=1)
    return table.reset_index()


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

    The test is made only where it applies (``why_no_lr_test``): mgcv prints one for any two
    fits, e.g. with -2.35 df beside an AIC favouring the other model. "Differs" needs the test
    and p < 0.05; without a test the sentence says why and which model AIC favours."""
    an = anova_chisq(ml0, ml1)
    aics = f"AIC {ml1.aic:.1f} with a smooth per {factor} vs {ml0.aic:.1f} with one common smooth"
    why_not = why_no_lr_test(ml0, ml1, an)
    if why_not is not None:
        favoured = (
            f"a smooth per {factor}"
            if ml1.aic < ml0.aic
            else "one common smooth"
            if ml0.aic < ml1.aic
            else "neither"
        )
        verdict = (
            f"For {outcome}, no likelihood-ratio test: {why_not}. {aics}: AIC favours "
            f"{favoured}; without a test the distance effect is not shown to differ by {factor}."
        )
        return Comparison(
            ml0.aic, ml1.aic, ml0.reml, ml1.reml, an.df, an.deviance, None, why_not, False, verdict
        )
    differs = bool(an.p < 0.05)
    words = "differs" if differs else "does not clearly differ"
    verdict = (
        f"For {outcome}, the distance effect {words} by {factor} (likelihood-ratio test of the "
        f"ML fits: chi-square df {an.df:.2f}, p = {_p(an.p)}; {aics})."
    )
    return Comparison(
        ml0.aic, ml1.aic, ml0.reml, ml1.reml, an.df, an.deviance, an.p, "", differs, verdict
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
    descriptives: pd.DataFrame = field(default_factory=pd.DataFrame)

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
            "descriptives": [
                {k: (None if pd.isna(v) else v) for k, v in row.items()}
                for row in self.descriptives.to_dict(orient="records")
            ],
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
    return StudyReport(source, sel, ref, outcomes, rating_descriptives(sel))
