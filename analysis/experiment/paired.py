"""Paired differences of the segregation indices: after − before, per run, on the same
population, a 95% interval for their mean over runs, and verdicts controlled for the
number of intervals in the table.

A table of mean ± sd of the levels cannot show whether a method made things worse: the
effects (≤ 0.002 in Atkinson on Law and GMC in the paper) are about ten times smaller
than the run-to-run spread of the levels, which cancels in a paired difference.

The interval for the mean difference over R runs is a **Student-t interval over runs**
(mean ± t_{R−1} · sd/√R). Until issue 29 it was a percentile bootstrap over runs from 10
runs; that interval is too narrow by a factor of about √((R−1)/R) · z/t and covers about
90% (normal differences) or less (skewed ones) at R = 10, where the t interval covers 95%
for normal and mildly skewed differences
(`tests/analysis/experiment/test_coverage.py` simulates both, at R = 5 and 10). Below 10
runs, when the experiment computed one, a percentile bootstrap over *people* within each
run is used instead (`analysis.experiment.people`: the same resampled people before and
after, the b-th resample averaged over runs). It holds each run's model and
counterfactuals fixed: it says how much the change depends on who is in the population,
not how much it varies from run to run. `interval` names which.

**Verdicts, controlled across the table.** Each interval comes with a two-sided p-value
for "no change" (the t test's; for the people bootstrap, twice the smaller share of
resampled means on either side of 0, counted as (k + 1)/(B + 1)). The p-values of one
table — every method × index of one experiment — are adjusted by Holm's step-down method,
which keeps the chance of any false "worse" or "better" in the table at
5%. A method is **worse** on an index only when its Holm-adjusted p-value is below 0.05
and the interval lies on the worse side (the catalogue's `worse_if_higher`:
centralization or Atkinson up, average proximity down), **better** on the other side,
else no clear change. `verdict_95` keeps the unadjusted rule (the 95% interval excludes
0), which every Holm verdict also satisfies. Every index of
`analysis.segregation.catalogue` gets a row; none is named here.

`worse_runs` counts the runs whose own difference is on the worse side (a point estimate,
reported beside the verdict, never as it). With the minority's size per run (`minority`),
centralization's change is also given in people: Δ × m is the net number of minority
members who became central in a run (`people_mean`, and its t interval).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analysis.experiment.people import people_means, people_pvalue
from analysis.segregation.catalogue import CATALOGUE, index, names
from analysis.significance import ALPHA, holm, smallest_resamples

#: below this many runs the experiment computes the bootstrap over people and uses it
BOOTSTRAP_MIN_RUNS = 10
#: the index whose change counts people (the central share of the minority)
PEOPLE_INDEX = "centralization"


@functools.lru_cache(maxsize=256)
def _t_quantile(q: float, df: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(q, df))


def interval(diffs: np.ndarray, level: float = 0.95) -> tuple[float, float, str]:
    """(lo, hi, how): the Student-t interval for the mean of `diffs` (one per run)."""
    d = np.asarray(diffs, dtype=float)
    r = len(d)
    if r < 2:
        return math.nan, math.nan, "none (one run)"
    half = _t_quantile(0.5 + level / 2, r - 1) * d.std(ddof=1) / math.sqrt(r)
    m = d.mean()
    return float(m - half), float(m + half), f"t over {r} runs"


def t_pvalue(diffs: np.ndarray) -> float:
    """Two-sided p-value of the one-sample t test of mean 0 (identical runs: 1 if all are
    0, else 0; one run: NaN)."""
    from scipy import stats

    d = np.asarray(diffs, dtype=float)
    if len(d) < 2:
        return math.nan
    if np.ptp(d) == 0:
        return 1.0 if d[0] == 0 else 0.0
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def verdict(name: str, lo: float, hi: float) -> str:
    """The verdict on index `name` from the interval [lo, hi] of its change (NaN: none)."""
    return index(name).verdict(lo, hi)


def adjusted_verdict(name: str, lo: float, hi: float, p_adjusted: float) -> str:
    """The interval's verdict when the adjusted p-value is below ALPHA, else no clear change."""
    if not p_adjusted < ALPHA:
        return "no clear change"
    return verdict(name, lo, hi)


