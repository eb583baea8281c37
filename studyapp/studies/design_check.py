"""A study's design check: made, stored with the version it checked, read, and
acknowledged at go-live (running it: `design_check_run`; its task: `tasks`).

`design_key` names the version of the study a check predicts for: a change of the pool,
decision model, a design, a method's settings, the fallback or a stored fit makes the
stored check stale. The console, the API and the command all show `check_summary`, so they
give the same figures.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from recourse_engine.design_check import design_warnings
from studyapp.definition.design_check_settings import thresholds_of
from studyapp.definition.errors import StudyError
from studyapp.generation import stored_fits
from studyapp.models import DesignCheck, Study

log = logging.getLogger(__name__)

C = DesignCheck.State
#: profiles drawn when the researcher does not say
SAMPLE_SIZE = 500
MAX_SAMPLE = 20_000


class DesignWarnings(StudyError):
    """Going live was asked without acknowledging every warning of the current check."""

    def __init__(self, study: Study, missing: list[dict[str, Any]]) -> None:
        self.missing = missing
        lines = "; ".join(f"[{w['key']}] {w['text']}" for w in missing)
        super().__init__(
            f"study {study.slug}: acknowledge each warning of the design check before going "
            f"live: {lines}"
        )


def designs_of(study: Study) -> dict[str, str]:
    """Condition -> the design its participants get (its own, else the study's), as the
    recourse task reads it; {"": the study's design} for a study without conditions."""
    conditions = list(study.conditions.order_by("position", "name"))
    if not conditions:
        return {"": study.design}
    return {
        c.name: (c.design if c.design and c.design.strip() else study.design) for c in conditions
    }


def design_key(study: Study) -> str:
    """A hash of everything the prediction depends on besides its sample."""
    parts = {
        "pool": study.pool_hash,
        "model": stored_fits.model_key(study),
        "designs": designs_of(study),
        "method_params": study.method_params or {},
        "fallback": study.method_fallback,
        "fits": list(stored_fits.fits_version(study)),
    }
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _source_check(study: Study, source: str) -> str:
    source = (source or "pool").strip()
    if source == "pool":
        return source
    found = Study.objects.filter(slug=source).only("pk", "kind", "schema_hash").first()
    if found is None or found.kind != "pool_collection":
        raise StudyError(
            f"sample_source: {source!r} is neither 'pool' nor a pool-collection study's slug"
        )
    if found.schema_hash != study.schema_hash:
        log.info("design check of %s: %s has another schema hash", study.slug, source)
    return source


def check_create(
    *,
    study: Study,
    sample_size: int = SAMPLE_SIZE,
    sample_source: str = "pool",
    seed: int | None = None,
    by: Any = None,
) -> DesignCheck:
    """A queued check row (the caller runs it, or `tasks.design_check_queue` sends the
    task). Bad input is refused with a message naming it and nothing is stored."""
    if study.kind != "recourse":
        raise StudyError(f"study {study.slug} is a {study.kind} study: it shows no plans to check")
    if isinstance(sample_size, bool) or not isinstance(sample_size, int):
        raise StudyError(f"sample_size: a whole number is needed, got {sample_size!r}")
    if not 1 <= sample_size <= MAX_SAMPLE:
        raise StudyError(f"sample_size: must be 1..{MAX_SAMPLE}, got {sample_size}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise StudyError(f"seed: a whole number >= 0 is needed, got {seed!r}")
    source = _source_check(study, sample_source)
    return DesignCheck.objects.create(
        study=study,
        design_key=design_key(study),
        study_version=study.updated_at,
        sample_size=sample_size,
        sample_source=source,
        seed=int(study.seed) if seed is None else seed,
        requested_by=by if getattr(by, "pk", None) else None,
    )


# --- reads --------------------------------------------------------------------------------


def latest_check(study: Study, *, done: bool = False) -> DesignCheck | None:
    qs = DesignCheck.objects.filter(study=study)
    if done:
        qs = qs.filter(state=C.DONE)
    return qs.order_by("-created_at", "-pk").first()


def current_check(study: Study) -> DesignCheck | None:
    """The latest finished check of the study as it is now (None: none, or only stale ones)."""
    check = latest_check(study, done=True)
    if check is None or check.design_key != design_key(study):
        return None
    return check


def check_warnings(study: Study, check: DesignCheck) -> list[dict[str, Any]]:
    """The check's figures past the study's thresholds (as they are set now)."""
    if check.state != C.DONE or not check.result:
        return []
    return design_warnings(check.result, thresholds_of(study.design_check_thresholds))


def check_summary(study: Study, check: DesignCheck | None) -> dict[str, Any] | None:
    """What the console, the API and the command show of a check (JSON-ready)."""
    if check is None:
        return None
    thresholds = thresholds_of(study.design_check_thresholds)
    return {
        "id": check.pk,
        "study": study.slug,
        "state": check.state,
        "progress": round(float(check.progress), 4),
        "message": check.message,
        "sample_size": check.sample_size,
        "sample_source": check.sample_source,
        "seed": int(check.seed),
        "design_key": check.design_key,
        "stale": check.state == C.DONE and check.design_key != design_key(study),
        "study_version": check.study_version.isoformat(),
        "created_at": check.created_at.isoformat(),
        "seconds": check.seconds,
        "thresholds": {
            "approval_rate_above": thresholds.approval_rate_above,
            "own_plan_rate_below": thresholds.own_plan_rate_below,
        },
        "result": check.result or None,
        "warnings": check_warnings(study, check),
        "acknowledged": check.acknowledged,
        "acknowledged_by": getattr(check.acknowledged_by, "username", None),
        "acknowledged_at": check.acknowledged_at.isoformat() if check.acknowledged_at else None,
    }


# --- go-live ------------------------------------------------------------------------------


def acknowledge_for_live(
    *, study: Study, acknowledged: Sequence[str] = (), by: Any = None
) -> DesignCheck | None:
    """Before going live: each warning of the study's current check must be named in
    `acknowledged` (DesignWarnings lists the missing ones, nothing is stored); the
    acknowledgement is then recorded on the check. No current check: nothing to do."""
    check = current_check(study)
    if check is None:
        return None
    warnings = check_warnings(study, check)
    given = {str(k) for k in acknowledged}
    missing = [w for w in warnings if w["key"] not in given]
    if missing:
        raise DesignWarnings(study, missing)
    DesignCheck.objects.filter(pk=check.pk).update(
        acknowledged=warnings,
        acknowledged_by=by if getattr(by, "pk", None) else None,
        acknowledged_at=timezone.now(),
    )
    check.refresh_from_db()
    return check
