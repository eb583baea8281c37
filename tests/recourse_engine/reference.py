"""Direct, slow, obviously-right formulas the vectorised engine is checked against."""

from __future__ import annotations

import math

from recourse_engine import FeatureSchema


def item_cost(schema: FeatureSchema, j: int, a: float, b: float) -> float:
    it = schema.items[j]
    if a == b:
        return 0.0
    if it.type in ("ordinal", "numeric"):
        return abs(b - a) / it.span
    return 1.0


def slow_sparsity(schema, x, c) -> int:
    return sum(1 for j in range(schema.d) if x[j] != c[j])


def slow_proximity(schema, x, c) -> float:
    return sum(item_cost(schema, j, x[j], c[j]) for j in range(schema.d))


def slow_l2(schema, x, c) -> float:
    return math.sqrt(sum(item_cost(schema, j, x[j], c[j]) ** 2 for j in range(schema.d)))


def slow_linf(schema, x, c) -> float:
    return max([item_cost(schema, j, x[j], c[j]) for j in range(schema.d)] + [0.0])


def slow_respects(schema, x, c) -> bool:
    for j, it in enumerate(schema.items):
        if it.constraint == "up" and c[j] < x[j]:
            return False
        if it.constraint == "down" and c[j] > x[j]:
            return False
        if it.constraint == "fixed" and c[j] != x[j]:
            return False
    return True


def slow_admissible(schema, pool, x, income) -> list[int]:
    """Pool rows a factual may be shown: income >= 4/3 income(x) (in exact integers),
    constraints hold, not identical to x."""
    out = []
    for i in range(len(pool)):
        c = list(pool.codes[i])
        if 3 * pool.income[i] < 4 * income:
            continue
        if not slow_respects(schema, x, c):
            continue
        if slow_sparsity(schema, x, c) == 0:
            continue
        out.append(i)
    return out
