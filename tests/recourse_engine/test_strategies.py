"""The one strategy table: every pool strategy and every recourse method by name, designs
checked against it, and plain designs that never import the heavy method modules."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from recourse_engine import (
    STRATEGIES,
    DesignError,
    StrategyError,
    design_strategies,
    generating_strategies,
    get_strategy,
    method_names,
    parse_design,
    pool_fit_strategies,
    pool_strategies,
)

POOL_STRATEGIES = [
    "diverse", "ebr", "ibr", "lowest_cost", "proximate", "random", "robust", "sparsest",
]  # fmt: skip
METHOD_NAMES = ["wachter", "gs", "ebr", "ibr", "cchvae", "cruds", "causal", "fair_rl"]
# every method generates; EBR and IBR under their own names pick from the pool
GENERATING = {
    "wachter": "wachter",
    "gs": "gs",
    "cchvae": "cchvae",
    "cruds": "cruds",
    "causal": "causal",
    "fair_rl": "fair_rl",
    "ebr_generated": "ebr",
    "ibr_generated": "ibr",
}


def test_the_table_holds_every_pool_strategy_and_every_method():
    assert pool_strategies() == POOL_STRATEGIES
    assert generating_strategies() == sorted(GENERATING)
    assert design_strategies() == sorted({*POOL_STRATEGIES, *GENERATING})
    assert method_names() == METHOD_NAMES
    assert set(STRATEGIES) == {*POOL_STRATEGIES, *METHOD_NAMES, *GENERATING}
    assert pool_fit_strategies() == ["ebr", "ibr"]
    for name, entry in STRATEGIES.items():
        assert entry.name == name and entry.summary
        assert entry.in_design
        assert entry.generates == GENERATING.get(name)
    # every method can be shown generated, under exactly one design name
    assert sorted(GENERATING.values()) == sorted(METHOD_NAMES)


def test_generating_parts_name_their_method_and_ask_for_one():
    d = parse_design("proximate:1,wachter:1,ebr:1,ebr_generated:1,gs:1,random:1")
    assert [p.method for p in d.parts] == [None, "wachter", None, "ebr", "gs", None]
    assert d.methods == ["wachter", "ebr", "gs"]
    with pytest.raises(
        DesignError, match=r"'wachter' generates one counterfactual per profile; use wachter:1"
    ):
        parse_design("sparsest:1,wachter:2")


def test_the_table_cannot_be_extended_at_run_time():
    with pytest.raises(TypeError):
        STRATEGIES["fancy"] = STRATEGIES["random"]  # type: ignore[index]
    assert "fancy" not in STRATEGIES


def test_methods_come_from_the_table():
    from recourse_engine.methods import CCHVAE, CRUDS, EBR, IBR, METHODS, get_method
    from recourse_engine.methods.causal import CausalRecourse
    from recourse_engine.methods.fair_rl import FairRL
    from recourse_engine.methods.growing_spheres import GrowingSpheres
    from recourse_engine.methods.wachter import Wachter

    expected = {
        "wachter": Wachter,
        "gs": GrowingSpheres,
        "ebr": EBR,
        "ibr": IBR,
        "cchvae": CCHVAE,
        "cruds": CRUDS,
        "causal": CausalRecourse,
        "fair_rl": FairRL,
    }
    assert dict(METHODS) == expected
    assert list(METHODS) == METHOD_NAMES
    for name, cls in expected.items():
        assert get_strategy(name).method is cls
        assert type(get_method(name)) is cls
    assert get_strategy("random").method is None


def test_unknown_names_list_the_known_ones():
    with pytest.raises(StrategyError, match="unknown strategy 'proxmate'; known: .*wachter"):
        get_strategy("proxmate")


def test_distances_of_the_plain_strategies():
    d = parse_design("sparsest:1,proximate:1,lowest_cost:1,diverse@l2:1,random:1,ebr:1")
    assert [p.distance.label if p.distance else None for p in d.parts] == [
        "sparsity",
        "proximity",
        "proximity",
        "l2",
        None,
        None,
    ]
    assert [p.label for p in d.parts][2:4] == ["lowest_cost@proximity", "diverse@l2"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "proxmate:1",
            "part 'proxmate:1': unknown strategy 'proxmate'; known: causal, cchvae, cruds, "
            "diverse, ebr, ebr_generated, fair_rl, gs, ibr, ibr_generated, lowest_cost, "
            "proximate, random, robust, sparsest, wachter",
        ),
        ("cchvae@l2:1", "part 'cchvae@l2:1': 'cchvae' takes no @distance"),
        (
            "ebr@l2:1",
            "part 'ebr@l2:1': 'ebr' takes no @distance (only diverse, lowest_cost, robust do)",
        ),
    ],
)
def test_design_errors_name_the_part_and_the_problem(text, message):
    with pytest.raises(DesignError) as err:
        parse_design(text)
    assert str(err.value).startswith(message)


def _modules_after(code: str) -> set[str]:
    probe = textwrap.dedent(code) + textwrap.dedent(
        """
        import sys
        print(",".join(sorted(m for m in sys.modules if m.split(".")[0] in
              ("torch", "scipy", "sklearn") or m.startswith("recourse_engine.methods"))))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    return set(out.split(",")) - {""}


def test_plain_designs_import_no_method_module_and_no_torch():
    loaded = _modules_after(
        """
        from recourse_engine import PoolIndex, carloan_schema, parse_design, pool_from_frame
        from recourse_engine import synth_pool
        schema = carloan_schema()
        pool = pool_from_frame(synth_pool(schema, n=300, seed=1), schema)
        index = PoolIndex(schema, pool)
        for design in ("sparsest:1,random:3", "diverse@l2:2,lowest_cost@mad_l1:1,proximate:1"):
            sel = index.select(pool.codes[0], float(pool.income[0]), design, seed=0)
            assert sel.picks
        # naming a balanced strategy is checked without importing it either
        parse_design("ebr:1,ibr:1")
        """
    )
    assert loaded == set()


def test_the_ebr_strategy_imports_its_module_on_first_use_but_not_torch():
    loaded = _modules_after(
        """
        from recourse_engine import PoolIndex, carloan_schema, pool_from_frame, synth_pool
        schema = carloan_schema()
        pool = pool_from_frame(synth_pool(schema, n=300, seed=1), schema)
        PoolIndex(schema, pool).select(pool.codes[0], float(pool.income[0]), "ebr:1", seed=0)
        """
    )
    assert "recourse_engine.methods.ebr" in loaded
    assert not any(m.split(".")[0] == "torch" for m in loaded)
