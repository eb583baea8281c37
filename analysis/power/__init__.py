"""Power analysis of a study's registered GAMM by simulation (docs/power.md).

    from analysis.power import StatedModel, default_formula, load_spec, make_plan
    from analysis.power import run_replicates, summarise
    spec = load_spec("effects.yaml")
    plan = make_plan(StatedModel(spec), default_formula(spec), spec.tests, seed=1)
    table = run_replicates(plan, [50, 100, 200], replicates=200)   # p per test per replicate
    summarise(table, plan.tests, alpha=0.05)                        # power with MC intervals

Studies are simulated from stated effects (``spec``) or resampled from a pilot export and its
fitted model (``pilot``); each replicate is refitted with ``analysis.gamm``; the replicates
run through ``analysis.grid.map_cells`` with a seed per cell (``run``).
"""

from analysis.power.pilot import load_pilot, pilot_from_data, seed_formula
from analysis.power.run import (
    ORDINAL,
    Plan,
    cell_rng,
    check_grid,
    clopper_pearson,
    make_plan,
    run_cell,
    run_replicates,
    smallest_n,
    summarise,
    wilson,
)
from analysis.power.simulate import PilotModel, StatedModel, default_formula
from analysis.power.spec import EffectSpec, PowerInputError, load_spec, parse_spec

__all__ = [
    "ORDINAL",
    "EffectSpec",
    "PilotModel",
    "Plan",
    "PowerInputError",
    "StatedModel",
    "cell_rng",
    "check_grid",
    "clopper_pearson",
    "default_formula",
    "load_pilot",
    "load_spec",
    "make_plan",
    "parse_spec",
    "pilot_from_data",
    "run_cell",
    "run_replicates",
    "seed_formula",
    "smallest_n",
    "summarise",
    "wilson",
]
