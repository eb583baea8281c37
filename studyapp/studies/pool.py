"""A pool upload, checked before anything is stored: the preview a researcher confirms in the
console (or gets back from the API), and the all-or-nothing replacement of a draft's pool.

The preview checks a CSV row by row against the engine's declared pool table
(`recourse_engine.pool.pool_table`, plus the label column's rule), so a researcher sees
every bad row at once, not only the first the engine would stop at, in the engine's words;
a file with any problem changes nothing. The engine's own pool check has the last word on a
faultless file.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from django.db import transaction

from recourse_engine import FeatureSchema, PoolError, SchemaError, pool_from_frame
from recourse_engine import table_rules as rules
from recourse_engine.pool import pool_table
from studyapp.definition import engine_objects, screening
from studyapp.definition.errors import StudyError
from studyapp.definition.model_card import card_on_pool
from studyapp.models import Study
from studyapp.studies.updates import require_draft

#: an uploaded pool larger than this is refused before it is parsed
MAX_POOL_BYTES = 64 * 1024 * 1024
#: the pool's own 0/1 decisions, a label a decision model can be trained on (a label rule
#: of kind "column" names it); 1 = approved
LABEL_COLUMNS = ("approved",)
#: extra pool columns that are kept (group attributes of pool profiles, a display label, the
#: label column)
EXTRA_POOL_COLUMNS = ("label", *LABEL_COLUMNS)


@dataclass(frozen=True)
class PoolPreview:
    """What an uploaded pool would become; `ok` only when nothing at all is wrong."""

    rows: int = 0
    rejected: list[tuple[int, str]] = field(default_factory=list)
    distributions: dict[str, dict[int | str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    csv_text: str = ""
    columns: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors and not self.rejected and self.rows > 0

    def summary(self, limit: int = 5) -> str:
        """One paragraph for an error message: file problems, then the first bad rows."""
        parts = list(self.errors)
        parts += [f"line {line}: {reason}" for line, reason in self.rejected[:limit]]
        if len(self.rejected) > limit:
            parts.append(f"... and {len(self.rejected) - limit} more rejected rows")
        return "; ".join(parts) or "no problems"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the API returns it as is)."""
        return {
            "ok": self.ok,
            "rows": self.rows,
            "rejected": [{"line": line, "reason": reason} for line, reason in self.rejected],
            "distributions": {
                k: {str(c): n for c, n in d.items()} for k, d in self.distributions.items()
            },
            "errors": list(self.errors),
            "columns": list(self.columns),
        }


class PoolRejected(StudyError):
    """A pool file with problems; `preview` lists them all."""

    def __init__(self, preview: PoolPreview) -> None:
        super().__init__(f"pool: {preview.summary()}")
        self.preview = preview


def _schema(schema: Mapping[str, Any] | FeatureSchema) -> FeatureSchema:
    if isinstance(schema, FeatureSchema):
        return schema
    try:
        return engine_objects.schema_of(schema)
    except SchemaError as exc:
        raise StudyError(f"schema: {exc}") from None


def _decode(data: bytes) -> tuple[str | None, str | None]:
    if not data or not data.strip():
        return None, "the file is empty"
    if len(data) > MAX_POOL_BYTES:
        return None, f"the file is too big ({len(data):,} bytes; at most {MAX_POOL_BYTES:,})"
    if b"\x00" in data[:8192]:
        return None, "not a CSV text file (binary content)"
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte {exc.start + 1} cannot be decoded); save it as UTF-8"


def _read_rows(text: str, max_rows: int) -> tuple[list[str], list[int], list[list[str]], list]:
    """Header, line numbers and cells of well-formed rows, and rows of the wrong width."""
    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True)
    header = [c.strip() for c in next(reader, [])]
    lines: list[int] = []
    cells: list[list[str]] = []
    wrong: list[tuple[int, str]] = []
    for row in reader:
        line = reader.line_num
        if not row or all(c.strip() == "" for c in row):
            continue  # blank lines (a trailing newline) are not rows
        if len(lines) + len(wrong) >= max_rows:
            raise _TooBig()
        if len(row) != len(header):
            wrong.append((line, f"{len(row)} fields where the header has {len(header)}"))
            continue
        lines.append(line)
        cells.append([c.strip() for c in row])
    return header, lines, cells, wrong


class _TooBig(Exception):
    pass


def _check_columns(header: list[str], schema: FeatureSchema) -> list[str]:
    errors = []
    if not header or all(c == "" for c in header):
        return ["no header row"]
    if len(header) == 1:
        for sep in (";", "\t", "|"):
            if sep in header[0]:
                return [f"not a comma-separated file: the header is split by {sep!r}, not ','"]
    dup = sorted({c for c in header if header.count(c) > 1})
    if dup:
        errors.append(f"duplicate column(s): {', '.join(dup)}")
    required = ["id", "income", *schema.keys]
    missing = [c for c in required if c not in header]
    if missing:
        errors.append(f"missing column(s): {', '.join(missing)}")
    extra_ok = {*EXTRA_POOL_COLUMNS, *(q["key"] for q in _screening_keys(schema))} - {*required}
    unknown = [c for c in header if c not in required and c not in extra_ok]
    if unknown:
        errors.append(
            f"unknown column(s): {', '.join(unknown)} (expected id, income, the schema's items"
            f" and optionally {', '.join(sorted(extra_ok))})"
        )
    return errors


