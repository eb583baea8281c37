"""Form fields of researcher-defined items (`definition.questions`), in the page's language.

Each item becomes one field named ``q__<key>``, built by its type's entry in
`definition.question_types` (the builder screening questions and attention checks use too),
whose check is the one the service applies again, so the page and the service say the same
thing about a bad answer. On a page that timed out, no answer is required.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import forms

from studyapp.definition.question_types import QUESTION_TYPES
from studyapp.definition.questions import Question

#: form field name prefix, apart from schema items and attention checks
FIELD_PREFIX = "q__"


def question_field(q: Question, language: str, *, required: bool = True) -> forms.Field:
    """The field of one item (`required` False: a timed-out page needs no answer)."""
    return QUESTION_TYPES[q.type].field(q, language, q.required and required)


def question_fields(
    items: Sequence[Question], language: str, *, required: bool = True
) -> dict[str, forms.Field]:
    return {f"{FIELD_PREFIX}{q.key}": question_field(q, language, required=required) for q in items}


def question_answers(cleaned: Mapping[str, Any]) -> dict[str, Any]:
    """Item key -> answer from a form's cleaned data (unanswered items left out)."""
    return {
        k[len(FIELD_PREFIX) :]: v
        for k, v in cleaned.items()
        if k.startswith(FIELD_PREFIX) and v not in (None, "", [])
    }
