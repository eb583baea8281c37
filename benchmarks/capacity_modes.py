"""The three runs of bench_capacity: the realistic step search per backend, the stress runs
(bench_load's and oTree's), and one against two web nodes behind HAProxy."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.capacity_dwell import DwellTimes, largest_passing, next_step, plan_run
from benchmarks.load_common import WEB_ARGS, WORKER_ARGS, backend_env, loadavg, measured_run
from tests.integration.stack import ROOT, prepare, running


def realistic(a: argparse.Namespace) -> list[dict[str, Any]]:
    """Per backend: N = each step in turn until one misses the target; one stack each."""
    rows: list[dict[str, Any]] = []
    dwell = DwellTimes(a.time_scale)
    plan = plan_run(dwell, a.ramp)
    for backend in a.backend_list:
        with (
            tempfile.TemporaryDirectory(prefix=f"bench-capacity-{backend}-") as tmp,
            backend_env(backend, Path(tmp), a.pg, a.redis) as env,
        ):
            work = Path(tmp)
            prepare(env, pool_size=a.pool_size)
            with running(env, work, web_args=WEB_ARGS, worker_args=WORKER_ARGS[backend]) as url:
                done: list[dict[str, Any]] = []
                while (n := next_step(a.step_list, done, a.target_ms)) is not None:
                    limit = a.ramp + a.window if a.window else plan.bound_s + a.slack
                    typical = limit if a.window else plan.typical_s
                    print(f"\n== realistic, {backend}, N={n} (about {typical / 60:.1f} "
                          f"min, at most {limit / 60:.0f}) ==", flush=True)  # fmt: skip
                    out = work / f"realistic-{n}.json"
                    cmd = [
                        sys.executable, str(ROOT / "benchmarks" / "capacity_walk.py"),
                        "--url", url, "--n", str(n), "--ramp", str(a.ramp),
                        "--time-scale", str(a.time_scale), "--report", str(out),
                        "--time-limit", str(limit), "--window", str(a.window),
                    ]  # fmt: skip
                    figures = measured_run(cmd, env, ROOT, out, limit + 300, "gunicorn + worker")
                    done.append({"mode": "realistic", "backend": backend, "n": n, **figures})
            largest = largest_passing(done, a.target_ms)
            print(f"\n{backend}: largest N with p95 <= {a.target_ms:g} ms: {largest or 'none'}")
            for row in done:
                row["largest_n_at_target"] = largest
            rows += done
    return rows


def stress(a: argparse.Namespace) -> list[dict[str, Any]]:
    """bench_load's think runs (its own stacks), then oTree on the same pages, same N and
    think time, with the same load generator."""
    from benchmarks import bench_load
    from benchmarks.capacity_otree import otree_missing, otree_version, run_otree

    argv = ["--n", ",".join(map(str, a.n_list)), "--backends", ",".join(a.backend_list),
            "--scenarios", "think", "--think", a.think, "--pool-size", str(a.pool_size),
            "--pg", a.pg, "--redis", a.redis]  # fmt: skip
    if a.stress_ramp is not None:
        argv += ["--ramp", str(a.stress_ramp)]
    rows = [{"mode": "stress", **r} for r in bench_load.run(bench_load._args(argv))]
    missing = otree_missing(a.otree_python)
    if missing:
        print(f"\noTree not run: {missing}")
        rows.append({"mode": "stress", "backend": "otree", "n": 0, "failed": missing})
        return rows
    version = otree_version(a.otree_python)
    for n in a.n_list:
        print(f"\n== oTree {version} prodserver (SQLite), N={n}, think {a.think} s ==", flush=True)
        with tempfile.TemporaryDirectory(prefix="bench-capacity-otree-") as tmp:
            figures = run_otree(a.otree_python, Path(tmp), n, a.think, a.stress_ramp, 600.0)
        rows.append({"mode": "stress", "backend": f"otree {version}", "scenario": "think",
                     **figures})  # fmt: skip
    return rows


def scaling(a: argparse.Namespace) -> list[dict[str, Any]]:
    """PostgreSQL + Redis; the same N participants against 1, then 2 gunicorn nodes behind
    HAProxy, node i pinned to core i (`taskset -c i`); one Celery worker (two processes,
    not pinned) serves both."""
    from benchmarks import bench_load
    from tests.integration.cluster import Node, Worker, haproxy, wait

    rows: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="bench-capacity-scaling-") as tmp,
        backend_env("postgres", Path(tmp), a.pg, a.redis) as base,
    ):
        work = Path(tmp)
        queue = base["STUDYAPP_QUEUE"]
        env = {
            **base,
            "STUDYAPP_CACHE_URL": f"{a.redis}/0",
            "STUDYAPP_CACHE_PREFIX": queue,  # removed with the queue's keys afterwards
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DJANGO_PROXY_COUNT": "1",  # the balancer's forwardfor
        }
        prepare(env, pool_size=a.pool_size)
        queues = [queue, *(f"{queue}.{q}" for q in ("recourse", "fits", "mail", "exports"))]
        worker = Worker(env, queues, work / "worker.log", WORKER_ARGS["postgres"])
        try:
            worker.wait_ready()
            for k in a.node_list:
                # host-sized per node: one core each gives 2 processes x 4 threads; two masters
                # on one host: no control socket
                node_args = (*WEB_ARGS, "--no-control-socket")
                nodes = [Node(env, "127.0.0.1", work / f"node{i}-{k}.log", node_args,
                              prefix=("taskset", "-c", str(i))) for i in range(k)]  # fmt: skip
                try:
                    for node in nodes:
                        node.start()
                    with haproxy([n.address for n in nodes]) as lb:
                        states = lb["states"]
                        wait(lambda s=states: set(s().values()) == {"UP"}, "nodes UP", 30)  # type: ignore[operator]
                        for n in a.n_list:
                            print(f"\n== scaling, {k} node(s), N={n}, think {a.think} s ==",
                                  flush=True)  # fmt: skip
                            bl = argparse.Namespace(time_limit=600.0, ramp=a.stress_ramp)
                            fig = bench_load._run_one(env, str(lb["url"]), n, a.think, bl,
                                                      work / f"scaling-{k}-{n}.json",
                                                      "nodes + worker + haproxy")  # fmt: skip
                            rows.append({"mode": "scaling", "backend": "postgres", "nodes": k,
                                         "scenario": "think", **fig})  # fmt: skip
                finally:
                    for node in nodes:
                        node.stop()
        finally:
            worker.stop()
    return rows


def header() -> str:
    return f"load average at start: {loadavg()}; {len(os.sched_getaffinity(0))} CPUs"