def _screening_keys(schema: FeatureSchema) -> list[dict[str, Any]]:
    try:
        return screening.questions(schema.to_dict())
    except screening.ScreeningError:
        return []


def _preview_table(schema: FeatureSchema) -> Any:
    """The engine's pool table (`recourse_engine.pool.pool_table`) with the label columns'
    rule: the preview refuses what the engine would, row by row."""
    label_rule = rules.rule(
        lambda s: pd.to_numeric(s, errors="coerce").isin([0, 1]), "is not 0 or 1", empty_fails=True
    )
    return pool_table(schema).add_columns(
        {key: rules.column([label_rule], required=False) for key in LABEL_COLUMNS}
    )


def _row_problems(frame: pd.DataFrame, schema: FeatureSchema) -> list[list[str]]:
    """Per row, the reasons it is refused (each naming its column); a repeated id is the
    file's problem (`duplicated id(s)` with both lines), not its second row's."""
    return rules.row_problems(frame, _preview_table(schema), skip=(rules.DUPLICATE,))


def _distributions(frame: pd.DataFrame, schema: FeatureSchema) -> dict[str, dict[int | str, int]]:
    out: dict[str, dict[int | str, int]] = {}
    for it in schema.items:
        values = pd.to_numeric(frame[it.key], errors="coerce")
        if it.is_numeric:
            bins = pd.cut(values, bins=min(10, max(1, values.nunique())))
            counts = bins.value_counts(sort=False)
            out[it.key] = {str(k): int(v) for k, v in counts.items()}
        else:
            counts = values.astype(int).value_counts()
            out[it.key] = {code: int(counts.get(code, 0)) for code in range(1, it.n_options + 1)}
    return out


def pool_preview(
    schema: Mapping[str, Any] | FeatureSchema, data: bytes, *, max_rows: int = 200_000
) -> PoolPreview:
    """Check an uploaded pool CSV without storing anything: every problem, row by row.

    Line numbers are the file's (the header is line 1). File-level problems (encoding, not
    CSV, missing or unknown columns, duplicated ids, empty, too big) go to `errors`; rows
    with a bad cell go to `rejected`, one entry per row with every bad column named.
    """
    fs = _schema(schema)
    text, problem = _decode(data)
    if problem:
        return PoolPreview(errors=[problem])
    try:
        header, lines, cells, wrong = _read_rows(text, max_rows)
    except _TooBig:
        return PoolPreview(errors=[f"too many rows (at most {max_rows:,})"])
    except csv.Error as exc:
        return PoolPreview(errors=[f"not a readable CSV file ({exc})"])
    errors = _check_columns(header, fs)
    if len(header) < 2 and not errors:
        errors.append("not a comma-separated file (one column only)")
    if not cells and not wrong:
        errors.append("no data rows")
    if errors:
        return PoolPreview(errors=errors, columns=header)
    frame = pd.DataFrame(cells, columns=header)
    problems = _row_problems(frame, fs)
    ids = frame["id"]
    dup = ids.duplicated(keep=False) & (ids != "")
    if dup.any():
        first: dict[str, int] = {}
        listed = []
        for i in np.flatnonzero(dup.to_numpy()):
            key = ids.iat[i]
            if key in first:
                listed.append(f"{key!r} on lines {first[key]} and {lines[i]}")
            else:
                first[key] = lines[i]
        shown = "; ".join(listed[:10]) + (
            f"; ... {len(listed) - 10} more" if len(listed) > 10 else ""
        )
        errors.append(f"duplicated id(s): {shown}")
    rejected = sorted([*wrong, *((lines[i], "; ".join(p)) for i, p in enumerate(problems) if p)])
    good = np.array([not p for p in problems], dtype=bool)
    accepted = frame[good].reset_index(drop=True)
    distributions = _distributions(accepted, fs) if len(accepted) else {}
    csv_text = ""
    if not errors and not rejected:
        try:  # the engine's own check has the last word, and gives the normalised table
            pool = pool_from_frame(accepted, fs, source="uploaded pool")
        except PoolError as exc:
            errors.append(str(exc))
        else:
            buf = io.StringIO()
            pool.to_frame(fs).to_csv(buf, index=False)
            csv_text = buf.getvalue()
    return PoolPreview(
        rows=int(good.sum()),
        rejected=rejected,
        distributions=distributions,
        errors=errors,
        csv_text=csv_text,
        columns=header,
    )


def study_replace_pool(*, study: Study, data: bytes) -> PoolPreview:
    """Store a new pool for a draft study when the file is faultless; otherwise change nothing
    and return the preview with its problems."""
    require_draft(study, "its pool")
    preview = pool_preview(study.schema, data)
    if not preview.ok:
        return preview
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        require_draft(locked, "its pool")
        locked.pool_csv = preview.csv_text
        locked.pool_hash = engine_objects.pool_csv_hash(preview.csv_text)
        locked.pool_rows = preview.rows
        fields = ["pool_csv", "pool_hash", "pool_rows", "updated_at"]
        if locked.decision_model_info and locked.decision_model_blob:
            # the stored model's approval rate is measured again on the new pool
            locked.decision_model_info = card_on_pool(
                study=locked, card=locked.decision_model_info, blob=locked.decision_model_blob
            )
            fields.append("decision_model_info")
        locked.save(update_fields=fields)
    for name in fields:
        setattr(study, name, getattr(locked, name))
    return preview
