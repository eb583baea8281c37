"""An export folder as `analysis.study.selection.load_study_export` reads it, written from
two frames, so the report tests build their studies in memory and share the writing."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def write_export(folder: Path, evaluations: pd.DataFrame, participants: pd.DataFrame) -> Path:
    """Write `folder`/evaluations.csv and participants.csv; returns the folder."""
    folder.mkdir(parents=True)
    evaluations.to_csv(folder / "evaluations.csv", index=False)
    participants.to_csv(folder / "participants.csv", index=False)
    return folder
