"""An export with every outcome, made from the demo comparison study's export
(examples/data/demo_export, the platform's own): its participants as real ones, plus
participants who ended at every other outcome (declined consent, screened out, quota full,
failed attention, withdrew at each stage, expired, still in progress, no admissible recourse)
and test participants, each row as the platform writes one for that end."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

DEMO = Path(__file__).resolve().parents[3] / "examples" / "data" / "demo_export"

#: (state, outcome, consented, decided, is_test) of each added participant
ADDED = [
    ("declined", "declined_consent", False, False, 0),
    ("declined", "declined_consent", False, False, 0),
    ("screened_out", "screened_out", True, False, 0),
    ("screened_out", "screened_out", True, False, 0),
    ("screened_out", "screened_out", True, False, 0),
    ("quota_full", "quota_full", True, False, 0),
    ("failed_attention", "failed_attention", True, True, 0),
    ("withdrawn", "withdrew", False, False, 0),
    ("withdrawn", "withdrew", True, False, 0),
    ("withdrawn", "withdrew", True, True, 0),
    ("withdrawn", "withdrew", True, True, 0),
    ("expired", "expired", True, True, 0),
    ("evaluating", "incomplete", True, True, 0),
    ("consent", "incomplete", False, False, 0),
    ("no_recourse", "no_recourse", True, True, 0),
    ("completed", "completed", True, True, 1),
    ("declined", "declined_consent", False, False, 1),
]


def every_outcome_export(target: Path) -> Path:
    """The export folder at `target` (created)."""
    shutil.copytree(DEMO, target)
    pa = pd.read_csv(target / "participants.csv", dtype=str, keep_default_na=False)
    pa["is_test"] = "0"
    template = pa.iloc[0].copy()
    rows = []
    for i, (state, outcome, consented, decided, test) in enumerate(ADDED):
        row = template.copy()
        row["participant"] = str(9000 + i)
        row["state"], row["outcome"], row["is_test"] = state, outcome, str(test)
        row["n_evaluations"] = "0"
        row["generation"] = "empty" if state == "no_recourse" else ""
        if not consented:
            row["consented_at"] = ""
            row["consent_version"] = ""
        if not decided:
            row["decision"] = ""
            for col in [c for c in pa.columns if c.startswith("x_")]:
                row[col] = ""
        else:
            row["decision"] = "rejected"
        if state in ("evaluating", "consent"):
            row["finished_at"] = ""
        rows.append(row)
    pa = pd.concat([pa, pd.DataFrame(rows)], ignore_index=True)
    pa.to_csv(target / "participants.csv", index=False)
    return target
