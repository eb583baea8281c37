"""Predictions with standard errors, as mgcv's ``predict.gam(..., se.fit = TRUE, exclude = ...)``.

The row of the model matrix for new data is built term by term from what the fit stored (factor
levels, spline bases, grouping levels); its variance x' V_p x with V_p = scale H^{-1} is taken
through the block form of H^{-1} (``linalg``), so no p x p matrix is formed even with thousands
of participant coefficients: for a row with fixed part a and participant part c in group g,
x' H^{-1} x = (a - W_g'c)' P (a - W_g'c) + c' D_g^{-1} c.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.gamm.design import Parametric, RandomEffect, Smooth
from analysis.gamm.validate import GammInputError, numeric_column, require_columns


def _needed(fit, exclude: set[str]) -> list[str]:
    cols: list[str] = []
    for t in fit.design.terms:
        spec = t.spec
        if t.label in exclude or spec is None:
            continue
        if isinstance(spec, Parametric):
            cols.append(spec.variable)
        elif isinstance(spec, Smooth):
            cols += [spec.variable] + ([spec.by] if spec.by else [])
        elif isinstance(spec, RandomEffect):
            cols += [spec.group] + ([spec.covariate] if spec.covariate else [])
    return list(dict.fromkeys(cols))


def model_rows(fit, data: pd.DataFrame, exclude: set[str] | None = None):
    """(fixed-block rows n x p_f, participant-block covariates n x r, group index or -1)."""
    exclude = set(exclude or ())
    design = fit.design
    known = {t.label for t in design.terms}
    unknown = sorted(exclude - known)
    if unknown:
        raise GammInputError(f"exclude: no term(s) {', '.join(unknown)}; terms: {sorted(known)}")
    require_columns(data, _needed(fit, exclude), "prediction data")
    n = len(data)
    a = np.zeros((n, design.p_fixed))
    c = np.zeros((n, design.n_random_terms))
    g = np.full(n, -1)
    for t in design.terms:
        if t.label in exclude:
            continue
        spec = t.spec
        if t.label == "(Intercept)":
            a[:, 0] = 1.0
        elif isinstance(spec, Parametric):
            if spec.levels is not None:
                values = data[spec.variable].astype(str)
                bad = ~values.isin(spec.levels)
                if bad.any():
                    raise GammInputError(
                        f"prediction data: column {spec.variable!r} has level "
                        f"{values[bad].iloc[0]!r}, not seen in the fit (levels {spec.levels})"
                    )
                a[:, t.fixed_slice] = spec.columns(data.assign(**{spec.variable: values}))
            else:
                a[:, t.fixed_slice] = numeric_column(data, spec.variable, "prediction data")[
                    :, None
                ]
        elif isinstance(spec, Smooth):
            x = numeric_column(data, spec.variable, "prediction data")
            cols = t.basis.design(x)
            if t.by_level is not None:
                cols = cols * (data[t.by_level[0]].astype(str).to_numpy() == t.by_level[1])[:, None]
            a[:, t.fixed_slice] = cols
        elif isinstance(spec, RandomEffect):
            groups = data[spec.group].astype(str).to_numpy()
            lookup = {lv: i for i, lv in enumerate(t.levels)}
            idx = np.array([lookup.get(v, -1) for v in groups], dtype=int)
            cov = np.ones(n) if spec.covariate is None else numeric_column(data, spec.covariate)
            cov = np.where(idx >= 0, cov, 0.0)
            if t.fixed_slice is not None:
                block = np.zeros((n, t.n_coef))
                ok = idx >= 0
                block[np.flatnonzero(ok), idx[ok]] = cov[ok]
                a[:, t.fixed_slice] = block
            else:
                c[:, t.random_index] = cov
                g = np.where(idx >= 0, idx, g)
    return a, c, g


def predict_with_se(
    fit, data: pd.DataFrame, exclude: list[str] | tuple[str, ...] = ()
) -> pd.DataFrame:
    """Fitted linear predictor and its standard error (columns ``fit``, ``se``)."""
    a, c, g = model_rows(fit, data, set(exclude))
    st = fit.state
    value = a @ st.beta_f
    fac = fit.state.fac
    has = g >= 0
    adj = a.copy()
    extra = np.zeros(len(data))
    if has.any() and c.shape[1]:
        gi = g[has]
        value[has] += np.sum(st.beta_r[gi] * c[has], axis=1)
        adj[has] -= np.einsum("nt,ntf->nf", c[has], fac.w[gi])
        extra[has] = np.einsum("nt,ntu,nu->n", c[has], fac.dinv[gi], c[has])
    quad = np.einsum("nf,fh,nh->n", adj, fac.p, adj) + extra
    se = np.sqrt(np.maximum(fit.scale * quad, 0.0))
    return pd.DataFrame({"fit": value, "se": se}, index=data.index)
