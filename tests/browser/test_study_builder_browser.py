"""Issue 16 in headless Debian Chromium against gunicorn (and a real Celery worker) on the
embedded default: declining consent stores no screening answer; a study with a Likert trust
item on each plan and a questionnaire at the end, completed and exported with its codebook;
a researcher's preview of a draft study that does not reach the export; the waiting page's
time-out with the worker stopped, and its recovery when the worker starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from tests import warm_python
from tests.browser.pages import Page, at
from tests.integration.stack import (
    ROOT,
    VENV_BIN,
    _port_open,
    _wait_for,
    embedded_env,
    free_port,
    manage,
    migrate,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ITEMS = (
    '[{"key": "trust", "page": "evaluation", "type": "likert", "points": 5,'
    ' "text": {"en": "How much do you trust this plan?"},'
    ' "options": {"en": ["Not at all", "Little", "Somewhat", "Much", "Fully"]}},'
    ' {"key": "fair", "page": "post", "type": "single", "text": {"en": "Was the AI fair?"},'
    ' "options": {"en": ["Yes", "No"]}}]'
)
SETUP = (
    "import json; from studyapp.models import Study; from studyapp.studies import updates; "
    "s = Study.objects.get(slug='carloan'); s.state = 'draft'; s.save(); "
    "updates.study_update(study=s, changes={{'questions': json.loads('''{items}'''), "
    "'waiting_timeout_s': {timeout}}}); s.state = '{state}'; s.save()"
)
LINK = (
    "from studyapp.models import Study; from studyapp.participation import preview; "
    "print(preview.preview_link(Study.objects.get(slug='carloan')))"
)


def _proc(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "w") as fh:
        return warm_python.start(args, ROOT, env, fh)  # type: ignore[return-value]


def _stop(p: subprocess.Popen, sig: int) -> None:
    if p.poll() is None:
        os.killpg(p.pid, sig)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


@contextmanager
def web(env: dict[str, str], logs: Path) -> Iterator[str]:
    port = free_port()
    env = {**env, "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost,testserver"}
    p = _proc([str(VENV_BIN / "gunicorn"), "studyapp.config.wsgi", "--bind",
               f"127.0.0.1:{port}", "--workers", "2", "--timeout", "180"], env, logs / "web.log")  # fmt: skip
    try:
        _wait_for(lambda: _port_open(port), "gunicorn", 60, [p])
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(p, signal.SIGINT)


@contextmanager
def worker(env: dict[str, str], logs: Path) -> Iterator[None]:
    log = logs / "worker.log"
    p = _proc([str(VENV_BIN / "celery"), "-A", "studyapp", "worker", "--pool=solo",
               "--loglevel=INFO", "--without-gossip", "--without-mingle"], env, log)  # fmt: skip
    try:
        _wait_for(lambda: log.exists() and " ready." in log.read_text(), "worker", 90, [p])
        yield
    finally:
        _stop(p, signal.SIGTERM)


def _prepare(env: dict[str, str], *, timeout: int, state: str = "live") -> None:
    migrate(env)
    manage(env, "create_demo_study", "--no-admin", "--pool-size", "1000")
    manage(env, "shell", "-c", SETUP.format(items=ITEMS, timeout=timeout, state=state))


def _export(env: dict[str, str], out: Path, *extra: str) -> dict[str, pd.DataFrame]:
    manage(env, "export_study", "carloan", "--out", str(out), *extra)
    return {n: pd.read_csv(out / f"{n}.csv", keep_default_na=False)
            for n in ("participants", "evaluations", "codebook")}  # fmt: skip


def test_decline_complete_with_items_and_preview_in_chromium(driver, tmp_path: Path) -> None:  # noqa: ANN001
    env = embedded_env(tmp_path)
    _prepare(env, timeout=60)
    page = Page(driver)
    with web(env, tmp_path) as url, worker(env, tmp_path):
        # 1. declining consent: the declined code, nothing of the screening stored
        page.start(f"{url}/s/carloan/?PROLIFIC_PID=decliner")
        declined_code = page.click_to("#decline", "#declined-code").text
        # 2. a participant with a Likert trust item on each plan and a questionnaire at the end
        page.start(f"{url}/s/carloan/?PROLIFIC_PID=truster")
        page.to_waiting(at("evaluation-1"))
        for n in range(1, 6):
            page.on(f"evaluation-{n}")
            assert "How much do you trust this plan?" in driver.page_source
            page.choose("acceptance", "5")
            page.css('textarea[name="acceptance_why"]').send_keys("ok")
            for radio in driver.find_elements(
                "css selector", 'input[name^="impossible_"][value="no"]'
            ):
                radio.click()
            page.choose("action", "4")
            page.css('textarea[name="action_why"]').send_keys("ok")
            page.choose("q__trust", str(n))
            page.submit(at(f"evaluation-{n + 1}") if n < 5 else at("questions_post"))
        page.choose("q__fair", "1")
        assert page.submit("#completion-code").text
    out = _export(env, tmp_path / "export")
    pa, ev, cb = out["participants"], out["evaluations"], out["codebook"]
    assert list(pa["outcome"]) == ["declined_consent", "completed"]
    declined = pa.iloc[0]
    assert declined_code and all(declined[c] == "" for c in pa.columns if c.startswith("screen_"))
    assert declined["gender"] == "" and declined["age"] == ""
    assert sorted(ev["q_trust"]) == [1, 2, 3, 4, 5] and list(pa["q_fair"].astype(str)) == ["", "1"]
    row = cb[(cb["file"] == "evaluations.csv") & (cb["column"] == "q_trust")].iloc[0]
    assert row["type"] == "integer" and row["allowed"].startswith("1=Not at all; 2=Little")


def test_preview_of_a_draft_study_stays_out_of_the_export(driver, tmp_path: Path) -> None:  # noqa: ANN001
    env = embedded_env(tmp_path)
    _prepare(env, timeout=60, state="draft")
    printed = manage(env, "shell", "-c", LINK).splitlines()
    link = next(line.strip() for line in printed if line.startswith("/s/carloan/?preview="))
    page = Page(driver)
    with web(env, tmp_path) as url:
        closed = page.go(f"{url}/s/carloan/", "p.problem")
        assert "not open" in closed.text  # a draft: closed to participants
        page.start(url + link)
        assert page.css("#test-banner")
        page.agree_and_screen(at("scenario"))
    out = _export(env, tmp_path / "export")
    assert len(out["participants"]) == 0
    out = _export(env, tmp_path / "export-test", "--with-test")
    assert list(out["participants"]["is_test"]) == [1]


def test_waiting_page_times_out_then_recovers_in_chromium(driver, tmp_path: Path) -> None:  # noqa: ANN001
    env = embedded_env(tmp_path)
    _prepare(env, timeout=10)
    page = Page(driver)
    with web(env, tmp_path) as url:
        page.start(f"{url}/s/carloan/")
        page.to_decision()  # no worker: the task stays queued, Continue stays shut
        box = page.css("#timed-out")
        from selenium.webdriver.support import expected_conditions as ec

        page.wait.until(ec.visibility_of(box))
        assert "taking longer than usual" in box.text
        assert not page.css("#decision-continue").is_enabled()
        code = driver.current_url
        with worker(env, tmp_path):
            page.continue_decision(at("evaluation-1"))  # opens once the plans are ready
            assert driver.current_url == code
    out = _export(env, tmp_path / "export")
    pa = out["participants"]
    assert (
        pa["wait_timeouts"].iloc[0] >= 1 and "waiting page timed out" in pa["flag_reason"].iloc[0]
    )
