"""Writing the report: tables as CSV and LaTeX, figures as PDF and PNG, and report.html
from the Jinja2 template with every figure embedded as a data URI, so that the page opens
with no network and no other file."""

from __future__ import annotations

import base64
import io
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.report import figures
from analysis.report.build import Report
from analysis.report.descriptives import SCALE, shares
from analysis.report.latex import tabular
from analysis.report.waves import CAPTIONS, waves_records

TEMPLATES = Path(__file__).parent / "templates"


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(("html", "j2")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    return env


def _num(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, float):
        if value != 0 and abs(value) < 10**-digits:
            return f"{value:.1e}"
        return f"{value:.{digits}f}"
    return str(value)


class Writer:
    """Collects the files of one report under `root` and the figures' data URIs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "tables").mkdir(parents=True, exist_ok=True)
        (root / "figures").mkdir(parents=True, exist_ok=True)
        self.images: dict[str, str] = {}

    def table(self, name: str, frame: pd.DataFrame, caption: str, digits: int = 2) -> None:
        frame.to_csv(self.root / "tables" / f"{name}.csv", index=False)
        (self.root / "tables" / f"{name}.tex").write_text(
            tabular(frame, digits=digits, caption=caption), encoding="utf-8"
        )

    def figure(self, name: str, fig: Any) -> None:
        fig.savefig(self.root / "figures" / f"{name}.pdf")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=130)
        (self.root / "figures" / f"{name}.png").write_bytes(buffer.getvalue())
        self.images[name] = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
        figures.plt().close(fig)


def _analysed_line(report: Report) -> str | None:
    cmp = report.models.comparison
    if cmp is None:
        return None
    sel = cmp.selection
    dropped = "; ".join(f"{why}: {n}" for why, n in sel.dropped_by_reason().items())
    return (
        f"Analysed (models): {sel.participants.get('kept', 0)} participants, {sel.n_kept} "
        f"evaluations\n(left out: {dropped or 'none'})"
    )


def _descriptive_rows(table: pd.DataFrame, factor: str) -> list[dict[str, Any]]:
    rows = []
    for _, r in table.iterrows():
        rows.append({
            "rating": r["rating"], "condition": r["condition"], "level": r[factor],
            "n": int(r["n"]), "mean": r["mean"], "sd": r["sd"], "median": r["median"],
            "bars": [{"point": p, "share": s, "n": int(r[f"n_{p}"])}
                     for p, s in zip(SCALE, shares(r), strict=True)],
        })  # fmt: skip
    return rows


def render_files(report: Report, root: Path) -> None:
    from analysis.study.seed_report import figure3, table_latex

    w = Writer(root)
    opts, m = report.options, report.models
    w.figure("flow", figures.flow_figure(report.flow, _analysed_line(report)))
    w.table("flow", report.flow.table(), "participant flow: boxes of the diagram")
    w.table("states", report.flow.by_state.reset_index(), "participants by state and outcome")
    w.table("descriptives", report.descriptives,
            f"ratings per condition and {opts.factor}: n, mean, SD, median, count per point")  # fmt: skip
    if m.seed.table is not None:
        m.seed.table.to_csv(root / "tables" / "gamm_table_s2.csv", index=False)
        (root / "tables" / "gamm_table_s2.tex").write_text(table_latex(m.seed.table), "utf-8")
        w.figure("gamm_smooths", figure3(m.seed.fits))
    if m.seed.ordinal is not None:
        w.table("ordinal", m.seed.ordinal, "Gaussian vs ordinal (cumulative logit) GAMMs")
    contrasts = m.contrasts()
    if m.comparison is not None:
        cmp = m.comparison
        w.table("contrasts", contrasts.drop(columns=["term"]),
                f"{opts.factor} contrasts against {cmp.reference!r}")  # fmt: skip
        curves = {name: o.curves for name, o in cmp.outcomes.items()}
        w.figure("smooths", figures.smooth_figure(curves, cmp.selection.distance, opts.factor))
        w.figure("contrasts", figures.forest_figure(contrasts, opts.factor))
    seg = report.segregation
    if seg.table is not None:
        w.table("segregation", seg.table, "segregation before/after per arm", digits=4)
        w.figure("segregation", figures.segregation_figure(seg.table))
    waves = waves_records(report.extra.get("waves"))
    for name, table in report.extra["waves"].tables.items() if waves else ():
        if not table.empty:
            w.table(f"waves_{name}", table, CAPTIONS[name], digits=4)
    coding = report.coding
    if coding.kappa is not None and coding.alpha is not None:
        w.table("coding_kappa", coding.kappa, "Cohen's kappa per coder pair and code", digits=3)
        w.table("coding_alpha", coding.alpha, "Krippendorff's alpha per code", digits=3)
    html = (
        _environment()
        .get_template("report.html.j2")
        .render(
            r=report,
            opts=opts,
            images=w.images,
            flow=report.flow,
            descriptives=_descriptive_rows(report.descriptives, opts.factor),
            scale=SCALE,
            seed_table=None if m.seed.table is None else m.seed.table.to_dict(orient="records"),
            ordinal=None if m.seed.ordinal is None else m.seed.ordinal.to_dict(orient="records"),
            contrasts=contrasts.to_dict(orient="records"),
            segregation=None if seg.table is None else seg.table.to_dict(orient="records"),
            kappa=None if coding.kappa is None else coding.kappa.to_dict(orient="records"),
            alpha=None if coding.alpha is None else coding.alpha.to_dict(orient="records"),
            states=report.flow.by_state,
            waves=waves,
        )
    )
    (root / "report.html").write_text(html, encoding="utf-8")


def write_report(report: Report, out: Path) -> list[Path]:
    """Render into a staging folder inside `out`, then move the files in: all or nothing."""
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".report-", dir=out))
    try:
        render_files(report, staging)
        written = []
        for f in sorted(p for p in staging.rglob("*") if p.is_file()):
            target = out / f.relative_to(staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            f.replace(target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
