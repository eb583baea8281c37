"""Public API: fit a Gaussian additive mixed model the way mgcv's
``gam(y ~ s(x) + s(uid, bs="re") + s(uid, x, bs="re"), method="REML")`` does, and report it.

``fit_gamm`` is the seed study's model on 1..7 ratings; ``fit_additive_mixed`` takes any number
of smooths and random-effect terms for analysts' own models. Both return a ``GammFit``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats
from threadpoolctl import threadpool_limits

from analysis.gamm import inference as inf
from analysis.gamm.design import (
    Design,
    Parametric,
    RandomEffect,
    Smooth,
    TermInfo,
    build_design,
)
from analysis.gamm.linalg import cross_products
from analysis.gamm.memory import check_memory, estimate_for_model
from analysis.gamm.re_test import random_effect_test_blocked
from analysis.gamm.reml import RemlState, fit_reml, full_hessian
from analysis.gamm.validate import (
    GammInputError,
    check_basis,
    check_replicated,
    group_column,
    numeric_column,
    rating_column,
    require_columns,
    smooth_covariate,
)

Z95 = float(stats.norm.ppf(0.975))
# The matrices here are small (<= a few thousand); multi-threaded BLAS on a shared machine
# spends more time synchronising than computing (5x slower measured under load), so one thread.
BLAS_THREADS = 1


@dataclass
class SmoothRow:
    edf: float
    ref_df: float
    F: float
    p: float


@dataclass
class GammFit:
    """A fitted model: coefficients, smoothing parameters, mgcv-style summary numbers."""

    formula: str
    n: int
    design: Design = field(repr=False)
    state: RemlState = field(repr=False)
    scale: float
    aic: float
    loglik: float
    df_aic: float
    r_sq: float
    dev_expl: float
    residual_df: float
    reml: float
    sp: dict[str, float]
    edf: dict[str, float]
    edf1: dict[str, float]
    edf2_total: float
    aic_exact_correction: bool
    parametric: dict[str, dict[str, float]]
    smooth: dict[str, SmoothRow]
    fitted: np.ndarray = field(repr=False)
    iterations: int
    converged: bool
    seconds: float

    # ---- predictions -------------------------------------------------------------------

    def _term(self, label: str) -> TermInfo:
        for t in self.design.terms:
            if t.label == label:
                return t
        raise KeyError(f"no term {label!r}; terms: {[t.label for t in self.design.terms]}")

    def term_coefficients(self, label: str) -> np.ndarray:
        t = self._term(label)
        if t.fixed_slice is not None:
            return self.state.beta_f[t.fixed_slice].copy()
        return self.state.beta_r[:, t.random_index].copy()

    def predict(
        self, data: pd.DataFrame, include_random: bool = True, *, se: bool = False
    ) -> np.ndarray | pd.DataFrame:
        """Fitted means at ``data``; participants not seen in the fit get the population curve.
        With ``se=True`` a frame of fit, se, lower, upper (95%), as ``predict.gam(...,
        se.fit = TRUE)``."""
        if se:
            from analysis.gamm.results import predict_frame

            return predict_frame(self, data, include_random)
        needed = []
        for t in self.design.terms:
            spec = t.spec
            if isinstance(spec, Smooth):
                needed.append(spec.variable)
            elif isinstance(spec, RandomEffect) and include_random:
                needed.append(spec.group)
                if spec.covariate is not None:
                    needed.append(spec.covariate)
        require_columns(data, list(dict.fromkeys(needed)), "prediction data")
        n = len(data)
        out = np.full(n, self.state.beta_f[0])
        for t in self.design.terms:
            spec = t.spec
            if isinstance(spec, Smooth):
                x = numeric_column(data, spec.variable, "prediction data")
                out += t.basis.design(x) @ self.state.beta_f[t.fixed_slice]
            elif isinstance(spec, RandomEffect) and include_random:
                groups = data[spec.group].astype(str).to_numpy()
                coef = self.term_coefficients(t.label)
                lookup = {lv: i for i, lv in enumerate(t.levels)}
                idx = np.array([lookup.get(g, -1) for g in groups])
                b = np.where(idx >= 0, coef[np.maximum(idx, 0)], 0.0)
                cov = (
                    np.ones(n)
                    if spec.covariate is None
                    else numeric_column(data, spec.covariate, "prediction data")
                )
                out += b * cov
        return out

    def predict_se(self, data: pd.DataFrame, exclude: list[str] | tuple[str, ...] = ()):
        """``predict.gam(fit, data, se.fit = TRUE, exclude = ...)``: columns fit, se."""
        from analysis.gamm.predict import predict_with_se

        return predict_with_se(self, data, exclude)

    def smooth_grid(self, label: str | None = None, points: int = 100) -> pd.DataFrame:
        """The centred smooth on an even grid over the data range, with 95% pointwise bands
        from the Bayesian covariance (as mgcv's ``predict(type="terms", se.fit=TRUE)``)."""
        smooths = [t for t in self.design.terms if t.kind == "smooth"]
        t = smooths[0] if label is None else self._term(label)
        if t.kind != "smooth":
            raise KeyError(f"{t.label} is not a smooth term")
        x_data = self.design.meta["smooth_data"][t.label]
        grid = np.linspace(x_data.min(), x_data.max(), points)
        xg = t.basis.design(grid)
        sl = t.fixed_slice
        fit = xg @ self.state.beta_f[sl]
        vp = self.scale * self.state.fac.p[sl, sl]
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", xg, vp, xg), 0.0))
        return pd.DataFrame(
            {"x": grid, "fit": fit, "se": se, "lower": fit - Z95 * se, "upper": fit + Z95 * se}
        )

    # ---- reporting --------------------------------------------------------------------

    def summary(self):
        """mgcv's ``summary.gam``: prints as its text, shows as tables in a notebook."""
        from analysis.gamm.results import GammSummary

        return GammSummary(self)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def to_frame(self) -> pd.DataFrame:
        """One row per term: estimate/std_error or edf/ref_df, statistic, p_value."""
        from analysis.gamm.results import to_frame

        return to_frame(self)

    def plot(self, terms=None, *, residuals: bool = False, ax=None, points: int = 100):
        """The smooths with 95% bands (and partial residuals); matplotlib axes."""
        from analysis.gamm.results import plot

        return plot(self, terms, residuals=residuals, ax=ax, points=points)

    def summary_dict(self) -> dict:
        """The JSON layout of ``python -m analysis gamm`` (mgcv's term names)."""
        return {
            "formula": self.formula,
            "method": self.design.meta.get("method", "REML"),
            "n": self.n,
            "aic": self.aic,
            "scale": self.scale,
            "r_sq": self.r_sq,
            "dev_expl": self.dev_expl,
            "reml": self.reml,
            "residual_df": self.residual_df,
            "parametric": {k: dict(v) for k, v in self.parametric.items()},
            "smooth": {
                k: {"edf": v.edf, "ref_df": v.ref_df, "F": v.F, "p": v.p}
                for k, v in self.smooth.items()
            },
            "sp": dict(self.sp),
            "converged": self.converged,
        }


def _formula(
    outcome: str, smooths: list[Smooth], res: list[RandomEffect], parametric: list[str]
) -> str:
    parts = list(parametric)
    for s in smooths:
        by = f", by = {s.by}" if s.by else ""
        parts.append(f's({s.variable}{by}, bs = "{s.basis}", k = {s.k})')
    for r in res:
        inner = r.group if r.covariate is None else f"{r.group}, {r.covariate}"
        parts.append(f's({inner}, bs = "re")')
    return f"{outcome} ~ " + " + ".join(parts or ["1"])


def _check_by_levels(clean: pd.DataFrame, s: Smooth) -> None:
    """Each level's smooth needs as many distinct values as its basis dimension (mgcv
    refuses such a term too); without this the fit fails later as a singular matrix."""
    distinct = clean.groupby(s.by)[s.variable].nunique()
    for level, count in distinct.items():
        if count < s.k:
            raise GammInputError(
                f"data: s({s.variable}, by = {s.by}): level {level!r} has {count} distinct "
                f"value(s) of {s.variable!r}, fewer than the basis dimension k = {s.k}; "
                "use a smaller k or leave that level out"
            )


def _factor_levels(data: pd.DataFrame, column: str) -> tuple[str, ...]:
    """Levels as R's factor() orders them (sorted strings; C-locale order), at least two."""
    raw = data[column]
    if raw.isna().any():
        pos = int(np.flatnonzero(raw.isna().to_numpy())[0])
        raise GammInputError(f"data: column {column!r} is empty in row {pos + 1}")
    levels = tuple(sorted(raw.astype(str).unique()))
    if len(levels) < 2:
        raise GammInputError(f"data: factor {column!r} has a single level ({levels[0]!r})")
    return levels


def _is_factor(data: pd.DataFrame, column: str) -> bool:
    dtype = data[column].dtype
    return not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)


