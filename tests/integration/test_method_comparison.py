"""PostgreSQL + Redis + a real Celery worker: a study whose design names every recourse
method (the seven of the literature and fair_rl). Bots walk the pages over HTTP, the worker generates with the stored fits, and the
export shows each method's recourses decodable, admissible, approved, with origin, method,
fit version and ranks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recourse_engine import carloan_schema, load_model
from recourse_engine.strategies import method_names
from tests.integration.stack import manage, migrate, postgres_redis_env, running
from tests.services import require_postgres, require_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCHEMA = carloan_schema()
DUMP_MODEL = (
    "import sys; from studyapp.models import Study as S; "
    "open(sys.argv[-1], 'wb').write(bytes(S.objects.get(slug='comparison').decision_model_blob))"
)


def test_each_recourse_method_supplies_recourses_with_a_real_worker(tmp_path: Path) -> None:
    pg, rd = require_postgres(), require_redis()
    with postgres_redis_env(tmp_path, pg, rd) as env:
        migrate(env)
        out = manage(env, "create_demo_study", "--design", "all-methods", "--no-admin",
                     "--pool-size", "800")  # fmt: skip
        for name in method_names():
            assert f"method:{name}: done" in out, out
        with running(env, tmp_path) as url:
            out = manage(env, "simulate_participants", "comparison", "--n", "10", "--url", url,
                         "--timeout", "120", timeout=600)  # fmt: skip
            assert out.startswith("10 participants in comparison:"), out
        manage(env, "export_study", "comparison", "--out", str(tmp_path / "export"), "--with-test")
        model_path = tmp_path / "model.joblib"
        manage(env, "shell", "-v0", "-c", DUMP_MODEL.replace("sys.argv[-1]", repr(str(model_path))))
    worker_log = (tmp_path / "worker.log").read_text()
    assert "generate_recourses[" in worker_log and "succeeded" in worker_log
    model = load_model(model_path, SCHEMA)
    ev = pd.read_csv(tmp_path / "export" / "evaluations.csv", keep_default_na=False)
    gen = ev[ev["origin"] == "generated"]
    # every method supplied at least one recourse of its own
    assert set(gen["method"]) == set(method_names()), gen["method"].value_counts()
    x = ev[[f"x_{k}" for k in SCHEMA.keys]].to_numpy(float)
    cf = ev[[f"cf_{k}" for k in SCHEMA.keys]].to_numpy(float)
    for j, it in enumerate(SCHEMA.items):
        assert it.valid(cf[:, j]).all(), it.key  # decodable: valid option codes
        if it.constraint == "fixed":
            assert (cf[:, j] == x[:, j]).all(), it.key
        if it.constraint == "up":
            assert (cf[:, j] >= x[:, j]).all(), it.key
    assert model.approves(cf).all()  # approved by the study's decision model
    assert (np.abs(cf - x).sum(axis=1) > 0).all()  # a change
    for _, row in gen.iterrows():
        assert row["fit_version"].startswith(f"method:{row['method']}/1#")
        assert isinstance(json.loads(row["method_params"]), dict) and row["fallback"] == ""
        assert int(row["sparsity_rank"]) >= 1 and int(row["proximity_rank"]) >= 1
        assert row["sparsity"] == (np.abs(cf - x)[row.name] > 0).sum()
    fallback = ev[(ev["origin"] == "pool") & (ev["method"] != "pool_search")]
    assert (fallback["fallback"] != "").all()
