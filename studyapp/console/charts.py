"""The monitor's two charts as SVG coordinates (no chart library, nothing fetched from the
internet): starts and completions over time as two lines, recourse latency as a histogram.
The template draws them from these numbers."""

from __future__ import annotations

from typing import Any

WIDTH, HEIGHT, PAD = 560, 160, 16


def _line(values: list[int], top: int) -> str:
    n = max(len(values) - 1, 1)
    return " ".join(
        f"{PAD + i * (WIDTH - 2 * PAD) / n:.1f},{HEIGHT - PAD - v * (HEIGHT - 2 * PAD) / top:.1f}"
        for i, v in enumerate(values)
    )


def monitor_charts(m: dict[str, Any]) -> dict[str, Any]:
    """Coordinates of the timeline and latency charts of `study_monitor`'s figures."""
    out: dict[str, Any] = {"width": WIDTH, "height": HEIGHT}
    buckets = m["timeline"]["buckets"]
    if buckets:
        starts = [b["starts"] for b in buckets]
        done = [b["completions"] for b in buckets]
        top = max(1, *starts, *done)
        out["timeline"] = {
            "starts": _line(starts, top),
            "completions": _line(done, top),
            "top": top,
            "first": buckets[0]["start"],
        }
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
    return out
