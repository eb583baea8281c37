"""Issue 31: blind coding per study, questionnaire answers as units, edit / undo of codings,
edit / delete of codes, resolutions and memos, each with its history (on the pages and in
the export), server-side paging, and bad settings refused with nothing changed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from studyapp.coding import answer_services, services
from studyapp.coding.models import Code, CodeChange, Coding, CodingChange, CodingSettings
from studyapp.export import export_study
from studyapp.models import Participant, Recourse, Study
from tests.studyapp.coding.conftest import client_of, evaluations

TEXT_ITEMS = [
    {"key": "after", "page": "post", "type": "text", "text": {"en": "Anything to add?"},
     "required": False},
    {"key": "more", "page": "evaluation", "type": "text", "text": {"en": "More?"},
     "required": False},
]  # fmt: skip


def _url(study: Study, tail: str = "") -> str:
    return f"/console/studies/{study.slug}/coding/{tail}"


def _units(page: str) -> list[str]:
    return re.findall(r'class="answer-row" data-unit="([^"]+)"', page)


def _with_text_items(study: Study) -> list[Participant]:
    """The study's own text items, answered after the plans by every participant."""
    study.questions = TEXT_ITEMS
    study.save(update_fields=["questions"])
    people = list(Participant.objects.filter(study=study).order_by("pk"))
    for i, p in enumerate(people):
        p.answers = {"after": f"the bank should explain more ({i})"}
        p.save(update_fields=["answers"])
    return people


def test_blind_coder_sees_no_method_until_all_finish(
    coded_study: Study, people: dict[str, Any]
) -> None:
    evs = evaluations(coded_study)
    Recourse.objects.filter(participant__study=coded_study).update(method="wachter_unique")
    a, pi = client_of(people["a"]), client_of(people["pi"])
    page = a.get(_url(coded_study, "answers/")).content.decode()
    assert "wachter_unique" not in page and 'id="blind-recourse"' in page
    assert 'name="method"' not in page and 'name="strategy"' not in page
    assert "wachter_unique" in pi.get(_url(coded_study, "answers/")).content.decode()
    r = a.get(_url(coded_study, "quotes/"), {"field": "acceptance_why"})
    assert r.status_code == 400 and "strategy" in r.content.decode()
    # a study not coded blind shows the method to its coders from the start
    services.settings_save(study=coded_study, blind=False, show_plan=True, fields=[],
                           by=people["pi"])  # fmt: skip
    assert "wachter_unique" in a.get(_url(coded_study, "answers/")).content.decode()
    # blind again, and the study hides the plan too
    services.settings_save(study=coded_study, blind=True, show_plan=False, fields=[],
                           by=people["pi"])  # fmt: skip
    page = a.get(_url(coded_study, "answers/")).content.decode()
    assert "wachter_unique" not in page
    assert f"sparsity {evs[0].recourse.sparsity}" not in page
    r = a.get(_url(coded_study, "answers/"), {"sparsity_min": 1})
    assert r.status_code == 400 and "sparsity_min" in r.content.decode()
    for who in ("a", "b"):
        services.coder_finish(study=coded_study, coder=people[who])
    page = a.get(_url(coded_study, "answers/")).content.decode()
    assert "wachter_unique" in page and f"sparsity {evs[0].recourse.sparsity}" in page


def test_questionnaire_answers_are_coded_and_fields_chosen(
    coded_study: Study, people: dict[str, Any]
) -> None:
    participants = _with_text_items(coded_study)
    a = client_of(people["a"])
    units = _units(a.get(_url(coded_study, "answers/"), {"field": "q_after"}).content.decode())
    assert units == [f"p{p.pk}:q_after" for p in participants]
    r = a.post(_url(coded_study, "answers/"), {"unit": units[0], "codes": ["cost"]})
    assert r.status_code == 302
    coding = Coding.objects.get(coder=people["a"], field="q_after")
    assert coding.evaluation is None and coding.participant_id == participants[0].pk
    # only the chosen fields are coded; an unknown field is refused by name, nothing changed
    services.settings_save(study=coded_study, blind=True, show_plan=True, fields=["q_after"],
                           by=people["pi"])  # fmt: skip
    listed = _units(a.get(_url(coded_study, "answers/")).content.decode())
    assert set(listed) == {f"p{p.pk}:q_after" for p in participants}
    pi = client_of(people["pi"])
    before = CodingSettings.objects.get(study=coded_study).fields
    r = pi.post(_url(coded_study), {"action": "settings", "blind": "on", "coded_fields": ["nope"]})
    assert r.status_code == 400
    assert "unknown coding field &#x27;nope&#x27;" in r.content.decode()
    assert CodingSettings.objects.get(study=coded_study).fields == before
    ev = evaluations(coded_study)[1]
    r = a.post(_url(coded_study, "answers/"), {"unit": f"{ev.recourse_id}:acceptance_why"})
    assert r.status_code == 400 and "is not coded in" in r.content.decode()
    r = a.post(_url(coded_study, "answers/"), {"unit": f"{ev.recourse_id}:q_after"})
    assert r.status_code == 400 and "names no such answer" in r.content.decode()
    # a filter on the recourse keeps plan-page answers only; the rating filter too
    assert _units(pi.get(_url(coded_study, "answers/"), {"rating_min": 1}).content.decode()) == []


