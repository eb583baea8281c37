"""Writes: every change to a study or a participant goes through one of these functions.

HackSoft style: keyword-only, typed, named `<entity>_<action>`. Participant transitions lock
the participant row and check the state they expect, so a double submit, a stale page (the
back button) or a re-delivered task changes nothing.
"""

from __future__ import annotations

import io
import logging
import random
import time
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from recourse_engine import (
    DesignError,
    FeatureSchema,
    ModelError,
    PoolError,
    SchemaError,
    rejects_factual,
)

from . import assignment, attention, engine, recruitment, screening
from .models import (
    Condition,
    Evaluation,
    PageVisit,
    Participant,
    Profile,
    Recourse,
    Study,
    default_outcome_codes,
)
from .withdrawal import participant_delete as participant_delete
from .withdrawal import participant_withdraw as participant_withdraw

log = logging.getLogger(__name__)

S = Participant.State
G = Participant.Generation


class StudyError(ValueError):
    """A study definition or change that cannot be applied; the message says why."""


class FlowError(Exception):
    """A participant request that cannot be applied; the message is shown to them."""


class StaleSubmission(FlowError):
    """A page that was already answered (back button, double click, second tab)."""


class RejectedSubmission(FlowError):
    """A submission that does not belong to this participant's current page (tampered)."""


# --- studies ------------------------------------------------------------------------------
def _check_study_parts(
    *, schema: FeatureSchema, pool_csv: str, design: str, decision_model: str
) -> int:
    try:
        engine.design_of(design)
    except DesignError as exc:
        raise StudyError(f"design: {exc}") from None
    try:
        engine.model_of(decision_model)
    except engine.StudyConfigError as exc:
        raise StudyError(str(exc)) from None
    try:
        pool = engine.pool_of(pool_csv, schema)
    except (PoolError, ValueError) as exc:
        raise StudyError(f"pool: {exc}") from None
    try:
        screening.questions(schema.to_dict())
    except screening.ScreeningError as exc:
        raise StudyError(str(exc)) from None
    return len(pool)


def study_create(
    *,
    slug: str,
    title: str,
    schema: FeatureSchema | Mapping[str, Any],
    pool: pd.DataFrame | str,
    design: str,
    texts: Mapping[str, Any],
    consent_version: str,
    decision_model: str = "income_rule",
    seed: int = 0,
    language: str = "en",
    outcome_codes: Mapping[str, Mapping[str, str]] | None = None,
) -> Study:
    """Create a draft study; the pool is a table (or CSV text) validated by the engine.

    `texts` maps a language to its page texts; a flat {key: text} is taken as English.
    """
    if texts and not all(isinstance(v, Mapping) for v in texts.values()):
        texts = {"en": dict(texts)}
    codes = default_outcome_codes()
    for outcome, entry in (outcome_codes or {}).items():
        if outcome not in codes:
            raise StudyError(f"outcome codes: unknown outcome {outcome!r}")
        codes[outcome].update(entry)
    if not isinstance(schema, FeatureSchema):
        try:
            schema = engine.schema_of(schema)
        except SchemaError as exc:
            raise StudyError(f"schema: {exc}") from None
    if isinstance(pool, pd.DataFrame):
        buf = io.StringIO()
        pool.to_csv(buf, index=False)
        pool_csv = buf.getvalue()
    else:
        pool_csv = pool
    rows = _check_study_parts(
        schema=schema, pool_csv=pool_csv, design=design, decision_model=decision_model
    )
    return Study.objects.create(
        slug=slug,
        title=title,
        schema=schema.to_dict(),
        schema_hash=schema.hash(),
        texts={lang: dict(t) for lang, t in texts.items()},
        language=language,
        outcome_codes=codes,
        consent_version=consent_version,
        design=str(engine.design_of(design)),
        decision_model=decision_model,
        pool_csv=pool_csv,
        pool_hash=engine.pool_csv_hash(pool_csv),
        pool_rows=rows,
        seed=seed,
    )


