"""Recourse methods as study strategies: a generated recourse is decodable, admissible and
approved, ranked among the admissible pool candidates as a brute-force count ranks it, and
when the method gives nothing usable the study's fallback applies and is recorded."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field

import numpy as np
import pytest

from recourse_engine import PoolIndex, carloan_schema, load_schema, pool_from_frame, synth_pool
from recourse_engine.decision import IncomeRule, SklearnModel, train_sklearn_model
from recourse_engine.distances import RANK_DECIMALS, proximity, sparsity
from recourse_engine.encoding import normalise
from recourse_engine.fit_store import StaleFit, dump_method, load_method
from recourse_engine.generated import (
    Generator,
    fit_on_pool,
    method_problem,
    method_settings,
)
from recourse_engine.methods.base import MethodError, RecourseMethod

SCHEMA = carloan_schema()
FAST = {"epochs": 2, "hidden": [8]}
SETTINGS = {
    "wachter": {"max_iter": 300},
    "gs": {},
    "cchvae": FAST,
    "cruds": FAST,
    "ibr": FAST,
    "ebr": {"group": "gender"},
    "causal": {"scm": {"position": {"education": 0.3}}},
    "fair_rl": {"steps": 60, "warmup": 10, "n_envs": 8, "batch": 32, "group": "gender"},
}


@pytest.fixture(scope="module")
def setup():
    frame = synth_pool(SCHEMA, n=500, seed=3)
    pool = pool_from_frame(frame, SCHEMA)
    pool.extra["approved"] = (pool.income >= np.median(pool.income)).astype(int)
    model = train_sklearn_model(SCHEMA, pool, "approved")
    index = PoolIndex(SCHEMA, pool, model)
    rejected = np.flatnonzero(~model.approves(pool.codes))
    return pool, model, index, rejected


def _fitted(name: str, pool, model) -> Generator:
    settings = method_settings(name, SETTINGS[name], SCHEMA)
    return Generator(settings, fit_on_pool(settings, SCHEMA, pool, model), fit_version="v-test")


def _admissible(pool, model, x: np.ndarray) -> np.ndarray:
    """Brute force: approved, every constraint held item by item, at least one change."""
    ok = np.asarray(model.approves(pool.codes), dtype=bool)
    for j, it in enumerate(SCHEMA.items):
        d = pool.codes[:, j] - x[j]
        if it.constraint == "fixed":
            ok &= d == 0
        elif it.constraint == "up":
            ok &= d >= 0
        elif it.constraint == "down":
            ok &= d <= 0
    return ok & (np.abs(pool.codes - x).sum(axis=1) > 0)


def _brute_ranks(pool, model, x: np.ndarray, codes: np.ndarray) -> tuple[int, int]:
    cand = pool.codes[_admissible(pool, model, x)]
    s_all, p_all = sparsity(SCHEMA, x, cand), proximity(SCHEMA, x, cand)
    s = sparsity(SCHEMA, x, codes[None])[0]
    p = np.round(proximity(SCHEMA, x, codes[None])[0], RANK_DECIMALS)
    return 1 + int((s_all < s).sum()), 1 + int((np.round(p_all, RANK_DECIMALS) < p).sum())


def test_generated_recourses_are_valid_admissible_approved_and_truly_ranked(setup):
    pool, model, index, rejected = setup
    gens = {name: _fitted(name, pool, model) for name in ("wachter", "gs", "causal")}
    design = "proximate:1,wachter:1,gs:1,causal:1"
    generated = 0
    for i in rejected[:12]:
        x = pool.codes[i]
        sel = index.select(x, None, design, seed=int(i), generators=gens)
        for pick in sel.picks:
            if pick.origin != "generated":
                assert pick.method in ("", "wachter", "gs", "causal")
                continue
            generated += 1
            codes = pick.codes
            for j, it in enumerate(SCHEMA.items):
                assert it.valid(codes[j : j + 1])[0], (it.key, codes[j])
                if it.constraint == "fixed":
                    assert codes[j] == x[j]
                if it.constraint == "up":
                    assert codes[j] >= x[j]
            assert model.approves(codes[None])[0]
            assert pick.sparsity == sparsity(SCHEMA, x, codes[None])[0] >= 1
            assert pick.proximity == pytest.approx(proximity(SCHEMA, x, codes[None])[0])
            assert (pick.sparsity_rank, pick.proximity_rank) == _brute_ranks(pool, model, x, codes)
            assert pick.pool_index == -1 and pick.pool_id == ""
            assert pick.method == pick.strategy and pick.fit_version == "v-test"
            assert pick.method_params == gens[pick.method].settings.recorded()
            assert not pick.fallback
        # distinct profiles, whatever their origin
        keys = {tuple(p.codes) for p in sel.picks}
        assert len(keys) == len(sel.picks)
    assert generated >= 20  # most of the 36 generating parts showed the method's own profile


@pytest.mark.parametrize("fallback", ["nearest_pool", "fewer"])
def test_an_unusable_method_falls_back_as_the_study_says_and_records_why(setup, fallback):
    pool, model, index, rejected = setup
    settings = method_settings("gs", {}, SCHEMA)
    gens = {"gs": Generator(settings, unavailable="the method's fit failed (boom)")}
    x = pool.codes[rejected[0]]
    sel = index.select(x, None, "proximate:1,gs:1", seed=1, generators=gens, fallback=fallback)
    prox = sel.picks[0]
    assert prox.strategy == "proximate"
    if fallback == "fewer":
        assert len(sel.picks) == 1 and sel.shortfall == 1
        assert sel.fallbacks == {"gs": "the method's fit failed (boom); one plan fewer is shown"}
        return
    (shown,) = sel.picks[1:]
    assert (shown.strategy, shown.origin, shown.method) == ("gs", "pool", "gs")
    assert shown.fallback.startswith("the method's fit failed (boom); the nearest admissible")
    assert sel.fallbacks == {"gs": shown.fallback}
    # the nearest admissible pool profile other than the proximate pick (brute force)
    ok = _admissible(pool, model, x)
    ok &= np.abs(pool.codes - prox.codes).sum(axis=1) > 0
    best = proximity(SCHEMA, x, pool.codes[ok]).min()
    assert shown.proximity == pytest.approx(best)


@dataclass
class Echo(RecourseMethod):
    """A method that always proposes one given profile (codes): to test duplicates."""

    target: list = field(default_factory=list)
    name: str = field(default="gs", init=False)

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        target = normalise(self.schema, np.asarray(self.target, dtype=float)[None])
        return np.repeat(target, len(z), axis=0)


def test_a_method_proposing_an_earlier_plans_profile_falls_back(setup):
    pool, model, index, rejected = setup
    x = pool.codes[rejected[1]]
    prox = index.select(x, None, "proximate:1", seed=2).picks[0]
    echo = Echo(target=list(prox.codes)).fit(_Data(), model)
    gens = {"gs": Generator(method_settings("gs"), method=echo)}
    sel = index.select(x, None, "proximate:1,gs:1", seed=2, generators=gens)
    assert np.array_equal(sel.picks[0].codes, prox.codes)
    shown = sel.picks[1]
    assert shown.origin == "pool" and not np.array_equal(shown.codes, prox.codes)
    assert "same profile as the 'proximate' recourse" in shown.fallback
    # the same method proposing a new profile is shown as generated
    other = index.select(x, None, "proximate:1", seed=2).picks[0]
    sel2 = index.select(x, None, "random:1,gs:1", seed=3, generators=gens)
    if not np.array_equal(sel2.picks[0].codes, other.codes):
        assert sel2.picks[1].origin == "generated" and not sel2.picks[1].fallback


@dataclass
class _Data:
    schema: object = field(default_factory=lambda: SCHEMA)
    codes: np.ndarray = field(default_factory=lambda: np.ones((1, SCHEMA.d)))


def test_a_design_without_its_method_is_refused(setup):
    _, _, index, rejected = setup
    with pytest.raises(ValueError, match="design part 'wachter': no wachter method was given"):
        index.select(index.pool.codes[rejected[0]], None, "proximate:1,wachter:1")


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("nope", {}, "unknown recourse method 'nope'; known: wachter, gs"),
        (
            "wachter",
            {"lamda": 0.1},
            "wachter: unknown parameter 'lamda'; known: check_every, lam, lr",
        ),
        ("wachter", {"lam": {"a": 1}}, "wachter: parameter 'lam' must be a number or text"),
        ("wachter", {"lam": [1]}, "wachter: parameter 'lam' must be a number or text"),
        ("fair_rl", {"weights": {"validity": [1]}}, "fair_rl: parameter 'weights' must be"),
        ("wachter", [1], "wachter: settings must be an object"),
        ("causal", {}, "causal: needs a structural causal model"),
        ("causal", {"scm": {"position": {"shoe_size": 1}}}, "causal: scm names 'shoe_size'"),
        ("causal", {"scm": {"workplace": {"education": 1}}}, "scm node 'workplace' is categorical"),
        ("causal", {"scm": {"position": {"education": "x"}}}, "must be a finite number"),
        (
            "causal",
            {"scm": {"position": {"education": 1}, "education": {"position": 1}}},
            "causal graph has a cycle",
        ),
        ("ebr", {"group": ""}, "ebr: 'group' must name a pool column or profile item"),
        ("ebr", {"density": "kde2"}, "unknown density 'kde2'"),
    ],
)
def test_bad_method_settings_are_refused_naming_the_method(name, raw, message):
    with pytest.raises(MethodError) as err:
        method_settings(name, raw, SCHEMA)
    assert message in str(err.value)


def test_recorded_parameters_are_every_parameter_the_method_runs_with():
    rec = method_settings("wachter", {"lam": 0.05}).recorded()
    assert rec == {"seed": 0, "lam": 0.05, "lr": 0.01, "max_iter": 1000, "check_every": 5}
    assert method_settings("ebr", {}).recorded()["group"] == "gender"
    scm = {"position": {"education": 0.3}}
    assert method_settings("causal", {"scm": scm}).recorded()["scm"] == scm


def test_what_a_method_needs_of_the_decision_model(setup):
    pool, model, _, _ = setup
    assert "income rule cannot judge" in method_problem("gs", IncomeRule())
    with_income = train_sklearn_model(SCHEMA, pool, "approved", use_income=True)
    assert "trained with income" in method_problem("cchvae", with_income)
    from sklearn.tree import DecisionTreeClassifier

    tree = DecisionTreeClassifier(max_depth=3).fit(
        normalise(SCHEMA, pool.codes), pool.extra["approved"]
    )
    no_gradient = SklearnModel(estimator=tree, schema=SCHEMA)
    assert "wachter follows the decision model's gradient" in method_problem("wachter", no_gradient)
    assert method_problem("gs", no_gradient) is None
    assert method_problem("wachter", model) is None


def _recorder(seen: list[tuple[int, int]]):
    return lambda done, total: seen.append((done, total))


def test_every_method_fits_on_a_pool_and_round_trips_through_storage(setup):
    pool, model, _, rejected = setup
    x = pool.codes[rejected[:5]]
    raw = SCHEMA.to_dict()
    raw["profile_items"] = [
        {**it, "constraint": "any"} if i == 2 else it for i, it in enumerate(raw["profile_items"])
    ]
    other = load_schema(raw)
    assert other.hash() != SCHEMA.hash()
    for name in SETTINGS:
        seen: list[tuple[int, int]] = []
        settings = method_settings(name, SETTINGS[name], SCHEMA)
        method = fit_on_pool(settings, SCHEMA, pool, model, progress=_recorder(seen))
        assert seen and seen[-1] == (1, 1)
        assert method.progress is False  # the callback is not kept: the fit pickles
        blob = dump_method(method)
        loaded = load_method(name, blob, SCHEMA)
        a, b = method.get_counterfactuals(x), loaded.get_counterfactuals(x)
        np.testing.assert_array_equal(a.valid, b.valid)
        np.testing.assert_array_equal(a.counterfactuals, b.counterfactuals)
        with pytest.raises(StaleFit, match="fitted on another schema"):
            load_method(name, blob, other)
    with pytest.raises(StaleFit, match="this engine reads 'method:gs/1'"):
        load_method("gs", blob.replace(b"method:causal/1", b"method:gs/0"), SCHEMA)
    with pytest.raises(StaleFit, match="no format header"):
        load_method("gs", pickle.dumps({}), SCHEMA)


@pytest.mark.parametrize("name", ["ebr", "ibr", "fair_rl"])
def test_group_fair_methods_need_their_group_in_the_pool(setup, name):
    pool, model, _, _ = setup
    settings = method_settings(name, {"group": "no_such_column"}, SCHEMA)
    with pytest.raises(MethodError, match="pool has no group column 'no_such_column'"):
        fit_on_pool(settings, SCHEMA, pool, model)


def test_a_group_fair_method_takes_the_studys_default_group():
    assert method_settings("fair_rl").recorded()["group"] == "gender"
    assert method_settings("fair_rl", {"group": "gender,age"}).recorded()["group"] == "gender,age"
