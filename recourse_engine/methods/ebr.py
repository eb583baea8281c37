"""Explicit balanced recourse (EBR, Gao & Lakkaraju 2023, Algorithm 1), and its pool variant.

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

Pool variant (a design strategy `ebr`, e.g. `ebr:1`): score pool rows by the same product
density fitted on the pool (groups from the pool's `gender` column, or any other column or
fixed item named by `group_column`) and pick the closest (proximity) admissible candidate
above the beta quantile of the pool's scores. When the schema has fixed items the scores are
conditional on the factual's immutables (every admissible candidate shares them), the
quantile is taken over all pool rows scored at that pattern, and the scores are cached per
pattern; without fixed items (the car-loan schema) they are computed once at fit. Attach a
density to a pool with `attach_pool_density`; without one the strategy fits it on first use.
"""

from __future__ import annotations

import math
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..design import DesignPart
from ..encoding import normalise
from ..pool import Pool
from ..schema import FeatureSchema
from ..selection import Candidates, pick_lowest, register_strategy
from .base import Layout, MethodError, PoolCache, RecourseMethod, nearest_valid, snap

DENSITIES = ("gmm", "kde")
SAMPLERS = ("auto", "exact", "rejection")
_LOG_2PI = math.log(2 * math.pi)
#: candidate rows (samples x patterns) whose approval is asked of the model in one call
_CHUNK_ROWS = 60_000
#: drawn values (patterns x samples x columns) held at once by the batched exact sampler
_CHUNK_VALUES = 2_000_000


def _lse(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """log sum exp along an axis (-inf where every term is -inf)."""
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(m, axis=axis) + np.log(np.exp(a - m).sum(axis=axis))


def _pattern_key(xc: np.ndarray) -> bytes:
    """Bytes identifying an immutable pattern (rounded; -0.0 and 0.0 alike)."""
    return (np.round(np.asarray(xc, dtype=float), 12) + 0.0).tobytes()


def _pattern_rng(seed: int, xc: np.ndarray) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(_pattern_key(xc))])


