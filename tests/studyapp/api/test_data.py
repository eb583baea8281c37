"""Participant and evaluation lists (paging, filters, panel ids, free text), deletion on
request, the export ZIP and the monitor figures, checked against the rows themselves."""

from __future__ import annotations

import csv
import io
import zipfile
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator

from analysis import contract
from studyapp.api import data_serializers as ds
from studyapp.models import Evaluation, Participant, Profile, Recourse, Withdrawal
from tests.studyapp.api.conftest import Cast, add_participant

pytestmark = pytest.mark.django_db
S = Participant.State


@pytest.fixture
def crowd(cast: Cast) -> Cast:
    """Nine participants in two conditions and several states (plus the cast's two)."""
    study = cast.study
    for i in range(4):
        add_participant(study, condition="a", recruitment_id=f"A{i}", why=f"reason {i}")
    add_participant(study, condition="b", state=S.EVALUATING, evaluations=3, flagged=True)
    add_participant(study, condition="b", state=S.SCREENED_OUT, evaluations=0)
    add_participant(study, condition="b", state=S.WITHDRAWN, evaluations=0)
    add_participant(study, condition="a", created_ago=timedelta(days=3))
    add_participant(study, condition="b", created_ago=timedelta(days=10), evaluations=5)
    return cast


def _ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


# --- participants -----------------------------------------------------------------------------
def test_participants_paged(crowd: Cast) -> None:
    client = crowd.client("shared")
    url = "/api/studies/loans/participants/"
    everyone = list(
        Participant.objects.filter(study=crowd.study).order_by("pk").values_list("pk", flat=True)
    )
    first = client.get(url, {"page_size": 4})
    assert first.json()["count"] == len(everyone) == 11
    assert _ids(first) == everyone[:4] and first.json()["next"]
    second = client.get(first.json()["next"])
    assert _ids(second) == everyone[4:8]
    last = client.get(url, {"page_size": 4, "page": 3})
    assert _ids(last) == everyone[8:] and last.json()["next"] is None
    assert client.get(url, {"page": 9}).status_code == 404
    assert _ids(client.get(url)) == everyone  # 100 a page by default


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"state": "evaluating"}, lambda qs: qs.filter(state=S.EVALUATING)),
        ({"condition": "a"}, lambda qs: qs.filter(condition="a")),
        ({"flagged": "true"}, lambda qs: qs.filter(flagged=True)),
        ({"flagged": "false"}, lambda qs: qs.filter(flagged=False)),
        (
            {"created_after": (timezone.now() - timedelta(days=5)).isoformat()},
            lambda qs: qs.filter(created_at__gte=timezone.now() - timedelta(days=5)),
        ),
        (
            {"created_before": (timezone.now() - timedelta(days=1)).isoformat()},
            lambda qs: qs.filter(created_at__lt=timezone.now() - timedelta(days=1)),
        ),
        (
            {"condition": "b", "state": "screened_out"},
            lambda qs: qs.filter(condition="b", state=S.SCREENED_OUT),
        ),
    ],
)
def test_participant_filters(crowd: Cast, query: dict, expected: Any) -> None:
    want = list(
        expected(Participant.objects.filter(study=crowd.study))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    assert want  # every filter selects someone, so an ignored filter would show
    assert want != list(Participant.objects.filter(study=crowd.study).values_list("pk", flat=True))
    assert _ids(crowd.client("owner").get("/api/studies/loans/participants/", query)) == want


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({"state": "finished"}, "state"),
        ({"flagged": "maybe"}, "flagged"),
        ({"created_after": "last tuesday"}, "created_after"),
        ({"created_before": "2024-13-45"}, "created_before"),
        ({"with_panel_ids": "please"}, "with_panel_ids"),
        ({"page_size": "many"}, None),
    ],
)
def test_participant_filters_refuse_bad_values(crowd: Cast, query: dict, param: str | None) -> None:
    r = crowd.client("owner").get("/api/studies/loans/participants/", query)
    if param is None:  # DRF ignores a bad page size and uses the default
        assert r.status_code == 200 and len(r.json()["results"]) == 11
        return
    assert r.status_code == 400, r.content
    assert param in r.json()


def test_panel_ids_only_for_owner_on_request(crowd: Cast) -> None:
    url = "/api/studies/loans/participants/"
    plain = crowd.client("owner").get(url).json()["results"]
    assert all("recruitment_id" not in row and "panel" not in row for row in plain)
    assert all("code" not in row for row in plain)  # the access code never leaves
    rows = crowd.client("owner").get(url, {"with_panel_ids": "1"}).json()["results"]
    by_id = {row["id"]: row for row in rows}
    for p in Participant.objects.filter(study=crowd.study):
        assert by_id[p.pk]["recruitment_id"] == p.recruitment_id
        assert "code" not in by_id[p.pk]
    r = crowd.client("shared").get(url, {"with_panel_ids": "1"})
    assert r.status_code == 403 and "owner" in r.json()["detail"]


