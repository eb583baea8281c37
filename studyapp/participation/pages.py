"""The participant's pages (oTree style): one small class per page, with its form and a
template of the same name, saying when it is shown (`is_displayed`: whether the study has the
page; `is_current`: whether it is the page of a participant where they are). Their order is
declared once, in `flow.SEQUENCE`; a page does not know its neighbours: the flow tells it
which state follows it (`then`). A page's `submit` calls one service and never touches the
ORM itself.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, ClassVar

from django import forms
from django.utils import timezone
from django.utils.translation import gettext as _

from studyapp.definition import engine_objects as engine
from studyapp.definition import outcomes, screening
from studyapp.definition.pages import TIMED_PAGES
from studyapp.models import PageVisit, Participant, Profile, Study
from studyapp.participation import (
    attention,
    collection,
    questionnaire,
    release,
    selectors,
    services,
    survey_logic,
    waiting,
    waves,
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

S = Participant.State
#: a page that says it timed out is believed this many seconds early (clock and network)
TIMEOUT_SLACK_S = 2


def _shows_plans(study: Study) -> bool:
    """Whether the study shows recourses (a pool-collection study only collects profiles)."""
    return study.kind != "pool_collection"


class Page:
    #: the page's key (what its form posts) and template name
    name: ClassVar[str]
    #: the participant state the page is shown in (None: pages that decide for themselves)
    state: ClassVar[str | None] = None
    #: pages with an answer to submit record entry/exit paradata
    records_visit: ClassVar[bool] = True
    #: end pages (an outcome with its code) offer no withdraw link and take no form
    is_end: ClassVar[bool] = False

    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        """Whether the study's flow has this page."""
        return True

    @classmethod
    def is_current(cls, participant: Participant) -> bool:
        """Whether this is the page of a participant where they are now."""
        return participant.state == cls.state

    def __init__(self, participant: Participant, then: str = "") -> None:
        self.participant = participant
        #: the state that follows this page in the study's flow (`flow.after`)
        self.then = then
        #: the state that follows any state of the study's flow, set by `flow.page_for`,
        #: for a page that moves a participant past pages of its own (the waves')
        self.follows: Callable[[str], str] = lambda state: ""
        self.study = participant.study
        self.texts = participant.page_texts  # placeholders filled from their design
        #: the participant's language (one of the study's), for every text of the page
        self.language = participant.page_language
        #: the schema as participants read it (labels in their language when the schema
        #: carries them)
        self.schema_texts = localized_schema(self.study.schema, self.language)
        # their earlier answers piped in (`{q.age}`); the templates read the participant's
        self.texts = survey_logic.piped_texts(participant, self.texts, self.language)
        participant.page_texts = self.texts

    @property
    def key(self) -> str:
        return self.name

    def passes_by(self) -> Participant | None:
        """A page with nothing to show this participant moves them on by itself (a
        questionnaire whose items their answers all hide); returns them moved, or None."""
        return None

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
    state = S.SCREENING

    def form(self, data: Any = None) -> forms.Form:
        return screening_form(screening.questions(self.schema_texts), data)

    def submit(self, form: forms.Form) -> None:
        answers = {k: v for k, v in form.cleaned_data.items() if k != "page"}
        services.screening_submit(participant=self.participant, answers=answers, then=self.then)


class ConsentPage(Page):
    """Consent first: before any screening answer (studies made since consent came first)."""

    name = "consent"
    state = S.CONSENT

    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        return study.page_order != "screening_first"

    def form(self, data: Any = None) -> forms.Form:
        return ConsentForm(data)

    def context(self) -> dict[str, Any]:
        return {"consent_version": self.study.consent_version}

    def submit(self, form: forms.Form) -> None:
        if form.declined:  # type: ignore[attr-defined]
            withdrawal.participant_decline(participant=self.participant)
        else:
            services.consent_give(participant=self.participant, then=self.then)


class LateConsentPage(ConsentPage):
    """Consent after the screening: studies made before consent came first keep that order
    (``page_order = "screening_first"``)."""

    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        return study.page_order == "screening_first"


