"""The researcher console in the admin: setup, pool upload with preview, settings and their
validation, state buttons, frozen fields, duplicate, deletion on request, and the access
rule (owner, shared, another researcher, superuser) on every page."""

from __future__ import annotations

import html
import io
import json
import zipfile
from typing import Any

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from recourse_engine import carloan_schema, synth_pool
from studyapp.models import Condition, Participant, Quota, Study, Withdrawal
from studyapp.studies import services
from tests.studyapp.conftest import SCHEMA, make_study
from tests.studyapp.console.conftest import (
    change_data,
    change_url,
    client_for,
    complete,
    pool_bytes,
    researcher,
)


# --- setup ----------------------------------------------------------------------------------
def test_setup_with_builtin_schema(owner: Any, owner_client: Client) -> None:
    r = owner_client.post(
        "/admin/studyapp/study/add/",
        {"slug": "cl", "title": "Car loan", "language": "ja", "schema_source": "builtin",
         "pool_size": "150", "seed": "3"},
    )  # fmt: skip
    study = Study.objects.get(slug="cl")
    assert r.status_code == 302 and r["Location"] == change_url(study)
    assert study.owner == owner and study.state == Study.State.DRAFT
    assert study.language == "ja" and study.pool_rows == 150 and study.seed == 3
    page = owner_client.get(change_url(study)).content.decode()
    assert "Go live" in page and "Upload pool" in page and "Duplicate" in page


def test_setup_with_uploaded_schema_and_pool(owner_client: Client) -> None:
    schema = SimpleUploadedFile("s.json", json.dumps(carloan_schema().to_dict()).encode())
    pool = SimpleUploadedFile("pool.csv", pool_bytes(120))
    r = owner_client.post(
        "/admin/studyapp/study/add/",
        {"slug": "up", "title": "Uploaded", "language": "en", "schema_source": "upload",
         "schema_file": schema, "pool_file": pool, "pool_size": "3683", "seed": "0",
         "design": "sparsest:2,random:1"},
    )  # fmt: skip
    assert r.status_code == 302
    study = Study.objects.get(slug="up")
    assert study.pool_rows == 120 and study.design == "sparsest:2,random:1"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"schema_source": "upload"}, "choose a schema JSON file"),
        ({"schema_source": "upload", "schema_file": b"{nope"}, "not a JSON file"),
        ({"schema_source": "upload", "schema_file": b'{"name": "x"}'}, "schema: "),
        ({"design": "sparsest:1,proxmate:1"}, "unknown strategy"),
        ({"slug": "bad slug"}, "Enter a valid"),
        ({"pool_size": "5"}, "greater than or equal to 10"),
    ],
)
def test_setup_bad_input_creates_nothing(
    owner_client: Client, fields: dict[str, Any], message: str
) -> None:
    data: dict[str, Any] = {"slug": "x1", "title": "T", "language": "en",
                            "schema_source": "builtin", "pool_size": "100", "seed": "0"}  # fmt: skip
    for key, value in fields.items():
        data[key] = SimpleUploadedFile("f", value) if isinstance(value, bytes) else value
    r = owner_client.post("/admin/studyapp/study/add/", data)
    assert r.status_code == 200 and message in r.content.decode()
    assert not Study.objects.exists()


def test_setup_bad_pool_shows_rejected_rows(owner_client: Client) -> None:
    lines = pool_bytes(30).decode().splitlines()
    header = lines[0].split(",")
    cells = lines[4].split(",")
    cells[header.index("education")] = "77"
    lines[4] = ",".join(cells)
    pool = SimpleUploadedFile("pool.csv", "\n".join(lines).encode())
    r = owner_client.post(
        "/admin/studyapp/study/add/",
        {"slug": "bp", "title": "T", "language": "en", "schema_source": "builtin",
         "pool_file": pool, "pool_size": "100", "seed": "0"},
    )  # fmt: skip
    page = r.content.decode()
    assert r.status_code == 200 and 'id="preview-rejected"' in page
    assert "<td>5</td>" in page and "column &#x27;education&#x27;: &#x27;77&#x27;" in page
    assert not Study.objects.exists()


