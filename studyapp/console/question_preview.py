"""The console's preview of a study's own questions: each page's items rendered with the
participant pages' form fields (`participation.question_forms`), in the study's language,
so a researcher sees what participants will see before walking the study, and under an item
with survey logic when it is shown and when its answer ends the study."""

from __future__ import annotations

from django.utils import translation
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from studyapp.definition import logic
from studyapp.definition.questions import Question
from studyapp.models import Study
from studyapp.participation import questionnaire, survey_logic
from studyapp.participation.forms import PAGE_RENDERER
from studyapp.participation.question_forms import FIELD_PREFIX, question_fields

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
            fields = question_fields(items, study.language)
            form = type("Preview", (forms.Form,), fields)(
                auto_id=f"preview-{page}-%s", renderer=PAGE_RENDERER  # the pages' widgets
            )
            table = survey_logic.sources_of(study, study.language)
            shown = format_html_join(
                "",
                '<div class="preview-item">{}{}</div>',
                (
                    (form[f"{FIELD_PREFIX}{q.key}"].as_field_group(), _logic_note(q, table))
                    for q in items
                ),
            )
            randomised = " (shown in a random order)" if page in study.random_item_order else ""
            parts.append(format_html("<h4>{}{}</h4>{}", title, randomised, shown))
    if not parts:
        return format_html("<p>{}</p>", "No questions of your own yet.")
    return format_html('<div id="questions-preview">{}</div>', SafeString("".join(parts)))


def _logic_note(q: Question, table: dict[str, logic.Source]) -> SafeString:
    """When the item is shown and when it ends the study, in words (nothing: always shown)."""
    words = logic.rules_in_words(q, table)
    if not words:
        return SafeString("")
    said = "; ".join(w[0].upper() + w[1:] for w in words)
    return format_html('<p class="preview-logic" id="logic-{}">{}.</p>', q.key, said)
