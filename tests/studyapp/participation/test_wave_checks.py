"""Multi-wave studies (issue 34): what going live refuses (a model a re-application can
never pass, a policy the model cannot serve), and robust plans: the study passes the models
a plan may meet to the engine's selection, so a robust pick is approved by all of them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.test import Client

from recourse_engine import PoolIndex, carloan_schema, parse_design
from studyapp.definition import engine_objects
from studyapp.definition.errors import StudyError
from studyapp.generation import wave_model_store
from studyapp.models import Recourse, Study
from studyapp.studies import model_training, services, updates
from studyapp.wave_models import WaveModel
from tests.studyapp.conftest import make_study, start

SCHEMA = carloan_schema()
CONDITIONS = [{"name": "frozen"}, {"name": "other"}]
INCOME = 3_500_000  # the eligible screening answer's income (tests.studyapp.conftest)


def _waves(other: str) -> dict[str, Any]:
    return {
        "count": 2,
        "schedule": [{"after_days": 7}],
        "policies": [{"condition": "frozen", "model": "frozen"},
                     {"condition": "other", "model": other}],
    }  # fmt: skip


def _draft(slug: str, other: str, *, train: bool = True, design: str | None = None) -> Study:
    study = make_study(slug=slug, state="draft")
    if train:
        study = model_training.study_train_decision_model(
            study=study, kind="logistic", label_rule={"kind": "top_quantile", "share": 0.5}
        )
    changes: dict[str, Any] = {"kind": "multi_wave", "conditions": CONDITIONS,
                               "waves": _waves(other)}  # fmt: skip
    if design:
        changes["design"] = design
    return updates.study_update(study=study, changes=changes)


def _go_live(study: Study) -> str:
    with pytest.raises(StudyError) as exc:
        services.study_set_state(study=study, state=Study.State.LIVE)
    assert Study.objects.get(pk=study.pk).state == Study.State.DRAFT  # nothing changed
    return str(exc.value)


def test_go_live_refuses_the_income_rule(db: None) -> None:
    text = _go_live(_draft("waves-income", "frozen", train=False))
    assert "decision_model: a multi_wave study cannot use the income rule" in text
    assert "could never be approved" in text and "Decision model" in text  # how to fix it


def test_go_live_refuses_retrained_without_a_label_rule(db: None) -> None:
    study = _draft("waves-upload", "retrained")
    # the same model as an uploaded file: its card records no label rule
    info = {**study.decision_model_info, "label_rule": None}
    Study.objects.filter(pk=study.pk).update(decision_model_info=info)
    study.refresh_from_db()
    text = _go_live(study)
    assert "waves.policies[1].model: 'retrained' (condition 'other')" in text
    assert "label rule" in text and "frozen or multiplicity" in text
    # the other policies need no label rule: the same study goes live with multiplicity
    study = updates.study_update(study=study, changes={"waves": _waves("multiplicity")})
    services.study_set_state(study=study, state=Study.State.LIVE)
    assert Study.objects.get(pk=study.pk).state == Study.State.LIVE


def test_go_live_accepts_retrained_with_a_label_rule(db: None) -> None:
    study = _draft("waves-trained", "retrained")
    services.study_set_state(study=study, state=Study.State.LIVE)
    assert Study.objects.get(pk=study.pk).state == Study.State.LIVE


def test_robust_set_only_when_the_design_asks(db: None) -> None:
    plain = make_study(slug="one-wave", state="draft")
    assert wave_model_store.robust_set_or_none(plain, "", 1, parse_design("robust:2")) is None
    study = _draft("waves-plain", "multiplicity")
    assert (
        wave_model_store.robust_set_or_none(study, "frozen", 1, parse_design("proximate:2")) is None
    )
    assert not wave_model_store.wants_robust(parse_design("wachter:1"), {"wachter": {}})
    assert wave_model_store.wants_robust(parse_design("wachter:1"), {"wachter": {"robust": True}})


def _caught_profile(index: PoolIndex, pool: Any, base: Any, other: Any) -> np.ndarray:
    """A profile the study's model rejects whose cheapest plans include one `other`
    rejects (so a selection that ignored the set would show it)."""
    for row in np.flatnonzero(~base.approves(pool.codes))[:300]:
        cheap = index.select(pool.codes[row], INCOME, "proximate:3", seed=1)
        codes = np.array([pick.codes for pick in cheap.picks])
        if len(codes) and not other.approves(codes).all():
            return pool.codes[row]
    raise AssertionError("no profile whose cheapest plans the other model rejects")


def test_robust_picks_are_approved_by_every_model_of_the_set(
    transactional_db: None, eager: None
) -> None:
    study = _draft("waves-robust", "multiplicity", design="robust:3")
    services.study_set_state(study=study, state=Study.State.LIVE)
    study = Study.objects.get(pk=study.pk)
    # the set: the study's model (wave 1, and the frozen condition's wave 2) and the
    # multiplicity condition's wave-2 model (trained and stored once: it scores wave 2)
    base = engine_objects.study_model(study)
    other, stored = wave_model_store.model_in_force(study, "other", 2)
    assert stored.policy == "multiplicity" and stored.blob
    other = engine_objects.model_of("uploaded", blob=bytes(stored.blob), schema=SCHEMA)
    pool = engine_objects.pool_of(study.pool_csv, SCHEMA)
    x = _caught_profile(PoolIndex(SCHEMA, pool, base), pool, base, other)

    walker = start(Client(), study)
    walker.to_profile()
    walker.submit_profile({k: str(int(v)) for k, v in zip(SCHEMA.keys, x, strict=True)})
    p = walker.participant
    assert p.income_jpy == INCOME and p.condition in ("frozen", "other")
    plans = list(Recourse.objects.filter(participant=p))
    assert len(plans) == 3 and all(r.strategy.startswith("robust") for r in plans)
    codes = np.array([[r.values[k] for k in SCHEMA.keys] for r in plans], dtype=float)
    assert base.approves(codes).all() and other.approves(codes).all()
    frozen_hash = WaveModel.objects.get(study=study, condition="frozen", wave=2).model_hash
    assert stored.model_hash != frozen_hash
    assert WaveModel.objects.filter(study=study, wave=2).count() == 2
