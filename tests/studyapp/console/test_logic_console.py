"""Survey logic in the console: a condition on a later question refused on the change page
with its path and nothing stored; the preview of the questions says when each is shown and
when its answer ends the study."""

from __future__ import annotations

import html
import json

from studyapp.models import Study
from tests.studyapp.console.conftest import change_data, change_url


def _q(key: str, page: str, **extra: object) -> dict[str, object]:
    return {"key": key, "page": page, "type": "single", "text": {"en": f"{key}?"},
            "options": {"en": ["Yes", "No"]}, **extra}  # fmt: skip


def _when(question: str, value: object) -> dict[str, object]:
    return {"all": [{"question": question, "value": value}]}


def test_logic_is_checked_and_previewed_in_the_console(draft, owner_client):
    later = [_q("car", "pre", show_if=_when("q.fair", 1)), _q("fair", "post")]
    r = owner_client.post(change_url(draft), change_data(draft, questions=json.dumps(later)))
    page = html.unescape(r.content.decode())
    assert r.status_code == 200
    assert (
        "questions[0].show_if.all[0].question: q.fair is answered later (on the post page) "
        "than this question (on the pre page)" in page
    )
    assert Study.objects.get(pk=draft.pk).questions == []

    good = [
        _q("student", "pre", end_if=_when("q.student", 1)),
        _q("car", "pre"),
        _q("fair", "post", show_if={"all": [{"question": "q.car", "value": 1}],
                                    "any": [{"question": "screening.age", "op": "<",
                                             "value": 30}]}),  # fmt: skip
    ]
    r = owner_client.post(change_url(draft), change_data(draft, questions=json.dumps(good)))
    assert r.status_code == 302, r.content.decode()[:2000]
    page = html.unescape(owner_client.get(change_url(draft)).content.decode())
    assert (
        '<p class="preview-logic" id="logic-student">Ends the study (screened_out) when '
        "q.student is 1 (Yes).</p>" in page
    )
    assert (
        '<p class="preview-logic" id="logic-fair">Shown only when q.car is 1 (Yes) and '
        "screening.age is below 30.</p>" in page
    )
    assert 'id="logic-car"' not in page  # always shown: nothing to say
