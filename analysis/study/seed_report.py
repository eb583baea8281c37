"""The seed study's GAMM report: Table S2 (CSV, Markdown, LaTeX) and Figure 3 (PNG, SVG).

Everything is fitted before anything is written, so a failing model leaves the folder as it was.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.gamm.fit import GammFit, fit_gamm
from analysis.gamm.validate import GammInputError

OUTCOMES = (("acceptance", "Propensity for acceptance"), ("action", "Propensity for action"))
DISTANCES = (("sparsity", "Sparsity"), ("proximity", "Proximity"))
PARTICIPANT = "participant"
S2_COLUMNS = [
    "Model",
    "Outcome",
    "Variable",
    "Smth",
    "Coef.",
    "S.E.",
    "t value",
    "EDF",
    "F value",
    "p value",
    "AIC",
]


@dataclass
class ModelSpec:
    name: str
    outcome: str
    outcome_label: str
    distance: str
    distance_label: str


def seed_models() -> list[ModelSpec]:
    """Model-1..4: acceptance x {sparsity, proximity}, action x {sparsity, proximity}."""
    specs, i = [], 1
    for outcome, olabel in OUTCOMES:
        for distance, dlabel in DISTANCES:
            specs.append(ModelSpec(f"Model-{i}", outcome, olabel, distance, dlabel))
            i += 1
    return specs


def format_p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def format_summary(fit: GammFit) -> str:
    """mgcv-like printed summary."""
    lines = [f"Formula: {fit.formula}", "", "Parametric coefficients:"]
    pw = max(14, *(len(k) + 2 for k in fit.parametric))
    lines.append(f"{'':{pw}s}{'Estimate':>10s}{'Std. Error':>12s}{'t value':>10s}{'Pr(>|t|)':>11s}")
    for name, row in fit.parametric.items():
        lines.append(
            f"{name:{pw}s}{row['estimate']:10.4f}{row['se']:12.4f}{row['t']:10.2f}{row['p']:11.3g}"
        )
    lines += ["", "Approximate significance of smooth terms:"]
    width = max(len(k) for k in fit.smooth) + 2
    lines.append(f"{'':{width}s}{'edf':>9s}{'Ref.df':>9s}{'F':>9s}{'p-value':>10s}")
    for name, row in fit.smooth.items():
        lines.append(f"{name:{width}s}{row.edf:9.3f}{row.ref_df:9.3f}{row.F:9.3f}{row.p:10.3g}")
    lines += [
        "",
        f"R-sq.(adj) = {fit.r_sq:.3f}   Deviance explained = {100 * fit.dev_expl:.1f}%",
        f"-REML = {fit.reml:.3f}  Scale est. = {fit.scale:.5f}  n = {fit.n}  AIC = {fit.aic:.2f}",
    ]
    return "\n".join(lines)


def table_s2(fits: list[tuple[ModelSpec, GammFit]]) -> pd.DataFrame:
    """One block of rows per model, as the seed's Table S2 (numbers unrounded)."""
    rows = []
    for spec, fit in fits:
        icpt = fit.parametric["(Intercept)"]
        rows.append(
            [
                spec.name,
                spec.outcome_label,
                "Intercept",
                "",
                icpt["estimate"],
                icpt["se"],
                icpt["t"],
                np.nan,
                np.nan,
                icpt["p"],
                fit.aic,
            ]
        )
        labels = [
            (f"s({spec.distance})", spec.distance_label),
            (f"s({PARTICIPANT})", "uid (r.i.)"),
            (f"s({PARTICIPANT},{spec.distance})", "uid (r.s.)"),
        ]
        for key, label in labels:
            row = fit.smooth[key]
            rows.append(
                [
                    spec.name,
                    spec.outcome_label,
                    label,
                    "yes",
                    np.nan,
                    np.nan,
                    np.nan,
                    row.edf,
                    row.F,
                    row.p,
                    np.nan,
                ]
            )
    return pd.DataFrame(rows, columns=S2_COLUMNS)


