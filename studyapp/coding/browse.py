"""The answers page's rows, paged and filtered in the database: only the page shown is read,
with its recourse (what the viewer may see of it), the codes, memos and history the viewer
may see (their own while blind; everyone's and the final code afterwards).

The answers are listed field by field (the study's coded fields in order), each field's in
export order (participant, plan position). A filter on the recourse or the rating keeps only
plan-page answers (a questionnaire answer has neither)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Exists, OuterRef, Q, QuerySet

from recourse_engine import FeatureSchema
from studyapp.coding.models import CoderAssignment, Coding, CodingChange, FinalCode, Memo
from studyapp.coding.selectors import all_finished, hides_plan, hides_recourse, is_blind
from studyapp.coding.units import (
    EVALUATION,
    Answer,
    TextField,
    answer_text,
    answered,
    chosen_fields,
    evaluations_of,
    participants_of,
    rating_field,
)
from studyapp.definition import engine_objects
from studyapp.models import Evaluation, Study

#: filters on the recourse or the rating (plan-page answers only)
RECOURSE_FILTERS = ("strategy", "method", "sparsity_min", "sparsity_max", "proximity_min",
                    "proximity_max", "impossible", "rating_min", "rating_max")  # fmt: skip


@dataclass
class Row:
    answer: Answer
    changes: list[tuple[str, str, str, bool]]  # item, profile, counterfactual, impossible
    impossible: list[str]
    mine: list[str] | None  # None: not coded by the viewer
    others: dict[str, list[str]] = field(default_factory=dict)  # coder -> codes (not blind)
    final: list[str] | None = None
    disagree: bool = False
    memos: list[tuple[str, str]] = field(default_factory=list)  # author, text
    history: list[tuple[str, str, str, str]] = field(default_factory=list)  # who, what, codes, when


@dataclass(frozen=True)
class View:
    """What the viewer may see beside an answer."""

    recourse: bool  # method, condition, strategy
    plan: bool  # changed items, sparsity, proximity


def view_of(user: Any, study: Study) -> View:
    return View(not hides_recourse(user, study), not hides_plan(user, study))


def _label(schema: FeatureSchema, key: str, value: Any) -> str:
    try:
        return schema.item(key).label_of(float(value))
    except (KeyError, ValueError, TypeError, IndexError):
        return str(value)


def _changes(schema: FeatureSchema, ev: Any) -> list[tuple[str, str, str, bool]]:
    profile = getattr(getattr(ev.participant, "profile", None), "values", None) or {}
    cf = ev.recourse.values or {}
    impossible = set(ev.impossible or [])
    out = []
    for key in ev.recourse.changed or []:
        try:
            label = schema.item(key).label
        except KeyError:
            label = key
        was, to = _label(schema, key, profile.get(key)), _label(schema, key, cf.get(key))
        out.append((label, was, to, key in impossible))
    return out


def can_code(user: Any, study: Study) -> bool:
    return bool(
        user.has_perm("studyapp_coding.add_coding")
        and CoderAssignment.objects.filter(
            study=study, coder_id=user.pk, finished_at__isnull=True
        ).exists()
    )


def _evaluations(study: Study, data: dict[str, Any], f: TextField) -> QuerySet:
    qs = evaluations_of(study).filter(answered(f.name))
    exact = {"strategy": "recourse__strategy", "method": "recourse__method",
             "condition": "participant__condition"}  # fmt: skip
    for name, lookup in exact.items():
        if data.get(name):
            qs = qs.filter(**{lookup: data[name]})
    rating = rating_field(f.name)
    bounds = {"sparsity_min": "recourse__sparsity__gte", "sparsity_max": "recourse__sparsity__lte",
              "proximity_min": "recourse__proximity__gte",
              "proximity_max": "recourse__proximity__lte", "rating_min": f"{rating}__gte",
              "rating_max": f"{rating}__lte"}  # fmt: skip
    for name, lookup in bounds.items():
        if data.get(name) is not None:
            qs = qs.filter(**{lookup: data[name]})
    if data.get("impossible") == "yes":
        qs = qs.exclude(impossible=[])
    elif data.get("impossible") == "no":
        qs = qs.filter(impossible=[])
    return qs


def _participants(study: Study, data: dict[str, Any], f: TextField) -> QuerySet | None:
    if any(data.get(k) not in (None, "") for k in RECOURSE_FILTERS):
        return None
    qs = participants_of(study).filter(answered(f.name))
    if data.get("condition"):
        qs = qs.filter(condition=data["condition"])
    return qs


def _unit_rows(model: Any, f: TextField, on_evaluation: bool, **more: Any) -> Any:
    link = {"evaluation": OuterRef("pk")} if on_evaluation else {
        "participant": OuterRef("pk"), "evaluation__isnull": True}  # fmt: skip
    return model.objects.filter(field=f.name, **link, **more)


def _disagreeing(study: Study) -> set[tuple[Any, int, str]]:
    """(evaluation id, participant id, field) of the answers whose coders gave different codes."""
    names: dict[int, set[str]] = {}
    through = Coding.codes.through.objects.filter(coding__study=study)
    for coding_id, name in through.values_list("coding_id", "code__name"):
        names.setdefault(coding_id, set()).add(name)
    seen: dict[tuple[Any, int, str], set[frozenset[str]]] = {}
    rows = Coding.objects.filter(study=study).values_list("pk", "evaluation_id", "participant_id",
                                                          "field")  # fmt: skip
    for pk, ev, p, f in rows:
        seen.setdefault((ev, p, f), set()).add(frozenset(names.get(pk, ())))
    return {k for k, v in seen.items() if len(v) > 1}


def _show(qs: QuerySet, study: Study, user: Any, f: TextField, show: str) -> QuerySet:
    on_ev = f.level == EVALUATION
    if show == "uncoded":
        qs = qs.filter(~Exists(_unit_rows(Coding, f, on_ev, coder_id=user.pk)))
    elif show in ("unresolved", "coded", "unresolved_coded"):
        if show != "coded":
            qs = qs.filter(~Exists(_unit_rows(FinalCode, f, on_ev)))
        if show != "unresolved":
            qs = qs.filter(Exists(_unit_rows(Coding, f, on_ev)))
    elif show == "disagreements":
        if not all_finished(study):
            return qs.none()
        keys = [k for k in _disagreeing(study) if k[2] == f.name]
        pks = [ev if on_ev else p for ev, p, _ in keys if (ev is not None) == on_ev]
        qs = qs.filter(pk__in=pks)
    return qs


def _rows(qs: QuerySet, start: int, stop: int) -> list[Any]:
    """Rows start..stop of an ordered query: their keys first (an index walk, no joined
    columns), then those rows with what is shown beside them."""
    keys = list(qs.values_list("pk", flat=True)[start:stop])
    by_key = qs.model.objects.filter(pk__in=keys).select_related(*_RELATED.get(qs.model, ()))
    found = {row.pk: row for row in by_key}
    return [found[k] for k in keys if k in found]


_RELATED = {Evaluation: ("recourse", "participant", "participant__profile")}


class Units:
    """The matching answers as one sequence the paginator can count and slice; each
    field's query reads only the rows of the slice asked for."""

    def __init__(self, segments: list[tuple[TextField, QuerySet]]) -> None:
        self.segments = [(f, qs, qs.count()) for f, qs in segments]

    def count(self) -> int:
        return sum(n for _, _, n in self.segments)

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, where: slice) -> list[Answer]:
        start, stop = where.start or 0, where.stop
        out: list[Answer] = []
        for f, qs, n in self.segments:
            if stop is not None and stop <= 0:
                break
            if start < n:
                for holder in _rows(qs, start, n if stop is None else min(stop, n)):
                    if f.level == EVALUATION:
                        out.append(Answer(holder.participant, holder, f.name,
                                          answer_text(holder, f.name)))  # fmt: skip
                    else:
                        out.append(Answer(holder, None, f.name, answer_text(holder, f.name)))
            start, stop = max(0, start - n), None if stop is None else stop - n
        return out


