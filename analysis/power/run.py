"""The replicate loop of a power analysis and what is made of its p-values.

A cell is (participants, replicate). Its data set is drawn from a generator seeded by
(seed, participants, replicate) alone — ``cell_rng`` — so a cell's p-values are the same
whichever process or machine ran it and in whatever order: the loop is handed to
``analysis.grid.map_cells`` (serial, a local Dask cluster or ``--scheduler``), which returns
the cells' results in cell order.

Tests, by name:

* a parametric coefficient of the registered model (``strategyrandom``: treatment contrast of
  level ``random`` against the first level; ``t`` test as mgcv's summary): rejected when p <
  alpha;
* a smooth or random-effect term (``s(proximity)``, ``s(proximity):strategyrandom``,
  ``s(participant)``): Wood's tests as mgcv's summary;
* ``ordinal``: the ordinal robustness check, the cumulative-logit GAMM of the same ratings
  (``analysis.gamm.ordinal``) finding the distance smooth at alpha.

A fit that fails (a factor level missing from a small sample, a singular model) gives p = NaN
and its message; power is counted over the replicates that fitted, and the failures are
reported beside it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from analysis.gamm import GammInputError, fit_gamm, parse_formula
from analysis.gamm.formula import FormulaSpec
from analysis.power.simulate import PilotModel, StatedModel
from analysis.power.spec import PowerInputError

ORDINAL = "ordinal"
INTERVALS = ("wilson", "clopper-pearson")


@dataclass(frozen=True)
class OrdinalCheck:
    """The cumulative-logit refit: the seed model's terms on the same ratings."""

    outcome: str
    distance: str
    participant: str
    basis: str
    k: int


@dataclass(frozen=True)
class Plan:
    """What every cell needs: the generator, the registered model and the tests."""

    model: StatedModel | PilotModel
    formula: str
    tests: tuple[str, ...]
    seed: int
    ordinal: OrdinalCheck | None


def _parsed(formula: str, field: str) -> FormulaSpec:
    try:
        return parse_formula(formula)
    except GammInputError as exc:
        raise PowerInputError(f"{field}: {exc}") from None


def available_tests(
    spec: FormulaSpec, levels: dict[str, tuple[str, ...]], ordinal: bool
) -> list[str]:
    """Every test the registered model offers, by name (see the module docstring)."""
    names: list[str] = []
    for term in spec.parametric:
        names += [f"{term}{lv}" for lv in levels[term][1:]] if term in levels else [term]
    for s in spec.smooths:
        if s.by is None:
            names.append(s.label)
        else:
            names += [f"{s.label}:{s.by}{lv}" for lv in levels.get(s.by, ())]
    names += [r.label for r in spec.random_effects]
    return names + ([ORDINAL] if ordinal else [])


def default_tests(spec: FormulaSpec, levels: dict[str, tuple[str, ...]]) -> list[str]:
    """Without a choice: every contrast and every smooth (not the random effects, not the
    ordinal check, which costs an ordinal fit per replicate)."""
    random = {r.label for r in spec.random_effects}
    return [t for t in available_tests(spec, levels, False) if t not in random]


def make_plan(
    model: StatedModel | PilotModel,
    formula: str,
    tests: Sequence[str] | None,
    seed: int,
    *,
    formula_field: str = "model",
    tests_field: str = "--tests",
) -> Plan:
    """Check the registered model against what is simulated and the test names against the
    model; a problem is a PowerInputError naming the field."""
    spec = _parsed(formula, formula_field)
    if spec.outcome != model.outcome:
        raise PowerInputError(
            f"{formula_field}: the outcome {spec.outcome!r} is not the simulated rating"
        )
    simulated = set(model.columns)
    for term, cols in spec.term_columns:
        missing = [c for c in cols if c not in simulated]
        if missing:
            raise PowerInputError(
                f"{formula_field}: term {term} uses column {missing[0]!r}, which is not simulated "
                f"(simulated: {', '.join(model.columns)})"
            )
    ordinal = None
    if model.cut_points is not None and spec.smooths:
        s = spec.smooths[0]
        ordinal = OrdinalCheck(spec.outcome, s.variable, model.participant, s.basis, s.k)
    levels = model.factor_levels()
    offered = available_tests(spec, levels, ordinal is not None)
    chosen = list(tests) if tests else default_tests(spec, levels)
    if not chosen:
        raise PowerInputError(f"{tests_field}: the model {formula!r} offers no test")
    for name in chosen:
        if name not in offered:
            why = " (it needs ratings on the 1..7 scale and a smooth)" if name == ORDINAL else ""
            raise PowerInputError(
                f"{tests_field}: unknown test {name!r}{why}; this model's tests: {', '.join(offered)}"
            )
    if len(set(chosen)) != len(chosen):
        raise PowerInputError(f"{tests_field}: a test is named twice: {chosen}")
    return Plan(model, spec.text, tuple(chosen), int(seed), ordinal)


