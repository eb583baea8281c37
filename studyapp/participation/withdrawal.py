"""Withdrawal by the participant and deletion on a researcher's request.

Both run in one transaction under the participant's row lock, so a withdrawal racing a
page submission or a recourse task either happens entirely before or entirely after it.
What stays is the `Withdrawal` log (who, when, at which page) — never the answers. Both
erase through the retention machinery (`studyapp.retention.service.erase`), which writes a
deletion receipt per data class it found, as the retention schedule does.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from studyapp.models import DeletionReceipt, PageVisit, Participant, Profile, Recourse, Withdrawal
from studyapp.participation import selectors
from studyapp.participation.services import StaleSubmission
from studyapp.retention.service import WITHDRAWAL_CLASSES, erase

S = Participant.State

#: participant fields that hold answers or panel data; cleared on declining consent
_CLEARED: dict[str, Any] = {
    "screening": dict,
    "age": None,
    "gender": "",
    "income_band": "",
    "income_jpy": None,
    "attention": dict,
    "attention_failures": 0,
    "panel": dict,
    "answers": dict,
    "item_orders": dict,
}
#: cleared besides when consent is declined: nothing of the person stays but the count
_CLEARED_ON_DECLINE: dict[str, Any] = {
    "recruitment_id": "",
    "condition": "",
    "assignment": "",
    "consent_version": "",
    "consented_at": None,
    "flagged": False,
    "flag_reason": "",
}


def _erase_answers(p: Participant) -> None:
    """Delete everything a participant who declines consent answered (evaluations go with
    their recourses); nothing was kept under a consent, so no receipt is written."""
    Recourse.objects.filter(participant=p).delete()  # cascades to evaluations
    Profile.objects.filter(participant=p).delete()
    PageVisit.objects.filter(participant=p).delete()
    for name, empty in _CLEARED.items():
        setattr(p, name, empty() if callable(empty) else empty)


def participant_withdraw(*, participant: Participant, page: str = "") -> Withdrawal:
    """The participant withdrew: erase their answers, keep a bare WITHDRAWN row with the
    study's `withdrew` code (their end page and panel redirect), log it. Idempotent: a
    second call returns the first call's log entry and changes nothing.

    Erased with a receipt per class: answers, free text, paradata, the panel parameters
    and the contact address. The panel id (`recruitment_id`) is kept so that the same panel
    member arriving again resumes the withdrawn row instead of starting the study anew.
    """
    with transaction.atomic():
        p = (
            Participant.objects.select_for_update(of=("self",))
            .select_related("study")
            .get(pk=participant.pk)
        )
        if p.state == S.WITHDRAWN:
            previous = Withdrawal.objects.filter(
                study=p.study, participant_number=p.pk, by=Withdrawal.By.PARTICIPANT
            ).first()
            if previous is not None:
                return previous
        page = page or selectors.participant_page_key(participant=p)
        now = timezone.now()
        erase(
            study=p.study,
            participant_ids=[p.pk],
            classes=WITHDRAWAL_CLASSES,
            by=DeletionReceipt.By.WITHDRAWAL,
            rule=f"withdrawn by the participant (page {page[:40] or '?'})",
            as_of=now,
            keep_panel_id=True,
        )
        p.refresh_from_db()
        p.state = S.WITHDRAWN
        p.completion_code = p.study.outcome_codes.get("withdrew", {}).get("code", "")
        p.finished_at = now
        p.save()
        return Withdrawal.objects.create(
            study=p.study, participant_number=p.pk, by=Withdrawal.By.PARTICIPANT, page=page[:40]
        )


def participant_decline(*, participant: Participant) -> Participant:
    """The participant declined consent (on the consent page, whichever page order): a bare
    DECLINED row stays, so it is counted and their link shows the declined-consent end page
    with its code; everything they entered (screening answers included), their panel id and
    their page visits are deleted. Idempotent for a repeated click."""
    with transaction.atomic():
        p = (
            Participant.objects.select_for_update(of=("self",))
            .select_related("study")
            .get(pk=participant.pk)
        )
        if p.state == S.DECLINED:
            return p
        if p.state != S.CONSENT:
            raise StaleSubmission(
                _("That page was already submitted; your stored answers are kept.")
            )
        _erase_answers(p)
        for name, empty in _CLEARED_ON_DECLINE.items():
            setattr(p, name, empty)
        p.state = S.DECLINED
        p.completion_code = p.study.outcome_codes.get("declined_consent", {}).get("code", "")
        p.finished_at = timezone.now()
        p.save()
        return p


def participant_delete(*, participant: Participant, by_user: Any) -> Withdrawal:
    """A researcher deletes a participant on request: the row and all of it goes; the log
    (by=researcher, by_user, the page they were on) and a receipt of the whole participant
    stay."""
    with transaction.atomic():
        p = (
            Participant.objects.select_for_update(of=("self",))
            .select_related("study")
            .get(pk=participant.pk)
        )
        page = "" if p.state == S.WITHDRAWN else selectors.participant_page_key(participant=p)
        log = Withdrawal.objects.create(
            study=p.study,
            participant_number=p.pk,
            by=Withdrawal.By.RESEARCHER,
            by_user=by_user if getattr(by_user, "pk", None) is not None else None,
            page=page[:40],
        )
        erase(
            study=p.study,
            participant_ids=[p.pk],
            classes=["participant"],
            by=DeletionReceipt.By.RESEARCHER,
            rule="deleted on the participant's request",
            as_of=timezone.now(),
            by_user=by_user,
        )
        return log
