"""The console a researcher new to the platform meets: inherited screening rules said to be
the reference study's, human titles in the structured editor, a question form per type,
lists where a value must name the study's own condition or page, live settings read as
forms, and a home page that leads with the studies."""

from __future__ import annotations

import html
import json
import re
from typing import Any

from django.contrib.auth.models import Permission
from django.test import Client

from studyapp.definition.json_schema import editor_schema
from studyapp.definition.study_config import SETTINGS
from studyapp.models import Condition, Study
from studyapp.studies import services, updates
from tests.studyapp.console.conftest import change_data, change_url, client_for, researcher

INHERITED = "Inherited default of the reference car-loan study"
#: the rules the built-in car-loan schema brings (tests/studyapp/conftest.SCHEMA)
REFERENCE_RULES = ("occupation", "income", "car_purchase", "loans")


def _page(client: Client, study: Study) -> str:
    r = client.get(change_url(study))
    assert r.status_code == 200
    return r.content.decode()


def _fieldset(page: str, title: str) -> str:
    start = page.index(f">{title}</h2>")
    return page[start : page.index("</fieldset>", start)]


# --- inherited eligibility rules --------------------------------------------------------------
def test_inherited_rules_are_said_to_be_the_reference_studys(draft, owner_client):
    section = _fieldset(_page(owner_client, draft), "Eligibility (screening)")
    assert "4 screening rules (occupation, income, car_purchase, loans) came with" in section
    assert section.count(INHERITED) == len(REFERENCE_RULES)
    # gender has no rule: its help says what a tick means, not that it is inherited
    gender = section[section.index('id="id_eligible_gender"') :]
    assert gender.index("Eligible answers (none ticked: everyone)") < gender.index(INHERITED)
    # behaviour unchanged: the inherited codes are still ticked
    assert re.search(r'name="eligible_occupation" value="1"[^>]*checked', section)


def test_a_rule_the_researcher_changed_is_no_longer_inherited(draft, owner_client):
    data = change_data(draft, eligible_occupation=["1", "2", "6"])
    r = owner_client.post(change_url(draft), data)
    assert r.status_code == 302, r.content.decode()[:2000]
    assert updates.eligibility_of(Study.objects.get(pk=draft.pk).schema)["occupation"] == [1, 2, 6]
    section = _fieldset(_page(owner_client, draft), "Eligibility (screening)")
    assert "3 screening rules (income, car_purchase, loans) came with" in section
    assert section.count(INHERITED) == 3


def test_a_live_study_marks_its_inherited_rules(draft, owner_client):
    services.study_set_state(study=draft, state=Study.State.LIVE)
    section = html.unescape(_fieldset(_page(owner_client, draft), "Eligibility (screening)"))
    assert "occupation (the reference study's default): Company worker (full-time)" in section
    assert "Keep them only if" not in section  # a live study's rules cannot change


# --- human titles, a form per question type -----------------------------------------------------
CLASS_NAME = re.compile(r"^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+$")  # LanguageText, QuotaConfig


def _titles(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["title"]] if isinstance(node.get("title"), str) else []
        return own + [t for v in node.values() for t in _titles(v)]
    if isinstance(node, list):
        return [t for v in node for t in _titles(v)]
    return []


def test_no_editor_title_is_a_class_name():
    titles = [t for name in SETTINGS for t in _titles(editor_schema(name))]
    assert "Question" in titles and "Options" in titles  # the question's text and options
    assert [t for t in titles if CLASS_NAME.match(t)] == []


def test_the_change_page_shows_no_class_name(draft, owner_client):
    page = _page(owner_client, draft)
    for raw in ("LanguageText", "LanguageOptions"):
        assert raw not in page


#: what each question type asks of the researcher beyond key, page, required and text
#: (written out here, not read from the question-type table)
TYPE_SETTINGS = {
    "likert": {"points", "options"},
    "single": {"options"},
    "multi": {"options"},
    "text": {"max_length"},
    "number": {"min", "max", "decimals"},
    "slider": {"min", "max", "step"},
    "attention": {"options", "answer"},
    "matrix": {"options", "rows", "row_keys"},
    "ranking": {"options", "option_keys"},
}
#: ... and every type's survey logic (when it is shown, when its answer ends the study)
COMMON = {"key", "page", "type", "required", "text", "show_if", "end_if", "ends_with"}


def _forms() -> dict[str, dict[str, Any]]:
    items = editor_schema("questions")["items"]
    return {b["properties"]["type"]["const"]: b for b in items["oneOf"]}


def test_each_question_type_has_a_form_with_only_its_settings():
    forms = _forms()
    assert set(forms) == set(TYPE_SETTINGS)
    for name, form in forms.items():
        assert set(form["properties"]) == COMMON | TYPE_SETTINGS[name], name
        assert form["title"] and not CLASS_NAME.match(form["title"])


