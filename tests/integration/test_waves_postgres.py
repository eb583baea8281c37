"""Issue 34 on PostgreSQL + Redis with a real Celery worker process and gunicorn: a 3-wave
study with two conditions (frozen; retrained, announced) and a design with a robust part, run
by 12 bots over HTTP that implement their plans fully, partly or not at all, the clock
advanced between waves (`wave_bots.pilot`, which runs the schedule as 8 and 16 days later).
Every participant's waves and reported changes are in the export, every wave's plans came
from the worker, and the plans shown were approved by the model in force when shown."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recourse_engine import carloan_schema, load_model
from recourse_engine.model_updates import model_hash
from tests.integration.stack import manage, migrate, postgres_redis_env, running, succeeded_tasks
from tests.services import require_postgres, require_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

N_BOTS = 12
SCHEMA = carloan_schema()
SETUP = """
from studyapp.models import Study
from studyapp.studies import services, updates
Study.objects.filter(slug="trained").update(state="draft")
s = updates.study_update(study=Study.objects.get(slug="trained"), changes=dict(
    kind="multi_wave", design="proximate:1,robust:1",
    conditions=[dict(name="frozen"), dict(name="drift")],
    waves=dict(count=3, schedule=[dict(after_days=7), dict(after_days=7)], policies=[
        dict(condition="frozen", model="frozen"),
        dict(condition="drift", model="retrained", announce=dict(en="The model was updated."))])))
services.study_set_state(study=s, state="live", acknowledged=["all"])
"""
#: the bots over HTTP, the schedule run in this process as 8 and 16 days later
PILOT = """
from datetime import timedelta
from django.utils import timezone
from studyapp.models import Study
from studyapp.simulation.bots import HttpClient
from studyapp.simulation.wave_bots import WaveBot, pilot
s = Study.objects.get(slug="trained")
t0 = timezone.now()
bots = [WaveBot(s, seed=i, test=False, mode=("full", "partial", "none")[i % 3], rate=0.3,
                client=HttpClient("{url}"), wait_timeout=120) for i in range({n})]
results = pilot(bots, waves=3, advance=lambda k: t0 + timedelta(days=8 * (k - 1)))
print("OUTCOMES=" + ",".join(r.outcome for r in results))
"""
#: the stored wave models (hash -> file), for an independent check of the decisions
MODELS = """
import base64
from studyapp.models import Study
from studyapp.wave_models import WaveModel
s = Study.objects.get(slug="trained")
print("STUDY=" + base64.b64encode(bytes(s.decision_model_blob)).decode())
for row in WaveModel.objects.filter(study=s).exclude(blob=None):
    print("MODEL=" + row.model_hash + "=" + base64.b64encode(bytes(row.blob)).decode())
"""


def _models(printed: str, tmp: Path) -> dict[str, object]:
    """The study's model and the retrained ones, keyed by the hash of the model loaded from
    its stored file (so a recorded hash that is not the file's model is a KeyError)."""
    found: dict[str, object] = {}
    for line in printed.splitlines():
        if line.startswith(("STUDY=", "MODEL=")):
            encoded = line.split("=", 2)[2] if line.startswith("MODEL=") else line[6:]
            blob = base64.b64decode(encoded)
            path = tmp / f"m{len(found)}.joblib"
            path.write_bytes(blob)
            model = load_model(path, SCHEMA)
            found[model_hash(model)] = model
    return found


def test_three_waves_on_postgres_with_a_worker(tmp_path: Path) -> None:
    pg, rd = require_postgres(), require_redis()
    with postgres_redis_env(tmp_path, pg, rd) as env:
        migrate(env)
        manage(env, "create_demo_study", "--no-admin", "--slug", "trained", "--design",
               "proximate:1", "--pool-size", "400")  # fmt: skip
        manage(env, "shell", "-c", SETUP)
        with running(env, tmp_path) as url:
            out = manage(env, "shell", "-c", PILOT.format(url=url, n=N_BOTS), timeout=400)
        outcomes = next(x for x in out.split() if x.startswith("OUTCOMES="))[9:].split(",")
        models = _models(manage(env, "shell", "-v0", "-c", MODELS), tmp_path)
        export = tmp_path / "export"
        manage(env, "export_study", "trained", "--out", str(export))
    assert len(outcomes) == N_BOTS
    assert set(outcomes) <= {"approved", "completed", "no_recourse"}, outcomes
    waves = pd.read_csv(export / "waves.csv", keep_default_na=False)
    changes = pd.read_csv(export / "changes.csv", keep_default_na=False)
    evaluations = pd.read_csv(export / "evaluations.csv", keep_default_na=False)
    # nothing lost: wave 1 .. the last reached for every participant, changes per item
    assert waves["participant"].nunique() == N_BOTS
    for _, rows in waves.groupby("participant"):
        assert list(rows["wave"]) == list(range(1, len(rows) + 1))
    assert (waves["wave"] == 3).any(), "some bots should reach wave 3"
    assert len(changes) == (waves["wave"] >= 2).sum() * SCHEMA.d
    rejected = waves[waves["decision"] == "rejected"]
    # every rejected wave had plans rated, made by the worker process
    rated = set(zip(evaluations["participant"], evaluations["wave"], strict=True))
    assert set(zip(rejected["participant"], rejected["wave"], strict=True)) <= rated
    assert succeeded_tasks(tmp_path) == len(rejected)
    # the decisions are the recorded models' (loaded from the stored files)
    drift = waves[(waves["condition"] == "drift") & (waves["wave"] >= 2)]
    assert (drift["announced"] == 1).all() and drift["model_policy"].eq("retrained").all()
    for _, w in waves.iterrows():
        model = models[w["model_hash"]]
        x = np.array([[float(w[f"x_{k}"]) for k in SCHEMA.keys]])
        assert bool(model.approves(x)[0]) == (w["decision"] == "approved")
    # the plans shown (robust or not) were approved by the model in force when shown
    hashes = dict(zip(zip(waves["participant"], waves["wave"], strict=True), waves["model_hash"],
                      strict=True))  # fmt: skip
    for _, ev in evaluations.iterrows():
        model = models[hashes[(ev["participant"], ev["wave"])]]
        cf = np.array([[float(ev[f"cf_{k}"]) for k in SCHEMA.keys]])
        assert bool(model.approves(cf)[0]), ev["participant"]
    # the analysis runs on the export; under the frozen model nothing is invalidated
    from analysis.waves import analyse_waves

    result = analyse_waves(export, models)
    inv = result.tables["invalidation"]
    assert set(inv["wave"]) <= {2, 3} and inv["reapplied"].sum() == (waves["wave"] >= 2).sum()
    assert (inv[inv["condition"] == "frozen"]["invalidated"] == 0).all()
