"""The one interface every recourse method implements: fit, then `get_counterfactuals`.

Methods search on the schema's normalised scale (`recourse_engine.encoding`). Whatever a
method proposes goes through `RecourseMethod._finalise`, which is the only way a
counterfactual leaves a method:

* immutable (`fixed`) items are reset to the factual's values; `up` / `down` items are
  clamped so that they never move the forbidden way;
* the point is decoded to valid item codes with `denormalise` (nearest ordinal code,
  arg-max category, numeric value clipped to its range);
* the decoded profile is checked again — constraints, changed at all, approved by the
  decision model — and a row that fails any check is reported invalid, with its
  counterfactual set to NaN. A factual without a valid counterfactual is never returned as
  if it had one.

Searches call `snap` on their candidates before asking the model, so what the model
approved during the search is exactly what `_finalise` decodes.
"""

from __future__ import annotations

import time
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields
from typing import Any, ClassVar

import numpy as np

from ..decision import DecisionModel
from ..distances import CHANGE_TOL
from ..encoding import denormalise, normalise
from ..schema import FeatureSchema
from .capabilities import Capabilities

# reasons a row has no counterfactual
FOUND = "valid"
NONE_FOUND = "none_found"
NOT_APPROVED = "not_approved"
UNCHANGED = "unchanged"


def pattern_key(xc: np.ndarray) -> bytes:
    """Bytes identifying an immutable pattern (rounded; -0.0 and 0.0 alike)."""
    return (np.round(np.asarray(xc, dtype=float), 12) + 0.0).tobytes()


def pattern_rng(seed: int, xc: np.ndarray) -> np.random.Generator:
    """A generator of its own for one pattern (or one factual), so that what a method draws
    for a row does not depend on the other rows of its batch."""
    return np.random.default_rng([int(seed), zlib.crc32(pattern_key(xc))])


#: the pool column that holds the protected group when a pool strategy is given none
DEFAULT_GROUP_COLUMN = "gender"


def pool_groups(
    pool: Any,
    group: np.ndarray | None,
    column: str,
    who: str,
    schema: FeatureSchema | None = None,
) -> tuple[np.ndarray, str | None]:
    """0/1 per pool row (-1: in neither group) for a pool strategy `who`, and the schema
    item's key when the group is an item (so that it is not conditioned on).

    `group` is used as given; otherwise the two most frequent values of the pool's extra
    `column` (or, with a `schema`, of that item), the first in sorted order being 0.
    """
    item = None
    if group is None:
        if column in pool.extra.columns:
            labels = pool.extra[column].astype(str)
        elif schema is not None and column in schema.keys:
            import pandas as pd

            item = column
            labels = pd.Series(pool.codes[:, schema.index(column)]).astype(str)
        else:
            raise MethodError(f"pool has no group column {column!r} for the {who} strategy")
        top = labels.value_counts().index[:2].tolist()
        if len(top) != 2:
            raise MethodError(f"{who}: group column {column!r} holds a single value")
        a, b = sorted(top)
        group = np.where(labels == a, 0, np.where(labels == b, 1, -1))
    group = np.asarray(group)
    if group.shape != (len(pool),):
        raise MethodError(f"{who}: need one group value per pool row ({len(pool)})")
    return group, item


class MethodError(ValueError):
    """A method that cannot be fitted or applied as asked; the message says why."""


@dataclass
class CounterfactualResult:
    """Counterfactuals of a batch of factuals, one row each, with an explicit validity mask.

    `counterfactuals[i]` holds valid item codes when `valid[i]`, else NaN; `status[i]` says
    why a row is invalid (`none_found`, `not_approved`, `unchanged`).
    """

    method: str
    factuals: np.ndarray
    counterfactuals: np.ndarray
    valid: np.ndarray
    status: np.ndarray
    seconds: float = 0.0

    def __len__(self) -> int:
        return len(self.factuals)

    @property
    def n_valid(self) -> int:
        return int(self.valid.sum())