def test_participant_detail(crowd: Cast) -> None:
    p = Participant.objects.filter(study=crowd.study, recruitment_id="A1").get()
    body = crowd.client("shared").get(f"/api/studies/loans/participants/{p.pk}/").json()
    assert body["id"] == p.pk and body["state"] == "completed" and body["n_evaluations"] == 2
    assert body["profile"] == {"values": p.profile.values, "decision": "rejected"}
    assert "recruitment_id" not in body and "code" not in body
    owner = crowd.client("owner")
    detail = owner.get(f"/api/studies/loans/participants/{p.pk}/", {"with_panel_ids": "yes"}).json()
    assert detail["recruitment_id"] == "A1" and detail["panel"] == {"STUDY_ID": "panel-study"}
    # another study's participant is not reachable through this study
    theirs = add_participant(crowd.study.__class__.objects.get(slug="elsewhere"))
    assert owner.get(f"/api/studies/loans/participants/{theirs.pk}/").status_code == 404
    assert owner.get("/api/studies/loans/participants/99999999/").status_code == 404


def test_delete_participant_on_request(crowd: Cast) -> None:
    p = Participant.objects.filter(study=crowd.study, recruitment_id="A2").get()
    pk = p.pk
    url = f"/api/studies/loans/participants/{pk}/"
    others = Evaluation.objects.exclude(participant_id=pk).count()
    r = crowd.client("shared").delete(url)
    assert r.status_code == 204
    assert not Participant.objects.filter(pk=pk).exists()
    assert not Evaluation.objects.filter(participant_id=pk).exists()
    assert not Recourse.objects.filter(participant_id=pk).exists()
    assert not Profile.objects.filter(participant_id=pk).exists()
    assert Evaluation.objects.count() == others  # nobody else's answers went
    log = Withdrawal.objects.get(participant_number=pk)
    assert log.by == Withdrawal.By.RESEARCHER and log.by_user == crowd.users["shared"]
    assert crowd.client("owner").delete(url).status_code == 404
    assert Withdrawal.objects.count() == 1


# --- evaluations --------------------------------------------------------------------------
def test_evaluations_filters_and_text(crowd: Cast) -> None:
    client = crowd.client("shared")
    url = "/api/studies/loans/evaluations/"
    all_rows = client.get(url, {"page_size": 1000}).json()
    evs = Evaluation.objects.filter(participant__study=crowd.study)
    assert all_rows["count"] == evs.count()
    assert all("acceptance_why" not in row for row in all_rows["results"])
    p = Participant.objects.get(study=crowd.study, recruitment_id="A3")
    rows = client.get(url, {"participant": p.pk, "with_text": "1"}).json()["results"]
    assert [r["recourse"] for r in rows] == list(
        Recourse.objects.filter(participant=p).order_by("position").values_list("pk", flat=True)
    )
    assert {r["acceptance_why"] for r in rows} == {"reason 3"}
    rows = client.get(url, {"strategy": "random", "page_size": 1000}).json()["results"]
    assert len(rows) == evs.filter(recourse__strategy="random").count() > 0
    assert {r["strategy"] for r in rows} == {"random"}
    rows = client.get(url, {"condition": "b", "page_size": 1000}).json()["results"]
    assert len(rows) == evs.filter(participant__condition="b").count() == 8
    r = client.get(url, {"participant": "abc"})
    assert r.status_code == 400 and "participant" in r.json()
    r = client.get(url, {"with_text": "2"})
    assert r.status_code == 400 and "with_text" in r.json()


# --- export -------------------------------------------------------------------------------
def _zip(response: Any) -> zipfile.ZipFile:
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert 'filename="loans-export.zip"' in response["Content-Disposition"]
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def _csv(zf: zipfile.ZipFile, name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(zf.read(name).decode())))


def test_export_zip(crowd: Cast) -> None:
    zf = _zip(crowd.client("shared").get("/api/studies/loans/export/"))
    tables = ("evaluations", "participants", "page_visits", "participants_wide")
    assert set(zf.namelist()) == {
        "codebook.csv",
        "schema.json",
        *(f"{t}.csv" for t in tables),
        *(f"{t}.parquet" for t in tables),
    }
    evaluations = _csv(zf, "evaluations.csv")
    participants = _csv(zf, "participants.csv")
    assert len(evaluations) == Evaluation.objects.filter(participant__study=crowd.study).count()
    assert len(participants) == Participant.objects.filter(study=crowd.study).count()
    assert "acceptance_why" not in evaluations[0] and "recruitment_id" not in participants[0]
    assert "reason 1" not in zf.read("evaluations.csv").decode()

    zf = _zip(crowd.client("owner").get("/api/studies/loans/export/?with_text=1&with_panel_ids=1"))
    evaluations = _csv(zf, "evaluations.csv")
    assert {"reason 1", "because"} <= {row["acceptance_why"] for row in evaluations}
    panel = {row["recruitment_id"] for row in _csv(zf, "participants.csv")}
    assert {"A0", "A1", "A2", "A3", "PID-1"} <= panel


