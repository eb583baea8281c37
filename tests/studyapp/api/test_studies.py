"""Study endpoints on real rows: create, settings, state, duplicate, share, pool upload,
delete, token. Every refusal names the problem and leaves the database as it was."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from recourse_engine import carloan_schema
from studyapp.definition import study_config
from studyapp.models import Condition, Study
from studyapp.studies import carloan
from tests.studyapp.api.conftest import PASSWORD, Cast, pool_csv

pytestmark = pytest.mark.django_db


def _study_state(slug: str) -> tuple:
    s = Study.objects.get(slug=slug)
    conditions = list(s.conditions.values_list("name", "design"))
    return (
        s.title,
        s.state,
        s.design,
        s.pool_hash,
        s.pool_rows,
        s.texts,
        s.outcome_codes,
        conditions,
    )


# --- create ------------------------------------------------------------------------------
def test_create_from_builtin_carloan_schema(cast: Cast) -> None:
    client = cast.client("shared")
    r = client.post(
        "/api/studies/",
        {
            "slug": "ja-loans",
            "title": "Car loan (ja)",
            "language": "ja",
            "design": "sparsest:1,random:2",
            "pool_size": 25,
            "outcome_codes": {"completed": {"redirect_url": "https://panel.example/done"}},
            "conditions": [{"name": "distance"}, {"name": "balanced", "design": "random:3"}],
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["owner"] == "shared" and body["state"] == "draft"
    assert body["design"] == "sparsest:1,random:2" and body["pool_rows"] == 25
    assert body["language"] == "ja" and "ja" in body["texts"] and "en" in body["texts"]
    assert body["outcome_codes"]["completed"]["redirect_url"] == "https://panel.example/done"
    assert body["outcome_codes"]["completed"]["code"]  # a code was drawn and kept
    assert [c["name"] for c in body["conditions"]] == ["distance", "balanced"]
    study = Study.objects.get(slug="ja-loans")
    assert study.owner == cast.users["shared"]
    # the car-loan schema with its Japanese labels (the console's and the demo's too)
    assert study.schema == carloan.schema_with_translations(carloan_schema().to_dict())
    assert list(study.conditions.values_list("design", flat=True)) == ["", "random:3"]


def test_create_with_schema_and_pool_text(cast: Cast) -> None:
    r = cast.client("owner").post(
        "/api/studies/",
        {
            "slug": "custom",
            "title": "Custom",
            "schema": carloan_schema().to_dict(),
            "pool": pool_csv(33).decode(),
            "design": "proximate:2",
            "texts": {"en": {"consent": "Please agree."}},
            "consent_version": "v9",
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    study = Study.objects.get(slug="custom")
    assert study.pool_rows == 33 and study.consent_version == "v9"
    assert study.texts == {"en": {"consent": "Please agree."}}


@pytest.mark.parametrize(
    ("payload", "field", "words"),
    [
        ({"desing": "random:1"}, "desing", "Unknown field"),
        ({"design": "sparsest:1,proxmate:1"}, "design", "proxmate"),
        ({"slug": "loans"}, "slug", "exists already"),
        ({"slug": "bad slug!"}, "slug", "letters, digits"),
        ({"schema": [1, 2]}, "schema", "JSON object"),
        ({"schema": {"items": "nope"}}, "schema", "schema"),
        ({"language": "fr"}, "language", "fr"),
        ({"texts": {"de": {"consent": "x"}}}, "texts", "de"),
        ({"outcome_codes": {"finished": {"code": "X"}}}, "outcome_codes", "finished"),
        ({"outcome_codes": {"completed": {"redirect_url": "not a url"}}}, "outcome_codes", "URL"),
        ({"conditions": [{"name": "a"}, {"name": "a"}]}, "conditions", "duplicate"),
        ({"conditions": [{"name": "a", "design": "nope:1"}]}, "conditions", "nope"),
        ({"pool_size": 5}, "pool_size", "10"),
        ({"pool": "id,income\n1,2\n"}, "pool", "missing column"),
        ({"seed": -1}, "seed", "0"),
        ({"attention_rule": "ignore"}, "attention_rule", "ignore"),
    ],
)
def test_create_refuses_bad_payloads(cast: Cast, payload: dict, field: str, words: str) -> None:
    before = Study.objects.count()
    body = {"slug": "fresh", "title": "Fresh", "pool_size": 20, **payload}
    if "pool" in payload:
        body.pop("pool_size")
    r = cast.client("owner").post("/api/studies/", body, format="json")
    assert r.status_code == 400, r.content
    errors = r.json()
    assert field in errors, errors
    assert words.lower() in str(errors[field]).lower(), errors
    assert Study.objects.count() == before


def test_create_bad_pool_lists_rejected_rows(cast: Cast) -> None:
    lines = pool_csv(12).decode().splitlines()
    cells = lines[3].split(",")
    cells[4] = "99"  # residence_prefecture: an option code out of range, on line 4
    lines[3] = ",".join(cells)
    r = cast.client("owner").post(
        "/api/studies/",
        {"slug": "fresh", "title": "Fresh", "pool": "\n".join(lines) + "\n"},
        format="json",
    )
    assert r.status_code == 400
    preview = r.json()["pool_preview"]
    assert preview["ok"] is False
    assert [row["line"] for row in preview["rejected"]] == [4]
    assert "99" in preview["rejected"][0]["reason"]
    assert not Study.objects.filter(slug="fresh").exists()


def test_create_needs_json(cast: Cast) -> None:
    r = cast.client("owner").post("/api/studies/", {"slug": "x", "title": "y"})  # multipart
    assert r.status_code == 415
    assert not Study.objects.filter(slug="x").exists()


# --- list and retrieve -------------------------------------------------------------------
def test_list_shows_only_visible_studies(cast: Cast) -> None:
    seen = {}
    for role in ("other", "shared", "owner", "superuser"):
        r = cast.client(role).get("/api/studies/")
        assert r.status_code == 200
        seen[role] = sorted(s["slug"] for s in r.json()["results"])
        assert r.json()["count"] == len(seen[role])
    assert seen == {
        "other": ["elsewhere"],
        "shared": ["loans"],
        "owner": ["loans"],
        "superuser": ["elsewhere", "loans"],
    }
    r = cast.client("owner").get("/api/studies/")
    row = r.json()["results"][0]
    assert row["n_participants"] == 2 and row["shared_with"] == ["shared"]
    assert "pool_csv" not in row and "schema" not in row


def test_retrieve_has_schema_not_pool(cast: Cast) -> None:
    body = cast.client("shared").get("/api/studies/loans/").json()
    assert body["schema"] == cast.study.schema
    assert "pool_csv" not in body and body["pool_rows"] == 40


# --- settings ----------------------------------------------------------------------------
def test_patch_draft_settings(cast: Cast) -> None:
    client = cast.client("owner")
    old_code = cast.study.outcome_codes["screened_out"]["code"]
    r = client.patch(
        "/api/studies/loans/",
        {
            "design": "random:4",
            "panel_param": "PANEL_ID",
            "outcome_codes": {"completed": {"code": "DONE-1"}},
            "attention_checks": [
                {
                    "key": "ac1",
                    "prompt": "Choose b.",
                    "options": ["a", "b", "c"],
                    "answer": 2,
                    "page": "profile",
                }
            ],
            "attention_max_failures": 1,
        },
        format="json",
    )
    assert r.status_code == 200, r.content
    study = Study.objects.get(slug="loans")
    assert study.design == "random:4" and study.panel_param == "PANEL_ID"
    assert study.outcome_codes["completed"]["code"] == "DONE-1"
    assert study.outcome_codes["screened_out"]["code"] == old_code  # merged, not replaced
    assert study.attention_max_failures == 1 and study.attention_checks[0]["key"] == "ac1"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"design": "sparsest:x"}, "design"),
        ({"slug": "renamed"}, "slug"),
        ({"state": "live"}, "state"),
        ({"assignment_timeout_minutes": 0}, "assignment_timeout_minutes"),
        (
            {"attention_checks": [{"key": "a", "prompt": "?", "options": ["one"], "answer": 1}]},
            "attention_checks",
        ),
        ({"decision_model": "uploaded"}, "decision_model"),
        ({"panel_param": "has space"}, "panel_param"),
    ],
)
def test_patch_refuses_bad_values(cast: Cast, payload: dict, field: str) -> None:
    before = _study_state("loans")
    r = cast.client("owner").patch("/api/studies/loans/", payload, format="json")
    assert r.status_code == 400, r.content
    assert field in r.json()
    assert _study_state("loans") == before


def test_live_study_freezes_design_but_not_title(cast: Cast) -> None:
    client = cast.client("owner")
    assert (
        client.post("/api/studies/loans/state/", {"state": "live"}, format="json").status_code
        == 200
    )
    before = _study_state("loans")
    for payload in ({"design": "random:5"}, {"texts": {"en": {}}}, {"seed": 3}, {"conditions": []}):
        r = client.patch("/api/studies/loans/", {"title": "T2", **payload}, format="json")
        assert r.status_code == 409, r.content
        assert "live" in r.json()["detail"] and next(iter(payload)) in r.json()["detail"]
        assert _study_state("loans") == before  # the title did not change either
    r = client.patch("/api/studies/loans/", {"title": "Renamed while live"}, format="json")
    assert r.status_code == 200 and Study.objects.get(slug="loans").title == "Renamed while live"


def test_conditions_cannot_change_once_participants_are_assigned(cast: Cast) -> None:
    from tests.studyapp.api.conftest import add_participant

    client = cast.client("owner")
    client.patch("/api/studies/loans/", {"conditions": [{"name": "a"}]}, format="json")
    add_participant(cast.study, condition="a")
    r = client.patch("/api/studies/loans/", {"conditions": [{"name": "b"}]}, format="json")
    assert r.status_code == 409 and "duplicate" in r.json()["detail"]
    assert list(Condition.objects.filter(study=cast.study).values_list("name", flat=True)) == ["a"]


# --- state --------------------------------------------------------------------------------
def test_state_moves(cast: Cast) -> None:
    client = cast.client("shared")
    url = "/api/studies/loans/state/"
    r = client.post(url, {"state": "closed"}, format="json")
    assert r.status_code == 409 and "draft to closed" in r.json()["detail"]
    r = client.post(url, {"state": "draft"}, format="json")
    assert r.status_code == 400 and "state" in r.json()
    r = client.post(url, {"state": "live", "now": True}, format="json")
    assert r.status_code == 400 and "now" in r.json()
    assert Study.objects.get(slug="loans").state == "draft"
    assert client.post(url, {"state": "live"}, format="json").json()["state"] == "live"
    assert client.post(url, {"state": "closed"}, format="json").json()["state"] == "closed"
    assert client.post(url, {"state": "live"}, format="json").json()["state"] == "live"


# --- duplicate and share ------------------------------------------------------------------
def test_duplicate(cast: Cast) -> None:
    client = cast.client("owner")
    client.patch(
        "/api/studies/loans/", {"conditions": [{"name": "a", "design": "random:2"}]}, format="json"
    )
    client.post("/api/studies/loans/state/", {"state": "live"}, format="json")
    r = client.post("/api/studies/loans/duplicate/", {"slug": "loans-2"}, format="json")
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["state"] == "draft" and body["owner"] == "owner" and body["n_participants"] == 0
    assert body["shared_with"] == [] and body["conditions"][0]["design"] == "random:2"
    assert (
        body["outcome_codes"]["completed"]["code"] != cast.study.outcome_codes["completed"]["code"]
    )
    for bad, words in (
        ({"slug": "loans"}, "exists"),
        ({}, "required"),
        ({"slug": "a b"}, "letters"),
    ):
        r = client.post("/api/studies/loans/duplicate/", bad, format="json")
        assert r.status_code == 400 and words in str(r.json()["slug"])
    assert Study.objects.count() == 3


def test_share_and_unshare(cast: Cast) -> None:
    owner, other = cast.client("owner"), cast.client("other")
    assert other.get("/api/studies/loans/").status_code == 404
    r = owner.post("/api/studies/loans/share/", {"username": "other"}, format="json")
    assert r.status_code == 200 and sorted(r.json()["shared_with"]) == ["other", "shared"]
    assert other.get("/api/studies/loans/").status_code == 200
    # the researcher it is shared with still may not share it on
    r = other.post("/api/studies/loans/share/", {"username": "boss"}, format="json")
    assert r.status_code == 403
    r = owner.post(
        "/api/studies/loans/share/", {"username": "other", "remove": True}, format="json"
    )
    assert r.status_code == 200 and r.json()["shared_with"] == ["shared"]
    assert other.get("/api/studies/loans/").status_code == 404
    for name, words in (("plain", "No researcher"), ("ghost", "No researcher"), ("owner", "owns")):
        r = owner.post("/api/studies/loans/share/", {"username": name}, format="json")
        assert r.status_code == 400 and words in str(r.json()["username"]), r.content
    assert list(cast.study.shared_with.values_list("username", flat=True)) == ["shared"]


# --- pool upload --------------------------------------------------------------------------
def test_pool_upload_multipart_and_csv_body(cast: Cast) -> None:
    client = cast.client("owner")
    upload = SimpleUploadedFile("pool.csv", pool_csv(21, seed=9), content_type="text/csv")
    r = client.put("/api/studies/loans/pool/", {"file": upload}, format="multipart")
    assert r.status_code == 200, r.content
    assert r.json()["ok"] is True and r.json()["rows"] == 21
    assert set(r.json()["distributions"]) == set(carloan_schema().keys)
    assert Study.objects.get(slug="loans").pool_rows == 21
    r = client.put("/api/studies/loans/pool/", pool_csv(22, seed=10), content_type="text/csv")
    assert r.status_code == 200 and Study.objects.get(slug="loans").pool_rows == 22


@pytest.mark.parametrize(
    ("body", "content_type", "words"),
    [
        (b"", "text/csv", "empty"),
        (b"id;income;a\n1;2;3\n", "text/csv", "comma"),
        (b"\xff\xfe\x00b", "text/csv", "binary"),
        ("bad-row", "text/csv", "not an option code"),
        (None, "multipart", "file"),
    ],
)
def test_pool_upload_bad_file_changes_nothing(
    cast: Cast, body: Any, content_type: str, words: str
) -> None:
    client = cast.client("owner")
    before = _study_state("loans")
    if body == "bad-row":
        lines = pool_csv(15).decode().splitlines()
        lines[5] = lines[5].rsplit(",", 1)[0] + ",0"
        body = ("\n".join(lines) + "\n").encode()
    if content_type == "multipart":
        r = client.put("/api/studies/loans/pool/", {}, format="multipart")
    else:
        r = client.put("/api/studies/loans/pool/", body, content_type=content_type)
    assert r.status_code == 400, r.content
    assert words in r.content.decode()
    if body and b"not" not in body:
        assert r.json()["ok"] is False
    if words == "not an option code":
        assert [row["line"] for row in r.json()["rejected"]] == [6]
    assert _study_state("loans") == before


def test_pool_of_live_study_is_frozen(cast: Cast) -> None:
    client = cast.client("owner")
    client.post("/api/studies/loans/state/", {"state": "live"}, format="json")
    before = _study_state("loans")
    r = client.put("/api/studies/loans/pool/", pool_csv(20), content_type="text/csv")
    assert r.status_code == 409 and "frozen" in r.json()["detail"]
    assert _study_state("loans") == before


def test_pool_refuses_json_body(cast: Cast) -> None:
    r = cast.client("owner").put("/api/studies/loans/pool/", {"file": "x"}, format="json")
    assert r.status_code == 415


# --- delete ---------------------------------------------------------------------------------
def test_delete_empty_study_only(cast: Cast) -> None:
    client = cast.client("owner")
    r = client.post(
        "/api/studies/", {"slug": "empty", "title": "E", "pool_size": 10}, format="json"
    )
    assert r.status_code == 201
    assert client.delete("/api/studies/empty/").status_code == 204
    assert not Study.objects.filter(slug="empty").exists()
    r = client.delete("/api/studies/loans/")
    assert r.status_code == 409 and "2 participant" in r.json()["detail"]
    assert Study.objects.filter(slug="loans").exists()


# --- token ----------------------------------------------------------------------------------
def test_token_for_researchers_only(cast: Cast) -> None:
    from rest_framework.test import APIClient

    anon = APIClient()
    r = anon.post("/api/token/", {"username": "owner", "password": PASSWORD}, format="json")
    assert r.status_code == 200
    token = r.json()["token"]
    again = anon.post("/api/token/", {"username": "owner", "password": PASSWORD}, format="json")
    assert again.json()["token"] == token  # one token per account
    authed = APIClient()
    authed.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert authed.get("/api/studies/").status_code == 200
    r = anon.post("/api/token/", {"username": "owner", "password": "wrong"}, format="json")
    assert r.status_code == 400 and "token" not in r.json()
    r = anon.post("/api/token/", {"username": "plain", "password": PASSWORD}, format="json")
    assert r.status_code == 400 and "researcher" in str(r.json())
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert bad.get("/api/studies/").status_code == 401
    # a participant's access code is no credential here, in any place it could be sent
    code = cast.study.participants.first().code
    for header in (f"Token {code}", f"Bearer {code}"):
        bad.credentials(HTTP_AUTHORIZATION=header)
        assert bad.get("/api/studies/loans/participants/").status_code == 401
    assert anon.get(f"/api/studies/loans/participants/?code={code}").status_code == 401


# --- the configuration model in the OpenAPI document ----------------------------------------
def test_openapi_describes_settings_with_the_configuration_model(cast: Cast) -> None:
    doc = cast.client("owner").get("/api/schema/?format=json").json()
    components = doc["components"]["schemas"]
    patch = doc["paths"]["/api/studies/{slug}/"]["patch"]["requestBody"]["content"]
    ref = patch["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    settings = components[ref]
    assert set(settings["properties"]) == set(study_config.SETTINGS)
    assert settings["additionalProperties"] is False
    texts = components[settings["properties"]["texts"]["$ref"].rsplit("/", 1)[-1]]
    page_texts = components[texts["properties"]["ja"]["$ref"].rsplit("/", 1)[-1]]
    assert tuple(page_texts["properties"]) == study_config.TEXT_KEYS
    post = doc["paths"]["/api/studies/"]["post"]["requestBody"]["content"]["application/json"]
    create = components[post["schema"]["$ref"].rsplit("/", 1)[-1]]
    assert {"slug", "title", "schema", "pool", "pool_size"} <= set(create["properties"])
    assert set(create["required"]) == {"slug", "title"}
    detail = components["StudyDetail"]["properties"]
    assert tuple(detail["texts"]["properties"]["en"]["properties"]) == study_config.TEXT_KEYS
    assert detail["quotas"]["items"]["properties"]["limit"]["minimum"] == 1


def test_patch_refuses_quotas_on_a_condition_it_removes(cast: Cast) -> None:
    client = cast.client("owner")
    url = "/api/studies/loans/"
    r = client.patch(
        url, {"conditions": [{"name": "a"}], "quotas": [{"condition": "a", "limit": 4}]},
        format="json",
    )  # fmt: skip
    assert r.status_code == 200, r.content
    assert r.json()["quotas"] == [
        {"condition": "a", "screening_key": "", "screening_value": "", "limit": 4}
    ]
    before = _study_state("loans")
    r = client.patch(url, {"conditions": [{"name": "b"}]}, format="json")
    assert r.status_code == 400
    assert r.json()["quotas"] == ["quotas[0].condition: no condition named 'a' (conditions: b)"]
    assert _study_state("loans") == before
    assert cast.study.quotas.get().condition.name == "a"


def test_the_token_endpoint_throttles_password_guessing(cast: Cast) -> None:
    from django.core.cache import cache
    from rest_framework.test import APIClient

    cache.clear()
    anon = APIClient()
    # a username each: the login throttle (django-axes, per address and username) stays out
    # of it; this is the per-address DRF throttle
    codes = [
        anon.post("/api/token/", {"username": f"user{i}", "password": f"guess{i}"}, format="json")
        for i in range(12)
    ]
    assert [r.status_code for r in codes[:10]] == [400] * 10
    assert codes[10].status_code == 429 and int(codes[10]["Retry-After"]) > 0
    # the right password is refused too while the client is throttled
    r = anon.post("/api/token/", {"username": "owner", "password": PASSWORD}, format="json")
    assert r.status_code == 429 and "token" not in r.json()
    cache.clear()