# --- pool upload with preview ---------------------------------------------------------------
def test_pool_upload_preview_then_confirm(draft: Study, owner_client: Client) -> None:
    url = f"/admin/studyapp/study/{draft.pk}/pool/"
    before = draft.pool_hash
    r = owner_client.post(url, {"file": SimpleUploadedFile("p.csv", pool_bytes(77))})
    page = r.content.decode()
    assert r.status_code == 200 and 'id="preview-distributions"' in page
    assert '<strong id="preview-rows">77</strong>' in page and 'id="confirm-pool"' in page
    draft.refresh_from_db()
    assert draft.pool_hash == before  # nothing stored before the confirmation
    token = page.split('name="token" value="', 1)[1].split('"', 1)[0]
    r = owner_client.post(url, {"confirm": "1", "token": "forged"})
    draft.refresh_from_db()
    assert r.status_code == 302 and draft.pool_hash == before
    r = owner_client.post(url, {"file": SimpleUploadedFile("p.csv", pool_bytes(77))})
    token = r.content.decode().split('name="token" value="', 1)[1].split('"', 1)[0]
    r = owner_client.post(url, {"confirm": "1", "token": token})
    assert r.status_code == 302
    draft.refresh_from_db()
    assert draft.pool_rows == 77 and draft.pool_hash != before
    # the token is spent
    r = owner_client.post(url, {"confirm": "1", "token": token}, follow=True)
    assert "expired" in r.content.decode()


def test_pool_upload_bad_file_changes_nothing(draft: Study, owner_client: Client) -> None:
    before = (draft.pool_hash, draft.pool_rows)
    url = f"/admin/studyapp/study/{draft.pk}/pool/"
    r = owner_client.post(url, {"file": SimpleUploadedFile("p.csv", b"id,income\nP1,3\n")})
    page = r.content.decode()
    assert "missing column(s)" in page and 'id="confirm-pool"' not in page
    assert "Nothing was stored" in page
    draft.refresh_from_db()
    assert (draft.pool_hash, draft.pool_rows) == before


def test_pool_of_live_study_is_frozen(draft: Study, owner_client: Client) -> None:
    services.study_set_state(study=draft, state=Study.State.LIVE)
    url = f"/admin/studyapp/study/{draft.pk}/pool/"
    assert "its pool is frozen" in owner_client.get(url).content.decode()
    r = owner_client.post(url, {"file": SimpleUploadedFile("p.csv", pool_bytes(50))})
    assert r.status_code == 302
    draft.refresh_from_db()
    assert draft.pool_rows == 600


