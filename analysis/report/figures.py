"""The report's figures (matplotlib, Agg): the participant flow, the smooths with their
bands, the method contrasts as a forest plot, and segregation before/after per arm. Each is
returned as a Figure; `render.save_figure` writes it as PDF and PNG."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis.report.flow import OUTCOME_LABELS, Flow


def plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


_BOX = {"boxstyle": "round,pad=0.5", "facecolor": "white", "edgecolor": "#333", "lw": 1.0}
_EXIT = {**_BOX, "facecolor": "#f5f5f5", "edgecolor": "#777"}


def flow_figure(flow: Flow, analysed: str | None = None) -> Any:
    """CONSORT-style boxes: the main column down the left, who left at each stage on the
    right; `analysed` (a line of text) closes the column when the models ran."""
    rows = 2 + 2 * len(flow.stages) + (1 if analysed else 0)
    fig, ax = plt().subplots(figsize=(8.5, 0.8 * rows + 0.4))
    ax.set_axis_off()
    ax.set_xlim(0, 1)
    ax.set_ylim(-(2 * len(flow.stages) + (1.7 if analysed else 0.6)), 0.6)
    main_x, exit_x = 0.27, 0.73
    y = 0.0
    who = "test participants included" if flow.with_test else (
        f"{flow.n_test} test participants (previews, bots) left out")  # fmt: skip
    ax.text(main_x, y, f"Opened the study link\nn = {flow.started}\n({who})",
            ha="center", va="center", bbox=_BOX, fontsize=9)  # fmt: skip
    for stage in flow.stages:
        y_exit, y_next = y - 1.0, y - 2.0
        ax.annotate("", xy=(main_x, y_next + 0.35), xytext=(main_x, y - 0.4),
                    arrowprops={"arrowstyle": "->", "color": "#333"})  # fmt: skip
        if stage.exits:
            lines = [f"Left {stage.name}: n = {sum(stage.exits.values())}"]
            lines += [f"  {OUTCOME_LABELS.get(o, o)}: {n}" for o, n in stage.exits.items()]
            # the line runs under the box, which covers its end whatever the box's width
            ax.plot([main_x, exit_x], [y_exit, y_exit], color="#777", lw=0.8, zorder=1)
            ax.text(exit_x, y_exit, "\n".join(lines), ha="center", va="center", bbox=_EXIT,
                    fontsize=8, zorder=3)  # fmt: skip
        else:
            ax.text(exit_x, y_exit, f"None left {stage.name}", ha="center", va="center",
                    fontsize=8, color="#555")  # fmt: skip
        ax.text(main_x, y_next, f"{stage.went_on_label}\nn = {stage.went_on}",
                ha="center", va="center", bbox=_BOX, fontsize=9)  # fmt: skip
        y = y_next
    if analysed:
        ax.annotate("", xy=(main_x, y - 0.65), xytext=(main_x, y - 0.35),
                    arrowprops={"arrowstyle": "->", "color": "#333"})  # fmt: skip
        ax.text(main_x, y - 1.0, analysed, ha="center", va="center", bbox=_BOX, fontsize=8,
                wrap=True)  # fmt: skip
    fig.tight_layout()
    return fig


def smooth_figure(curves: dict[str, pd.DataFrame], distance: str, factor: str) -> Any:
    """One panel per rating: each level's fitted rating against the distance, 95% band."""
    fig, axes = plt().subplots(1, len(curves), figsize=(5.2 * len(curves), 4.0), squeeze=False)
    colours = plt().get_cmap("tab10")
    for ax, (outcome, frame) in zip(axes[0], curves.items(), strict=True):
        for i, (level, g) in enumerate(frame.groupby("level", sort=True)):
            col = colours(i % 10)
            ax.fill_between(g[distance], g["lower"], g["upper"], color=col, alpha=0.18, lw=0)
            ax.plot(g[distance], g["fit"], color=col, lw=1.6, label=str(level))
        ax.set_xlabel(distance.capitalize())
        ax.set_ylabel(f"fitted {outcome} (1-7)")
        ax.set_title(f"{outcome}: smooth of {distance} per {factor}, 95% bands", fontsize=9)
    axes[0][0].legend(fontsize=7, title=factor, title_fontsize=7)
    fig.tight_layout()
    return fig


def forest_figure(contrasts: pd.DataFrame, factor: str) -> Any:
    """Each level against the reference, per rating: estimate and 95% interval."""
    outcomes = list(dict.fromkeys(contrasts["outcome"]))
    levels = list(dict.fromkeys(contrasts["level"]))
    height = 1.0 + 0.45 * len(levels) * len(outcomes)
    fig, ax = plt().subplots(figsize=(7.0, height))
    ticks, labels = [], []
    pos = 0.0
    marks = {o: m for o, m in zip(outcomes, "os^Dv", strict=False)}
    for outcome in outcomes:
        for level in levels:
            row = contrasts[(contrasts["outcome"] == outcome) & (contrasts["level"] == level)]
            if row.empty:
                continue
            r = row.iloc[0]
            ax.plot([r["lower"], r["upper"]], [pos, pos], color="#333", lw=1.2)
            ax.plot(r["estimate"], pos, marks[outcome], color="#1f5fa8", ms=6)
            ticks.append(pos)
            labels.append(f"{outcome}: {level}")
            pos -= 1.0
        pos -= 0.5
    ax.axvline(0.0, color="#999", lw=0.8, ls="--")
    ax.set_yticks(ticks, labels, fontsize=8)
    ref = contrasts["reference"].iloc[0]
    ax.set_xlabel(f"difference in mean rating against {factor} {ref!r} (95% interval)")
    fig.tight_layout()
    return fig


def segregation_figure(table: pd.DataFrame) -> Any:
    """Change of each index after each arm's recourses, with its bootstrap 95% interval."""
    indices = list(dict.fromkeys(table["index"]))
    arms = table.loc[table["grouping"] == "strategy", "arm"].unique().tolist()
    ncol = min(4, len(indices))
    nrow = int(np.ceil(len(indices) / ncol))
    fig, axes = plt().subplots(nrow, ncol, figsize=(3.2 * ncol, 0.35 * len(arms) * nrow + 1.6 * nrow),
                               squeeze=False)  # fmt: skip
    for ax, index in zip(axes.ravel(), indices, strict=False):
        rows = table[(table["grouping"] == "strategy") & (table["index"] == index)]
        y = np.arange(len(rows))[::-1]
        d = rows["difference"].to_numpy(float)
        # a percentile interval need not cover the estimate (analysis.segregation.effects)
        err = [np.clip(d - rows["ci_low"].to_numpy(float), 0, None),
               np.clip(rows["ci_high"].to_numpy(float) - d, 0, None)]  # fmt: skip
        ax.errorbar(d, y, xerr=np.nan_to_num(err), fmt="o", color="#1f5fa8", ms=4, lw=1,
                    capsize=2)  # fmt: skip
        ax.axvline(0.0, color="#999", lw=0.8, ls="--")
        ax.set_yticks(y, rows["arm"].tolist(), fontsize=7)
        ax.set_title(index, fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    for ax in axes.ravel()[len(indices) :]:
        ax.set_axis_off()
    fig.supxlabel("after − before (95% bootstrap interval)", fontsize=8)
    fig.tight_layout()
    return fig