class QuestionnairePage(Page):
    """The study's own items before the scenario (`pre`) or after the evaluations (`post`);
    there only when the study defines items for it."""

    template = "studyapp/questionnaire.html"
    #: the items' page in the study's questions
    items_page: ClassVar[str]

    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        return bool(questionnaire.items_for(study, cls.items_page))

    def __init__(self, participant: Participant, then: str = "") -> None:
        super().__init__(participant, then)
        self.items = survey_logic.page_items(participant, self.items_page, self.name, self.language)

    def passes_by(self) -> Participant | None:
        """Every item of the page hidden by this participant's answers: on to the next."""
        if self.items or not questionnaire.items_for(self.study, self.items_page):
            return None
        try:
            return services.questionnaire_submit(
                participant=self.participant, answers={}, order=[], then=self.then
            )
        except services.StaleSubmission:  # a second request moved them on meanwhile
            return selectors.participant_get(code=self.participant.code)

    def form(self, data: Any = None) -> forms.Form:
        required = not self.timed_out(data)
        fields = question_fields(self.items, self.language, required=required)
        return type("QuestionnaireForm", (ContinueForm,), fields)(data)

    def submit(self, form: forms.Form) -> None:
        services.questionnaire_submit(
            participant=self.participant,
            answers=question_answers(form.cleaned_data),
            order=[q.key for q in self.items],
            then=self.then,
            timed_out=self.timed_out(form.data),
        )


class QuestionsPrePage(QuestionnairePage):
    name = "questions_pre"
    state = S.QUESTIONS_PRE
    items_page = "pre"


class QuestionsPostPage(QuestionnairePage):
    name = "questions_post"
    state = S.QUESTIONS_POST
    items_page = "post"


class ScenarioPage(Page):
    name = "scenario"
    state = S.SCENARIO

    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        return _shows_plans(study)

    def form(self, data: Any = None) -> forms.Form:
        return ContinueForm(data)

    def submit(self, form: forms.Form) -> None:
        services.scenario_continue(
            participant=self.participant, then=self.then, timed_out=self.timed_out(form.data)
        )


class ProfilePage(Page):
    """The profile; in a recourse study its submission leads to the decision page, while the
    worker generates the plans (a pool-collection study goes on to its next page)."""

    name = "profile"
    state = S.PROFILE

    def form(self, data: Any = None) -> forms.Form:
        return profile_form(
            engine.schema_of(self.schema_texts),
            data,
            checks=attention.checks_for_page(self.study, "profile", self.language),
        )

    def submit(self, form: forms.Form) -> None:
        checks = attention_answers(form.cleaned_data)
        values = {
            k: v
            for k, v in form.cleaned_data.items()
            if k != "page" and not k.startswith(attention.FIELD_PREFIX)
        }
        if not _shows_plans(self.study):
            collection.collected_profile_submit(
                participant=self.participant,
                values=values,
                attention_answers=checks,
                then=self.then,
            )
            return
        p = services.profile_submit(
            participant=self.participant, values=values, attention_answers=checks, then=self.then
        )
        release.participant_schedule(participant=p, now=timezone.now())
        waves.wave_open(participant=p, now=timezone.now())


class DecisionPage(Page):
    """The model's decision: the study's rejection (or, for an approved profile under the
    hypothetical branch, "suppose the model had declined..."), read while the worker
    generates the plans; its Continue opens once they are ready, not before the study's
    minimum time on the page (`page_min_seconds`). Its visit is recorded like any page's."""

    name = "decision"
    state = S.DECISION

    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        return _shows_plans(study)

    def form(self, data: Any = None) -> forms.Form:
        return ContinueForm(data)

    @property
    def min_seconds(self) -> int:
        return int((self.study.page_min_seconds or {}).get(self.name, 0) or 0)

    def context(self) -> dict[str, Any]:
        progress = waiting.waiting_check(participant=self.participant)
        try:  # read with the participant (`selectors.participant_get`)
            decision = self.participant.profile.decision
        except Profile.DoesNotExist:
            decision = ""
        spent = 0.0
        if self.min_seconds:
            visit = PageVisit.objects.filter(participant=self.participant, page=self.key).first()
            spent = (timezone.now() - visit.entered_at).total_seconds() if visit else 0.0
        return {
            "progress": progress,
            "timeout_s": self.study.waiting_timeout_s,
            "hypothetical": decision == services.HYPOTHETICAL,
            "wait_s": max(0, int(self.min_seconds - spent + 0.999)),
        }

    def submit(self, form: forms.Form) -> None:
        services.decision_continue(participant=self.participant, then=self.then)


