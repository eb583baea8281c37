"""Participant writes: every step of the participant flow goes through one of these functions.

HackSoft style: keyword-only, typed, named `<entity>_<action>`. Transitions lock the
participant row and check the state they expect, so a double submit, a stale page (the
back button) or a re-delivered task changes nothing. Where a participant goes next is the
page flow's to say (`flow.after`): a transition is told that state (`then`) and moves there,
or ends the participation (an ending's state: its code is given); the branches a submission
decides (screened out, quota full, failed attention) end it here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np
from django.db import IntegrityError, connection, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from recourse_engine import rejects_factual
from studyapp.definition import engine_objects, outcomes, screening
from studyapp.definition.question_types import AnswerError, answer_check
from studyapp.definition.questions import Question, attention_question
from studyapp.models import Evaluation, PageVisit, Participant, Profile, Study
from studyapp.participation import (
    assignment,
    attention,
    questionnaire,
    selectors,
    survey_logic,
)

S = Participant.State
G = Participant.Generation


class FlowError(Exception):
    """A participant request that cannot be applied; the message is shown to them."""


class StaleSubmission(FlowError):
    """A page that was already answered (back button, double click, second tab)."""


class RejectedSubmission(FlowError):
    """A submission that does not belong to this participant's current page (tampered)."""


def _end(p: Participant, state: str) -> None:
    """Finish a (locked) participant with an end state and its outcome's code."""
    p.state = state
    p.completion_code = outcomes.end_code(p.study, state)
    p.finished_at = timezone.now()


def _advance(p: Participant, then: str) -> None:
    """Move a (locked) participant to the state that follows, ending the participation when
    that state is an ending."""
    if then not in S.values:
        raise ValueError(f"no page follows {p.state!r} in this study's flow (then={then!r})")
    if outcomes.is_end(then):
        _end(p, then)
    else:
        p.state = then