def _formatted(table: pd.DataFrame) -> list[list[str]]:
    out = []
    previous = None
    for rec in table.itertuples(index=False):
        cells = list(rec)
        first = cells[0] != previous
        previous = cells[0]
        row = [cells[0] if first else "", cells[1] if first else "", cells[2], cells[3]]
        for value in cells[4:9]:
            row.append("" if _missing(value) else f"{value:.2f}")
        row.append("" if _missing(cells[9]) else format_p(cells[9]))
        row.append("" if _missing(cells[10]) else f"{cells[10]:.2f}")
        out.append(row)
    return out


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def table_markdown(table: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(S2_COLUMNS) + " |", "|" + "---|" * len(S2_COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in _formatted(table)]
    return "\n".join(lines) + "\n"


def _tex_escape(text: str) -> str:
    return (
        text.replace("\\", r"\textbackslash{}")
        .replace("_", r"\_")
        .replace("%", r"\%")
        .replace("&", r"\&")
        .replace("#", r"\#")
        .replace("<", r"$<$")
    )


#: LaTeX headers that differ from S2_COLUMNS: the statistics' letters in math mode
_TEX_HEAD = {"t value": "$t$ value", "F value": "$F$ value", "p value": "$p$ value"}


def table_latex(table: pd.DataFrame) -> str:
    head = [_TEX_HEAD.get(c, c) for c in S2_COLUMNS]
    lines = [r"\begin{tabular}{llllrrrrrrr}", r"\hline", " & ".join(head) + r" \\", r"\hline"]
    rows = _formatted(table)
    for i, r in enumerate(rows):
        if i and r[0]:
            lines.append(r"\hline")
        lines.append(" & ".join(_tex_escape(c) for c in r) + r" \\")
    lines += [r"\hline", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def figure3(fits: list[tuple[ModelSpec, GammFit]], fixed: dict | None = None):
    """2 x 2 panels: rows acceptance (a) / action (b), columns sparsity / proximity; the
    fixed-effects pygam curve (no participant effects) dashed, when given."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(9, 7), squeeze=False)
    for spec, fit in fits:
        r = [o for o, _ in OUTCOMES].index(spec.outcome)
        c = [d for d, _ in DISTANCES].index(spec.distance)
        ax = axes[r][c]
        grid = fit.smooth_grid(f"s({spec.distance})")
        ax.fill_between(grid["x"], grid["lower"], grid["upper"], color="0.8", label="95% band")
        ax.plot(grid["x"], grid["fit"], color="k", lw=1.5, label="GAMM smooth")
        if fixed is not None and spec.name in fixed:
            g = fixed[spec.name]["grid"]
            ax.plot(
                g["x"],
                g["fit"],
                color="tab:blue",
                lw=1.0,
                ls="--",
                label="GAM without participant effects (pygam)",
            )
        ax.axhline(0.0, color="0.5", lw=0.6, ls=":")
        ax.set_xlabel(spec.distance_label)
        ax.set_ylabel(f"s({spec.distance_label.lower()}) on {spec.outcome}")
        row = fit.smooth[f"s({spec.distance})"]
        ax.set_title(
            f"{spec.name}: EDF {row.edf:.2f}, F {row.F:.2f}, p {format_p(row.p)}", fontsize=9
        )
    axes[0][0].legend(fontsize=7, loc="best")
    for r, (_, olabel) in enumerate(OUTCOMES):
        axes[r][0].annotate(
            f"({'ab'[r]}) {olabel}",
            xy=(0, 1.12),
            xycoords="axes fraction",
            fontsize=10,
            fontweight="bold",
        )
    fig.tight_layout()
    return fig


def fit_seed_models(
    evaluations: pd.DataFrame, basis: str = "tp", k: int = 10, progress: bool = True
) -> list[tuple[ModelSpec, GammFit]]:
    from tqdm import tqdm

    specs = seed_models()
    fits = []
    # drawn on a terminal only (disable=None): a log gets no bar lines
    with tqdm(specs, desc="GAMMs", unit="model", disable=None if progress else True) as bar:
        for spec in bar:
            bar.set_postfix_str(f"{spec.outcome} ~ s({spec.distance})")
            try:
                fit = fit_gamm(evaluations, spec.outcome, spec.distance, PARTICIPANT, basis, k)
            except GammInputError as exc:
                raise GammInputError(
                    f"{spec.name} ({spec.outcome} ~ s({spec.distance})): {exc}"
                ) from None
            fits.append((spec, fit))
    return fits


def write_study_report(
    evaluations: pd.DataFrame,
    out: Path,
    basis: str = "tp",
    k: int = 10,
    n_dropped: int = 0,
    ordinal: bool = True,
    progress: bool = True,
    fixed_gam: bool = True,
) -> list[Path]:
    """Fit the four models (and the ordinal robustness and pygam fits), then write the files."""
    fits = fit_seed_models(evaluations, basis, k, progress)
    fixed = None
    if fixed_gam:
        from tqdm import tqdm

        from analysis.gamm.fixed_gam import fit_fixed_gam

        fixed = {}
        bars = None if progress else True
        for spec, _ in tqdm(fits, desc="pygam", unit="model", disable=bars):
            fixed[spec.name] = fit_fixed_gam(evaluations, spec.outcome, spec.distance, k)
    robustness = None
    if ordinal:
        from analysis.gamm.ordinal import compare_with_gaussian

        robustness = compare_with_gaussian(evaluations, fits, PARTICIPANT, basis, k, progress)
    table = table_s2(fits)
    fig = figure3(fits, fixed)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    path = out / "table_s2.csv"
    table.to_csv(path, index=False)
    written.append(path)
    for name, text in (
        ("table_s2.md", table_markdown(table)),
        ("table_s2.tex", table_latex(table)),
    ):
        (out / name).write_text(text)
        written.append(out / name)
    for ext in ("png", "svg"):
        path = out / f"figure3.{ext}"
        fig.savefig(path, dpi=150 if ext == "png" else None)
        written.append(path)
    models = {
        spec.name: {"outcome": spec.outcome, "distance": spec.distance, **fit.summary_dict()}
        for spec, fit in fits
    }
    payload = {
        "n_evaluations": int(len(evaluations)),
        "n_dropped_impossible": n_dropped,
        "models": models,
    }
    if robustness is not None:
        payload["ordinal"] = robustness
    if fixed is not None:
        payload["fixed_effects_gam"] = fixed
    (out / "models.json").write_text(json.dumps(payload, indent=2) + "\n")
    written.append(out / "models.json")
    return written
