"""The monitor's integrity table: how many participants each signal flags, and the flagged
participants with their signals (reload the page to refresh, as the monitor's lists)."""

from __future__ import annotations

from typing import Any

from studyapp.integrity import summary
from studyapp.models import Study

#: flagged participants listed at most (the export has them all)
LISTED = 50
WORDS = {
    "speeding": f"Speeding (under {summary.SPEED_RATIO:g} × the median time on the same pages)",
    "pasted": "Pasted answers",
    "identical_text": "Free text identical to another participant's",
    "straightlining": "Straight-lining (every rating the same)",
}


def integrity_monitor(study: Study) -> dict[str, Any]:
    """The figures of the monitor's integrity section (none for a study without the signals
    switched on and nothing recorded)."""
    rows = summary.summary_rows(study)
    counts = summary.flagged_counts(rows)
    flagged = [r for r in rows if r["signals"]]
    return {
        "on": bool(study.integrity_signals),
        "participants": len(rows),
        "counts": [(name, WORDS[name], counts[name]) for name in summary.SIGNALS],
        "flagged": flagged[:LISTED],
        "more": max(len(flagged) - LISTED, 0),
    }
