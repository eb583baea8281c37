"""The study file: a study's whole definition as one JSON document (format version 1), with
the pool's CSV and an uploaded decision model's file beside it, each named with its SHA-256.

The document is canonical JSON (sorted keys, two-space indent, UTF-8, one final newline), so
the same definition always gives the same bytes: an export, imported as a new study and
exported again, is byte-identical, and its hash can stand for the definition (versions,
registrations). Reading one (`study_file_read`) checks everything before anything is
created: the envelope, the format version, the feature schema (the engine), every setting
(`StudyConfig`, with the schema's screening questions as context), the files' hashes, the pool
(the engine's pool table) and the model file (loaded against the schema). Each problem is a
(path, message) pair naming where in the document it is, e.g. ``settings.design[1]`` or
``pool.sha256``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import to_jsonable_python

from recourse_engine import FeatureSchema, PoolError, SchemaError
from studyapp.definition import engine_objects, screening
from studyapp.definition.errors import ConfigError, config_problems
from studyapp.definition.study_config import StudyConfig, config_validate

FORMAT = "recourse-study-file"
FORMAT_VERSION = 1
#: the file names inside an export folder (or its ZIP)
DOCUMENT = "study.json"
POOL_FILE = "pool.csv"
MODEL_FILE = "decision_model.bin"
SCHEMA_ID = "https://recourse-study.example/schema/study-file.schema.json"
_SHA256 = r"^[0-9a-f]{64}$"


class StudyFileError(ConfigError):
    """A study file that cannot be read; each problem names its path in the document."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PoolRef(_Strict):
    """The counterfactual pool: a CSV file beside the document, named with its hash."""

    model_config = ConfigDict(title="Pool")

    file: Literal["pool.csv"] = Field(description="The CSV file beside the document.")
    sha256: str = Field(pattern=_SHA256, description="SHA-256 of the CSV file's bytes.")
    rows: int = Field(ge=1, description="Profiles in the pool.")


class ModelRef(_Strict):
    """The decision model: a built-in one by name, or an uploaded file beside the document."""

    model_config = ConfigDict(title="Decision model")

    name: Literal["income_rule", "uploaded"]
    file: Literal["decision_model.bin"] | None = Field(
        None, description="The model file (uploaded models only)."
    )
    sha256: str | None = Field(None, pattern=_SHA256, description="SHA-256 of the model file.")
    card: dict[str, Any] = Field(
        default_factory=dict, description="The stored model's card (kind, features, ...)."
    )


class StudyFile(_Strict):
    """A study's whole definition (the study file, format version 1)."""

    model_config = ConfigDict(title="Recourse study file")

    format: Literal["recourse-study-file"] = FORMAT
    format_version: Literal[1] = Field(FORMAT_VERSION, description="Bumped on a change.")
    settings: StudyConfig = Field(
        description="Every setting (the typed settings model): texts in every language, "
        "design, conditions and quotas, questions and logic, release schedule, retention."
    )
    schema_: dict[str, Any] = Field(
        alias="schema", description="The feature schema (profile items, screening, evaluation)."
    )
    decision_model: ModelRef
    pool: PoolRef


def file_json_schema() -> dict[str, Any]:
    """The published JSON Schema of the document (docs/schema/study-file.schema.json)."""
    schema = StudyFile.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def canonical_json(doc: Any) -> bytes:
    """The one byte form of a document: sorted keys, fixed indent and separators, UTF-8."""
    text = json.dumps(
        to_jsonable_python(doc), sort_keys=True, indent=2, separators=(",", ": "),
        ensure_ascii=False, allow_nan=False,
    )  # fmt: skip
    return (text + "\n").encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def settings_json(cfg: StudyConfig) -> dict[str, Any]:
    """The settings as the document holds them (as stored; times as ISO 8601 text)."""
    return to_jsonable_python(cfg.stored())


@dataclass(frozen=True)
class ReadStudyFile:
    """A study file that passed every check: what `study_file_create` stores."""

    document: dict[str, Any]
    config: StudyConfig
    schema: FeatureSchema
    pool_csv: str
    pool_rows: int
    model_blob: bytes | None


def _fail(path: str, message: str) -> StudyFileError:
    return StudyFileError([(path, message)])


