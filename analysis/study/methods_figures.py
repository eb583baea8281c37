"""What the method-comparison report (`analysis.study.methods_report`) writes: a figure per outcome,
the CSV tables, `report.md` and the short table printed on the terminal.

Everything is rendered in memory first (`render_report`) and written in one go afterwards
(`write_report`), so a failure while drawing leaves no half-written report folder. Figures are
7.5 inches wide, which fits an A4 or letter page with its margins, and at most 10 tall.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.study.methods_report import Comparison, OutcomeReport, StudyReport
from analysis.study.seed_report import format_p as _p

PAGE_WIDTH = 7.5  # inches
MAX_HEIGHT = 10.0


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def outcome_figure(report: StudyReport, o: OutcomeReport) -> Any:
    """Contrasts with their 95% intervals on top, each level's fitted curve and band below."""
    plt = _plt()
    sel = report.selection
    levels = sel.levels
    cols = 3 if len(levels) <= 6 else 4 if len(levels) <= 12 else 5
    rows = math.ceil(len(levels) / cols)
    top = min(1.0 + 0.28 * len(o.contrasts), 3.5)
    height = min(top + 1.9 * rows + 0.6, MAX_HEIGHT)
    fig = plt.figure(figsize=(PAGE_WIDTH, height), layout="constrained")
    upper, lower = fig.subfigures(2, 1, height_ratios=[top, height - top])
    ax = upper.subplots()
    ys = list(range(len(o.contrasts)))[::-1]
    for y, ct in zip(ys, o.contrasts, strict=True):
        ax.plot([ct.lower, ct.upper], [y, y], color="k", lw=1.4)
        ax.plot(ct.estimate, y, "o", color="k", ms=4)
    ax.axvline(0.0, color="0.5", lw=0.8, ls=":")
    ax.set_yticks(ys, [ct.level for ct in o.contrasts], fontsize=8)
    ax.set_ylim(-0.7, len(o.contrasts) - 0.3)
    ax.set_xlabel(f"difference in {o.outcome} rating vs {report.reference} (95% interval)")
    ax.tick_params(axis="x", labelsize=8)
    ax.set_title(
        f"{o.outcome}: {sel.factor} contrasts and {sel.distance} smooths "
        f"({o.n} evaluations kept, {sel.n_dropped} dropped)",
        fontsize=10,
    )
    axes = lower.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    lo, hi = o.curves["lower"].min(), o.curves["upper"].max()
    pad = 0.05 * (hi - lo)
    for i, ax in enumerate(axes.flat):
        if i >= len(levels):
            ax.set_visible(False)
            continue
        level = levels[i]
        cur = o.curves[o.curves["level"] == level]
        x = cur[sel.distance]
        ax.fill_between(x, cur["lower"], cur["upper"], color="0.82", lw=0)
        ax.plot(x, cur["fit"], color="k", lw=1.3)
        seen = sel.kept.loc[sel.kept[sel.factor] == level, sel.distance]
        ax.plot(seen, [lo - pad * 0.5] * len(seen), "|", color="0.4", ms=4, alpha=0.5)
        row = o.smooths.get(level, {})
        ax.set_title(
            f"{level}\nEDF {row.get('edf', float('nan')):.2f}, p {_p(row.get('p', 1.0))}",
            fontsize=8,
        )
        ax.set_ylim(lo - pad, hi + pad)
        ax.tick_params(labelsize=7)
        if i % cols == 0:
            ax.set_ylabel(f"fitted {o.outcome}", fontsize=8)
        if i >= len(levels) - cols:
            ax.set_xlabel(sel.distance, fontsize=8)
            ax.xaxis.set_tick_params(labelbottom=True)
    lower.suptitle(o.comparison.verdict, fontsize=7, wrap=True)
    return fig


def figure_name(outcome: str) -> str:
    return f"smooths_{outcome}.png"


def contrasts_table(report: StudyReport) -> pd.DataFrame:
    sel = report.selection
    rows = [
        {"outcome": o.outcome, "reference": report.reference, **vars(ct)}
        for o in report.outcomes.values()
        for ct in o.contrasts
    ]
    return pd.DataFrame(rows).assign(n_kept=sel.n_kept, n_dropped=sel.n_dropped)


