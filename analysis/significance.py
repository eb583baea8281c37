"""p-values from a bootstrap and Holm's control across a table, shared by the experiment's
paired differences (`analysis.experiment.paired`) and a study's segregation effects
(`analysis.segregation.effects`): one rule for every table of verdicts this project prints.

Holm is a dozen lines (R's `p.adjust(p, "holm")`); statsmodels has it too, but is only a
test dependency here.
"""

from __future__ import annotations

import math

import numpy as np

#: a verdict needs its Holm-adjusted p-value below this
ALPHA = 0.05
#: bootstrap resamples by default: enough for a p-value (never below 2/(B + 1)) to pass
#: Holm in a table of up to 50 intervals
BOOTSTRAP = 2000


def bootstrap_pvalue(values: np.ndarray) -> float:
    """Two-sided percentile-bootstrap p-value for "no change": twice the smaller share of
    the B resampled values at or beyond 0 on either side, each counted as (k + 1)/(B + 1)
    so that B resamples never claim p below 2/(B + 1). NaN without resamples."""
    m = np.asarray(values, dtype=float)
    b = len(m)
    if b == 0:
        return math.nan
    low = (np.sum(m <= 0) + 1) / (b + 1)
    high = (np.sum(m >= 0) + 1) / (b + 1)
    return float(min(1.0, 2 * min(low, high)))


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values (R's `p.adjust(p, "holm")`): the k-th smallest of m times
    (m − k + 1), made non-decreasing, capped at 1; NaN entries stay NaN and do not count in
    the family."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full_like(p, math.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m:
        order = ok[np.argsort(p[ok], kind="stable")]
        scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(scaled)
    return out


def smallest_resamples(family: int, alpha: float = ALPHA) -> int:
    """The fewest bootstrap resamples B whose smallest p-value, 2/(B + 1), can pass Holm's
    first step (alpha / family) in a family of `family` intervals."""
    return max(1, math.floor(2 * max(family, 1) / alpha))
