"""Study export: tidy tables (DESIGN.md § Export) and a codebook describing every column.

`evaluations.csv` has one row per evaluation, `participants.csv` one per participant,
`codebook.csv` one per column of both, `schema.json` the study's schema (so analyses can
decode item codes). The panel id (recruitment id) and access code are never exported.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from recourse_engine import FeatureSchema

from . import engine, screening, selectors
from .models import Participant, Study

EVALUATION_COLUMNS = [
    "study",
    "participant",
    "condition",
    "gender",
    "age",
    "income",
    "recourse",
    "strategy",
    "position",
    "sparsity",
    "proximity",
    "changed",
    "impossible",
    "any_impossible",
    "acceptance",
    "action",
    "acceptance_why",
    "action_why",
    "seconds_on_page",
    "submitted_at",
]
TEXT_COLUMNS = ("acceptance_why", "action_why")


class ExportError(ValueError):
    """An export that cannot be written as asked."""


def _iso(value: Any) -> str:
    return value.isoformat() if value is not None else ""


def _codes(schema: FeatureSchema, values: dict[str, Any] | None, prefix: str) -> dict[str, Any]:
    values = values or {}
    return {f"{prefix}{k}": values.get(k) for k in schema.keys}


def evaluations_frame(study: Study, *, with_text: bool = False) -> pd.DataFrame:
    schema = engine.schema_of(study.schema)
    rows = []
    for ev in selectors.study_evaluations(study=study):
        p, r = ev.participant, ev.recourse
        profile = getattr(p, "profile", None)
        rows.append(
            {
                "study": study.slug,
                "participant": p.pk,
                "condition": p.condition,
                "gender": p.gender,
                "age": p.age,
                "income": p.income_jpy,
                "recourse": r.pk,
                "strategy": r.strategy,
                "position": r.position,
                "sparsity": r.sparsity,
                "proximity": r.proximity,
                "changed": ";".join(r.changed),
                "impossible": ";".join(ev.impossible),
                "any_impossible": int(bool(ev.impossible)),
                "acceptance": ev.acceptance,
                "action": ev.action,
                "acceptance_why": ev.acceptance_why,
                "action_why": ev.action_why,
                "seconds_on_page": round(ev.seconds_on_page, 3),
                "submitted_at": _iso(ev.submitted_at),
                **_codes(schema, profile.values if profile else None, "x_"),
                **_codes(schema, r.values, "cf_"),
            }
        )
    columns = [c for c in EVALUATION_COLUMNS if with_text or c not in TEXT_COLUMNS]
    columns += [f"x_{k}" for k in schema.keys] + [f"cf_{k}" for k in schema.keys]
    frame = pd.DataFrame(rows, columns=columns)
    _integer_columns(frame, schema, ["age"])
    return frame


def _outcome(p: Participant) -> str:
    S = Participant.State
    return {
        S.COMPLETED: "completed",
        S.SCREENED_OUT: "screened_out",
        S.NO_RECOURSE: "no_recourse",
    }.get(p.state, "incomplete")


def _screening_value(value: Any) -> Any:
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    return value


def participants_frame(study: Study) -> pd.DataFrame:
    schema = engine.schema_of(study.schema)
    qs = screening.questions(study.schema)
    rows = []
    for p in selectors.study_participants(study=study):
        profile = getattr(p, "profile", None)
        rows.append(
            {
                "study": study.slug,
                "participant": p.pk,
                "condition": p.condition,
                "state": p.state,
                "outcome": _outcome(p),
                **{f"screen_{q['key']}": _screening_value(p.screening.get(q["key"])) for q in qs},
                "gender": p.gender,
                "age": p.age,
                "income_band": p.income_band,
                "income": p.income_jpy,
                "consent_version": p.consent_version,
                "consented_at": _iso(p.consented_at),
                "decision": profile.decision if profile else "",
                "generation": p.generation,
                "recourses_seconds": (
                    round((p.generation_finished_at - p.generation_queued_at).total_seconds(), 3)
                    if p.generation_finished_at and p.generation_queued_at
                    else None
                ),
                "n_evaluations": p.n_evaluations,
                "flagged": int(p.flagged),
                "flag_reason": p.flag_reason,
                "started_at": _iso(p.created_at),
                "finished_at": _iso(p.finished_at),
                **_codes(schema, profile.values if profile else None, "x_"),
            }
        )
    columns = [
        "study",
        "participant",
        "condition",
        "state",
        "outcome",
        *[f"screen_{q['key']}" for q in qs],
        "gender",
        "age",
        "income_band",
        "income",
        "consent_version",
        "consented_at",
        "decision",
        "generation",
        "recourses_seconds",
        "n_evaluations",
        "flagged",
        "flag_reason",
        "started_at",
        "finished_at",
        *[f"x_{k}" for k in schema.keys],
    ]
    frame = pd.DataFrame(rows, columns=columns)
    ints = [f"screen_{q['key']}" for q in qs if q["type"] != "multi"]
    _integer_columns(frame, schema, ["age", *ints])
    return frame


def _integer_columns(frame: pd.DataFrame, schema: FeatureSchema, extra: Iterable[str]) -> None:
    """Nullable integers, so codes stay 2 (not 2.0) in rows where some values are missing."""
    cols = [
        *extra,
        *(f"{p}{it.key}" for it in schema.items if not it.is_numeric for p in ("x_", "cf_")),
    ]
    for col in cols:
        if col in frame.columns:
            frame[col] = pd.to_numeric(frame[col]).astype("Int64")


def _labels(options: Iterable[str]) -> str:
    return "; ".join(f"{i}={o}" for i, o in enumerate(options, start=1))


def codebook_frame(study: Study, columns: dict[str, list[str]]) -> pd.DataFrame:
    """One row per column of each exported file: name, type, allowed values, description."""
    schema = engine.schema_of(study.schema)
    ev_texts = study.schema.get("evaluation", {})
    scale = _labels(ev_texts.get("scale", [str(i) for i in range(1, 8)]))
    keys = "; ".join(schema.keys)
    qs = {f"screen_{q['key']}": q for q in screening.questions(study.schema)}
    outcomes = "completed; screened_out; no_recourse; incomplete"
    known: dict[str, tuple[str, str, str]] = {
        "study": ("string", study.slug, "study id (slug)"),
        "participant": ("integer", "", "pseudonymous participant id (never the panel id)"),
        "condition": ("string", "", "experimental condition (empty: single condition)"),
        "gender": ("string", "", "gender answered at screening (label)"),
        "age": ("integer", "", "age answered at screening (years)"),
        "income": (
            "float",
            "",
            "annual income in JPY: midpoint of the screening band (see docs/studyapp.md)",
        ),
        "income_band": ("string", "", "income band answered at screening"),
        "recourse": ("integer", "", "recourse id"),
        "strategy": ("string", "", f"design strategy that chose the recourse ({study.design})"),
        "position": ("integer", "1..k", "display order of the recourse (randomised)"),
        "sparsity": ("integer", "0..d", "number of changed items (L0)"),
        "proximity": (
            "float",
            ">=0",
            "sum of |x'-x|/M over ordinal items + 1 per changed categorical",
        ),
        "changed": ("string", keys, "changed item keys, ';'-joined"),
        "impossible": (
            "string",
            keys,
            "changed items the participant marked impossible, ';'-joined",
        ),
        "any_impossible": ("integer", "0=no; 1=yes", "any changed item marked impossible"),
        "acceptance": ("integer", scale, str(ev_texts.get("acceptance_question", "acceptance"))),
        "action": ("integer", scale, str(ev_texts.get("action_question", "action"))),
        "acceptance_why": ("string", "", "free-text reason for the acceptance rating"),
        "action_why": ("string", "", "free-text reason for the action rating"),
        "seconds_on_page": ("float", ">=0", "seconds from first view of the plan page to submit"),
        "submitted_at": ("datetime", "ISO 8601 UTC", "time the evaluation was stored"),
        "state": ("string", "; ".join(Participant.State.values), "participant's state at export"),
        "outcome": ("string", outcomes, "how the participation ended"),
        "consent_version": ("string", study.consent_version, "version of the consent text agreed"),
        "consented_at": ("datetime", "ISO 8601 UTC", "time of consent"),
        "decision": ("string", "rejected; approved", "decision model's verdict on the profile"),
        "generation": (
            "string",
            "; ".join(v for v in Participant.Generation.values if v),
            "status of recourse generation",
        ),
        "recourses_seconds": ("float", ">=0", "seconds from profile submit to recourses stored"),
        "n_evaluations": ("integer", ">=0", "evaluations stored"),
        "flagged": ("integer", "0; 1", "case flagged for the researcher"),
        "flag_reason": ("string", "", "why the case was flagged"),
        "started_at": ("datetime", "ISO 8601 UTC", "time the participant opened the study link"),
        "finished_at": ("datetime", "ISO 8601 UTC", "time the participation ended"),
    }
    rows = []
    for file, cols in columns.items():
        for col in cols:
            if col in known:
                typ, allowed, desc = known[col]
            elif col in qs:
                q = qs[col]
                typ = "integer" if q["type"] != "multi" else "string"
                allowed = (
                    f"{q.get('min')}..{q.get('max')}"
                    if q["type"] == "integer"
                    else _labels(q.get("options", []))
                )
                desc = f"screening answer: {q.get('label', q['key'])}" + (
                    " (codes ';'-joined)" if q["type"] == "multi" else ""
                )
            elif col.startswith(("x_", "cf_")):
                prefix, key = col.split("_", 1)
                item = schema.item(key)
                typ = "float" if item.is_numeric else "integer"
                allowed = (
                    f"{item.low:g}..{item.high:g}" if item.is_numeric else _labels(item.options)
                )
                whose = (
                    "participant's profile" if prefix == "x" else "counterfactual (ideal profile)"
                )
                desc = f"{item.label}: {whose}, option code ({item.constraint})"
            else:
                raise ExportError(f"codebook: no description for column {col!r} of {file}")
            rows.append(
                {"file": file, "column": col, "type": typ, "allowed": allowed, "description": desc}
            )
    return pd.DataFrame(rows, columns=["file", "column", "type", "allowed", "description"])


def export_study(
    *, study: Study, out: Path, parquet: bool = False, with_text: bool = False
) -> list[Path]:
    """Write the export files into `out` (created if needed); all or nothing."""
    ev = evaluations_frame(study, with_text=with_text)
    pa = participants_frame(study)
    cb = codebook_frame(
        study, {"evaluations.csv": list(ev.columns), "participants.csv": list(pa.columns)}
    )
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=out))
    try:
        ev.to_csv(staging / "evaluations.csv", index=False)
        pa.to_csv(staging / "participants.csv", index=False)
        cb.to_csv(staging / "codebook.csv", index=False)
        (staging / "schema.json").write_text(
            json.dumps(study.schema, ensure_ascii=False, indent=1), encoding="utf-8"
        )
        if parquet:
            ev.to_parquet(staging / "evaluations.parquet", index=False)
            pa.to_parquet(staging / "participants.parquet", index=False)
        written = []
        for f in sorted(staging.iterdir()):
            target = out / f.name
            f.replace(target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
