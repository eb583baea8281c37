"""Save a fitted method and load it back, so a study fits once and reuses the result.

A fitted method (its density models, networks and the decision model it was fitted
against) is pickled with joblib together with the schema hash; loading against another
schema is refused, as for decision models.
"""

from __future__ import annotations

from pathlib import Path

import joblib

from ..schema import FeatureSchema
from .base import MethodError, RecourseMethod

FORMAT = "recourse_method/1"


def save_method(method: RecourseMethod, path: str | Path) -> Path:
    if not hasattr(method, "model"):
        raise MethodError(f"{method.name}: only a fitted method can be saved")
    path = Path(path)
    joblib.dump({"format": FORMAT, "schema_hash": method.schema.hash(), "method": method}, path)
    return path


def load_method(path: str | Path, schema: FeatureSchema) -> RecourseMethod:
    path = Path(path)
    if not path.is_file():
        raise MethodError(f"{path}: saved method not found")
    try:
        payload = joblib.load(path)
    except Exception as exc:
        raise MethodError(f"{path}: not a saved recourse method ({exc})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise MethodError(f"{path}: not a saved recourse method")
    if payload["schema_hash"] != schema.hash():
        raise MethodError(
            f"{path}: method was fitted on schema {payload['schema_hash']}, "
            f"not on this schema ({schema.hash()})"
        )
    method = payload["method"]
    if not isinstance(method, RecourseMethod):
        raise MethodError(f"{path}: not a saved recourse method")
    return method
