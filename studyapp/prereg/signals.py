"""The recorders of a study's history: every committed write to a study, its conditions or
quotas may change the definition (a version is recorded when it did), and a study's first
going live freezes its registration. Connected by the app's `ready()`."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from studyapp.models import Condition, Quota, Study
from studyapp.prereg import bundle, history

log = logging.getLogger(__name__)


def _registration_soon(study_id: int) -> None:
    by = history.current_user()

    def freeze() -> None:
        try:
            bundle.freeze_on_live(study_id, by=by)
        except Exception:  # a registration that cannot be written must not undo going live
            log.exception("study %s: registration not frozen", study_id)

    transaction.on_commit(freeze)


def _definition_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    if kwargs.get("raw"):
        return  # fixtures loaded as they are
    study_id = instance.pk if sender is Study else instance.study_id
    history.version_soon(study_id)
    if sender is Study and instance.state == Study.State.LIVE:
        _registration_soon(study_id)


def connect() -> None:
    for model in (Study, Condition, Quota):
        post_save.connect(
            _definition_changed, sender=model, dispatch_uid=f"version-{model.__name__}"
        )
    for model in (Condition, Quota):
        post_delete.connect(
            _definition_changed, sender=model, dispatch_uid=f"version-del-{model.__name__}"
        )
