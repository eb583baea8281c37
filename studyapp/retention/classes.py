"""The data classes of a participant, one record each: which of some participants still hold
data of the class, and how it is erased (rows deleted, fields blanked), with the count of
each table or field it changed for the receipt.

Every eraser touches only what is still there, so a second run finds nothing and changes
nothing; the counts are of rows that held data. Participants are given by id and handled
in chunks (SQLite's limit on a statement's parameters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Model, QuerySet

from studyapp.definition.question_types import QUESTION_TYPES
from studyapp.models import (
    Evaluation,
    IntegrityRecord,
    PageVisit,
    Participant,
    Profile,
    Recourse,
    Study,
)

#: participants per statement
CHUNK = 500
#: table or field -> rows it changed
Detail = dict[str, int]


def _chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    for i in range(0, len(ids), CHUNK):
        yield list(ids[i : i + CHUNK])


def _holding(qs: QuerySet, ids: Sequence[int], field: str = "participant_id") -> set[int]:
    """The ids among `ids` that `qs` has a row of (by `field`)."""
    out: set[int] = set()
    for chunk in _chunks(ids):
        out |= set(qs.filter(**{f"{field}__in": chunk}).values_list(field, flat=True))
    return out


def _rows_label(label: str) -> str:
    """'studyapp.PageVisit' -> 'PageVisit rows' (another app's tables keep their app)."""
    app, _, model = label.partition(".")
    return f"{model} rows" if app == "studyapp" else f"{label} rows"


def _delete(qs: QuerySet, ids: Sequence[int], field: str = "participant_id") -> Detail:
    """Delete `qs`'s rows of the participants, with what cascades; rows per table."""
    detail: Detail = {}
    for chunk in _chunks(ids):
        _, per_model = qs.filter(**{f"{field}__in": chunk}).delete()
        for label, n in per_model.items():
            detail[_rows_label(label)] = detail.get(_rows_label(label), 0) + n
    return detail


def _update(qs: QuerySet, ids: Sequence[int], field: str = "participant_id", **values: Any) -> int:
    return sum(qs.filter(**{f"{field}__in": chunk}).update(**values) for chunk in _chunks(ids))


def _changed(model: type[Model], ids: Sequence[int], fields: dict[str, Any], by: str) -> list[int]:
    """Primary keys of `model`'s rows (of the participants, by `by`) whose `fields` are not
    all their empty values; read in Python so JSON fields compare alike on every backend."""
    out = []
    for chunk in _chunks(ids):
        rows = model.objects.filter(**{f"{by}__in": chunk}).values("pk", *fields)
        out += [r["pk"] for r in rows if any(r[f] != empty for f, empty in fields.items())]
    return out


# --- the classes ----------------------------------------------------------------------------
#: the participant's answer fields and their empty values (their profile, plans and ratings
#: are rows of their own)
ANSWER_FIELDS: dict[str, Any] = {
    "screening": {},
    "age": None,
    "gender": "",
    "income_band": "",
    "income_jpy": None,
    "attention": {},
    "attention_failures": 0,
    "answers": {},
    "item_orders": {},
}
DEVICE_FIELDS: dict[str, Any] = {
    "device_class": "",
    "viewport_width": None,
    "viewport_height": None,
}
PANEL_FIELDS: dict[str, Any] = {"recruitment_id": "", "panel": {}}


def _blank(model: type[Model], ids: Sequence[int], fields: dict[str, Any], by: str) -> int:
    pks = _changed(model, ids, fields, by)
    return _update(model.objects.all(), pks, "pk", **fields)


def text_keys(study: Study) -> set[str]:
    """Keys of the study's free-text items (as stored: a list the settings no longer accept
    is read as it is, so its text answers are found too)."""
    keys = set()
    for q in study.questions or []:
        kind = QUESTION_TYPES.get(q.get("type", "")) if isinstance(q, dict) else None
        if kind is not None and kind.free_text and q.get("key"):
            keys.add(str(q["key"]))
    return keys


def _with_text(model: type[Model], ids: Sequence[int], keys: set[str], by: str) -> list[Any]:
    """Rows whose `answers` hold a non-empty answer to a free-text item."""
    if not keys:
        return []
    out = []
    for chunk in _chunks(ids):
        for row in model.objects.filter(**{f"{by}__in": chunk}).only("pk", "answers"):
            if any(row.answers.get(k) not in (None, "") for k in keys if row.answers):
                out.append(row)
    return out


def _drop_text(rows: list[Any], keys: set[str]) -> int:
    for row in rows:
        row.answers = {k: v for k, v in row.answers.items() if k not in keys}
    if rows:
        type(rows[0]).objects.bulk_update(rows, ["answers"], batch_size=CHUNK)
    return len(rows)


_WHY = Evaluation.objects.exclude(acceptance_why="", action_why="")
_TIMED = Evaluation.objects.filter(seconds_on_page__isnull=False)


def _contact_holding(study: Study, ids: Sequence[int]) -> set[int]:
    return _holding(Participant.objects.exclude(contact_email=""), ids, "pk")


def _contact_erase(study: Study, ids: Sequence[int], keep_panel_id: bool) -> Detail:
    n = _update(Participant.objects.exclude(contact_email=""), ids, "pk", contact_email="")
    return {"Participant.contact_email": n}


def _panel_holding(study: Study, ids: Sequence[int]) -> set[int]:
    return set(_changed(Participant, ids, PANEL_FIELDS, "pk"))


def _panel_erase(study: Study, ids: Sequence[int], keep_panel_id: bool) -> Detail:
    if keep_panel_id:  # a withdrawal: the same panel member resumes the withdrawn row
        return {"Participant.panel": _blank(Participant, ids, {"panel": {}}, "pk")}
    return {"Participant.recruitment_id, panel": _blank(Participant, ids, PANEL_FIELDS, "pk")}


def _text_holding(study: Study, ids: Sequence[int]) -> set[int]:
    keys = text_keys(study)
    out = _holding(_WHY, ids)
    out |= {e.participant_id for e in _with_text(Evaluation, ids, keys, "participant_id")}
    return out | {p.pk for p in _with_text(Participant, ids, keys, "pk")}


def _text_erase(study: Study, ids: Sequence[int], keep_panel_id: bool) -> Detail:
    keys = text_keys(study)
    evaluations = _with_text(Evaluation, ids, keys, "participant_id")
    participants = _with_text(Participant, ids, keys, "pk")
    return {
        "Evaluation.acceptance_why, action_why": _update(
            _WHY, ids, acceptance_why="", action_why=""
        ),
        "Evaluation.answers (free-text items)": _drop_text(evaluations, keys),
        "Participant.answers (free-text items)": _drop_text(participants, keys),
    }


def _paradata_holding(study: Study, ids: Sequence[int]) -> set[int]:
    out = _holding(PageVisit.objects.all(), ids) | _holding(_TIMED, ids)
    out |= _holding(IntegrityRecord.objects.all(), ids)  # the integrity signals
    return out | set(_changed(Participant, ids, DEVICE_FIELDS, "pk"))


def _paradata_erase(study: Study, ids: Sequence[int], keep_panel_id: bool) -> Detail:
    return {
        **_delete(PageVisit.objects.all(), ids),
        **_delete(IntegrityRecord.objects.all(), ids),
        "Evaluation.seconds_on_page": _update(_TIMED, ids, seconds_on_page=None),
        "Participant.device_class, viewport_width, viewport_height": _blank(
            Participant, ids, DEVICE_FIELDS, "pk"
        ),
    }


def _answers_holding(study: Study, ids: Sequence[int]) -> set[int]:
    out = _holding(Recourse.objects.all(), ids) | _holding(Profile.objects.all(), ids)
    return out | set(_changed(Participant, ids, ANSWER_FIELDS, "pk"))


def _answers_erase(study: Study, ids: Sequence[int], keep_panel_id: bool) -> Detail:
    detail = _delete(Recourse.objects.all(), ids)  # their evaluations (and codes) go with them
    detail.update(_delete(Profile.objects.all(), ids))
    detail["Participant." + ", ".join(ANSWER_FIELDS)] = _blank(
        Participant, ids, ANSWER_FIELDS, "pk"
    )
    return detail


def _participant_holding(study: Study, ids: Sequence[int]) -> set[int]:
    return _holding(Participant.objects.filter(study=study), ids, "pk")


def _participant_erase(study: Study, ids: Sequence[int], keep_panel_id: bool) -> Detail:
    return _delete(Participant.objects.filter(study=study), ids, "pk")


@dataclass(frozen=True)
class DataClass:
    """One class of a participant's data: `holding` (which of the given participants still
    hold some) and `erase` (erase it of the given participants; rows per table or field)."""

    key: str
    holding: Callable[[Study, Sequence[int]], set[int]]
    erase: Callable[[Study, Sequence[int], bool], Detail]


#: every data class by its key (the retention settings' keys, `definition.retention`)
CLASSES: dict[str, DataClass] = {
    c.key: c
    for c in (
        DataClass("participant", _participant_holding, _participant_erase),
        DataClass("answers", _answers_holding, _answers_erase),
        DataClass("free_text", _text_holding, _text_erase),
        DataClass("paradata", _paradata_holding, _paradata_erase),
        DataClass("panel_id", _panel_holding, _panel_erase),
        DataClass("contact", _contact_holding, _contact_erase),
    )
}
