"""The monitor's charts: a time axis labelled in the study's time zone (to the minute, no
ISO microseconds), the page funnel and the per-condition counts, against counts made
directly from the rows."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

from django.utils import timezone

from studyapp.console.charts import monitor_charts, page_funnel
from studyapp.models import PageVisit, Participant
from tests.studyapp.console.conftest import client_for, researcher
from tests.studyapp.console.test_monitor import populated  # noqa: F401 (fixture)


def _figures(starts: list[str]) -> dict[str, Any]:
    buckets = [{"start": s, "starts": i, "completions": i // 2} for i, s in enumerate(starts)]
    return {"timeline": {"bucket": "hour", "buckets": buckets}, "latency_histogram": [],
            "by_condition": {"a": {"completed": 2, "screening": 1}, "": {"completed": 4}}}  # fmt: skip


def test_time_axis_is_labelled_in_the_studys_zone_to_the_minute() -> None:
    first = datetime(2026, 11, 28, 23, 30, 12, 345678, tzinfo=ZoneInfo("UTC"))
    starts = [(first + timedelta(hours=i)).isoformat() for i in range(9)]
    charts = monitor_charts(_figures(starts), SimpleNamespace(time_zone="Asia/Tokyo"))
    t = charts["timeline"]
    labels = [tick["label"] for tick in t["x_ticks"]]
    tokyo = [
        (first + timedelta(hours=i)).astimezone(ZoneInfo("Asia/Tokyo")) for i in (0, 2, 4, 6, 8)
    ]
    # one day in Tokyo: the date on the first tick only
    assert labels == [tokyo[0].strftime("%d %b %H:%M")] + [d.strftime("%H:%M") for d in tokyo[1:]]
    assert labels[0] == "29 Nov 08:30"  # 23:30 UTC is the next morning in Tokyo
    assert not any(re.search(r"\d{2}:\d{2}:\d{2}|\.\d{3}|T\d", lbl) for lbl in labels)
    assert "Asia/Tokyo" in t["x_title"] and t["y_title"] == "participants per hour"
    assert [tick["label"] for tick in t["y_ticks"]] == [0, 4, 8]
    counts = {b["label"]: b["n"] for b in charts["conditions"]["bars"]}
    assert counts == {"a": 3, "(none)": 4}


def test_monitor_page_draws_the_funnel_and_conditions(populated: Any) -> None:  # noqa: F811
    study = populated
    study.time_zone = "Europe/Berlin"
    study.save(update_fields=["time_zone"])
    now = timezone.now()
    people = list(Participant.objects.filter(study=study).order_by("pk"))
    for i, person in enumerate(people):
        pages = ["consent", "screening", "scenario", "profile"][: 1 + i % 4]
        for j, page in enumerate(pages):
            PageVisit.objects.create(participant=person, page=page,
                                     entered_at=now - timedelta(minutes=10 - j))  # fmt: skip
    funnel = dict(page_funnel(study))
    for page in ("consent", "screening", "scenario", "profile"):
        assert funnel[page] == PageVisit.objects.filter(
            participant__study=study, page=page).values("participant").distinct().count()  # fmt: skip
    assert [p for p, _ in page_funnel(study)][:2] == ["consent", "screening"]
    client = client_for(researcher("watcher", superuser=True))
    html = client.get(f"/console/studies/{study.slug}/monitor/").content.decode()
    assert 'id="funnel-chart"' in html and 'id="conditions-chart"' in html
    assert "(Europe/Berlin)" in html
    ticks = re.findall(r'class="x-tick"[^>]*>([^<]+)<', html)
    assert ticks and not any("T" in t or "." in t for t in ticks)
    per_condition = {c: Participant.objects.filter(study=study, condition=c).count() for c in "ab"}
    for cond, n in per_condition.items():
        assert re.search(rf">{cond}</text><rect[^>]*><title>{cond}: {n}</title>", html)
