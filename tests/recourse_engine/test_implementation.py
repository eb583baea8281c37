"""Implementing plans between waves (issue 34): the bots' noise model, the check of reported
changes, and the robust-plans option of the selection."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recourse_engine import PoolIndex, carloan_schema
from recourse_engine.encoding import normalise
from recourse_engine.generated import Generator, method_settings
from recourse_engine.implementation import (
    change_problem,
    check_reported_change,
    implement_plan,
)
from recourse_engine.methods.base import MethodError, RecourseMethod
from recourse_engine.model_training import LabelRule, train_decision_model
from recourse_engine.model_updates import robust_filter, train_model_set

from .labelled_pool import labelled_carloan_pool

SCHEMA = carloan_schema()
RULE = LabelRule.parse({"kind": "column", "column": "approved"})


@pytest.fixture(scope="module")
def study():
    schema, pool = labelled_carloan_pool(400, seed=11)
    model = train_decision_model(schema, pool, RULE, kind="logistic")
    models = train_model_set(
        pool, schema, model, seeds=[1, 2, 3, 4], tolerance=0.05, labels=RULE.labels(pool)
    )
    return schema, pool, model, [model, *models]


def _profile(codes: np.ndarray) -> dict[str, int]:
    return {k: int(v) for k, v in zip(SCHEMA.keys, codes, strict=True)}


def test_frozen_model_never_rejects_a_fully_implemented_plan(study):
    """Property over 40 rejected pool profiles, every plan of a design: the frozen model
    approved the plan, a full implementation reaches it, so re-application is approved."""
    schema, pool, model, models = study
    index = PoolIndex(schema, pool, model)
    rejected = np.flatnonzero(~model.approves(pool.codes))[:40]
    rng = np.random.default_rng(0)
    checked = 0
    for row in rejected:
        x = pool.codes[row]
        sel = index.select(x, None, "proximate:1,robust:1,random:2", seed=int(row))
        for pick in sel.picks:
            assert model.approves(pick.codes)[0]  # valid when shown
            after = implement_plan(
                _profile(x), _profile(pick.codes), schema, mode="full", rate=0.3, rng=rng
            )
            assert model.approves(np.array([list(after.values())], dtype=float))[0]
            checked += 1
    assert checked >= 100


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    x=st.lists(st.integers(0, 100), min_size=16, max_size=16),
    target=st.lists(st.integers(0, 100), min_size=16, max_size=16),
    rate=st.floats(0, 1),
    seed=st.integers(0, 2**32 - 1),
    mode=st.sampled_from(["full", "partial", "none"]),
)
def test_implementation_never_breaks_a_constraint(x, target, rate, seed, mode):
    """Any admissible plan (fixed items kept, up items not lower, down not higher), any rate:
    every item of the result lies between the old and planned value, so no constraint
    breaks; items the plan leaves alone never change; full reaches the plan, none stays."""
    profile, plan = {}, {}
    for it, a, b in zip(SCHEMA.items, x, target, strict=True):
        old = 1 + a % it.n_options
        new = 1 + b % it.n_options
        if it.constraint == "fixed" or (it.constraint == "up" and new < old):
            new = old
        profile[it.key] = old
        if b % 3:  # some items are not in the plan
            plan[it.key] = new
    after = implement_plan(
        profile, plan, SCHEMA, mode=mode, rate=rate, rng=np.random.default_rng(seed)
    )
    for key, old in profile.items():
        new = after[key]
        assert check_reported_change(SCHEMA, key, old, new) is None
        goal = plan.get(key, old)
        assert min(old, goal) <= new <= max(old, goal)
        if mode == "full":
            assert new == goal
        if mode == "none" or key not in plan:
            assert new == old


def test_partial_adoption_matches_the_stated_rate():
    """Each planned change is adopted with probability 1 - rate: over n changes the count is
    within 4 binomial standard deviations of n (1 - rate)."""
    x = {it.key: 1 for it in SCHEMA.items}
    plan = {it.key: it.n_options for it in SCHEMA.items if it.constraint != "fixed"}
    rng = np.random.default_rng(34)
    for rate in (0.2, 0.5):
        adopted = n = 0
        for _ in range(300):
            after = implement_plan(x, plan, SCHEMA, mode="partial", rate=rate, rng=rng)
            adopted += sum(after[k] == v for k, v in plan.items())
            n += len(plan)
        sd = np.sqrt(n * rate * (1 - rate))
        assert abs(adopted - n * (1 - rate)) <= 4 * sd, (rate, adopted, n)


def test_bad_plans_and_settings_are_refused():
    x = {it.key: 1 for it in SCHEMA.items}
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="unknown implementation mode 'most'"):
        implement_plan(x, {}, SCHEMA, mode="most", rate=0.1, rng=rng)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"rate must be a number in \[0, 1\], got 1.5"):
        implement_plan(x, {}, SCHEMA, mode="partial", rate=1.5, rng=rng)
    x["education"] = 3
    with pytest.raises(ValueError, match="plan: item 'education' can only go up"):
        implement_plan(x, {"education": 2}, SCHEMA, mode="full", rate=0.0, rng=rng)
    with pytest.raises(ValueError, match="profile: missing item"):
        implement_plan({"education": 1}, {}, SCHEMA, mode="none", rate=0.0, rng=rng)


def test_reported_changes_are_checked_with_reasons():
    schema = SCHEMA
    assert check_reported_change(schema, "education", 2, 4) is None
    assert check_reported_change(schema, "education", 2, 2) is None
    assert change_problem(schema, "education", 2, 9) == (
        "outside",
        "item 'education': the new value 9 is not an option code 1..5",
    )
    assert "can only go up, not down (from 3" in check_reported_change(schema, "education", 3, 1)
    assert change_problem(schema, "education", 3, 1)[0] == "direction"
    assert change_problem(schema, "nope", 1, 2)[0] == "outside"
    assert change_problem(schema, "education", 1, "2") is not None  # text is no code
    fixed = carloan_schema().to_dict()
    fixed["profile_items"][0]["constraint"] = "fixed"
    from recourse_engine import load_schema

    s2 = load_schema(fixed)
    flag, reason = change_problem(s2, "residence_prefecture", 1, 2)
    assert flag == "fixed" and "is fixed and cannot change" in reason


def test_robust_strategy_prefers_plans_every_model_approves(study):
    schema, pool, model, models = study
    index = PoolIndex(schema, pool, model)
    rejected = np.flatnonzero(~model.approves(pool.codes))[:60]
    robust_seen = cheap_not_robust = 0
    for row in rejected:
        x = pool.codes[row]
        sel = index.select(x, None, "proximate:1,robust:2", seed=1, robust_models=models)
        cand = index.candidates(x)
        robust_rows = {tuple(c) for c in cand.codes[robust_filter(cand.codes, models)]}
        shown = {tuple(p.codes) for p in sel.picks}
        for pick in sel.picks:
            assert pick.robust == bool(robust_filter(pick.codes, models)[0])
        robust_picks = [p for p in sel.picks if p.strategy == "robust@proximity"]
        assert robust_picks or not robust_rows - shown
        # a robust part shows a plan some model rejects only when no robust plan is left
        if any(not p.robust for p in robust_picks):
            assert robust_rows <= shown
        robust_seen += sum(p.robust for p in robust_picks)
        cheap_not_robust += not sel.picks[0].robust
        # without a set, no pick says anything about robustness
        assert all(p.robust is None for p in index.select(x, None, "robust:1", seed=1).picks)
    assert robust_seen > 0 and cheap_not_robust > 0  # "cheap vs robust" really differ


def test_robust_is_a_method_setting():
    assert method_settings("gs", {"robust": True}).recorded()["robust"] is True
    assert "robust" not in method_settings("gs", {}).recorded()
    with pytest.raises(MethodError, match="gs: 'robust' must be true or false, not 'yes'"):
        method_settings("gs", {"robust": "yes"})


@dataclass
class Echo(RecourseMethod):
    """A stand-in method that always proposes one given profile (codes)."""

    target: list = field(default_factory=list)
    name: str = field(default="gs", init=False)

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        target = normalise(self.schema, np.asarray(self.target, dtype=float)[None])
        return np.repeat(target, len(z), axis=0)


@dataclass
class _Data:
    schema: object = field(default_factory=lambda: SCHEMA)
    codes: np.ndarray = field(default_factory=lambda: np.ones((1, SCHEMA.d)))


def test_a_robust_method_falls_back_from_a_plan_some_model_rejects(study):
    schema, pool, model, models = study
    index = PoolIndex(schema, pool, model)
    for row in np.flatnonzero(~model.approves(pool.codes)):
        cand = index.candidates(pool.codes[row])
        robust = robust_filter(cand.codes, models)
        if len(cand) and not robust.all() and robust.any():
            break
    x, fragile = pool.codes[row], cand.codes[np.flatnonzero(~robust)[0]]
    echo = Echo(target=list(fragile)).fit(_Data(), model)
    plain = {"gs": Generator(method_settings("gs"), method=echo)}
    sel = index.select(x, None, "gs:1", seed=1, generators=plain, robust_models=models)
    assert sel.picks[0].origin == "generated" and sel.picks[0].robust is False
    wary = {"gs": Generator(method_settings("gs", {"robust": True}), method=echo)}
    sel = index.select(x, None, "gs:1", seed=1, generators=wary, robust_models=models)
    shown = sel.picks[0]
    assert shown.origin == "pool" and shown.robust is True
    assert "not approved by every model of the study's set" in shown.fallback
    assert shown.method_params["robust"] is True
    # without the study's set there is nothing to be robust to: the method's plan is shown
    sel = index.select(x, None, "gs:1", seed=1, generators=wary)
    assert sel.picks[0].origin == "generated" and sel.picks[0].robust is None
