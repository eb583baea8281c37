"""What a method needs of a study is read from the capabilities it declares on its class,
never from its name: a throwaway method, added to the strategy table under a name no code
lists, is treated like EBR, causal recourse or Wachter as soon as it declares what they do."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pytest

from recourse_engine import carloan_schema, pool_from_frame, strategies, synth_pool
from recourse_engine.decision import IncomeRule, SklearnModel, train_sklearn_model
from recourse_engine.generated import method_problem, method_settings, pool_data
from recourse_engine.methods import METHODS, Capabilities, MethodError, RecourseMethod
from recourse_engine.strategies import Strategy

SCHEMA = carloan_schema()


@dataclass
class _Toy(RecourseMethod):
    """A method that needs nothing; the subclasses below each declare one capability."""

    step: float = 0.5
    name: str = field(default="toy", init=False)

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.full(z.shape, np.nan)


@dataclass
class _ToyGroups(_Toy):
    capabilities: ClassVar[Capabilities] = Capabilities(group_column=True)


@dataclass
class _ToyScm(_Toy):
    capabilities: ClassVar[Capabilities] = Capabilities(scm=True, item_params=("keys",))
    scm: Any = None
    keys: list[str] | None = None


@dataclass
class _ToyGradient(_Toy):
    capabilities: ClassVar[Capabilities] = Capabilities(gradient=True)


@pytest.fixture
def toy_table(monkeypatch):
    """The strategy table with one more generating method row per toy, as a developer adds
    a method: `toy`, `toy_groups`, `toy_scm`, `toy_gradient`."""
    rows = [
        Strategy(name, "a throwaway method", load_method=lambda c=cls: c, generates=name)
        for name, cls in (
            ("toy", _Toy),
            ("toy_groups", _ToyGroups),
            ("toy_scm", _ToyScm),
            ("toy_gradient", _ToyGradient),
        )
    ]
    monkeypatch.setattr(strategies, "_ALL", (*strategies._ALL, *rows))
    table = {**strategies.STRATEGIES, **{row.name: row for row in rows}}
    monkeypatch.setattr(strategies, "STRATEGIES", MappingProxyType(table))


@pytest.fixture(scope="module")
def setup():
    pool = pool_from_frame(synth_pool(SCHEMA, n=300, seed=5), SCHEMA)
    pool.extra["approved"] = (pool.income >= np.median(pool.income)).astype(int)
    # a third value of the group column: its rows are in neither of the two groups
    pool.extra.loc[:9, "gender"] = "not stated"
    return pool, train_sklearn_model(SCHEMA, pool, "approved")


def test_a_method_that_needs_a_group_column_is_treated_like_ebr(toy_table, setup):
    pool, model = setup
    toy = method_settings("toy_groups", {"group": "gender", "step": 0.25}, SCHEMA)
    ebr = method_settings("ebr", {"group": "gender"}, SCHEMA)
    assert toy.group == "gender" and "group" not in toy.params  # a setting, not a parameter
    assert toy.recorded() == {"seed": 0, "step": 0.25, "group": "gender"}
    assert method_settings("toy_groups", {}, SCHEMA).recorded()["group"] == "gender"

    mine, theirs = pool_data(toy, SCHEMA, pool, model), pool_data(ebr, SCHEMA, pool, model)
    kept = np.isin(pool.extra["gender"].astype(str), sorted(set(pool.extra["gender"]))[:2])
    assert len(mine.codes) == int(kept.sum()) < len(pool)
    np.testing.assert_array_equal(mine.codes, theirs.codes)
    np.testing.assert_array_equal(mine.group, theirs.group)
    np.testing.assert_array_equal(mine.y, theirs.y)
    assert len(mine.extra) == len(mine.codes)

    with pytest.raises(MethodError, match="toy_groups: 'group' must name a pool column"):
        method_settings("toy_groups", {"group": " "}, SCHEMA)
    bare = pool_from_frame(synth_pool(SCHEMA, n=50, seed=1), SCHEMA)
    bare.extra = bare.extra.drop(columns="gender")
    with pytest.raises(MethodError, match="no group column 'gender' for the toy_groups"):
        pool_data(toy, SCHEMA, bare, model)


def test_a_method_that_declares_nothing_takes_no_group_and_keeps_every_row(toy_table, setup):
    pool, model = setup
    with pytest.raises(MethodError, match="toy: unknown parameter 'group'; known: seed, step"):
        method_settings("toy", {"group": "gender"}, SCHEMA)
    plain = method_settings("toy", {}, SCHEMA)
    assert plain.recorded() == {"seed": 0, "step": 0.5}
    assert len(pool_data(plain, SCHEMA, pool, model).codes) == len(pool)


def test_a_method_that_needs_a_structural_model_is_treated_like_causal(toy_table):
    scm = {"position": {"education": 0.5}}
    toy = method_settings("toy_scm", {"scm": scm, "keys": ["position"]}, SCHEMA)
    assert toy.scm == scm and toy.recorded() == {
        "seed": 0,
        "step": 0.5,
        "keys": ["position"],
        "scm": scm,
    }
    with pytest.raises(MethodError, match="toy_scm: needs a structural causal model"):
        method_settings("toy_scm", {}, SCHEMA)
    with pytest.raises(MethodError, match="toy_scm: keys 'nope' is not a profile item"):
        method_settings("toy_scm", {"scm": scm, "keys": ["nope"]}, SCHEMA)


def test_a_method_that_follows_the_gradient_is_treated_like_wachter(toy_table, setup):
    pool, model = setup
    from sklearn.tree import DecisionTreeClassifier

    from recourse_engine.encoding import normalise

    tree = DecisionTreeClassifier(random_state=0).fit(
        normalise(SCHEMA, pool.codes), pool.extra["approved"]
    )
    no_gradient = SklearnModel(estimator=tree, schema=SCHEMA, use_income=False, name="tree")
    problem = method_problem("toy_gradient", no_gradient)
    assert problem is not None and problem.startswith("toy_gradient follows the decision model")
    assert method_problem("toy", no_gradient) is None
    assert method_problem("toy_gradient", model) is None
    assert "income rule cannot judge" in method_problem("toy", IncomeRule())


def test_the_built_in_methods_declare_what_they_need():
    needs = {name: cls.capabilities for name, cls in METHODS.items()}
    assert {n for n, c in needs.items() if c.group_column} == {"ebr", "ibr"}
    assert {n for n, c in needs.items() if c.group_param} == {"fair_rl"}
    assert {n for n, c in needs.items() if c.scm} == {"causal"}
    assert {n for n, c in needs.items() if c.gradient} == {"wachter"}
    # a parameter a capability names is one the constructor has
    for name, cls in METHODS.items():
        params = cls.study_params()
        assert set(needs[name].item_params) <= set(params), name
        assert ("group" in params) == needs[name].group_param, name