def study_update_design(*, study: Study, design: str) -> Study:
    """Change a draft study's design; a live or closed study's design is frozen."""
    if study.state != Study.State.DRAFT:
        raise StudyError(
            f"study {study.slug} is {study.state}: its design is frozen once it goes live"
        )
    try:
        study.design = str(engine.design_of(design))
    except DesignError as exc:
        raise StudyError(f"design: {exc}") from None
    study.save(update_fields=["design", "updated_at"])
    return study


_STUDY_MOVES = {
    Study.State.DRAFT: {Study.State.LIVE},
    Study.State.LIVE: {Study.State.CLOSED},
    Study.State.CLOSED: {Study.State.LIVE},
}


def study_set_state(*, study: Study, state: str) -> Study:
    if state == study.state:
        return study
    if state not in _STUDY_MOVES.get(study.state, set()):
        raise StudyError(f"study {study.slug}: cannot go from {study.state} to {state}")
    study.state = state
    study.save(update_fields=["state", "updated_at"])
    if state == Study.State.LIVE:
        # balanced strategies (ebr/ibr) need models fitted on the pool: a Celery task
        from .method_fitting import fits_queue

        fits_queue(study=study)
    return study


# --- participants ---------------------------------------------------------------------------
def _end(p: Participant, state: str) -> None:
    """Finish a (locked) participant with an end state and its outcome's code."""
    p.state = state
    p.completion_code = recruitment.outcome_code(p.study, recruitment.STATE_OUTCOME[state])
    p.finished_at = timezone.now()


def participant_start(
    *,
    study: Study,
    recruitment_id: str = "",
    panel: Mapping[str, str] | None = None,
    condition: str = "",
) -> Participant:
    """A participant arrives (the welcome page's POST): resume their session when the panel
    id is known, else create one in the least-filled condition (`assignment`).

    The Study row lock serialises concurrent arrivals, so counting and creating cannot
    interleave; a concurrent double start with one panel id that still collides on the
    unique (study, recruitment_id) resumes the row that won.
    """
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.state != Study.State.LIVE:
            raise FlowError(_("This study is not open at the moment."))
        if recruitment_id:
            existing = Participant.objects.filter(
                study=locked, recruitment_id=recruitment_id
            ).first()
            if existing is not None:
                return existing
        full = False
        if not condition:
            condition, full = assignment.pick_condition(locked)
        try:
            with transaction.atomic():
                p = Participant.objects.create(
                    study=locked,
                    recruitment_id=recruitment_id,
                    panel=dict(panel or {}),
                    condition=condition,
                )
        except IntegrityError:
            existing = Participant.objects.filter(
                study=locked, recruitment_id=recruitment_id
            ).first()
            if not recruitment_id or existing is None:
                raise
            return existing
        if full:
            _end(p, S.QUOTA_FULL)
            p.save()
    return p


def _locked(participant: Participant, expected: str, page: str) -> Participant:
    """Re-read the participant under a row lock and check it is still on `expected`."""
    p = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
    if p.state != expected:
        raise StaleSubmission(
            _(
                "The %(page)s page was already submitted; your stored answers are kept. "
                "Please continue below."
            )
            % {"page": page}
        )
    return p


def _close_visit(p: Participant, page: str) -> PageVisit | None:
    now = timezone.now()
    PageVisit.objects.filter(participant=p, page=page, exited_at__isnull=True).update(exited_at=now)
    return PageVisit.objects.filter(participant=p, page=page).first()


def page_visit_enter(*, participant: Participant, page: str) -> None:
    """Record the first entry to a page; reloads count as views, not new entries."""
    updated = PageVisit.objects.filter(participant=participant, page=page).update(
        views=F("views") + 1
    )
    if not updated:
        try:
            with transaction.atomic():
                PageVisit.objects.create(
                    participant=participant, page=page, entered_at=timezone.now()
                )
        except IntegrityError:  # a second tab got there first
            pass


