"""Model terms and the model matrix of an additive mixed model, kept in structured form.

Coefficients are split into a small dense *fixed* block (intercept, smooth bases, random-effect
terms of secondary grouping factors) and a *random* block for the terms of one grouping factor
(the one with most levels). The random block's columns are indicator x covariate, so their
cross-product is block diagonal: one r x r block per level (r = number of random terms of that
factor). That is what makes the REML fit O(n) instead of O(p^3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.gamm.basis import SmoothBasis, make_basis


@dataclass(frozen=True)
class Smooth:
    """``s(variable, bs=basis, k=k)``: a penalized spline of one numeric covariate; with ``by``
    (a factor) one centred smooth per level, each with its own smoothing parameter."""

    variable: str
    basis: str = "tp"
    k: int = 10
    by: str | None = None

    @property
    def label(self) -> str:
        return f"s({self.variable})"


@dataclass(frozen=True)
class Parametric:
    """An unpenalized term: a numeric covariate (one column) or a factor (treatment contrasts,
    first of ``levels`` the reference), named as R's model.matrix names the columns."""

    variable: str
    levels: tuple[str, ...] | None = None  # None: numeric

    @property
    def label(self) -> str:
        return self.variable

    @property
    def names(self) -> list[str]:
        if self.levels is None:
            return [self.variable]
        return [f"{self.variable}{lv}" for lv in self.levels[1:]]

    def columns(self, data: pd.DataFrame) -> np.ndarray:
        if self.levels is None:
            return data[self.variable].to_numpy(dtype=float)[:, None]
        values = data[self.variable].astype(str).to_numpy()
        return np.column_stack([(values == lv).astype(float) for lv in self.levels[1:]])


@dataclass(frozen=True)
class RandomEffect:
    """``s(group, bs="re")`` (covariate None) or ``s(group, covariate, bs="re")``."""

    group: str
    covariate: str | None = None

    @property
    def label(self) -> str:
        return f"s({self.group})" if self.covariate is None else f"s({self.group},{self.covariate})"


@dataclass
class TermInfo:
    """Where a model term's coefficients live and how it is penalized."""

    label: str
    kind: str  # "parametric" | "smooth" | "random"
    n_coef: int
    fixed_slice: slice | None = None  # location in the fixed block
    random_index: int | None = None  # index among the blocked random terms
    penalty: np.ndarray | None = None  # fixed-block penalty (identity for dense random terms)
    rank: int = 0  # rank of the penalty
    lambda_index: int | None = None
    basis: SmoothBasis | None = None
    spec: Smooth | RandomEffect | None = None
    levels: np.ndarray | None = None  # grouping levels of a random term
    names: list[str] | None = None  # coefficient names of a parametric term
    by_level: tuple[str, str] | None = None  # (factor, level) of a factor-by smooth


@dataclass
class Design:
    """Structured model matrix: dense ``xf`` plus blocked random columns."""

    y: np.ndarray
    xf: np.ndarray  # n x p_f
    terms: list[TermInfo]
    group_codes: np.ndarray | None  # n, codes 0..q-1 of the blocked factor
    n_groups: int
    random_cov: np.ndarray  # n x r covariates of the blocked random terms
    blocked_factor: str | None
    n_lambda: int
    meta: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.y.size

    @property
    def p_fixed(self) -> int:
        return self.xf.shape[1]

    @property
    def n_random_terms(self) -> int:
        return self.random_cov.shape[1]

    @property
    def p(self) -> int:
        return self.p_fixed + self.n_groups * self.n_random_terms

    @property
    def null_space_dim(self) -> int:
        """Unpenalized coefficients in total (M_p of the REML criterion)."""
        return int(sum(t.n_coef - t.rank for t in self.terms))


def _codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    cat = pd.Categorical(values.astype(str))
    return np.asarray(cat.codes, dtype=np.int64), np.asarray(cat.categories, dtype=object)


def build_design(
    data: pd.DataFrame,
    outcome: str,
    smooths: list[Smooth],
    random_effects: list[RandomEffect],
    parametric: list[Parametric] | None = None,
    by_levels: dict[str, tuple[str, ...]] | None = None,
) -> Design:
    """Assemble the structured model matrix for ``outcome ~ 1 + parametric + smooths + random
    effects`` (mgcv's coefficient order: parametric first, then smooths in formula order)."""
    y = data[outcome].to_numpy(dtype=float)
    n = y.size
    fixed_cols: list[np.ndarray] = [np.ones((n, 1))]
    terms: list[TermInfo] = [
        TermInfo("(Intercept)", "parametric", 1, slice(0, 1), names=["(Intercept)"])
    ]
    pos = 1
    for par in parametric or []:
        cols = par.columns(data)
        m = cols.shape[1]
        terms.append(
            TermInfo(par.label, "parametric", m, slice(pos, pos + m), spec=par, names=par.names)
        )
        fixed_cols.append(cols)
        pos += m
    n_lambda = 0
    for sm in smooths:
        basis = make_basis(sm.basis, data[sm.variable].to_numpy(dtype=float), sm.k, sm.variable)
        cols = basis.design(data[sm.variable].to_numpy(dtype=float))
        m = cols.shape[1]
        rank = m - basis.null_space_dim
        if sm.by is None:
            pieces = [(sm.label, None, cols)]
        else:
            by_values = data[sm.by].astype(str).to_numpy()
            pieces = [
                (f"{sm.label}:{sm.by}{lv}", (sm.by, lv), cols * (by_values == lv)[:, None])
                for lv in (by_levels or {})[sm.by]
            ]
        for label, by_level, piece in pieces:
            terms.append(
                TermInfo(
                    label,
                    "smooth",
                    m,
                    slice(pos, pos + m),
                    None,
                    basis.penalty,
                    rank,
                    n_lambda,
                    basis,
                    sm,
                    by_level=by_level,
                )
            )
            fixed_cols.append(piece)
            pos += m
            n_lambda += 1

    blocked = None
    if random_effects:
        counts = {re.group: data[re.group].astype(str).nunique() for re in random_effects}
        blocked = max(counts, key=lambda g: counts[g])
    group_codes = None
    n_groups = 0
    random_cov: list[np.ndarray] = []
    if blocked is not None:
        group_codes, levels = _codes(data[blocked])
        n_groups = levels.size
    for re in random_effects:
        cov = np.ones(n) if re.covariate is None else data[re.covariate].to_numpy(dtype=float)
        if re.group == blocked:
            terms.append(
                TermInfo(
                    re.label,
                    "random",
                    n_groups,
                    None,
                    len(random_cov),
                    None,
                    n_groups,
                    n_lambda,
                    None,
                    re,
                    levels,
                )
            )
            random_cov.append(cov)
        else:
            codes, lv = _codes(data[re.group])
            cols = np.zeros((n, lv.size))
            cols[np.arange(n), codes] = cov
            m = lv.size
            terms.append(
                TermInfo(
                    re.label,
                    "random",
                    m,
                    slice(pos, pos + m),
                    None,
                    np.eye(m),
                    m,
                    n_lambda,
                    None,
                    re,
                    lv,
                )
            )
            fixed_cols.append(cols)
            pos += m
        n_lambda += 1
    xf = np.hstack(fixed_cols)
    rc = np.column_stack(random_cov) if random_cov else np.zeros((n, 0))
    return Design(y, xf, terms, group_codes, n_groups, rc, blocked, n_lambda)
