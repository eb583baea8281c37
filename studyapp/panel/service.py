"""Connecting a study to its Prolific study, reading its submissions and reconciling them:
what the console and `recourse-study panel` call."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.db import transaction

from studyapp.models import PanelConnection, Study
from studyapp.panel import codes, secret
from studyapp.panel.client import ProlificClient
from studyapp.panel.errors import PanelError
from studyapp.panel.reconcile import Reconciliation, reconcile
from studyapp.panel_models import PROLIFIC_API

#: Prolific ids are 24 hexadecimal characters (MongoDB object ids)
STUDY_ID = re.compile(r"^[0-9a-fA-F]{24}$")


def check_study_id(value: str, what: str = "Prolific study id") -> str:
    value = (value or "").strip()
    if not STUDY_ID.match(value):
        raise PanelError(f"{what} {value!r} is malformed: 24 hexadecimal characters expected")
    return value


def panel_connect(
    *,
    study: Study,
    token: str,
    panel_study_id: str,
    second_study_id: str = "",
    api_url: str = "",
    by_user: Any = None,
    client_options: dict[str, Any] | None = None,
) -> PanelConnection:
    """Checks the token and the Prolific study (or studies) with Prolific, then stores the
    connection with the token encrypted. Nothing is stored when any check fails."""
    api_url = api_url or getattr(settings, "STUDYAPP_PROLIFIC_URL", "") or PROLIFIC_API
    token = secret.check_token(token)
    panel_study_id = check_study_id(panel_study_id)
    if second_study_id:
        second_study_id = check_study_id(second_study_id, "second session's Prolific study id")
        if not codes.is_delayed(study):
            raise PanelError("a second Prolific study is only for a delayed-release study")
    blob = secret.encrypt(token)  # the key is checked before Prolific is asked anything
    client = ProlificClient(token, api_url, **(client_options or {}))
    try:
        for sid in filter(None, (panel_study_id, second_study_id)):
            try:
                client.study(sid)
            except PanelError as exc:
                if "HTTP 404" in str(exc):
                    raise PanelError(f"Prolific has no study {sid!r} for this token") from exc
                if "HTTP 401" in str(exc) or "HTTP 403" in str(exc):
                    raise PanelError(f"Prolific refused the token ({exc})") from exc
                raise
    finally:
        client.close()
    with transaction.atomic():
        conn, _ = PanelConnection.objects.update_or_create(
            study=study,
            defaults={
                "panel_study_id": panel_study_id,
                "second_study_id": second_study_id,
                "token_encrypted": blob,
                "api_url": api_url,
                "connected_by": by_user if getattr(by_user, "pk", None) else None,
            },
        )
    return conn


def connection_of(study: Study) -> PanelConnection:
    conn = PanelConnection.objects.filter(study=study).first()
    if conn is None:
        raise PanelError(
            f"study {study.slug!r} is not connected to Prolific "
            "(recourse-study panel connect, or the console's Prolific page)"
        )
    return conn


def client_for(study: Study, **options: Any) -> ProlificClient:
    conn = connection_of(study)
    return ProlificClient(secret.decrypt(conn.token_encrypted), conn.api_url, **options)


def sessions(conn: PanelConnection) -> dict[int, str]:
    """Session -> Prolific study id."""
    out = {1: conn.panel_study_id}
    if conn.second_study_id:
        out[2] = conn.second_study_id
    return out


def fetch_submissions(study: Study, client: ProlificClient) -> dict[int, list[dict[str, Any]]]:
    conn = connection_of(study)
    return {n: list(client.iter_submissions(sid)) for n, sid in sessions(conn).items()}


def panel_sync(study: Study, **client_options: Any) -> Reconciliation:
    """Reads every submission of the study's Prolific study (or both) and reconciles them."""
    client = client_for(study, **client_options)
    try:
        return reconcile(study, fetch_submissions(study, client))
    finally:
        client.close()


def panel_push_codes(study: Study, **client_options: Any) -> dict[int, list[dict[str, Any]]]:
    """Sends the study's completion codes to its (unpublished) Prolific study or studies."""
    conn = connection_of(study)
    client = client_for(study, **client_options)
    sent = {}
    try:
        for n, sid in sessions(conn).items():
            wanted = codes.study_codes(study, n)
            client.update_study(sid, {"completion_codes": wanted})
            sent[n] = wanted
    finally:
        client.close()
    return sent
