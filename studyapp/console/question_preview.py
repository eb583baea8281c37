"""The console's preview of a study's own questions: each page's items rendered with the
participant pages' form fields (`participation.question_forms`), in the study's language,
so a researcher sees what participants will see before walking the study."""

from __future__ import annotations

from django.utils import translation
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from studyapp.models import Study
from studyapp.participation import questionnaire
from studyapp.participation.question_forms import question_fields

PAGES = {
    "pre": "Questionnaire before the scenario",
    "evaluation": "On each plan's page (after the ratings)",
    "post": "Questionnaire after the evaluations",
}


def render(study: Study) -> SafeString:
    """HTML of every page that has items (a note when none has)."""
    from django import forms

    parts = []
    with translation.override(study.language):
        for page, title in PAGES.items():
            items = questionnaire.items_for(study, page)
            if not items:
                continue
            form = type("Preview", (forms.Form,), question_fields(items, study.language))(
                auto_id=f"preview-{page}-%s"
            )
            shown = format_html_join(
                "", '<div class="preview-item">{}</div>', ((f.as_field_group(),) for f in form)
            )
            randomised = " (shown in a random order)" if page in study.random_item_order else ""
            parts.append(format_html("<h4>{}{}</h4>{}", title, randomised, shown))
    if not parts:
        return format_html("<p>{}</p>", "No questions of your own yet.")
    return format_html('<div id="questions-preview">{}</div>', SafeString("".join(parts)))
