"""Run seeded bot participants through a draft or live study over the real HTTP flow; they
arrive through a preview link, so they are test participants (`Participant.is_test`)."""

from __future__ import annotations

import re
import statistics
import sys
from collections import Counter
from typing import Any

from django.conf import settings
from tqdm import tqdm

from studyapp.config.celery_app import app as celery_app
from studyapp.management.base import StudyCommand
from studyapp.models import Study
from studyapp.participation.bots import Bot, BotError, HttpClient


class Command(StudyCommand):
    help = (
        "Walk N simulated participants through a draft or live study (needs a running "
        "worker); they are test participants, left out of quotas, the monitor and the export "
        "unless it is asked for them (export_study --with-test)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("study", help="study slug")
        parser.add_argument("--n", type=int, default=10, help="number of participants (1..10000)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--ineligible",
            type=float,
            default=0.0,
            help="share of bots that answer the screening ineligibly (0..1)",
        )
        parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait per bot")
        parser.add_argument(
            "--eager", action="store_true", help="run recourse tasks in this process (no worker)"
        )
        parser.add_argument(
            "--url",
            default="",
            help="drive a running server over HTTP (e.g. http://127.0.0.1:8000) instead of "
            "the in-process test client; the study is read from this process's database",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        n, share = opts["n"], opts["ineligible"]
        if not 1 <= n <= 10_000:
            self.fail(f"--n must be 1..10000, got {n}")
        if not 0.0 <= share <= 1.0:
            self.fail(f"--ineligible must be a share in 0..1, got {share}")
        if opts["timeout"] <= 0:
            self.fail(f"--timeout must be positive, got {opts['timeout']}")
        study = self.study(opts["study"])
        if study.state == Study.State.CLOSED:
            self.fail(f"study {study.slug} is closed")
        url = opts["url"]
        if url and not re.match(r"^https?://[^/\s]+/?$", url):
            self.fail(f"--url must look like http://host:port, got {url!r}")
        if url and opts["eager"]:
            self.fail("--eager runs tasks in this process; it cannot be combined with --url")
        if "testserver" not in settings.ALLOWED_HOSTS:  # the bots' client host name
            settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        eager_before = celery_app.conf.task_always_eager
        celery_app.conf.task_always_eager = eager_before or opts["eager"]
        try:
            self._simulate(study, opts)
        finally:
            celery_app.conf.task_always_eager = eager_before

    def _simulate(self, study: Study, opts: dict[str, Any]) -> None:
        n, share = opts["n"], opts["ineligible"]
        outcomes: Counter[str] = Counter()
        waits, evaluations = [], 0
        n_ineligible = round(n * share)
        # a progress bar on a terminal (tqdm leaves non-interactive runs quiet)
        for i in tqdm(range(n), desc="participants", unit="p", disable=None, file=sys.stderr):
            bot = Bot(
                study,
                seed=opts["seed"] * 100_003 + i,
                eligible=i >= n_ineligible,
                wait_timeout=opts["timeout"],
                client=HttpClient(opts["url"]) if opts["url"] else None,
            )
            try:
                result = bot.run()
            except BotError as exc:
                self.fail(f"bot {i + 1}/{n}: {exc}")
            outcomes[result.outcome] += 1
            evaluations += result.evaluations
            if result.wait_seconds is not None:
                waits.append(result.wait_seconds)
        summary = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
        line = f"{n} participants in {study.slug}: {summary}; {evaluations} evaluations"
        if waits:
            line += f"; median wait on the waiting page {statistics.median(waits):.2f}s"
        self.stdout.write(line)
