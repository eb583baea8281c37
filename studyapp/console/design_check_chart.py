"""The design check's chart as SVG coordinates (no chart library): one bar per condition and
method part, its own-plan rate, with the study's threshold as a line, and the approval rate
beside its own threshold. The template draws them from these numbers."""

from __future__ import annotations

from typing import Any

WIDTH, BAR_H, GAP, LABEL_W, PAD = 600, 16, 6, 230, 8


def design_check_chart(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """Bars (label, value, x/y/width) of a finished check's `check_summary`; None without
    figures."""
    if not summary or not summary.get("result"):
        return None
    result = summary["result"]
    thresholds = summary["thresholds"]
    rows: list[tuple[str, float, float, bool]] = []
    approval = result.get("approval_rate")
    if approval is not None:
        limit = thresholds["approval_rate_above"]
        rows.append(("approval rate (lower is better)", approval, limit, approval > limit))
    for cond in result.get("conditions", []):
        name = cond["condition"] or "study design"
        for part in cond["parts"]:
            rate = part.get("own_plan_rate")
            if part.get("method") and rate is not None:
                limit = thresholds["own_plan_rate_below"]
                rows.append((f"{name}: {part['label']} own plans", rate, limit, rate < limit))
    span = WIDTH - LABEL_W - 2 * PAD
    bars = []
    for i, (label, value, limit, warn) in enumerate(rows):
        y = PAD + i * (BAR_H + GAP)
        bars.append(
            {
                "label": label,
                "text": f"{value:.0%}",
                "y": y,
                "text_y": y + BAR_H - 4,
                "x": LABEL_W,
                "w": f"{max(span * value, 1):.1f}",
                "limit_x": f"{LABEL_W + span * limit:.1f}",
                "value_x": f"{LABEL_W + span * value + 4:.1f}",
                "warn": warn,
            }
        )
    return {
        "width": WIDTH,
        "height": 2 * PAD + len(rows) * (BAR_H + GAP),
        "label_w": LABEL_W,
        "bars": bars,
    }
