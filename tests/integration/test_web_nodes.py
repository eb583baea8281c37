"""Several web nodes (issue 33): two gunicorn nodes on two loopback addresses behind
HAProxy, PgBouncer in transaction mode before PostgreSQL, Redis as broker and shared cache,
and two Celery workers on separate queues (participants' recourses; everything else). Forty
participants walk the study while one web node is killed (SIGKILL to every process of it)
and started again: every participant finishes, every rating is stored once as sent, and
the export holds exactly that."""

from __future__ import annotations

import json
import re
import threading
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.cluster import Node, Worker, haproxy, pgbouncer, wait
from tests.integration.stack import manage, postgres_redis_env, prepare
from tests.services import require_postgres, require_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

N = 40
#: the two loopback addresses of the nodes (Linux routes all of 127/8 to lo)
HOSTS = ("127.0.0.1", "127.0.0.2")


def _served(log: Path, since: int, mark: str) -> int:
    """Requests with `mark` in their line that a node's access log records after its first
    `since` characters (the balancer's own health checks carry no mark)."""
    return sum(1 for line in log.read_text()[since:].splitlines() if mark in line)


def test_two_web_nodes_one_killed_and_restarted(tmp_path: Path) -> None:
    pg_url, redis_url = require_postgres(), require_redis()
    host, port = pg_url.rsplit("@", 1)[1].split(":")
    with (
        postgres_redis_env(tmp_path, pg_url, redis_url) as base,
        pgbouncer(host, int(port), pool_size=8) as bouncer,
    ):
        db_name = base["DATABASE_URL"].rsplit("/", 1)[1]
        queue = base["STUDYAPP_QUEUE"]
        env = {
            **base,
            # every node and worker reaches PostgreSQL through PgBouncer only
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{bouncer['port']}/{db_name}",
            "STUDYAPP_PGBOUNCER": "1",
            "STUDYAPP_CACHE_URL": f"{redis_url}/0",
            "STUDYAPP_CACHE_PREFIX": queue,  # removed with the queue's keys afterwards
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DJANGO_PROXY_COUNT": "1",
            "STUDYAPP_SWEEP_AFTER_S": "4",
            "STUDYAPP_SWEEP_EVERY_S": "1",
        }
        # the nodes and the recourse worker start while the database is migrated (neither
        # reads it before a request or a task); the other worker runs beat, which does
        # two masters on one host: no control socket (both would take ~/.gunicorn/gunicorn.ctl)
        node_args = ("--workers", "2", "--threads", "4", "--timeout", "120", "--no-control-socket")
        nodes = [Node(env, h, tmp_path / f"node{i}.log", node_args) for i, h in enumerate(HOSTS, 1)]
        workers: list[Worker] = []
        try:
            for node in nodes:
                node.launch()
            workers.append(Worker(env, [f"{queue}.recourse"], tmp_path / "worker-recourse.log"))
            prepare(env)
            ops = [queue, f"{queue}.fits", f"{queue}.mail", f"{queue}.exports"]
            workers.append(Worker(env, ops, tmp_path / "worker-ops.log", ("--pool=solo", "--beat")))
            for node in nodes:
                node.wait_up()
            for w in workers:
                w.wait_ready()
            with haproxy([n.address for n in nodes]) as lb:
                states = lb["states"]
                wait(lambda: set(states().values()) == {"UP"}, "both nodes UP", 20)  # type: ignore[operator]
                outcome = _walk_in_background(env, str(lb["url"]), tmp_path / "load.json")
                recourse_log = tmp_path / "worker-recourse.log"
                # the first participants rate their plans, the others still arrive or wait: the node
                # dies and boots again while most of the walk is still ahead
                wait(lambda: recourse_log.read_text().count("succeeded") >= N // 8,
                     "participants evaluating", 90)  # fmt: skip
                victim = nodes[1]
                victim.kill()
                wait(lambda: states()["node2"].startswith("DOWN"), "node2 taken out", 10)  # type: ignore[operator,index]
                seen = len(victim.log.read_text())
                victim.launch()  # at once: booting takes seconds, participants walk on
                wait(lambda: states()["node2"] == "UP", "node2 back", 120)  # type: ignore[operator,index]
                outcome["thread"].join(180)  # type: ignore[attr-defined]
                assert not outcome["thread"].is_alive(), "the walk did not end"  # type: ignore[attr-defined]
                assert "error" not in outcome, outcome["error"]
                # the balancer sends requests to the restarted node again (round robin)
                for _ in range(4):
                    urllib.request.urlopen(f"{lb['url']}/healthz?via=lb", timeout=10).read()
                served_after = _served(victim.log, seen, "via=lb")
        finally:
            for node in nodes:
                node.stop()
            for w in workers:
                w.stop()
        figures = json.loads((tmp_path / "load.json").read_text())
        assert "verification OK" in str(outcome["out"]), outcome["out"]
        assert figures["participants"] == N and figures["failed_participants"] == 0, figures
        assert set(figures["outcomes"]) <= {"completed", "no_recourse"}, figures["outcomes"]
        assert figures["verification"] == {"ok": True, "problems": []}, figures["verification"]
        # the balancer brought the restarted node back: it answers forwarded requests again
        assert served_after > 0
        # the participant tasks ran on the recourse worker, not on the other one
        assert "generate_recourses[" not in (tmp_path / "worker-ops.log").read_text()
        # PgBouncer carried the traffic in transaction mode with at most its pool of
        # server connections (the nodes' and workers' client connections were more)
        pools = [p for p in bouncer["show"]("POOLS") if p["database"] == db_name]  # type: ignore[operator]
        assert pools and pools[0]["pool_mode"] == "transaction"
        stats = [s for s in bouncer["show"]("STATS") if s["database"] == db_name]  # type: ignore[operator]
        assert int(stats[0]["total_xact_count"]) > N
        _export_agrees(env, tmp_path, figures, str(outcome["out"]))


