"""FACTS-style subgroup audits of a method's recourses (Kavouras et al., "Fairness Aware
Counterfactuals for Subgroups", NeurIPS 2023, Sections 2.2-2.3; the authors' code,
AutoFairAthenaRC/FACTS, `facts/fairness_metrics_aggr.py`).

Why per subgroup: over the whole rejected population one action set works almost equally
well for both protected groups (the EE gap was 0.000-0.005 for every method that finds
recourse), so the aggregate notions cannot discriminate; FACTS looks for the subgroups
where they differ.

Subgroups: the rejected people (factuals) that share one value of one attribute other
than the protected one (FACTS' if-clauses of length one): each option of a categorical,
binary or ordinal item, and for a numeric item its values at or below the factuals' median
and above it; plus everyone ("all"). A subgroup is audited when each protected group has
at least `min_size` members in it (FACTS' minimum support).

Within a subgroup S the actions A_S are the changes factual -> counterfactual of the valid
recourses of S's members (at most `max_actions`, drawn with the seed), transferred to
each member of S ∩ G by `recourse_engine.metrics.transfer_actions`; eff(a, G) is the share
of S ∩ G (at most `max_per_group` members) the model approves after action a. Per
protected group G:

* EE (Equal Effectiveness, FACTS' "total correctness"): the share of S ∩ G for whom at
  least one action of A_S works;
* ECR (Equal Choice for Recourse, threshold φ): the number of actions with eff(a, G) >= φ;
* cost (Equal Cost of Effectiveness, macro, threshold φ): the cost of the cheapest action
  with eff(a, G) >= φ (infinite when there is none); an action's cost is its recourse's
  L2 distance on the normalised item scale, the experiment's `cost`.

FACTS' aggregation: a subgroup's unfairness score for a measure is the gap between the
protected groups (|G_1 − G_2|, max − min for more groups; `get_diff_table`), and the
subgroups are ranked by it; the audit reports the rank-1 score (`audit_*_max`, the
largest gap over the audited subgroups; for cost over the subgroups where every group has
an effective action) and `audit_cost_unreachable`, the share of audited subgroups in
which some group but not every group has no action with eff >= φ (an infinite gap).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from recourse_engine.metrics import action_effectiveness, found_mask
from recourse_engine.schema import FeatureSchema

AUDIT_METRICS = ("audit_ee_max", "audit_ecr_max", "audit_cost_max", "audit_cost_unreachable")


def subgroups(
    schema: FeatureSchema, codes: np.ndarray, protected: str | None
) -> list[tuple[str, np.ndarray]]:
    """(name, mask over rows) for every one-attribute subgroup, "all" first."""
    x = np.asarray(codes, dtype=float)
    out: list[tuple[str, np.ndarray]] = [("all", np.ones(len(x), dtype=bool))]
    for j, it in enumerate(schema.items):
        if it.key == protected:
            continue
        col = x[:, j]
        if it.is_numeric:
            med = float(np.median(col)) if len(col) else 0.0
            out += [(f"{it.key}<={med:g}", col <= med), (f"{it.key}>{med:g}", col > med)]
        else:
            for v in np.unique(col):
                out.append((f"{it.key}={v:g}", col == v))
    return out


def _gap(values: list[float]) -> float:
    finite = [v for v in values if np.isfinite(v)]
    if len(finite) < len(values):
        return math.inf if finite else math.nan
    return float(max(values) - min(values)) if len(values) >= 2 else math.nan


def audit(
    schema: FeatureSchema,
    model: Any,
    factuals: np.ndarray,
    counterfactuals: np.ndarray,
    groups: np.ndarray,
    costs: np.ndarray,
    *,
    protected: str | None = None,
    phi: float = 0.5,
    min_size: int = 10,
    max_actions: int = 100,
    max_per_group: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per audited subgroup: its size per group, EE, ECR and cost per group and
    their gaps (`ee_gap`, `ecr_gap`, `cost_gap`)."""
    x = np.asarray(factuals, dtype=float)
    cf = np.asarray(counterfactuals, dtype=float)
    g = np.asarray(groups).astype(str)
    c = np.asarray(costs, dtype=float)
    labels = sorted(set(g))
    found = found_mask(cf) & np.isfinite(c)
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for name, mask in subgroups(schema, x, protected):
        members = {lab: np.flatnonzero(mask & (g == lab)) for lab in labels}
        if len(labels) < 2 or any(len(m) < min_size for m in members.values()):
            continue
        acts = np.flatnonzero(mask & found)
        if len(acts) > max_actions:
            acts = np.sort(rng.choice(acts, max_actions, replace=False))
        row: dict[str, Any] = {"subgroup": name, "actions": len(acts)}
        for lab, idx in members.items():
            if len(idx) > max_per_group:
                idx = np.sort(rng.choice(idx, max_per_group, replace=False))
            row[f"n_{lab}"] = int(mask[g == lab].sum())
            if len(acts):
                e = action_effectiveness(schema, model, x[acts], cf[acts], x[idx])
                eff = e.mean(axis=1)
                good = eff >= phi
                row[f"ee_{lab}"] = float(e.any(axis=0).mean())
                row[f"ecr_{lab}"] = int(good.sum())
                row[f"cost_{lab}"] = float(c[acts][good].min()) if good.any() else math.inf
            else:
                row[f"ee_{lab}"], row[f"ecr_{lab}"], row[f"cost_{lab}"] = 0.0, 0, math.inf
        for m in ("ee", "ecr", "cost"):
            row[f"{m}_gap"] = _gap([float(row[f"{m}_{lab}"]) for lab in labels])
        rows.append(row)
    return pd.DataFrame(rows)


def aggregate(frame: pd.DataFrame) -> dict[str, float]:
    """FACTS' rank-1 scores over the audited subgroups (see the module docstring)."""
    if frame.empty:
        return dict.fromkeys(AUDIT_METRICS, math.nan)
    cost = frame["cost_gap"].to_numpy(dtype=float)
    finite = cost[np.isfinite(cost)]
    return {
        "audit_ee_max": float(frame["ee_gap"].max()),
        "audit_ecr_max": float(frame["ecr_gap"].max()),
        "audit_cost_max": float(finite.max()) if len(finite) else math.nan,
        "audit_cost_unreachable": float(np.isinf(cost).mean()),
    }
