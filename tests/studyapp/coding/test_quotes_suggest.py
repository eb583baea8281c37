"""Exemplar quotes downloaded from the console (CSV, Markdown, LaTeX) hold exactly the
answers of the chosen final code and rating band; suggested groups are labelled as a
suggestion and stored nowhere."""

from __future__ import annotations

import io
from typing import Any

import pandas as pd

from studyapp.coding import answer_services
from studyapp.coding.models import Code, Coding, FinalCode
from studyapp.models import Study
from tests.studyapp.coding.conftest import client_of, evaluations


def test_quotes_of_a_code_and_a_rating_band(coded_study: Study, people: dict[str, Any]) -> None:
    evs = evaluations(coded_study)
    for ev in evs[:4]:
        answer_services.final_code_save(study=coded_study, by=people["pi"], unit=f"{ev.recourse_id}:acceptance_why", code_names=["cost"])  # fmt: skip
    pi = client_of(people["pi"])
    url = f"/console/studies/{coded_study.slug}/coding/quotes/"
    r = pi.get(url, {"codes": ["cost"], "format": "csv", "download": "1"})
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    table = pd.read_csv(io.BytesIO(r.content))
    expected = sorted(ev.acceptance_why for ev in evs[:4])
    assert sorted(table["quote"]) == expected
    assert set(table["participant"]) == {ev.participant_id for ev in evs[:4]}
    assert list(table["rating"]) == [
        next(ev.acceptance for ev in evs if ev.acceptance_why == q) for q in table["quote"]
    ]
    band = [ev for ev in evs if 2 <= ev.acceptance <= 4]
    r = pi.get(url, {"rating_min": 2, "rating_max": 4, "field": "acceptance_why",
                     "format": "md", "download": "1"})  # fmt: skip
    md = r.content.decode()
    assert r["Content-Type"].startswith("text/markdown") and md.startswith("| participant |")
    assert len(md.strip().splitlines()) == 2 + len(band)
    r = pi.get(url, {"codes": ["cost"], "format": "tex", "download": "1"})
    assert b"\\begin{longtable}" in r.content
    r = pi.get(url, {"rating_min": 5})
    assert r.status_code == 400 and "needs both rating_min and rating_max" in r.content.decode()
    r = pi.get(url, {"codes": ["effort"]})  # no answer has the final code 'effort'
    assert r.status_code == 400 and "no answer has the code" in r.content.decode()


def test_suggested_groups_are_a_suggestion_only(coded_study: Study, people: dict[str, Any]) -> None:
    before = (Code.objects.count(), Coding.objects.count(), FinalCode.objects.count())
    c = client_of(people["a"])
    url = f"/console/studies/{coded_study.slug}/coding/suggest/"
    r = c.get(url, {"field": "acceptance_why", "k": 3})
    page = r.content.decode()
    assert r.status_code == 200 and "Suggestion (not a code)" in page
    assert page.count("suggestion-") >= 12  # every answer in some group
    assert (Code.objects.count(), Coding.objects.count(), FinalCode.objects.count()) == before
    r = c.get(url, {"field": "action_why", "k": 3})  # every action_why is empty
    assert r.status_code == 400 and "fewer than two distinct answers" in r.content.decode()
    assert c.get(url, {"field": "acceptance_why", "k": 1}).status_code == 400
