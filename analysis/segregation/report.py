"""The effects report: an HTML page with an index table and three kinds of PNG figure.

* before/after scatter of the first two principal components (fitted on the
  original profiles) by group, one panel per strategy;
* index table: before, after, difference with its bootstrap 95% interval, worse?;
* compliance curves: each index against the share π of participants who
  implement, with the rating-implied partial-compliance result marked.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import numpy as np

from .effects import INDICES, StudyPopulation

LABELS = {
    "centralization": "Centralization (higher = more segregated)",
    "atkinson": "Atkinson index (higher = more segregated)",
    "avg_proximity": "Average proximity (lower = more segregated)",
}


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def scatter_png(pop: StudyPopulation, minority: Any, path: Path) -> None:
    from sklearn.decomposition import PCA

    plt = _plt()
    is_min = pop.groups.astype(str) == str(minority)
    k = min(2, pop.X0.shape[1], len(pop.X0))
    pca = PCA(n_components=k).fit(pop.X0)

    def proj(X: np.ndarray) -> np.ndarray:
        z = pca.transform(X)
        return z if z.shape[1] == 2 else np.column_stack([z[:, 0], np.zeros(len(z))])

    panels = [("original profiles", pop.X0)] + [(s, pop.cf[s]) for s in pop.strategies]
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.8 * rows), squeeze=False)
    z0 = proj(pop.X0)
    others = sorted(set(pop.groups.astype(str)) - {str(minority)})
    min_name = f"{minority} (minority)"
    maj_name = others[0] if others else "majority"
    for ax, (title, X) in zip(axes.ravel(), panels, strict=False):
        z = proj(X)
        for mask, name, color in (
            (~is_min, maj_name, "#1f77b4"),
            (is_min, min_name, "#d62728"),
        ):
            ax.scatter(z[mask, 0], z[mask, 1], s=14, alpha=0.6, color=color, label=name)
        if X is not pop.X0:
            ax.scatter(z0[:, 0], z0[:, 1], s=6, color="0.8", zorder=0, label="original")
        ax.set_title(title)
        ax.set_xlabel("PC1")
        ax.set_ylabel("PC2")
    for ax in axes.ravel()[len(panels) :]:
        ax.axis("off")
    axes.ravel()[0].legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def curves_png(effects: dict[str, Any], path: Path) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, len(INDICES), figsize=(5 * len(INDICES), 3.8), squeeze=False)
    for ax, idx in zip(axes[0], INDICES, strict=True):
        ax.axhline(effects["before"][idx], color="0.5", ls="--", lw=1, label="original")
        for s, e in effects["strategies"].items():
            line = ax.plot(e["curve"]["pi"], e["curve"][idx], marker="o", ms=3, label=s)[0]
            part = e["partial"]
            lo = max(0.0, part[idx]["mean"] - part[idx]["q025"])
            hi = max(0.0, part[idx]["q975"] - part[idx]["mean"])
            ax.errorbar(
                [part["share_implemented"]],
                [part[idx]["mean"]],
                yerr=[[lo], [hi]],
                fmt="*",
                ms=10,
                color=line.get_color(),
            )
        ax.set_xlabel("share implementing (π); ★ = rating-implied")
        ax.set_title(LABELS[idx], fontsize=9)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.4f}"


def html_page(effects: dict[str, Any]) -> str:
    e = effects
    head = (
        "<tr><th>strategy</th><th>index</th><th>before</th><th>after</th><th>difference</th>"
        "<th>bootstrap 95% CI</th><th>worse?</th><th>partial mean [2.5%, 97.5%]</th></tr>"
    )
    rows = []
    for s, st in e["strategies"].items():
        for i in INDICES:
            d = st["difference"][i]
            ci = d["ci95"]
            part = st["partial"][i]
            worse = "yes" if i in st["worse"] else "no"
            if i in st["worse_ci_excludes_0"]:
                worse += " (CI excludes 0)"
            rows.append(
                f"<tr><td>{html.escape(s)}</td><td>{i}</td><td>{_fmt(e['before'][i])}</td>"
                f"<td>{_fmt(st['after'][i])}</td><td>{_fmt(d['estimate'])}</td>"
                f"<td>{'–' if ci is None else f'[{ci[0]:.4f}, {ci[1]:.4f}]'}"
                f" (mean {_fmt(d.get('bootstrap_mean'))})</td><td>{worse}</td>"
                f"<td>{_fmt(part['mean'])} [{_fmt(part['q025'])}, {_fmt(part['q975'])}]</td></tr>"
            )
        rows.append(
            f"<tr class='sum'><td>{html.escape(s)}</td><td colspan='7'>{st['n_worse']} of 3 "
            f"indices worse; shown to {st['n_shown']}, {st['n_impossible']} marked impossible; "
            f"mean implementation probability {st['partial']['mean_probability']:.3f}</td></tr>"
        )
    groups = ", ".join(f"{html.escape(k)}: {v}" for k, v in e["groups"].items())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Segregation effects of the recourses shown</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:3px 8px;font-size:13px}}tr.sum td{{background:#f4f4f4}}</style>
</head><body>
<h1>Segregation effects of the recourses shown</h1>
<p>{e["n_participants"]} participants ({groups}); minority: {html.escape(str(e["minority"]))};
ε = {e["eps"]:.4f} (q = {e["eps_quantile"]}); {e["clusters"]} KMeans neighbourhoods;
{e["bootstrap"]} participant-bootstrap draws; {e["draws"]} partial-compliance draws
(probability from: {html.escape(e["compliance_mapping"])}).</p>
<table>{head}{"".join(rows)}</table>
<h2>Profiles before and after (first two principal components)</h2>
<img src="scatter.png" alt="before/after scatter by group">
<h2>Compliance curves</h2>
<img src="compliance.png" alt="indices against the share implementing">
</body></html>
"""


def write_report(effects: dict[str, Any], pop: StudyPopulation, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    scatter_png(pop, effects["minority"], out / "scatter.png")
    curves_png(effects, out / "compliance.png")
    page = out / "report.html"
    page.write_text(html_page(effects), encoding="utf-8")
    return [page, out / "scatter.png", out / "compliance.png"]
