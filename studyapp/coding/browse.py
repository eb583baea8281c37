"""The answers page's rows: each answer with its recourse beside it (strategy, method,
sparsity, proximity, the changed items from the profile to the counterfactual, the items
marked impossible, the rating it explains), filtered as the researcher asks, and the codes
the viewer may see (their own while blind; everyone's and the final code afterwards)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from recourse_engine import FeatureSchema
from studyapp.coding.models import CoderAssignment, Coding, FinalCode
from studyapp.coding.selectors import all_finished, is_blind
from studyapp.coding.units import Answer, answer_fields, answers_of, evaluations_of
from studyapp.definition import engine_objects
from studyapp.models import Study


@dataclass
class Row:
    answer: Answer
    changes: list[tuple[str, str, str, bool]]  # item, profile, counterfactual, impossible
    impossible: list[str]
    mine: list[str] | None  # None: not coded by the viewer
    others: dict[str, list[str]] = field(default_factory=dict)  # coder -> codes (not blind)
    final: list[str] | None = None
    disagree: bool = False


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


def _filtered(study: Study, data: dict[str, Any]) -> Any:
    qs = evaluations_of(study)
    exact = {"strategy": "recourse__strategy", "method": "recourse__method",
             "condition": "participant__condition"}  # fmt: skip
    for name, lookup in exact.items():
        if data.get(name):
            qs = qs.filter(**{lookup: data[name]})
    bounds = {"sparsity_min": "recourse__sparsity__gte", "sparsity_max": "recourse__sparsity__lte",
              "proximity_min": "recourse__proximity__gte",
              "proximity_max": "recourse__proximity__lte"}  # fmt: skip
    for name, lookup in bounds.items():
        if data.get(name) is not None:
            qs = qs.filter(**{lookup: data[name]})
    if data.get("impossible") == "yes":
        qs = qs.exclude(impossible=[])
    elif data.get("impossible") == "no":
        qs = qs.filter(impossible=[])
    return qs


def rows(study: Study, user: Any, data: dict[str, Any]) -> list[Row]:
    """The answers matching `data` (a valid `FilterForm`'s cleaned data), in export order."""
    fields = [data["field"]] if data.get("field") else answer_fields(study)
    answers = answers_of(_filtered(study, data), fields)
    lo, hi = data.get("rating_min"), data.get("rating_max")
    answers = [
        a for a in answers
        if (lo is None or a.rating >= lo) and (hi is None or a.rating <= hi)
    ]  # fmt: skip
    blind = is_blind(user, study)
    codings: dict[tuple[int, str], dict[str, list[str]]] = {}
    qs = Coding.objects.filter(study=study).select_related("coder").prefetch_related("codes")
    for c in qs if not blind else qs.filter(coder_id=user.pk):
        codings.setdefault((c.evaluation_id, c.field), {})[c.coder.get_username()] = sorted(
            code.name for code in c.codes.all()
        )
    finals = {
        (f.evaluation_id, f.field): sorted(c.name for c in f.codes.all())
        for f in FinalCode.objects.filter(study=study).prefetch_related("codes")
    }
    finished = all_finished(study)
    schema = engine_objects.schema_of(study.schema)
    me = user.get_username()
    out = []
    for a in answers:
        key = (a.evaluation.pk, a.field)
        given = codings.get(key, {})
        others = {} if blind else {k: v for k, v in given.items() if k != me}
        disagree = finished and len({tuple(v) for v in given.values()}) > 1
        out.append(
            Row(
                a,
                _changes(schema, a.evaluation),
                list(a.evaluation.impossible or []),
                given.get(me),
                others,
                None if blind else finals.get(key),
                disagree,
            )  # fmt: skip
        )
    show = data.get("show") or "all"
    if show == "uncoded":
        out = [r for r in out if r.mine is None]
    elif show == "disagreements":
        out = [r for r in out if r.disagree]
    elif show == "unresolved":
        out = [r for r in out if r.final is None]
    return out
