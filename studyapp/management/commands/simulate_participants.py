"""Run seeded bot participants through a draft or live study over the real HTTP flow; they
arrive through a preview link, so they are test participants (`Participant.is_test`)."""

from __future__ import annotations

import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from django import db
from django.conf import settings
from django.utils import timezone
from tqdm import tqdm

from studyapp.config.celery_app import app as celery_app
from studyapp.management.base import StudyCommand
from studyapp.models import Study
from studyapp.simulation.bots import Bot, BotError, HttpClient
from studyapp.simulation.integrity_bots import BOT_KINDS


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
        parser.add_argument(
            "--screened-out",
            type=float,
            default=0.0,
            help="share of bots that answer the study's own screener (a question's end rule) "
            "so that the study ends for them (0..1; the others answer so that it goes on)",
        )
        parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait per bot")
        parser.add_argument(
            "--kind",
            choices=sorted(BOT_KINDS),
            default="",
            help="integrity bots of one kind, each taking its own (real) time per page and "
            "sending the integrity script's signals: human_paced, speeder or paster",
        )
        parser.add_argument(
            "--eager", action="store_true", help="run recourse tasks in this process (no worker)"
        )
        parser.add_argument(
            "--url",
            default="",
            help="drive a running server over HTTP (e.g. http://127.0.0.1:8000) instead of "
            "the in-process test client; the study is read from this process's database",
        )
        parser.add_argument(
            "--concurrency",
            type=int,
            default=0,
            help="walk this many participants at once over --url (1..n; threads, each "
            "timing its requests); prints latency percentiles per page type",
        )
        parser.add_argument(
            "--think",
            default="",
            help="seconds a participant spends on a page before submitting it, MIN,MAX "
            "(uniform; e.g. 1,3; 0 for none); with --url only, default 0",
        )
        parser.add_argument(
            "--ramp",
            type=float,
            default=None,
            help="seconds over which the first --concurrency participants arrive, evenly "
            "(0..600; default: the longest think time)",
        )
        parser.add_argument(
            "--verify",
            action="store_true",
            help="afterwards compare the database with what each participant sent (every "
            "participant complete, every rating stored as sent, no duplicates); exit 1 if not",
        )
        parser.add_argument(
            "--report", default="", help="also write the load run's figures as JSON to this file"
        )
        parser.add_argument(
            "--retry-errors",
            type=int,
            default=0,
            help="after a server error (or no answer) a participant waits a moment and reloads "
            "the page, as the error page asks, sending the answer again only if the page still "
            "asks for it; at most this many times in a row (0..100; default 0: the first error "
            "stops the participant). Reloads are counted; errors they got past do not fail the "
            "run",
        )
        parser.add_argument(
            "--time-limit",
            type=float,
            default=900.0,
            help="stop a concurrent run after this many seconds (1..3600)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        n, share = opts["n"], opts["ineligible"]
        if not 1 <= n <= 10_000:
            self.fail(f"--n must be 1..10000, got {n}")
        if not 0.0 <= share <= 1.0:
            self.fail(f"--ineligible must be a share in 0..1, got {share}")
        if not 0.0 <= opts["screened_out"] <= 1.0 - share:
            self.fail(
                f"--screened-out must be a share in 0..{1 - share:g}, got {opts['screened_out']}"
            )
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
        if (
            opts["concurrency"]
            or opts["think"]
            or opts["verify"]
            or opts["report"]
            or opts["retry_errors"]
        ):
            if opts["kind"]:
                self.fail("--kind walks participants one after another: leave out --concurrency, "
                          "--think, --verify, --report and --retry-errors")  # fmt: skip
            self._load(study, opts)
            return
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
        n_screener = round(n * opts["screened_out"])
        # a progress bar on a terminal only, none with --no-progress
        bars = self.bars(opts)
        for i in tqdm(range(n), desc="participants", unit="p", disable=bars, file=sys.stderr):
            bot = BOT_KINDS.get(opts["kind"], Bot)(
                study,
                seed=opts["seed"] * 100_003 + i,
                eligible=i >= n_ineligible,
                end_at_screener=n_ineligible <= i < n_ineligible + n_screener,
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

    def _load(self, study: Study, opts: dict[str, Any]) -> None:
        """Concurrent participants over HTTP (`simulation.load`), then the check."""
        from studyapp.simulation.load import MAX_RETRY_ERRORS, parse_think, run_load
        from studyapp.simulation.load_verify import verify_load

        n, concurrency = opts["n"], opts["concurrency"] or 1
        if not opts["url"]:
            self.fail(
                "--concurrency, --think, --verify, --report and --retry-errors need --url "
                "(a running server)"
            )
        if opts["ineligible"] or opts["screened_out"]:
            self.fail(
                "--ineligible and --screened-out cannot be combined with a concurrent run "
                "(all complete)"
            )
        if not 1 <= concurrency <= n:
            self.fail(f"--concurrency must be 1..--n ({n}), got {concurrency}")
        if not 1 <= opts["time_limit"] <= 3600:
            self.fail(f"--time-limit must be 1..3600 seconds, got {opts['time_limit']}")
        try:
            think = parse_think(opts["think"] or "0")
        except ValueError as exc:
            self.fail(f"--think: {exc}")
        if opts["ramp"] is not None and not 0 <= opts["ramp"] <= 600:
            self.fail(f"--ramp must be 0..600 seconds, got {opts['ramp']}")
        if not 0 <= opts["retry_errors"] <= MAX_RETRY_ERRORS:
            self.fail(f"--retry-errors must be 0..{MAX_RETRY_ERRORS}, got {opts['retry_errors']}")
        since = timezone.now()
        report = run_load(
            study,
            opts["url"],
            n=n,
            concurrency=concurrency,
            think=think,
            seed=opts["seed"],
            wait_timeout=opts["timeout"],
            time_limit_s=opts["time_limit"],
            ramp_s=opts["ramp"],
            retry_errors=opts["retry_errors"],
        )
        # the run may have outlived this process's database connection (a server restart)
        db.connections.close_all()
        figures = report.as_dict()
        self.stdout.write(format_load(figures))
        ok = True
        if opts["verify"]:
            verification = verify_load(study, report.results, since=since, require_complete=False)
            figures["verification"] = {"ok": verification.ok, "problems": verification.problems}
            self.stdout.write(verification.summary())
            ok = verification.ok
        if opts["report"]:
            Path(opts["report"]).write_text(json.dumps(figures, indent=1))
        # with --retry-errors an error the participant got past by reloading is reported, not
        # fatal; a participant who stopped is
        if not ok or report.failed or (report.errors and not opts["retry_errors"]):
            raise SystemExit(1)


def format_load(figures: dict[str, Any]) -> str:
    """The run's figures as a small text table (milliseconds per page type)."""
    lines = [
        f"{figures['participants']} participants, {figures['concurrency']} at a time, think "
        f"{figures['think_s'][0]:g}-{figures['think_s'][1]:g} s: {figures['requests']} requests "
        f"in {figures['wall_s']:.1f} s ({figures['requests_per_s']:.1f}/s), "
        f"{figures['errors']} errors{_retried(figures)}, "
        f"{figures['failed_participants']} participants stopped; "
        f"load generator CPU {figures['generator_cpu_s']:.1f} s "
        f"({100 * figures['generator_cpu_share']:.0f}% of a core)",
        f"{'page type':<20}{'n':>7}{'p50':>9}{'p95':>9}{'p99':>9}{'max':>9}",
    ]
    for label, row in figures["latency_ms"].items():
        lines.append(
            f"{label:<20}{int(row['n']):>7}{row['p50']:>9.1f}{row['p95']:>9.1f}"
            f"{row['p99']:>9.1f}{row['max']:>9.1f}"
        )
    lines += [f"  stopped: {line}" for line in figures["first_failures"]]
    lines += [f"  error page x{n}: {text}" for text, n in figures.get("error_pages", {}).items()]
    return "\n".join(lines)


def _retried(figures: dict[str, Any]) -> str:
    if not figures.get("retry_errors"):
        return ""
    return f" ({figures['retries']} reloads after an error)"
