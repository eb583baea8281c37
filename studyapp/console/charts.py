"""The monitor's charts as SVG coordinates (no chart library, nothing fetched from the
internet): starts and completions over time with a labelled time axis in the study's time
zone (the researcher's; `Study.time_zone`), recourse latency as a histogram, dropout by page
as a funnel, and participants per condition. The template draws them from these numbers."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.db.models import Count

WIDTH, HEIGHT, PAD = 560, 160, 16
#: room for the axis labels: left of the plot (counts) and below it (times)
LEFT, BOTTOM = 40, 34
TICKS = 5


def zone_of(study: Any) -> ZoneInfo:
    try:
        return ZoneInfo(getattr(study, "time_zone", "") or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def time_label(iso: str, zone: ZoneInfo, with_date: bool = True) -> str:
    """`iso` in `zone` to the minute, e.g. "28 Nov 13:05" (no seconds, no microseconds)."""
    t = datetime.fromisoformat(iso).astimezone(zone)
    return t.strftime("%d %b %H:%M" if with_date else "%H:%M")


def _x(i: int, n: int) -> float:
    return LEFT + i * (WIDTH - LEFT - PAD) / max(n - 1, 1)


def _y(v: float, top: float) -> float:
    return HEIGHT - BOTTOM - v * (HEIGHT - BOTTOM - PAD) / top


def _line(values: list[int], top: int) -> str:
    return " ".join(f"{_x(i, len(values)):.1f},{_y(v, top):.1f}" for i, v in enumerate(values))


def _timeline(buckets: list[dict[str, Any]], bucket: str, zone: ZoneInfo) -> dict[str, Any]:
    starts = [b["starts"] for b in buckets]
    done = [b["completions"] for b in buckets]
    top = max(1, *starts, *done)
    n = len(buckets)
    picks = sorted({round(i * (n - 1) / (TICKS - 1)) for i in range(TICKS)}) if n > 1 else [0]
    days = {datetime.fromisoformat(b["start"]).astimezone(zone).date() for b in buckets}
    x_ticks = [{"x": f"{_x(i, n):.1f}", "label": time_label(buckets[i]["start"], zone, len(days) > 1 or i == 0)}
               for i in picks]  # fmt: skip
    y_ticks = [{"y": f"{_y(v, top):.1f}", "label": v} for v in sorted({0, top // 2, top})]
    return {
        "starts": _line(starts, top), "completions": _line(done, top), "top": top,
        "x_ticks": x_ticks, "y_ticks": y_ticks, "zone": str(zone.key),
        "x_title": f"start of each {bucket or 'bucket'} ({zone.key})",
        "y_title": f"participants per {bucket or 'bucket'}",
        "axis_y": HEIGHT - BOTTOM, "left": LEFT, "right": WIDTH - PAD,
    }  # fmt: skip


def _bars(items: list[tuple[str, int]], reached: int | None = None) -> dict[str, Any]:
    """Horizontal bars, one per (label, n); `reached`: the first bar's n, for shares."""
    top = max([1, *(n for _, n in items)])
    row, label_w = 20, 170
    width = WIDTH - label_w - 60
    bars = []
    for i, (label, n) in enumerate(items):
        share = f" ({100 * n / reached:.0f} %)" if reached else ""
        bars.append({"y": i * row + 4, "ty": i * row + 16, "w": f"{max(n * width / top, 1):.1f}",
                     "label": label, "n": n, "text": f"{n}{share}",
                     "tx": f"{label_w + max(n * width / top, 1) + 4:.1f}"})  # fmt: skip
    return {"bars": bars, "height": max(len(items), 1) * row + 8, "x": label_w}


def page_funnel(study: Any) -> list[tuple[str, int]]:
    """Participants (not test ones) who reached each page, in the study's page order; the
    drop from one page to the next is the dropout on it."""
    from studyapp.models import PageVisit
    from studyapp.participation.flow import page_rank

    rows = (
        PageVisit.objects.filter(participant__study=study, participant__is_test=False)
        .values("page").annotate(n=Count("participant", distinct=True))
    )  # fmt: skip
    counts = {r["page"]: r["n"] for r in rows}
    return sorted(counts.items(), key=lambda kv: (*page_rank(study, kv[0]), kv[0]))


def monitor_charts(m: dict[str, Any], study: Any = None) -> dict[str, Any]:
    """Coordinates of the monitor's charts from `study_monitor`'s figures (`study` for the
    time zone and the page funnel)."""
    zone = zone_of(study)
    out: dict[str, Any] = {"width": WIDTH, "height": HEIGHT, "zone": zone.key}
    buckets = m["timeline"]["buckets"]
    if buckets:
        out["timeline"] = _timeline(buckets, m["timeline"].get("bucket", ""), zone)
    bins = m["latency_histogram"]
    if bins:
        top = max(1, *(b["n"] for b in bins))
        w = (WIDTH - 2 * PAD) / len(bins)
        bars = []
        for i, b in enumerate(bins):
            h = b["n"] * (HEIGHT - 2 * PAD) / top
            label = f"{b['from']:g}-{b['to']:g} s: {b['n']}"
            bars.append({"x": f"{PAD + i * w:.1f}", "y": f"{HEIGHT - PAD - h:.1f}",
                         "w": f"{max(w - 2, 1):.1f}", "h": f"{h:.1f}", "label": label})  # fmt: skip
        out["latency"] = {"bars": bars, "top": top, "max": f"{bins[-1]['to']:g}"}
    if getattr(study, "pk", None) is not None:  # a saved study (not a bare time zone holder)
        funnel = page_funnel(study)
        if funnel:
            out["funnel"] = _bars(funnel, funnel[0][1])
    conditions = [(name or "(none)", sum(cells.values()))
                  for name, cells in m.get("by_condition", {}).items()]  # fmt: skip
    if conditions:
        out["conditions"] = _bars(sorted(conditions))
    return out
