"""The codebook: every exported column with its type, allowed values and meaning, so that an
export can be analysed without the platform.

The wording is the contract's (`analysis.contract`); what is left here are the facts of one
study it is filled with: slug, design, item keys, the rating scale and questions, the
consent version and the states a participant can be in.
"""

from __future__ import annotations

import pandas as pd

from analysis import contract as c
from studyapp.definition import logic
from studyapp.definition.question_types import QUESTION_TYPES, export_columns
from studyapp.definition.questions import Question
from studyapp.export.tables import Tables
from studyapp.models import Participant, Study
from studyapp.participation import survey_logic
from studyapp.participation.language import study_languages


class ExportError(ValueError):
    """An export that cannot be written as asked."""


def study_facts(tables: Tables) -> dict[str, str]:
    """What the contract's templates leave to the study (`{slug}`, `{design}`, ...)."""
    study = tables.study
    ev_texts = study.schema.get("evaluation", {})
    lo, hi = c.RATING_SCALE
    return {
        "slug": study.slug,
        "design": str(study.design),
        "keys": "; ".join(tables.schema.keys),
        "scale": c.labels(ev_texts.get("scale", [str(i) for i in range(lo, hi + 1)])),
        "acceptance_question": str(ev_texts.get("acceptance_question", "acceptance")),
        "action_question": str(ev_texts.get("action_question", "action")),
        "states": "; ".join(Participant.State.values),
        "consent_version": str(study.consent_version),
        "generations": "; ".join(v for v in Participant.Generation.values if v),
        "attention_max_failures": str(study.attention_max_failures),
        "languages": "; ".join(study_languages(study)),
    }


def question_entry(q: Question, column: str | None = None) -> c.Entry:
    """A `q_<column>` column: its type's export kind and allowed values (codes with their
    English labels, or the bounds), and the question as the study asks it in English (an
    item answered in parts: the question and the part, e.g. a matrix's statement)."""
    kind, allowed = QUESTION_TYPES[q.type].codebook(q)
    label = dict(export_columns(q)).get(column or q.key, q.label("en"))
    return c.question_entry(
        kind, allowed, label, page=q.page, item_type=q.type, required=q.required
    )


def _with_logic(entry: c.Entry, q: Question, tables: Tables) -> c.Entry:
    """An item's entry with when it is shown and when it ends the study (survey logic)."""
    if not (q.show_if.is_set() or q.end_if.is_set()):
        return entry
    table = survey_logic.sources_of(tables.study, "en")
    words = logic.rules_in_words(q, table)
    hidden = " (empty when not shown)" if q.show_if.is_set() else ""
    return entry._replace(description=f"{entry.description}; {'; '.join(words)}{hidden}")


def codebook_frame(
    study: Study, columns: dict[str, list[str]], tables: Tables | None = None
) -> pd.DataFrame:
    """One row per column of each exported file: name, type, allowed values, description."""
    tables = tables or Tables.of(study)
    facts = study_facts(tables)
    questions = {f"{c.SCREENING_PREFIX}{q['key']}": q for q in tables.questions}
    items = {f"{c.QUESTION_PREFIX}{key}": q for key, q in tables.item_keys.items()}
    added = {(f"{c.EVALUATIONS}.csv", col): e for x in tables.extras
             for col, e in x.evaluation_entries.items()}  # fmt: skip
    added |= {(f, col): e for x in tables.extras for f, es in x.file_entries.items()
              for col, e in es.items()}  # fmt: skip
    rows = []
    for file, cols in columns.items():
        for col in cols:
            if (file, col) in added:
                entry = added[file, col]
            elif col in c.COLUMNS:
                entry = c.column(file, col).entry(facts)
            elif col in questions:
                entry = c.screening_entry(questions[col])
            elif col in items:
                entry = question_entry(items[col], col[len(c.QUESTION_PREFIX) :])
                entry = _with_logic(entry, items[col], tables)
            elif col.startswith(c.ITEM_PREFIXES):
                prefix = next(p for p in c.ITEM_PREFIXES if col.startswith(p))
                entry = c.item_entry(prefix, tables.schema.item(col[len(prefix) :]))
            else:
                raise ExportError(f"codebook: no description for column {col!r} of {file}")
            rows.append({"file": file, "column": col, **entry._asdict()})
    return pd.DataFrame(rows, columns=list(c.CODEBOOK_COLUMNS))


def codebook_for(tables: Tables) -> pd.DataFrame:
    """The codebook of the files `tables` makes."""
    return codebook_frame(tables.study, tables.columns, tables)
