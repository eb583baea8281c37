"""Defects of the authors' published code, replicated on request only
(`--replicate-published-defects`), for matching the published numbers; never a default.

(a) the centralization count (`analysis.segregation.settings_indices`);
(b) `cf = cf.fillna(0)` in `main_impacted_data.py`: a factual without a valid counterfactual
    is moved to the all-zero point of the mutable features (min–max scale: every mutable
    feature at the sample's minimum) and counted as "after recourse" (`zero_fill`);
(c) EBR's selection loop `for j in np.argsort(distance[0]): if result1[j] > 0.5: ...;
    if if_find == 0: cf.append(thissample.iloc[j])`: with no approved draw, `j` is the
    last index of the argsort, the *farthest* draw (`ebr_farthest`).

(b) and (c) change only who moves where for the indices; cost, yNN and the other
recourse metrics are computed on the valid counterfactuals as always.
"""

from __future__ import annotations

import numpy as np

from recourse_engine import denormalise, normalise


def zero_fill(x_after: np.ndarray, rows: np.ndarray, mutable_cols: np.ndarray) -> np.ndarray:
    """Index-space rows `rows` with their mutable coordinates set to 0 (a copy)."""
    out = x_after.copy()
    if len(rows):
        out[np.ix_(rows, np.flatnonzero(mutable_cols))] = 0.0
    return out


def ebr_farthest(method: object, factuals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each factual (codes), the draw of its immutable pattern farthest from it on the
    mutable columns, decoded to codes; `ok` is False where the pattern kept no draw."""
    schema = method.schema  # type: ignore[attr-defined]
    z = normalise(schema, factuals)
    cols, cond = method.cols_, method.cond_cols_  # type: ignore[attr-defined]
    kept = method.kept_samples(z[:, cond])  # type: ignore[attr-defined]
    out = z.copy()
    ok = np.zeros(len(z), dtype=bool)
    for i, draws in enumerate(kept):
        if len(draws):
            d = np.linalg.norm(draws - z[i, cols], axis=1)
            out[i, cols] = draws[int(np.argmax(d))]
            ok[i] = True
    return denormalise(schema, out), ok
