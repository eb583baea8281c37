"""Every API endpoint x every kind of caller, with the status each must get.

Two matrices: who the caller is to the study (anonymous, non-staff, another researcher,
one it is shared with, its owner, a superuser; researchers hold all study permissions), and
which Django model permissions a staff account holds (none, view only, change only, full;
the caller owns the study, so only the permissions decide). The endpoint list is read from
the URL resolver (and checked against the OpenAPI schema): an endpoint added without a row
here fails `test_matrix_covers_every_endpoint`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.admindocs.views import simplify_regex
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.generators import SchemaGenerator

from studyapp.models import Participant, Study, Withdrawal
from tests.studyapp.api.conftest import PASSWORD, PERM_SETS, ROLES, Cast, pool_csv
from tests.studyapp.api.study_file_rows import study_file_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast(module_cast: Cast) -> Cast:
    """One cast for the module's hundreds of requests (each test rolls back its own)."""
    return module_cast


def expect(*, other: int, shared: int, owner: int, superuser: int | None = None) -> dict:
    """Anonymous 401 and non-staff 403 always; the researchers as given."""
    return {
        "anonymous": 401,
        "plain": 403,
        "other": other,
        "shared": shared,
        "owner": owner,
        "superuser": owner if superuser is None else superuser,
    }


SEEN = expect(other=404, shared=200, owner=200)  # any researcher who can see the study
OWNER = expect(other=404, shared=403, owner=200)  # the owner alone: panel ids, sharing
PANEL = "with_panel_ids=1"  # the query that asks for the panel ids
QUEUED = expect(other=404, shared=202, owner=202)  # a task queued for those who may change it


#: which permission sets a kind of endpoint is open to; as in the admin, the change
#: permission on a model lets one view it too
OPEN_TO = {
    "view": ("view", "change", "full"),  # reads: view (or change) permissions
    "change": ("change", "full"),
    "add": ("full",),
    "delete": ("full",),
}


@dataclass(frozen=True)
class Row:
    method: str
    path: str
    statuses: dict[str, int]
    needs: str  # a key of OPEN_TO
    query: str = ""
    body: Any = None  # dict, bytes (text/csv) or a function of the role
    extra: dict[str, Any] = field(default_factory=dict)
    #: how a bytes body is sent
    content_type: str = "text/csv"


def token_body(role: str) -> dict[str, str]:
    """Each caller posts their own credentials (anonymous has none)."""
    names = {"plain": "plain", "other": "other", "shared": "shared", "owner": "owner"}
    names["superuser"] = "boss"
    names.update({f"perm_{s}": f"perm_{s}" for s in PERM_SETS})
    return {"username": names[role], "password": PASSWORD} if role in names else {}


