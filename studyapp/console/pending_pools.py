"""A previewed pool waiting for the researcher's confirmation, where every web node finds it.

The preview and the confirm are two requests, which a load balancer may send to two web
nodes; a file in one node's `var/` would then be missing on the other ("the preview has
expired"). With a shared cache (``STUDYAPP_CACHE_URL``, Redis: docs/deploy.md) the
normalised CSV waits there; without one (the embedded default: one host, whose gunicorn
processes share `var/` but not a process-local cache) it waits in `var/pool-uploads`.
Either way it is dropped after `MAX_AGE_S` or when taken.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

from django.conf import settings
from django.core.cache import cache

#: the folder under var/ of the embedded default's waiting pools
DIR_NAME = "pool-uploads"
MAX_AGE_S = 24 * 3600
_KEY = "pending-pool:{}"


def _shared() -> bool:
    return bool(getattr(settings, "STUDYAPP_SHARED_CACHE", False))


def _folder() -> Path:
    folder = Path(settings.VAR_DIR) / DIR_NAME
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for old in folder.glob("*.csv"):
        if now - old.stat().st_mtime > MAX_AGE_S:
            old.unlink(missing_ok=True)
    return folder


def put(csv_text: str) -> str:
    """Keep a previewed pool; the token that takes it back."""
    token = secrets.token_urlsafe(16)
    data = csv_text.encode("utf-8")
    if _shared():
        cache.set(_KEY.format(token), data, timeout=MAX_AGE_S)
    else:
        (_folder() / f"{token}.csv").write_bytes(data)
    return token


def take(token: str) -> bytes | None:
    """The pool kept under `token`, removed as it is read; None when it expired or never was
    (a token is a URL-safe name: anything else is never looked up)."""
    if not token or not all(c.isalnum() or c in "-_" for c in token):
        return None
    if _shared():
        key = _KEY.format(token)
        data = cache.get(key)
        cache.delete(key)
        return data if isinstance(data, bytes) else None
    path = _folder() / f"{token}.csv"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    path.unlink(missing_ok=True)
    return data
