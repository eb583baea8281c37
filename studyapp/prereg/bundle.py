"""The pre-registration bundle: the study file document (with its files' hashes) and the
analysis plan (outcomes, model formulas, exclusion rules, seeds, sample), as canonical JSON
hashed with SHA-256. Nothing in it depends on when it was built or by whom (those are on the
registration's row and in its Markdown), so one definition always gives one hash.

Frozen when a study first goes live (`freeze_on_live`, on commit of the state change) or on
a researcher's explicit `register`; the bytes are stored as hashed and exported as stored.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction

from analysis.contract import DISTANCE_COLUMNS, RATING_COLUMNS
from analysis.study import selection
from analysis.study.methods_report import model_formulas
from analysis.study.registered import seed_formula
from studyapp.definition import study_file as sf
from studyapp.models import Study
from studyapp.prereg.history import latest_version
from studyapp.version_models import StudyRegistration

BUNDLE_FORMAT = "recourse-study-registration"
BUNDLE_VERSION = 1
#: the basis dimension of the registered smooths (the seed study's)
K = 10
PARTICIPANT = "participant"


def registered_models(settings: dict[str, Any]) -> dict[str, str]:
    """Model name -> formula (mgcv syntax): the seed study's four GAMMs (random intercept and
    slope per participant, as `recourse-analysis study` fits them) and, per rating, the
    method comparison's two models (by condition where the study has conditions); both
    written by the analysis's own functions, which `recourse-analysis registered` reads
    them back with."""
    models = {}
    for outcome in RATING_COLUMNS:
        for distance in DISTANCE_COLUMNS:
            models[f"{outcome}_{distance}"] = seed_formula(outcome, distance, K)
    factor = "condition" if len(settings.get("conditions") or []) > 1 else "strategy"
    for outcome in RATING_COLUMNS:
        common, by = model_formulas(outcome, factor, "proximity", K)
        models[f"{outcome}_{factor}_common"] = common
        models[f"{outcome}_{factor}_by_level"] = by
    return models


def planned_sample(settings: dict[str, Any]) -> int | None:
    """The study's planned number of participants: its overall quota (none: not fixed)."""
    overall = [
        q["limit"] for q in settings.get("quotas") or []
        if not q.get("condition") and not q.get("screening_key")
    ]  # fmt: skip
    return min(overall) if overall else None


def analysis_plan(doc: dict[str, Any]) -> dict[str, Any]:
    """The registered analysis, read from a study file document."""
    s = doc["settings"]
    questions = [
        {"key": q["key"], "page": q.get("page", ""), "type": q.get("type", "")}
        for q in s.get("questions") or []
    ]
    return {
        "outcomes": {
            "primary": [{"name": o, "scale": "1..7 (Likert)"} for o in RATING_COLUMNS],
            "secondary": questions,
        },
        "models": registered_models(s),
        "exclusions": {
            "attention": {
                "checks": [c["key"] for c in s.get("attention_checks") or []],
                "max_failures": s.get("attention_max_failures", 0),
                "rule": s.get("attention_rule", "end"),
            },
            "speed": {
                "page_min_seconds": s.get("page_min_seconds") or {},
                "rule": "a page's Continue is refused before its minimum seconds",
            },
            "approved_branch": s.get("approved_branch", "end"),
            "analysis": [
                selection.WITHDREW,
                selection.ATTENTION,
                selection.IMPOSSIBLE,
                selection.FALLBACK,
            ],
        },  # fmt: skip
        "seeds": {"recourse_selection": s.get("seed", 0)},
        "sample": {"planned_participants": planned_sample(s), "quotas": s.get("quotas") or []},
    }


def bundle_document(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": BUNDLE_FORMAT,
        "format_version": BUNDLE_VERSION,
        "study_file": doc,
        "study_file_sha256": sf.sha256(sf.canonical_json(doc)),
        "analysis_plan": analysis_plan(doc),
    }


def study_register(*, study: Study, by: Any = None, reason: str = "register") -> StudyRegistration:
    """Freeze the study's current definition as a registration (a new one each call; the
    same definition gives the same hash)."""
    with transaction.atomic():
        version = latest_version(study)
        data = sf.canonical_json(bundle_document(version.document))
        return StudyRegistration.objects.create(
            study=study,
            version=version,
            sha256=sf.sha256(data),
            bundle=data.decode("utf-8"),
            reason=reason,
            by=by if getattr(by, "pk", None) else None,
        )


def bundle_bytes(registration: StudyRegistration) -> bytes:
    """The bundle exactly as it was hashed."""
    return registration.bundle.encode("utf-8")


def bundle_of(registration: StudyRegistration) -> dict[str, Any]:
    return json.loads(registration.bundle)


def first_registration(study: Study) -> StudyRegistration | None:
    return study.registrations.order_by("at", "pk").first()


def freeze_on_live(study_id: int, by: Any = None) -> None:
    """A study that goes live for the first time is registered (once)."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None or study.state != Study.State.LIVE or study.registrations.exists():
        return
    study_register(study=study, by=by, reason=StudyRegistration.Reason.LIVE)