def screening_submit(*, participant: Participant, answers: Mapping[str, Any]) -> Participant:
    """Store the answers; ineligible -> screened out; in a full quota cell -> quota full.

    With quotas, the Study row is locked first (the same order as arrivals), so two
    participants cannot both take the last place of a cell.
    """
    qs = screening.questions(participant.study.schema)
    with transaction.atomic():
        quotas = assignment.screening_quotas(participant.study)
        if quotas:
            Study.objects.select_for_update().filter(pk=participant.study_id).first()
        p = _locked(participant, S.SCREENING, "screening")
        p.screening = dict(answers)
        for key, value in screening.group_attributes(qs, answers).items():
            setattr(p, key, value)
        if not screening.is_eligible(qs, answers):
            _end(p, S.SCREENED_OUT)
        elif quotas and assignment.full_quota(p, quotas) is not None:
            _end(p, S.QUOTA_FULL)
        else:
            p.state = S.CONSENT
        p.save()
        _close_visit(p, "screening")
    return p


def consent_give(*, participant: Participant) -> Participant:
    with transaction.atomic():
        p = _locked(participant, S.CONSENT, "consent")
        p.consent_version = p.study.consent_version
        p.consented_at = timezone.now()
        p.state = S.SCENARIO
        p.save()
        _close_visit(p, "consent")
    return p


def scenario_continue(*, participant: Participant) -> Participant:
    with transaction.atomic():
        p = _locked(participant, S.SCENARIO, "scenario")
        p.state = S.PROFILE
        p.save()
        _close_visit(p, "scenario")
    return p


def _selection_seed(study: Study, participant_id: int) -> int:
    return (int(study.seed) * 1_000_003 + int(participant_id)) % (2**62)


