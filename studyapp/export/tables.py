"""The export's two tables, built row by row so that the in-memory frames, the folder and the
streamed ZIP cannot disagree: each writer draws the same rows from the same `Tables`, only
in different amounts at a time.

Rows come from `.values()` queries rather than model instances: only the exported fields are
fetched and only the exported JSON fields decoded (5x faster than select_related rows). Which
fields those are is the contract's (`analysis.contract_sources.SOURCES`: column -> fields), so a
column and the fields it is written from are named once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd
from django.db.models import Count, QuerySet

from analysis import contract as c
from analysis import contract_sources as cs
from recourse_engine import FeatureSchema
from studyapp.definition import engine_objects, screening
from studyapp.definition.question_types import (
    QUESTION_TYPES,
    export_cells,
    export_columns,
    export_kind,
)
from studyapp.definition.questions import Question
from studyapp.export.extensions import ExtraTables, extra_tables
from studyapp.models import Evaluation, PageVisit, Participant, Study
from studyapp.participation import questionnaire


def _iso(value: Any) -> str:
    return value.isoformat() if value is not None else ""


def _codes(schema: FeatureSchema, values: dict[str, Any] | None, prefix: str) -> dict[str, Any]:
    values = values or {}
    return {f"{prefix}{k}": values.get(k) for k in schema.keys}


def _screening_value(value: Any) -> Any:
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    return value


def _recourse_value(value: Any) -> Any:
    """A recourse field as a CSV cell (method parameters as a JSON object)."""
    return json.dumps(value, sort_keys=True) if isinstance(value, dict) else value


def _answer_cell(value: Any) -> Any:
    """A researcher item's answer as a CSV cell (multiple choice: codes ';'-joined)."""
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    return value


def evaluation_values(study: Study, *, with_test: bool = False) -> QuerySet[Evaluation]:
    """The fields evaluations.csv is made of (`contract_sources.SOURCES`), one dict per evaluation
    (test participants' only when asked for)."""
    qs = Evaluation.objects.filter(participant__study=study)
    if not with_test:
        qs = qs.filter(participant__is_test=False)
    return qs.order_by("participant_id", "recourse__position").values(
        *cs.source_fields(c.EVALUATIONS)
    )


def participant_values(study: Study, *, with_test: bool = False) -> QuerySet[Participant]:
    """One dict per participant with the exported fields and its evaluation count."""
    qs = Participant.objects.filter(study=study)
    if not with_test:
        qs = qs.filter(is_test=False)
    return (
        qs.order_by("pk")
        .annotate(n_evaluations=Count("evaluations"))
        .values(*cs.source_fields(c.PARTICIPANTS))
    )


def page_visit_values(study: Study, *, with_test: bool = False) -> QuerySet[PageVisit]:
    """One dict per page visit (paradata)."""
    qs = PageVisit.objects.filter(participant__study=study)
    if not with_test:
        qs = qs.filter(participant__is_test=False)
    return qs.order_by("participant_id", "entered_at", "pk").values(
        *cs.source_fields(c.PAGE_VISITS)
    )


def _visit_seconds(entered: Any, exited: Any) -> float | None:
    return round((exited - entered).total_seconds(), 3) if entered and exited else None


def _flag(value: Any) -> int:
    return int(bool(value))


#: a fixed column whose cell is not its one field as stored: how it is made from the
#: fields `contract_sources.SOURCES` names for it (datetimes and ';'-joined lists need no entry)
CELLS: dict[str, Callable[..., Any]] = {
    "any_impossible": _flag,
    "seconds_on_page": lambda seconds: None if seconds is None else round(seconds, 3),
    "method_params": _recourse_value,
    "panel": lambda panel: json.dumps(panel or {}, sort_keys=True),
    "outcome": c.outcome,
    "decision": lambda decision: decision or "",
    "language": lambda language, default: language or default,
    "recourses_seconds": _visit_seconds,
    "flagged": _flag,
    "is_test": _flag,
    "seconds": _visit_seconds,
    "timeout": _flag,
}


def _cell(column: str, *values: Any) -> Any:
    make = CELLS.get(column)
    if make is not None:
        return make(*values)
    (value,) = values
    col = c.COLUMNS[column]
    if col.type == "datetime":
        return _iso(value)
    return ";".join(value or []) if col.joined else value


def _fixed_cells(
    file: str, row: dict[str, Any], columns: Iterable[str], **made: Any
) -> dict[str, Any]:
    """The file's fixed `columns` of one row, each made from its fields (`contract_sources.SOURCES`);
    `made`: cells the study decides, given as they are."""
    sources = cs.SOURCES[file]
    return {
        col: made[col] if col in made else _cell(col, *(row[f] for f in sources[col]))
        for col in columns
        if col in sources or col in made
    }


