"""Deleting participants' data with a receipt: by a study's retention rules at a given time
(the daily schedule, the `apply_retention` command, the console's button), on withdrawal,
and on a researcher's request — one function, `erase`, for all of them.

A study's run is one transaction: every due class and every due export's files, and a
receipt for each that found something. Nothing due, nothing written, so a second run at the
same time deletes nothing and writes no receipt. A dry run does the same work and rolls it
back (files are only looked at), so what it reports is what the run would do.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction

from studyapp.definition.retention import (
    DATA_CLASSES,
    RetentionRule,
    due_before,
    retention_of,
)
from studyapp.models import DeletionReceipt, Participant, Study
from studyapp.retention import export_files
from studyapp.retention.classes import CLASSES

log = logging.getLogger(__name__)
By = DeletionReceipt.By

#: what a participant's withdrawal erases (their bare row, state and panel id stay)
WITHDRAWAL_CLASSES = ("answers", "free_text", "paradata", "panel_id", "contact")
#: the study's columns a run never reads
_LARGE = ("pool_csv", "decision_model_blob", "schema")
_KEPT_ID = " (the panel id itself is kept: the same panel member resumes the withdrawn row)"


def erase(
    *,
    study: Study,
    participant_ids: Sequence[int],
    classes: Sequence[str],
    by: str,
    rule: str,
    as_of: datetime,
    by_user: Any = None,
    keep_panel_id: bool = False,
) -> list[DeletionReceipt]:
    """Erase `classes` of the participants (in the caller's transaction, in the order of
    `definition.retention.DATA_CLASSES`) and write a receipt for each class that found
    something. `rule`: the rule or request in words; `keep_panel_id`: a withdrawal's panel
    erasure, which keeps the id itself."""
    unknown = sorted(set(classes) - set(CLASSES))
    if unknown:
        raise ValueError(f"unknown data class {unknown[0]!r}; known: {', '.join(CLASSES)}")
    user = by_user if getattr(by_user, "pk", None) is not None else None
    receipts = []
    for name in [c for c in DATA_CLASSES if c in classes]:
        holding = sorted(CLASSES[name].holding(study, participant_ids))
        if not holding:
            continue
        detail = {k: n for k, n in CLASSES[name].erase(study, holding, keep_panel_id).items() if n}
        if not detail:
            continue
        words = rule + (_KEPT_ID if name == "panel_id" and keep_panel_id else "")
        receipts.append(
            DeletionReceipt.objects.create(
                study=study,
                study_slug=study.slug,
                data_class=name,
                rule=words[:300],
                by=by,
                by_user=user,
                participants=len(holding),
                rows=sum(detail.values()),
                detail=detail,
                participant_numbers=holding,
                as_of=as_of,
            )
        )
    return receipts


def due_participants(study: Study, rule: RetentionRule, now: datetime) -> list[int]:
    """The study's participants whose data of a class is due under `rule` at `now`: ended
    `days` or more ago (completion), or all once the study closed `days` or more ago."""
    people = Participant.objects.filter(study=study)
    if rule.after == "completion":
        people = people.filter(finished_at__lte=due_before(rule, now))
    elif not (
        study.state == Study.State.CLOSED
        and study.closed_at is not None
        and study.closed_at <= due_before(rule, now)
    ):
        return []
    return list(people.order_by("pk").values_list("pk", flat=True))


def rule_words(name: str, rule: RetentionRule) -> str:
    return f"retention.{name}: {rule.words()}"


def _study_run(study: Study, now: datetime, by: str, by_user: Any, dry_run: bool) -> list[Any]:
    rules = retention_of(study.retention).rules()
    receipts = []
    for name, rule in rules.items():  # the whole participant first
        ids = due_participants(study, rule, now)
        receipts += erase(
            study=study,
            participant_ids=ids,
            classes=[name],
            by=by,
            rule=rule_words(name, rule),
            as_of=now,
            by_user=by_user,
        )
    receipts += export_files.delete_due(
        study=study, rules=rules, now=now, by=by, by_user=by_user, dry_run=dry_run
    )
    return receipts


def study_retention_apply(
    *,
    study: Study,
    now: datetime,
    by: str = By.SCHEDULE,
    by_user: Any = None,
    dry_run: bool = False,
) -> list[DeletionReceipt]:
    """Delete what the study's rules make due at `now`, in one transaction, with receipts
    (`dry_run`: the same, rolled back; the receipts returned were never stored)."""
    with transaction.atomic():
        study = Study.objects.defer(*_LARGE).get(pk=study.pk)
        receipts = _study_run(study, now, by, by_user, dry_run)
        if dry_run:
            transaction.set_rollback(True)
    if dry_run:
        for r in receipts:
            r.pk = None
    return receipts


@dataclass
class RetentionRun:
    """One run over studies: each study's receipts, and the studies whose run failed."""

    receipts: dict[str, list[DeletionReceipt]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def retention_apply(
    *, now: datetime, studies: Sequence[Study] | None = None, dry_run: bool = False
) -> RetentionRun:
    """The schedule: every study's (or `studies`') due deletions at `now`, a transaction per
    study; a study whose run fails is logged and left as it was, the others go on."""
    run = RetentionRun()
    everyone = Study.objects.order_by("slug").only("pk", "slug")
    for study in everyone if studies is None else studies:
        try:
            run.receipts[study.slug] = study_retention_apply(study=study, now=now, dry_run=dry_run)
        except Exception as exc:  # one study's fault must not stop the others' deletions
            log.exception("retention of study %s failed", study.slug)
            run.failed[study.slug] = f"{type(exc).__name__}: {exc}"
    return run


def retention_preview(study: Study, now: datetime) -> list[dict[str, Any]]:
    """Per rule: how many participants hold data it makes due at `now`, and the exports
    whose files are due; read only (the console's page). A run deletes the whole
    participant first, so a later class may then find fewer."""
    out = []
    for name, rule in retention_of(study.retention).rules().items():
        ids = due_participants(study, rule, now)
        holding = CLASSES[name].holding(study, ids) if ids else set()
        out.append({"data_class": name, "rule": rule.words(), "participants": len(holding)})
    return out
