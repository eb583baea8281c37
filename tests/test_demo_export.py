"""The demo export shipped in examples/data/demo_export/ (the README's analysis commands, the
notebooks and the R hand-off read it) holds the demo study's participants and their
evaluations. The bots that make it are test participants, so `make_demo_export.sh` must
export them with `--with-test`: without it the export came out empty."""

from __future__ import annotations

import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "data"
EXPORT = DATA / "demo_export"


def _rows(name: str) -> list[dict[str, str]]:
    with open(EXPORT / name, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_demo_export_holds_participants_and_evaluations() -> None:
    participants = _rows("participants.csv")
    evaluations = _rows("evaluations.csv")
    assert participants, "no participants: regenerate with examples/data/make_demo_export.sh"
    assert evaluations, "no evaluations: regenerate with examples/data/make_demo_export.sh"
    completed = {p["participant"] for p in participants if p["outcome"] == "completed"}
    approved = {p["participant"] for p in participants if p["outcome"] == "approved"}
    # the demo model approves some bots' profiles: they end with the approved outcome and
    # rate nothing; the rest complete (more than half of the 60, enough for the notebooks)
    assert completed | approved == {p["participant"] for p in participants}
    assert len(completed) > 30
    assert {e["participant"] for e in evaluations} == completed
    assert {e["acceptance"] for e in evaluations} - {""}, "evaluations without ratings"


def test_the_script_exports_the_bots() -> None:
    script = (DATA / "make_demo_export.sh").read_text(encoding="utf-8")
    (export,) = [line for line in script.splitlines() if re.search(r"\bexport_study\b", line)]
    assert "--with-test" in export.split(), export
