"""A study's version history: after every committed write to a study, its conditions or its
quotas, the study file document is built again and kept as a new numbered version when its
hash differs from the last version's (so a state change, which is no part of the definition,
makes none). Who made the change is the request's user (`ActorMiddleware`, which also sees the
API's token user, as DRF sets it on the request), or the one a command names (`acting_as`).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import transaction

from studyapp.definition import study_file as sf
from studyapp.models import Study
from studyapp.version_models import StudyVersion

log = logging.getLogger(__name__)
_request: contextvars.ContextVar[Any] = contextvars.ContextVar("version_request", default=None)
_actor: contextvars.ContextVar[Any] = contextvars.ContextVar("version_actor", default=None)
_note: contextvars.ContextVar[str] = contextvars.ContextVar("version_note", default="")


class ActorMiddleware:
    """Keeps the request at hand so that a version records the researcher who made it."""

    def __init__(self, get_response: Callable[[Any], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


@contextmanager
def acting_as(user: Any, note: str = "") -> Iterator[None]:
    """Versions recorded inside are by `user` (a command's --by), with `note`."""
    t1, t2 = _actor.set(user), _note.set(note)
    try:
        yield
    finally:
        _actor.reset(t1)
        _note.reset(t2)


def current_user() -> Any:
    user = _actor.get()
    if user is None and _request.get() is not None:
        user = getattr(_request.get(), "user", None)
    return user if getattr(user, "is_authenticated", False) else None


def version_soon(study_id: int | None) -> None:
    """Record a version of the study once the current transaction commits."""
    if study_id is None:
        return
    user, note = current_user(), _note.get()

    def record() -> None:
        try:
            record_version(study_id, by=user, note=note)
        except Exception:  # a history that cannot be written must not undo a saved change
            log.exception("study %s: version not recorded", study_id)

    transaction.on_commit(record)


def record_version(study_id: int, *, by: Any = None, note: str = "") -> StudyVersion | None:
    """A new version when the study's document changed since its last one (else None)."""
    from studyapp.prereg.study_files import study_document

    with transaction.atomic():
        study = Study.objects.select_for_update().filter(pk=study_id).first()
        if study is None:
            return None  # deleted meanwhile
        doc, _files = study_document(study)
        digest = sf.sha256(sf.canonical_json(doc))
        last = study.versions.order_by("-number").first()
        if last is not None and last.sha256 == digest:
            return None
        return StudyVersion.objects.create(
            study=study,
            number=(last.number if last else 0) + 1,
            sha256=digest,
            document=doc,
            by=by if getattr(by, "pk", None) else None,
            note=note[:300],
        )


def latest_version(study: Study) -> StudyVersion:
    """The study's current version (recorded now if the history lacks it)."""
    record_version(study.pk, by=current_user(), note=_note.get())
    return study.versions.order_by("-number").first()  # type: ignore[return-value]
