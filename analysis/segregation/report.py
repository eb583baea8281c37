"""The effects report: an HTML page with index tables and PNG figures.

A method comparison is read from this page, so it must not overstate: the verdict
column says "worse" or "better" only when the bootstrap 95% interval of the change
excludes zero and the Holm-adjusted p-value across the table is below 0.05 (the unadjusted
reading and the point estimate's direction are shown beside it; a table whose resamples
are too few for any verdict says so), and the page
says next to the table and the curves how the two relate — the curve's π = 1 point
is the table's "after", and the ★ is a different population of implementers.
Figures are sized by the number of arms and lay out with `constrained_layout`, and
long strategy names are wrapped, so that many arms and long names are not clipped.
"""

from __future__ import annotations

import html
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from .catalogue import CATALOGUE, VERDICTS, names
from .effects import StudyPopulation

GROUPING_TITLES = {"strategy": "strategy", "method": "recourse method", "origin": "origin"}
CURVE_NOTE = (
    "The curves let everyone shown a recourse implement it with probability π — the same "
    "people as the table, so the curve at π = 1 is the table's “after” and at π = 0 the "
    "“before” (people who marked an item impossible are included in both). The ★ is the "
    "rating-implied partial compliance: each implements with (action − 1)/6 of their own "
    "rating and never when they marked an item impossible; it is placed at the share of "
    "those shown who implemented, with its 2.5–97.5% Monte-Carlo range."
)
VERDICT_NOTE = (
    "Verdict: “worse” or “better” only when the bootstrap 95% interval of the change lies "
    "entirely on that side of zero and its bootstrap p-value, Holm-adjusted across the {m} "
    "intervals of this table, is below 0.05; otherwise “no clear change”. “95% CI alone” is "
    "the unadjusted reading of the interval. The direction of the point estimate alone is "
    "shown in the column “estimate says”."
)
FEW_NOTE = (
    "With {b} usable resamples no p-value can go below 2/{b1} ≈ {floor:.3g}, too coarse for "
    "Holm across {m} intervals: no verdict here can be “worse” or “better”. Rerun with "
    "--bootstrap {needed} or more."
)


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _wrap(text: str, width: int) -> str:
    """Wrap a name at `width`, also inside long tokens such as lowest_cost@weighted[...]."""
    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False))


def scatter_png(pop: StudyPopulation, minority: Any, path: Path) -> None:
    fig = scatter_figure(pop, minority)
    fig.savefig(path, dpi=110)
    _plt().close(fig)


def scatter_figure(pop: StudyPopulation, minority: Any) -> Any:
    """Before/after scatter on the first two principal components, one panel per strategy."""
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
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(4.2 * cols, 3.9 * rows + 0.6),
        squeeze=False,
        layout="constrained",
        sharex=True,
        sharey=True,
    )
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
        ax.set_title(_wrap(title, 34), fontsize=10)
        ax.set_xlabel("PC1")
        ax.set_ylabel("PC2")
    for ax in axes.ravel()[len(panels) :]:
        ax.axis("off")
    handles, names = axes.ravel()[min(1, len(panels) - 1)].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=3, fontsize=9)
    return fig


def curves_png(effects: dict[str, Any], path: Path, grouping: str = "strategy") -> None:
    fig = curves_figure(effects, grouping)
    fig.savefig(path, dpi=110)
    _plt().close(fig)


def curves_figure(effects: dict[str, Any], grouping: str = "strategy") -> Any:
    """Each index against π for every arm of `grouping`; each arm's legend entry in a
    panel carries its verdict on that panel's index."""
    plt = _plt()
    arms = _arms(effects, grouping)
    n_arms = max(1, len(arms))
    labels = {s: _wrap(s, 40) for s in arms}
    legend_lines = 3 + sum(v.count("\n") + 1 for v in labels.values())
    fig, axes = plt.subplots(
        1,
        len(CATALOGUE),
        figsize=(5.2 * len(CATALOGUE), 4.0 + 0.19 * legend_lines),
        squeeze=False,
        layout="constrained",
    )
    cmap = plt.get_cmap("tab10" if n_arms <= 10 else "tab20")
    for ax, idx in zip(axes[0], names(), strict=True):
        ax.axhline(effects["before"][idx], color="0.5", ls="--", lw=1, label="original")
        for k, (s, e) in enumerate(arms.items()):
            color = cmap(k % cmap.N)
            label = f"{labels[s]}: {e['difference'][idx]['verdict']}"
            ax.plot(e["curve"]["pi"], e["curve"][idx], marker="o", ms=3, color=color, label=label)
            part = e["partial"]
            lo = max(0.0, part[idx]["mean"] - part[idx]["q025"])
            hi = max(0.0, part[idx]["q975"] - part[idx]["mean"])
            x = part.get("share_of_shown_implemented", part["share_implemented"])
            ax.errorbar([x], [part[idx]["mean"]], yerr=[[lo], [hi]], fmt="*", ms=10, color=color)
        ax.set_xlabel("share of those shown who implement (π); ★ = rating-implied")
        ax.set_title(CATALOGUE[idx].title, fontsize=10)
        ax.set_xlim(-0.05, 1.05)
        ax.legend(
            loc="upper center",
            bbox_to_anchor=(0.5, -0.14),
            fontsize=8,
            title="verdict (95% CI and Holm)",
            title_fontsize=8,
            frameon=False,
        )
    fig.suptitle(f"Compliance curves by {GROUPING_TITLES.get(grouping, grouping)}", fontsize=11)
    return fig


def _arms(effects: dict[str, Any], grouping: str) -> dict[str, Any]:
    if grouping == "strategy":
        return effects["strategies"]
    return effects.get("by", {}).get(grouping, {})


