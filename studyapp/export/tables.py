"""The export's two tables, built row by row so that the in-memory frames, the folder and the
streamed ZIP cannot disagree: each writer draws the same rows from the same `Tables`, only
in different amounts at a time.

Rows come from `.values()` queries rather than model instances: only the exported fields are
fetched and only the exported JSON fields decoded (5x faster than select_related rows).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from django.db.models import Count, QuerySet

from analysis import contract as c
from recourse_engine import FeatureSchema
from studyapp.export.extensions import ExtraTables, extra_tables
from studyapp.generation import engine
from studyapp.models import Evaluation, PageVisit, Participant, Study
from studyapp.participation import questionnaire, screening
from studyapp.studies.questions import Question


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
    """The fields evaluations.csv is made of, one dict per evaluation (test participants'
    only when asked for)."""
    qs = Evaluation.objects.filter(participant__study=study)
    if not with_test:
        qs = qs.filter(participant__is_test=False)
    return qs.order_by("participant_id", "recourse__position").values(
        "participant_id",
        "participant__condition",
        "participant__gender",
        "participant__age",
        "participant__income_jpy",
        "participant__profile__values",
        "recourse_id",
        "recourse__strategy",
        "recourse__position",
        "recourse__sparsity",
        "recourse__proximity",
        *(f"recourse__{col}" for col in c.RECOURSE_COLUMNS),
        "recourse__changed",
        "recourse__values",
        "impossible",
        "acceptance",
        "action",
        "acceptance_why",
        "action_why",
        "answers",
        "item_order",
        "seconds_on_page",
        "submitted_at",
    )


def participant_values(study: Study, *, with_test: bool = False) -> QuerySet[Participant]:
    """One dict per participant with the exported fields and its evaluation count."""
    qs = Participant.objects.filter(study=study)
    if not with_test:
        qs = qs.filter(is_test=False)
    return (
        qs.order_by("pk")
        .annotate(n_evaluations=Count("evaluations"))
        .values(
            "pk",
            "recruitment_id",
            "panel",
            "condition",
            "state",
            "screening",
            "gender",
            "age",
            "income_band",
            "income_jpy",
            "consent_version",
            "consented_at",
            "profile__decision",
            "profile__values",
            "generation",
            "generation_queued_at",
            "generation_finished_at",
            "n_evaluations",
            "attention_failures",
            "flagged",
            "flag_reason",
            "created_at",
            "finished_at",
            "assignment",
            "is_test",
            "wait_timeouts",
            "submitted_at",
            "released_at",
            "returned_at",
            "answers",
            "item_orders",
        )
    )


def page_visit_values(study: Study, *, with_test: bool = False) -> QuerySet[PageVisit]:
    """One dict per page visit (paradata)."""
    qs = PageVisit.objects.filter(participant__study=study)
    if not with_test:
        qs = qs.filter(participant__is_test=False)
    return qs.order_by("participant_id", "entered_at", "pk").values(
        "participant_id", "page", "entered_at", "exited_at", "views", "timeout_happened"
    )


def _visit_seconds(entered: Any, exited: Any) -> float | None:
    return round((exited - entered).total_seconds(), 3) if entered and exited else None


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
            engine.schema_of(study.schema),
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
        return [q for q in items if self.with_text or q.type != "text"]

    @property
    def item_keys(self) -> dict[str, Question]:
        return {q.key: q for page in ("pre", "post", "evaluation") for q in self.items(page)}

    @property
    def evaluation_columns(self) -> list[str]:
        keys = [q.key for q in self.items("evaluation")]
        added = [col for extra in self.extras for col in extra.evaluation_entries]
        return [
            *c.evaluation_columns(self.schema.keys, with_text=self.with_text, questions=keys),
            *added,
        ]

    @property
    def participant_columns(self) -> list[str]:
        keys = [q["key"] for q in self.questions]
        pages = {page: [q.key for q in self.items(page)] for page in ("pre", "post")}
        return c.participant_columns(
            self.schema.keys, keys, with_panel_ids=self.with_panel_ids, questions=pages
        )

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
            yield {
                "study": self.study.slug,
                "participant": v["participant_id"],
                "page": v["page"],
                "entered_at": _iso(v["entered_at"]),
                "exited_at": _iso(v["exited_at"]),
                "seconds": _visit_seconds(v["entered_at"], v["exited_at"]),
                "views": v["views"],
                "timeout": int(v["timeout_happened"]),
            }

    def _answers(self, answers: dict[str, Any] | None, page: str) -> dict[str, Any]:
        given = answers or {}
        return {
            f"{c.QUESTION_PREFIX}{q.key}": _answer_cell(given.get(q.key)) for q in self.items(page)
        }

    def _evaluation_row(self, ev: dict[str, Any]) -> dict[str, Any]:
        impossible = ev["impossible"] or []
        return {
            "study": self.study.slug,
            "participant": ev["participant_id"],
            "condition": ev["participant__condition"],
            "gender": ev["participant__gender"],
            "age": ev["participant__age"],
            "income": ev["participant__income_jpy"],
            "recourse": ev["recourse_id"],
            "strategy": ev["recourse__strategy"],
            "position": ev["recourse__position"],
            "sparsity": ev["recourse__sparsity"],
            "proximity": ev["recourse__proximity"],
            "changed": ";".join(ev["recourse__changed"] or []),
            "impossible": ";".join(impossible),
            "any_impossible": int(bool(impossible)),
            "acceptance": ev["acceptance"],
            "action": ev["action"],
            **({col: ev[col] for col in c.TEXT_COLUMNS} if self.with_text else {}),
            "seconds_on_page": round(ev["seconds_on_page"], 3),
            "submitted_at": _iso(ev["submitted_at"]),
            **_codes(self.schema, ev["participant__profile__values"], c.PROFILE_PREFIX),
            **_codes(self.schema, ev["recourse__values"], c.COUNTERFACTUAL_PREFIX),
            **{col: _recourse_value(ev[f"recourse__{col}"]) for col in c.RECOURSE_COLUMNS},
            **(
                {
                    **self._answers(ev["answers"], "evaluation"),
                    "items_order": ";".join(ev["item_order"] or []),
                }
                if self.items("evaluation")
                else {}
            ),
            **{k: v for x in self.extras for k, v in x.evaluation_cells(ev["recourse_id"]).items()},
        }

    def _participant_row(self, p: dict[str, Any]) -> dict[str, Any]:
        panel = (
            {
                "recruitment_id": p["recruitment_id"],
                "panel": json.dumps(p["panel"] or {}, sort_keys=True),
            }
            if self.with_panel_ids
            else {}
        )
        answers = p["screening"] or {}
        queued, finished = p["generation_queued_at"], p["generation_finished_at"]
        return {
            "study": self.study.slug,
            "participant": p["pk"],
            **panel,
            "condition": p["condition"],
            "state": p["state"],
            "outcome": c.outcome(p["state"]),
            **{
                f"{c.SCREENING_PREFIX}{q['key']}": _screening_value(answers.get(q["key"]))
                for q in self.questions
            },
            "gender": p["gender"],
            "age": p["age"],
            "income_band": p["income_band"],
            "income": p["income_jpy"],
            "consent_version": p["consent_version"],
            "consented_at": _iso(p["consented_at"]),
            "decision": p["profile__decision"] or "",
            "generation": p["generation"],
            "recourses_seconds": (
                round((finished - queued).total_seconds(), 3) if finished and queued else None
            ),
            "n_evaluations": p["n_evaluations"],
            "attention_failures": p["attention_failures"],
            "attention_excluded": int(p["attention_failures"] > self.study.attention_max_failures),
            "flagged": int(p["flagged"]),
            "flag_reason": p["flag_reason"],
            "started_at": _iso(p["created_at"]),
            "finished_at": _iso(p["finished_at"]),
            "assignment": p["assignment"],
            "is_test": int(p["is_test"]),
            "wait_timeouts": p["wait_timeouts"],
            "submitted_at": _iso(p["submitted_at"]),
            "released_at": _iso(p["released_at"]),
            "returned_at": _iso(p["returned_at"]),
            **_codes(self.schema, p["profile__values"], c.PROFILE_PREFIX),
            **self._questionnaire_cells(p),
        }

    def _questionnaire_cells(self, p: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for page in ("pre", "post"):
            if self.items(page):
                out.update(self._answers(p["answers"], page))
                out[f"items_order_{page}"] = ";".join((p["item_orders"] or {}).get(page, []))
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
            if q.type in ("likert", "single", "attention")
            or (q.type == "number" and q.decimals == 0)
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
