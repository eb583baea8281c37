"""A fitted GAMM as an analyst handles statsmodels' and scikit-learn's results: a summary that
prints as mgcv's ``summary.gam`` and shows as tables in a notebook, a tidy data frame of the
terms, predictions with standard errors, and a plot of the smooths with their bands.

    fit.summary()                 # print() it: mgcv's text; in Jupyter: HTML tables
    fit.summary().tables          # [parametric coefficients, smooth terms] as DataFrames
    fit.to_frame()                # one row per term (estimate or edf, statistic, p)
    fit.predict(new, se=True)     # fit, se, lower, upper (95%)
    fit.plot(residuals=True)      # matplotlib axes: each smooth with its 95% band

These are views of the numbers ``GammFit`` already holds (checked against mgcv); nothing here
refits or re-derives a statistic.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from analysis.gamm.fit import GammFit

Z95 = 1.959963984540054
TERM_COLUMNS = ["term", "type", "estimate", "std_error", "edf", "ref_df", "statistic", "p_value"]


def parametric_table(fit: GammFit) -> pd.DataFrame:
    """mgcv's "Parametric coefficients" block: Estimate, Std. Error, t value, Pr(>|t|)."""
    rows = {name: [r["estimate"], r["se"], r["t"], r["p"]] for name, r in fit.parametric.items()}
    return pd.DataFrame.from_dict(
        rows, orient="index", columns=["Estimate", "Std. Error", "t value", "Pr(>|t|)"]
    )


def smooth_table(fit: GammFit) -> pd.DataFrame:
    """mgcv's "Approximate significance of smooth terms" block: edf, Ref.df, F, p-value."""
    rows = {name: [r.edf, r.ref_df, r.F, r.p] for name, r in fit.smooth.items()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["edf", "Ref.df", "F", "p-value"])


def to_frame(fit: GammFit) -> pd.DataFrame:
    """One row per model term: parametric coefficients (estimate, std_error, t statistic)
    and smooth / random-effect terms (edf, ref_df, F statistic), with their p-values."""
    rows = [
        [name, "parametric", r["estimate"], r["se"], np.nan, np.nan, r["t"], r["p"]]
        for name, r in fit.parametric.items()
    ]
    kinds = {t.label: t.kind for t in fit.design.terms}
    rows += [
        [name, kinds.get(name, "smooth"), np.nan, np.nan, r.edf, r.ref_df, r.F, r.p]
        for name, r in fit.smooth.items()
    ]
    return pd.DataFrame(rows, columns=TERM_COLUMNS)


def _stars(p: float) -> str:
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "." if p < 0.1 else ""


def _p(p: float) -> str:
    return "<2e-16" if p < 2e-16 else f"{p:.3g}"


class GammSummary:
    """``summary(fit)`` of mgcv: ``str()`` is the printed text, ``_repr_html_`` the notebook
    view, ``tables`` the two blocks as data frames (as statsmodels' ``summary().tables``)."""

    def __init__(self, fit: GammFit) -> None:
        self.fit = fit
        self.tables = [parametric_table(fit), smooth_table(fit)]

    def _footer(self) -> list[str]:
        f = self.fit
        criterion = "-REML" if f.design.meta.get("method", "REML") == "REML" else "-ML"
        return [
            f"R-sq.(adj) = {f.r_sq:.3g}   Deviance explained = {100 * f.dev_expl:.3g}%",
            f"{criterion} = {f.reml:.5g}  Scale est. = {f.scale:.5g}  n = {f.n}",
            f"AIC = {f.aic:.5g}",
        ]

    def as_text(self) -> str:
        f = self.fit
        par, smo = self.tables
        lines = ["Family: gaussian", "Link function: identity", "", "Formula:", f.formula, ""]
        lines.append("Parametric coefficients:")
        width = max(len(n) for n in par.index) + 1
        lines.append(
            f"{'':{width}}{'Estimate':>10} {'Std. Error':>10} {'t value':>8} {'Pr(>|t|)':>9}"
        )
        for name, r in par.iterrows():
            lines.append(
                f"{name:{width}}{r['Estimate']:10.4g} {r['Std. Error']:10.4g} "
                f"{r['t value']:8.3f} {_p(r['Pr(>|t|)']):>9} {_stars(r['Pr(>|t|)'])}".rstrip()
            )
        if len(smo):
            lines += ["", "Approximate significance of smooth terms:"]
            width = max(len(n) for n in smo.index) + 1
            lines.append(f"{'':{width}}{'edf':>8} {'Ref.df':>8} {'F':>8} {'p-value':>9}")
            for name, r in smo.iterrows():
                lines.append(
                    f"{name:{width}}{r['edf']:8.3f} {r['Ref.df']:8.3f} {r['F']:8.3f} "
                    f"{_p(r['p-value']):>9} {_stars(r['p-value'])}".rstrip()
                )
        lines += ["---", "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1", ""]
        return "\n".join(lines + self._footer())

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()

    def _repr_html_(self) -> str:
        par, smo = self.tables
        parts = [
            "<div><p><b>GAMM</b> (Gaussian, identity link)<br><code>"
            f"{html.escape(self.fit.formula)}</code></p>",
            "<p>Parametric coefficients</p>",
            par.to_html(float_format=lambda v: f"{v:.4g}"),
        ]
        if len(smo):
            parts += [
                "<p>Approximate significance of smooth terms</p>",
                smo.to_html(float_format=lambda v: f"{v:.4g}"),
            ]
        parts.append("<p>" + "<br>".join(html.escape(x) for x in self._footer()) + "</p></div>")
        return "\n".join(parts)


