"""Study export: tidy tables (DESIGN.md § Export) and a codebook describing every column.

`evaluations.csv` has one row per evaluation, `participants.csv` one per participant,
`codebook.csv` one per column of both, `schema.json` the study's schema (so analyses can
decode item codes). The access code is never exported; panel ids (recruitment id, panel
parameters) and free-text answers only when asked for.

Rows are built one at a time by `_evaluation_row`/`_participant_row`, so the frames below
and the streamed ZIP (`export_zip_stream`, chunk by chunk) cannot disagree.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from django.db.models import Count, QuerySet

from recourse_engine import FeatureSchema
from studyapp.generation import engine
from studyapp.models import Evaluation, Participant, Study
from studyapp.participation import screening

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


PANEL_COLUMNS = ("recruitment_id", "panel")


def evaluation_columns(schema: FeatureSchema, *, with_text: bool = False) -> list[str]:
    columns = [c for c in EVALUATION_COLUMNS if with_text or c not in TEXT_COLUMNS]
    return columns + [f"x_{k}" for k in schema.keys] + [f"cf_{k}" for k in schema.keys]


def participant_columns(
    schema: FeatureSchema, qs: list[dict[str, Any]], *, with_panel_ids: bool = False
) -> list[str]:
    return [
        "study",
        "participant",
        *(PANEL_COLUMNS if with_panel_ids else ()),
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
        "attention_failures",
        "attention_excluded",
        "flagged",
        "flag_reason",
        "started_at",
        "finished_at",
        *[f"x_{k}" for k in schema.keys],
    ]


def evaluation_values(study: Study) -> QuerySet[Evaluation]:
    """The columns the export needs, as plain values: no model instances, and only the
    JSON fields that are exported are decoded (5x faster than select_related rows)."""
    return (
        Evaluation.objects.filter(participant__study=study)
        .order_by("participant_id", "recourse__position")
        .values(
            "participant_id",
            "participant__condition",
            "participant__gender",
            "participant__age",
            "participant__income_jpy",
            "participant__profile__values",
            "recourse_id",
            "recourse__strategy",
            "recourse__position",
            "recourse__sparsity",
            "recourse__proximity",
            "recourse__changed",
            "recourse__values",
            "impossible",
            "acceptance",
            "action",
            "acceptance_why",
            "action_why",
            "seconds_on_page",
            "submitted_at",
        )
    )


def _evaluation_row(study: Study, schema: FeatureSchema, ev: dict[str, Any]) -> dict[str, Any]:
    impossible = ev["impossible"] or []
    return {
        "study": study.slug,
        "participant": ev["participant_id"],
        "condition": ev["participant__condition"],
        "gender": ev["participant__gender"],
        "age": ev["participant__age"],
        "income": ev["participant__income_jpy"],
        "recourse": ev["recourse_id"],
        "strategy": ev["recourse__strategy"],
        "position": ev["recourse__position"],
        "sparsity": ev["recourse__sparsity"],
        "proximity": ev["recourse__proximity"],
        "changed": ";".join(ev["recourse__changed"] or []),
        "impossible": ";".join(impossible),
        "any_impossible": int(bool(impossible)),
        "acceptance": ev["acceptance"],
        "action": ev["action"],
        "acceptance_why": ev["acceptance_why"],
        "action_why": ev["action_why"],
        "seconds_on_page": round(ev["seconds_on_page"], 3),
        "submitted_at": _iso(ev["submitted_at"]),
        **_codes(schema, ev["participant__profile__values"], "x_"),
        **_codes(schema, ev["recourse__values"], "cf_"),
    }


def _evaluation_frame(
    rows: list[dict[str, Any]], columns: list[str], schema: FeatureSchema
) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=columns)
    _integer_columns(frame, schema, ["age"])
    return frame


def evaluations_frame(study: Study, *, with_text: bool = False) -> pd.DataFrame:
    schema = engine.schema_of(study.schema)
    rows = [_evaluation_row(study, schema, ev) for ev in evaluation_values(study)]
    return _evaluation_frame(rows, evaluation_columns(schema, with_text=with_text), schema)


#: participant state -> the outcome it ended with (models.OUTCOMES, plus no_recourse)
_OUTCOME_OF = {
    Participant.State.COMPLETED: "completed",
    Participant.State.SCREENED_OUT: "screened_out",
    Participant.State.NO_RECOURSE: "no_recourse",
    Participant.State.QUOTA_FULL: "quota_full",
    Participant.State.FAILED_ATTENTION: "failed_attention",
    Participant.State.WITHDRAWN: "withdrew",
}
OUTCOME_VALUES = (*_OUTCOME_OF.values(), "incomplete")


def _outcome(state: str) -> str:
    return _OUTCOME_OF.get(state, "incomplete")


def _screening_value(value: Any) -> Any:
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    return value


def participant_values(study: Study) -> QuerySet[Participant]:
    """One dict per participant with the exported columns and its evaluation count."""
    return (
        Participant.objects.filter(study=study)
        .order_by("pk")
        .annotate(n_evaluations=Count("evaluations"))
        .values(
            "pk",
            "recruitment_id",
            "panel",
            "condition",
            "state",
            "screening",
            "gender",
            "age",
            "income_band",
            "income_jpy",
            "consent_version",
            "consented_at",
            "profile__decision",
            "profile__values",
            "generation",
            "generation_queued_at",
            "generation_finished_at",
            "n_evaluations",
            "attention_failures",
            "flagged",
            "flag_reason",
            "created_at",
            "finished_at",
        )
    )


def _participant_row(
    study: Study,
    schema: FeatureSchema,
    qs: list[dict[str, Any]],
    p: dict[str, Any],
    with_panel_ids: bool,
) -> dict[str, Any]:
    panel = (
        {
            "recruitment_id": p["recruitment_id"],
            "panel": json.dumps(p["panel"] or {}, sort_keys=True),
        }
        if with_panel_ids
        else {}
    )
    answers = p["screening"] or {}
    queued, finished = p["generation_queued_at"], p["generation_finished_at"]
    return {
        "study": study.slug,
        "participant": p["pk"],
        **panel,
        "condition": p["condition"],
        "state": p["state"],
        "outcome": _outcome(p["state"]),
        **{f"screen_{q['key']}": _screening_value(answers.get(q["key"])) for q in qs},
        "gender": p["gender"],
        "age": p["age"],
        "income_band": p["income_band"],
        "income": p["income_jpy"],
        "consent_version": p["consent_version"],
        "consented_at": _iso(p["consented_at"]),
        "decision": p["profile__decision"] or "",
        "generation": p["generation"],
        "recourses_seconds": (
            round((finished - queued).total_seconds(), 3) if finished and queued else None
        ),
        "n_evaluations": p["n_evaluations"],
        "attention_failures": p["attention_failures"],
        "attention_excluded": int(p["attention_failures"] > study.attention_max_failures),
        "flagged": int(p["flagged"]),
        "flag_reason": p["flag_reason"],
        "started_at": _iso(p["created_at"]),
        "finished_at": _iso(p["finished_at"]),
        **_codes(schema, p["profile__values"], "x_"),
    }


def _participant_frame(
    rows: list[dict[str, Any]], columns: list[str], schema: FeatureSchema, qs: list[dict[str, Any]]
) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=columns)
    ints = [f"screen_{q['key']}" for q in qs if q["type"] != "multi"]
    _integer_columns(frame, schema, ["age", *ints])
    return frame


def participants_frame(study: Study, *, with_panel_ids: bool = False) -> pd.DataFrame:
    schema = engine.schema_of(study.schema)
    qs = screening.questions(study.schema)
    rows = [
        _participant_row(study, schema, qs, p, with_panel_ids) for p in participant_values(study)
    ]
    columns = participant_columns(schema, qs, with_panel_ids=with_panel_ids)
    return _participant_frame(rows, columns, schema, qs)


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
    outcomes = "; ".join(OUTCOME_VALUES)
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
        "recruitment_id": ("string", "", "panel id the participant arrived with (PROLIFIC_PID...)"),
        "panel": ("string", "JSON object", "other panel parameters (STUDY_ID, SESSION_ID, ...)"),
        "attention_failures": ("integer", ">=0", "attention checks answered wrongly"),
        "attention_excluded": (
            "integer",
            "0; 1",
            f"1 when attention failures exceed the study's limit ({study.attention_max_failures})",
        ),
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


def _arrow_schema(codebook: pd.DataFrame, file: str) -> Any:
    """Parquet column types from the codebook, so every chunk is written with the same types."""
    import pyarrow as pa

    types = {"integer": pa.int64(), "float": pa.float64()}
    rows = codebook[codebook["file"] == file]
    return pa.schema(
        [(c, types.get(t, pa.string())) for c, t in zip(rows["column"], rows["type"], strict=True)]
    )


def _arrow_table(frame: pd.DataFrame, schema: Any) -> Any:
    import pyarrow as pa

    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def _codebook_for(study: Study, *, with_text: bool, with_panel_ids: bool) -> pd.DataFrame:
    schema = engine.schema_of(study.schema)
    qs = screening.questions(study.schema)
    return codebook_frame(
        study,
        {
            "evaluations.csv": evaluation_columns(schema, with_text=with_text),
            "participants.csv": participant_columns(schema, qs, with_panel_ids=with_panel_ids),
        },
    )


def export_study(
    *,
    study: Study,
    out: Path,
    parquet: bool = False,
    with_text: bool = False,
    with_panel_ids: bool = False,
) -> list[Path]:
    """Write the export files into `out` (created if needed); all or nothing."""
    import pyarrow.parquet as pq

    ev = evaluations_frame(study, with_text=with_text)
    pa_ = participants_frame(study, with_panel_ids=with_panel_ids)
    cb = _codebook_for(study, with_text=with_text, with_panel_ids=with_panel_ids)
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=out))
    try:
        ev.to_csv(staging / "evaluations.csv", index=False)
        pa_.to_csv(staging / "participants.csv", index=False)
        cb.to_csv(staging / "codebook.csv", index=False)
        (staging / "schema.json").write_text(
            json.dumps(study.schema, ensure_ascii=False, indent=1), encoding="utf-8"
        )
        if parquet:
            for frame, name in ((ev, "evaluations"), (pa_, "participants")):
                table = _arrow_table(frame, _arrow_schema(cb, f"{name}.csv"))
                pq.write_table(table, staging / f"{name}.parquet")
        written = []
        for f in sorted(staging.iterdir()):
            target = out / f.name
            f.replace(target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# --- streamed ZIP ---------------------------------------------------------------------------
class _Sink(io.RawIOBase):
    """A write-only stream that hands out what was written since the last `drain`."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def drain(self) -> bytes:
        out = b"".join(self._parts)
        self._parts.clear()
        return out