def test_edit_undo_and_code_changes_keep_their_history(
    coded_study: Study, people: dict[str, Any], tmp_path: Path
) -> None:
    ev = evaluations(coded_study)[0]
    unit = f"{ev.recourse_id}:acceptance_why"
    a = client_of(people["a"])
    post = lambda data: a.post(_url(coded_study, "answers/"), {"unit": unit, **data})  # noqa: E731
    assert post({"codes": ["cost"]}).status_code == 302
    assert post({"action": "edit", "codes": ["effort"]}).status_code == 302
    r = post({"action": "edit", "codes": ["effort"]})
    assert r.status_code == 400 and "already has exactly these codes" in r.content.decode()
    assert post({"action": "undo"}).status_code == 302
    assert not Coding.objects.filter(coder=people["a"]).exists()
    assert post({"codes": ["cost", "effort"]}).status_code == 302
    assert post({"action": "memo", "memo": "mentions money twice"}).status_code == 302
    history = CodingChange.objects.filter(unit=unit).order_by("pk")
    assert [(h.action, h.codes) for h in history] == [
        ("coded", "cost"), ("edited", "effort"), ("undone", ""), ("coded", "cost;effort")
    ]  # fmt: skip
    page = a.get(_url(coded_study, "answers/")).content.decode()
    assert page.count('class="change"') == 4 and "mentions money twice" in page
    # b is blind: neither a's codes, history nor memo
    b_page = client_of(people["b"]).get(_url(coded_study, "answers/")).content.decode()
    assert "mentions money twice" not in b_page and 'class="change"' not in b_page
    # the codebook: an edit and a delete, each kept; the deleted code leaves a's coding
    services.code_edit(study=coded_study, name="cost", definition="money", example="",
                       by=people["pi"])  # fmt: skip
    n = services.code_delete(study=coded_study, name="effort", by=people["pi"])
    assert n == 1 and not Code.objects.filter(study=coded_study, name="effort").exists()
    assert [c.name for c in Coding.objects.get(coder=people["a"]).codes.all()] == ["cost"]
    assert [(e.code, e.action) for e in CodeChange.objects.filter(study=coded_study)] == [
        ("cost", "added"), ("effort", "added"), ("cost", "edited"), ("effort", "deleted")
    ]  # fmt: skip
    # resolutions keep their history
    for who in ("a", "b"):
        services.coder_finish(study=coded_study, coder=people[who])
    for codes, note in ((["cost"], "first"), ([], "second thoughts")):
        answer_services.final_code_save(study=coded_study, by=people["pi"], unit=unit,
                                         code_names=codes, note=note)  # fmt: skip
    export_study(study=coded_study, out=tmp_path)
    final = pd.read_csv(tmp_path / "final_code_history.csv", keep_default_na=False)
    assert list(final["note"]) == ["first", "second thoughts"]
    assert list(final["codes"]) == ["cost", ""]
    coding = pd.read_csv(tmp_path / "coding_history.csv", keep_default_na=False)
    assert list(coding["action"]) == ["coded", "edited", "undone", "coded", "code_deleted"]
    assert list(coding["codes"]) == ["cost", "effort", "", "cost;effort", "cost"]
    codes = pd.read_csv(tmp_path / "code_history.csv", keep_default_na=False)
    assert list(codes["action"]) == ["added", "added", "edited", "deleted"]
    memos = pd.read_csv(tmp_path / "coding_memos.csv")
    assert list(memos["text"]) == ["mentions money twice"]
    book = pd.read_csv(tmp_path / "codebook.csv")
    assert {"coding_history.csv", "code_history.csv", "final_code_history.csv",
            "coding_memos.csv"} <= set(book["file"])  # fmt: skip


def test_history_left_out_of_the_export_while_coders_are_blind(
    coded_study: Study, people: dict[str, Any], tmp_path: Path
) -> None:
    ev = evaluations(coded_study)[0]
    answer_services.coding_save(study=coded_study, coder=people["a"],
                                unit=f"{ev.recourse_id}:acceptance_why", code_names=["cost"])  # fmt: skip
    export_study(study=coded_study, out=tmp_path)
    assert pd.read_csv(tmp_path / "coding_history.csv").empty
    assert len(pd.read_csv(tmp_path / "code_history.csv")) == 2  # the codebook is not blind


def test_paging_reads_the_page_in_the_database(coded_study: Study, people: dict[str, Any]) -> None:
    """12 answers, 5 a page: three pages, together every answer once, in export order."""
    from studyapp.coding import browse

    seen = []
    for n in (1, 2, 3):
        page = browse.page_of(coded_study, people["pi"], {}, n, 5)
        assert page.paginator.count == 12 and page.paginator.num_pages == 3
        seen += [r.answer.unit for r in page.object_list]
    assert seen == [f"{e.recourse_id}:acceptance_why" for e in evaluations(coded_study)]
    uncoded = browse.units(coded_study, people["a"], {"show": "uncoded"})
    answer_services.coding_save(study=coded_study, coder=people["a"], unit=seen[3],
                                code_names=[])  # fmt: skip
    assert uncoded.count() == 12
    left = browse.units(coded_study, people["a"], {"show": "uncoded"})
    assert left.count() == 11 and seen[3] not in [a.unit for a in left[0:11]]