def paired_frame(
    runs: pd.DataFrame,
    people: dict[str, list[np.ndarray]] | None = None,
    minority: Mapping[int, float] | None = None,
) -> pd.DataFrame:
    """Per method × index: diff_mean, diff_lo, diff_hi, interval, p, p_holm, worse_runs,
    verdict (Holm), verdict_95 (unadjusted), people_mean, people_lo, people_hi, from
    runs.csv's rows (run, method, metric, value, before, diff). `people`: per method, each
    run's (B, k) resampled changes (columns in the catalogue's order), used below 10 runs.
    `minority`: run -> the minority's size in that run's population."""
    sel = runs[runs["metric"].isin(names()) & (runs["method"] != "origin")]
    rows: list[dict[str, Any]] = []
    for (method, metric), part in sel.groupby(["method", "metric"], sort=False):
        d = part["diff"].to_numpy(dtype=float)
        lo, hi, how = interval(d)
        p = t_pvalue(d)
        got = (people or {}).get(str(method))
        resamples = math.nan
        if len(d) < BOOTSTRAP_MIN_RUNS and got:
            resamples = len(got[0])
            col = names().index(str(metric))
            means = people_means([g[:, col] for g in got])
            lo, hi = (float(q) for q in np.quantile(means, [0.025, 0.975]))
            p = people_pvalue(means)
            how = f"bootstrap over people ({len(got[0])} resamples in each of {len(got)} runs)"
        ppl = (math.nan, math.nan, math.nan)
        if minority is not None and metric == PEOPLE_INDEX and "run" in part:
            m = part["run"].map(lambda r: minority.get(int(r), math.nan)).to_numpy(dtype=float)
            n_people = d * m
            ppl = (float(n_people.mean()), *interval(n_people)[:2])
        rows.append(
            {
                "method": method,
                "metric": metric,
                "diff_mean": float(d.mean()),
                "diff_lo": lo,
                "diff_hi": hi,
                "interval": how,
                "resamples": resamples,
                "p": p,
                "worse_runs": int(CATALOGUE[str(metric)].is_worse(d).sum()),
                "verdict_95": verdict(str(metric), lo, hi),
                "people_mean": ppl[0],
                "people_lo": ppl[1],
                "people_hi": ppl[2],
            }
        )
    out = pd.DataFrame(rows)
    if out.empty:
        return out.assign(p_holm=[], verdict=[])
    out["p_holm"] = holm(out["p"].to_numpy(dtype=float))
    out["verdict"] = [
        adjusted_verdict(str(r.metric), r.diff_lo, r.diff_hi, r.p_holm)
        for r in out.itertuples(index=False)
    ]
    return out


def adjustment_note(paired: pd.DataFrame) -> str:
    """The caption sentence on the intervals and the multiplicity control of one table."""
    how = ", ".join(sorted(set(paired["interval"]))) if len(paired) else "–"
    family = int(paired["p"].notna().sum()) if len(paired) else 0
    text = (
        f"95% interval ({how}), unadjusted; verdicts (**worse** / better) need a Holm-adjusted "
        f"p < {ALPHA} across the {family} intervals of the table and the interval on that side"
    )
    b = paired["resamples"].min() if "resamples" in paired and len(paired) else math.nan
    if not math.isnan(b) and int(b) < smallest_resamples(family):
        text += (
            f" (with {int(b)} people resamples no p goes below 2/{int(b) + 1}, too coarse for "
            f"Holm across {family}: no verdict can pass; --people-resamples "
            f"{smallest_resamples(family)} or more would allow one)"
        )
    return text


def paired_table(paired: pd.DataFrame, runs: int) -> str:
    """Markdown: one row per method, each index's mean difference [interval], Holm-adjusted
    p and verdict, and how many indices are worse by the Holm rule."""
    head = "| method | " + " | ".join(f"Δ {k}" for k in names()) + " | worse (Holm) |"
    lines = [head, "|---" * (len(CATALOGUE) + 2) + "|"]
    for method, part in paired.groupby("method", sort=False):
        by = part.set_index("metric")
        cells = []
        for k in names():
            r = by.loc[k]
            mark = {"worse": " **worse**", "better": " better"}.get(str(r["verdict"]), "")
            cells.append(
                f"{r['diff_mean']:+.4f} [{r['diff_lo']:+.4f}, {r['diff_hi']:+.4f}] "
                f"p_Holm {r['p_holm']:.3g} ({int(r['worse_runs'])}/{runs} runs worse){mark}"
            )
        n_worse = int((part["verdict"] == "worse").sum())
        lines.append(f"| {method} | " + " | ".join(cells) + f" | {n_worse} |")
    down = " and ".join(ix.label.lower() for ix in CATALOGUE.values() if not ix.worse_if_higher)
    note = (
        f"\nΔ = after − before on the same population, mean over runs; {adjustment_note(paired)}. "
        "'n/R runs worse' counts the runs whose own difference is on the worse side"
        + (f" (for {down}: down)" if down else "")
        + ".\n"
    )
    return "\n".join(lines) + "\n" + note