@dataclass
class Layout:
    """Where each item lives on the normalised scale and what may change there."""

    schema: FeatureSchema
    item_cols: list[np.ndarray]
    mutable: np.ndarray  # (p,) bool: columns of items whose constraint is not `fixed`
    up: np.ndarray  # (p,) bool
    down: np.ndarray  # (p,) bool
    graded: np.ndarray  # (p,) bool: ordinal/numeric columns (a single column per item)

    @classmethod
    def of(cls, schema: FeatureSchema) -> Layout:
        cols, c = [], 0
        flags: dict[str, list[bool]] = {"mutable": [], "up": [], "down": [], "graded": []}
        for it in schema.items:
            width = it.n_options if it.type == "categorical" else 1
            cols.append(np.arange(c, c + width))
            c += width
            for _ in range(width):
                flags["mutable"].append(it.constraint != "fixed")
                flags["up"].append(it.constraint == "up")
                flags["down"].append(it.constraint == "down")
                flags["graded"].append(it.is_graded)
        arr = {k: np.array(v, dtype=bool) for k, v in flags.items()}
        return cls(schema, cols, arr["mutable"], arr["up"], arr["down"], arr["graded"])

    @property
    def p(self) -> int:
        return len(self.mutable)

    def columns_of(self, keys: list[str]) -> np.ndarray:
        idx = [self.item_cols[self.schema.index(k)] for k in keys]
        return np.concatenate(idx) if idx else np.array([], dtype=int)


def project(layout: Layout, z_factual: np.ndarray, z_cand: np.ndarray) -> np.ndarray:
    """Reset immutable columns and clamp `up`/`down` columns; z_factual broadcasts to z_cand."""
    out = np.array(z_cand, dtype=float, copy=True)
    zf = np.broadcast_to(z_factual, out.shape)
    fixed = ~layout.mutable
    out[..., fixed] = zf[..., fixed]
    out[..., layout.up] = np.maximum(out[..., layout.up], zf[..., layout.up])
    out[..., layout.down] = np.minimum(out[..., layout.down], zf[..., layout.down])
    return out


def snap(layout: Layout, z_factual: np.ndarray, z_cand: np.ndarray) -> np.ndarray:
    """Project onto the constraints and round to valid codes, back on the normalised scale.

    Works on (..., p) arrays; rows holding NaN stay NaN.
    """
    zc = project(layout, z_factual, z_cand)
    shape = zc.shape
    flat = zc.reshape(-1, shape[-1])
    ok = ~np.isnan(flat).any(axis=1)
    out = np.full_like(flat, np.nan)
    if ok.any():
        out[ok] = normalise(layout.schema, denormalise(layout.schema, flat[ok]))
    return out.reshape(shape)


#: flattened candidate rows snapped and judged at a time: the intermediate arrays of the
#: searches (decoder layers, the model's hidden units) then stay in the CPU caches, which
#: makes a shell several times faster than one pass over all of it. Rows are independent;
#: the one thing the blocks can change is the last bit of a float32 matrix product (the
#: VAE decoders), whose kernel may round a row differently with another number of rows.
#: On COMPAS (sex) every method's counterfactuals came out identical to one pass.
CANDIDATE_BLOCK = 8192


def judged_candidates(
    method: RecourseMethod, zf: np.ndarray, raw: Callable[[slice], np.ndarray], samples: int
) -> tuple[np.ndarray, np.ndarray]:
    """Snapped candidates (n, samples, p) and the model's verdicts (n, samples) for n
    factuals zf, `samples` each: `raw(rows)` gives the raw candidates of the flattened rows
    `rows` (row r belongs to factual r // samples), computed block by block."""
    n, p = zf.shape
    total = n * samples
    cand = np.empty((total, p))
    ok = np.empty(total, dtype=bool)
    owner = np.repeat(np.arange(n), samples)
    for c0 in range(0, total, CANDIDATE_BLOCK):
        rows = slice(c0, min(c0 + CANDIDATE_BLOCK, total))
        cand[rows] = snap(method.layout, zf[owner[rows]], raw(rows))
        ok[rows] = method.approves_z(cand[rows])
    return cand.reshape(n, samples, p), ok.reshape(n, samples)


def _check_factuals(schema: FeatureSchema, factuals: Any) -> np.ndarray:
    try:
        x = np.asarray(factuals, dtype=float)
    except (TypeError, ValueError):
        raise MethodError("factuals must be a numeric (n, d) array of item codes") from None
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] != schema.d:
        raise MethodError(f"factuals must have {schema.d} item columns, got shape {x.shape}")
    for j, it in enumerate(schema.items):
        bad = np.flatnonzero(~it.valid(x[:, j]))
        if bad.size:
            raise MethodError(
                f"factual row {bad[0]}, item {it.key!r}: {x[bad[0], j]!r} is not a valid code"
            )
    return x