def fit_additive_mixed(
    data: pd.DataFrame,
    outcome: str,
    smooths: list[Smooth],
    random_effects: list[RandomEffect],
    *,
    parametric: list[str] | None = None,
    method: str = "REML",
    validate_ratings: bool = False,
    formula: str | None = None,
    memory_limit: str | int | None = None,
) -> GammFit:
    """Fit ``outcome ~ 1 + parametric + smooths + random effects`` by REML or ML (mgcv's
    ``method``); parametric columns that are not numeric are factors (treatment contrasts).
    A fit whose memory estimate exceeds ``memory_limit`` (bytes or a size such as "6GB";
    default: see ``analysis.gamm.memory``) is refused with ``GammMemoryError``."""
    t0 = time.perf_counter()
    if method not in ("REML", "ML"):
        raise GammInputError(f"method must be 'REML' or 'ML', got {method!r}")
    parametric = list(parametric or [])
    columns = [outcome, *parametric] + [s.variable for s in smooths]
    columns += [s.by for s in smooths if s.by is not None]
    for r in random_effects:
        columns.append(r.group)
        if r.covariate is not None:
            columns.append(r.covariate)
    require_columns(data, list(dict.fromkeys(columns)))
    labels = parametric + [f"{s.label}:{s.by}" for s in smooths] + [r.label for r in random_effects]
    if len(set(labels)) != len(labels):
        raise GammInputError(f"duplicate model terms: {labels}")
    clean = pd.DataFrame(index=data.index)
    clean[outcome] = (
        rating_column(data, outcome) if validate_ratings else numeric_column(data, outcome)
    )
    par_specs = []
    for name in parametric:
        if _is_factor(data, name):
            levels = _factor_levels(data, name)
            clean[name] = data[name].astype(str)
            par_specs.append(Parametric(name, levels))
        else:
            clean[name] = numeric_column(data, name)
            par_specs.append(Parametric(name))
    by_levels = {}
    for s in smooths:
        check_basis(s.basis, s.k)
        clean[s.variable] = smooth_covariate(data, s.variable, s.k)
        if s.by is not None:
            if not _is_factor(data, s.by):
                raise GammInputError(
                    f"data: by variable {s.by!r} of s({s.variable}, by = {s.by}) must be a "
                    "factor (text column); numeric by variables are not supported"
                )
            by_levels[s.by] = _factor_levels(data, s.by)
            clean[s.by] = data[s.by].astype(str)
            _check_by_levels(clean, s)
    for r in random_effects:
        clean[r.group] = group_column(data, r.group)
        if r.covariate is not None and r.covariate not in clean:
            clean[r.covariate] = numeric_column(data, r.covariate)
    if np.unique(clean[outcome]).size < 2:
        raise GammInputError(f"data: column {outcome!r} is constant; nothing to model")
    clean = clean.reset_index(drop=True)
    for r in random_effects:
        check_replicated(clean, r.group, r.label)
    check_memory(
        estimate_for_model(clean, par_specs, smooths, by_levels, random_effects), memory_limit
    )
    design = build_design(clean, outcome, smooths, random_effects, par_specs, by_levels)
    design.meta["smooth_data"] = {
        t.label: clean[t.spec.variable].to_numpy() for t in design.terms if t.kind == "smooth"
    }
    design.meta["method"] = method
    design.meta["data"] = clean
    text = formula or _formula(outcome, smooths, random_effects, parametric)
    with threadpool_limits(limits=BLAS_THREADS):
        cp = cross_products(design)
        state, iterations, converged = fit_reml(design, cp, ml=method == "ML")
        return _summarise(design, cp, state, iterations, converged, text, t0)


