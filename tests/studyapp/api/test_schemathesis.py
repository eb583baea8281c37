"""schemathesis against the API's own OpenAPI schema: generated requests to every operation,
authenticated as the study's owner with a token, must never get a 5xx and must get the
status codes, content types and bodies the schema documents.

Bounded and deterministic (`derandomize`, a fixed number of examples per operation), so
the run takes the same time and finds the same things every time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from studyapp.config.wsgi import application
from studyapp.models import Participant
from tests.studyapp.api.conftest import Cast

pytestmark = pytest.mark.django_db

#: examples per operation; ~20 operations on a slow machine stay well under a minute
EXAMPLES = 20
NEGATIVE_EXAMPLES = 10
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture
def same_connection() -> Iterator[None]:
    """Keep the test's database connection (and its transaction) across WSGI requests, as
    Django's own test client does."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def _operations(schema: Any) -> list[Any]:
    """Every operation, the destructive ones last (they empty what the others read)."""
    ops = [result.ok() for result in schema.get_all_operations()]
    return sorted(ops, key=lambda op: (op.method.upper() == "DELETE", op.path, op.method))


def _fuzz(strategy: Any, token: str, statuses: set[int], checks: list, examples: int) -> None:
    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: Any) -> None:
        response = case.call(app=application, headers={"Authorization": token})
        statuses.add(response.status_code)
        case.validate_response(response, checks=checks)

    run()


def _owner_view(cast: Cast) -> tuple[Any, str, dict[str, Any]]:
    """The API's schema as the owner gets it, their token, and path values of a real study
    and participant (so fuzzed requests reach real rows, not only 404s)."""
    owner = cast.client("owner")
    schema = schemathesis.openapi.from_dict(owner.get("/api/schema/?format=json").json())
    participant = Participant.objects.filter(study=cast.study).order_by("pk").first()
    fixed = {"slug": cast.study.slug, "id": participant.pk}
    return schema, owner._credentials["HTTP_AUTHORIZATION"], fixed


def test_api_schema_fuzzed(cast: Cast, same_connection: None) -> None:
    from studyapp.prereg.bundle import study_register

    study_register(study=cast.study)  # so the registration and deviation reads find a row
    schema, token, fixed = _owner_view(cast)
    seen: dict[str, set[int]] = {}
    for op in _operations(schema):
        path_parameters = {k: v for k, v in fixed.items() if "{" + k + "}" in op.path}
        statuses = seen.setdefault(f"{op.method.upper()} {op.path}", set())
        _fuzz(op.as_strategy(path_parameters=path_parameters), token, statuses, CHECKS, EXAMPLES)
    print({op: sorted(statuses) for op, statuses in seen.items()})
    assert all(statuses for statuses in seen.values()), seen
    # the fixed slug and id reached the real study: not everything was a 404
    assert all(statuses - {404} for op, statuses in seen.items() if "{slug}" in op), seen
    assert 200 in seen["GET /api/studies/{slug}/participants/"], seen


def test_api_invalid_requests_fuzzed(cast: Cast, same_connection: None) -> None:
    """Requests that break the schema on purpose (wrong types, missing fields, bad query
    values): refused with a 4xx, never a 5xx, and the refused ones change nothing."""
    schema, token, fixed = _owner_view(cast)
    seen: dict[str, set[int]] = {}
    for op in _operations(schema):
        path_parameters = {k: v for k, v in fixed.items() if "{" + k + "}" in op.path}
        strategy = op.as_strategy(GenerationMode.NEGATIVE, path_parameters=path_parameters)
        statuses = seen.setdefault(f"{op.method.upper()} {op.path}", set())
        # Unsatisfiable: nothing in the operation can be made invalid (only the fixed slug)
        with contextlib.suppress(Unsatisfiable):
            _fuzz(strategy, token, statuses, [not_a_server_error], NEGATIVE_EXAMPLES)
    print({op: sorted(statuses) for op, statuses in seen.items()})
    assert all(s < 500 for statuses in seen.values() for s in statuses), seen
    assert sum(1 for statuses in seen.values() if statuses - {200, 201, 204}) >= 8, seen
