"""The API token of a study's Prolific connection, encrypted with Fernet under the site's key
(`STUDYAPP_PANEL_KEY`), so that a copied database or backup holds no usable token. The token
is decrypted only to build the client; nothing shows or exports it."""

from __future__ import annotations

import re

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

from studyapp.panel.errors import PanelError

KEY_SETTING = "STUDYAPP_PANEL_KEY"
#: what a Prolific API token looks like: letters, digits, - and _ (no spaces, no quotes)
TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_\-.]{20,200}$")


def _fernet() -> Fernet:
    key = getattr(settings, KEY_SETTING, "")
    if not key:
        raise PanelError(
            f"{KEY_SETTING} is not set: the Prolific token cannot be stored or read without it "
            "(set it to a key made by cryptography.fernet.Fernet.generate_key(); docs/prolific.md)"
        )
    try:
        return Fernet(key)
    except (ValueError, TypeError) as exc:
        raise PanelError(
            f"{KEY_SETTING} is not a Fernet key (32 url-safe base64-encoded bytes)"
        ) from exc


def check_token(token: str) -> str:
    """The token stripped, or a PanelError saying what is wrong with it (never echoing it)."""
    token = (token or "").strip()
    if token.lower().startswith("token "):
        token = token[6:].strip()
    if not token:
        raise PanelError("the Prolific API token is empty")
    if not TOKEN_SHAPE.match(token):
        raise PanelError(
            "the Prolific API token is malformed: 20-200 letters, digits, '-', '_' or '.', "
            f"no spaces (got {len(token)} character(s))"
        )
    return token


def encrypt(token: str) -> bytes:
    return _fernet().encrypt(check_token(token).encode())


def decrypt(blob: bytes | memoryview) -> str:
    try:
        return _fernet().decrypt(bytes(blob)).decode()
    except InvalidToken as exc:
        raise PanelError(
            f"the stored Prolific token cannot be decrypted with this {KEY_SETTING} "
            "(was the key changed?); connect the study again with its token"
        ) from exc