def fit_formula(
    formula: str, data: pd.DataFrame, method: str = "REML", memory_limit: str | int | None = None
) -> GammFit:
    """Fit a model written in mgcv's formula syntax (see ``analysis.gamm.formula``)."""
    from analysis.gamm.formula import parse_formula

    spec = parse_formula(formula)
    if isinstance(data, pd.DataFrame):
        spec.check_columns(list(data.columns))
    return fit_additive_mixed(
        data,
        spec.outcome,
        spec.smooths,
        spec.random_effects,
        parametric=spec.parametric,
        method=method,
        formula=spec.text,
        memory_limit=memory_limit,
    )


def fit_gamm(
    data: pd.DataFrame | str | None = None,
    outcome: str | pd.DataFrame | None = None,
    distance: str | None = None,
    participant: str | None = None,
    basis: str = "tp",
    k: int = 10,
    *,
    formula: str | None = None,
    method: str = "REML",
    memory_limit: str | int | None = None,
) -> GammFit:
    """The seed study's GAMM: ``outcome ~ s(distance) + s(participant, bs="re")
    + s(participant, distance, bs="re")`` by REML, ``outcome`` a 1..7 rating; or, called as
    ``fit_gamm(formula, data)`` (or with ``formula=``), any model in mgcv's formula syntax."""
    if isinstance(data, str):
        formula, data = data, outcome
    if formula is not None:
        if not isinstance(data, pd.DataFrame):
            raise GammInputError("fit_gamm(formula, data): data must be a pandas DataFrame")
        return fit_formula(formula, data, method, memory_limit)
    if outcome is None or distance is None or participant is None:
        raise GammInputError("fit_gamm needs outcome, distance and participant (or a formula)")
    check_basis(basis, k)
    return fit_additive_mixed(
        data,
        outcome,
        [Smooth(distance, basis, k)],
        [RandomEffect(participant), RandomEffect(participant, distance)],
        validate_ratings=True,
        method=method,
        memory_limit=memory_limit,
    )


