"""The decision page's settings in the console's study form: what happens when the model
approves a profile (a worded choice) and the minimum seconds on the decision page (a number),
set by posting the form; a bad value refused under its field with a message naming it and
nothing changed; a form posted without them keeps what the study stores; a live study shows
both read-only, worded as in the form."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from studyapp.console.decision_settings import BRANCHES
from studyapp.models import Study
from studyapp.studies import carloan, services, updates
from tests.studyapp.console.conftest import change_data, change_url, client_for

END, HYPOTHETICAL = (label for _, label in BRANCHES)


@pytest.fixture
def draft(owner: Any) -> Study:
    return carloan.carloan_study_create(slug="loans", title="Loans", owner=owner, pool_size=60)


def _row(page: str, name: str) -> str:
    """The admin's form row of field `name` (its label, input or read-only value, errors)."""
    start = page.index(f'field-{name}"')
    end = page.find('<div class="form-row', start)
    return html.unescape(page[start : end if end != -1 else len(page)])


def _errors(row: str) -> list[str]:
    blocks = re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', row, flags=re.S)
    return [li for block in blocks for li in re.findall(r"<li>(.*?)</li>", block)]


def _snapshot(study: Study) -> dict[str, Any]:
    row = Study.objects.filter(pk=study.pk).values().get()
    row.pop("updated_at")
    return row


def test_the_draft_form_offers_both_as_plain_worded_fields(draft: Study, owner: Any) -> None:
    updates.study_update(study=draft, changes={"page_min_seconds": {"decision": 12}})
    page = client_for(owner).get(change_url(draft)).content.decode()
    branch = _row(page, "approved_branch")
    assert "When the decision model approves a profile" in branch
    assert END in branch and HYPOTHETICAL in branch
    assert re.search(r'type="radio" name="approved_branch" value="end"[^>]*checked', branch)
    seconds = _row(page, "page_min_seconds")
    assert "Minimum seconds on the decision page" in seconds
    assert re.search(r'type="number" name="page_min_seconds" value="12"', seconds), seconds
    assert "data-django-jsonform" not in branch + seconds
    # beside the decision model, in its fieldset
    design = page[page.index("Design and decision model") :]
    design = design[: design.index("</fieldset>")]
    assert 'field-approved_branch"' in design and 'field-page_min_seconds"' in design


def test_setting_each_through_the_form_changes_the_study(draft: Study, owner: Any) -> None:
    client = client_for(owner)
    r = client.post(change_url(draft), change_data(draft, approved_branch="hypothetical"))
    assert r.status_code == 302, _errors(r.content.decode())
    draft.refresh_from_db()
    assert draft.approved_branch == "hypothetical" and draft.page_min_seconds == {}

    r = client.post(change_url(draft), change_data(draft, page_min_seconds="30"))
    assert r.status_code == 302, _errors(r.content.decode())
    draft.refresh_from_db()
    assert draft.page_min_seconds == {"decision": 30} and draft.approved_branch == "hypothetical"

    r = client.post(
        change_url(draft), change_data(draft, approved_branch="end", page_min_seconds="0")
    )
    assert r.status_code == 302, _errors(r.content.decode())
    draft.refresh_from_db()
    assert draft.approved_branch == "end" and draft.page_min_seconds == {}


def test_a_form_without_them_keeps_the_stored_values(draft: Study, owner: Any) -> None:
    changes = {"approved_branch": "hypothetical", "page_min_seconds": {"decision": 20}}
    updates.study_update(study=draft, changes=changes)
    data = change_data(draft, title="Renamed")
    data.pop("approved_branch", None)
    data.pop("page_min_seconds", None)
    r = client_for(owner).post(change_url(draft), data)
    assert r.status_code == 302, _errors(r.content.decode())
    draft.refresh_from_db()
    assert draft.title == "Renamed"
    assert draft.approved_branch == "hypothetical" and draft.page_min_seconds == {"decision": 20}


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("approved_branch", "x", "approved_branch: "),
        ("page_min_seconds", "-1", "page_min_seconds.decision: "),
        ("page_min_seconds", "99999", "page_min_seconds.decision: "),
        ("page_min_seconds", "ten", "page_min_seconds.decision: "),
    ],
)
def test_a_bad_value_is_refused_under_its_field_and_nothing_changes(
    draft: Study, owner: Any, field: str, value: str, expected: str
) -> None:
    before = _snapshot(draft)
    r = client_for(owner).post(change_url(draft), change_data(draft, **{field: value}))
    assert r.status_code == 200, r.status_code  # the form again, not a redirect
    errors = _errors(_row(r.content.decode(), field))
    assert len(errors) == 1 and errors[0].startswith(expected), errors
    assert _snapshot(draft) == before


def test_a_live_study_shows_them_read_only(draft: Study, owner: Any) -> None:
    changes = {"approved_branch": "hypothetical", "page_min_seconds": {"decision": 45}}
    updates.study_update(study=draft, changes=changes)
    services.study_set_state(study=draft, state=Study.State.LIVE)
    client = client_for(owner)
    page = client.get(change_url(draft)).content.decode()
    branch = _row(page, "approved_branch_readout")
    assert "When the decision model approves a profile" in branch and HYPOTHETICAL in branch
    seconds = _row(page, "page_min_seconds_readout")
    assert "Minimum seconds on the decision page" in seconds and "45 seconds" in seconds
    assert 'name="approved_branch"' not in page and 'name="page_min_seconds"' not in page

    before = _snapshot(draft)
    posted = change_data(draft, approved_branch="end", page_min_seconds="0")
    client.post(change_url(draft), posted)
    assert _snapshot(draft) == before
