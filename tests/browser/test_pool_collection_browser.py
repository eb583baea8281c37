"""Issue 17's pool collection in headless Debian Chromium against gunicorn: bots answer a
pool-collection survey over HTTP (some choose "prefer not to say"); a researcher opens
another study's pool page, previews the survey's answers (counts shown, non-disclosers left
out) and confirms; the stored pool is exactly the disclosers' answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.chromium import start_chromium
from tests.browser.pages import Page
from tests.integration.stack import embedded_env, manage, migrate, running

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "researcher-pass-1"
SETUP = f"""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from studyapp.models import Study
from studyapp.studies import carloan, pool_collection, services
u = get_user_model().objects.create_user("lab", "", "{PASSWORD}", is_staff=True)
u.user_permissions.set(Permission.objects.filter(content_type__app_label="studyapp"))
s = pool_collection.pool_collection_study_create(
    slug="survey", title="Profile survey", schema=carloan.carloan_schema_dict(), owner=u)
services.study_set_state(study=s, state=Study.State.LIVE)
t = carloan.carloan_study_create(slug="target", title="Target", owner=u, pool_size=100)
print(t.pk)
"""
COUNT = (
    "from studyapp.models import Participant as P; qs = P.objects.filter(study__slug='survey'); "
    "print(qs.filter(state='completed').count(), qs.filter(income_jpy__isnull=True).count())"
)
STORED = (
    "from studyapp.models import Participant as P, Study; "
    "t = Study.objects.get(slug='target'); "
    "ids = {f'survey-{p.pk}' for p in P.objects.filter(study__slug='survey', "
    "income_jpy__isnull=False)}; "
    "print(t.pool_rows, sorted(ids) == sorted(l.split(',')[0] for l in t.pool_csv.splitlines()[1:]))"
)


@pytest.fixture
def driver() -> Iterator[object]:
    d = start_chromium("1280,1000")
    yield d
    d.quit()


def test_survey_answers_become_a_pool_after_the_preview(driver, tmp_path: Path) -> None:  # noqa: ANN001
    page = Page(driver)
    css = page.css
    env = embedded_env(tmp_path)
    migrate(env)
    target = manage(env, "shell", "-c", SETUP).splitlines()[-1].strip()
    with running(env, tmp_path) as url:
        out = manage(env, "simulate_participants", "survey", "--n", "40", "--url", url)
        completed, hidden = map(int, manage(env, "shell", "-c", COUNT).split()[-2:])
        assert completed == 40 and 0 < hidden < 40, out
        page.go(f"{url}/admin/login/?next=/admin/studyapp/study/{target}/pool/", "#id_username")
        css("#id_username").send_keys("lab")
        css("#id_password").send_keys(PASSWORD)
        page.click_to("input[type=submit]", "#pool-from-collection")
        page.click_to("#pool-from-collection", "#id_source")
        css("#id_with_test").click()  # bots are test participants
        assert page.click_to("#preview-collection", "#count-completed").text == "40"
        assert css("#count-not-disclosed").text == str(hidden)
        assert css("#count-included").text == str(40 - hidden)
        assert css("#preview-rows").text == str(40 - hidden)
        assert manage(env, "shell", "-c", "from studyapp.models import Study; "
                      "print(Study.objects.get(slug='target').pool_rows)").split()[-1] == "100"  # fmt: skip
        page.click_to("#confirm-collection", "#study-console")
        assert f"Stored {40 - hidden} profiles from survey" in driver.page_source
    rows, same = manage(env, "shell", "-c", STORED).split()[-2:]
    assert rows == str(40 - hidden) and same == "True"
