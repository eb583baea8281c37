"""The participant flow as a sequence of pages (oTree style): one small class per page, with
its form and a template of the same name. The participant's state picks the page; a page's
`submit` calls one service and never touches the ORM itself.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

from django import forms
from django.utils import timezone
from django.utils.translation import gettext as _

from studyapp.generation import engine
from studyapp.models import PageVisit, Participant
from studyapp.participation import (
    attention,
    collection,
    flow,
    questionnaire,
    recruitment,
    release,
    screening,
    selectors,
    services,
    waiting,
    withdrawal,
)
from studyapp.participation.forms import (
    ConsentForm,
    ContactForm,
    ContinueForm,
    attention_answers,
    evaluation_form,
    localized_schema,
    profile_form,
    screening_form,
)
from studyapp.participation.question_forms import question_answers, question_fields
from studyapp.studies.page_settings import TIMED_PAGES

S = Participant.State
#: a page that says it timed out is believed this many seconds early (clock and network)
TIMEOUT_SLACK_S = 2


class Page:
    name: ClassVar[str]
    #: pages with an answer to submit record entry/exit paradata
    records_visit: ClassVar[bool] = True
    #: end pages (an outcome with its code) offer no withdraw link and take no form
    is_end: ClassVar[bool] = False

    def __init__(self, participant: Participant) -> None:
        self.participant = participant
        self.study = participant.study
        self.texts = participant.study.page_texts
        #: the schema as participants read it (labels in the study's language when the
        #: schema carries them)
        self.schema_texts = localized_schema(self.study.schema, self.study.language)

    @property
    def key(self) -> str:
        return self.name

    @property
    def template(self) -> str:
        return f"studyapp/{self.name}.html"

    def form(self, data: Any = None) -> forms.Form | None:
        return None

    @property
    def timeout_s(self) -> int | None:
        """Seconds before this page submits itself (None: it never does)."""
        if self.name not in TIMED_PAGES:
            return None
        return (self.study.page_timeouts or {}).get(self.name)

    @property
    def timeout_left(self) -> int | None:
        """Seconds left before the page submits itself (counted from its first view)."""
        if self.timeout_s is None:
            return None
        visit = PageVisit.objects.filter(participant=self.participant, page=self.key).first()
        spent = (timezone.now() - visit.entered_at).total_seconds() if visit else 0.0
        return max(0, int(self.timeout_s - spent))

    def timed_out(self, data: Any) -> bool:
        """Whether a submission is the page's own time-out: it says so, and the time has
        really passed since the participant first saw the page."""
        if self.timeout_s is None or data is None or data.get("timeout_happened") != "1":
            return False
        visit = PageVisit.objects.filter(participant=self.participant, page=self.key).first()
        if visit is None:
            return False
        due = visit.entered_at + timedelta(seconds=self.timeout_s - TIMEOUT_SLACK_S)
        return timezone.now() >= due

    def initial_form(self) -> forms.Form | None:
        form = self.form()
        if form is not None:
            form.initial["page"] = self.key
        return form

    def context(self) -> dict[str, Any]:
        return {}

    def submit(self, form: forms.Form) -> None:
        raise services.FlowError("There is nothing to submit on this page.")


class ScreeningPage(Page):
    name = "screening"

    def form(self, data: Any = None) -> forms.Form:
        return screening_form(screening.questions(self.schema_texts), data)

    def submit(self, form: forms.Form) -> None:
        answers = {k: v for k, v in form.cleaned_data.items() if k != "page"}
        services.screening_submit(participant=self.participant, answers=answers)


class ConsentPage(Page):
    name = "consent"

    def form(self, data: Any = None) -> forms.Form:
        return ConsentForm(data)

    def context(self) -> dict[str, Any]:
        return {"consent_version": self.study.consent_version}

    def submit(self, form: forms.Form) -> None:
        if form.declined:  # type: ignore[attr-defined]
            withdrawal.participant_decline(participant=self.participant)
        else:
            services.consent_give(participant=self.participant)


class QuestionnairePage(Page):
    """The study's own items before the scenario (`pre`) or after the evaluations (`post`)."""

    template = "studyapp/questionnaire.html"

    def __init__(self, participant: Participant) -> None:
        super().__init__(participant)
        page = questionnaire.PAGE_OF_STATE[self.name]
        self.items = questionnaire.ordered(self.study, participant.pk, page, self.name)

    def form(self, data: Any = None) -> forms.Form:
        required = not self.timed_out(data)
        fields = question_fields(self.items, self.study.language, required=required)
        return type("QuestionnaireForm", (ContinueForm,), fields)(data)

    def submit(self, form: forms.Form) -> None:
        services.questionnaire_submit(
            participant=self.participant,
            answers=question_answers(form.cleaned_data),
            order=[q.key for q in self.items],
            timed_out=self.timed_out(form.data),
        )


