"""The writes on answers: a coder's coding (save, edit, undo), the final code a researcher
resolves an answer into, and memos. Each change appends its history row
(`history_models`), so an edited or undone coding and a replaced resolution stay on record.
Bad input is refused with a `CodingRefused` naming the problem, and nothing is written.

An answer is named by its unit (`<recourse id>:<field>`, `p<participant id>:<field>`); an
unknown field, a field the study does not code, an unknown or empty answer are refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from studyapp.coding.errors import CodingRefused
from studyapp.coding.models import (
    Code,
    CoderAssignment,
    Coding,
    CodingChange,
    FinalCode,
    FinalCodeChange,
    Memo,
)
from studyapp.coding.units import (
    EVALUATION,
    Answer,
    all_fields,
    answer_text,
    chosen_fields,
    evaluations_of,
    participants_of,
)
from studyapp.models import Evaluation, Study

UNIT = re.compile(r"(p?)(\d{1,18}):([a-z][a-z0-9_]{0,69})")
MAX_MEMO = 5000


def answer_of(study: Study, unit: str) -> Answer:
    """The non-empty answer a unit names in this study, or a refusal saying what is wrong."""
    m = UNIT.fullmatch(str(unit).strip())
    if m is None:
        raise CodingRefused(
            f"{unit!r} is not an answer: expected <recourse id>:<field> or p<participant id>:<field>"
        )
    on_participant, number, name = m.group(1) == "p", int(m.group(2)), m.group(3)
    field = next((f for f in chosen_fields(study) if f.name == name), None)
    if field is None:
        known = [f.name for f in all_fields(study)]
        why = "is not coded in" if name in known else "is not a free-text field of"
        raise CodingRefused(f"unknown coding field {name!r}: it {why} study {study.slug} "
                            f"(coded fields: {', '.join(f.name for f in chosen_fields(study))})")  # fmt: skip
    if (field.level == EVALUATION) == on_participant:
        where = "each plan" if field.level == EVALUATION else "the questionnaire"
        raise CodingRefused(f"{name!r} is answered on {where}: {unit!r} names no such answer")
    if field.level == EVALUATION:
        ev = evaluations_of(study).filter(recourse_id=number).first()
        if ev is None:
            raise CodingRefused(f"no evaluation of recourse {number} in study {study.slug}")
        answer = Answer(ev.participant, ev, name, answer_text(ev, name))
    else:
        p = participants_of(study).filter(pk=number).first()
        if p is None:
            raise CodingRefused(f"no participant {number} in study {study.slug}")
        answer = Answer(p, None, name, answer_text(p, name))
    if not answer.text:
        raise CodingRefused(f"answer {answer.unit} is empty: nothing to code")
    return answer


def unit_for(study: Study, evaluation_id: Any, field: str) -> str:
    """The unit of an evaluation's answer given by the evaluation's primary key."""
    try:
        ev = Evaluation.objects.filter(participant__study=study, pk=int(evaluation_id)).first()
    except (TypeError, ValueError):
        ev = None
    if ev is None:
        raise CodingRefused(f"no evaluation {evaluation_id!r} in study {study.slug}")
    return f"{ev.recourse_id}:{field}"


def _where(answer: Answer) -> dict[str, Any]:
    """The columns that find a unit's rows in Coding, FinalCode and Memo."""
    return {"participant": answer.participant, "evaluation": answer.evaluation,
            "field": answer.field}  # fmt: skip


def _open_assignment(study: Study, coder: Any) -> CoderAssignment:
    assignment = CoderAssignment.objects.filter(study=study, coder=coder).first()
    if assignment is None:
        raise CodingRefused(f"{coder} is not an assigned coder of study {study.slug}")
    if assignment.finished_at is not None:
        raise CodingRefused(f"{coder} has finished coding this study; codes can no longer change")
    return assignment


def _codes(study: Study, names: Iterable[str]) -> list[Code]:
    wanted = sorted({str(n).strip() for n in names if str(n).strip()})
    codes = {c.name: c for c in Code.objects.filter(study=study, name__in=wanted)}
    unknown = [n for n in wanted if n not in codes]
    if unknown:
        raise CodingRefused(f"the code {unknown[0]!r} is not in this study's codebook")
    return [codes[n] for n in wanted]


def _joined(codes: list[Code]) -> str:
    return ";".join(sorted(c.name for c in codes))


def coding_save(*, study: Study, coder: Any, unit: str, code_names: Iterable[str]) -> Coding:
    """One coder's codes of one answer (none: "no code applies"); once per coder and answer
    (to change it: `coding_edit`)."""
    _open_assignment(study, coder)
    answer = answer_of(study, unit)
    codes = _codes(study, code_names)
    if Coding.objects.filter(**_where(answer), coder=coder).exists():
        raise CodingRefused(f"{coder} has already coded answer {answer.unit}; a coder codes each "
                            "answer once (edit or undo the coding to change it)")  # fmt: skip
    try:
        with transaction.atomic():
            coding = Coding.objects.create(study=study, coder=coder, **_where(answer))
            coding.codes.set(codes)
            CodingChange.objects.create(study=study, unit=answer.unit, coder=coder,
                                        action=CodingChange.Action.CODED, codes=_joined(codes))  # fmt: skip
    except IntegrityError:  # the same form submitted twice at once
        raise CodingRefused(f"{coder} has already coded answer {answer.unit}") from None
    return coding