def _walk_in_background(env: dict[str, str], url: str, report: Path) -> dict[str, object]:
    """`simulate_participants --verify` in a thread: N participants at once, each doing what
    the error page asks after a server error (reload, send again if still asked)."""
    outcome: dict[str, object] = {}

    def walk() -> None:
        try:
            outcome["out"] = manage(
                env, "simulate_participants", "carloan", "--url", url, "--n", str(N),
                "--concurrency", str(N), "--think", "0.2,0.8", "--ramp", "4", "--verify",
                "--retry-errors", "10", "--report", str(report), "--timeout", "120",
                "--time-limit", "170", timeout=200,
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - reported by the test's assertion
            outcome["error"] = exc

    thread = threading.Thread(target=walk, daemon=True)
    thread.start()
    outcome["thread"] = thread
    return outcome


def _export_agrees(env: dict[str, str], tmp_path: Path, figures: dict, out: str) -> None:
    """The export (through PgBouncer too) holds the N participants and each rating once."""
    manage(env, "export_study", "carloan", "--out", str(tmp_path / "export"), "--with-test")
    pa = pd.read_csv(tmp_path / "export" / "participants.csv", keep_default_na=False)
    ev = pd.read_csv(tmp_path / "export" / "evaluations.csv", keep_default_na=False)
    assert len(pa) == N and pa["participant"].is_unique
    assert set(pa["outcome"]) <= {"completed", "no_recourse"}
    assert dict(pa["outcome"].value_counts()) == figures["outcomes"]
    assert not ev.duplicated(["participant", "recourse"]).any()
    counted = ev.groupby("participant").size()
    for _, p in pa.iterrows():
        assert counted.get(p["participant"], 0) == p["n_evaluations"]
    # as many rows as ratings the bots sent (the verification's count of them)
    stored, sent = map(int, re.search(r"(\d+)/(\d+) ratings stored as sent", out).groups())
    assert len(ev) == stored == sent > 0
    assert ev["acceptance"].between(1, 7).all() and ev["action"].between(1, 7).all()