def units(study: Study, user: Any, data: dict[str, Any]) -> Units:
    """The answers matching `data` (a valid `FilterForm`'s cleaned data)."""
    fields = [f for f in chosen_fields(study) if not data.get("field") or f.name == data["field"]]
    show = data.get("show") or "all"
    segments = []
    for f in fields:
        qs = (
            _evaluations(study, data, f) if f.level == EVALUATION else _participants(study, data, f)
        )
        if qs is not None:
            segments.append((f, _show(qs, study, user, f, show)))
    return Units(segments)


def _unit_filter(answers: list[Answer]) -> Q:
    evs = [a.evaluation.pk for a in answers if a.evaluation is not None]
    people = [a.participant.pk for a in answers if a.evaluation is None]
    return Q(evaluation_id__in=evs) | Q(participant_id__in=people, evaluation__isnull=True)


def rows_of(study: Study, user: Any, answers: list[Answer]) -> list[Row]:
    """The rows of these answers with what the viewer may see of their codes and memos."""
    if not answers:
        return []
    blind = is_blind(user, study)
    where = _unit_filter(answers)
    mine_only = {"coder_id": user.pk} if blind else {}
    codings: dict[Any, dict[str, list[str]]] = {}
    for c in Coding.objects.filter(where, study=study, **mine_only).select_related(
        "coder").prefetch_related("codes"):  # fmt: skip
        key = (c.evaluation_id, c.participant_id, c.field)
        codings.setdefault(key, {})[c.coder.get_username()] = sorted(x.name for x in c.codes.all())
    finals = {} if blind else {
        (f.evaluation_id, f.participant_id, f.field): sorted(c.name for c in f.codes.all())
        for f in FinalCode.objects.filter(where, study=study).prefetch_related("codes")
    }  # fmt: skip
    unit_names = [a.unit for a in answers]
    memos: dict[str, list[tuple[str, str]]] = {}
    mine_memo = {"author_id": user.pk} if blind else {}
    for m in Memo.objects.filter(study=study, unit__in=unit_names, **mine_memo).select_related(
        "author"):  # fmt: skip
        memos.setdefault(m.unit, []).append((m.author.get_username(), m.text))
    history: dict[str, list[tuple[str, str, str, str]]] = {}
    for h in CodingChange.objects.filter(study=study, unit__in=unit_names, **mine_only
                                         ).select_related("coder"):  # fmt: skip
        history.setdefault(h.unit, []).append((h.coder.get_username(), h.action, h.codes,
                                               h.at.strftime("%Y-%m-%d %H:%M:%S UTC")))  # fmt: skip
    finished = all_finished(study)
    schema = engine_objects.schema_of(study.schema)
    me = user.get_username()
    out = []
    for a in answers:
        given = codings.get(a.key, {})
        ev = a.evaluation
        out.append(Row(
            a,
            _changes(schema, ev) if ev is not None else [],
            list(ev.impossible or []) if ev is not None else [],
            given.get(me),
            {} if blind else {k: v for k, v in given.items() if k != me},
            finals.get(a.key),
            finished and len({tuple(v) for v in given.values()}) > 1,
            memos.get(a.unit, []),
            history.get(a.unit, []),
        ))  # fmt: skip
    return out


def page_of(study: Study, user: Any, data: dict[str, Any], number: Any, per_page: int) -> Page:
    """One page of the matching answers; its `object_list` is the page's rows."""
    page = Paginator(units(study, user, data), per_page).get_page(number)
    page.object_list = rows_of(study, user, list(page.object_list))
    return page