class WaitingPage(Page):
    """The plans are being generated; the worker moves the participant on (to the
    evaluations, or to the no-recourse ending)."""

    name = "waiting"
    state = S.WAITING
    records_visit = False

    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        return _shows_plans(study)

    def context(self) -> dict[str, Any]:
        progress = waiting.waiting_check(participant=self.participant)
        return {"progress": progress, "timeout_s": self.study.waiting_timeout_s}


class UnderReviewPage(Page):
    """Delayed release: the application is under review; the participant leaves with their
    link (and may give an address to get it by e-mail, with a notice at the release)."""

    name = "under_review"
    records_visit = False

    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        return release.is_delayed(study)

    @classmethod
    def is_current(cls, participant: Participant) -> bool:
        """Held plans (waiting, ready, or none found) show "under review" until released."""
        return release.is_held(participant)

    def form(self, data: Any = None) -> forms.Form:
        return ContactForm(data)

    def context(self) -> dict[str, Any]:
        return {
            "due": self.participant.release_due_at,
            **release.first_session_outcome(self.participant),
        }

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

    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        return release.is_delayed(study)

    @classmethod
    def is_current(cls, participant: Participant) -> bool:
        return release.awaits_return(participant)

    def form(self, data: Any = None) -> forms.Form:
        return ContinueForm(data)

    def submit(self, form: forms.Form) -> None:
        try:
            release.participant_return(participant=self.participant, now=timezone.now())
        except release.ReleaseError as exc:
            raise services.FlowError(str(exc)) from None


class EvaluationPage(Page):
    """One page per plan (`evaluation-<position>`), in their display order."""

    name = "evaluation"
    state = S.EVALUATING

    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        return _shows_plans(study)

    def __init__(self, participant: Participant, then: str = "") -> None:
        super().__init__(participant, then)
        plans = selectors.participant_plans(participant=participant)  # one query for both
        self.plans = plans
        self.recourse = next((r for r in plans if not r.done), None)
        self.schema = engine.schema_of(self.schema_texts)
        self.total = len(plans)
        self.items = survey_logic.page_items(participant, "evaluation", self.key, self.language)

    @property
    def key(self) -> str:
        return f"evaluation-{self.recourse.position}" if self.recourse else self.name

    def form(self, data: Any = None) -> forms.Form:
        form = evaluation_form(
            schema=self.schema,
            recourse=self.recourse,
            texts=self.schema_texts.get("evaluation", {}),
            data=data,
            checks=attention.checks_for_page(self.study, self.key, self.language),
            extra=question_fields(self.items, self.language),
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
        shown = self.recourse.position - self.plans[0].position + 1  # a later wave's too
        return {
            "rows": rows,
            "position": shown,
            "total": self.total,
            "intro": intro.replace("{position}", str(shown)).replace("{total}", str(self.total)),
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
            then=self.then,
        )


class EndPage(Page):
    """Every ending (its record in the outcome table): the texts, the code, and the panel's
    return link when the study has one. Last in the flow, as the completed ending."""

    name = "end"
    state = S.COMPLETED
    template = "studyapp/end.html"
    records_visit = False
    is_end = True

    @classmethod
    def is_current(cls, participant: Participant) -> bool:
        return outcomes.is_end(participant.state)

    def __init__(self, participant: Participant, then: str = "") -> None:
        super().__init__(participant, then)
        self.ending = outcomes.BY_STATE[participant.state]

    @property
    def key(self) -> str:
        return self.ending.page

    def context(self) -> dict[str, Any]:
        outcome = outcomes.outcome_of(self.participant)
        code = self.participant.completion_code
        return {
            "ending": self.ending,
            "outcome": outcome,
            "code": code,
            "redirect_url": outcomes.outcome_link(self.study, outcome, code),
        }
