"""Exporting a study as its study file (`definition.study_file`) and creating a study from one.

The export reads the study's settings through the one settings model, so an export is what
the study is, in the same words the console and the API use; the import checks the whole
file first (`study_file_read`) and creates the study, its conditions, quotas and model file
in one transaction, so a refused file leaves nothing behind. The completion codes are taken
as the file has them (the file is the definition; duplicate a study for fresh codes).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone
from pydantic_core import to_jsonable_python

from studyapp.definition import study_file as sf
from studyapp.definition.errors import ConfigError, StudyError
from studyapp.definition.study_config import config_validate
from studyapp.models import Study
from studyapp.studies.services import slug_check
from studyapp.studies.updates import (
    ROW_FIELDS,
    config_write,
    questions_of,
    schema_or_none,
    study_config,
)

#: the most a study file's ZIP may hold, unpacked (a pool of 200,000 rows is far below)
MAX_UNPACKED = 512 * 1024 * 1024


def study_settings(study: Study) -> dict[str, Any]:
    """The study's settings as the document holds them: read through the settings model
    (normalised as an import stores them), or as stored where the rules now refuse them."""
    current = study_config(study)
    try:
        cfg = config_validate(
            current,
            screening=questions_of(study.schema),
            has_model_blob=bool(study.decision_model_blob),
            schema=schema_or_none(study.schema),
            now=timezone.now(),
            stored_release_at=study.release_at,
        )
    except ConfigError:
        return to_jsonable_python(current)
    return sf.settings_json(cfg)


def study_document(study: Study) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The study file document and the files beside it (name -> bytes)."""
    pool = study.pool_csv.encode("utf-8")
    files = {sf.POOL_FILE: pool}
    blob = bytes(study.decision_model_blob) if study.decision_model_blob else None
    uploaded = study.decision_model == "uploaded" and blob is not None
    if uploaded:
        files[sf.MODEL_FILE] = blob
    doc = {
        "format": sf.FORMAT,
        "format_version": sf.FORMAT_VERSION,
        "settings": study_settings(study),
        "schema": study.schema,
        "decision_model": {
            "name": study.decision_model,
            "file": sf.MODEL_FILE if uploaded else None,
            "sha256": sf.sha256(blob) if uploaded else None,
            "card": (study.decision_model_info or {}) if uploaded else {},
        },
        "pool": {"file": sf.POOL_FILE, "sha256": sf.sha256(pool), "rows": study.pool_rows},
    }
    return doc, files


def study_file_bytes(study: Study) -> tuple[bytes, dict[str, bytes]]:
    """The document's canonical bytes and the files beside it."""
    doc, files = study_document(study)
    return sf.canonical_json(doc), files


def study_file_write(study: Study, out: Path) -> list[Path]:
    """Write study.json, pool.csv (and decision_model.bin) into the folder `out`."""
    data, files = study_file_bytes(study)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / sf.DOCUMENT]
    written[0].write_bytes(data)
    for name, content in sorted(files.items()):
        (out / name).write_bytes(content)
        written.append(out / name)
    return written


def study_file_zip(study: Study) -> bytes:
    """The study file and its files as one ZIP (the console's download, the API's answer);
    fixed times inside, so the same study gives the same bytes."""
    data, files = study_file_bytes(study)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in [(sf.DOCUMENT, data), *sorted(files.items())]:
            zf.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), content)
    return buf.getvalue()


def files_of_folder(folder: Path) -> tuple[bytes, dict[str, bytes]]:
    """(study.json's bytes, the files beside it) from an export folder."""
    if not folder.is_dir():
        raise sf.StudyFileError([(str(folder), "not a folder (give the export's folder)")])
    doc = folder / sf.DOCUMENT
    if not doc.is_file():
        raise sf.StudyFileError([(str(doc), f"missing: the folder holds no {sf.DOCUMENT}")])
    files = {n: (folder / n).read_bytes() for n in (sf.POOL_FILE, sf.MODEL_FILE)
             if (folder / n).is_file()}  # fmt: skip
    return doc.read_bytes(), files


def files_of_zip(data: bytes) -> tuple[bytes, dict[str, bytes]]:
    """(study.json's bytes, the files beside it) from the ZIP the console downloads."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        names = {i.filename: i for i in zf.infolist()}
        if sum(i.file_size for i in names.values()) > MAX_UNPACKED:
            raise sf.StudyFileError([("zip", "unpacks to more than 512 MiB")])
        if sf.DOCUMENT not in names:
            raise sf.StudyFileError([(sf.DOCUMENT, "missing: the ZIP holds no study.json")])
        files = {n: zf.read(n) for n in (sf.POOL_FILE, sf.MODEL_FILE) if n in names}
        return zf.read(sf.DOCUMENT), files
    except (zipfile.BadZipFile, OSError) as exc:
        raise sf.StudyFileError([("zip", f"not a readable ZIP file: {exc}")]) from None


def study_file_create(
    *,
    data: bytes,
    files: Mapping[str, bytes],
    slug: str,
    owner: Any = None,
    allow_model_file: bool = True,
) -> Study:
    """A new draft study from a study file: checked completely, then created in one
    transaction (StudyFileError or StudyError naming the problem otherwise)."""
    slug = slug_check(slug)
    read = sf.study_file_read(data, files, now=timezone.now(), allow_model_file=allow_model_file)
    stored = read.config.stored()
    model = read.document["decision_model"]
    with transaction.atomic():
        study = Study.objects.create(
            slug=slug,
            schema=dict(read.document["schema"]),
            schema_hash=read.schema.hash(),
            pool_csv=read.pool_csv,
            pool_hash=sf.sha256(read.pool_csv.encode("utf-8")),
            pool_rows=read.pool_rows,
            decision_model_blob=read.model_blob,
            decision_model_info=(model.get("card") or {}) if read.model_blob else {},
            owner=owner if getattr(owner, "pk", None) else None,
            **{name: stored[name] for name in ROW_FIELDS},
        )
        config_write(study, read.config, ["eligibility", "conditions", "quotas"])
    return study


__all__ = ["StudyError", "study_file_create", "study_file_write", "study_file_zip"]
