"""The outcome table (`definition.outcomes`): one record per ending, every end state of the
export has one, and one template shows each as its record says (the texts, the study's own
text where it has one, the code under its id, the panel's return link)."""

from __future__ import annotations

import html
from typing import Any

from django.test import Client

from analysis import contract
from studyapp.definition import outcomes
from studyapp.definition.study_config import TEXT_KEYS
from studyapp.models import Participant, Study
from tests.studyapp.conftest import make_study, start

S = Participant.State


def test_one_ending_per_end_state_of_the_export() -> None:
    assert set(outcomes.BY_STATE) == set(contract.STATE_OUTCOME)
    assert len(outcomes.BY_STATE) == len(outcomes.ENDINGS)
    for field in ("page", "code_id"):
        values = [getattr(e, field) for e in outcomes.ENDINGS]
        assert len(set(values)) == len(values), field
    assert {e.text_key for e in outcomes.ENDINGS} - {""} <= set(TEXT_KEYS)
    assert outcomes.BY_STATE[S.NO_RECOURSE].credited_as == "completed"
    assert outcomes.BY_STATE[S.WITHDRAWN].outcome == "withdrew"
    assert set(outcomes.ON_THE_WAY) == set(S.values) - set(outcomes.BY_STATE)
    assert S.QUESTIONS_POST in outcomes.ON_THE_WAY and not outcomes.is_end(S.WAITING)


def _end_page(study: Study, state: str) -> str:
    walker = start(Client(), study)
    Participant.objects.filter(code=walker.participant.code).update(
        state=state, completion_code=outcomes.end_code(study, state)
    )
    r = walker.get()
    assert r.status_code == 200
    return r.content.decode()


def test_every_ending_shows_its_record(transactional_db: Any) -> None:
    study = make_study()
    codes = {
        outcome: {
            "code": f"C-{outcome}",
            "redirect_url": f"https://panel.example/{outcome}?c={{code}}",
        }
        for outcome in study.outcome_codes
    }
    own = {e.text_key for e in outcomes.ENDINGS}  # the defaults show, then the study's own
    plain = {k: v for k, v in study.texts["en"].items() if k not in own}
    ours = {**plain, **{key: f"Our own <b>{key}</b>." for key in own if key}}
    for texts, defaults in (({"en": plain}, True), ({"en": ours}, False)):
        Study.objects.filter(pk=study.pk).update(outcome_codes=codes, texts=texts)
        study.refresh_from_db()
        for ending in outcomes.ENDINGS:
            body = _end_page(study, ending.state)
            code = f"C-{ending.credited_as}"
            assert f"<title>{ending.title}</title>" in body, ending.state
            assert f"<h1>{ending.heading}</h1>" in body, ending.state
            assert f'{ending.code_label}: <strong id="{ending.code_id}">{code}</strong>' in body
            link = f"https://panel.example/{ending.credited_as}?c={code}"
            assert f'href="{link}"' in body and f'content="5;url={link}"' in body, ending.state
            assert ('class="text rejection"' in body) == ending.shows_rejection, ending.state
            assert 'id="withdraw-link"' not in body, ending.state
            default = html.escape(ending.text, quote=False)
            own_text = f"<p>Our own &lt;b&gt;{ending.text_key}&lt;/b&gt;.</p>"
            shows_default = defaults or not ending.text_key
            assert (default in body) == shows_default, ending.state
            assert (own_text in body) != shows_default, ending.state