class QuestionsPrePage(QuestionnairePage):
    name = "questions_pre"


class QuestionsPostPage(QuestionnairePage):
    name = "questions_post"


class ScenarioPage(Page):
    name = "scenario"

    def form(self, data: Any = None) -> forms.Form:
        return ContinueForm(data)

    def submit(self, form: forms.Form) -> None:
        services.scenario_continue(
            participant=self.participant, timed_out=self.timed_out(form.data)
        )


class ProfilePage(Page):
    name = "profile"

    def form(self, data: Any = None) -> forms.Form:
        return profile_form(
            engine.schema_of(self.schema_texts),
            data,
            checks=attention.checks_for_page(self.study, "profile"),
        )

    def submit(self, form: forms.Form) -> None:
        checks = attention_answers(form.cleaned_data)
        values = {
            k: v
            for k, v in form.cleaned_data.items()
            if k != "page" and not k.startswith(attention.FIELD_PREFIX)
        }
        if self.study.kind == "pool_collection":
            collection.collected_profile_submit(
                participant=self.participant, values=values, attention_answers=checks
            )
            return
        p = services.profile_submit(
            participant=self.participant, values=values, attention_answers=checks
        )
        release.participant_schedule(participant=p, now=timezone.now())


class WaitingPage(Page):
    name = "waiting"
    records_visit = False

    def context(self) -> dict[str, Any]:
        progress = waiting.waiting_check(participant=self.participant)
        return {"progress": progress, "timeout_s": self.study.waiting_timeout_s}


class UnderReviewPage(Page):
    """Delayed release: the application is under review; the participant leaves with their
    link (and may give an address to get it by e-mail, with a notice at the release)."""

    name = "under_review"
    records_visit = False

    def form(self, data: Any = None) -> forms.Form:
        return ContactForm(data)

    def context(self) -> dict[str, Any]:
        return {"due": self.participant.release_due_at}

    def submit(self, form: forms.Form) -> None:
        email = form.cleaned_data.get("email") or ""
        if not email:
            raise services.StaleSubmission(
                _("Nothing to send: you can close this page and come back with your link.")
            )
        try:
            release.contact_set(
                participant=self.participant,
                email=email,
                link=release.link_of(self.participant),
            )
        except release.ReleaseError as exc:
            raise services.RejectedSubmission(str(exc)) from None


class ReportPage(Page):
    """Delayed release, second session: the rejection report, then the evaluations."""

    name = "report"

    def form(self, data: Any = None) -> forms.Form:
        return ContinueForm(data)

    def submit(self, form: forms.Form) -> None:
        try:
            release.participant_return(participant=self.participant, now=timezone.now())
        except release.ReleaseError as exc:
            raise services.FlowError(str(exc)) from None