def smooths_table(report: StudyReport) -> pd.DataFrame:
    sel = report.selection
    frames = [o.curves.assign(outcome=o.outcome) for o in report.outcomes.values()]
    table = pd.concat(frames, ignore_index=True)
    table = table[["outcome", *[c for c in table.columns if c != "outcome"]]]
    return table.assign(n_kept=sel.n_kept, n_dropped=sel.n_dropped)


def comparison_table(report: StudyReport) -> pd.DataFrame:
    sel = report.selection
    rows = [
        {
            "outcome": o.outcome,
            "formula_common": o.formula_common,
            "formula_by": o.formula_by,
            **vars(o.comparison),
        }
        for o in report.outcomes.values()
    ]
    return pd.DataFrame(rows).assign(n_kept=sel.n_kept, n_dropped=sel.n_dropped)


def _mean_sd(mean: float, sd: float) -> str:
    return f"{mean:.2f} ({sd:.2f})" if pd.notna(sd) else f"{mean:.2f} (-)"


def descriptives_lines(report: StudyReport) -> pd.DataFrame:
    """The descriptive table as printed: n and "mean (SD)" of each rating per row."""
    d = report.descriptives
    keys = [c for c in d.columns if c == "condition" or c == report.selection.factor]
    shown = d[keys].copy()
    shown["n"] = d["n"]
    for outcome in report.outcomes:
        shown[f"{outcome} mean (SD)"] = [
            _mean_sd(m, s) for m, s in zip(d[f"{outcome}_mean"], d[f"{outcome}_sd"], strict=True)
        ]
    return shown


def _md_table(frame: pd.DataFrame) -> str:
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(map(str, r)) + " |" for r in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def _kept_line(report: StudyReport, o: OutcomeReport) -> str:
    return (
        f"Evaluations: {o.n} kept, {report.selection.n_dropped} dropped "
        '(reasons in "Evaluations kept and dropped").'
    )


def markdown(report: StudyReport) -> str:
    """report.md: the selection, then per outcome contrasts, smooths and the comparison."""
    sel = report.selection
    by_level = sel.by_level().reset_index()
    pa = dict(sel.participants)
    lines = [
        "# Method-comparison report",
        "",
        f"Export `{report.source}`; factor `{sel.factor}` (reference `{report.reference}`), "
        f"distance `{sel.distance}`, basis dimension k = {sel.k}; participant random "
        "intercepts in every model.",
        "",
        "## Evaluations kept and dropped",
        "",
        f"{len(sel.evaluations)} evaluations in the export: {sel.n_kept} kept, "
        f"{sel.n_dropped} dropped.",
        "",
        _md_table(
            pd.DataFrame(
                [{"reason": r, "evaluations": n} for r, n in sel.dropped_by_reason().items()]
                or [{"reason": "(none)", "evaluations": 0}]
            )
        ),
        "",
        f"By `{sel.factor}`:",
        "",
        _md_table(by_level),
        "",
        f"Participants: {pa.pop('total')} in the export, {pa.pop('kept')} with kept evaluations"
        + "".join(f"; {n} {why}" for why, n in pa.items())
        + ".",
        "",
        f"## Ratings by condition and {sel.factor}",
        "",
        "The kept evaluations, before any model: n, mean and SD (1 to 7) of each rating "
        "(`descriptives.csv`).",
        "",
        _md_table(descriptives_lines(report)),
    ]
    for o in report.outcomes.values():
        cmp = o.comparison
        contrasts = pd.DataFrame(
            [
                {
                    "term": ct.term,
                    "estimate": f"{ct.estimate:.3f}",
                    "se": f"{ct.se:.3f}",
                    "95% interval": f"{ct.lower:.3f} to {ct.upper:.3f}",
                    "t": f"{ct.t:.2f}",
                    "p": _p(ct.p),
                }
                for ct in o.contrasts
            ]
        )
        smooths = pd.DataFrame(
            [
                {"level": lv, "EDF": f"{r['edf']:.2f}", "F": f"{r['F']:.2f}", "p": _p(r["p"])}
                for lv, r in o.smooths.items()
            ]
        )
        models = pd.DataFrame(
            [
                {"model (ML)": f"`{o.formula_common}`", "AIC": f"{cmp.aic_common:.2f}"},
                {"model (ML)": f"`{o.formula_by}`", "AIC": f"{cmp.aic_by:.2f}"},
            ]
        )
        lines += [
            "",
            f"## {o.outcome}",
            "",
            _kept_line(report, o),
            "",
            f"### Contrasts against {report.reference}",
            "",
            f"`{o.formula_common}` (REML); 95% intervals from the t distribution on the "
            "residual degrees of freedom, as mgcv's p-values.",
            "",
            _md_table(contrasts),
            "",
            f"### Distance smooths by {sel.factor}",
            "",
            f"`{o.formula_by}` (REML); the fitted rating without participant effects with "
            f"pointwise 95% bands is in `smooths.csv` and drawn in `{figure_name(o.outcome)}`.",
            "",
            _md_table(smooths),
            "",
            f"![{o.outcome}]({figure_name(o.outcome)})",
            "",
            f"### Does the distance effect differ by {sel.factor}?",
            "",
            _md_table(models),
            "",
            _test_line(cmp),
            "",
            f"**{cmp.verdict}**",
        ]
    return "\n".join(lines) + "\n"