ROWS = [
    Row(
        "POST",
        "/api/token/",
        {
            "anonymous": 400,
            "plain": 400,
            "other": 200,
            "shared": 200,
            "owner": 200,
            "superuser": 200,
        },
        body=token_body,
        needs="view",
    ),
    Row("GET", "/api/schema/", expect(other=200, shared=200, owner=200), needs="view"),
    Row("GET", "/api/docs/", expect(other=200, shared=200, owner=200), needs="view"),
    Row("GET", "/api/studies/", expect(other=200, shared=200, owner=200), needs="view"),
    Row(
        "POST",
        "/api/studies/",
        expect(other=201, shared=201, owner=201),
        body={"slug": "new-study", "title": "New", "pool_size": 20},
        needs="add",
    ),
    Row("GET", "/api/studies/{slug}/", SEEN, needs="view"),
    Row("PATCH", "/api/studies/{slug}/", SEEN, body={"title": "Renamed"}, needs="change"),
    # the study has participants: its owner is told to close it instead (409)
    Row("DELETE", "/api/studies/{slug}/", expect(other=404, shared=403, owner=409), needs="delete"),
    Row("POST", "/api/studies/{slug}/state/", SEEN, body={"state": "live"}, needs="change"),
    Row(
        "POST",
        "/api/studies/{slug}/duplicate/",
        expect(other=404, shared=403, owner=201),
        body={"slug": "copy"},
        needs="add",
    ),
    Row("POST", "/api/studies/{slug}/share/", OWNER, body={"username": "other"}, needs="change"),
    Row("PUT", "/api/studies/{slug}/pool/", SEEN, body=pool_csv(30), needs="change"),
    Row("GET", "/api/studies/{slug}/participants/", SEEN, needs="view"),
    Row("GET", "/api/studies/{slug}/participants/", OWNER, query=PANEL, needs="view"),
    Row("GET", "/api/studies/{slug}/participants/{id}/", SEEN, needs="view"),
    Row("GET", "/api/studies/{slug}/participants/{id}/", OWNER, query=PANEL, needs="view"),
    Row(
        "DELETE",
        "/api/studies/{slug}/participants/{id}/",
        expect(other=404, shared=204, owner=204),
        needs="delete",
    ),
    Row("GET", "/api/studies/{slug}/evaluations/", SEEN, needs="view"),
    Row("GET", "/api/studies/{slug}/evaluations/", SEEN, query="with_text=1", needs="view"),
    Row("GET", "/api/studies/{slug}/export/", SEEN, needs="view"),
    Row("GET", "/api/studies/{slug}/export/", OWNER, query=PANEL, needs="view"),
    Row("GET", "/api/studies/{slug}/monitor/", SEEN, needs="view"),
    Row("GET", "/api/studies/{slug}/design-check/", SEEN, needs="view"),
    Row(
        "POST",
        "/api/studies/{slug}/design-check/",
        QUEUED,
        body={"sample_size": 10},
        needs="change",
    ),
    Row("GET", "/api/studies/{slug}/fits/", SEEN, needs="view"),
    Row("POST", "/api/studies/{slug}/fits/", QUEUED, needs="change"),
    Row("GET", "/api/studies/{slug}/page-visits/", SEEN, needs="view"),
    Row("GET", "/api/studies/{slug}/translations/{lang}/", SEEN, needs="view"),
    Row(
        "PUT",
        "/api/studies/{slug}/translations/{lang}/",
        SEEN,
        body=b'msgid ""\nmsgstr ""\n"Language: en\\n"\n',  # a PO file with nothing to change
        content_type="text/x-gettext-translation",
        needs="change",
    ),
    *study_file_rows(Row, expect, SEEN),
]


def _request(cast: Cast, row: Row, role: str) -> Any:
    participant = Participant.objects.filter(study=cast.study).order_by("pk").first()
    path = row.path.format(slug=cast.study.slug, id=participant.pk, lang="en")
    if row.query:
        path += "?" + row.query
    body = row.body(role) if callable(row.body) else row.body
    client = cast.client(role)
    call = getattr(client, row.method.lower())
    if isinstance(body, bytes):
        return call(path, body, content_type=row.content_type)
    if body is None:
        return call(path)
    return call(path, body, format="json")


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(
    "row", ROWS, ids=[f"{r.method} {r.path}{'?' + r.query if r.query else ''}" for r in ROWS]
)
def test_status(cast: Cast, row: Row, role: str) -> None:
    before = _snapshot(cast.study)
    response = _request(cast, row, role)
    expected = row.statuses[role]
    assert response.status_code == expected, (row.method, row.path, role, _body(response))
    if expected >= 400:
        assert _snapshot(cast.study) == before, "a refused request changed something"
    if expected == 401:
        assert response.has_header("WWW-Authenticate")
    if expected == 404 and row.path.startswith("/api/studies/{slug}"):
        assert "loans" not in _body(response)  # the refusal does not echo the study


@pytest.mark.parametrize("perm_set", list(PERM_SETS))
@pytest.mark.parametrize(
    "row", ROWS, ids=[f"{r.method} {r.path}{'?' + r.query if r.query else ''}" for r in ROWS]
)
def test_status_by_permission_set(cast: Cast, row: Row, perm_set: str) -> None:
    """A staff account that owns the study gets what its model permissions allow: the
    owner's answer where they suffice, else 403 (400 from the token endpoint, which
    refuses every account that is not a researcher alike); a refusal changes nothing."""
    role = f"perm_{perm_set}"
    Study.objects.filter(pk=cast.study.pk).update(owner=cast.users[role])
    cast.study.refresh_from_db()
    before = _snapshot(cast.study)
    response = _request(cast, row, role)
    if perm_set in OPEN_TO[row.needs]:
        expected = row.statuses["owner"]
    else:
        expected = 400 if row.path == "/api/token/" else 403
    assert response.status_code == expected, (row.method, row.path, perm_set, _body(response))
    if expected >= 400:
        assert _snapshot(cast.study) == before, "a refused request changed something"


