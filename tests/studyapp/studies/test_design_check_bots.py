"""The design check's prediction is honest: on the demo comparison study (its pool of 3,683
synthetic profiles, its items model, its methods), in two conditions, the own-plan and
fallback counts of a bot pilot's export lie within the binomial 99% interval of the
predicted rates, per condition and method.

Bots are people of the same synthetic generator as the pool (another seed stream), so the
check's sample of pool profiles and the bots are draws from one population; a bot the model
approves is left out on both sides (the check predicts over rejected profiles).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from recourse_engine.design_check import binomial_interval
from studyapp.export import export_study
from studyapp.models import DesignCheck, Study
from studyapp.simulation.bots import Bot
from studyapp.studies import comparison, design_check, design_check_run, updates

#: bots in the pilot (the issue asks for 200; the figure the report gives)
N_BOTS = 200
CONDITIONS = [
    {"name": "a", "design": comparison.COMPARISON_DESIGN},
    {"name": "b", "design": "random:1,wachter:1,gs:1"},
]


@pytest.mark.slow
def test_predicted_own_plan_rates_agree_with_a_bot_pilots_export(
    transactional_db: Any, eager: None, tmp_path: Path
) -> None:
    study = comparison.comparison_study_create(slug="comparison", seed=0)  # the demo's pool
    study = updates.study_update(
        study=study, changes={"conditions": CONDITIONS, "assignment": "block_random"}
    )
    check = design_check.check_create(study=study, sample_size=1000)
    assert design_check_run.check_run(check_id=check.pk) == DesignCheck.State.DONE
    check.refresh_from_db()
    predicted = {
        (c["condition"], p["label"]): p
        for c in check.result["conditions"]
        for p in c["parts"]
        if p["method"]
    }
    assert study.state == Study.State.DRAFT  # a pilot of the draft, its methods fitted
    for seed in range(N_BOTS):
        Bot(study, seed=seed).run()
    export_study(study=study, out=tmp_path, with_test=True)
    people = pd.read_csv(tmp_path / "participants.csv", dtype={"condition": str})
    rows = pd.read_csv(tmp_path / "evaluations.csv", dtype={"condition": str})
    rejected = people[
        (people["decision"] == "rejected") & people["state"].isin(["completed", "no_recourse"])
    ]
    compared = 0
    for (cond, label), part in predicted.items():
        ids = set(rejected.loc[rejected["condition"] == cond, "participant"])
        mine = rows[rows["participant"].isin(ids) & (rows["strategy"] == label)]
        own = int((mine["origin"] == "generated").sum())
        n = len(ids)
        lo, hi = binomial_interval(n, part["own_plan_rate"])
        print(
            f"{cond} {label}: {own} own plans of {n} (predicted {part['own_plan_rate']}, 99% {lo}..{hi})"
        )
        assert lo <= own <= hi, (cond, label, own, n, part["own_plan_rate"])
        # the fallbacks are the rest, within the mirrored interval of the fallback rate
        flo, fhi = binomial_interval(n, part["fallback_rate"])
        assert flo <= n - own <= fhi
        compared += 1
    assert compared == 5  # wachter, gs and ebr_generated in a; wachter and gs in b
    assert min(len(set(rejected.loc[rejected["condition"] == c, "participant"])) for c in "ab") > 40