def participant_start(
    *,
    study: Study,
    state: str,
    recruitment_id: str = "",
    panel: Mapping[str, str] | None = None,
    condition: str = "",
    is_test: bool = False,
    language: str = "",
    device: Mapping[str, Any] | None = None,
) -> Participant:
    """A participant arrives (the welcome page's POST): resume their session when the panel
    id is known, else create one in a condition the study's assignment picks (`assignment`),
    on the study's first page (`state`: `flow.first_state`).

    `device`: the device they arrive on (`participation.device`: its class, the window's
    size), recorded for a new participant. `language`: the one they take the study in (`participation.language`; blank: the
    study's default). `is_test`: a researcher's preview or a bot (a draft study may be walked this way); test
    participants are left out of quotas, condition counts, the monitor and the export.

    The Study row lock serialises concurrent arrivals, so counting and creating cannot
    interleave; a concurrent double start with one panel id that still collides on the
    unique (study, recruitment_id) resumes the row that won.
    """
    open_states = (Study.State.LIVE, Study.State.DRAFT) if is_test else (Study.State.LIVE,)
    with transaction.atomic():
        # the lock (and the state, which may have changed since the study was read); the
        # rest of the study as the caller read it: short, for the writer lock of SQLite
        rows = Study.objects.select_for_update().filter(pk=study.pk)
        if rows.values_list("state", flat=True).first() not in open_states:
            raise FlowError(_("This study is not open at the moment."))
        locked = study
        if recruitment_id:
            existing = Participant.objects.filter(
                study=locked, recruitment_id=recruitment_id
            ).first()
            if existing is not None:
                return existing
        full, how = False, ""
        if not condition:
            condition, full, how = assignment.pick_condition(locked, is_test=is_test)
        try:
            with transaction.atomic():
                p = Participant.objects.create(
                    study=locked,
                    recruitment_id=recruitment_id,
                    panel=dict(panel or {}),
                    condition=condition,
                    assignment=how,
                    is_test=is_test,
                    state=state,
                    language=language or study.language,
                    **(device or {}),
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


#: the participant's columns a plan submit reads and writes (its state, its attention
#: record, an ending); `save()` then writes only these, and any other column a change
#: would touch is read on first use, still under the lock
EVALUATION_COLUMNS = (
    "study", "state", "attention", "attention_failures", "flag_reason", "flagged",
    "completion_code", "finished_at", "updated_at",
)  # fmt: skip


def _lock(participant: Participant, columns: Sequence[str] = ()) -> Participant:
    """Re-read the participant under a lock on their row alone (never the shared study row,
    which every participant's submit would then queue for); the study already read for
    this request is reused, without its large columns. `columns`: read only these."""
    rows = Participant.objects.select_for_update()
    p = (rows.only(*columns) if columns else rows).get(pk=participant.pk)
    p.study = participant.study
    return p


def _locked(participant: Participant, expected: str, page: str) -> Participant:
    """Re-read the participant under a row lock and check it is still on `expected`."""
    p = _lock(participant)
    if p.state != expected:
        raise StaleSubmission(
            _(
                "The %(page)s page was already submitted; your stored answers are kept. "
                "Please continue below."
            )
            % {"page": page}
        )
    return p


def _close_visit(p: Participant, page: str, *, timed_out: bool = False) -> datetime:
    """Record leaving a page; returns the time it was left."""
    now = timezone.now()
    PageVisit.objects.filter(participant=p, page=page, exited_at__isnull=True).update(
        exited_at=now, timeout_happened=timed_out
    )
    return now


def _entered_at(p: Participant, page: str) -> datetime | None:
    """When the participant first saw the page (its visit's entry), if recorded."""
    return (
        PageVisit.objects.filter(participant=p, page=page)
        .values_list("entered_at", flat=True)
        .first()
    )


def page_visit_enter(*, participant: Participant, page: str) -> None:
    """Record the first entry to a page; reloads count as views, not new entries.

    One statement on both backends (`INSERT ... ON CONFLICT DO UPDATE`, SQLite 3.24+ and
    PostgreSQL), in place of an update and then an insert in its own transaction: a page
    view is a short write, not a transaction that queues for the database's write lock."""
    qn = connection.ops.quote_name
    table = qn(PageVisit._meta.db_table)
    col = {f.name: qn(f.column) for f in PageVisit._meta.concrete_fields}
    sql = (
        f"INSERT INTO {table} ({col['participant']}, {col['page']}, {col['entered_at']}, "
        f"{col['views']}, {col['timeout_happened']}) VALUES (%s, %s, %s, 1, %s) "
        f"ON CONFLICT ({col['participant']}, {col['page']}) "
        f"DO UPDATE SET {col['views']} = {table}.{col['views']} + 1"
    )
    entered = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(sql, [participant.pk, page, entered, False])


def screening_submit(
    *, participant: Participant, answers: Mapping[str, Any], then: str
) -> Participant:
    """Store the answers; ineligible -> screened out; in a full quota cell -> quota full;
    else on to `then`.

    With quotas, the Study row is locked first (the same order as arrivals), so two
    participants cannot both take the last place of a cell.
    """
    qs = screening.questions(participant.study.schema)
    quotas = assignment.screening_quotas(participant.study)  # the cells; counted below
    with transaction.atomic():
        if quotas:
            Study.objects.select_for_update().filter(pk=participant.study_id).only("pk").first()
        p = _locked(participant, S.SCREENING, "screening")
        p.screening = dict(answers)
        for key, value in screening.group_attributes(qs, answers).items():
            setattr(p, key, value)
        if not screening.is_eligible(qs, answers):
            _end(p, S.SCREENED_OUT)
        elif quotas and not p.is_test and assignment.full_quota(p, quotas) is not None:
            _end(p, S.QUOTA_FULL)
        else:
            _advance(p, then)
        p.save()
        _close_visit(p, "screening")
    return p


def _step(
    participant: Participant,
    expected: str,
    page: str,
    then: str,
    record: Callable[[Participant], None] | None = None,
    timed_out: bool = False,
) -> Participant:
    """Move a participant from the page they are on (`expected`) to the next state, storing
    what the page recorded; a stale or repeated submission changes nothing."""
    with transaction.atomic():
        p = _locked(participant, expected, page)
        if record is not None:
            record(p)
        _advance(p, then)
        p.save()
        _close_visit(p, page, timed_out=timed_out)
    return p


def _record_consent(p: Participant) -> None:
    p.consent_version = p.study.consent_version
    p.consented_at = timezone.now()


def consent_give(*, participant: Participant, then: str) -> Participant:
    return _step(participant, S.CONSENT, "consent", then, _record_consent)


def scenario_continue(
    *, participant: Participant, then: str, timed_out: bool = False
) -> Participant:
    return _step(participant, S.SCENARIO, "scenario", then, timed_out=timed_out)


def questionnaire_submit(
    *,
    participant: Participant,
    answers: Mapping[str, Any],
    order: Sequence[str],
    then: str,
    timed_out: bool = False,
) -> Participant:
    """Store a questionnaire page's answers and the order it showed them in, then go on to
    `then` (or end with failed attention when an attention item fails under the END rule, or
    with the outcome of an item's end rule: a screener). Answers are checked again here,
    against the items shown to this participant; a bad one is refused and nothing is stored."""
    state = participant.state
    page = questionnaire.PAGE_OF_STATE.get(state)
    if page is None:
        raise StaleSubmission(_("That page was already submitted; your stored answers are kept."))
    items = survey_logic.shown(participant, questionnaire.items_for(participant.study, page))
    stored, checks = _item_answers(items, answers, order, timed_out=timed_out)
    ends = survey_logic.ending(participant, items, stored)
    with transaction.atomic():
        p = _locked(participant, state, state)
        p.answers = {**(p.answers or {}), **stored}
        p.item_orders = {**(p.item_orders or {}), page: list(order)}
        if attention.record(p, checks, {c["key"]: stored[c["key"]] for c in checks}):
            _end(p, S.FAILED_ATTENTION)
        elif ends:
            _end(p, ends)
        else:
            _advance(p, then)
        p.save()
        _close_visit(p, state, timed_out=timed_out)
    return p


def _item_answers(
    items: Sequence[Question],
    answers: Mapping[str, Any],
    order: Sequence[str],
    *,
    timed_out: bool = False,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A page's answers to the researcher's items it shows, checked (a bad one or an altered
    list of items is refused: nothing is stored), and the attention checks among them."""
    try:
        stored = questionnaire.answers_check(items, answers, timed_out=timed_out)
    except questionnaire.AnswerError as exc:
        raise RejectedSubmission(str(exc)) from None
    if sorted(order) != sorted(q.key for q in items):
        raise RejectedSubmission(
            _("The form was altered and could not be used; nothing was stored.")
        )
    return stored, [c for c in questionnaire.attention_of(items) if c["key"] in stored]


def _selection_seed(study: Study, participant_id: int) -> int:
    return (int(study.seed) * 1_000_003 + int(participant_id)) % (2**62)


def _attention_answers(
    study: Study, page: str, answers: Mapping[str, Any] | None
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The page's checks and their answers as codes; a missing or unlisted answer is refused
    before anything is stored (a check's prompt in the page's language)."""
    checks = attention.checks_for_page(study, page, translation.get_language() or "")
    given = dict(answers or {})
    out: dict[str, int] = {}
    for check in checks:
        try:
            code = answer_check(attention_question(check), given.get(check["key"]))
        except AnswerError:
            code = None
        if code is None:
            raise RejectedSubmission(
                _("Please answer the question: %(prompt)s") % {"prompt": check["prompt"]}
            )
        out[check["key"]] = code
    return checks, out


def _decision_model(study: Study) -> Any:
    """The study's decision model; the stored model file (a deferred column) is read only
    for an uploaded model, never for a built-in one."""
    blob = study.decision_model_blob if study.decision_model == "uploaded" else None
    return engine_objects.model_of(
        study.decision_model, blob=blob, schema=engine_objects.schema_of(study.schema)
    )


def profile_codes(schema: Any, values: Mapping[str, int | float]) -> np.ndarray:
    """The profile's answers as codes, every item answered with a listed option, else a
    RejectedSubmission naming the items (nothing is stored)."""
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
    return codes


#: the decision stored for an approved profile that goes on under the study's hypothetical
#: rejection ("suppose the model had declined..."): never recorded as a rejection
HYPOTHETICAL = "hypothetical"


def profile_submit(
    *,
    participant: Participant,
    values: Mapping[str, int | float],
    attention_answers: Mapping[str, Any] | None = None,
    then: str = S.DECISION,
) -> Participant:
    """Store the profile and the model's decision; a rejected profile goes on to `then` (the
    decision page) with its plans' generation queued. An approved one takes the study's
    approved branch: the approved ending, or the hypothetical rejection (decision
    `hypothetical`), which goes on as a rejected one does. A failed attention check under
    the study's END rule ends with its outcome."""
    from studyapp.generation.tasks import queue_generation

    schema = engine_objects.schema_of(participant.study.schema)
    codes = profile_codes(schema, values)
    checks, answers = _attention_answers(participant.study, "profile", attention_answers)
    # the decision before the transaction: it holds the database's writer lock on SQLite,
    # and the income it needs was fixed at the screening, before this page
    model = _decision_model(participant.study)
    rejected = rejects_factual(model, codes, participant.income_jpy)
    with transaction.atomic():
        p = _locked(participant, S.PROFILE, "profile")
        if p.income_jpy != participant.income_jpy:  # cannot happen after the screening
            rejected = rejects_factual(model, codes, p.income_jpy)
        ends_approved = not rejected and p.study.approved_branch != HYPOTHETICAL
        decision = "rejected" if rejected else "approved" if ends_approved else HYPOTHETICAL
        Profile.objects.create(
            participant=p, values={k: values[k] for k in schema.keys}, decision=decision
        )
        _close_visit(p, "profile")
        if attention.record(p, checks, answers):
            _end(p, S.FAILED_ATTENTION)
            p.save()
            return p
        if ends_approved:
            _end(p, S.APPROVED)
            p.save()
            return p
        # the decision page (the worker generates the plans meanwhile and leaves them there)
        p.state = then
        p.generation = G.QUEUED
        p.generation_queued_at = timezone.now()
        p.selection_seed = _selection_seed(p.study, p.pk)
        p.save()
        transaction.on_commit(partial(queue_generation, p.pk))  # never raises: see sweeper
    return p


def decision_continue(*, participant: Participant, then: str) -> Participant:
    """Leave the decision page: to the plans when they are ready (the evaluations, or the
    no-recourse ending when none could be found), else to `then` (the waiting page). A
    Continue before the study's minimum time on the page is refused and nothing is stored;
    the visit is closed with the time the participant spent on the page."""
    minimum = int((participant.study.page_min_seconds or {}).get("decision", 0) or 0)
    if minimum:
        entered = _entered_at(participant, "decision")
        seen = (timezone.now() - entered).total_seconds() if entered is not None else 0.0
        if seen < minimum:
            raise RejectedSubmission(
                _("Please read this page first: you can continue in %(n)s seconds.")
                % {"n": max(1, math.ceil(minimum - seen))}
            )
    with transaction.atomic():
        p = _locked(participant, S.DECISION, "decision")
        if p.generation == G.DONE:
            p.state = S.EVALUATING
        elif p.generation in (G.EMPTY, G.FAILED):
            _end(p, S.NO_RECOURSE)  # the worker found no plan: credited as completed
        else:
            _advance(p, then)
        p.save()
        _close_visit(p, "decision")
    return p


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
    answers: Mapping[str, Any] | None = None,
    item_order: Sequence[str] = (),
    plans: Sequence[Any] | None = None,
    then: str,
) -> Evaluation:
    """Store one evaluation of the participant's current recourse (with the answers to the
    study's own evaluation-page items and the order they were shown in); after the last one
    the participant goes on to `then` (the questionnaire after the evaluations, or the
    completed ending).

    An attention check on this plan's page is recorded with it; when the study's END rule
    applies, the evaluation is kept and the participant ends with failed attention.

    Everything is checked before the transaction, which then holds only the writes (on
    SQLite it holds the database's one writer lock): under the participant's row lock it
    re-checks what another request could have changed meanwhile (their state; this plan
    rated by a double submit, which the evaluation's unique plan refuses without a read). `plans`: the participant's plans with their `done` flag when
    the caller has just read them (`selectors.participant_plans`).
    """
    for name, value in (("acceptance", acceptance), ("action", action)):
        if not isinstance(value, int) or not 1 <= value <= 7:
            raise RejectedSubmission(
                _("%(name)s must be a whole number from 1 to 7.") % {"name": name}
            )
    if plans is None:
        plans = selectors.participant_plans(participant=participant)
    recourse = next((r for r in plans if str(r.pk) == str(recourse_id)), None)
    if recourse is None:
        raise RejectedSubmission(
            _("This answer does not belong to any of your plans; nothing was stored.")
        )
    already = StaleSubmission(
        _(
            "Your answers to plan %(position)s were already saved and are kept. "
            "Please continue below."
        )
        % {"position": recourse.position}
    )
    if recourse.done:
        raise already
    finished = StaleSubmission(_("This study is already finished; your answers are kept."))
    if participant.state != S.EVALUATING:
        raise finished
    current = next((r for r in plans if not r.done), None)
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
    study = participant.study
    page = f"evaluation-{recourse.position}"
    checks, attention_given = _attention_answers(study, page, attention_answers)
    items = survey_logic.shown(participant, questionnaire.items_for(study, "evaluation"))
    extra, item_checks = _item_answers(items, answers or {}, item_order)
    checks = [*checks, *item_checks]
    attention_given.update({c["key"]: extra[c["key"]] for c in item_checks})
    last = all(r.done or r.pk == recourse.pk for r in plans)
    entered = _entered_at(participant, page)
    with transaction.atomic():
        p = _lock(participant, EVALUATION_COLUMNS)
        if p.state != S.EVALUATING:
            raise finished
        left = _close_visit(p, page)
        seconds = (left - entered).total_seconds() if entered is not None else 0.0
        try:  # a plan has one evaluation (unique): a second, stored meanwhile, is refused here
            evaluation = Evaluation.objects.create(
                recourse=recourse,
                participant=p,
                acceptance=acceptance,
                acceptance_why=acceptance_why,
                impossible=sorted(impossible, key=recourse.changed.index),
                action=action,
                action_why=action_why,
                answers=extra,
                item_order=list(item_order),
                seconds_on_page=max(0.0, seconds),
            )
        except IntegrityError:
            raise already from None  # leaves the transaction: the visit's close undone too
        ends = attention.record(p, checks, attention_given)
        if ends:
            _end(p, S.FAILED_ATTENTION)
        elif last:
            _advance(p, then)
        p.save()
    return evaluation
