"""The stated-effects specification of a power analysis: what a simulated study looks like
(participants' ratings, the distance each rated plan had, the factor levels it was shown) and
how large each effect is. Read from JSON or YAML; every field is checked here, before anything
is simulated, and a problem is a ``PowerInputError`` naming the field (``effects.smooth.change``).

    outcome: action                      # the rating column
    participant: participant             # optional, the default
    ratings_per_participant: 5
    distance: {name: proximity, low: 0.0, high: 1.0}   # uniform; or values: [1, 2, 3, ...]
    intercept: 4.0
    smooth: {shape: linear, change: -1.0}              # f(distance); see SHAPES
    contrasts: {strategy: {sparsest: 0.0, proximate: 0.3, random: 0.3}}
    allocation: {strategy: {sparsest: 1, proximate: 1, random: 3}}   # or: between
    random_effects: {intercept_sd: 0.8, slope_sd: 0.2}
    residual_sd: 1.0
    cut_points: [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]        # optional: ratings 1..7
    model: "action ~ strategy + s(proximity) + s(participant, bs = 're')"   # optional
    k: 10
    tests: [strategyrandom, "s(proximity)", ordinal]   # optional

The latent response of a rating is intercept + f(distance) + the level effects + the
participant's intercept and slope (times distance) + a normal residual; with ``cut_points`` the
rating is 1 + the number of cut points below it (6 cut points: ratings 1..7).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

SHAPES = ("linear", "exponential", "points")
FIELDS = (
    "outcome", "participant", "ratings_per_participant", "distance", "intercept", "smooth",
    "contrasts", "allocation", "random_effects", "residual_sd", "cut_points", "model", "k",
    "basis", "tests",
)  # fmt: skip
BETWEEN = "between"


class PowerInputError(ValueError):
    """Bad input to a power analysis; the message names the field."""


@dataclass(frozen=True)
class Distance:
    name: str
    low: float
    high: float
    values: tuple[float, ...] | None = None  # drawn from these when given, else uniform

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.values is not None:
            return rng.choice(np.asarray(self.values, dtype=float), size=size)
        return rng.uniform(self.low, self.high, size=size)


@dataclass(frozen=True)
class SmoothShape:
    """f(distance): ``linear`` (f rises by ``change`` from low to high), ``exponential``
    (saturating: change (1 - e^{-rate t}) / (1 - e^{-rate}), t the distance scaled to 0..1) or
    ``points`` (straight lines through x, y)."""

    shape: str
    change: float = 0.0
    rate: float = 3.0
    x: tuple[float, ...] = ()
    y: tuple[float, ...] = ()

    def __call__(self, d: np.ndarray, low: float, high: float) -> np.ndarray:
        if self.shape == "points":
            return np.interp(d, self.x, self.y)
        t = (d - low) / (high - low)
        if self.shape == "linear":
            return self.change * t
        return self.change * (1.0 - np.exp(-self.rate * t)) / (1.0 - math.exp(-self.rate))


@dataclass(frozen=True)
class EffectSpec:
    outcome: str
    participant: str
    ratings: int
    intercept: float
    residual_sd: float
    intercept_sd: float
    slope_sd: float
    distance: Distance | None
    smooth: SmoothShape | None
    contrasts: dict[str, dict[str, float]] = field(default_factory=dict)
    allocation: dict[str, dict[str, int] | str] = field(default_factory=dict)
    cut_points: tuple[float, ...] | None = None
    model: str | None = None
    k: int = 10
    basis: str = "tp"
    tests: tuple[str, ...] | None = None


def load_spec(path: str | Path) -> EffectSpec:
    """Read a JSON (``.json``) or YAML (``.yaml``/``.yml``) effects file and check it."""
    p = Path(path)
    if not p.is_file():
        raise PowerInputError(f"--effects {p}: no such file")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix.lower() in (".yaml", ".yml"):
            try:
                import yaml
            except ImportError:  # pragma: no cover - PyYAML ships with the platform's lock
                raise PowerInputError(f"{p}: reading YAML needs PyYAML; use JSON") from None
            raw = yaml.safe_load(text)
        else:
            raw = json.loads(text)
    except (ValueError, ImportError) as exc:
        first = str(exc).splitlines()[0]
        raise PowerInputError(f"{p}: cannot parse ({first})") from None
    try:
        return parse_spec(raw)
    except PowerInputError as exc:
        raise PowerInputError(f"{p}: {exc}") from None


def _number(raw: dict, key: str, where: str, *, default: float | None = None, low=None) -> float:
    value = raw.get(key, default)
    if value is None:
        raise PowerInputError(f"{where}.{key}: missing (a number)")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PowerInputError(f"{where}.{key}: expected a finite number, got {value!r}")
    if low is not None and value < low:
        raise PowerInputError(f"{where}.{key}: must be at least {low}, got {value!r}")
    return float(value)


def _positive(raw: dict, key: str) -> float:
    value = _number(raw, key, "effects")
    if value <= 0:
        raise PowerInputError(f"effects.{key}: must be positive, got {value!r}")
    return value


def _name(raw: dict, key: str, where: str, default: str | None = None) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str) or not value.isidentifier():
        raise PowerInputError(f"{where}.{key}: expected a column name (identifier), got {value!r}")
    return value


def _mapping(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise PowerInputError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _distance(raw: Any) -> Distance:
    d = _mapping(raw, "effects.distance")
    unknown = sorted(set(d) - {"name", "low", "high", "values"})
    if unknown:
        raise PowerInputError(f"effects.distance.{unknown[0]}: unknown field")
    name = _name(d, "name", "effects.distance")
    if "values" in d:
        vals = d["values"]
        if (
            not isinstance(vals, list)
            or len({v for v in vals if isinstance(v, int | float)}) < 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals)
        ):
            raise PowerInputError(
                "effects.distance.values: expected a list of numbers, 2+ distinct"
            )
        return Distance(name, float(min(vals)), float(max(vals)), tuple(float(v) for v in vals))
    low = _number(d, "low", "effects.distance")
    high = _number(d, "high", "effects.distance")
    if high <= low:
        raise PowerInputError(f"effects.distance.high: must exceed low ({low}), got {high}")
    return Distance(name, low, high)


def _smooth(raw: Any) -> SmoothShape:
    s = _mapping(raw, "effects.smooth")
    shape = s.get("shape")
    if shape not in SHAPES:
        raise PowerInputError(f"effects.smooth.shape: one of {', '.join(SHAPES)}, got {shape!r}")
    allowed = {"shape", "change", "rate"} if shape != "points" else {"shape", "x", "y"}
    unknown = sorted(set(s) - allowed)
    if unknown:
        raise PowerInputError(f"effects.smooth.{unknown[0]}: not a field of shape {shape!r}")
    if shape == "points":
        x, y = s.get("x"), s.get("y")
        ok = isinstance(x, list) and isinstance(y, list) and len(x) == len(y) >= 2
        if not ok or not all(isinstance(v, int | float) for v in [*x, *y]):
            raise PowerInputError("effects.smooth.x/y: two lists of numbers of equal length (2+)")
        if np.any(np.diff(x) <= 0):
            raise PowerInputError("effects.smooth.x: must be increasing")
        return SmoothShape("points", x=tuple(map(float, x)), y=tuple(map(float, y)))
    change = _number(s, "change", "effects.smooth")
    rate = _number(s, "rate", "effects.smooth", default=3.0)
    if shape == "exponential" and rate == 0:
        raise PowerInputError("effects.smooth.rate: must not be 0")
    return SmoothShape(shape, change=change, rate=rate)


def _contrasts(raw: Any) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for factor, levels in _mapping(raw, "effects.contrasts").items():
        where = f"effects.contrasts.{factor}"
        if not isinstance(factor, str) or not factor.isidentifier():
            raise PowerInputError(f"{where}: a factor name must be an identifier")
        lv = _mapping(levels, where)
        if len(lv) < 2:
            raise PowerInputError(f"{where}: give the effect of each level, at least two levels")
        out[factor] = {str(k): _number(lv, k, where) for k in lv}
    return out


def _allocation(raw: Any, contrasts: dict, ratings: int) -> dict[str, dict[str, int] | str]:
    out: dict[str, dict[str, int] | str] = {}
    for factor, value in _mapping(raw, "effects.allocation").items():
        where = f"effects.allocation.{factor}"
        if factor not in contrasts:
            raise PowerInputError(f"{where}: not a factor of effects.contrasts")
        if value == BETWEEN:
            out[factor] = BETWEEN
            continue
        counts = _mapping(value, where)
        if set(map(str, counts)) != set(contrasts[factor]):
            raise PowerInputError(
                f"{where}: name each level of the factor once: {sorted(contrasts[factor])}"
            )
        if not all(
            isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts.values()
        ):
            raise PowerInputError(f"{where}: counts per participant must be whole numbers >= 0")
        if sum(counts.values()) != ratings:
            raise PowerInputError(
                f"{where}: counts sum to {sum(counts.values())}, not ratings_per_participant ({ratings})"
            )
        out[factor] = {str(k): int(c) for k, c in counts.items()}
    return out


def parse_spec(raw: Any) -> EffectSpec:
    """Check a loaded effects mapping field by field (see the module docstring)."""
    raw = _mapping(raw, "effects")
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise PowerInputError(f"effects.{unknown[0]}: unknown field (fields: {', '.join(FIELDS)})")
    if raw.get("smooth") is None and not raw.get("contrasts"):
        raise PowerInputError(
            "effects: names no term; give 'smooth' (the shape of the distance's effect) and/or "
            "'contrasts' (the effect of each level of a factor)"
        )
    outcome = _name(raw, "outcome", "effects")
    participant = _name(raw, "participant", "effects", "participant")
    ratings = raw.get("ratings_per_participant")
    if isinstance(ratings, bool) or not isinstance(ratings, int) or ratings < 2:
        raise PowerInputError(
            f"effects.ratings_per_participant: a whole number >= 2 (a participant's random "
            f"effect needs several ratings), got {ratings!r}"
        )
    re = _mapping(raw.get("random_effects", {}), "effects.random_effects")
    bad = sorted(set(re) - {"intercept_sd", "slope_sd"})
    if bad:
        raise PowerInputError(f"effects.random_effects.{bad[0]}: unknown (intercept_sd, slope_sd)")
    distance = _distance(raw["distance"]) if "distance" in raw else None
    smooth = None if raw.get("smooth") is None else _smooth(raw["smooth"])
    slope_sd = _number(re, "slope_sd", "effects.random_effects", default=0.0, low=0.0)
    if distance is None and (smooth is not None or slope_sd > 0):
        raise PowerInputError("effects.distance: missing (the smooth and the slopes need it)")
    contrasts = _contrasts(raw.get("contrasts") or {})
    names = [outcome, participant] + ([distance.name] if distance else []) + list(contrasts)
    if len(set(names)) != len(names):
        raise PowerInputError(f"effects: column names must differ, got {names}")
    cuts = raw.get("cut_points")
    if cuts is not None:
        if (
            not isinstance(cuts, list)
            or len(cuts) != 6
            or not all(isinstance(c, int | float) and not isinstance(c, bool) for c in cuts)
        ):
            raise PowerInputError("effects.cut_points: six increasing numbers (ratings 1..7)")
        if np.any(np.diff(cuts) <= 0):
            raise PowerInputError(f"effects.cut_points: must increase, got {cuts}")
        cuts = tuple(float(c) for c in cuts)
    k = raw.get("k", 10)
    if isinstance(k, bool) or not isinstance(k, int) or k < 3:
        raise PowerInputError(f"effects.k: a whole number >= 3, got {k!r}")
    if distance is not None and distance.values is not None and len(set(distance.values)) < k:
        raise PowerInputError(
            f"effects.k: {k} exceeds the {len(set(distance.values))} distinct distance values"
        )
    basis = raw.get("basis", "tp")
    if basis not in ("tp", "cr"):
        raise PowerInputError(f"effects.basis: 'tp' or 'cr', got {basis!r}")
    model = raw.get("model")
    if model is not None and not isinstance(model, str):
        raise PowerInputError("effects.model: a formula in mgcv's syntax (text)")
    tests = raw.get("tests")
    if tests is not None and (
        not isinstance(tests, list) or not tests or not all(isinstance(t, str) for t in tests)
    ):
        raise PowerInputError("effects.tests: a non-empty list of test names")
    return EffectSpec(
        outcome=outcome,
        participant=participant,
        ratings=ratings,
        intercept=_number(raw, "intercept", "effects", default=0.0),
        residual_sd=_positive(raw, "residual_sd"),
        intercept_sd=_number(re, "intercept_sd", "effects.random_effects", default=0.0, low=0.0),
        slope_sd=slope_sd,
        distance=distance,
        smooth=smooth,
        contrasts=contrasts,
        allocation=_allocation(raw.get("allocation") or {}, contrasts, ratings),
        cut_points=cuts,
        model=model,
        k=k,
        basis=basis,
        tests=None if tests is None else tuple(tests),
    )
