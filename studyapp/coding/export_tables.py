"""The coding's part of the study export (registered with `studyapp.export.extensions`).

* evaluations.csv: `code_<name>` per code of the codebook, the final code: 1 when a resolved
  answer of the evaluation has the code, 0 when its answers are resolved without it, empty
  when none of its answers is resolved. A covariate for the GAMM formula.
* `codings.csv` (`unit, coder, codes`): every coder's codes, the table
  `recourse-analysis coding agreement --codings` reads.
* `final_codes.csv` (`unit, code, decided_by, decided_at, note`): the resolved codes, the
  table `coding quotes --codings` reads.
* `coding_codebook.csv` (`code, definition, example`): the codes, `--codebook` of both.

While some assigned coder has not finished, the codings and final codes are left out (the
files hold their header only, the `code_` columns are empty): a download must not unblind
a coder.
"""

from __future__ import annotations

import pandas as pd

from analysis.contract import Entry
from studyapp.coding.models import Code
from studyapp.coding.selectors import all_finished, codings_frame, final_codes, final_codes_frame
from studyapp.export.extensions import ExtraTables
from studyapp.models import Study

CODINGS = "codings.csv"
FINAL = "final_codes.csv"
CODES = "coding_codebook.csv"
PREFIX = "code_"

_UNIT = Entry("string", "<recourse id>:<field>", "the coded answer: recourse id (as in "
              "evaluations.csv) and free-text field (acceptance_why, action_why, q_<item>)")  # fmt: skip
FILE_ENTRIES = {
    CODINGS: {
        "unit": _UNIT,
        "coder": Entry("string", "", "the coder's console user name"),
        "codes": Entry("string", "codes of coding_codebook.csv, ';'-joined",
                       "the codes this coder gave the answer (empty: no code applies)"),
    },
    FINAL: {
        "unit": _UNIT,
        "code": Entry("string", "a code of coding_codebook.csv",
                      "one final code of the answer (one row per code; empty: none applies)"),
        "decided_by": Entry("string", "", "the researcher who resolved the answer"),
        "decided_at": Entry("datetime", "ISO 8601 UTC", "when it was resolved"),
        "note": Entry("string", "", "the resolver's note"),
    },
    CODES: {
        "code": Entry("string", "1-40 of a-z 0-9 _", "the code's name"),
        "definition": Entry("string", "", "what the code means"),
        "example": Entry("string", "", "an example answer"),
    },
}  # fmt: skip


def coding_tables(study: Study, *, with_test: bool = False) -> ExtraTables:
    """The coding's columns and files of one study's export (nothing without a codebook)."""
    codes = list(Code.objects.filter(study=study))
    if not codes:
        return ExtraTables()
    visible = all_finished(study)
    finals = final_codes(study, with_test=with_test) if visible else []
    resolved: dict[int, set[str]] = {}
    for f in finals:
        resolved.setdefault(f.evaluation.recourse_id, set()).update(c.name for c in f.codes.all())
    names = [c.name for c in codes]

    def cells(recourse_id: int) -> dict[str, int | None]:
        given = resolved.get(recourse_id)
        return {PREFIX + n: (None if given is None else int(n in given)) for n in names}

    entries = {
        PREFIX + c.name: Entry(
            "integer",
            "0; 1; empty",
            f"final code {c.name!r} ({c.definition or 'no definition'}): 1 if a resolved "
            "answer of this evaluation has it, 0 if its answers were resolved without it, "
            "empty if none is resolved (final_codes.csv has each answer's)",
        )
        for c in codes
    }
    codings = codings_frame(study, with_test=with_test)
    final = final_codes_frame(study, with_test=with_test)
    book = [{"code": c.name, "definition": c.definition, "example": c.example} for c in codes]
    return ExtraTables(
        evaluation_entries=entries,
        evaluation_cells=cells,
        files={
            CODINGS: codings if visible else codings.iloc[0:0],
            FINAL: final if visible else final.iloc[0:0],
            CODES: pd.DataFrame(book, columns=["code", "definition", "example"]),
        },
        file_entries=FILE_ENTRIES,
    )


CODING_TABLES = coding_tables
