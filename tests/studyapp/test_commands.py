"""Management commands: the demo study, the bots, and the CLI contract for bad arguments."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command

from studyapp.models import Evaluation, Participant, Recourse, Study
from tests import warm_python

ROOT = Path(__file__).resolve().parents[2]


def _run(name: str, *args: str) -> str:
    buf = io.StringIO()
    call_command(name, *args, stdout=buf)
    return buf.getvalue()


@pytest.fixture
def var(settings: Any, tmp_path: Path) -> Path:
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_create_demo_study_is_idempotent(transactional_db: Any, var: Path) -> None:
    first = _run("create_demo_study", "--pool-size", "300")
    second = _run("create_demo_study", "--pool-size", "300")
    assert "created study carloan: 300 pool profiles" in first
    assert "left unchanged" in second
    assert Study.objects.count() == 1 and Study.objects.get().state == "live"
    password = (var / "admin-password").read_text().strip()
    login = f"user admin  password {password}"
    assert login in first and login in second
    assert authenticate(username="admin", password=password) is not None
    assert "Participant link: http://127.0.0.1:8000/s/carloan/" in first


def test_an_unknown_design_is_refused_even_when_the_study_exists(
    transactional_db: Any, var: Path
) -> None:
    _run("create_demo_study", "--pool-size", "300", "--no-admin")
    with pytest.raises(CommandError, match="--design 'nosuch': part 'nosuch'"):
        _run("create_demo_study", "--slug", "carloan", "--design", "nosuch")
    assert list(Study.objects.values_list("slug", "design")) == [
        ("carloan", "sparsest:1,proximate:1,random:3")
    ]


def test_simulate_participants_walks_the_flow(transactional_db: Any, var: Path) -> None:
    _run("create_demo_study", "--pool-size", "600", "--no-admin")
    out = _run("simulate_participants", "carloan", "--n", "4", "--ineligible", "0.25", "--eager")
    assert out.startswith("4 participants in carloan:")
    states = sorted(Participant.objects.values_list("state", flat=True))
    assert states.count("screened_out") == 1
    assert all(s in ("completed", "no_recourse") for s in states if s != "screened_out")
    for p in Participant.objects.filter(state="completed"):
        assert Evaluation.objects.filter(participant=p).count() == p.recourses.count() > 0
    assert Recourse.objects.filter(evaluation__isnull=True).count() == 0
    # bots arrive through a preview link: test participants, never mixed with real data
    assert set(Participant.objects.values_list("is_test", flat=True)) == {True}


def test_simulated_answers_are_seeded(transactional_db: Any, var: Path) -> None:
    _run("create_demo_study", "--pool-size", "600", "--no-admin")

    def answers() -> list[tuple[dict, dict]]:
        # ratings also depend on the recourses shown, whose seed includes the participant id
        return [(p.screening, p.profile.values) for p in Participant.objects.order_by("pk")]

    _run("simulate_participants", "carloan", "--n", "2", "--seed", "5", "--eager")
    a = answers()
    Participant.objects.all().delete()
    _run("simulate_participants", "carloan", "--n", "2", "--seed", "5", "--eager")
    assert answers() == a and len(a) == 2
    Participant.objects.all().delete()
    _run("simulate_participants", "carloan", "--n", "2", "--seed", "6", "--eager")
    assert answers() != a


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["carloan", "--n", "0"], "--n must be 1..10000"),
        (["carloan", "--ineligible", "1.5"], "--ineligible must be a share"),
        (
            ["carloan", "--ineligible", "0.5", "--screened-out", "0.6"],
            r"--screened-out must be a share in 0\.\.0\.5, got 0\.6",
        ),  # fmt: skip
        (["carloan", "--timeout", "-1"], "--timeout must be positive"),
        (["nope"], "no study 'nope'"),
    ],
)
def test_simulate_bad_arguments(transactional_db: Any, var: Path, args: list, message: str) -> None:
    _run("create_demo_study", "--pool-size", "300", "--no-admin")
    with pytest.raises(CommandError, match=message) as exc:
        _run("simulate_participants", *args)
    assert exc.value.returncode == 2
    assert Participant.objects.count() == 0


def test_simulate_refuses_a_closed_study(transactional_db: Any, var: Path) -> None:
    _run("create_demo_study", "--pool-size", "300", "--no-admin")
    Study.objects.update(state="closed")
    with pytest.raises(CommandError, match="is closed"):
        _run("simulate_participants", "carloan")


def test_demo_bad_pool_size(transactional_db: Any, var: Path) -> None:
    with pytest.raises(CommandError, match="--pool-size must be"):
        _run("create_demo_study", "--pool-size", "3")
    assert Study.objects.count() == 0


def test_cli_exit_status_and_one_line_error(tmp_path: Path) -> None:
    env = {**os.environ, "STUDYAPP_VAR_DIR": str(tmp_path), "DATABASE_URL": ""}
    env.pop("CELERY_BROKER_URL", None)

    def manage(*args: str) -> subprocess.CompletedProcess:
        return warm_python.python(["manage.py", *args], ROOT, env, 120)

    assert manage("migrate", "-v0").returncode == 0
    for args, message in [
        (["export_study", "carloan"], "the following arguments are required: --out"),
        (["export_study", "nope", "--out", str(tmp_path / "o")], "no study 'nope'"),
        (["simulate_participants", "x", "--n", "many"], "invalid int value: 'many'"),
    ]:
        r = manage(*args)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and message in lines[0], r.stderr
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()
