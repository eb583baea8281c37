"""Direct, slow, obviously-right formulas for the segregation indices (test reference).

Every distance is computed on its own in plain Python; no blocks, no matrix
products, no shortcuts. `dist` sums the squared coordinate differences in
ascending order (so permuted differences give equal distances) and `dist_norm`
is numpy's norm, an independent second formula for continuous data.
"""

from __future__ import annotations

import math

import numpy as np


def dist(a: np.ndarray, b: np.ndarray) -> float:
    total = 0.0
    for v in sorted(float(x - y) ** 2 for x, y in zip(a, b, strict=True)):
        total += v
    return math.sqrt(total)


def dist_norm(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b))


def minority_mask(groups: np.ndarray) -> np.ndarray:
    labels, counts = np.unique(np.asarray(groups).astype(str), return_counts=True)
    smaller = labels[0] if counts[0] <= counts[1] else labels[1]
    return np.asarray(groups).astype(str) == smaller


def eps(X, is_min, q=0.2, with_self=False, metric=dist) -> float:
    mi = np.flatnonzero(is_min)
    if with_self:
        values = [metric(X[i], X[j]) for i in mi for j in mi]
    else:
        values = [metric(X[i], X[j]) for a, i in enumerate(mi) for j in mi[a + 1 :]]
    return float(np.quantile(np.array(values), q))


def centralization(X, is_min, e, metric=dist) -> float:
    central = 0
    for i in np.flatnonzero(is_min):
        n_min = n_all = 0
        for j in range(len(X)):
            if metric(X[i], X[j]) <= e:
                n_all += 1
                n_min += bool(is_min[j])
        central += n_min / n_all > 0.5
    return central / int(is_min.sum())


def avg_proximity(X, is_min, metric=dist) -> float:
    terms = [
        math.exp(-metric(X[i], X[j]))
        for i in np.flatnonzero(is_min)
        for j in np.flatnonzero(~is_min)
    ]
    return math.fsum(terms) / len(terms)


def atkinson(is_min, units, b=0.5) -> float:
    units = list(units)
    T = len(units)
    P = sum(bool(v) for v in is_min) / T
    total = 0.0
    for u in sorted(set(units), key=str):
        members = [k for k in range(T) if units[k] == u]
        t = len(members)
        p = sum(bool(is_min[k]) for k in members) / t
        total += (1 - p) ** (1 - b) * p**b * t / (P * T)
    return 1 - P / (1 - P) * abs(total) ** (1 / (1 - b))
