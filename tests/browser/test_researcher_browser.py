"""A researcher runs a study from the console in headless Debian Chromium, against gunicorn
and a real Celery worker on the embedded default: logs into the admin, creates a study from
the car-loan schema, uploads a pool CSV (preview, then confirm), makes it live, lets two
simulated participants (bots over HTTP) complete it, and downloads the export ZIP.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from recourse_engine import carloan_schema, synth_pool
from tests.browser.chromium import downloaded, start_downloading_chromium
from tests.browser.pages import Page
from tests.integration.stack import embedded_env, manage, migrate, running

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "researcher-pass-1"
#: bot seed whose two participants both get the design's five recourses from this pool (with
#: seed 0 one of them is a high earner with only three admissible profiles: a shortfall)
SEED = "1"
MAKE_RESEARCHER = f"""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
u = get_user_model().objects.create_user("lab", "", "{PASSWORD}", is_staff=True)
u.user_permissions.set(Permission.objects.filter(content_type__app_label="studyapp"))
"""


@pytest.fixture
def driver(downloads: Path) -> Iterator[object]:
    d = start_downloading_chromium("1280,1000", downloads)  # a researcher's desktop
    yield d
    d.quit()


def test_researcher_sets_up_runs_and_exports(driver, tmp_path: Path, downloads: Path) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    page = Page(driver)
    css = page.css

    schema = carloan_schema()
    pool_file = tmp_path / "pool.csv"
    synth_pool(schema, n=3683, seed=0).to_csv(pool_file, index=False)
    env = embedded_env(tmp_path)
    migrate(env)
    manage(env, "shell", "-c", MAKE_RESEARCHER)
    with running(env, tmp_path) as url:
        page.go(f"{url}/admin/login/?next=/admin/studyapp/study/add/", "#id_username")
        css("#id_username").send_keys("lab")
        css("#id_password").send_keys(PASSWORD)
        # setup: the built-in car-loan schema (default choice), a small synthetic pool for now
        page.click_to("input[type=submit]", "#study-setup")
        driver.find_element(By.ID, "id_slug").send_keys("carloan-lab")
        driver.find_element(By.ID, "id_title").send_keys("Car loan, lab run")
        size = driver.find_element(By.ID, "id_pool_size")
        size.clear()
        size.send_keys("100")
        page.click_to('[name="_create"]', "#study-console")
        assert "created as a draft" in driver.page_source

        # pool upload: preview first, then confirm
        page.click_to("#pool-link", "#id_file").send_keys(str(pool_file))
        assert page.click_to("#preview-pool", "#preview-rows").text == "3683"
        assert driver.find_elements(By.CSS_SELECTOR, "#preview-distributions tbody tr")
        page.click_to("#confirm-pool", "#study-console")
        assert "3,683 profiles stored" in driver.page_source

        # live
        page.click_to("#go-live", "#study-state")
        page.wait.until(ec.text_to_be_present_in_element((By.ID, "study-state"), "Live"))

        # two simulated participants over HTTP, against the same server and worker
        out = manage(
            env, "simulate_participants", "carloan-lab", "--n", "2", "--url", url, "--seed", SEED
        )
        assert "completed 2; 10 evaluations" in out, out

        # bots are test participants: the monitor counts them apart from the figures, and
        # the export has them only when asked for; then the export downloads as a ZIP
        page.go(f"{url}/console/studies/carloan-lab/monitor/", "#export-zip")
        assert css('[data-fig="completion.completed"]').text == "0"
        assert css('[data-fig="test_participants"]').text == "2"
        driver.find_element(By.ID, "export-test").click()
        driver.find_element(By.ID, "export-zip").click()
        zpath = downloaded(downloads, "carloan-lab-export-*.zip")
    zf = zipfile.ZipFile(zpath)
    ev = pd.read_csv(io.BytesIO(zf.read("evaluations.csv")))
    pa = pd.read_csv(io.BytesIO(zf.read("participants.csv")))
    k = 5  # the car-loan design: sparsest:1, proximate:1, random:3
    assert list(pa["outcome"]) == ["completed", "completed"]
    assert len(ev) == 2 * k and ev["recourse"].is_unique
    assert set(ev["participant"]) == set(pa["participant"])
    assert "acceptance_why" not in ev.columns and "recruitment_id" not in pa.columns