def _attention_answers(
    study: Study, page: str, answers: Mapping[str, Any] | None
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The page's checks and their answers as codes; a missing or unlisted answer is refused
    before anything is stored."""
    checks = attention.checks_for_page(study, page)
    given = dict(answers or {})
    out: dict[str, int] = {}
    for check in checks:
        value = given.get(check["key"])
        try:
            code = int(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            code = 0
        if not 1 <= code <= len(check["options"]):
            raise RejectedSubmission(
                _("Please answer the question: %(prompt)s") % {"prompt": check["prompt"]}
            )
        out[check["key"]] = code
    return checks, out


def profile_submit(
    *,
    participant: Participant,
    values: Mapping[str, int | float],
    attention_answers: Mapping[str, Any] | None = None,
) -> Participant:
    """Store the profile, record the model's decision and queue recourse generation (or end
    with the failed-attention outcome when the study's END rule applies)."""
    from .tasks import generate_recourses

    schema = engine.schema_of(participant.study.schema)
    missing = [it.label for it in schema.items if it.key not in values]
    if missing:
        raise RejectedSubmission(
            _("Please answer every item; missing: %(items)s.") % {"items": ", ".join(missing)}
        )
    codes = np.array([float(values[k]) for k in schema.keys])
    bad = [it.label for it, v in zip(schema.items, codes, strict=True) if not it.valid([v])[0]]
    if bad:
        raise RejectedSubmission(
            _("Not one of the listed options: %(items)s.") % {"items": ", ".join(bad)}
        )
    checks, answers = _attention_answers(participant.study, "profile", attention_answers)
    with transaction.atomic():
        p = _locked(participant, S.PROFILE, "profile")
        model = engine.study_model(p.study)
        rejected = rejects_factual(model, codes, p.income_jpy)
        Profile.objects.create(
            participant=p,
            values={k: values[k] for k in schema.keys},
            decision="rejected" if rejected else "approved",
        )
        _close_visit(p, "profile")
        if attention.record(p, checks, answers):
            _end(p, S.FAILED_ATTENTION)
            p.save()
            return p
        p.state = S.WAITING
        p.generation = G.QUEUED
        p.generation_queued_at = timezone.now()
        p.selection_seed = _selection_seed(p.study, p.pk)
        if not rejected:
            p.flagged = True
            p.flag_reason = "; ".join(
                r
                for r in (
                    p.flag_reason,
                    "the decision model approved the profile; recourses shown anyway",
                )
                if r
            )[:300]
        p.save()
        transaction.on_commit(partial(generate_recourses.delay, p.pk))
    return p


# --- recourse generation (the Celery task's body) ------------------------------------------
def _generation_of(participant_id: int) -> str:
    """The stored generation status; "" when the participant was deleted on request."""
    found = Participant.objects.filter(pk=participant_id).values_list("generation", flat=True)
    return found.first() or ""


def _mark_running(participant_id: int) -> Participant | None:
    with transaction.atomic():
        p = (
            Participant.objects.select_for_update()
            .select_related("study")
            .filter(pk=participant_id)
            .first()
        )
        if p is None or p.state != S.WAITING or p.generation in (G.DONE, G.EMPTY, G.FAILED):
            return None  # already generated (re-delivered task) or not asked for
        p.generation = G.RUNNING
        p.generation_started_at = p.generation_started_at or timezone.now()
        p.generation_attempts += 1
        p.save(update_fields=["generation", "generation_started_at", "generation_attempts"])
        return p


def _design_for(p: Participant) -> str:
    """The participant's condition's design when it has one, else the study's."""
    if p.condition:
        own = (
            Condition.objects.filter(study_id=p.study_id, name=p.condition)
            .values_list("design", flat=True)
            .first()
        )
        if own and own.strip():
            return own
    return p.study.design


def recourses_generate(*, participant_id: int) -> str:
    """Select and store a participant's recourses; idempotent (returns the final status)."""
    p = _mark_running(participant_id)
    if p is None:
        return _generation_of(participant_id)
    t0 = time.perf_counter()
    try:
        schema, index = engine.pool_index_for(p.study)
        values = (
            Profile.objects.values_list("values", flat=True).filter(participant_id=p.pk).first()
        )
        if values is None:  # withdrew while the task ran: nothing left to work on
            return _generation_of(participant_id)
        design = _design_for(p)
        selection = index.select(values, p.income_jpy, design, seed=p.selection_seed)
    except (PoolError, DesignError, ModelError, SchemaError, engine.StudyConfigError) as exc:
        return recourses_fail(participant_id=participant_id, error=f"study configuration: {exc}")
    seconds = time.perf_counter() - t0
    order = list(range(len(selection.picks)))
    random.Random(p.selection_seed).shuffle(order)
    rows = [
        Recourse(
            participant_id=p.pk,
            position=order[i] + 1,
            strategy=pick.strategy,
            method="pool_search",
            pool_index=int(pick.pool_index),
            pool_id=str(pick.pool_id),
            values={
                k: (float(v) if schema.items[j].is_numeric else int(v))
                for j, (k, v) in enumerate(zip(schema.keys, pick.codes, strict=True))
            },
            changed=list(pick.changed),
            sparsity=int(pick.sparsity),
            proximity=float(pick.proximity),
            generation_seconds=seconds,
        )
        for i, pick in enumerate(selection.picks)
    ]
    with transaction.atomic():
        locked = Participant.objects.select_for_update().filter(pk=participant_id).first()
        if locked is None:
            return ""
        if (
            locked.state != S.WAITING
            or locked.recourses.exists()
            or locked.generation in (G.DONE, G.EMPTY)
        ):
            return locked.generation
        Recourse.objects.bulk_create(rows)
        locked.generation_finished_at = timezone.now()
        if rows:
            locked.generation = G.DONE
            locked.state = S.EVALUATING
            if selection.shortfall:
                locked.flagged = True
                locked.flag_reason = (
                    f"only {len(rows)} of {selection.requested} recourses found "
                    f"({selection.n_admissible} admissible in the pool)"
                )
        else:
            locked.generation = G.EMPTY
            locked.state = S.NO_RECOURSE
            # credited as completed: they took part (the completed outcome's code)
            locked.completion_code = recruitment.outcome_code(locked.study, "completed")
            locked.finished_at = timezone.now()
            locked.flagged = True
            locked.flag_reason = "no admissible recourse in the pool"
        locked.save()
        return locked.generation


def recourses_fail(*, participant_id: int, error: str) -> str:
    """Give up on generation: the participant is told politely, the case is flagged."""
    log.error("recourse generation failed for participant %s: %s", participant_id, error)
    with transaction.atomic():
        p = (
            Participant.objects.select_for_update()
            .select_related("study")
            .filter(pk=participant_id)
            .first()
        )
        if p is None:
            return ""
        if p.generation in (G.DONE, G.EMPTY) or p.state != S.WAITING:
            return p.generation
        p.generation = G.FAILED
        p.generation_error = error[:2000]
        p.generation_finished_at = timezone.now()
        p.state = S.NO_RECOURSE
        p.completion_code = recruitment.outcome_code(p.study, "completed")
        p.finished_at = timezone.now()
        p.flagged = True
        p.flag_reason = "recourse generation failed (see generation error)"
        p.save()
        return p.generation


# --- evaluations --------------------------------------------------------------------------
def evaluation_submit(
    *,
    participant: Participant,
    recourse_id: int,
    acceptance: int,
    acceptance_why: str,
    impossible: Sequence[str],
    action: int,
    action_why: str,
    attention_answers: Mapping[str, Any] | None = None,
) -> Evaluation:
    """Store one evaluation of the participant's current recourse; the last one completes.

    An attention check on this plan's page is recorded with it; when the study's END rule
    applies, the evaluation is kept and the participant ends with failed attention.
    """
    for name, value in (("acceptance", acceptance), ("action", action)):
        if not isinstance(value, int) or not 1 <= value <= 7:
            raise RejectedSubmission(
                _("%(name)s must be a whole number from 1 to 7.") % {"name": name}
            )
    with transaction.atomic():
        p = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
        recourse = Recourse.objects.filter(pk=recourse_id, participant_id=p.pk).first()
        if recourse is None:
            raise RejectedSubmission(
                _("This answer does not belong to any of your plans; nothing was stored.")
            )
        if Evaluation.objects.filter(recourse=recourse).exists():
            raise StaleSubmission(
                _(
                    "Your answers to plan %(position)s were already saved and are kept. "
                    "Please continue below."
                )
                % {"position": recourse.position}
            )
        if p.state != S.EVALUATING:
            raise StaleSubmission(_("This study is already finished; your answers are kept."))
        current = (
            Recourse.objects.filter(participant_id=p.pk, evaluation__isnull=True)
            .order_by("position")
            .first()
        )
        if current is None or current.pk != recourse.pk:
            raise RejectedSubmission(
                _("Plans are answered in order; this one is not next. Nothing was stored.")
            )
        unknown = sorted(set(impossible) - set(recourse.changed))
        if unknown:
            raise RejectedSubmission(
                _("Only changed items can be marked impossible, not: %(items)s.")
                % {"items": ", ".join(unknown)}
            )
        page = f"evaluation-{recourse.position}"
        checks, answers = _attention_answers(p.study, page, attention_answers)
        visit = _close_visit(p, page)
        seconds = (visit.exited_at - visit.entered_at).total_seconds() if visit else 0.0
        evaluation = Evaluation.objects.create(
            recourse=recourse,
            participant=p,
            acceptance=acceptance,
            acceptance_why=acceptance_why,
            impossible=sorted(impossible, key=recourse.changed.index),
            action=action,
            action_why=action_why,
            seconds_on_page=max(0.0, seconds),
        )
        ends = attention.record(p, checks, answers)
        if ends:
            _end(p, S.FAILED_ATTENTION)
        elif not Recourse.objects.filter(participant_id=p.pk, evaluation__isnull=True).exists():
            _end(p, S.COMPLETED)
        p.save()
    return evaluation
