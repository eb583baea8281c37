"""Group densities for explicit balanced recourse: P(x_f | x_c, m, y_hat = 1) per group m.

Gaussian mixtures and KDEs of the joint [x_f, x_c], conditioned in closed form on the
immutables x_c, and the two samplers of their normalised product P0 * P1 (rejection, and
exact for mixtures). The reasons for each choice are in `recourse_engine.methods.ebr.ebr`'s
docstring, which uses them; kept apart so that the method and its pool variant stay short.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ..base import MethodError

DENSITIES = ("gmm", "kde")
SAMPLERS = ("auto", "exact", "rejection")
_LOG_2PI = math.log(2 * math.pi)
#: candidate rows (samples x patterns) whose approval is asked of the model in one call
_CHUNK_ROWS = 60_000
#: drawn values (patterns x samples x columns) held at once by the batched exact sampler
_CHUNK_VALUES = 2_000_000


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
    return logsumexp(parts, axis=-1)


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
        return float(logsumexp(self.log_w + self.log_norm, axis=-1))


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
        return lw - logsumexp(lw, axis=-1)[:, None], means

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
        return log_w - logsumexp(log_w, axis=-1)[:, None], means, pr.chol

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