def _summarise(design, cp, state: RemlState, iterations, converged, formula, t0) -> GammFit:
    lam = np.exp(state.rho)
    edfs = inf.term_edfs(design, state.traces, state.frob)
    sum_edf = sum(e[0] for e in edfs.values())
    sum_edf1 = sum(e[1] for e in edfs.values())
    n = design.n
    res_df = n - sum_edf
    fitted = design.xf @ state.beta_f
    if design.n_random_terms:
        fitted = fitted + np.sum(state.beta_r[design.group_codes] * design.random_cov, axis=1)
    y = design.y
    resid = y - fitted
    rss = float(resid @ resid)
    # mgcv's scale is the Pearson estimate rss / (n - tr A); at a REML optimum it equals the
    # profiled REML scale, at an ML optimum it does not (the ML scale is D / n)
    phi = float(state.scale) if design.meta.get("method", "REML") == "REML" else rss / res_df
    null_dev = float(np.sum((y - y.mean()) ** 2))
    r_sq = 1.0 - float(np.var(resid, ddof=1)) * (n - 1) / (float(np.var(y, ddof=1)) * res_df)
    beta = np.concatenate([state.beta_f, state.beta_r.ravel()])
    blocked = all(t.random_index is not None for t in design.terms if t.kind == "random")
    # X'X and H^{-1} as matrices only where a test needs them (dense random terms); the
    # blocked terms' tests and the AIC work from the block structure
    xtx = None if blocked else inf.full_crossprod(design, cp)
    hinv = None if blocked else inf.dense_inverse(design, state.fac)
    parametric = {}
    for t in design.terms:
        if t.kind != "parametric":
            continue
        for i, name in zip(range(t.fixed_slice.start, t.fixed_slice.stop), t.names, strict=True):
            se = float(np.sqrt(phi * state.fac.p[i, i]))
            tv = float(state.beta_f[i] / se)
            parametric[name] = {
                "estimate": float(state.beta_f[i]),
                "se": se,
                "t": tv,
                "p": float(2.0 * stats.t.sf(abs(tv), res_df)),
            }
    smooth = {}
    for t in design.terms:
        if t.kind == "smooth":
            res = inf.smooth_term_test(
                t, state.beta_f, cp.a, state.fac.p, phi, edfs[t.label][1], res_df
            )
        elif t.kind == "random" and blocked:
            res = random_effect_test_blocked(
                design, t, cp, state.fac, lam, state.beta_r, phi, res_df
            )
        elif t.kind == "random":
            res = inf.random_effect_test(design, t, xtx, hinv, lam, beta, phi, res_df)
        else:
            continue
        smooth[t.label] = SmoothRow(edfs[t.label][0], res.ref_df, res.stat, res.p)
    dbeta = (
        np.column_stack([np.concatenate([f, r.ravel()]) for f, r in state.dbeta])
        if state.dbeta
        else np.zeros((beta.size, 0))
    )
    e2, exact = inf.edf2_total(
        design, cp, sum_edf, lam, full_hessian(state, design), dbeta, phi, xtx
    )
    aic, loglik, df_aic = inf.mgcv_aic(n, rss, sum_edf, sum_edf1, e2, design.p)
    reml_value = state.value + logdet_s_constant(design)
    return GammFit(
        formula=formula,
        n=n,
        design=design,
        state=state,
        scale=float(phi),
        aic=aic,
        loglik=loglik,
        df_aic=df_aic,
        r_sq=float(r_sq),
        dev_expl=float((null_dev - rss) / null_dev),
        residual_df=float(res_df),
        reml=float(reml_value),
        sp={
            t.label: float(lam[t.lambda_index]) for t in design.terms if t.lambda_index is not None
        },
        edf={k: v[0] for k, v in edfs.items()},
        edf1={k: v[1] for k, v in edfs.items()},
        edf2_total=float(e2),
        aic_exact_correction=exact,
        parametric=parametric,
        smooth=smooth,
        fitted=fitted,
        iterations=iterations,
        converged=converged,
        seconds=time.perf_counter() - t0,
    )


def logdet_s_constant(design: Design) -> float:
    """-log|S|_+ / 2 at lambda = 1 (the part of the criterion our optimiser leaves out)."""
    total = 0.0
    for t in design.terms:
        if t.penalty is not None and t.lambda_index is not None:
            ev = np.linalg.eigvalsh(t.penalty)
            ev = ev[ev > ev.max() * 1e-10]
            total += float(np.sum(np.log(ev)))
    return -total / 2.0