def _test_line(cmp: Comparison) -> str:
    if cmp.p is None:
        return (
            f"No likelihood-ratio test: {cmp.no_test}; anova.gam's deviance difference "
            f"{cmp.deviance:.2f} on {cmp.df:.2f} df. The AICs above compare the models."
        )
    return (
        f'Likelihood-ratio test (`anova.gam(..., test = "Chisq")`): deviance '
        f"{cmp.deviance:.2f} on {cmp.df:.2f} df, p = {cmp.p:.3g}."
    )


def render_report(report: StudyReport) -> dict[str, bytes]:
    """Every file of the report folder, by name, as bytes."""
    plt = _plt()
    files: dict[str, bytes] = {}
    for o in report.outcomes.values():
        fig = outcome_figure(report, o)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=150)
        plt.close(fig)
        files[figure_name(o.outcome)] = buf.getvalue()
    files["contrasts.csv"] = contrasts_table(report).to_csv(index=False).encode()
    files["smooths.csv"] = smooths_table(report).to_csv(index=False).encode()
    files["comparison.csv"] = comparison_table(report).to_csv(index=False).encode()
    files["descriptives.csv"] = report.descriptives.to_csv(index=False).encode()
    files["evaluations_by_level.csv"] = report.selection.by_level().to_csv().encode()
    files["report.md"] = markdown(report).encode()
    return files


def write_report(files: dict[str, bytes], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("report.md", *sorted(n for n in files if n != "report.md")):
        (out / name).write_bytes(files[name])
        written.append(out / name)
    return written


def terminal_table(report: StudyReport) -> str:
    """The short table printed by the command: contrasts and the verdict per outcome."""
    sel = report.selection
    lines = [
        f"{sel.n_kept} evaluations kept, {sel.n_dropped} dropped" + (":" if sel.n_dropped else "")
    ]
    lines += [f"  {n:6d}  {r}" for r, n in sel.dropped_by_reason().items()]
    lines += ["", *descriptives_lines(report).to_string(index=False).splitlines()]
    width = max(len(ct.term) for o in report.outcomes.values() for ct in o.contrasts) + 2
    for o in report.outcomes.values():
        lines += [
            "",
            f"{o.outcome} (vs {report.reference})",
            f"{'term':{width}s}{'estimate':>9s}  {'95% interval':^19s}{'p':>8s}",
        ]
        for ct in o.contrasts:
            lines.append(
                f"{ct.term:{width}s}{ct.estimate:9.3f}  [{ct.lower:7.3f}, {ct.upper:7.3f}]"
                f"{_p(ct.p):>8s}"
            )
        lines.append(o.comparison.verdict)
    return "\n".join(lines)
