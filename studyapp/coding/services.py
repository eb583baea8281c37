"""The coding's set-up: the codebook (add, edit, delete, each with its history row), the
coders, and the study's coding settings. Bad input is refused with a `CodingRefused` naming
the problem, and nothing is written (one transaction per call). The writes of codings, final
codes and memos are in `answer_services.py`.

The codebook's rules (name format, no duplicate) are `analysis.coding.Codebook`'s, so the
console and a coding sheet read by `recourse-analysis coding` refuse the same codebooks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from analysis.coding.codebook import Codebook, CodebookError
from studyapp.coding.errors import CodingRefused
from studyapp.coding.models import (
    Code,
    CodeChange,
    CoderAssignment,
    CodingChange,
    CodingSettings,
    FinalCodeChange,
    unit_of,
)
from studyapp.coding.units import all_fields
from studyapp.models import Study
from studyapp.studies import access

__all__ = ["CodingRefused", "code_delete", "code_edit", "codes_add", "coder_assign",
           "coder_finish", "settings_save"]  # fmt: skip


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
            made = [
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
            for c in made:
                _code_history(c, CodeChange.Action.ADDED, by)
            return made
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


def _code_history(code: Code, action: str, by: Any) -> None:
    CodeChange.objects.create(study=code.study, code=code.name, action=action,
                              definition=code.definition, example=code.example, by=by)  # fmt: skip


def _code(study: Study, name: str) -> Code:
    code = Code.objects.filter(study=study, name=str(name).strip()).first()
    if code is None:
        raise CodingRefused(f"the code {str(name).strip()!r} is not in this study's codebook")
    return code


def code_edit(*, study: Study, name: str, definition: str, example: str, by: Any) -> Code:
    """Change a code's definition and example (its name stays: codings and the export's
    `code_<name>` column refer to it); the entry as it was stays in the history."""
    code = _code(study, name)
    definition, example = definition.strip(), example.strip()
    if not definition:
        raise CodingRefused(f"code {code.name!r} not changed: a definition is required")
    if (definition, example) == (code.definition, code.example):
        raise CodingRefused(f"code {code.name!r} not changed: nothing differs")
    with transaction.atomic():
        code.definition, code.example = definition, example
        code.save(update_fields=["definition", "example"])
        _code_history(code, CodeChange.Action.EDITED, by)
    return code


def code_delete(*, study: Study, name: str, by: Any) -> int:
    """Take a code out of the codebook, and out of every coding and final code that has it
    (each such change a history row, so what was given stays on record); returns how many
    codings and final codes lost it."""
    code = _code(study, name)
    n = 0
    with transaction.atomic():
        for coding in code.codings.select_related("evaluation").prefetch_related("codes"):
            left = sorted(c.name for c in coding.codes.all() if c.pk != code.pk)
            CodingChange.objects.create(study=study, unit=unit_of(coding), coder=coding.coder,
                                        action=CodingChange.Action.CODE_DELETED,
                                        codes=";".join(left))  # fmt: skip
            n += 1
        now = timezone.now()
        for final in code.final_codes.select_related("evaluation").prefetch_related("codes"):
            left = sorted(c.name for c in final.codes.all() if c.pk != code.pk)
            FinalCodeChange.objects.create(
                study=study, unit=unit_of(final), codes=";".join(left), decided_by=by,
                decided_at=now, note=f"code {code.name!r} deleted from the codebook",
            )  # fmt: skip
            n += 1
        _code_history(code, CodeChange.Action.DELETED, by)
        code.delete()
    return n


def settings_save(
    *, study: Study, blind: bool, show_plan: bool, fields: list[str], by: Any
) -> CodingSettings:
    """The study's coding settings; `fields` must be free-text fields of the study."""
    known = [f.name for f in all_fields(study)]
    unknown = [f for f in fields if f not in known]
    if unknown:
        raise CodingRefused(
            f"settings not changed: unknown coding field {unknown[0]!r}; the free-text fields "
            f"of study {study.slug} are {', '.join(known)}"
        )
    with transaction.atomic():
        row, _ = CodingSettings.objects.update_or_create(
            study=study,
            defaults={
                "blind": blind,
                "show_plan": show_plan,
                "fields": list(fields),
                "changed_by": by,
            },  # fmt: skip
        )
    return row


def settings_of(study: Study) -> CodingSettings:
    """The study's settings (the defaults, unsaved, when it has none)."""
    return CodingSettings.objects.filter(study=study).first() or CodingSettings(study=study)