@dataclass
class RecourseMethod(ABC):
    """Base class: subclasses implement `_fit` and `_search` on the normalised scale, and
    declare what they need of a study in `capabilities`."""

    capabilities: ClassVar[Capabilities] = Capabilities()

    seed: int = 0
    progress: bool = False
    name: str = field(default="method", init=False)

    # set by fit
    schema: FeatureSchema = field(init=False, repr=False)
    model: DecisionModel = field(init=False, repr=False)
    layout: Layout = field(init=False, repr=False)
    fit_seconds: float = field(default=0.0, init=False)

    @classmethod
    def study_params(cls) -> dict[str, Field[Any]]:
        """The constructor parameters a study may set, by name: every field of the
        constructor but `progress` and those a study setting fills (`capabilities.settings`)."""
        skip = {"progress", *cls.capabilities.settings}
        return {f.name: f for f in fields(cls) if f.init and f.name not in skip}

    def fit(self, data: Any, model: DecisionModel) -> RecourseMethod:
        """Fit on a `recourse_engine.datasets.Dataset` and a decision model (not relative to
        a factual: the income rule has no fixed decision boundary to cross)."""
        if getattr(model, "relative_to_factual", False):
            raise MethodError(f"{self.name} needs a model that does not depend on the factual")
        self.schema = data.schema
        self.model = model
        self.layout = Layout.of(data.schema)
        t0 = time.perf_counter()
        self._fit(data)
        self.fit_seconds = time.perf_counter() - t0
        return self

    def _fit(self, data: Any) -> None:  # methods without training keep the default
        return None

    @abstractmethod
    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """(n, p) proposals on the normalised scale for factuals z; NaN rows: none found."""

    def approves_z(self, z: np.ndarray) -> np.ndarray:
        """The decision model on normalised points holding valid codes (snapped)."""
        return np.asarray(self.model.approves(denormalise(self.schema, z)), dtype=bool)

    def get_counterfactuals(self, factuals: Any) -> CounterfactualResult:
        if not hasattr(self, "model"):
            raise MethodError(f"{self.name}: call fit() before get_counterfactuals()")
        x = _check_factuals(self.schema, factuals)
        t0 = time.perf_counter()
        z = normalise(self.schema, x)
        rng = np.random.default_rng(self.seed)
        zc = self._search(z, rng) if len(x) else np.empty_like(z)
        result = self._finalise(x, z, zc)
        result.seconds = time.perf_counter() - t0
        return result

    def _finalise(self, x: np.ndarray, z: np.ndarray, zc: np.ndarray) -> CounterfactualResult:
        n = len(x)
        found = ~np.isnan(zc).any(axis=1) if n else np.zeros(0, dtype=bool)
        cf = np.full_like(x, np.nan)
        status = np.full(n, NONE_FOUND, dtype=object)
        valid = np.zeros(n, dtype=bool)
        if found.any():
            zp = project(self.layout, z[found], zc[found])
            codes = denormalise(self.schema, zp)
            xf = x[found]
            ok = np.ones(len(codes), dtype=bool)
            for j, it in enumerate(self.schema.items):
                d = codes[:, j] - xf[:, j]
                if it.constraint == "fixed":
                    codes[:, j] = xf[:, j]
                elif it.constraint == "up":
                    ok &= d >= -CHANGE_TOL
                elif it.constraint == "down":
                    ok &= d <= CHANGE_TOL
            changed = (np.abs(codes - xf) > CHANGE_TOL).any(axis=1)
            approved = np.asarray(self.model.approves(codes), dtype=bool)
            good = ok & changed & approved
            rows = np.flatnonzero(found)
            status[rows[~changed]] = UNCHANGED
            status[rows[changed & ~(ok & approved)]] = NOT_APPROVED
            status[rows[good]] = FOUND
            valid[rows[good]] = True
            cf[rows[good]] = codes[good]
        return CounterfactualResult(self.name, x, cf, valid, status)


def nearest_valid(
    z: np.ndarray, cands: np.ndarray, ok: np.ndarray, cols: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For each factual i pick the candidate closest in L2 among those with ok[i, s].

    z: (n, p); cands: (n, s, p) or (s, p) shared; ok: (n, s). Returns (n, p) picks (NaN
    where none is ok) and a found mask.
    """
    cols = np.arange(z.shape[1]) if cols is None else cols
    if cands.ndim == 2:
        diff = cands[None, :, cols] - z[:, None, cols]
    else:
        diff = cands[:, :, cols] - z[:, None, cols]
    dist = np.sqrt((diff * diff).sum(axis=-1))
    dist = np.where(ok, dist, np.inf)
    best = dist.argmin(axis=1)
    found = np.isfinite(dist[np.arange(len(z)), best])
    out = np.full(z.shape, np.nan)
    if found.any():
        rows = np.flatnonzero(found)
        picked = cands[best[rows]] if cands.ndim == 2 else cands[rows, best[rows]]
        out[rows] = picked
    return out, found