def _matches(data: dict[str, Any], form: dict[str, Any]) -> bool:
    """django-jsonform's rule for the form of a stored item: every property the form names is
    in the data, and its constant (the type) is the item's."""
    props = form["properties"]
    return all(k in data for k in props) and all(
        data[k] == v["const"] for k, v in props.items() if "const" in v
    )


QUESTIONS = [
    {"key": "q1", "page": "post", "type": "likert", "text": {"en": "Trust?"}, "points": 7},
    {"key": "q2", "page": "pre", "type": "single", "text": {"en": "Pick"},
     "options": {"en": ["a", "b"]}},
    {"key": "q3", "page": "post", "type": "multi", "text": {"en": "All"},
     "options": {"en": ["a", "b", "c"]}},
    {"key": "q4", "page": "post", "type": "text", "text": {"en": "Why?"}, "max_length": 200},
    {"key": "q5", "page": "pre", "type": "number", "text": {"en": "Age"}, "min": 18, "max": 99},
    {"key": "q6", "page": "evaluation", "type": "slider", "text": {"en": "How sure?"},
     "min": 0, "max": 10, "step": 0.5},
    {"key": "q7", "page": "post", "type": "attention", "text": {"en": "Pick b"},
     "options": {"en": ["a", "b"]}, "answer": 2},
    {"key": "q8", "page": "pre", "type": "matrix", "text": {"en": "Agree?"},
     "options": {"en": ["no", "yes"]}, "rows": {"en": ["Fair", "Clear"]},
     "row_keys": ["fair", "clear"]},
    {"key": "q9", "page": "post", "type": "ranking", "text": {"en": "Order"},
     "options": {"en": ["a", "b"]}, "option_keys": ["a", "b"]},
]  # fmt: skip


def test_every_stored_question_opens_in_its_own_types_form(draft, owner_client):
    r = owner_client.post(change_url(draft), change_data(draft, questions=json.dumps(QUESTIONS)))
    assert r.status_code == 302, r.content.decode()[:2000]
    stored = Study.objects.get(pk=draft.pk).questions
    forms = _forms()
    for q in stored:
        matching = [name for name, form in forms.items() if _matches(q, form)]
        assert matching == [q["type"]], (q["key"], matching)
    # the preview shows them as participants see them: a radio group per statement, a rank
    # select per option
    preview = _page(owner_client, draft)
    assert "<legend>Fair</legend>" in preview and 'name="q__q8.clear"' in preview
    assert '<select name="q__q9.b"' in preview


def test_a_question_as_its_form_posts_it_is_saved_with_the_defaults(draft, owner_client):
    """The editor posts only the chosen form's fields; the rest take their defaults."""
    form = _forms()["slider"]
    none = {"all": [], "any": []}
    posted = {"key": "sure", "page": "post", "type": "slider", "required": True,
              "text": {"en": "How sure?", "ja": ""}, "min": 0, "max": 10, "step": 2,
              "show_if": none, "end_if": none, "ends_with": "screened_out"}  # fmt: skip
    assert set(posted) == set(form["properties"])
    r = owner_client.post(change_url(draft), change_data(draft, questions=json.dumps([posted])))
    assert r.status_code == 302, r.content.decode()[:2000]
    (q,) = Study.objects.get(pk=draft.pk).questions
    assert (q["type"], q["step"], q["points"], q["max_length"]) == ("slider", 2, 5, 500)
    # a condition as the editor posts it (its value as text) is stored as the answer's kind
    drive = {**posted, "key": "drive", "page": "pre", "min": 0, "max": 1, "step": 1}
    shown = {"all": [{"question": "q.drive", "op": ">=", "value": "1", "values": []}], "any": []}
    questions = json.dumps([drive, {**posted, "show_if": shown}])
    r = owner_client.post(change_url(draft), change_data(draft, questions=questions))
    assert r.status_code == 302, r.content.decode()[:2000]
    stored = Study.objects.get(pk=draft.pk).questions[1]["show_if"]["all"][0]
    assert (stored["op"], stored["value"]) == (">=", 1)


# --- lists of the study's own conditions and pages ----------------------------------------------
def _editor(client: Client, study: Study, name: str) -> dict[str, Any]:
    r = client.get(change_url(study))
    return r.context["adminform"].form.fields[name].widget.get_schema()


def _values(prop: dict[str, Any]) -> list[str]:
    return [c["value"] for c in prop["choices"]]


def test_a_quotas_condition_is_chosen_from_the_studys_conditions(draft, owner_client):
    Condition.objects.create(study=draft, name="control", design="")
    Condition.objects.create(study=draft, name="methods", design="random:2")
    props = _editor(owner_client, draft, "quotas")["items"]["properties"]
    assert _values(props["condition"]) == ["", "control", "methods"]
    assert props["condition"]["choices"][0]["title"] == "All conditions"
    keys = _values(props["screening_key"])
    assert keys[0] == "" and {"gender", "occupation", "income"} <= set(keys)