class EvaluationPage(Page):
    name = "evaluation"

    def __init__(self, participant: Participant) -> None:
        super().__init__(participant)
        plans = selectors.participant_plans(participant=participant)  # one query for both
        self.plans = plans
        self.recourse = next((r for r in plans if not r.done), None)
        self.schema = engine.schema_of(self.schema_texts)
        self.total = len(plans)
        self.items = questionnaire.ordered(self.study, participant.pk, "evaluation", self.key)

    @property
    def key(self) -> str:
        return f"evaluation-{self.recourse.position}" if self.recourse else self.name

    def form(self, data: Any = None) -> forms.Form:
        form = evaluation_form(
            schema=self.schema,
            recourse=self.recourse,
            texts=self.schema_texts.get("evaluation", {}),
            data=data,
            checks=attention.checks_for_page(self.study, self.key),
            extra=question_fields(self.items, self.study.language),
        )
        form.initial["recourse"] = self.recourse.pk
        return form

    def context(self) -> dict[str, Any]:
        profile = self.participant.profile.values
        changed = set(self.recourse.changed)
        rows = []
        for item in self.schema.items:
            now, ideal = profile[item.key], self.recourse.values[item.key]
            rows.append(
                {
                    "key": item.key,
                    "label": item.label,
                    "current": item.label_of(now),
                    "ideal": item.label_of(ideal),
                    "changed": item.key in changed,
                }
            )
        intro = str(self.texts.get("plan_intro") or _("Plan {position} of {total}."))
        return {
            "rows": rows,
            "position": self.recourse.position,
            "total": self.total,
            "intro": intro.replace("{position}", str(self.recourse.position)).replace(
                "{total}", str(self.total)
            ),
        }

    def submit(self, form: forms.Form) -> None:
        data = form.cleaned_data
        impossible = [
            key for key in self.recourse.changed if data.get(f"impossible_{key}") == "yes"
        ]
        services.evaluation_submit(
            participant=self.participant,
            recourse_id=data["recourse"],
            acceptance=data["acceptance"],
            acceptance_why=data["acceptance_why"],
            impossible=impossible,
            action=data["action"],
            action_why=data["action_why"],
            attention_answers=attention_answers(data),
            answers=question_answers(data),
            item_order=[q.key for q in self.items],
            plans=self.plans,
        )


class EndPage(Page):
    """An outcome: its code, and the panel's return link when the study has one."""

    records_visit = False
    is_end = True

    def context(self) -> dict[str, Any]:
        outcome = recruitment.outcome_of(self.participant)
        code = self.participant.completion_code
        return {
            "outcome": outcome,
            "code": code,
            "redirect_url": recruitment.outcome_link(self.study, outcome, code),
        }


class CompletionPage(EndPage):
    name = "completion"


class ScreenedOutPage(EndPage):
    name = "screened_out"


class NoRecoursePage(EndPage):
    name = "no_recourse"


class QuotaFullPage(EndPage):
    name = "quota_full"


class FailedAttentionPage(EndPage):
    name = "failed_attention"


class WithdrawnPage(EndPage):
    name = "withdrawn"


class DeclinedPage(EndPage):
    name = "declined"


class ExpiredPage(EndPage):
    name = "expired"


PAGES: dict[str, type[Page]] = {
    S.SCREENING: ScreeningPage,
    S.CONSENT: ConsentPage,
    S.QUESTIONS_PRE: QuestionsPrePage,
    S.SCENARIO: ScenarioPage,
    S.PROFILE: ProfilePage,
    S.WAITING: WaitingPage,
    S.EVALUATING: EvaluationPage,
    S.QUESTIONS_POST: QuestionsPostPage,
    S.COMPLETED: CompletionPage,
    S.SCREENED_OUT: ScreenedOutPage,
    S.NO_RECOURSE: NoRecoursePage,
    S.QUOTA_FULL: QuotaFullPage,
    S.FAILED_ATTENTION: FailedAttentionPage,
    S.WITHDRAWN: WithdrawnPage,
    S.DECLINED: DeclinedPage,
    S.EXPIRED: ExpiredPage,
}

#: page keys a genuine (if stale) form can carry; anything else was altered
KNOWN_KEYS = {cls.name for cls in PAGES.values()} | {UnderReviewPage.name, ReportPage.name}


def page_for(participant: Participant) -> Page:
    """The participant's page: their state's, except in a delayed-release study, where
    held plans show "under review" and released ones start at the report."""
    if release.is_held(participant):
        return UnderReviewPage(participant)
    if release.awaits_return(participant):
        return ReportPage(participant)
    return PAGES[participant.state](participant)


def is_known_key(key: str) -> bool:
    if key in KNOWN_KEYS:
        return True
    head, _, tail = key.partition("-")
    return head == "evaluation" and tail.isdigit() and 1 <= int(tail) <= 100


def page_rank(participant: Participant, key: str) -> tuple[int, int]:
    """Order of pages in the participant's study (end pages last), to tell a stale form from
    an early one."""
    return flow.page_rank(participant.study, key)
