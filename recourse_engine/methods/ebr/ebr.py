"""Explicit balanced recourse (EBR, Gao & Lakkaraju 2023, Algorithm 1).

Fit: one density model per group m of the rows the decision model approves, of the joint
[x_f, x_c] on the normalised scale: x_f the mutable columns, x_c the columns of the `fixed`
items other than the sensitive one (age, tier, race when the group is sex, ...). It is then
conditioned on x_c, giving Algorithm 1's P(x_f | x_c, m, y_hat = 1):

* `density="gmm"` (default): a full-covariance scikit-learn Gaussian mixture on the joint.
  Conditioning it is exact and closed-form: component k conditioned on x_c is Gaussian with
  mean mu_f + S_fc S_cc^-1 (x_c - mu_c) and covariance S_ff - S_fc S_cc^-1 S_cf (the same
  for every x_c), and the mixture weights become proportional to pi_k N(x_c; mu_c, S_cc).
  The paper names a mixture density network (MDN) as one choice; we use the mixture's own
  conditional instead because it is exact for the fitted joint and closed-form: no second
  network per group to train, tune and seed, no gradient-descent approximation of the
  conditional, the same covariances at every x_c (so the quantities the samplers need are
  computed once), and a few matrix products per immutable pattern.
* `density="kde"`: a Gaussian KDE of the joint with one bandwidth h (Scott's rule on the
  joint's dimension; `fit_group_density(bandwidth=...)` takes another); its exact
  conditional is a mixture of kernels at the rows' x_f with weights proportional to
  K_h(x_c - x_c,i).

With no fixed item besides the sensitive one (the synthetic data, the car-loan study) x_c is
empty and both reduce to the unconditioned P(x_f | m, y_hat = 1) fitted on the mutable
columns, as before. `condition=False` ignores the other immutables (the previous behaviour,
kept for comparisons).

Sampling, per distinct value x_c of the factuals' immutables, from the normalised product
P0(. | x_c) * P1(. | x_c). Each pattern draws with its own generator, seeded by the method's
seed and the pattern, so a factual's counterfactual does not depend on its batch.

* `sampler="rejection"` (Algorithm 1; the only one for KDE): propose from P0(. | x_c),
  accept with probability P1(x | x_c) / M where M bounds P1(. | x_c) from above (the sum
  over components of weight x peak), so accepted points follow the product exactly. At most
  `max_rounds` rounds of max(4 n_samples, 1000) proposals per pattern: where acceptance is
  rarer, a pattern gets fewer than n_samples samples (none: its factuals are invalid).
* `sampler="exact"` (the default for `gmm`, via `sampler="auto"`): the product of two
  Gaussian mixtures is a Gaussian mixture over component pairs, N(x; a, A) N(x; b, B) =
  N(a; b, A + B) N(x; c, C) with C = (A^-1 + B^-1)^-1 and c = C (A^-1 a + B^-1 b), so the
  draws come from it directly: the distribution rejection sampling targets, without the
  rejected proposals, always n_samples per pattern, batched over patterns. Rejection
  sampling is too slow on real data: its acceptance rate P1/M measured 0.36 % (median over
  patterns) on German and 0.27 % on GMC (down to 0.005 % at ages where the two age groups
  hardly overlap), i.e. about 550,000 proposals per pattern for 2,000 samples, and a run's
  rejected rows hold 41 (German) to about 1,250 (COMPAS, continuous age) distinct patterns.
  Tests check both samplers against the closed-form moments.

Counterfactual: among that pattern's samples whose product density passes beta (absolute
`beta`, or the `beta_quantile` of the pattern's sample product densities), rounded to valid
codes, that the model approves with the factual's immutables and that move no up/down item
the wrong way (such samples are left out, not clamped), the closest in L2.

The density models and samplers live in `densities`, the pool variant (the design strategy
`ebr`) in `ebr_pool`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ...encoding import normalise
from ..base import MethodError, RecourseMethod, nearest_valid, pattern_rng, snap
from ..capabilities import Capabilities
from .densities import _CHUNK_ROWS, _CHUNK_VALUES, DENSITIES, SAMPLERS, fit_group_density


@dataclass
class EBR(RecourseMethod):
    capabilities: ClassVar[Capabilities] = Capabilities(group_column=True)

    density: str = "gmm"
    components: int = 3
    beta: float | None = None
    beta_quantile: float = 0.5
    n_samples: int = 2000
    max_rounds: int = 200
    sampler: str = "auto"
    condition: bool = True
    name: str = field(default="ebr", init=False)

    @property
    def sampler_(self) -> str:
        """The sampler used: `auto` is `exact` for Gaussian mixtures, `rejection` for KDE."""
        if self.sampler == "auto":
            return "exact" if self.density == "gmm" else "rejection"
        return self.sampler

    def _check(self) -> None:
        if self.density not in DENSITIES:
            raise MethodError(
                f"unknown density {self.density!r}; expected one of {', '.join(DENSITIES)}"
            )
        if self.sampler not in SAMPLERS:
            raise MethodError(
                f"ebr: unknown sampler {self.sampler!r}; expected one of {', '.join(SAMPLERS)}"
            )
        if self.sampler_ == "exact" and self.density != "gmm":
            raise MethodError("ebr: the exact sampler needs density='gmm'; use 'rejection'")
        if self.beta is None and not 0.0 <= self.beta_quantile < 1.0:
            raise MethodError(f"beta_quantile must be in [0, 1), got {self.beta_quantile}")
        if self.beta is not None and not (math.isfinite(self.beta) and self.beta >= 0):
            raise MethodError(f"beta must be a finite density >= 0, got {self.beta}")
        for key in ("n_samples", "max_rounds"):
            v = getattr(self, key)
            if isinstance(v, bool) or not (isinstance(v, int | np.integer) and v >= 1):
                raise MethodError(f"ebr: {key} must be an integer >= 1, got {v!r}")

    def _fit(self, data: Any) -> None:
        self._check()
        lay = self.layout
        z = normalise(self.schema, data.codes)
        approved = np.asarray(self.model.approves(data.codes), dtype=bool)
        self.cols_ = np.flatnonzero(lay.mutable)
        sensitive = getattr(data, "sensitive", None)
        sens = lay.columns_of([sensitive]) if sensitive in self.schema.keys else []
        fixed = np.flatnonzero(~lay.mutable)
        self.cond_cols_ = (
            np.setdiff1d(fixed, sens).astype(int) if self.condition else np.array([], dtype=int)
        )
        self.group_density_ = fit_group_density(
            z[approved][:, self.cols_],
            np.asarray(data.group)[approved],
            z[approved][:, self.cond_cols_],
            kind=self.density,
            components=self.components,
            seed=self.seed,
        )
        self.samples_: np.ndarray | None = None
        if len(self.cond_cols_) == 0:  # one pattern for every factual: draw it now
            self.samples_ = self.samples_for(np.zeros(0))
            if len(self.samples_) == 0:
                raise MethodError(
                    "ebr: rejection sampling accepted no point; the groups do not overlap"
                )

    def _threshold(self, logp: np.ndarray) -> float:
        if self.beta is None:
            return float(np.quantile(logp, self.beta_quantile))
        return math.log(self.beta) if self.beta > 0 else -math.inf

    def kept_samples(self, xcs: np.ndarray) -> list[np.ndarray]:
        """Per immutable pattern x_c (rows of xcs, normalised scale): the draws from
        P0(. | x_c) P1(. | x_c) whose product density passes beta. Each pattern draws with
        its own generator (seed, pattern), so the result does not depend on the batch."""
        xcs = np.atleast_2d(np.asarray(xcs, dtype=float))
        if xcs.shape[1] != len(self.cond_cols_):
            raise MethodError(
                f"ebr: the density conditions on {len(self.cond_cols_)} columns, got {xcs.shape[1]}"
            )
        if self.samples_ is not None and len(self.cond_cols_) == 0:
            return [self.samples_] * len(xcs)
        out: list[np.ndarray] = []
        if self.sampler_ == "exact":
            d = len(self.cols_)
            step = max(1, _CHUNK_VALUES // (self.n_samples * d))
            for s in range(0, len(xcs), step):
                part = xcs[s : s + step]
                rngs = [pattern_rng(self.seed, xc) for xc in part]
                x, logp = self.group_density_.sample_exact(part, self.n_samples, rngs)
                for i in range(len(part)):
                    out.append(x[i][logp[i] >= self._threshold(logp[i])])
            return out
        for xc in xcs:
            x, logp = self.group_density_.at(xc).sample_rejection(
                self.n_samples, pattern_rng(self.seed, xc), self.max_rounds
            )
            out.append(x[logp >= self._threshold(logp)] if len(x) else x)
        return out

    def samples_for(self, xc: np.ndarray) -> np.ndarray:
        """The samples kept at one immutable pattern x_c (normalised scale)."""
        return self.kept_samples(np.asarray(xc, dtype=float)[None])[0]

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = np.full(z.shape, np.nan)
        fixed = ~self.layout.mutable
        # the model's verdict depends on every immutable, the samples only on x_c
        _, first, inverse = np.unique(
            np.round(z[:, fixed], 12), axis=0, return_index=True, return_inverse=True
        )
        inverse = inverse.ravel()
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(first) + 1))
        xc_all = np.round(z[first][:, self.cond_cols_], 12)
        xcs, xc_first, xc_of = np.unique(xc_all, axis=0, return_index=True, return_inverse=True)
        xc_of = xc_of.ravel()
        kept = self.kept_samples(z[first[xc_first]][:, self.cond_cols_])
        batch: list[tuple[np.ndarray, np.ndarray]] = []
        size = 0
        for k in range(len(first)):
            samples = kept[xc_of[k]]
            if len(samples) == 0:
                continue
            batch.append((order[bounds[k] : bounds[k + 1]], samples))
            size += len(samples)
            if size >= _CHUNK_ROWS:
                self._resolve(z, batch, out)
                batch, size = [], 0
        if batch:
            self._resolve(z, batch, out)
        return out

    def _resolve(
        self, z: np.ndarray, batch: list[tuple[np.ndarray, np.ndarray]], out: np.ndarray
    ) -> None:
        """Snap every pattern's samples onto its factuals' immutables, ask the model once
        for the whole batch, and pick each factual's closest valid sample.

        Samples are rounded to valid codes but not clamped onto up/down constraints (a
        pattern's factuals differ in those items): a factual's candidates are the samples
        that respect its own constraints."""
        lay = self.layout
        sizes = [len(s) for _, s in batch]
        base = np.repeat(np.vstack([z[rows[0]] for rows, _ in batch]), sizes, axis=0)
        cand = base.copy()
        cand[:, self.cols_] = np.vstack([s for _, s in batch])
        base[:, lay.up] = -np.inf  # snap keeps the fixed items, no clamping
        base[:, lay.down] = np.inf
        cand = snap(lay, base, cand)
        approved = self.approves_z(cand)
        start = 0
        for (rows, _), n in zip(batch, sizes, strict=True):
            c = cand[start : start + n]
            ok = np.repeat(approved[None, start : start + n], len(rows), axis=0)
            start += n
            zr = z[rows]
            for col in np.flatnonzero(lay.up):
                ok &= c[None, :, col] >= zr[:, None, col] - 1e-12
            for col in np.flatnonzero(lay.down):
                ok &= c[None, :, col] <= zr[:, None, col] + 1e-12
            picked, found = nearest_valid(zr, c, ok)
            out[rows[found]] = picked[found]