# --- settings, states, frozen fields --------------------------------------------------------
def test_change_settings_and_eligibility(draft: Study, owner_client: Client) -> None:
    codes = dict(draft.outcome_codes)
    codes["completed"] = {"code": "DONE42", "redirect_url": "https://panel.example/c?cc=DONE42"}
    r = owner_client.post(
        change_url(draft),
        change_data(
            draft,
            title="Renamed",
            design="sparsest:2,random:2",
            outcome_codes=json.dumps(codes),
            eligible_occupation=["1", "2"],
            conditions=json.dumps([{"name": "balanced", "design": "random:3"}]),
            quotas=json.dumps([{"condition": "balanced", "limit": 20},
                               {"screening_key": "gender", "screening_value": "1", "limit": 9}]),
        ),
    )  # fmt: skip
    assert r.status_code == 302, r.content.decode()[:3000]
    draft.refresh_from_db()
    assert draft.title == "Renamed" and draft.design == "sparsest:2,random:2"
    assert draft.outcome_codes["completed"]["code"] == "DONE42"
    occupation = next(q for q in draft.schema["screening"] if q["key"] == "occupation")
    assert occupation["eligible"] == [1, 2]
    assert list(draft.conditions.values_list("name", "design")) == [("balanced", "random:3")]
    quotas = draft.quotas.order_by("pk")
    assert [
        (q.condition.name if q.condition else "", q.screening_key, q.limit) for q in quotas
    ] == [
        ("balanced", "", 20),
        ("", "gender", 9),
    ]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("design", "sparsest:1,proxmate:1", "design[1]: unknown strategy 'proxmate'"),
        ("texts", json.dumps({"fr": {"consent": "x"}}), "texts.fr: unknown field"),
        ("texts", json.dumps({"ja": {"consnet": "x"}}), "texts.ja.consnet: unknown field"),
        ("texts", "[1, 2]", "texts: expected an object"),
        ("outcome_codes", json.dumps({"finished": {"code": "A"}}), "outcome_codes.finished: unknown"),
        ("panel_param", "bad param!", "panel_param: 'bad param!': a URL parameter name"),
        ("attention_checks", json.dumps([{"key": "a1"}]), "attention_checks[0].prompt: required"),
        ("decision_model", "uploaded", "upload the model file"),
        ("conditions", json.dumps([{"name": "c1", "design": "nope:1"}]),
         "conditions[0].design[0]: unknown strategy 'nope'"),
        ("quotas", json.dumps([{"condition": "c9", "limit": 3}]),
         "quotas[0].condition: no condition named 'c9'"),
        ("eligible_occupation", ["1", "99"], "Select a valid choice"),
    ],
)  # fmt: skip
def test_bad_settings_change_nothing(
    draft: Study, owner_client: Client, field: str, value: Any, message: str
) -> None:
    before = Study.objects.filter(pk=draft.pk).values().get()
    r = owner_client.post(change_url(draft), change_data(draft, **{field: value}))
    assert r.status_code == 200 and message in html.unescape(r.content.decode())
    assert Study.objects.filter(pk=draft.pk).values().get() == before
    assert not Condition.objects.filter(study=draft).exists()
    assert not Quota.objects.filter(study=draft).exists()


def test_bad_redirect_url_refused(draft: Study, owner_client: Client) -> None:
    codes = dict(draft.outcome_codes)
    codes["completed"] = {"code": "X", "redirect_url": "javascript:alert(1)"}
    r = owner_client.post(change_url(draft), change_data(draft, outcome_codes=json.dumps(codes)))
    assert r.status_code == 200 and "is not an http(s) URL" in r.content.decode()


def test_state_buttons_and_frozen_fields(draft: Study, owner_client: Client) -> None:
    Condition.objects.create(study=draft, name="a", design="random:2")
    state_url = f"/admin/studyapp/study/{draft.pk}/state/"
    assert owner_client.get(state_url).status_code == 405
    r = owner_client.post(state_url, {"state": "live"})
    draft.refresh_from_db()
    assert r.status_code == 302 and draft.state == Study.State.LIVE
    page = owner_client.get(change_url(draft)).content.decode()
    for name in ("design", "texts", "seed", "decision_model", "attention_checks"):
        assert f'name="{name}"' not in page, name
    assert 'name="conditions"' not in page and 'name="eligible_occupation"' not in page
    assert 'name="outcome_codes"' in page  # panel codes may still be pasted in
    assert 'name="quotas"' in page  # quotas may be topped up while live
    # posting a frozen field anyway changes nothing
    owner_client.post(change_url(draft), change_data(draft, design="random:1", title="T2"))
    draft.refresh_from_db()
    assert draft.design == "sparsest:1,proximate:1,random:3" and draft.title == "T2"
    r = owner_client.post(state_url, {"state": "draft"}, follow=True)
    assert "cannot go from live to draft" in r.content.decode()
    owner_client.post(state_url, {"state": "closed"})
    draft.refresh_from_db()
    assert draft.state == Study.State.CLOSED
    r = owner_client.post(state_url, {"state": "bogus"}, follow=True)
    assert "Unknown state" in r.content.decode()


