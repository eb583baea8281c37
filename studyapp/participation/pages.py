"""The participant flow as a sequence of pages (oTree style): one small class per page, with
its form and a template of the same name. The participant's state picks the page; a page's
`submit` calls one service and never touches the ORM itself.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django import forms
from django.utils.translation import gettext as _

from studyapp.generation import engine
from studyapp.models import Participant
from studyapp.participation import attention, recruitment, screening, selectors, services
from studyapp.participation.forms import (
    ConsentForm,
    ContinueForm,
    attention_answers,
    evaluation_form,
    localized_schema,
    profile_form,
    screening_form,
)

S = Participant.State


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
        services.consent_give(participant=self.participant)


class ScenarioPage(Page):
    name = "scenario"

    def form(self, data: Any = None) -> forms.Form:
        return ContinueForm(data)

    def submit(self, form: forms.Form) -> None:
        services.scenario_continue(participant=self.participant)


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
        services.profile_submit(
            participant=self.participant, values=values, attention_answers=checks
        )


class WaitingPage(Page):
    name = "waiting"
    records_visit = False

    def context(self) -> dict[str, Any]:
        return {"progress": selectors.participant_progress(participant=self.participant)}


class EvaluationPage(Page):
    name = "evaluation"

    def __init__(self, participant: Participant) -> None:
        super().__init__(participant)
        self.recourse = selectors.participant_current_recourse(participant=participant)
        self.schema = engine.schema_of(self.schema_texts)
        self.total = participant.recourses.count()

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


PAGES: dict[str, type[Page]] = {
    S.SCREENING: ScreeningPage,
    S.CONSENT: ConsentPage,
    S.SCENARIO: ScenarioPage,
    S.PROFILE: ProfilePage,
    S.WAITING: WaitingPage,
    S.EVALUATING: EvaluationPage,
    S.COMPLETED: CompletionPage,
    S.SCREENED_OUT: ScreenedOutPage,
    S.NO_RECOURSE: NoRecoursePage,
    S.QUOTA_FULL: QuotaFullPage,
    S.FAILED_ATTENTION: FailedAttentionPage,
    S.WITHDRAWN: WithdrawnPage,
}

#: page keys a genuine (if stale) form can carry; anything else was altered
KNOWN_KEYS = {cls.name for cls in PAGES.values()}


def page_for(participant: Participant) -> Page:
    return PAGES[participant.state](participant)


_ORDER = ["screening", "consent", "scenario", "profile", "waiting", "evaluation"]


def is_known_key(key: str) -> bool:
    if key in KNOWN_KEYS:
        return True
    head, _, tail = key.partition("-")
    return head == "evaluation" and tail.isdigit() and 1 <= int(tail) <= 100


def page_rank(key: str) -> tuple[int, int]:
    """Order of pages in the flow (end pages last), to tell a stale form from an early one."""
    head, _, tail = key.partition("-")
    if head in _ORDER:
        return _ORDER.index(head), int(tail) if tail.isdigit() else 0
    return len(_ORDER), 0
