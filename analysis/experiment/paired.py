"""Paired differences of the segregation indices: after − before, per run, on the same
population, and a 95% interval for their mean over runs.

A table of mean ± sd of the levels cannot show whether a method made things worse: the
effects (≤ 0.002 in Atkinson on Law and GMC in the paper) are about ten times smaller
than the run-to-run spread of the levels, which cancels in a paired difference.

The interval for the mean difference over R runs: with R >= 10 runs a percentile bootstrap
over runs (10,000 resamples, seed 0); below 10 runs a percentile bootstrap over *people*
within each run (`analysis.experiment.people`: the same resampled people before and after,
the b-th resample averaged over runs) when the experiment computed one, else a Student-t
interval over runs (a bootstrap over 3 runs has only 10 distinct resamples and its 95%
interval is the range of the runs, far too narrow). `interval` names which. The people
bootstrap holds each run's model and counterfactuals fixed: it says how much the change
depends on who is in the population, not how much it varies from run to run. A method is
**worse** on an index only when the interval lies entirely on the worse side of 0 (the
catalogue's `worse_if_higher`: centralization or Atkinson up, average proximity down),
**better** when entirely on the other side, else no clear change. Every index of
`analysis.segregation.catalogue` gets a row; none is named here.
`worse_runs` counts the runs whose own difference is on the worse side (a point estimate,
reported beside the verdict, never as it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from analysis.experiment.people import people_interval
from analysis.segregation.catalogue import CATALOGUE, index, names

BOOTSTRAP_MIN_RUNS = 10
RESAMPLES = 10_000


def interval(diffs: np.ndarray, level: float = 0.95) -> tuple[float, float, str]:
    """(lo, hi, how) for the mean of `diffs` (one per run)."""
    d = np.asarray(diffs, dtype=float)
    r = len(d)
    if r < 2:
        return math.nan, math.nan, "none (one run)"
    if r >= BOOTSTRAP_MIN_RUNS:
        rng = np.random.default_rng(0)
        means = d[rng.integers(0, r, size=(RESAMPLES, r))].mean(axis=1)
        a = (1 - level) / 2
        lo, hi = np.quantile(means, [a, 1 - a])
        return float(lo), float(hi), f"bootstrap over {r} runs"
    from scipy import stats

    half = stats.t.ppf(0.5 + level / 2, r - 1) * d.std(ddof=1) / math.sqrt(r)
    m = d.mean()
    return float(m - half), float(m + half), f"t over {r} runs"


def verdict(name: str, lo: float, hi: float) -> str:
    """The verdict on index `name` from the interval [lo, hi] of its change (NaN: none)."""
    return index(name).verdict(lo, hi)


def paired_frame(
    runs: pd.DataFrame, people: dict[str, list[np.ndarray]] | None = None
) -> pd.DataFrame:
    """Per method × index: diff_mean, diff_lo, diff_hi, interval, worse_runs, verdict,
    from runs.csv's rows (run, method, metric, value, before, diff). `people`: per method,
    each run's (B, k) resampled changes (columns in the catalogue's order), used below 10
    runs."""
    sel = runs[runs["metric"].isin(names()) & (runs["method"] != "origin")]
    rows: list[dict[str, Any]] = []
    for (method, metric), part in sel.groupby(["method", "metric"], sort=False):
        d = part["diff"].to_numpy(dtype=float)
        lo, hi, how = interval(d)
        got = (people or {}).get(str(method))
        if len(d) < BOOTSTRAP_MIN_RUNS and got:
            col = names().index(str(metric))
            lo, hi = people_interval([g[:, col] for g in got])
            how = f"bootstrap over people ({len(got[0])} resamples in each of {len(got)} runs)"
        worse = CATALOGUE[str(metric)].is_worse(d)
        rows.append(
            {
                "method": method,
                "metric": metric,
                "diff_mean": float(d.mean()),
                "diff_lo": lo,
                "diff_hi": hi,
                "interval": how,
                "worse_runs": int(worse.sum()),
                "verdict": verdict(str(metric), lo, hi),
            }
        )
    return pd.DataFrame(rows)


def paired_table(paired: pd.DataFrame, runs: int) -> str:
    """Markdown: one row per method, each index's mean difference [interval] and verdict,
    and how many indices are worse by the interval rule."""
    head = "| method | " + " | ".join(f"Δ {k}" for k in names()) + " | worse (interval) |"
    lines = [head, "|---" * (len(CATALOGUE) + 2) + "|"]
    for method, part in paired.groupby("method", sort=False):
        by = part.set_index("metric")
        cells = []
        for k in names():
            r = by.loc[k]
            mark = {"worse": " **worse**", "better": " better"}.get(str(r["verdict"]), "")
            cells.append(
                f"{r['diff_mean']:+.4f} [{r['diff_lo']:+.4f}, {r['diff_hi']:+.4f}] "
                f"({int(r['worse_runs'])}/{runs} runs worse){mark}"
            )
        n_worse = int((part["verdict"] == "worse").sum())
        lines.append(f"| {method} | " + " | ".join(cells) + f" | {n_worse} |")
    how = ", ".join(sorted(set(paired["interval"]))) if len(paired) else "–"
    down = " and ".join(ix.label.lower() for ix in CATALOGUE.values() if not ix.worse_if_higher)
    note = (
        f"\nΔ = after − before on the same population, mean over runs, 95% interval ({how}); "
        "'n/R runs worse' counts the runs whose own difference is on the worse side"
        + (f" (for {down}: down)" if down else "")
        + ". 'worse' only where the interval excludes 0.\n"
    )
    return "\n".join(lines) + "\n" + note
