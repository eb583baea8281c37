"""Server time of the coders' answers page (`/console/studies/<slug>/coding/answers/`).

Creates a study in a fresh SQLite file database, fills it with N participants x K
evaluations (each with an `acceptance_why` answer: N x K answers) by bulk_create
(`tests/studyapp/console/factory.populate`), assigns two coders, lets one code the first
C answers, and times the page as Django's test client requests it in this process (the
whole request: middleware, queries, template; no network): the first page, a middle page,
the "not yet coded by me" filter, and a field filter, each the median of R requests (wall
time and this process's CPU time, which the machine's load distorts less), for a coder
(blind) and for the researcher.

    .venv/bin/python benchmarks/bench_coding.py [--n 10000] [--k 5] [--coded 500] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="participants (completed)")
    ap.add_argument("--k", type=int, default=5, help="evaluations per participant")
    ap.add_argument("--coded", type=int, default=500, help="answers the coder has coded")
    ap.add_argument("--repeat", type=int, default=5, help="requests per figure (median)")
    args = ap.parse_args()
    if not 1 <= args.n <= 200_000 or not 1 <= args.k <= 20 or args.repeat < 1:
        ap.error("--n must be 1..200000, --k 1..20, --repeat at least 1")

    var = Path(tempfile.mkdtemp(prefix="bench-coding-"))
    os.environ.pop("DATABASE_URL", None)
    os.environ.update(STUDYAPP_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="studyapp.config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from recourse_engine import carloan_schema, synth_pool
    from studyapp.coding import answer_services, services
    from studyapp.models import Evaluation
    from studyapp.studies import carloan
    from studyapp.studies import services as study_services
    from tests.studyapp.coding.conftest import CODER_PERMS, PI_PERMS, researcher
    from tests.studyapp.console.factory import populate

    settings.ALLOWED_HOSTS = ["testserver", *settings.ALLOWED_HOSTS]
    call_command("migrate", verbosity=0)
    schema = carloan_schema()
    study = study_services.study_create(
        slug="bench", title="Coding benchmark", schema=schema,
        pool=synth_pool(schema, n=3683, seed=0), design="sparsest:1,proximate:1,random:3",
        texts=carloan.TEXTS, consent_version=carloan.CONSENT_VERSION,
    )  # fmt: skip
    t0 = time.perf_counter()
    populate(study, args.n, args.k, seed=0, panel=False)
    print(f"database: {args.n * args.k:,} answers in {time.perf_counter() - t0:.1f} s")
    pi = researcher("pi", PI_PERMS, study)
    a, b = researcher("coder_a", CODER_PERMS, study), researcher("coder_b", CODER_PERMS, study)
    services.codes_add(study=study, rows=[{"code": "cost", "definition": "money"}], by=pi)
    for coder in (a, b):
        services.coder_assign(study=study, coder=coder, by=pi)
    evs = Evaluation.objects.filter(participant__study=study).order_by("participant_id")
    for rid in evs.values_list("recourse_id", flat=True)[: args.coded]:
        answer_services.coding_save(study=study, coder=a, unit=f"{rid}:acceptance_why",
                                    code_names=["cost"])  # fmt: skip
    url = f"/console/studies/{study.slug}/coding/answers/"
    middle = max(1, args.n * args.k // 50 // 2)
    cases = {
        "first page": {},
        f"page {middle}": {"page": str(middle)},
        "not yet coded by me": {"show": "uncoded"},
        "field acceptance_why, rating 5-7": {"field": "acceptance_why", "rating_min": "5",
                                              "rating_max": "7"},
    }  # fmt: skip
    for who, user in (("coder (blind)", a), ("researcher", pi)):
        client = Client()
        client.force_login(user)
        client.get(url)  # warm: templates, caches
        for name, query in cases.items():
            times, cpu = [], []
            for _ in range(args.repeat):
                t, c = time.perf_counter(), time.process_time()
                r = client.get(url, query)
                times.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
                assert r.status_code == 200, r.status_code
            print(f"{who:14s} {name:34s} median {statistics.median(times):7.1f} ms "
                  f"(min {min(times):.1f}, max {max(times):.1f}); "
                  f"CPU median {statistics.median(cpu):.1f} ms")  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