def _own(study: Study, coder: Any, unit: str) -> tuple[Answer, Coding]:
    _open_assignment(study, coder)
    answer = answer_of(study, unit)
    coding = Coding.objects.filter(**_where(answer), coder=coder).first()
    if coding is None:
        raise CodingRefused(f"{coder} has not coded answer {answer.unit}")
    return answer, coding


def coding_edit(*, study: Study, coder: Any, unit: str, code_names: Iterable[str]) -> Coding:
    """Change a coder's own codes of an answer (before they finish); the old ones stay in
    the history."""
    answer, coding = _own(study, coder, unit)
    codes = _codes(study, code_names)
    if _joined(codes) == _joined(list(coding.codes.all())):
        raise CodingRefused(f"answer {answer.unit} already has exactly these codes")
    with transaction.atomic():
        coding.codes.set(codes)
        CodingChange.objects.create(study=study, unit=answer.unit, coder=coder,
                                    action=CodingChange.Action.EDITED, codes=_joined(codes))  # fmt: skip
    return coding


def coding_undo(*, study: Study, coder: Any, unit: str) -> None:
    """Take back a coder's coding of an answer (before they finish): the answer is uncoded
    again for them; the coding stays in the history."""
    answer, coding = _own(study, coder, unit)
    with transaction.atomic():
        CodingChange.objects.create(study=study, unit=answer.unit, coder=coder,
                                    action=CodingChange.Action.UNDONE, codes="")  # fmt: skip
        coding.delete()


def final_code_save(
    *, study: Study, by: Any, unit: str, code_names: Iterable[str], note: str = ""
) -> FinalCode:
    """Resolve an answer into its final code. A later decision replaces the current one; every
    decision stays in the history with its decider, time and note."""
    answer = answer_of(study, unit)
    codes = _codes(study, code_names)
    now = timezone.now()
    with transaction.atomic():
        final = FinalCode.objects.filter(**_where(answer)).first() or FinalCode(
            study=study, **_where(answer)
        )
        final.decided_by, final.decided_at, final.note = by, now, note.strip()
        final.save()
        final.codes.set(codes)
        FinalCodeChange.objects.create(study=study, unit=answer.unit, codes=_joined(codes),
                                       decided_by=by, decided_at=now, note=note.strip())  # fmt: skip
    return final


def final_codes_from_agreement(*, study: Study, by: Any) -> int:
    """Make the coders' code the final code of every unresolved answer that all assigned
    coders coded alike; returns how many answers were resolved."""
    coders = set(CoderAssignment.objects.filter(study=study).values_list("coder_id", flat=True))
    if len(coders) < 2:
        raise CodingRefused("agreed codes need at least two assigned coders")
    resolved = set(
        FinalCode.objects.filter(study=study).values_list(
            "evaluation_id", "participant_id", "field"
        )
    )
    given: dict[tuple[Any, int, str], dict[int, list[Code]]] = {}
    for coding in Coding.objects.filter(study=study).prefetch_related("codes"):
        key = (coding.evaluation_id, coding.participant_id, coding.field)
        given.setdefault(key, {})[coding.coder_id] = list(coding.codes.all())
    n, now = 0, timezone.now()
    with transaction.atomic():
        for (ev_id, p_id, field), by_coder in given.items():
            if (ev_id, p_id, field) in resolved or set(by_coder) != coders:
                continue
            if len({_joined(v) for v in by_coder.values()}) != 1:
                continue
            codes = next(iter(by_coder.values()))
            final = FinalCode.objects.create(study=study, evaluation_id=ev_id, participant_id=p_id,
                                             field=field, decided_by=by, decided_at=now,
                                             note="agreed by all coders")  # fmt: skip
            final.codes.set(codes)
            unit = (f"{final.evaluation.recourse_id}:{field}" if ev_id is not None
                    else f"p{p_id}:{field}")  # fmt: skip
            FinalCodeChange.objects.create(study=study, unit=unit, codes=_joined(codes),
                                           decided_by=by, decided_at=now,
                                           note="agreed by all coders")  # fmt: skip
            n += 1
    return n


def memo_add(*, study: Study, author: Any, unit: str, text: str) -> Memo:
    """A note on an answer (while coders are blind, only its author among the coders sees it)."""
    answer = answer_of(study, unit)
    text = str(text).strip()
    if not text:
        raise CodingRefused("memo not saved: it is empty")
    if len(text) > MAX_MEMO:
        raise CodingRefused(f"memo not saved: it is over {MAX_MEMO} characters ({len(text)})")
    return Memo.objects.create(study=study, unit=answer.unit, author=author, text=text,
                               **_where(answer))  # fmt: skip


__all__ = ["CodingRefused", "answer_of", "coding_edit", "coding_save", "coding_undo",
           "final_code_save", "final_codes_from_agreement", "memo_add", "unit_for"]  # fmt: skip