def _t(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _chol_parts(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For (K, d, d) covariances: Cholesky factors L (cov = L L'), prec = inv(L)' (so that
    (x - m) @ prec has identity covariance) and each component's log peak
    -d/2 log 2 pi - log det L."""
    cov = 0.5 * (cov + _t(cov))
    d = cov.shape[-1]
    if d == 0:
        return cov, cov, np.zeros(cov.shape[0])
    try:
        chol = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:  # positive definite in theory; rounding may say otherwise
        scale = np.trace(cov, axis1=1, axis2=2)[:, None, None] / d
        chol = np.linalg.cholesky(cov + 1e-10 * scale * np.eye(d))
    prec = _t(np.linalg.inv(chol))
    log_norm = -0.5 * d * _LOG_2PI - np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
    return chol, prec, log_norm


def _mix_log_pdf(
    x: np.ndarray, log_w: np.ndarray, means: np.ndarray, prec: np.ndarray, log_norm: np.ndarray
) -> np.ndarray:
    """log density of Gaussian mixtures, batched over patterns.

    x (P, n, d); log_w (P, K); means (P, K, d); prec (K, d, d); log_norm (K,) -> (P, n).
    """
    parts = np.empty((*x.shape[:2], len(log_norm)))
    for k in range(len(log_norm)):
        y = (x - means[:, k, None, :]) @ prec[k]
        parts[..., k] = log_w[:, k, None] + log_norm[k] - 0.5 * np.einsum("pnd,pnd->pn", y, y)
    return _lse(parts)


# ---------------------------------------------------------------------------------------
# densities of x_f at one pattern x_c


@dataclass
class GaussianMix:
    """A Gaussian mixture in x_f: log weights, means, Cholesky factors of the covariances."""

    log_w: np.ndarray  # (K,) normalised
    means: np.ndarray  # (K, df)
    chol: np.ndarray  # (K, df, df) lower, cov = L L'
    prec: np.ndarray  # (K, df, df) = inv(L)'
    log_norm: np.ndarray  # (K,) each component's log peak

    def log_pdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)[None]
        lp = _mix_log_pdf(x, self.log_w[None], self.means[None], self.prec, self.log_norm)
        return lp[0]

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return _mix_sample(self.log_w[None], self.means[None], self.chol, [rng], n)[0]

    def log_bound(self) -> float:
        """log of an upper bound of the density: the sum over components of their peaks."""
        return float(_lse(self.log_w + self.log_norm))


def _mix_sample(
    log_w: np.ndarray,
    means: np.ndarray,
    chol: np.ndarray,
    rngs: list[np.random.Generator],
    n: int,
) -> np.ndarray:
    """n draws per pattern from Gaussian mixtures sharing their covariances.

    log_w (P, K); means (P, K, d); chol (K, d, d); one generator per pattern -> (P, n, d).
    Each pattern's draws use only its own generator: a uniform per draw picks the
    component, then d standard normals."""
    p, k, d = means.shape
    u = np.empty((p, n))
    z = np.empty((p, n, d))
    for i, rng in enumerate(rngs):
        u[i] = rng.random(n)
        z[i] = rng.standard_normal((n, d))
    w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
    cum = np.cumsum(w, axis=1)
    comp = (u[..., None] * cum[:, None, -1:] >= cum[:, None, :]).sum(axis=-1)
    comp = np.minimum(comp, k - 1)
    out = np.empty_like(z)
    pat = np.broadcast_to(np.arange(p)[:, None], (p, n))
    for j in range(k):
        sel = comp == j
        out[sel] = means[pat[sel], j] + z[sel] @ chol[j].T
    return out


@dataclass
class WeightedKDE:
    """A Gaussian KDE in x_f (scikit-learn), rows weighted by their x_c kernel."""

    kde: Any
    dim: int

    def log_pdf(self, x: np.ndarray) -> np.ndarray:
        return self.kde.score_samples(np.asarray(x, dtype=float))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.kde.sample(n, random_state=int(rng.integers(2**31 - 1)))

    def log_bound(self) -> float:
        """The kernel's peak (weights sum to one)."""
        return -0.5 * self.dim * _LOG_2PI - self.dim * math.log(self.kde.bandwidth_)


# ---------------------------------------------------------------------------------------
# conditional densities P(x_f | x_c) of one group


@dataclass
class ConditionalGMM:
    """P(x_f | x_c) of a full-covariance Gaussian mixture fitted on the joint [x_f, x_c]."""

    log_pi: np.ndarray  # (K,)
    mu_f: np.ndarray  # (K, df)
    mu_c: np.ndarray  # (K, dc)
    gain: np.ndarray  # (K, df, dc) = S_fc S_cc^-1
    cov_f: np.ndarray  # (K, df, df) conditional covariance S_ff - S_fc S_cc^-1 S_cf
    chol_f: np.ndarray
    prec_f: np.ndarray
    log_norm_f: np.ndarray
    prec_c: np.ndarray  # (K, dc, dc) of the marginal covariance S_cc
    log_norm_c: np.ndarray

    @classmethod
    def from_joint(
        cls, weights: np.ndarray, means: np.ndarray, covariances: np.ndarray, df: int
    ) -> ConditionalGMM:
        """Condition a joint mixture whose first df coordinates are x_f, the rest x_c."""
        weights, means, cov = (np.asarray(a, dtype=float) for a in (weights, means, covariances))
        s_ff = cov[:, :df, :df]
        s_fc = cov[:, :df, df:]
        s_cc = cov[:, df:, df:]
        if s_cc.shape[-1]:
            gain = _t(np.linalg.solve(s_cc, _t(s_fc)))  # S_cc symmetric
            cond = s_ff - gain @ _t(s_fc)
        else:
            gain = np.zeros((len(weights), df, 0))
            cond = s_ff
        cond = 0.5 * (cond + _t(cond))
        chol_f, prec_f, log_norm_f = _chol_parts(cond)
        _, prec_c, log_norm_c = _chol_parts(s_cc)
        return cls(
            np.log(weights),
            means[:, :df],
            means[:, df:],
            gain,
            cond,
            chol_f,
            prec_f,
            log_norm_f,
            prec_c,
            log_norm_c,
        )

    @classmethod
    def from_sklearn(cls, est: Any, df: int) -> ConditionalGMM:
        if est.covariance_type != "full":
            raise MethodError("ebr: conditioning needs a full-covariance Gaussian mixture")
        return cls.from_joint(est.weights_, est.means_, est.covariances_, df)

    @property
    def dc(self) -> int:
        return self.mu_c.shape[1]

    def params(self, xcs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Normalised log weights (P, K) and means (P, K, df) at the patterns xcs (P, dc)."""
        p, k = len(xcs), len(self.log_pi)
        if self.dc == 0:
            return np.broadcast_to(self.log_pi, (p, k)), np.broadcast_to(
                self.mu_f, (p, k, self.mu_f.shape[1])
            )
        lw = np.empty((p, k))
        for j in range(k):
            y = (xcs - self.mu_c[j]) @ self.prec_c[j]
            lw[:, j] = self.log_pi[j] + self.log_norm_c[j] - 0.5 * np.einsum("pc,pc->p", y, y)
        means = self.mu_f[None] + np.einsum("kfc,pkc->pkf", self.gain, xcs[:, None] - self.mu_c)
        return lw - _lse(lw)[:, None], means

    def at(self, xc: np.ndarray) -> GaussianMix:
        lw, means = self.params(np.asarray(xc, dtype=float).reshape(1, -1))
        return GaussianMix(lw[0], means[0], self.chol_f, self.prec_f, self.log_norm_f)


@dataclass
class ConditionalKDE:
    """P(x_f | x_c) of a Gaussian KDE of the joint [x_f, x_c] with bandwidth h."""

    xf: np.ndarray  # (N, df)
    xc: np.ndarray  # (N, dc)
    bandwidth: float
    _flat: WeightedKDE | None = field(default=None, repr=False)

    @property
    def dc(self) -> int:
        return self.xc.shape[1]

    def at(self, xc: np.ndarray) -> WeightedKDE:
        from sklearn.neighbors import KernelDensity

        df = self.xf.shape[1]
        if self.dc == 0:
            if self._flat is None:
                self._flat = WeightedKDE(KernelDensity(bandwidth=self.bandwidth).fit(self.xf), df)
            return self._flat
        d2 = ((self.xc - np.asarray(xc, dtype=float).ravel()[None, :]) ** 2).sum(axis=1)
        logw = -0.5 * d2 / self.bandwidth**2
        w = np.exp(logw - logw.max())
        keep = w > 0  # rows whose weight underflows contribute nothing
        kde = KernelDensity(bandwidth=self.bandwidth).fit(self.xf[keep], sample_weight=w[keep])
        return WeightedKDE(kde, df)


# ---------------------------------------------------------------------------------------
# the two groups together


@dataclass
class PatternDensity:
    """P0(. | x_c) and P1(. | x_c) at one pattern, with rejection sampling from their
    product."""

    parts: tuple[Any, Any]

    def log_density(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.parts[0].log_pdf(x), self.parts[1].log_pdf(x)

    def log_product(self, x: np.ndarray) -> np.ndarray:
        a, b = self.log_density(x)
        return a + b

    def sample_rejection(
        self, n: int, rng: np.random.Generator, max_rounds: int = 200
    ) -> tuple[np.ndarray, np.ndarray]:
        """Up to n iid draws from the normalised P0 * P1 — propose from P0, accept with
        P1 / M, M the bound of P1 — and their log product densities; fewer when acceptance
        is too rare for max_rounds rounds of max(4 n, 1000) proposals."""
        p0, p1 = self.parts
        log_m = p1.log_bound()
        got: list[np.ndarray] = []
        logp1: list[np.ndarray] = []
        total = 0
        batch = max(4 * n, 1000)
        for _ in range(max_rounds):
            prop = p0.sample(batch, rng)
            lp1 = p1.log_pdf(prop)
            accept = np.log(rng.random(batch)) < lp1 - log_m
            got.append(prop[accept])
            logp1.append(lp1[accept])
            total += int(accept.sum())
            if total >= n:
                break
        out = np.vstack(got)[:n]
        return out, p0.log_pdf(out) + np.concatenate(logp1)[:n]


@dataclass
class _ProductPairs:
    """What the product of the two conditional mixtures needs that does not depend on x_c
    (the conditional covariances do not): per component pair (a, b), with A, B their
    covariances, C = (A^-1 + B^-1)^-1, the maps of the means into the pair's mean
    c = C A^-1 a + C B^-1 b, the Cholesky factor of C, and A + B for N(a; b, A + B)."""

    a: np.ndarray  # (Q,) component of group 0
    b: np.ndarray  # (Q,) component of group 1
    map_a: np.ndarray  # (Q, d, d) C A^-1
    map_b: np.ndarray  # (Q, d, d) C B^-1
    chol: np.ndarray  # (Q, d, d) of C
    prec_s: np.ndarray  # (Q, d, d) inv(chol(A + B))'
    log_norm_s: np.ndarray  # (Q,)

    @classmethod
    def of(cls, g0: ConditionalGMM, g1: ConditionalGMM) -> _ProductPairs:
        k0, k1 = len(g0.log_pi), len(g1.log_pi)
        a = np.repeat(np.arange(k0), k1)
        b = np.tile(np.arange(k1), k0)
        a_inv = g0.prec_f @ _t(g0.prec_f)  # prec = inv(L)': prec prec' = inv(A)
        b_inv = g1.prec_f @ _t(g1.prec_f)
        cov = np.linalg.inv(a_inv[a] + b_inv[b])
        cov = 0.5 * (cov + _t(cov))
        chol, _, _ = _chol_parts(cov)
        _, prec_s, log_norm_s = _chol_parts(g0.cov_f[a] + g1.cov_f[b])
        return cls(a, b, cov @ a_inv[a], cov @ b_inv[b], chol, prec_s, log_norm_s)


@dataclass
class GroupDensity:
    """P(x_f | x_c, m) for the two groups m = 0, 1; x_c may be empty (dc = 0)."""

    models: tuple[Any, Any]  # ConditionalGMM or ConditionalKDE
    kind: str
    _pairs: _ProductPairs | None = field(default=None, repr=False)

    @property
    def dc(self) -> int:
        return self.models[0].dc

    def _xc(self, xc: np.ndarray | None) -> np.ndarray:
        xc = np.zeros(0) if xc is None else np.asarray(xc, dtype=float).ravel()
        if len(xc) != self.dc:
            raise MethodError(f"ebr: the density conditions on {self.dc} columns, got {len(xc)}")
        return xc

    def at(self, xc: np.ndarray | None = None) -> PatternDensity:
        xc = self._xc(xc)
        return PatternDensity((self.models[0].at(xc), self.models[1].at(xc)))

    def log_product(self, xf: np.ndarray, xc: np.ndarray | None = None) -> np.ndarray:
        return self.at(xc).log_product(xf)

    def sample_product(
        self,
        n: int,
        rng: np.random.Generator,
        xc: np.ndarray | None = None,
        max_rounds: int = 200,
        sampler: str = "rejection",
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draws from the normalised P0(. | x_c) P1(. | x_c) and their log product
        densities: `rejection` (any density; fewer than n when acceptance is rare) or
        `exact` (Gaussian mixtures; always n)."""
        xc = self._xc(xc)
        if sampler == "rejection":
            return self.at(xc).sample_rejection(n, rng, max_rounds)
        if sampler == "exact":
            x, logp = self.sample_exact(xc[None, :], n, [rng])
            return x[0], logp[0]
        raise MethodError(f"ebr: unknown sampler {sampler!r}; expected exact or rejection")

    def product_params(self, xcs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The normalised product P0(. | x_c) P1(. | x_c) of two conditional Gaussian
        mixtures at the patterns xcs (P, dc), itself a Gaussian mixture over component
        pairs: N(x; a, A) N(x; b, B) = N(a; b, A + B) N(x; c, C). Returns its log weights
        (P, Q), means (P, Q, d) and the pairs' Cholesky factors (Q, d, d)."""
        g0, g1 = self.models
        if not (isinstance(g0, ConditionalGMM) and isinstance(g1, ConditionalGMM)):
            raise MethodError("ebr: the exact sampler needs Gaussian mixtures (density='gmm')")
        if self._pairs is None:
            self._pairs = _ProductPairs.of(g0, g1)
        pr = self._pairs
        lw0, m0 = g0.params(xcs)
        lw1, m1 = g1.params(xcs)
        ma, mb = m0[:, pr.a], m1[:, pr.b]  # (P, Q, d)
        means = np.einsum("qij,pqj->pqi", pr.map_a, ma) + np.einsum("qij,pqj->pqi", pr.map_b, mb)
        y = np.einsum("pqj,qji->pqi", ma - mb, pr.prec_s)
        log_z = pr.log_norm_s[None] - 0.5 * np.einsum("pqi,pqi->pq", y, y)
        log_w = lw0[:, pr.a] + lw1[:, pr.b] + log_z
        return log_w - _lse(log_w)[:, None], means, pr.chol

    def sample_exact(
        self, xcs: np.ndarray, n: int, rngs: list[np.random.Generator]
    ) -> tuple[np.ndarray, np.ndarray]:
        """n exact draws per pattern from the normalised product (batched over patterns,
        one generator each) and their log product densities: (P, n, d), (P, n)."""
        xcs = np.asarray(xcs, dtype=float).reshape(len(rngs), self.dc)
        log_w, means, chol = self.product_params(xcs)
        x = _mix_sample(log_w, means, chol, rngs, n)
        g0, g1 = self.models
        lw0, m0 = g0.params(xcs)
        lw1, m1 = g1.params(xcs)
        logp = _mix_log_pdf(x, lw0, m0, g0.prec_f, g0.log_norm_f) + _mix_log_pdf(
            x, lw1, m1, g1.prec_f, g1.log_norm_f
        )
        return x, logp


def fit_group_density(
    xf: np.ndarray,
    group: np.ndarray,
    xc: np.ndarray | None = None,
    *,
    kind: str = "gmm",
    components: int = 3,
    bandwidth: float | str = "scott",
    seed: int = 0,
) -> GroupDensity:
    """Fit P(x_f | x_c, m) for m = 0, 1 on the rows of each group (x_c None: no conditioning)."""
    from sklearn.mixture import GaussianMixture
    from sklearn.neighbors import KernelDensity

    if kind not in DENSITIES:
        raise MethodError(f"unknown density {kind!r}; expected one of {', '.join(DENSITIES)}")
    if isinstance(components, bool) or not (
        isinstance(components, int | np.integer) and components >= 1
    ):
        raise MethodError(f"ebr: components must be an integer >= 1, got {components!r}")
    xf = np.asarray(xf, dtype=float)
    xc = np.zeros((len(xf), 0)) if xc is None else np.asarray(xc, dtype=float)
    if xc.ndim != 2 or len(xc) != len(xf):
        raise MethodError("ebr: x_c needs one row per x_f row")
    df = xf.shape[1]
    if df == 0:
        raise MethodError("ebr: the schema has no item that may change")
    group = np.asarray(group)
    models = []
    for m in (0, 1):
        sel = group == m
        if sel.sum() < 2:
            raise MethodError(f"group {m} has {int(sel.sum())} approved rows; need at least 2")
        joint = np.hstack([xf[sel], xc[sel]])
        if kind == "gmm":
            k = max(1, min(int(components), len(joint) // 2))
            est = GaussianMixture(k, reg_covar=1e-4, random_state=seed).fit(joint)
            models.append(ConditionalGMM.from_sklearn(est, df))
        else:
            try:
                h = float(KernelDensity(bandwidth=bandwidth).fit(joint).bandwidth_)
            except (ValueError, TypeError) as exc:
                raise MethodError(f"ebr: bad KDE bandwidth {bandwidth!r} ({exc})") from None
            models.append(ConditionalKDE(xf[sel], xc[sel], h))
    return GroupDensity((models[0], models[1]), kind)


# ---------------------------------------------------------------------------------------
# the recourse method


@dataclass
class EBR(RecourseMethod):
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
                rngs = [_pattern_rng(self.seed, xc) for xc in part]
                x, logp = self.group_density_.sample_exact(part, self.n_samples, rngs)
                for i in range(len(part)):
                    out.append(x[i][logp[i] >= self._threshold(logp[i])])
            return out
        for xc in xcs:
            x, logp = self.group_density_.at(xc).sample_rejection(
                self.n_samples, _pattern_rng(self.seed, xc), self.max_rounds
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


# ---------------------------------------------------------------------------------------
# pool variant: a design strategy


@dataclass
class PoolDensity:
    """Product-density scores of the pool rows and the beta threshold over them.

    Without conditioning (`density` None) `scores` / `threshold` are fixed at fit time. With
    fixed items, `scores_at(x_c)` scores every pool row's x_f at the factual's immutables
    x_c and takes the beta quantile over those scores; results are cached per pattern.
    """

    scores: np.ndarray | None  # (n_pool,) log P0(x_f) + log P1(x_f), unconditional fits
    threshold: float | None
    beta_quantile: float = 0.5
    n_rows: int = 0
    density: GroupDensity | None = None
    zf: np.ndarray | None = None  # (n_pool, df) the pool rows' mutable columns
    cond_cols: np.ndarray = field(default_factory=lambda: np.array([], dtype=int))
    _cache: OrderedDict = field(default_factory=OrderedDict, repr=False, compare=False)

    #: patterns whose pool scores are kept
    CACHE_SIZE = 256

    def __post_init__(self) -> None:
        if self.n_rows == 0 and self.scores is not None:
            self.n_rows = len(self.scores)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_cache"] = OrderedDict()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # fits stored before conditioning existed hold only scores and threshold
        self.__dict__.update(state)
        self.__dict__.setdefault("beta_quantile", DEFAULT_POOL_BETA_QUANTILE)
        self.__dict__.setdefault("density", None)
        self.__dict__.setdefault("zf", None)
        self.__dict__.setdefault("cond_cols", np.array([], dtype=int))
        self.__dict__.setdefault("_cache", OrderedDict())
        if not self.__dict__.get("n_rows") and self.scores is not None:
            self.n_rows = len(self.scores)

    @property
    def conditional(self) -> bool:
        return self.density is not None

    def scores_at(self, xc: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """(scores of every pool row, threshold) at the immutable pattern x_c."""
        if self.density is None:
            assert self.scores is not None and self.threshold is not None
            return self.scores, self.threshold
        xc = np.zeros(0) if xc is None else np.asarray(xc, dtype=float).ravel()
        key = _pattern_key(xc)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        assert self.zf is not None
        scores = self.density.log_product(self.zf, xc)
        value = (scores, float(np.quantile(scores, self.beta_quantile)))
        self._cache[key] = value
        while len(self._cache) > self.CACHE_SIZE:
            self._cache.popitem(last=False)
        return value

    def scores_for(self, schema: FeatureSchema, x: np.ndarray) -> tuple[np.ndarray, float]:
        """(scores, threshold) for a factual given as item codes."""
        if self.density is None:
            return self.scores_at()
        z = normalise(schema, np.atleast_2d(np.asarray(x, dtype=float)))[0]
        return self.scores_at(z[self.cond_cols])


_POOL_DENSITIES: PoolCache[PoolDensity] = PoolCache()
DEFAULT_GROUP_COLUMN = "gender"
DEFAULT_POOL_BETA_QUANTILE = 0.5


def _pool_groups(
    schema: FeatureSchema, pool: Pool, group_column: str
) -> tuple[np.ndarray, str | None]:
    """0/1/-1 per pool row from the group column (extra column or schema item): its two
    most frequent values, the first in sorted order being 0. Also the schema item's key
    when the group is an item (so that it is not conditioned on)."""
    item = None
    if group_column in pool.extra.columns:
        labels = pool.extra[group_column].astype(str)
    elif group_column in schema.keys:
        item = group_column
        import pandas as pd

        labels = pd.Series(pool.codes[:, schema.index(group_column)]).astype(str)
    else:
        raise MethodError(f"pool has no group column {group_column!r} for the ebr strategy")
    top = labels.value_counts().index[:2].tolist()
    if len(top) != 2:
        raise MethodError(f"ebr: group column {group_column!r} holds a single value")
    a, b = sorted(top)
    return np.where(labels == a, 0, np.where(labels == b, 1, -1)), item


def fit_pool_density(
    schema: FeatureSchema,
    pool: Pool,
    group: np.ndarray | None = None,
    *,
    group_column: str = DEFAULT_GROUP_COLUMN,
    approved: np.ndarray | None = None,
    beta_quantile: float = DEFAULT_POOL_BETA_QUANTILE,
    kind: str = "gmm",
    components: int = 3,
    seed: int = 0,
    condition: bool = True,
) -> PoolDensity:
    """Fit the two group densities on the pool (mutable items, conditioned on the fixed
    items other than the group's) and score the rows.

    `group`: 0/1 per row (-1: in neither group, scored but not fitted on), or taken from
    the pool's `group_column`: its two most frequent values, the first in sorted order being
    0. `approved` restricts the fit to rows with y_hat = 1.
    """
    group_item = None
    if group is None:
        group, group_item = _pool_groups(schema, pool, group_column)
    group = np.asarray(group)
    if group.shape != (len(pool),):
        raise MethodError(f"ebr: need one group value per pool row ({len(pool)})")
    if not 0.0 <= beta_quantile < 1.0:
        raise MethodError(f"beta_quantile must be in [0, 1), got {beta_quantile}")
    lay = Layout.of(schema)
    z = normalise(schema, pool.codes)
    zf = z[:, lay.mutable]
    fixed = np.flatnonzero(~lay.mutable)
    skip = lay.columns_of([group_item]) if group_item is not None else []
    cond_cols = np.setdiff1d(fixed, skip).astype(int) if condition else np.array([], dtype=int)
    fit_rows = group >= 0
    if approved is not None:
        fit_rows &= np.asarray(approved, dtype=bool)
    dens = fit_group_density(
        zf[fit_rows],
        group[fit_rows],
        z[fit_rows][:, cond_cols],
        kind=kind,
        components=components,
        seed=seed,
    )
    if len(cond_cols) == 0:
        scores = dens.log_product(zf)
        return PoolDensity(scores, float(np.quantile(scores, beta_quantile)), beta_quantile)
    return PoolDensity(
        None, None, beta_quantile, len(pool), density=dens, zf=zf, cond_cols=cond_cols
    )


def attach_pool_density(pool: Pool, density: PoolDensity) -> None:
    """Use `density` whenever the `ebr` strategy selects from `pool`."""
    if density.n_rows != len(pool):
        raise MethodError("pool density has a different number of rows than the pool")
    _POOL_DENSITIES.put(pool, density)


def pool_density(schema: FeatureSchema, pool: Pool) -> PoolDensity:
    cached = _POOL_DENSITIES.get(pool)
    if cached is not None:
        return cached
    density = fit_pool_density(schema, pool)
    attach_pool_density(pool, density)
    return density


def ebr_strategy(
    cand: Candidates,
    part: DesignPart,
    rng: np.random.Generator,
    available: np.ndarray,
    picked: list[int],
) -> list[int]:
    """Closest (proximity, random ties) admissible candidates whose product density passes
    the beta threshold (at the factual's immutables when the schema has fixed items)."""
    dens = pool_density(cand.schema, cand.pool)
    scores, threshold = dens.scores_for(cand.schema, cand.x)
    above = scores[cand.rows] >= threshold
    return pick_lowest(cand, cand.proximity, available & above, part.k, rng)


register_strategy("ebr", ebr_strategy)
