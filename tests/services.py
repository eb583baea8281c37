"""Reaching the real services (PostgreSQL, Redis, RabbitMQ) from tests.

A test that needs a service calls `require_*`: where the service is absent the
test is skipped with the reason, unless RECOURSE_REQUIRE_SERVICES=1 (set by
.ci/run), which turns the skip into a failure so CI never passes silently.
"""

from __future__ import annotations

import os
import shutil
import socket

import pytest

POSTGRES_HOST = os.environ.get("TEST_POSTGRES_HOST", "127.0.0.1")
POSTGRES_PORT = int(os.environ.get("TEST_POSTGRES_PORT", "5432"))
REDIS_HOST = os.environ.get("TEST_REDIS_HOST", "127.0.0.1")
REDIS_PORT = int(os.environ.get("TEST_REDIS_PORT", "6379"))


def services_required() -> bool:
    return os.environ.get("RECOURSE_REQUIRE_SERVICES", "") not in ("", "0", "false")


def _absent(reason: str) -> None:
    if services_required():
        pytest.fail(f"required service absent (RECOURSE_REQUIRE_SERVICES=1): {reason}")
    pytest.skip(reason)


def port_open(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def require_postgres() -> str:
    """Return a server URL (no database name) for PostgreSQL, or skip/fail."""
    if not port_open(POSTGRES_HOST, POSTGRES_PORT):
        _absent(f"PostgreSQL not reachable at {POSTGRES_HOST}:{POSTGRES_PORT}")
    return f"postgres://postgres@{POSTGRES_HOST}:{POSTGRES_PORT}"


def require_redis() -> str:
    if not port_open(REDIS_HOST, REDIS_PORT):
        _absent(f"Redis not reachable at {REDIS_HOST}:{REDIS_PORT}")
    return f"redis://{REDIS_HOST}:{REDIS_PORT}"


def require_executable(name: str, hint: str) -> str:
    path = shutil.which(name)
    if path is None:
        _absent(f"{name} not found on PATH ({hint})")
    return path  # type: ignore[return-value]
