"""FACTS-style subgroup audits and counterfactual-twin rates against values worked out by
hand on four people (the arithmetic is in the comments)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from analysis.experiment.audits import aggregate, audit, subgroups
from analysis.experiment.twins import flip, twin_measures
from recourse_engine.schema import load_schema

# x: numeric 0..10 (any; normalised x/10), r: binary (fixed), s: the protected item
SCHEMA = load_schema(
    {
        "name": "tiny",
        "profile_items": [
            {"key": "x", "type": "numeric", "min": 0, "max": 10, "constraint": "any"},
            {"key": "r", "type": "binary", "options": ["a", "b"], "constraint": "fixed"},
            {"key": "s", "type": "binary", "options": ["f", "m"], "constraint": "fixed"},
        ],
    }
)


class Biased:
    """Approves x + 2 [s = m] >= 5: women need x >= 5, men x >= 3."""

    def predict_proba(self, codes, income=None, *, factual_income=None):
        c = np.atleast_2d(codes)
        return (c[:, 0] + 2.0 * (c[:, 2] == 2) >= 5).astype(float)

    def approves(self, codes, income=None, *, factual_income=None):
        return self.predict_proba(codes) >= 0.5


class Minimal:
    """The cheapest recourse under `Biased`: raise x to the person's threshold."""

    def get_counterfactuals(self, codes):
        cf = np.array(codes, dtype=float, copy=True)
        cf[:, 0] = np.maximum(cf[:, 0], np.where(cf[:, 2] == 2, 3.0, 5.0))
        return SimpleNamespace(counterfactuals=cf)


# two women (x = 4, 2) and two men (x = 1, 0), all rejected; region a
F = np.array([[4.0, 1, 1], [2, 1, 1], [1, 1, 2], [0, 1, 2]])
CF = np.array([[5.0, 1, 1], [5, 1, 1], [3, 1, 2], [np.nan] * 3])  # actions +1, +3, +2, none
COST = np.array([0.1, 0.3, 0.2, np.nan])
G = np.array(["f", "f", "m", "m"])


def test_subgroups_are_one_attribute_values_and_numeric_halves():
    names = [n for n, _ in subgroups(SCHEMA, F, "s")]
    # x's median is 1.5; r has one value here; s is the protected item, left out
    assert names == ["all", "x<=1.5", "x>1.5", "r=1"]


def test_audit_by_hand():
    got = audit(SCHEMA, Biased(), F, CF, G, COST, protected="s", min_size=1)
    # x<=1.5 holds men only and x>1.5 women only: not audited; r=1 is everyone
    assert got["subgroup"].tolist() == ["all", "r=1"]
    row = got.iloc[0]
    # women (4, 2) need 5: +1 works for 4 only (0.5), +3 for both (1), +2 for 4 (0.5)
    # men (1, 0) need 3: +1 for nobody (0), +3 for both (1), +2 for 1 only (0.5)
    assert (row["ee_f"], row["ee_m"], row["ee_gap"]) == (1.0, 1.0, 0.0)
    assert (row["ecr_f"], row["ecr_m"], row["ecr_gap"]) == (3, 2, 1.0)
    # cheapest action with eff >= 0.5: women +1 (0.1), men +2 (0.2)
    assert (row["cost_f"], row["cost_m"]) == (0.1, 0.2)
    assert row["cost_gap"] == pytest.approx(0.1)
    agg = aggregate(got)
    assert agg["audit_ee_max"] == 0.0 and agg["audit_ecr_max"] == 1.0
    assert agg["audit_cost_max"] == pytest.approx(0.1) and agg["audit_cost_unreachable"] == 0.0
    # φ = 0.75: only +3 qualifies, for both groups, at cost 0.3
    row = audit(SCHEMA, Biased(), F, CF, G, COST, protected="s", min_size=1, phi=0.75).iloc[0]
    assert (row["ecr_f"], row["ecr_m"], row["cost_f"], row["cost_m"]) == (1, 1, 0.3, 0.3)
    assert row["cost_gap"] == 0.0


def test_audit_marks_a_group_without_an_effective_action():
    only = CF.copy()
    only[1:] = np.nan  # only the +1 action: women 4 -> 5 (0.5 of them), men nobody
    got = audit(SCHEMA, Biased(), F, only, G, COST, protected="s", min_size=1)
    row = got.iloc[0]
    assert (row["ee_f"], row["ee_m"], row["ecr_f"], row["ecr_m"]) == (0.5, 0.0, 1, 0)
    assert row["cost_f"] == 0.1 and math.isinf(row["cost_m"]) and math.isinf(row["cost_gap"])
    agg = aggregate(got)
    assert agg["audit_ee_max"] == 0.5 and agg["audit_cost_unreachable"] == 1.0
    assert math.isnan(agg["audit_cost_max"])  # no subgroup with a finite cost gap
    # min_size 3: no subgroup has 3 of each group
    assert audit(SCHEMA, Biased(), F, CF, G, COST, protected="s", min_size=3).empty
    assert math.isnan(
        aggregate(audit(SCHEMA, Biased(), F, CF, G, COST, min_size=3))["audit_ee_max"]
    )


def test_twin_rates_by_hand():
    assert flip(SCHEMA, F, "s")[:, 2].tolist() == [2, 2, 1, 1]
    assert flip(SCHEMA, F, "x") is None and flip(SCHEMA, F, None) is None
    got = twin_measures(SCHEMA, Biased(), Minimal(), F, CF, "s")
    # own actions on the twins: 4m+1 = 5 ok, 2m+3 = 5 ok, 1f+2 = 3 fails (needs 5):
    # 1 of the 3 with a recourse
    assert got["twin_action_mismatch"] == pytest.approx(1 / 3)
    # twins' own recourse: 4m is approved already (cost 0 vs 0.1), 2m -> 3 (0.1 vs 0.3),
    # 1f -> 5 (0.4 vs 0.2), 0f -> 5 while the man got none: a success mismatch
    assert got["twin_success_mismatch"] == 0.25
    assert got["twin_recourse_mismatch"] == 1.0  # every cost differs by more than 0.05
    loose = twin_measures(SCHEMA, Biased(), Minimal(), F, CF, "s", tol=0.25)
    assert loose["twin_recourse_mismatch"] == 0.25  # only the success mismatch remains
    none = twin_measures(SCHEMA, Biased(), Minimal(), F, CF, "x")
    assert all(math.isnan(v) for v in none.values())
