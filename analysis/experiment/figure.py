"""The seed paper's Figure 2 for an experiment run: the population by group and outcome, and
each method's counterfactuals by group."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analysis.experiment.space import population_features
from recourse_engine.datasets import Dataset


def scatter(data: Dataset, outputs: dict[str, Any], methods: Sequence[str], path: Path) -> None:
    """The paper's Figure 2: the population by group and outcome, and each method's
    counterfactuals by group (first two non-sensitive features)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = population_features(data, data.codes)
    n = len(methods) + 1
    cols = min(n, 4)
    fig, axes = plt.subplots(
        math.ceil(n / cols), cols, figsize=(4 * cols, 4 * math.ceil(n / cols)), squeeze=False
    )
    a, b = data.group_labels
    rejected = outputs["rejected"]
    for i, ax in enumerate(axes.ravel()):
        if i >= n:
            ax.axis("off")
            continue
        for g, lab in ((1, b), (0, a)):
            for y, mark in ((1, "accepted"), (0, "default")):
                sel = (data.group == g) & (data.y == y)
                ax.scatter(x[sel, 0], x[sel, 1], s=6, alpha=0.35, label=f"{lab} {mark}")
        if i == 0:
            ax.set_title("origin")
            ax.legend(fontsize=6)
            continue
        name = methods[i - 1]
        res = outputs[name]
        cf = population_features(data, np.nan_to_num(res.counterfactuals))
        g = data.group[rejected]
        for grp, lab, colour in ((1, b, "green"), (0, a, "red")):
            sel = res.valid & (g == grp)
            ax.scatter(cf[sel, 0], cf[sel, 1], s=8, c=colour, label=f"{lab} recourse")
        ax.set_title(name)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
