"""A study's deletion receipts as a table: the console's CSV download and the export's
`deletion_receipts.csv` (registered with `studyapp.export.extensions`, with a codebook entry
per column). The file is in a study's export once it has a retention rule or a receipt, so
an export of a study that never deleted anything is unchanged.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from analysis.contract import Entry
from studyapp.definition.retention import retention_of
from studyapp.export.extensions import ExtraTables
from studyapp.models import DeletionReceipt, Study

RECEIPTS = "deletion_receipts.csv"
_ISO = "ISO 8601 UTC"
#: the file's columns and their codebook entries
ENTRIES: dict[str, Entry] = {
    "receipt": Entry("integer", ">=1", "the receipt's number"),
    "at": Entry("datetime", _ISO, "when the deletion was made"),
    "as_of": Entry(
        "datetime", _ISO, "the time the rule was measured at (the run's clock; `at` otherwise)"
    ),
    "data_class": Entry(
        "string",
        "; ".join(DeletionReceipt.DataClass.values),
        "what was deleted: a data class of docs/data-protection.md, or export files on disk",
    ),
    "rule": Entry("string", "", "the retention rule or the request, in words"),
    "by": Entry(
        "string",
        "schedule; withdrawal; researcher",
        "who or what deleted: the retention schedule, the participant's withdrawal, a "
        "researcher (on request or from the console)",
    ),
    "by_user": Entry("string", "", "the researcher's user name (empty otherwise)"),
    "participants": Entry("integer", ">=0", "participants whose data of the class went"),
    "rows": Entry("integer", ">=0", "rows deleted plus rows blanked (export files: files)"),
    "detail": Entry("string", "JSON object", "rows per table or field (files per outcome)"),
    "participant_ids": Entry(
        "string", "ids ';'-joined", "the participants' ids, as in participants.csv"
    ),
    "files": Entry("string", "paths ';'-joined", "the export files deleted"),
}


def _iso(value: Any) -> str:
    return value.isoformat() if value is not None else ""


def receipts_frame(study: Study) -> pd.DataFrame:
    """The study's receipts, oldest first, one row each."""
    rows = [
        {
            "receipt": r.pk,
            "at": _iso(r.at),
            "as_of": _iso(r.as_of),
            "data_class": r.data_class,
            "rule": r.rule,
            "by": r.by,
            "by_user": r.by_user.get_username() if r.by_user else "",
            "participants": r.participants,
            "rows": r.rows,
            "detail": json.dumps(r.detail, sort_keys=True),
            "participant_ids": ";".join(str(n) for n in r.participant_numbers),
            "files": ";".join(r.files),
        }
        for r in DeletionReceipt.objects.filter(study=study)
        .select_related("by_user")
        .order_by("at", "pk")
    ]
    return pd.DataFrame(rows, columns=list(ENTRIES))


def receipt_tables(study: Study, *, with_test: bool = False) -> ExtraTables:
    """The export's part: `deletion_receipts.csv`, once the study has a rule or a receipt."""
    has_rules = bool(retention_of(study.retention).rules())
    if not has_rules and not DeletionReceipt.objects.filter(study=study).exists():
        return ExtraTables()
    return ExtraTables(files={RECEIPTS: receipts_frame(study)}, file_entries={RECEIPTS: ENTRIES})
