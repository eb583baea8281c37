"""Issue 28, part 4: "page n of N" on every page a participant reads, counted on the declared
flow (each plan a page) and translated; and the device each participant arrives on, posted by
the welcome page's script, checked on the server and exported with its codebook entries."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pandas as pd
from django.core.management import call_command
from django.test import Client

from studyapp.models import Participant, Study
from studyapp.participation import flow
from tests.studyapp.conftest import make_study, start

STEP = re.compile(r'id="page-step">([^<]*)<')
EN_STEP = re.compile(r"^Page (\d+) of (\d+)$")


def _step(body: str) -> str:
    found = STEP.search(body)
    return found.group(1) if found else ""


def test_every_page_says_where_it_stands_in_the_declared_flow(study: Study, eager: None) -> None:
    w = start(Client(), study)
    seen: list[tuple[str, str]] = []  # (page key, its step text)
    for _ in range(30):
        body = w.get().content.decode()
        key = w.page()
        if not key:
            assert _step(body) == ""  # the end page: no step
            assert "completion-code" in body
            break
        seen.append((key, _step(body)))
        if key == "consent":
            w.post({"page": "consent", "agree": "on"})
        elif key == "screening":
            w.screening()
        elif key == "profile":
            w.submit_profile(through_decision=False)
        elif key.startswith("evaluation-"):
            w.post(w.evaluation_data())
        else:
            w.post({"page": key})
    numbers = [EN_STEP.match(text) for _key, text in seen]
    assert all(numbers), seen
    steps = [(int(m.group(1)), int(m.group(2))) for m in numbers if m]
    total = len(seen)  # every page read before the end page is one step
    assert steps == [(n, total) for n in range(1, total + 1)], seen
    assert [key for key, _text in seen] == flow.steps(study, flow.plan_count(w.participant))


def test_the_step_is_translated_and_waiting_pages_have_none(transactional_db: Any) -> None:
    study = make_study(slug="carloan-ja", language="ja")
    w = start(Client(), study)
    n_steps = len(flow.steps(study, flow.plan_count(w.participant)))
    assert _step(w.get().content.decode()) == f"{n_steps}ページ中1ページ目"
    Participant.objects.filter(pk=w.participant.pk).update(state=Participant.State.WAITING)
    body = w.get().content.decode()
    assert 'id="progress"' in body and _step(body) == ""


def _welcome(client: Client, study: Study, pid: str, **device: str) -> Any:
    """The welcome page's start button with its hidden fields, the device's as given."""
    body = client.get(f"/s/{study.slug}/?PROLIFIC_PID={pid}").content.decode()
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', body))
    assert {"device_class", "viewport_width", "viewport_height"} <= set(hidden)
    assert "studyapp/device.js" in body
    return client.post(f"/s/{study.slug}/", {**hidden, **device})


def test_the_device_is_recorded_and_exported(study: Study, tmp_path: Path) -> None:
    client = Client()
    assert _welcome(client, study, "blank").status_code == 302  # no script: nothing recorded
    sent = {"device_class": "phone", "viewport_width": "375", "viewport_height": "812"}
    assert _welcome(client, study, "phone", **sent).status_code == 302
    blank, phone = Participant.objects.order_by("pk")
    assert (blank.device_class, blank.viewport_width, blank.viewport_height) == ("", None, None)
    assert (phone.device_class, phone.viewport_width, phone.viewport_height) == ("phone", 375, 812)
    call_command("export_study", study.slug, "--out", str(tmp_path), stdout=io.StringIO())
    pa = pd.read_csv(tmp_path / "participants.csv", keep_default_na=False)
    assert list(pa["device_class"]) == ["", "phone"]
    assert list(pa["viewport_width"].astype(str)) == ["", "375"]
    assert list(pa["viewport_height"].astype(str)) == ["", "812"]
    cb = pd.read_csv(tmp_path / "codebook.csv", keep_default_na=False)
    rows = cb[cb["file"] == "participants.csv"].set_index("column")
    assert rows.loc["device_class", "allowed"].startswith("phone; tablet; desktop")
    assert rows.loc["viewport_width", "type"] == "integer" != rows.loc["device_class", "type"]


def test_a_device_no_script_sends_is_refused_and_nothing_is_made(study: Study) -> None:
    client = Client()
    for bad, field in [({"device_class": "watch"}, "device_class"),
                       ({"viewport_width": "0"}, "viewport_width"),
                       ({"viewport_height": "wide"}, "viewport_height"),
                       ({"viewport_width": "99999"}, "viewport_width")]:  # fmt: skip
        r = _welcome(client, study, "bad", **bad)
        assert r.status_code == 400 and f"{field}: " in r.content.decode(), bad
    assert not Participant.objects.exists()