@dataclass
class Tables:
    """One study's export tables with one choice of what to include: their columns
    (`analysis.contract`), their rows, and the frames the rows make."""

    study: Study
    schema: FeatureSchema
    questions: list[dict[str, Any]]
    with_text: bool = False
    with_panel_ids: bool = False
    #: test participants (previews, bots) too
    with_test: bool = False
    #: what installed apps add (the qualitative codes: `studyapp.export.extensions`)
    extras: list[ExtraTables] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        study: Study,
        *,
        with_text: bool = False,
        with_panel_ids: bool = False,
        with_test: bool = False,
    ) -> Tables:
        return cls(
            study,
            engine_objects.schema_of(study.schema),
            screening.questions(study.schema),
            with_text=with_text,
            with_panel_ids=with_panel_ids,
            with_test=with_test,
            extras=extra_tables(study, with_test=with_test),
        )

    def items(self, page: str) -> list[Question]:
        """The researcher-defined items of a page that are exported (free text only with
        the free-text answers)."""
        items = questionnaire.items_for(self.study, page)
        return [q for q in items if self.with_text or not QUESTION_TYPES[q.type].free_text]

    @property
    def item_keys(self) -> dict[str, Question]:
        """Column key (after ``q_``) -> its item: an item's key, or one per part of an item
        answered in parts (`question_types.export_columns`)."""
        return {
            column: q
            for page in ("pre", "post", "evaluation")
            for q in self.items(page)
            for column, _label in export_columns(q)
        }

    def _column_keys(self, page: str) -> list[str]:
        return [column for q in self.items(page) for column, _label in export_columns(q)]

    @property
    def evaluation_columns(self) -> list[str]:
        keys = self._column_keys("evaluation")
        added = [col for extra in self.extras for col in extra.evaluation_entries]
        return [
            *c.evaluation_columns(self.schema.keys, with_text=self.with_text, questions=keys),
            *added,
        ]

    @property
    def participant_columns(self) -> list[str]:
        keys = [q["key"] for q in self.questions]
        pages = {page: self._column_keys(page) for page in ("pre", "post")}
        return c.participant_columns(
            self.schema.keys,
            keys,
            with_panel_ids=self.with_panel_ids,
            questions=pages,
            shown=self.has_own_items,
        )

    @cached_property
    def has_own_items(self) -> bool:
        """The study has items of its own (then `questions_shown` says which were shown)."""
        return any(questionnaire.items_for(self.study, p) for p in ("pre", "evaluation", "post"))

    @cached_property
    def _plan_items_shown(self) -> dict[int, list[str]]:
        """Participant -> the plan pages' items shown to them (in any plan), in their defined
        order: what each plan page showed is stored with its evaluation."""
        keys = [q.key for q in questionnaire.items_for(self.study, "evaluation")]
        seen: dict[int, set[str]] = {}
        if keys:
            rows = Evaluation.objects.filter(participant__study=self.study)
            for pid, order in rows.values_list("participant_id", "item_order"):
                seen.setdefault(pid, set()).update(order or [])
        return {pid: [k for k in keys if k in shown] for pid, shown in seen.items()}

    @property
    def page_visit_columns(self) -> list[str]:
        return list(c.PAGE_VISIT_COLUMNS)

    @property
    def columns(self) -> dict[str, list[str]]:
        """Each CSV file's columns, as the codebook lists them."""
        return {
            f"{c.EVALUATIONS}.csv": self.evaluation_columns,
            f"{c.PARTICIPANTS}.csv": self.participant_columns,
            f"{c.PAGE_VISITS}.csv": self.page_visit_columns,
            **{name: list(frame.columns) for x in self.extras for name, frame in x.files.items()},
        }

    # --- rows -----------------------------------------------------------------------------
    def evaluation_rows(self, chunk_size: int | None = None) -> Iterator[dict[str, Any]]:
        values = evaluation_values(self.study, with_test=self.with_test)
        for ev in values.iterator(chunk_size) if chunk_size else values:
            yield self._evaluation_row(ev)

    def participant_rows(self, chunk_size: int | None = None) -> Iterator[dict[str, Any]]:
        values = participant_values(self.study, with_test=self.with_test)
        for p in values.iterator(chunk_size) if chunk_size else values:
            yield self._participant_row(p)

    def page_visit_rows(self, chunk_size: int | None = None) -> Iterator[dict[str, Any]]:
        values = page_visit_values(self.study, with_test=self.with_test)
        for v in values.iterator(chunk_size) if chunk_size else values:
            yield _fixed_cells(c.PAGE_VISITS, v, c.PAGE_VISIT_COLUMNS, study=self.study.slug)

    def _answers(self, answers: dict[str, Any] | None, page: str) -> dict[str, Any]:
        given = answers or {}
        return {
            f"{c.QUESTION_PREFIX}{column}": _answer_cell(value)
            for q in self.items(page)
            for column, value in export_cells(q, given.get(q.key)).items()
        }

    def _evaluation_row(self, ev: dict[str, Any]) -> dict[str, Any]:
        fixed = [col for col in c.EVALUATION_COLUMNS if self.with_text or col not in c.TEXT_COLUMNS]
        family = cs.FAMILY_SOURCES[c.EVALUATIONS]
        return {
            **_fixed_cells(c.EVALUATIONS, ev, fixed, study=self.study.slug),
            **_codes(self.schema, ev[family[c.PROFILE_PREFIX]], c.PROFILE_PREFIX),
            **_codes(self.schema, ev[family[c.COUNTERFACTUAL_PREFIX]], c.COUNTERFACTUAL_PREFIX),
            **_fixed_cells(c.EVALUATIONS, ev, c.RECOURSE_COLUMNS),
            **(
                {
                    **self._answers(ev[family[c.QUESTION_PREFIX]], "evaluation"),
                    "items_order": ";".join(ev[family["items_order"]] or []),
                }
                if self.items("evaluation")
                else {}
            ),
            **{k: v for x in self.extras for k, v in x.evaluation_cells(ev["recourse_id"]).items()},
        }

    def _participant_row(self, p: dict[str, Any]) -> dict[str, Any]:
        fixed = [col for col in c.PARTICIPANT_COLUMNS
                 if self.with_panel_ids or col not in c.PANEL_COLUMNS]  # fmt: skip
        cut = fixed.index("outcome") + 1
        made = {
            "study": self.study.slug,
            "attention_excluded": int(p["attention_failures"] > self.study.attention_max_failures),
        }
        family = cs.FAMILY_SOURCES[c.PARTICIPANTS]
        answers = p[family[c.SCREENING_PREFIX]] or {}
        return {
            **_fixed_cells(c.PARTICIPANTS, p, fixed[:cut], **made),
            **{
                f"{c.SCREENING_PREFIX}{q['key']}": _screening_value(answers.get(q["key"]))
                for q in self.questions
            },
            **_fixed_cells(c.PARTICIPANTS, p, fixed[cut:], **made),
            **_codes(self.schema, p[family[c.PROFILE_PREFIX]], c.PROFILE_PREFIX),
            **self._questionnaire_cells(p),
        }

    def _questionnaire_cells(self, p: dict[str, Any]) -> dict[str, Any]:
        family = cs.FAMILY_SOURCES[c.PARTICIPANTS]
        out: dict[str, Any] = {}
        for page in ("pre", "post"):
            if self.items(page):
                out.update(self._answers(p[family[c.QUESTION_PREFIX]], page))
                orders = p[family["items_order_"]] or {}
                out[f"items_order_{page}"] = ";".join(orders.get(page, []))
        if self.has_own_items:
            orders = p[family["items_order_"]] or {}
            plans = self._plan_items_shown.get(p["pk"], [])
            shown = [*orders.get("pre", []), *plans, *orders.get("post", [])]
            out["questions_shown"] = ";".join(shown)
        return out

    # --- frames ---------------------------------------------------------------------------
    def evaluation_frame(self, rows: list[dict[str, Any]]) -> pd.DataFrame:
        return self._frame(rows, self.evaluation_columns)

    def participant_frame(self, rows: list[dict[str, Any]]) -> pd.DataFrame:
        return self._frame(rows, self.participant_columns)

    def page_visit_frame(self, rows: list[dict[str, Any]]) -> pd.DataFrame:
        return self._frame(rows, self.page_visit_columns)

    def _frame(self, rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
        frame = pd.DataFrame(rows, columns=columns)
        for col in self._nullable_integers(columns):
            frame[col] = pd.to_numeric(frame[col]).astype("Int64")
        return frame

    def _nullable_integers(self, columns: list[str]) -> list[str]:
        """Integer columns that may have gaps, as nullable integers so that codes stay 2
        (not 2.0) in rows where some values are missing."""
        screened = {
            f"{c.SCREENING_PREFIX}{q['key']}" for q in self.questions if q["type"] != "multi"
        }
        coded = {
            f"{prefix}{it.key}"
            for it in self.schema.items
            if not it.is_numeric
            for prefix in c.ITEM_PREFIXES
        }
        optional = {name for name, col in c.COLUMNS.items() if col.optional}
        answered = {
            f"{c.QUESTION_PREFIX}{key}"
            for key, q in self.item_keys.items()
            if export_kind(q) == "integer"
        }
        added = {
            col
            for x in self.extras
            for col, entry in x.evaluation_entries.items()
            if entry.type == "integer"
        }
        return [col for col in columns if col in optional | screened | coded | answered | added]


def evaluations_frame(study: Study, *, with_text: bool = False) -> pd.DataFrame:
    tables = Tables.of(study, with_text=with_text)
    return tables.evaluation_frame(list(tables.evaluation_rows()))


def page_visits_frame(study: Study, *, with_test: bool = False) -> pd.DataFrame:
    tables = Tables.of(study, with_test=with_test)
    return tables.page_visit_frame(list(tables.page_visit_rows()))


def participants_frame(study: Study, *, with_panel_ids: bool = False) -> pd.DataFrame:
    tables = Tables.of(study, with_panel_ids=with_panel_ids)
    return tables.participant_frame(list(tables.participant_rows()))
