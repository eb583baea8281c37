"""The multi-wave study's own pages (`participation.waves`), declared in `flow.SEQUENCE` after
the evaluations: which plan the participant will follow, the page they leave with until the
next wave, and the report of what they changed when they come back.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from markupsafe import Markup, escape

from studyapp.definition import engine_objects as engine
from studyapp.models import Participant, Recourse, Study
from studyapp.participation import release, services, wave_changes, waves
from studyapp.participation.forms import ContactForm, PageForm
from studyapp.participation.pages import Page

S = Participant.State
#: the changes form's "no change" choice and field prefixes
NO_CHANGE = ""
ITEM_PREFIX, EFFORT_PREFIX = "item_", "effort_"


def plan_reminder(item: Any, value: float) -> SafeString:
    """The reminder "Your plan: <value>" of an item the followed plan changes, so the
    participant need not remember their plan: the item's help text, under its label and
    describing its input (``aria-describedby``). The answer still starts at "no change" (they
    report what they did, not what was planned). Help text is written unescaped, so the value
    is escaped here."""
    text = Markup(escape(_("Your plan: %(value)s")))
    value_html = format_html("<strong>{}</strong>", item.label_of(value))
    return format_html('<span class="plan-reminder">{}</span>', text % {"value": value_html})


class WavePage(Page):
    @classmethod
    def is_displayed(cls, study: Study) -> bool:
        return study.kind == "multi_wave"


class WaveFollowPage(WavePage):
    """After a wave's plans: which of them the participant will follow (or none)."""

    name = "wave_follow"
    state = S.WAVE_FOLLOW

    def plans(self) -> list[Recourse]:
        wave = waves.current_wave(self.participant)
        first = wave.first_position if wave else 1
        return list(self.participant.recourses.filter(position__gte=first).order_by("position"))

    def form(self, data: Any = None) -> forms.Form:
        plans = self.plans()
        choices = [
            (str(r.pk), _("Plan %(n)s") % {"n": r.position - plans[0].position + 1}) for r in plans
        ]
        choices.append(("none", _("None of them")))
        field = forms.ChoiceField(
            label=gettext_lazy("Which plan will you follow until you apply again?"),
            choices=choices,
            widget=forms.RadioSelect,
        )
        return type("FollowForm", (PageForm,), {"followed": field})(data)

    def context(self) -> dict[str, Any]:
        return {"wave": self.participant.wave, "last": waves.is_last_wave(self.participant)}

    def passes_by(self) -> Participant | None:
        """In the last wave there is nothing to follow up: on past the waves."""
        if not waves.is_multi_wave(self.study) or not waves.is_last_wave(self.participant):
            return None
        try:
            return waves.follow_submit(
                participant=self.participant, recourse_id=None, now=timezone.now(),
                then=self.then, last=self.follows(S.WAVE_CHANGES),
            )  # fmt: skip
        except services.StaleSubmission:
            return Participant.objects.get(pk=self.participant.pk)

    def submit(self, form: forms.Form) -> None:
        chosen = form.cleaned_data["followed"]
        waves.follow_submit(
            participant=self.participant,
            recourse_id=None if chosen == "none" else int(chosen),
            now=timezone.now(),
            then=self.then,
            last=self.follows(S.WAVE_CHANGES),
        )


class WaveAwayPage(WavePage):
    """Between waves: the participant leaves with their link (and may leave an address for
    a notice), until their next wave opens."""

    name = "wave_away"
    state = S.WAVE_AWAY
    records_visit = False

    @classmethod
    def is_current(cls, participant: Participant) -> bool:
        return participant.state == S.WAVE_AWAY and not waves.is_open(participant, timezone.now())

    def form(self, data: Any = None) -> forms.Form:
        return ContactForm(data)

    def context(self) -> dict[str, Any]:
        wave = waves.current_wave(self.participant)
        due = wave.next_due_at if wave else None
        return {
            "next_wave": self.participant.wave + 1,
            "due_text": release.local_time(self.study, due) if due else "",
        }

    def submit(self, form: forms.Form) -> None:
        email = form.cleaned_data.get("email") or ""
        if not email:
            raise services.StaleSubmission(
                _("Nothing to send: you can close this page and come back with your link.")
            )
        try:
            waves.contact_set(participant=self.participant, email=email)
        except waves.WaveError as exc:
            raise services.RejectedSubmission(str(exc)) from None


class WaveChangesPage(WavePage):
    """Back for the next wave: per profile item the new value or "no change" (and the
    effort, when the study asks), with the announcement of the model's change if any."""

    name = "wave_changes"
    state = S.WAVE_CHANGES

    @classmethod
    def is_current(cls, participant: Participant) -> bool:
        return participant.state == S.WAVE_CHANGES or waves.is_open(participant, timezone.now())

    def __init__(self, participant: Participant, then: str = "") -> None:
        super().__init__(participant, then)
        self.schema = engine.schema_of(self.schema_texts)
        self.wave = waves.current_wave(participant)
        self.effort = waves.is_multi_wave(self.study) and waves.settings_of(self.study).effort

    def planned(self) -> dict[str, float]:
        if self.wave is None or self.wave.followed_id is None:
            return {}
        plan = Recourse.objects.filter(pk=self.wave.followed_id).first()
        return {k: float(plan.values[k]) for k in plan.changed} if plan else {}

    def form(self, data: Any = None) -> forms.Form:
        fields: dict[str, forms.Field] = {}
        before = self.wave.values if self.wave else {}
        planned = self.planned()
        for item in self.schema.items:
            now = before.get(item.key)
            label = _("%(item)s (now: %(value)s)") % {
                "item": item.label, "value": item.label_of(now) if now is not None else "",
            }  # fmt: skip
            attrs = {"data-before": f"{float(now):g}" if now is not None else ""}
            reminder = plan_reminder(item, planned[item.key]) if item.key in planned else ""
            if item.key in planned:
                attrs["data-planned"] = f"{planned[item.key]:g}"
            if item.is_numeric:
                fields[ITEM_PREFIX + item.key] = forms.FloatField(
                    label=label, required=False, widget=forms.NumberInput(attrs=attrs),
                    help_text=format_html("{} {}", reminder, _("Leave empty for no change."))
                    if reminder else _("Leave empty for no change."),
                )  # fmt: skip
            else:
                options = [(str(i), o) for i, o in enumerate(item.options, start=1)]
                fields[ITEM_PREFIX + item.key] = forms.TypedChoiceField(
                    label=label, required=False, coerce=int, empty_value=None,
                    choices=[(NO_CHANGE, _("No change")), *options],
                    widget=forms.Select(attrs=attrs), help_text=reminder,
                )  # fmt: skip
            if self.effort:
                fields[EFFORT_PREFIX + item.key] = forms.IntegerField(
                    label=_("Effort of this change (1 = none, 7 = very much); only if changed"),
                    required=False, min_value=1, max_value=7,
                )  # fmt: skip
        return type("ChangesForm", (PageForm,), fields)(data)

    def context(self) -> dict[str, Any]:
        _policy, announce = waves.policy_of(self.study, self.participant.condition)
        text = announce.get(self.language) or announce.get(self.study.language) or ""
        return {"next_wave": self.participant.wave + 1, "announcement": text}

    def submit(self, form: forms.Form) -> None:
        data = form.cleaned_data
        reported = {k: data.get(ITEM_PREFIX + k) for k in self.schema.keys}
        efforts = {k: data.get(EFFORT_PREFIX + k) for k in self.schema.keys}
        wave_changes.changes_submit(
            participant=self.participant,
            reported=reported,
            efforts=efforts,
            now=timezone.now(),
        )
