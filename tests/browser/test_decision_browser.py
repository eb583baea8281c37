"""The model's decision in headless Debian Chromium, on a study deciding with a model trained
on its items (it approves some profiles), against gunicorn and a real Celery worker: an
approved participant ends with the `approved` code and never reads "declined" or a plan; a
rejected one stays on the rejection page until Continue (it opens only once the plans are
ready and the study's minimum time has passed), and the export has that page's visit with
its time on the page."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

from recourse_engine import carloan_schema
from tests.browser.pages import Page, at
from tests.integration.stack import embedded_env, manage, migrate, running

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: the highest option of every item (the items model approves it; all "1" it rejects)
HIGH = {it.key: str(len(it.options)) for it in carloan_schema().items}
MIN_SECONDS = 4
SETUP = """
from studyapp.models import Study
Study.objects.filter(slug="trained").update(page_min_seconds={{"decision": {n}}})
print("APPROVED=" + Study.objects.get(slug="trained").outcome_codes["approved"]["code"])
"""



def test_approved_ends_and_rejected_reads_the_decision_in_chromium(driver, tmp_path: Path) -> None:  # noqa: ANN001
    env = embedded_env(tmp_path)
    migrate(env)
    manage(env, "create_demo_study", "--no-admin", "--slug", "trained", "--design",
           "proximate:1", "--pool-size", "400")  # fmt: skip
    printed = manage(env, "shell", "-c", SETUP.format(n=MIN_SECONDS))
    approved_code = next(x for x in printed.split() if x.startswith("APPROVED="))[9:]
    page = Page(driver)
    with running(env, tmp_path) as url:
        # approved: its own ending and code; no rejection, no plan
        page.start(f"{url}/s/trained/?PROLIFIC_PID=approved-1")
        code = page.to_decision(HIGH, expect="#approved-code")
        assert code.text == approved_code
        seen = driver.page_source.lower()
        assert "declined" not in seen and "plan 1" not in seen and "rejection" not in seen
        assert 'name="page"' not in seen  # an end page: nothing to submit
        # rejected: the decision page stays until Continue
        page.start(f"{url}/s/trained/?PROLIFIC_PID=rejected-1")
        page.to_decision()
        assert page.css("#rejection").text
        assert not page.css("#decision-continue").is_enabled()  # the minimum time first
        decided = driver.current_url
        time.sleep(MIN_SECONDS + 2)  # plans ready meanwhile: the page did not move on
        assert driver.current_url == decided and page.css(at("decision"))
        page.continue_decision(at("evaluation-1"))
        assert "\u2192" in driver.page_source or "&rarr;" in driver.page_source
    out = tmp_path / "export"
    manage(env, "export_study", "trained", "--out", str(out))
    pa = pd.read_csv(out / "participants.csv", keep_default_na=False)
    visits = pd.read_csv(out / "page_visits.csv", keep_default_na=False)
    assert sorted(pa["outcome"]) == ["approved", "incomplete"]
    approved = pa[pa["outcome"] == "approved"].iloc[0]
    assert approved["decision"] == "approved" and approved["n_evaluations"] == 0
    rejected = pa[pa["outcome"] == "incomplete"].iloc[0]
    assert rejected["decision"] == "rejected" and rejected["state"] == "evaluating"
    decision = visits[(visits["page"] == "decision")]
    assert list(decision["participant"]) == [rejected["participant"]]
    assert float(decision["seconds"].iloc[0]) >= MIN_SECONDS