def predict_frame(fit: GammFit, data: pd.DataFrame, include_random: bool = True) -> pd.DataFrame:
    """``predict.gam(fit, data, se.fit = TRUE)`` as a frame: fit, se and the 95% normal
    interval (lower, upper); without the random-effect terms when include_random is False."""
    exclude = [] if include_random else [t.label for t in fit.design.terms if t.kind == "random"]
    out = fit.predict_se(data, exclude=exclude)
    out["lower"] = out["fit"] - Z95 * out["se"]
    out["upper"] = out["fit"] + Z95 * out["se"]
    return out


def partial_residuals(fit: GammFit, label: str) -> pd.DataFrame:
    """Data rows of smooth `label` (for a factor-by smooth, its level's rows): the covariate
    x, the centred smooth's value there and the partial residual (smooth + y - fitted), as
    mgcv's ``plot.gam(residuals = TRUE)`` draws them for a Gaussian model."""
    term = fit._term(label)
    if term.kind != "smooth":
        raise KeyError(f"{label} is not a smooth term")
    design = fit.design
    sl = term.fixed_slice
    value = design.xf[:, sl] @ fit.state.beta_f[sl]
    resid = design.y - fit.fitted
    x = fit.design.meta["smooth_data"][label]
    rows = np.ones(design.n, dtype=bool)
    if term.by_level is not None:
        factor, level = term.by_level
        rows = design.meta["data"][factor].astype(str).to_numpy() == level
    return pd.DataFrame(
        {"x": x[rows], "smooth": value[rows], "partial_residual": (value + resid)[rows]}
    )


def plot(
    fit: GammFit,
    terms: list[str] | None = None,
    *,
    residuals: bool = False,
    ax: Any = None,
    points: int = 100,
) -> Any:
    """Each smooth term's centred curve with its 95% pointwise band (and, with residuals,
    the partial residuals), one matplotlib axes per term; returns the axes (a single one
    when one term is drawn). `ax` may give the axes to draw into."""
    import matplotlib.pyplot as plt

    smooths = [t.label for t in fit.design.terms if t.kind == "smooth"]
    terms = smooths if terms is None else list(terms)
    unknown = [t for t in terms if t not in smooths]
    if unknown:
        raise KeyError(f"no smooth term(s) {unknown}; smooths: {smooths}")
    if not terms:
        raise ValueError("the model has no smooth term to plot")
    if ax is None:
        _, axes = plt.subplots(1, len(terms), figsize=(4.2 * len(terms), 3.4), squeeze=False)
        axes = list(axes[0])
    else:
        axes = list(np.atleast_1d(ax))
        if len(axes) != len(terms):
            raise ValueError(f"{len(terms)} terms to draw but {len(axes)} axes given")
    for a, label in zip(axes, terms, strict=True):
        grid = fit.smooth_grid(label, points=points)
        if residuals:
            pr = partial_residuals(fit, label)
            a.scatter(pr["x"], pr["partial_residual"], s=6, color="0.6", alpha=0.6, lw=0)
        a.fill_between(grid["x"], grid["lower"], grid["upper"], color="C0", alpha=0.25, lw=0)
        a.plot(grid["x"], grid["fit"], color="C0")
        a.axhline(0.0, color="0.3", lw=0.6, ls=":")
        term = fit._term(label)
        a.set_xlabel(term.spec.variable)
        edf = fit.smooth[label].edf if label in fit.smooth else float("nan")
        a.set_ylabel(f"{label} (edf {edf:.2f})")
    return axes[0] if len(axes) == 1 else np.array(axes)