def groupings(effects: dict[str, Any]) -> list[str]:
    """The strategy grouping first, then every other grouping the effects hold, sorted."""
    return ["strategy", *sorted(effects.get("by", {}))]


def curve_file(grouping: str) -> str:
    return "compliance.png" if grouping == "strategy" else f"compliance_{grouping}.png"


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.4f}"


def _p(v: float | None) -> str:
    return "–" if v is None else f"{v:.3g}"


def verdict_note(e: dict[str, Any], grouping: str) -> str:
    """The verdict rule under a table, with its family's size, and a warning when the
    resamples are too few for any verdict to pass Holm."""
    mult = e.get("multiplicity") or {}
    m = (mult.get("families") or {}).get(grouping, len(CATALOGUE))
    text = VERDICT_NOTE.format(m=m)
    if grouping in mult.get("too_few_resamples", []):
        b = int(e.get("bootstrap_usable", e["bootstrap"]))
        needed = mult["needed"][grouping]
        text += " " + FEW_NOTE.format(b=b, b1=b + 1, floor=2 / (b + 1), m=m, needed=needed)
    return text


def verdict_counts(arm: dict[str, Any]) -> dict[str, int]:
    """How many of the indices got each verdict."""
    got = [arm["difference"][i]["verdict"] for i in names()]
    return {v: got.count(v) for v in VERDICTS}


def _table(e: dict[str, Any], grouping: str) -> str:
    name = html.escape(GROUPING_TITLES.get(grouping, grouping))
    head = (
        f"<tr><th>{name}</th><th>index</th><th>before</th><th>after (= curve at π = 1)</th>"
        "<th>difference</th><th>bootstrap 95% CI</th><th>p (Holm)</th><th>verdict</th>"
        "<th>95% CI alone</th><th>estimate says</th>"
        "<th>rating-implied mean [2.5%, 97.5%]</th></tr>"
    )
    rows = []
    for s, st in _arms(e, grouping).items():
        for i in names():
            d = st["difference"][i]
            ci = d["ci95"]
            part = st["partial"][i]
            said = "worse" if i in st["worse_point_estimate"] else "not worse"
            rows.append(
                f"<tr><td>{html.escape(s)}</td><td>{i}</td><td>{_fmt(e['before'][i])}</td>"
                f"<td>{_fmt(st['after'][i])}</td><td>{_fmt(d['estimate'])}</td>"
                f"<td>{'–' if ci is None else f'[{ci[0]:.4f}, {ci[1]:.4f}]'}"
                f" (mean {_fmt(d.get('bootstrap_mean'))})</td>"
                f"<td>{_p(d.get('p_holm'))}</td>"
                f"<td class='v'>{d['verdict']}</td><td>{d.get('verdict_95', '–')}</td><td>{said}</td>"
                f"<td>{_fmt(part['mean'])} [{_fmt(part['q025'])}, {_fmt(part['q975'])}]</td></tr>"
            )
        c = verdict_counts(st)
        rows.append(
            f"<tr class='sum'><td>{html.escape(s)}</td><td colspan='10'>of {len(CATALOGUE)} indices: "
            f"{c['worse']} worse, {c['better']} better, {c['no clear change']} no clear change; "
            f"shown to {st['n_shown']}, {st['n_impossible']} marked impossible; "
            f"mean implementation probability {st['partial']['mean_probability']:.3f}</td></tr>"
        )
    return f"<table>{head}{''.join(rows)}</table>"


def _section(e: dict[str, Any], grouping: str) -> str:
    title = html.escape(GROUPING_TITLES.get(grouping, grouping))
    extra = ""
    missing = e.get("rows_without_value", {}).get(grouping, 0)
    if missing:
        extra = (
            f"<p>{missing} evaluation(s) have no {title}; they are left out of this table "
            "(their participants keep their profile here).</p>"
        )
    return (
        f"<h2>By {title}</h2>{extra}<p class='note'>{html.escape(verdict_note(e, grouping))}</p>"
        f"{_table(e, grouping)}"
        f"<h3>Compliance curves by {title}</h3><p class='note'>{CURVE_NOTE}</p>"
        f"<img src='{curve_file(grouping)}' alt='indices against the share implementing, "
        f"by {title}'>"
    )


def html_page(effects: dict[str, Any]) -> str:
    e = effects
    groups = ", ".join(f"{html.escape(k)}: {v}" for k, v in e["groups"].items())
    sections = "".join(_section(e, g) for g in groupings(e))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Segregation effects of the recourses shown</title>
<style>body{{font-family:sans-serif;max-width:1200px;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:3px 8px;font-size:13px}}tr.sum td{{background:#f4f4f4}}
td.v{{font-weight:bold}}p.note{{font-size:13px;color:#333}}img{{max-width:100%}}</style>
</head><body>
<h1>Segregation effects of the recourses shown</h1>
<p>{e["n_participants"]} participants ({groups}); minority: {html.escape(str(e["minority"]))};
ε = {e["eps"]:.4f} (q = {e["eps_quantile"]}); {e["clusters"]} KMeans neighbourhoods;
{e["bootstrap"]} participant-bootstrap draws; {e["draws"]} partial-compliance draws
(probability from: {html.escape(e["compliance_mapping"])}).</p>
{sections}
<h2>Profiles before and after (first two principal components)</h2>
<img src="scatter.png" alt="before/after scatter by group">
</body></html>
"""


def write_report(effects: dict[str, Any], pop: StudyPopulation, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    scatter_png(pop, effects["minority"], out / "scatter.png")
    written = [out / "report.html", out / "scatter.png"]
    for g in groupings(effects):
        curves_png(effects, out / curve_file(g), g)
        written.append(out / curve_file(g))
    page = out / "report.html"
    page.write_text(html_page(effects), encoding="utf-8")
    return written