def test_duplicate_button(draft: Study, owner: Any, owner_client: Client) -> None:
    url = f"/admin/studyapp/study/{draft.pk}/duplicate/"
    assert 'value="draft-copy"' in owner_client.get(url).content.decode()
    r = owner_client.post(url, {"slug": "draft"})
    assert "exists already" in r.content.decode()
    r = owner_client.post(url, {"slug": "draft-2"})
    copy = Study.objects.get(slug="draft-2")
    assert r.status_code == 302 and copy.owner == owner and copy.pool_hash == draft.pool_hash


# --- access rule ----------------------------------------------------------------------------
def test_access_rule_on_every_page(draft: Study, owner: Any, eager: None) -> None:
    services.study_set_state(study=draft, state=Study.State.LIVE)
    complete(draft, 1, panel_prefix="PX")
    shared, other = researcher("shared"), researcher("other")
    boss = researcher("boss", superuser=True)
    draft.shared_with.add(shared)
    theirs = make_study(slug="theirs", state="draft")
    theirs.owner = other
    theirs.save()
    p = draft.participants.get()
    pages = {
        "change": change_url(draft),
        "monitor": f"/console/studies/{draft.slug}/monitor/",
        "json": f"/console/studies/{draft.slug}/monitor.json",
        "export": f"/console/studies/{draft.slug}/export.zip",
        "participant": f"/admin/studyapp/participant/{p.pk}/change/",
        "pool": f"/admin/studyapp/study/{draft.pk}/pool/",
    }
    for user, sees in ((owner, True), (shared, True), (boss, True), (other, False)):
        c = client_for(user)
        listing = c.get("/admin/studyapp/study/").content.decode()
        assert (f"/admin/studyapp/study/{draft.pk}/change/" in listing) == sees, user
        assert (f"/admin/studyapp/study/{theirs.pk}/change/" in listing) == (
            user in (other, boss)
        ), user
        plist = c.get("/admin/studyapp/participant/").content.decode()
        assert (f"/admin/studyapp/participant/{p.pk}/change/" in plist) == sees
        for name, url in pages.items():
            status = c.get(url).status_code
            if sees:
                assert status == 200, (user, name)
            else:
                assert status in (302, 404), (user, name, status)  # admin redirects, console 404
        # the study filter in the sidebar names only visible studies
        assert (f"?study={theirs.pk}" in plist) == (user in (other, boss))
    # sharing: a shared researcher may not duplicate, delete or re-share
    c = client_for(shared)
    assert c.get(f"/admin/studyapp/study/{draft.pk}/duplicate/").status_code == 403
    assert c.get(f"/admin/studyapp/study/{draft.pk}/delete/").status_code == 403
    assert 'name="shared_with"' not in c.get(change_url(draft)).content.decode()
    assert 'name="shared_with"' in client_for(owner).get(change_url(draft)).content.decode()
    # another researcher cannot move the study's state either
    client_for(other).post(f"/admin/studyapp/study/{draft.pk}/state/", {"state": "closed"})
    draft.refresh_from_db()
    assert draft.state == Study.State.LIVE


def test_anonymous_and_non_staff_kept_out(draft: Study) -> None:
    for url in (
        f"/console/studies/{draft.slug}/monitor/",
        f"/console/studies/{draft.slug}/export.zip",
    ):
        r = Client().get(url)
        assert r.status_code == 302 and "/admin/login/" in r["Location"]


