"""Individual fairness of recourse by counterfactual twins: the same person with the
protected attribute flipped, everything else equal.

The notion is counterfactual fairness (Kusner et al., "Counterfactual Fairness", NeurIPS
2017) applied to recourse, as in von Kügelgen et al., "On the Fairness of Causal
Algorithmic Recourse" (AAAI 2022): recourse is individually fair when a person and their
twin in the other protected group get recourse of the same success and cost. Here the
twin flips only the protected item (no causal model of its effect on other items: the
"unaware" twin, which is what the decision model sees). Two rates, over the rejected
people (at most `cap`, the first ones):

* `twin_action_mismatch`: among people with a valid recourse, the share whose own action
  (factual -> counterfactual, `recourse_engine.metrics.transfer_actions`) does not get
  their twin approved: the same effort does not work for the same person in the other
  group. It is what `fair_rl`'s individual-EE reward term targets (there with the
  nearest real person of the other group as twin).
* `twin_recourse_mismatch`: the share whose own recourse and their twin's recourse (the
  method asked again, for the twin) differ in success, or both succeed with costs (L2 on
  the normalised scale) more than `tol` apart; a twin the model already approves needs no
  recourse: success at cost 0. `twin_success_mismatch` counts the success part only.

Only a binary protected item can be flipped; otherwise (or when the protected attribute is
not a schema item) every rate is NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from recourse_engine.metrics import found_mask, recourse_cost, transfer_actions
from recourse_engine.schema import FeatureSchema

TWIN_METRICS = ("twin_action_mismatch", "twin_recourse_mismatch", "twin_success_mismatch")


def flip(schema: FeatureSchema, codes: np.ndarray, item: str | None) -> np.ndarray | None:
    """The twins (codes 1 <-> 2 of a binary `item`), or None when it cannot be flipped."""
    if item is None or item not in schema.keys:
        return None
    j = schema.index(item)
    it = schema.items[j]
    if it.is_graded or it.n_options != 2:
        return None
    out = np.array(codes, dtype=float, copy=True)
    out[:, j] = 3.0 - out[:, j]
    return out


def _approved_cf(model: Any, cf: np.ndarray) -> np.ndarray:
    ok = found_mask(cf)
    if ok.any():
        ok[ok] = np.asarray(model.approves(cf[ok]), dtype=bool)
    return ok


def twin_measures(
    schema: FeatureSchema,
    model: Any,
    method: Any,
    factuals: np.ndarray,
    counterfactuals: np.ndarray,
    item: str | None,
    *,
    tol: float = 0.05,
    cap: int = 500,
) -> dict[str, float]:
    """The twin rates of one method's recourses (see the module docstring); `method` is
    the fitted method, asked for the twins' own recourse."""
    x = np.asarray(factuals, dtype=float)[:cap]
    cf = np.asarray(counterfactuals, dtype=float)[:cap]
    twins = flip(schema, x, item)
    if twins is None or not len(x):
        return dict.fromkeys(TWIN_METRICS, math.nan)
    own_ok = _approved_cf(model, cf)
    moved = transfer_actions(schema, twins[own_ok], x[own_ok], cf[own_ok])
    action = (
        float(1.0 - np.asarray(model.approves(moved), dtype=bool).mean())
        if own_ok.any()
        else math.nan
    )
    already = np.asarray(model.approves(twins), dtype=bool)
    twin_cf = np.array(twins, copy=True)
    need = np.flatnonzero(~already)
    if len(need):
        twin_cf[need] = method.get_counterfactuals(twins[need]).counterfactuals
    twin_ok = already | _approved_cf(model, twin_cf)
    own_cost = recourse_cost(schema, x, cf, "l2")
    twin_cost = np.where(already, 0.0, recourse_cost(schema, twins, twin_cf, "l2"))
    success = own_ok != twin_ok
    both = own_ok & twin_ok
    cost = np.zeros(len(x), dtype=bool)
    cost[both] = np.abs(own_cost[both] - twin_cost[both]) > tol
    return {
        "twin_action_mismatch": action,
        "twin_recourse_mismatch": float((success | cost).mean()),
        "twin_success_mismatch": float(success.mean()),
    }