def check_grid(grid: Sequence[int], replicates: int, field: str = "--participants") -> list[int]:
    """Participant numbers: whole, at least 2 each, none twice, ascending in the result."""
    if not grid:
        raise PowerInputError(f"{field}: give at least one number of participants")
    for n in grid:
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise PowerInputError(
                f"{field}: each grid point needs at least 2 participants (a random effect needs "
                f"two groups), got {n!r}"
            )
    if len(set(grid)) != len(grid):
        raise PowerInputError(f"{field}: a number of participants is given twice: {list(grid)}")
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise PowerInputError(f"--replicates: a whole number of at least 1, got {replicates!r}")
    return sorted(grid)


def cell_rng(seed: int, n: int, replicate: int) -> np.random.Generator:
    """The generator of cell (n, replicate): numpy's SeedSequence of the three numbers."""
    return np.random.default_rng([seed, n, replicate])


def _gaussian_p(plan: Plan, data: pd.DataFrame, tests: list[str]) -> dict[str, float]:
    fit = fit_gamm(plan.formula, data)
    return {t: fit.parametric[t]["p"] if t in fit.parametric else fit.smooth[t].p for t in tests}


def _ordinal_p(check: OrdinalCheck, data: pd.DataFrame) -> float:
    from analysis.gamm.ordinal import fit_ordinal_gamm

    fit = fit_ordinal_gamm(
        data, check.outcome, check.distance, check.participant, check.basis, check.k
    )
    return fit.term.p


def run_cell(plan: Plan, cell: tuple[int, int]) -> dict:
    """p-value of each test on the data set of cell (n, replicate); NaN and the message where a
    fit failed."""
    n, rep = cell
    data = plan.model.simulate(n, cell_rng(plan.seed, n, rep))
    row: dict = {"n": n, "replicate": rep}
    errors = []
    gaussian = [t for t in plan.tests if t != ORDINAL]
    if gaussian:
        try:
            row.update(_gaussian_p(plan, data, gaussian))
        except (GammInputError, KeyError, np.linalg.LinAlgError, FloatingPointError) as exc:
            row.update(dict.fromkeys(gaussian, math.nan))
            errors.append(f"GAMM: {exc}")
    if ORDINAL in plan.tests:
        try:
            row[ORDINAL] = _ordinal_p(plan.ordinal, data)
        except (GammInputError, np.linalg.LinAlgError, FloatingPointError) as exc:
            row[ORDINAL] = math.nan
            errors.append(f"ordinal: {exc}")
    row["error"] = "; ".join(errors)
    return row


def run_replicates(
    plan: Plan,
    grid: Sequence[int],
    replicates: int,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """One row per cell (n, replicate, p of each test, error), in cell order."""
    from analysis.grid import map_cells

    cells = [(int(n), r) for n in grid for r in range(1, replicates + 1)]
    rows = map_cells(
        functools.partial(run_cell, plan), cells, scheduler=scheduler, workers=workers,
        progress=progress,
    )  # fmt: skip
    return pd.DataFrame(rows, columns=["n", "replicate", *plan.tests, "error"])


def wilson(k: int, m: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for k successes in m trials."""
    if m == 0:
        return math.nan, math.nan
    z = float(stats.norm.ppf(0.5 + level / 2))
    p = k / m
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    # at k = 0 (k = m) the bound is exactly 0 (1); the formula leaves a rounding error there
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == m else min(1.0, centre + half)
    return lo, hi


def clopper_pearson(k: int, m: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval for k successes in m trials."""
    if m == 0:
        return math.nan, math.nan
    a = 1 - level
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a / 2, k, m - k + 1))
    hi = 1.0 if k == m else float(stats.beta.ppf(1 - a / 2, k + 1, m - k))
    return lo, hi


def summarise(
    table: pd.DataFrame, tests: Sequence[str], alpha: float, interval: str = "wilson",
    level: float = 0.95,
) -> pd.DataFrame:  # fmt: skip
    """Power per (n, test): rejections at ``alpha`` among the replicates that fitted, with its
    Monte Carlo interval."""
    bounds = wilson if interval == "wilson" else clopper_pearson
    out = []
    for test in tests:
        for n, group in table.groupby("n", sort=True):
            p = group[test].to_numpy(float)
            ok = ~np.isnan(p)
            m, k = int(ok.sum()), int(np.sum(p[ok] < alpha))
            lo, hi = bounds(k, m, level)
            out.append({
                "test": test, "n": int(n), "replicates": len(group), "failed": int((~ok).sum()),
                "rejections": k, "power": k / m if m else math.nan, "lower": lo, "upper": hi,
                "interval": f"{interval} {level:.0%}",
            })  # fmt: skip
    return pd.DataFrame(out)


def smallest_n(summary: pd.DataFrame, target: float) -> dict[str, dict[str, int | None]]:
    """Per test, the smallest grid N whose estimated power reaches ``target`` and the smallest
    whose interval's lower bound does (None where no grid point does)."""
    out: dict[str, dict[str, int | None]] = {}
    for test, group in summary.groupby("test", sort=False):
        est = group.loc[group["power"] >= target, "n"]
        sure = group.loc[group["lower"] >= target, "n"]
        out[str(test)] = {
            "estimate": int(est.min()) if len(est) else None,
            "lower_bound": int(sure.min()) if len(sure) else None,
        }
    return out