def test_staff_without_permissions_is_refused_everything(cast: Cast) -> None:
    """The issue's case: no token, and with a token made by hand still 403 everywhere,
    the study list and creating or launching a study included."""
    from rest_framework.test import APIClient

    client = APIClient()
    r = client.post("/api/token/", token_body("perm_none"), format="json")
    assert r.status_code == 400 and "no permission on studies" in _body(r)
    api = cast.client("perm_none")
    assert api.get("/api/studies/").status_code == 403
    r = api.post("/api/studies/", {"slug": "sneaky", "title": "x", "pool_size": 20}, format="json")
    assert r.status_code == 403 and not Study.objects.filter(slug="sneaky").exists()
    Study.objects.filter(pk=cast.study.pk).update(owner=cast.users["perm_none"])
    r = api.post(f"/api/studies/{cast.study.slug}/state/", {"state": "live"}, format="json")
    assert r.status_code == 403 and "permission" in r.json()["detail"]
    cast.study.refresh_from_db()
    assert cast.study.state == Study.State.DRAFT


def _snapshot(study: Study) -> tuple:
    s = Study.objects.filter(pk=study.pk).first()
    return (
        Study.objects.count(),
        s and (s.title, s.state, s.pool_hash, s.design),
        s and sorted(s.shared_with.values_list("username", flat=True)),
        Participant.objects.count(),
        Withdrawal.objects.count(),
    )


def _body(response: Any) -> str:
    if getattr(response, "streaming", False):
        return "<stream>"
    return response.content.decode(errors="replace")[:500]


# --- the matrix covers every endpoint ------------------------------------------------------
def _api_operations() -> set[tuple[str, str]]:
    """(method, path) of every route under /api/ in the URL resolver, e.g.
    ("GET", "/api/studies/<slug>/participants/<pk>/")."""
    out: set[tuple[str, str]] = set()

    def walk(patterns: list, prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                path = re.sub(r"<(?:\w+:)?(\w+)>", r"<\1>", simplify_regex(prefix + str(p.pattern)))
                if not path.startswith("/api/"):
                    continue
                callback = p.callback
                actions = getattr(callback, "actions", None)
                if actions:
                    methods = set(actions)
                else:
                    view = callback.view_class
                    methods = {
                        m
                        for m in view.http_method_names
                        if m not in ("options", "head") and hasattr(view, m)
                    }
                out.update((m.upper(), path) for m in methods if m not in ("head", "options"))

    walk(get_resolver().url_patterns, "")
    return out


def _normal(path: str) -> str:
    return path.replace("{slug}", "<slug>").replace("{id}", "<pk>").replace("{lang}", "<lang>")


def test_matrix_covers_every_endpoint() -> None:
    routes = _api_operations()
    rows = {(r.method, _normal(r.path)) for r in ROWS}
    assert routes - rows == set(), "endpoints without a row in the permission matrix"
    assert rows - routes == set(), "matrix rows for endpoints that do not exist"
    schema = SchemaGenerator().get_schema(request=None, public=True)
    documented = {(m.upper(), _normal(p)) for p, ops in schema["paths"].items() for m in ops}
    # everything but the schema and its UI is documented in the schema itself
    assert documented == routes - {("GET", "/api/schema/"), ("GET", "/api/docs/")}
    assert all(len(r.statuses) == len(ROLES) for r in ROWS)


def test_every_endpoint_names_its_model_permissions() -> None:
    """Each route but the token endpoint checks model permissions, and each of its
    methods names the ones it needs (none would be refused to everyone)."""
    from django.test import RequestFactory

    from studyapp.api.permissions import IsResearcher, ModelPermissions

    checked = 0
    for pattern in _api_patterns():
        view_class = pattern.callback.cls
        if pattern.name == "api-token":
            continue
        classes = view_class.permission_classes
        assert IsResearcher in classes, pattern.name
        if pattern.name in ("api-schema", "api-docs"):
            continue  # the API's description: any researcher (study permissions of any kind)
        assert ModelPermissions in classes, pattern.name
        actions = getattr(pattern.callback, "actions", None) or {
            m: None for m in ("get", "post", "put", "patch", "delete") if hasattr(view_class, m)
        }
        for method, action in actions.items():
            if method == "options":
                continue  # described to any researcher
            view = view_class()
            view.action = action
            request = getattr(RequestFactory(), method)("/")
            needed = ModelPermissions().required(request, view)
            assert needed, (pattern.name, method)
            assert all(p.startswith("studyapp.") for p in needed)
            checked += 1
    assert checked >= len(_api_operations()) - 3  # all but token, schema, docs


def _api_patterns() -> list[URLPattern]:
    out: list[URLPattern] = []

    def walk(patterns: list, prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern) and (prefix + str(p.pattern)).startswith("api/"):
                out.append(p)

    walk(get_resolver().url_patterns, "")
    return out
