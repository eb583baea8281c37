"""Every write of the coding: codes, coders, codings, final codes. Bad input is refused with a
`CodingRefused` naming the problem, and nothing is written (one transaction per call).

The codebook's rules (name format, no duplicate) are `analysis.coding.Codebook`'s, so the
console and a coding sheet read by `recourse-analysis coding` refuse the same codebooks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from analysis.coding.codebook import Codebook, CodebookError
from studyapp.coding.models import Code, CoderAssignment, Coding, FinalCode
from studyapp.coding.units import answer_fields, answer_text, evaluations_of
from studyapp.models import Evaluation, Study
from studyapp.studies import access


class CodingRefused(ValueError):
    """A write the coding does not allow; the message says why."""


def codes_add(*, study: Study, rows: Iterable[Mapping[str, Any]], by: Any) -> list[Code]:
    """Add codes (`code`, `definition`, `example`) to the study's codebook: all or none."""
    existing = list(Code.objects.filter(study=study))
    new = [dict(r) for r in rows]
    try:
        Codebook.of(new)  # the rows among themselves
    except CodebookError as exc:
        raise CodingRefused(f"codebook not changed: {exc}") from None
    taken = {c.name for c in existing}
    for row in new:
        if str(row["code"]).strip() in taken:
            raise CodingRefused(
                f"codebook not changed: the code {str(row['code']).strip()!r} is already in "
                "this study's codebook (code names must be unique)"
            )
    start = max((c.position for c in existing), default=0) + 1
    try:
        with transaction.atomic():
            return [
                Code.objects.create(
                    study=study,
                    name=str(r["code"]).strip(),
                    definition=str(r.get("definition") or "").strip(),
                    example=str(r.get("example") or "").strip(),
                    position=start + i,
                    created_by=by,
                )
                for i, r in enumerate(new)
            ]
    except IntegrityError:  # another researcher added the same name at the same moment
        raise CodingRefused("codebook not changed: a code of that name was just added") from None


def coder_assign(*, study: Study, coder: Any, by: Any) -> CoderAssignment:
    """Make `coder` a coder of the study: an active researcher who can see the study and has
    the permission to code."""
    if not access.can_access(coder, study):
        raise CodingRefused(f"{coder} cannot open study {study.slug}: share the study first")
    if not coder.has_perm("studyapp_coding.add_coding"):
        raise CodingRefused(f"{coder} lacks the permission to code answers (add coding)")
    if CoderAssignment.objects.filter(study=study, coder=coder).exists():
        raise CodingRefused(f"{coder} is already a coder of this study")
    try:
        with transaction.atomic():
            return CoderAssignment.objects.create(study=study, coder=coder, assigned_by=by)
    except IntegrityError:
        raise CodingRefused(f"{coder} is already a coder of this study") from None


def _assignment(study: Study, coder: Any) -> CoderAssignment:
    assignment = CoderAssignment.objects.filter(study=study, coder=coder).first()
    if assignment is None:
        raise CodingRefused(f"{coder} is not an assigned coder of study {study.slug}")
    if assignment.finished_at is not None:
        raise CodingRefused(f"{coder} has finished coding this study; codes can no longer be added")
    return assignment


def coder_finish(*, study: Study, coder: Any) -> CoderAssignment:
    """The coder is done: their codes are final, and once every coder is, visible to all."""
    assignment = _assignment(study, coder)
    assignment.finished_at = timezone.now()
    assignment.save(update_fields=["finished_at"])
    return assignment


def _answer(study: Study, evaluation_id: Any, field: str) -> Evaluation:
    try:
        ev = evaluations_of(study).get(pk=int(evaluation_id))
    except (Evaluation.DoesNotExist, TypeError, ValueError):
        raise CodingRefused(f"no evaluation {evaluation_id!r} in study {study.slug}") from None
    if field not in answer_fields(study):
        raise CodingRefused(f"{field!r} is not a free-text answer of study {study.slug}")
    if not answer_text(ev, field):
        raise CodingRefused(f"answer {ev.recourse_id}:{field} is empty: nothing to code")
    return ev


def _codes(study: Study, names: Iterable[str]) -> list[Code]:
    wanted = sorted({str(n).strip() for n in names if str(n).strip()})
    codes = {c.name: c for c in Code.objects.filter(study=study, name__in=wanted)}
    unknown = [n for n in wanted if n not in codes]
    if unknown:
        raise CodingRefused(f"the code {unknown[0]!r} is not in this study's codebook")
    return [codes[n] for n in wanted]


def coding_save(
    *, study: Study, coder: Any, evaluation_id: Any, field: str, code_names: Iterable[str]
) -> Coding:
    """One coder's codes of one answer (none: "no code applies"); once per coder and answer."""
    _assignment(study, coder)
    ev = _answer(study, evaluation_id, field)
    codes = _codes(study, code_names)
    if Coding.objects.filter(evaluation=ev, field=field, coder=coder).exists():
        raise CodingRefused(
            f"{coder} has already coded answer {ev.recourse_id}:{field}; a coder codes each "
            "answer once"
        )
    try:
        with transaction.atomic():
            coding = Coding.objects.create(study=study, evaluation=ev, field=field, coder=coder)
            coding.codes.set(codes)
    except IntegrityError:  # the same form submitted twice at once
        raise CodingRefused(f"{coder} has already coded answer {ev.recourse_id}:{field}") from None
    return coding


def final_code_save(
    *,
    study: Study,
    by: Any,
    evaluation_id: Any,
    field: str,
    code_names: Iterable[str],
    note: str = "",
) -> FinalCode:
    """Resolve an answer into its final code (a later decision replaces an earlier one, and
    records its own decider and time)."""
    ev = _answer(study, evaluation_id, field)
    codes = _codes(study, code_names)
    with transaction.atomic():
        final, _ = FinalCode.objects.update_or_create(
            evaluation=ev,
            field=field,
            defaults={
                "study": study,
                "decided_by": by,
                "decided_at": timezone.now(),
                "note": note.strip(),
            },  # fmt: skip
        )
        final.codes.set(codes)
    return final


def final_codes_from_agreement(*, study: Study, by: Any) -> int:
    """Make the coders' code the final code of every unresolved answer that all assigned
    coders coded alike; returns how many answers were resolved."""
    coders = set(CoderAssignment.objects.filter(study=study).values_list("coder_id", flat=True))
    if len(coders) < 2:
        raise CodingRefused("agreed codes need at least two assigned coders")
    resolved = set(FinalCode.objects.filter(study=study).values_list("evaluation_id", "field"))
    given: dict[tuple[int, str], dict[int, frozenset[int]]] = {}
    for coding in Coding.objects.filter(study=study).prefetch_related("codes"):
        key = (coding.evaluation_id, coding.field)
        given.setdefault(key, {})[coding.coder_id] = frozenset(c.pk for c in coding.codes.all())
    n = 0
    with transaction.atomic():
        for (ev_id, field), by_coder in given.items():
            if (ev_id, field) in resolved or set(by_coder) != coders:
                continue
            if len(set(by_coder.values())) == 1:
                final = FinalCode.objects.create(study=study, evaluation_id=ev_id, field=field,
                                                 decided_by=by, decided_at=timezone.now(),
                                                 note="agreed by all coders")  # fmt: skip
                final.codes.set(next(iter(by_coder.values())))
                n += 1
    return n