# --- participants: deletion on request ------------------------------------------------------
def test_delete_on_request_logs(
    draft: Study, owner: Any, owner_client: Client, eager: None
) -> None:
    services.study_set_state(study=draft, state=Study.State.LIVE)
    complete(draft, 2)
    victim = draft.participants.order_by("pk").first()
    data = {"action": "delete_on_request", "_selected_action": [victim.pk]}
    r = owner_client.post("/admin/studyapp/participant/", data)
    assert r.status_code == 200 and "cannot be undone" in r.content.decode()
    assert Participant.objects.filter(pk=victim.pk).exists()  # not before confirming
    r = owner_client.post("/admin/studyapp/participant/", {**data, "confirm": "yes"})
    assert r.status_code == 302
    assert not Participant.objects.filter(pk=victim.pk).exists()
    log = Withdrawal.objects.get(participant_number=victim.pk)
    assert log.by == Withdrawal.By.RESEARCHER and log.by_user == owner
    assert draft.participants.count() == 1
    assert (
        "delete_selected" not in owner_client.get("/admin/studyapp/participant/").content.decode()
    )


# --- monitor page and export download ---------------------------------------------------------
def test_monitor_page_json_and_export(draft: Study, owner_client: Client, eager: None) -> None:
    services.study_set_state(study=draft, state=Study.State.LIVE)
    complete(draft, 2, panel_prefix="PANEL")
    page = owner_client.get(f"/console/studies/{draft.slug}/monitor/").content.decode()
    assert 'data-fig="completion.completed">2<' in page and "monitor.json" in page
    m = owner_client.get(f"/console/studies/{draft.slug}/monitor.json").json()
    assert m["by_state"]["completed"] == 2 and m["completion"]["rate"] == 1.0
    r = owner_client.get(f"/console/studies/{draft.slug}/export.zip")
    assert r.status_code == 200 and r.streaming and r["Content-Type"] == "application/zip"
    zf = zipfile.ZipFile(io.BytesIO(b"".join(r.streaming_content)))
    ev = pd.read_csv(io.BytesIO(zf.read("evaluations.csv")))
    assert len(ev) == 10 and "acceptance_why" not in ev.columns
    assert b"PANEL0" not in zf.read("participants.csv")
    r = owner_client.get(f"/console/studies/{draft.slug}/export.zip?panel=1&text=1")
    zf = zipfile.ZipFile(io.BytesIO(b"".join(r.streaming_content)))
    assert b"PANEL0" in zf.read("participants.csv")
    assert "acceptance_why" in pd.read_csv(io.BytesIO(zf.read("evaluations.csv"))).columns
    assert (
        owner_client.get(f"/console/studies/{draft.slug}/export.zip?panel=maybe").status_code == 404
    )


# --- decision model upload: superusers only (model files are unpickled) ----------------------
def _model_file(tmp_path: Any) -> SimpleUploadedFile:
    import numpy as np

    from recourse_engine.decision import save_model, train_sklearn_model
    from studyapp.definition import engine_objects

    frame = synth_pool(SCHEMA, n=300, seed=4)
    frame["approved"] = (np.arange(len(frame)) % 2).astype(int)
    pool = engine_objects.pool_of(frame.to_csv(index=False), SCHEMA)
    path = save_model(train_sklearn_model(SCHEMA, pool, "approved"), tmp_path / "m.joblib")
    return SimpleUploadedFile("m.joblib", path.read_bytes())


def test_only_a_superuser_may_upload_a_decision_model(
    draft: Study, owner_client: Client, tmp_path: Any
) -> None:
    page = owner_client.get(change_url(draft)).content.decode()
    assert 'name="model_file"' not in page
    data = change_data(draft, decision_model="income_rule")
    data["model_file"] = _model_file(tmp_path)
    owner_client.post(change_url(draft), data)
    draft.refresh_from_db()
    assert draft.decision_model_blob is None  # the posted file was ignored

    boss = client_for(researcher("boss", superuser=True))
    assert 'name="model_file"' in boss.get(change_url(draft)).content.decode()
    data = change_data(draft, decision_model="uploaded")
    data["model_file"] = _model_file(tmp_path)
    r = boss.post(change_url(draft), data)
    assert r.status_code == 302, r.content.decode()[:2000]
    draft.refresh_from_db()
    assert draft.decision_model == "uploaded" and draft.decision_model_blob