def _parse(data: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise _fail(DOCUMENT, "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise _fail(DOCUMENT, f"not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(doc, dict):
        raise _fail(DOCUMENT, "expected a JSON object")
    return doc


def _envelope(doc: Mapping[str, Any]) -> None:
    if doc.get("format") != FORMAT:
        raise _fail("format", f"{doc.get('format')!r} is not {FORMAT!r} (not a study file)")
    version = doc.get("format_version")
    if version != FORMAT_VERSION:
        raise _fail(
            "format_version",
            f"unknown format version {version!r}; this platform reads version {FORMAT_VERSION}",
        )


def _schema(doc: Mapping[str, Any]) -> tuple[FeatureSchema, list[dict[str, Any]]]:
    raw = doc.get("schema")
    if not isinstance(raw, Mapping):
        raise _fail("schema", "required: the feature schema as an object")
    try:
        fs = engine_objects.schema_of(raw)
        questions = screening.questions(raw)
    except (SchemaError, screening.ScreeningError) as exc:
        raise _fail("schema", str(exc)) from None
    return fs, questions


def _file(files: Mapping[str, bytes], path: str, name: str, expected: str) -> bytes:
    data = files.get(name)
    if data is None:
        raise _fail(f"{path}.file", f"{name} is missing beside {DOCUMENT}")
    if sha256(data) != expected:
        raise _fail(
            f"{path}.sha256",
            f"{name} has SHA-256 {sha256(data)}, not the {expected} the document names",
        )
    return data


def study_file_read(
    data: bytes, files: Mapping[str, bytes], *, now: datetime, allow_model_file: bool = True
) -> ReadStudyFile:
    """Check a study file and the files beside it completely; StudyFileError names every
    problem found (by its path in the document) and nothing is read further once the
    envelope or the schema fails. `now`: a release date must follow it unless the file
    keeps the one it was exported with. `allow_model_file`: a model file is loaded (an
    unpickling), so the console and the API allow it for superusers only."""
    doc = _parse(data)
    _envelope(doc)
    fs, questions = _schema(doc)
    raw_settings = doc.get("settings")
    try:
        StudyFile.model_validate({**doc, "settings": {"title": "-", "outcome_codes": {}}})
    except ValidationError as exc:
        problems = [p for p in config_problems(exc, StudyFile) if not p[0].startswith("settings")]
        if problems:
            raise StudyFileError(problems) from None
    if not isinstance(raw_settings, Mapping):
        raise _fail("settings", "required: the study's settings as an object")
    model = ModelRef.model_validate(doc["decision_model"])
    pool_ref = PoolRef.model_validate(doc["pool"])
    blob = None
    if model.name == "uploaded":
        if model.file is None or model.sha256 is None:
            raise _fail("decision_model.file", "an uploaded model needs its file and sha256")
        if not allow_model_file:
            raise _fail(
                "decision_model.file",
                "only a superuser may import a model file (loading it runs its code)",
            )
        blob = _file(files, "decision_model", MODEL_FILE, model.sha256)
    elif model.file is not None:
        raise _fail("decision_model.file", f"the built-in model {model.name!r} has no file")
    stored_release = raw_settings.get("release_at")
    try:
        cfg = config_validate(
            raw_settings,
            screening=questions,
            has_model_blob=blob is not None,
            schema=fs,
            now=now,
            stored_release_at=datetime.fromisoformat(stored_release)
            if isinstance(stored_release, str) else None,
        )  # fmt: skip
    except (ConfigError, ValueError) as exc:
        problems = exc.problems if isinstance(exc, ConfigError) else [("release_at", str(exc))]
        problems = [(f"settings.{p}" if p else "settings", m) for p, m in problems]
        raise StudyFileError(problems) from None
    if cfg.decision_model != model.name:
        raise _fail(
            "decision_model.name",
            f"{model.name!r} is not the settings' decision_model {cfg.decision_model!r}",
        )
    pool_bytes = _file(files, "pool", POOL_FILE, pool_ref.sha256)
    try:
        pool_csv = pool_bytes.decode("utf-8")
        rows = len(engine_objects.pool_of(pool_csv, fs))
    except (UnicodeDecodeError, PoolError, ValueError) as exc:
        raise _fail("pool.file", f"{POOL_FILE}: {exc}") from None
    if rows != pool_ref.rows:
        raise _fail("pool.rows", f"{POOL_FILE} has {rows} profiles, not {pool_ref.rows}")
    if blob is not None:
        try:
            engine_objects.model_of("uploaded", blob=blob, schema=fs)
        except engine_objects.StudyConfigError as exc:
            raise _fail("decision_model.file", f"{MODEL_FILE}: {exc}") from None
    return ReadStudyFile(
        document=doc, config=cfg, schema=fs, pool_csv=pool_csv, pool_rows=rows, model_blob=blob
    )
