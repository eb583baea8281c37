"""N participants at once through the oTree version of the study's pages
(`benchmarks/otree_app`), with the load generator of `simulate_participants --concurrency`
(`simulation.load.TimedClient`: one kept connection per participant, the same think time
before each submit, each request timed and labelled with its page type), then a check of
oTree's database: every participant the bots made is there once and every rating is
stored as sent. Run in a process of its own by bench_capacity; writes the figures as JSON.

oTree's session-wide link (`/join/<code>`) stands for the study's welcome page and its
redirect to `/InitializeParticipant/<participant>` for the start button, which is where a
participant's think time on the welcome page goes.
"""

from __future__ import annotations

import argparse
import html
import json
import random
import re
import sqlite3
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_INPUT = re.compile(r"<input\b([^>]*)>", re.I)
_TEXTAREA = re.compile(r'<textarea\b[^>]*\bname="([^"]+)"', re.I)
_ATTR = re.compile(r'([a-z_-]+)="([^"]*)"', re.I)
#: the rating fields of a plan page, stored per plan (acceptance_1, action_why_3, ...)
RATINGS = ("acceptance", "acceptance_why", "action", "action_why")


def form_answers(body: str, rng: random.Random) -> dict[str, str]:
    """What a participant sends on an oTree page: its hidden fields as they are, one option
    of each radio group, a whole number in range for a number field, a line of text for a
    text area."""
    out: dict[str, str] = {}
    radios: dict[str, list[str]] = {}
    for tag in _INPUT.findall(body):
        attrs = dict(_ATTR.findall(tag))
        name, kind = attrs.get("name"), attrs.get("type", "text")
        if not name:
            continue
        if kind == "radio":
            radios.setdefault(name, []).append(html.unescape(attrs.get("value", "")))
        elif kind == "number":
            out[name] = str(rng.randint(int(attrs.get("min", 0)), int(attrs.get("max", 99))))
        elif kind == "hidden":
            out[name] = html.unescape(attrs.get("value", ""))
    out.update({name: rng.choice(values) for name, values in radios.items()})
    out.update({name: "simulated answer" for name in _TEXTAREA.findall(body)})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True, help="oTree's address, http://127.0.0.1:PORT")
    p.add_argument("--join", required=True, help="the session's anonymous code (/join/CODE)")
    p.add_argument("--db", required=True, help="oTree's SQLite file, checked afterwards")
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--think", default="1,3")
    p.add_argument("--ramp", type=float, default=None)
    p.add_argument("--time-limit", type=float, default=600.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--report", required=True)
    a = p.parse_args(argv)

    import django

    django.setup()
    from studyapp.management.commands.simulate_participants import format_load
    from studyapp.simulation.load import LoadReport, parse_think

    think = parse_think(a.think)
    report = walk_all(a, think)
    figures = report.as_dict()
    print(format_load(figures))
    figures["verification"] = check_database(Path(a.db), a.join, report.results)
    print(figures["verification"]["summary"])
    Path(a.report).write_text(json.dumps(figures, indent=1))
    assert isinstance(report, LoadReport)
    ok = figures["verification"]["ok"] and not report.failed and not report.errors
    return 0 if ok else 1


def walk_all(a: argparse.Namespace, think: tuple[float, float]):  # noqa: ANN201 - LoadReport
    from studyapp.simulation.load import LoadReport, LoadResult, Sample

    samples: list[Sample] = []
    results = [LoadResult(index=i) for i in range(a.n)]
    ramp = think[1] if a.ramp is None else a.ramp
    deadline = time.monotonic() + a.time_limit
    started = threading.Event()
    clients = [_client(a.url, samples, think, random.Random(a.seed * 7919 + i), deadline)
               for i in range(a.n)]  # fmt: skip

    def one(i: int) -> None:
        started.wait()
        if ramp > 0:
            time.sleep(ramp * i / a.n)
        try:
            _walk(clients[i], a.join, results[i], random.Random(a.seed * 100_003 + i))
        except Exception as exc:  # noqa: BLE001 - one participant's failure is reported
            results[i].error = f"{type(exc).__name__}: {exc}"
        finally:
            clients[i].close()

    cpu0, t0 = time.process_time(), time.monotonic()
    with ThreadPoolExecutor(max_workers=a.n, thread_name_prefix="participant") as pool:
        futures = [pool.submit(one, i) for i in range(a.n)]
        started.set()
        for f in futures:
            f.result()
    return LoadReport(
        results=results, samples=samples, wall_s=time.monotonic() - t0,
        cpu_s=time.process_time() - cpu0, concurrency=a.n, think=think,
        connections=sum(c.connections_opened for c in clients),
        resent=sum(c.requests_resent for c in clients),
    )  # fmt: skip


def _client(url: str, samples: list, think: tuple[float, float], rng: random.Random,
            deadline: float):  # noqa: ANN202 - a TimedClient  # fmt: skip
    from studyapp.simulation.load import TimedClient

    class OTreeClient(TimedClient):
        """Labels oTree's join link and its redirect as the study's welcome and start."""

        def get(self, url: str):  # noqa: ANN202
            for prefix, label in (("/join/", "welcome"), ("/InitializeParticipant/", "start")):
                if url.startswith(prefix):
                    return self._timed(url, None, lambda r, label=label: label)
            return super().get(url)

    return OTreeClient(url, samples=samples, think=think, rng=rng, deadline=deadline)


def _walk(client, join: str, result, rng: random.Random) -> None:  # noqa: ANN001
    from studyapp.simulation.bots import BotError

    r = client.get(f"/join/{join}")
    if r.status_code != 302:
        raise BotError(f"/join/: HTTP {r.status_code}")
    lo, hi = client.think
    if hi > 0:
        time.sleep(client.rng.uniform(lo, hi))  # reading the welcome page
    url = r["Location"]
    result.code = url.rstrip("/").rsplit("/", 1)[-1]
    for _ in range(30):
        r = client.get(url)
        if r.status_code in (302, 303, 307):
            url = r["Location"]
            continue
        if r.status_code != 200:
            raise BotError(f"GET {url}: HTTP {r.status_code}")
        body = r.content.decode()
        if 'id="completion-code"' in body:
            result.outcome = "completed"
            return
        data = form_answers(body, rng)
        page = data.get("page", "")
        r = client.post(url, data)
        if r.status_code not in (302, 303):
            raise BotError(f"POST {url} ({page}): HTTP {r.status_code}")
        result.sent[page] = data
        result.evaluations += page.startswith("evaluation-")
        url = r["Location"]
    raise BotError("the flow did not end after 30 pages")


def check_database(db: Path, join: str, results: list) -> dict[str, Any]:
    """Every bot's participant is in oTree's database once, at the end page, with every
    rating as sent; no participant of the session beyond the bots' started."""
    problems: list[str] = []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    rows = {r["code"]: r for r in conn.execute(
        "SELECT pa.code, pa._index_in_pages, pa._max_page_index, pl.* FROM otree_participant pa"
        " JOIN recourse_pages_player pl ON pl.participant_id = pa.id"
        " JOIN otree_session s ON s.id = pa.session_id"
        " WHERE pa._index_in_pages > 0 AND s._anonymous_code = ?", (join,)
    )}  # fmt: skip
    sent = matching = 0
    for res in results:
        if not res.code:
            problems.append(f"participant #{res.index} never got a participant link: {res.error}")
            continue
        row = rows.get(res.code)
        if row is None:
            problems.append(f"{res.code}: not in the database")
            continue
        if res.error:
            problems.append(f"{res.code}: stopped: {res.error}")
        elif row["_index_in_pages"] != row["_max_page_index"]:
            problems.append(f"{res.code}: the bot saw the end, the database says page "
                            f"{row['_index_in_pages']}")  # fmt: skip
        for page, data in res.sent.items():
            if not page.startswith("evaluation-"):
                continue
            sent += 1
            k = page.rsplit("-", 1)[1]
            diffs = [f for f in RATINGS if str(row[f"{f}_{k}"]) != data.get(f"{f}_{k}")]
            if diffs:
                problems.append(f"{res.code}: {page} stored differently: {diffs}")
            else:
                matching += 1
    started = len(rows)
    codes = sum(1 for r in results if r.code)
    if started != codes:
        problems.append(f"{started} participants started, the bots were {codes}")
    conn.close()
    head = f"{matching}/{sent} ratings stored as sent, {started} participants started"
    summary = f"oTree verification {'OK' if not problems else 'FAILED'}: {head}"
    if problems:
        summary += "; " + "; ".join(problems[:5])
    return {"ok": not problems, "problems": problems, "summary": summary}


if __name__ == "__main__":
    sys.exit(main())