def _same(api: Any, cell: str) -> bool:
    """An API value and the export's CSV cell for it say the same thing."""
    if api is None:  # e.g. the ranks of a recourse stored before they were recorded
        return cell == ""
    if isinstance(api, list):
        return ";".join(api) == cell
    if isinstance(api, float):
        return api == pytest.approx(float(cell), abs=5e-4)  # the export rounds to 3 places
    if isinstance(api, str) and api.endswith("Z"):  # DRF writes UTC as Z
        return datetime.fromisoformat(api) == datetime.fromisoformat(cell)
    return str(api) == cell


def test_api_evaluations_are_the_export_columns(crowd: Cast) -> None:
    """Every evaluation field but the API's own id is an export column with the same value."""
    client = crowd.client("owner")
    url = "/api/studies/loans/evaluations/"
    api = client.get(url, {"page_size": 1000, "with_text": "1"}).json()["results"]
    rows = {
        int(r["recourse"]): r
        for r in _csv(_zip(client.get("/api/studies/loans/export/?with_text=1")), "evaluations.csv")
    }
    assert (
        len(api) == len(rows) == Evaluation.objects.filter(participant__study=crowd.study).count()
    )
    fields = ds.EvaluationWithTextSerializer.Meta.fields
    assert fields[0] == "id" and list(api[0]) == fields
    for item in api:
        row = rows[item["recourse"]]
        for field in fields[1:]:
            assert _same(item[field], row[field]), (field, item[field], row[field])


def test_api_schema_describes_fields_in_the_codebooks_words() -> None:
    schemas = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    evaluation = schemas["EvaluationWithText"]["properties"]
    for field in (
        "participant",
        "strategy",
        "origin",
        "method",
        "sparsity",
        "sparsity_rank",
        "proximity_rank",
        "impossible",
        "acceptance_why",
    ):
        assert evaluation[field]["description"] == contract.COLUMNS[field].describe(in_file=False)
    assert evaluation["changed"]["description"] == "changed item keys"  # a list, not ';'-joined
    participant = schemas["ParticipantWithPanel"]["properties"]
    assert participant["id"]["description"] == contract.COLUMNS["participant"].describe()
    assert participant["income_jpy"]["description"] == contract.COLUMNS["income"].describe()
    assert participant["panel"]["description"] == contract.COLUMNS["panel"].describe()


def test_export_refusals_are_json(crowd: Cast) -> None:
    client = crowd.client("shared")
    r = client.get("/api/studies/loans/export/?with_panel_ids=1", HTTP_ACCEPT="application/zip")
    assert r.status_code == 403 and r["Content-Type"] == "application/json"
    r = client.get("/api/studies/loans/export/?with_text=perhaps")
    assert r.status_code == 400 and "with_text" in r.json()


# --- monitor ------------------------------------------------------------------------------
def test_monitor_numbers_match_rows(crowd: Cast) -> None:
    body = crowd.client("shared").get("/api/studies/loans/monitor/").json()
    qs = Participant.objects.filter(study=crowd.study)
    assert body["study"] == "loans" and body["participants"] == qs.count() == 11
    for state in S.values:
        assert body["by_state"][state] == qs.filter(state=state).count(), state
    assert (
        body["by_condition"]["a"]["completed"]
        == qs.filter(condition="a", state=S.COMPLETED).count()
        == 5
    )
    completed = qs.filter(state=S.COMPLETED).count()
    assert body["completion"]["completed"] == completed
    assert body["completion"]["rate"] == round(completed / qs.count(), 4)
    assert body["recourse_failures"]["flagged"] == qs.filter(flagged=True).count() == 1
    assert body["duration_seconds"]["n"] == completed


def test_test_participants_are_left_out_of_the_lists_unless_asked(crowd: Cast) -> None:
    client = crowd.client("shared")
    bot = Participant.objects.filter(study=crowd.study, evaluations__isnull=False).first()
    Participant.objects.filter(pk=bot.pk).update(is_test=True)
    people = "/api/studies/loans/participants/"
    assert bot.pk not in _ids(client.get(people))
    assert bot.pk in _ids(client.get(people, {"with_test": "1"}))
    rows = client.get("/api/studies/loans/evaluations/", {"page_size": 1000}).json()["results"]
    assert rows and all(r["participant"] != bot.pk for r in rows)
    with_test = client.get("/api/studies/loans/evaluations/", {"page_size": 1000, "with_test": "1"})
    assert any(r["participant"] == bot.pk for r in with_test.json()["results"])
    assert client.get(people, {"with_test": "maybe"}).status_code == 400
