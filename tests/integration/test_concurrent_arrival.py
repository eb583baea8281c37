"""20 participants press the welcome page's start button at once, on PostgreSQL: the Study
row lock keeps the conditions within one participant of each other, and one panel id
started five times at once still makes one participant.

The arrivals run in a separate process against a throwaway PostgreSQL database, each in
its own thread with its own connection, released together by a barrier.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.integration.stack import embedded_env, manage, migrate
from tests.services import require_postgres

pytestmark = [pytest.mark.integration]

ARRIVALS = r"""
import json, threading
from collections import Counter
from django.db import connection
from django.test import Client
from studyapp.models import Condition, Participant, Study

study = Study.objects.get(slug="carloan")
for i, name in enumerate(["distance", "balanced", "random"]):
    Condition.objects.create(study=study, name=name, position=i)
barrier = threading.Barrier(25)
errors = []

def arrive(query):
    try:
        client = Client()
        barrier.wait(timeout=60)
        r = client.post("/s/carloan/", query)
        if r.status_code != 302:
            errors.append(r.status_code)
    except Exception as exc:  # reported below, the test fails on it
        errors.append(repr(exc))
    finally:
        connection.close()

threads = [threading.Thread(target=arrive, args=({},)) for _ in range(20)]
threads += [threading.Thread(target=arrive, args=({"PROLIFIC_PID": "same-1"},)) for _ in range(5)]
for t in threads:
    t.start()
for t in threads:
    t.join()
counts = Counter(Participant.objects.filter(recruitment_id="").values_list("condition", flat=True))
same = list(Participant.objects.filter(recruitment_id="same-1").values_list("condition", flat=True))
print(json.dumps({"vendor": connection.vendor, "counts": counts, "same": same, "errors": errors}))
"""


@contextmanager
def postgres_env(var_dir: Path, pg_url: str) -> Iterator[dict[str, str]]:
    import psycopg

    name = f"recourse_arrival_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{pg_url}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    env = {**embedded_env(var_dir), "DATABASE_URL": f"{pg_url}/{name}"}
    try:
        yield env
    finally:
        with psycopg.connect(f"{pg_url}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_twenty_arrivals_at_once_stay_balanced(tmp_path: Path) -> None:
    pg = require_postgres()
    with postgres_env(tmp_path, pg) as env:
        migrate(env)
        manage(env, "create_demo_study", "--no-admin", "--pool-size", "100")
        out = manage(env, "shell", "-v0", "-c", ARRIVALS)
    result = json.loads(out.strip().splitlines()[-1])
    assert result["vendor"] == "postgresql" and result["errors"] == []
    counts = result["counts"]
    # 20 plain arrivals plus the one panel member: 21 over three conditions
    assert sum(counts.values()) == 20 and len(result["same"]) == 1
    counts[result["same"][0]] = counts.get(result["same"][0], 0) + 1
    assert set(counts) == {"distance", "balanced", "random"}
    assert max(counts.values()) - min(counts.values()) <= 1, counts
