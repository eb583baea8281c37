"""The coding's part of the study export (registered with `studyapp.export.extensions`).

* evaluations.csv: `code_<name>` per code of the codebook, the final code: 1 when a resolved
  answer of the evaluation has the code, 0 when its answers are resolved without it, empty
  when none of its answers is resolved. A covariate for the GAMM formula.
* `codings.csv` (`unit, coder, codes`): every coder's codes, the table
  `recourse-analysis coding agreement --codings` reads.
* `final_codes.csv` (`unit, code, decided_by, decided_at, note`): the resolved codes, the
  table `coding quotes --codings` reads.
* `coding_codebook.csv` (`code, definition, example`): the codes, `--codebook` of both.
* `coding_history.csv`, `final_code_history.csv`, `code_history.csv`: every change of a
  coding (coded, edited, undone, a code deleted), every resolution (a replaced one too) and
  every change of the codebook; `coding_memos.csv`: the memos on answers.

While some assigned coder has not finished, the codings, final codes, their histories and
the memos are left out (the files hold their header only, the `code_` columns are empty): a
download must not unblind a coder.
"""

from __future__ import annotations

import pandas as pd

from analysis.contract import Entry
from studyapp.coding.models import Code
from studyapp.coding.selectors import (
    all_finished,
    codings_frame,
    final_codes,
    final_codes_frame,
    history_frames,
)
from studyapp.export.extensions import ExtraTables
from studyapp.models import Study

CODINGS = "codings.csv"
FINAL = "final_codes.csv"
CODES = "coding_codebook.csv"
HISTORY = {"coding_history": "coding_history.csv", "final_code_history": "final_code_history.csv",
           "code_history": "code_history.csv", "memos": "coding_memos.csv"}  # fmt: skip
#: the files a blind coder must not see before every coder has finished
HIDDEN_UNTIL_FINISHED = (CODINGS, FINAL, HISTORY["coding_history"],
                         HISTORY["final_code_history"], HISTORY["memos"])  # fmt: skip
PREFIX = "code_"

_UNIT = Entry(
    "string",
    "<recourse id>:<field> or p<participant id>:<field>",
    "the coded answer: recourse id (as in evaluations.csv) and free-text field "
    "(acceptance_why, action_why, q_<item> of the plan page), or participant id (as "
    "in participants.csv) and a questionnaire text item q_<item>",
)
_CODES = Entry(
    "string",
    "codes of coding_codebook.csv, ';'-joined",
    "the codes after this change (empty: none; a code since deleted is named in code_history.csv)",
)
_WHEN = Entry("datetime", "ISO 8601 UTC", "when")
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
    HISTORY["coding_history"]: {
        "unit": _UNIT,
        "coder": Entry("string", "", "the coder's console user name"),
        "action": Entry("string", "coded; edited; undone; code_deleted",
                        "what changed: a first coding, an edit, an undo (the coding taken "
                        "back), or a code taken out because it was deleted from the codebook"),
        "codes": _CODES,
        "at": _WHEN,
    },
    HISTORY["final_code_history"]: {
        "unit": _UNIT,
        "codes": _CODES,
        "decided_by": Entry("string", "", "the researcher who resolved the answer"),
        "decided_at": _WHEN,
        "note": Entry("string", "", "the resolver's note"),
    },
    HISTORY["code_history"]: {
        "code": Entry("string", "1-40 of a-z 0-9 _", "the code's name"),
        "action": Entry("string", "added; edited; deleted", "what happened to the entry"),
        "definition": Entry("string", "", "the definition after the change"),
        "example": Entry("string", "", "the example after the change"),
        "by": Entry("string", "", "the researcher who changed the codebook"),
        "at": _WHEN,
    },
    HISTORY["memos"]: {
        "unit": _UNIT,
        "author": Entry("string", "", "the memo's author (console user name)"),
        "text": Entry("string", "", "the memo"),
        "written_at": _WHEN,
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
        if f.evaluation is not None:  # a questionnaire answer's final code: final_codes.csv
            resolved.setdefault(f.evaluation.recourse_id, set()).update(
                c.name for c in f.codes.all()
            )
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
    files = {
        CODINGS: codings,
        FINAL: final,
        CODES: pd.DataFrame(book, columns=["code", "definition", "example"]),
        **{HISTORY[k]: v for k, v in history_frames(study, with_test=with_test).items()},
    }
    if not visible:
        files = {name: f.iloc[0:0] if name in HIDDEN_UNTIL_FINISHED else f
                 for name, f in files.items()}  # fmt: skip
    return ExtraTables(evaluation_entries=entries, evaluation_cells=cells, files=files,
                       file_entries=FILE_ENTRIES)  # fmt: skip


CODING_TABLES = coding_tables