def test_an_attention_checks_page_is_chosen_from_the_designs_pages(draft, owner_client):
    Condition.objects.create(study=draft, name="long", design="proximate:1,random:5")
    page = _editor(owner_client, draft, "attention_checks")["items"]["properties"]["page"]
    # the study's design shows 5 plans, the condition "long" 6
    assert _values(page) == ["profile", *(f"evaluation-{i}" for i in range(1, 7))]


def test_a_held_value_outside_the_lists_is_still_offered(draft, owner_client):
    check = {"key": "ac", "prompt": "Pick b", "options": ["a", "b"], "answer": 2,
             "page": "evaluation-9"}  # fmt: skip
    Study.objects.filter(pk=draft.pk).update(attention_checks=[check])
    draft.refresh_from_db()
    page = _editor(owner_client, draft, "attention_checks")["items"]["properties"]["page"]
    assert page["choices"][-1] == {
        "value": "evaluation-9",
        "title": "evaluation-9 (not in this study)",
    }


# --- live settings read as forms ---------------------------------------------------------------
def _live(draft: Study) -> Study:
    services.study_set_state(study=draft, state=Study.State.LIVE)
    return draft


def test_live_settings_read_as_forms_not_json(draft, owner_client):
    Study.objects.filter(pk=draft.pk).update(questions=[QUESTIONS[0]])
    Condition.objects.create(study=draft, name="control", design="")
    page = _page(owner_client, _live(draft))
    for leak in ('{"en"', '"welcome":', "studies/questions.py", "docs/studyapp.md"):
        assert leak not in page, leak
    texts = page[page.index("field-texts_readout") :]
    assert '<dl class="setting-readout"><dt>English</dt>' in texts
    assert "<dt>Welcome</dt>" in texts
    questions = page[page.index("field-questions_readout") :]
    questions = questions[: questions.index("</div></div>")]
    assert "<dt>Type</dt><dd>Likert scale</dd>" in questions
    assert "<dt>Points</dt><dd>7</dd>" in questions
    assert "<dt>Step</dt>" not in questions  # a Likert item has no step
    assert "<dt>Name</dt><dd>control</dd>" in page[page.index("field-conditions_readout") :]


def test_a_view_only_researcher_reads_every_structured_setting_as_a_form(draft):
    viewer = researcher("viewer")
    viewer.user_permissions.set(
        Permission.objects.filter(content_type__app_label="studyapp", codename__startswith="view_")
    )
    draft.shared_with.add(viewer)
    page = _page(client_for(viewer), draft)
    for name in ("texts", "outcome_codes", "quotas", "questions", "design_check_thresholds"):
        assert f"field-{name}_readout" in page, name
        assert f'name="{name}"' not in page, name
    assert '"completed":' not in page  # outcome codes not dumped as JSON


def test_the_owner_still_edits_what_a_live_study_may_change(draft, owner_client):
    _live(draft)
    texts_before = Study.objects.get(pk=draft.pk).texts
    r = owner_client.post(change_url(draft), change_data(draft, title="Renamed"))
    assert r.status_code == 302
    study = Study.objects.get(pk=draft.pk)
    assert study.title == "Renamed" and study.texts == texts_before
    page = _page(owner_client, study)
    assert 'name="outcome_codes"' in page and 'name="quotas"' in page


# --- the admin home -----------------------------------------------------------------------------
def test_the_home_leads_with_the_studies_and_their_coding(draft, owner_client):
    page = owner_client.get("/admin/").content.decode()
    studies = page.index('id="console-studies"')
    assert f'href="{change_url(draft)}"' in page[studies:]
    row = page[page.index(f'href="{change_url(draft)}"') :]
    for link in ("/monitor/", "/coding/", "/design-check/"):
        assert f"/console/studies/{draft.slug}{link}" in row[: row.index("</tr>")], link
    assert studies < page.index("Recourse studies")


def test_the_machinery_comes_after_the_studies_named_for_what_it_is(owner):
    boss = researcher("boss", superuser=True)
    page = client_for(boss).get("/admin/").content.decode()
    order = [
        "Recourse studies",
        "Accounts: users and groups",
        "Accounts: API tokens",
        "System: scheduler (Celery beat, for administrators)",
        "System: login attempts (django-axes, for administrators)",
    ]
    at = [page.index(f">{name}</a>") for name in order]
    assert at == sorted(at)
    app = page[at[0] : at[1]]
    models = re.findall(r'id="studyapp-\w+">\s*<a href="[^"]+"[^>]*>([^<]+)</a>', app)
    assert models[:2] == ["Studies", "Participants"], models
