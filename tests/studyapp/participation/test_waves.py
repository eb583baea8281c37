"""Multi-wave studies (issue 34): settings, a 3-wave pilot run by bots with the clock
advanced, the export of every wave, and bad reports of changes."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta
from typing import Any

import numpy as np
import pandas as pd
import pytest
from django.test import Client
from django.utils import timezone

from recourse_engine import carloan_schema
from recourse_engine.schema import Item
from studyapp.definition import engine_objects
from studyapp.definition.errors import ConfigError
from studyapp.definition.study_config import config_validate, placeholders
from studyapp.export.stream import export_zip_stream
from studyapp.models import Participant, Study
from studyapp.participation import wave_changes, waves
from studyapp.simulation.wave_bots import AWAY, WaveBot, pilot
from studyapp.studies import model_training, services, updates
from studyapp.wave_models import Wave, WaveChange, WaveModel
from tests.studyapp.conftest import Walker, make_study, start

S = Participant.State
SCHEMA = carloan_schema()
WAVES = {
    "count": 3,
    "schedule": [{"after_days": 7}, {"after_days": 7}],
    "policies": [
        {"condition": "frozen", "model": "frozen"},
        {
            "condition": "retrained",
            "model": "retrained",
            "announce": {"en": "The bank updated its model since your last application."},
        },
    ],  # fmt: skip
    "effort": True,
}


def _cfg(**settings: Any) -> Any:
    return config_validate({**placeholders(["title", "outcome_codes"]), **settings})


def _problems(**settings: Any) -> str:
    with pytest.raises(ConfigError) as exc:
        _cfg(**settings)
    return str(exc.value)


def test_wave_settings_are_checked() -> None:
    ok = _cfg(
        kind="multi_wave", waves=WAVES, conditions=[{"name": "frozen"}, {"name": "retrained"}]
    )
    assert ok.waves.count == 3
    out_of_order = {
        **WAVES,
        "schedule": [{"at": "2031-05-01T10:00:00+09:00"}, {"at": "2031-04-01T10:00:00+09:00"}],
        "policies": [],
    }
    text = _problems(kind="multi_wave", waves=out_of_order)
    assert "wave 3 opens 2031-04-01 10:00" in text and "not after wave 2" in text
    assert "out of order" in text and "schedule[1].at" in text
    text = _problems(kind="multi_wave", waves={**WAVES, "schedule": [{"after_days": 7}]})
    assert "1 release(s) given for 3 waves" in text
    assert "needs its waves" in _problems(kind="multi_wave")
    assert "only a multi_wave study has waves" in _problems(waves={**WAVES, "policies": []})
    assert "no condition named 'frozen'" in _problems(kind="multi_wave", waves=WAVES)
    assert "less than or equal to 5" in _problems(kind="multi_wave", waves={**WAVES, "count": 6})


def test_change_flags() -> None:
    fixed = Item("gender", "Gender", "categorical", ("a", "b"), constraint="fixed")
    up = Item("edu", "Education", "ordinal", ("1", "2", "3"), constraint="up")
    assert waves_flag(fixed, 1, 1) == "" and waves_flag(fixed, 1, 2) == "fixed"
    assert waves_flag(up, 2, 1) == "direction" and waves_flag(up, 2, 3) == ""
    assert waves_flag(up, 2, 4) == "outside" and waves_flag(up, 2, 2.5) == "outside"


def waves_flag(item: Item, before: float, after: float) -> str:
    return wave_changes.change_flag(item, before, after)[0]


def _multi_wave_study(slug: str, **wave_settings: Any) -> Study:
    study = make_study(slug=slug, state="draft")
    study = model_training.study_train_decision_model(
        study=study, kind="logistic", label_rule={"kind": "top_quantile", "share": 0.5}
    )
    conditions = [{"name": "frozen"}, {"name": "retrained"}]
    changes = {"kind": "multi_wave", "conditions": conditions, "waves": {**WAVES, **wave_settings}}
    study = updates.study_update(study=study, changes=changes)
    services.study_set_state(study=study, state=Study.State.LIVE, acknowledged=["all"])
    return Study.objects.get(pk=study.pk)


@pytest.fixture
def multi(transactional_db: None, eager: None) -> Study:
    return _multi_wave_study("waves")


def test_three_waves_by_bots(multi: Study) -> None:
    start_time = timezone.now()
    bots = [
        WaveBot(multi, seed=s, test=False, mode=("full", "partial", "none")[s % 3], rate=0.3)
        for s in range(100)
    ]
    results = pilot(bots, waves=3, advance=lambda k: start_time + timedelta(days=8 * (k - 1)))
    assert all(r.outcome in ("approved", "completed", "no_recourse") for r in results)
    people = Participant.objects.filter(study=multi)
    assert people.count() == 100 and not people.filter(state__startswith="wave_").exists()

    # every wave each participant reached is recorded, with the model that decided it
    rows = list(Wave.objects.filter(participant__study=multi))
    for p in people:
        numbers = sorted(w.number for w in rows if w.participant_id == p.pk)
        assert numbers == list(range(1, p.wave + 1))
    frozen_hash = WaveModel.objects.get(study=multi, condition="frozen", wave=1).model_hash
    for w in rows:
        if w.condition == "frozen" or w.number == 1:
            assert w.model_hash == frozen_hash
        else:
            assert w.model_hash != frozen_hash and w.announced and w.model_policy == "retrained"
    assert any(w.number == 3 for w in rows), "some bots should reach wave 3"

    # the export holds every wave and every reported change, nothing lost
    data = b"".join(export_zip_stream(multi))
    zf = zipfile.ZipFile(io.BytesIO(data))
    waves_csv = pd.read_csv(zf.open("waves.csv"))
    changes_csv = pd.read_csv(zf.open("changes.csv"))
    evaluations = pd.read_csv(zf.open("evaluations.csv"))
    codebook = pd.read_csv(zf.open("codebook.csv"))
    assert len(waves_csv) == len(rows)
    reapplied = [w for w in rows if w.number >= 2]
    assert len(changes_csv) == len(reapplied) * SCHEMA.d == WaveChange.objects.count()
    assert set(evaluations["wave"]) <= {1, 2, 3} and evaluations["wave"].notna().all()
    described = set(zip(codebook["file"], codebook["column"], strict=True))
    for file, frame in (("waves.csv", waves_csv), ("changes.csv", changes_csv)):
        assert {(file, col) for col in frame.columns} <= described
    assert ("evaluations.csv", "wave") in described
    # x_ of a later wave's evaluation is the profile scored in that wave
    by_key = {(w.participant_id, w.number): w for w in rows}
    for _, ev in evaluations.iterrows():
        w = by_key[(ev["participant"], ev["wave"])]
        assert all(ev[f"x_{k}"] == w.values[k] for k in SCHEMA.keys)
    # changes' before/after follow the recorded profiles
    for _, ch in changes_csv.iterrows():
        assert ch["before"] == by_key[(ch["participant"], ch["wave"] - 1)].values[ch["item"]]
        assert ch["after"] == by_key[(ch["participant"], ch["wave"])].values[ch["item"]]

    # every plan shown was approved by the model in force for its wave (a retrained wave's
    # plans come from that model's candidates, not the study's first model's)
    in_force = {}
    for row in WaveModel.objects.filter(study=multi):
        blob = row.blob if row.blob else Study.objects.get(pk=multi.pk).decision_model_blob
        in_force[(row.condition, row.wave)] = engine_objects.model_of(
            "uploaded", blob=bytes(blob), schema=SCHEMA
        )
    shown = 0
    for _, ev in evaluations.iterrows():
        w = by_key[(ev["participant"], ev["wave"])]
        cf = np.array([[float(ev[f"cf_{k}"]) for k in SCHEMA.keys]])
        assert bool(in_force[(w.condition, w.number)].approves(cf)[0]), (w.condition, w.number)
        shown += w.number > 1 and w.condition == "retrained"
    assert shown >= 1, "no retrained wave's plans were shown: nothing checked"

    # frozen: a fully implemented plan is never rejected at re-application
    model = engine_objects.study_model(Study.objects.get(pk=multi.pk))
    checked = 0
    for w in rows:
        prev = by_key.get((w.participant_id, w.number - 1))
        if w.condition != "frozen" or prev is None or prev.followed is None:
            continue
        plan = prev.followed
        if all(w.values[k] == plan.values[k] for k in SCHEMA.keys):
            codes = np.array([[plan.values[k] for k in SCHEMA.keys]], dtype=float)
            assert bool(model.approves(codes)[0])  # the plan was valid when shown
            assert w.decision == "approved"
            checked += 1
    assert checked >= 1


def _to_changes(study: Study) -> Walker:
    """One participant through wave 1 (rejected, plans rated, a plan followed) and back."""
    walker = start(Client(), study)
    walker.to_profile()
    walker.submit_profile()
    assert walker.participant.state == S.EVALUATING, walker.participant.state
    while walker.page().startswith("evaluation-"):
        assert walker.post(walker.evaluation_data()).status_code == 302
    plan = walker.participant.recourses.order_by("position").first()
    assert walker.post({"page": "wave_follow", "followed": str(plan.pk)}).status_code == 302
    assert walker.page() == AWAY
    waves.tick(now=timezone.now() + timedelta(days=8))
    assert walker.page() == "wave_changes"
    return walker


def test_bad_reports_are_refused_with_the_reason(multi: Study) -> None:
    walker = _to_changes(multi)
    p = walker.participant
    before = waves.current_wave(p).values
    base = {"page": "wave_changes", **{f"item_{k}": "" for k in SCHEMA.keys}}
    # outside the item's options: the form says so, nothing stored
    r = walker.post({**base, "item_education": "9"})
    assert r.status_code == 400 and "Education" in r.content.decode()
    # against an up constraint (education at 3, reported 1): refused with the reason
    Wave.objects.filter(pk=waves.current_wave(p).pk).update(values={**before, "education": 3})
    r = walker.post({**base, "item_education": "1"}, follow=True)
    assert "can only go up" in r.content.decode() and "Nothing was stored" in r.content.decode()
    # a change without its effort (the study asks it)
    r = walker.post({**base, "item_toeic": "8"}, follow=True)
    assert "effort" in r.content.decode()
    assert WaveChange.objects.count() == 0 and walker.participant.state == S.WAVE_CHANGES
    assert walker.participant.wave == 1
    # a study that marks such changes accepts it, marked
    Study.objects.filter(pk=multi.pk).update(waves={**multi.waves, "constraint_breaks": "mark"})
    p = Participant.objects.select_related("study").get(pk=p.pk)
    wave_changes.changes_submit(
        participant=p,
        reported={**{k: None for k in SCHEMA.keys}, "education": 1},
        efforts={"education": 4},
        now=timezone.now() + timedelta(days=8),
    )
    change = WaveChange.objects.get(participant=p, item="education")
    assert (change.before, change.after, change.flag, change.effort) == (3, 1, "direction", 4)
    assert WaveChange.objects.filter(participant=p).count() == SCHEMA.d
    assert Participant.objects.get(pk=p.pk).wave == 2