def _chunks(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _member(name: str, *, stored: bool = False) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=dt.datetime.now().timetuple()[:6])
    info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def export_zip_stream(
    study: Study,
    *,
    with_panel_ids: bool = False,
    with_text: bool = False,
    parquet: bool = True,
    chunk_size: int = 2000,
) -> Iterator[bytes]:
    """The export as a ZIP, produced piece by piece for a streaming response.

    Participants and evaluations are read with `.iterator(chunk_size)` and written to the
    ZIP a chunk at a time; Parquet files are written alongside into temporary files (typed
    from the codebook) and copied into the ZIP at the end, so memory stays bounded by one
    chunk whatever the study's size.
    """
    for piece in _zip_pieces(
        study,
        with_panel_ids=with_panel_ids,
        with_text=with_text,
        parquet=parquet,
        chunk_size=chunk_size,
    ):
        if piece:
            yield piece


def _zip_pieces(
    study: Study,
    *,
    with_panel_ids: bool = False,
    with_text: bool = False,
    parquet: bool = True,
    chunk_size: int = 2000,
) -> Iterator[bytes]:
    import pyarrow.parquet as pq

    schema = engine.schema_of(study.schema)
    qs = screening.questions(study.schema)
    codebook = _codebook_for(study, with_text=with_text, with_panel_ids=with_panel_ids)
    ev_cols = evaluation_columns(schema, with_text=with_text)
    pa_cols = participant_columns(schema, qs, with_panel_ids=with_panel_ids)
    sink = _Sink()
    tmp = tempfile.TemporaryDirectory(prefix="export-")
    try:
        with zipfile.ZipFile(sink, mode="w", compression=zipfile.ZIP_DEFLATED) as zf:
            tables = {
                "evaluations": (
                    ev_cols,
                    (
                        _evaluation_row(study, schema, ev)
                        for ev in evaluation_values(study).iterator(chunk_size)
                    ),
                    lambda rows: _evaluation_frame(rows, ev_cols, schema),
                ),
                "participants": (
                    pa_cols,
                    (
                        _participant_row(study, schema, qs, p, with_panel_ids)
                        for p in participant_values(study).iterator(chunk_size)
                    ),
                    lambda rows: _participant_frame(rows, pa_cols, schema, qs),
                ),
            }
            for name, (columns, rows, to_frame) in tables.items():
                writer = None
                if parquet:
                    arrow_schema = _arrow_schema(codebook, f"{name}.csv")
                    writer = pq.ParquetWriter(Path(tmp.name) / f"{name}.parquet", arrow_schema)
                with zf.open(_member(f"{name}.csv"), mode="w") as member:
                    member.write(",".join(columns).encode() + b"\n")
                    for chunk in _chunks(rows, chunk_size):
                        frame = to_frame(chunk)
                        member.write(frame.to_csv(index=False, header=False).encode())
                        if writer is not None:
                            writer.write_table(_arrow_table(frame, arrow_schema))
                        yield sink.drain()
                if writer is not None:
                    writer.close()
            zf.writestr(_member("codebook.csv"), codebook.to_csv(index=False))
            zf.writestr(
                _member("schema.json"), json.dumps(study.schema, ensure_ascii=False, indent=1)
            )
            yield sink.drain()
            if parquet:
                for name in ("evaluations", "participants"):
                    with (
                        open(Path(tmp.name) / f"{name}.parquet", "rb") as fh,
                        zf.open(_member(f"{name}.parquet", stored=True), mode="w") as member,
                    ):
                        while piece := fh.read(1 << 20):
                            member.write(piece)
                            yield sink.drain()
        yield sink.drain()
    finally:
        tmp.cleanup()
