"""The export's part (registered with `studyapp.export.extensions`): `integrity.csv`, the
per-participant summary; `integrity_pages.csv`, each recorded page's counts; and
`integrity_fields.csv`, each recorded field's — each column with its codebook entry. The
files are in a study's export once it has the signals switched on or a record, so an export
of any other study is unchanged."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.contract import Entry
from studyapp.export.extensions import ExtraTables
from studyapp.integrity import summary
from studyapp.models import IntegrityRecord, Study

SUMMARY = "integrity.csv"
PAGES = "integrity_pages.csv"
FIELDS = "integrity_fields.csv"
_FLAG = "0=no; 1=yes; empty: not judged"
_ID = Entry("integer", ">=1", "pseudonymous participant id, as in participants.csv")

SUMMARY_ENTRIES: dict[str, Entry] = {
    "participant": _ID,
    "state": Entry("string", "", "the participant's state (as in participants.csv)"),
    "seconds": Entry(
        "float", ">=0", "seconds on the answer pages, each from its first showing to its "
        "submit (the server's clock), summed"
    ),
    "median_seconds": Entry(
        "float", ">=0", "the study's median seconds on the same pages (each page's median "
        "over the completed participants, summed over this participant's pages; empty: "
        f"fewer than {summary.MIN_FOR_MEDIAN} completed)"
    ),
    "speed_ratio": Entry("float", ">=0", "seconds / median_seconds (completed participants)"),
    "speeding": Entry(
        "integer", _FLAG, f"signal: speed_ratio under {summary.SPEED_RATIO} (completed "
        "participants, once the median is judged)"
    ),
    "recorded_pages": Entry(
        "integer", ">=0", "rating and question pages whose signals the page script sent "
        "(0: switched off, no JavaScript, or none of those pages reached)"
    ),
    "pastes": Entry("integer", ">=0", "paste events into the pages' fields (empty: none recorded)"),
    "pasted_chars": Entry("integer", ">=0", "characters pasted (the text itself is never kept)"),
    "pasted": Entry("integer", _FLAG, "signal: text was pasted into at least one field"),
    "tab_hidden": Entry("integer", ">=0", "times the page's tab was hidden (tab switch, minimised)"),
    "window_blurs": Entry("integer", ">=0", "times the window lost the focus"),
    "away_seconds": Entry("float", ">=0", "seconds the page was hidden or without the focus"),
    "typing_seconds": Entry(
        "float", ">=0", "seconds spent typing (gaps under 2 s between key inputs, summed)"
    ),
    "first_answer_seconds": Entry(
        "float", ">=0", "median over the answered fields of the seconds from the page's "
        "showing to the field's first answer (per-item latency)"
    ),
    "free_texts": Entry(
        "integer", ">=0", f"distinct free texts of at least {summary.MIN_TEXT_CHARS} "
        "characters (normalised: no case, punctuation or repeated spaces)"
    ),
    "shared_texts": Entry("integer", ">=0", "of those, texts another participant also gave"),
    "identical_text": Entry("integer", _FLAG, "signal: shared_texts above 0"),
    "ratings": Entry("integer", ">=0", "1-7 ratings given (acceptance and action per plan)"),
    "rating_sd": Entry("float", ">=0", "standard deviation of those ratings (population)"),
    "straightlining": Entry(
        "integer", _FLAG, f"signal: every rating the same, over at least "
        f"{summary.STRAIGHT_MIN_PLANS} rated plans"
    ),
    "signals": Entry(
        "string", "; ".join(summary.SIGNALS) + " (';'-joined; empty: none)",
        "the signals raised: for the researcher to look at, never an automatic rejection"
    ),
}  # fmt: skip
assert tuple(SUMMARY_ENTRIES) == summary.COLUMNS

PAGE_ENTRIES: dict[str, Entry] = {
    "participant": _ID,
    "page": Entry("string", "evaluation-<position>; questions_pre; questions_post", "the page"),
    "submissions": Entry("integer", ">=1", "submits of the page (a form sent back adds one)"),
    "page_seconds": Entry("float", ">=0", "seconds the page was open, by the browser's clock"),
    "tab_hidden": Entry("integer", ">=0", "times the page's tab was hidden"),
    "window_blurs": Entry("integer", ">=0", "times the window lost the focus"),
    "away_seconds": Entry("float", ">=0", "seconds hidden or without the focus"),
    "pastes": Entry("integer", ">=0", "paste events into the page's fields"),
    "pasted_chars": Entry("integer", ">=0", "characters pasted"),
    "typing_seconds": Entry("float", ">=0", "seconds spent typing in the page's fields"),
}
FIELD_ENTRIES: dict[str, Entry] = {
    "participant": _ID,
    "page": PAGE_ENTRIES["page"],
    "field": Entry(
        "string", "", "the form field: acceptance, acceptance_why, action, action_why, "
        "impossible_<item>, q_<item> (a matrix row or ranking option: q_<item>.<part>)"
    ),
    "pastes": Entry("integer", ">=0", "paste events into the field"),
    "pasted_chars": Entry("integer", ">=0", "characters pasted into the field"),
    "inputs": Entry("integer", ">=0", "input events (keys typed, choices made)"),
    "typing_seconds": Entry("float", ">=0", "seconds spent typing in the field"),
    "first_seconds": Entry(
        "float", ">=0", "seconds from the page's first showing to the field's first answer "
        "(empty: never answered)"
    ),
}  # fmt: skip


def _records(study: Study, with_test: bool) -> Any:
    qs = IntegrityRecord.objects.filter(participant__study=study)
    if not with_test:
        qs = qs.filter(participant__is_test=False)
    return qs.order_by("participant_id", "pk")


def _s(ms: int | None) -> float | None:
    return None if ms is None else round(ms / 1000, 3)


def pages_frame(study: Study, *, with_test: bool = False) -> pd.DataFrame:
    rows = [
        {
            "participant": r.participant_id,
            "page": r.page,
            "submissions": r.submissions,
            "page_seconds": _s(r.page_ms),
            "tab_hidden": r.hidden,
            "window_blurs": r.blurs,
            "away_seconds": _s(r.away_ms),
            "pastes": r.pastes,
            "pasted_chars": r.pasted_chars,
            "typing_seconds": _s(r.typing_ms),
        }
        for r in _records(study, with_test)
    ]
    return pd.DataFrame(rows, columns=list(PAGE_ENTRIES))


def fields_frame(study: Study, *, with_test: bool = False) -> pd.DataFrame:
    rows = [
        {
            "participant": r.participant_id,
            "page": r.page,
            "field": name,
            "pastes": f.get("pastes", 0),
            "pasted_chars": f.get("pasted_chars", 0),
            "inputs": f.get("inputs", 0),
            "typing_seconds": _s(f.get("typing_ms", 0)),
            "first_seconds": _s(f.get("first_ms")),
        }
        for r in _records(study, with_test)
        for name, f in sorted((r.fields or {}).items())
    ]
    return pd.DataFrame(rows, columns=list(FIELD_ENTRIES))


def integrity_tables(study: Study, *, with_test: bool = False) -> ExtraTables:
    """The export's integrity files, once the study has the signals on or a record."""
    if not study.integrity_signals and not _records(study, True).exists():
        return ExtraTables()
    return ExtraTables(
        files={
            SUMMARY: summary.summary_frame(study, with_test=with_test),
            PAGES: pages_frame(study, with_test=with_test),
            FIELDS: fields_frame(study, with_test=with_test),
        },
        file_entries={SUMMARY: SUMMARY_ENTRIES, PAGES: PAGE_ENTRIES, FIELDS: FIELD_ENTRIES},
    )
