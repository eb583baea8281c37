"""What a power analysis writes: the power table (CSV), every replicate's p-values (CSV), the
settings and the smallest N per test (JSON), and the power curve (PNG or PDF)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

POWER_CSV, REPLICATES_CSV, POWER_JSON = "power.csv", "replicates.csv", "power.json"
FIGURE_STEM = "power_curve"
FIGURE_FORMATS = ("png", "pdf")


def power_figure(summary: pd.DataFrame, target: float, path: Path) -> None:
    """Power against participants, one line per test with its Monte Carlo interval as a band,
    and the target as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for test, group in summary.groupby("test", sort=False):
        g = group.sort_values("n")
        (line,) = ax.plot(g["n"], g["power"], marker="o", label=str(test))
        ax.fill_between(g["n"], g["lower"], g["upper"], color=line.get_color(), alpha=0.2)
    ax.axhline(target, color="0.4", linestyle="--", linewidth=1, label=f"target {target:g}")
    ax.set_xticks(sorted(summary["n"].unique()))
    ax.set_xlabel("participants")
    ax.set_ylabel("power")
    ax.set_ylim(0, 1.02)
    interval = summary["interval"].iloc[0] if len(summary) else ""
    ax.set_title(f"Power by number of participants ({interval} Monte Carlo intervals)", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, metadata={"CreationDate": None} if path.suffix == ".pdf" else None)
    plt.close(fig)


def write_outputs(
    out: Path,
    summary: pd.DataFrame,
    replicates: pd.DataFrame,
    settings: dict,
    smallest: dict,
    target: float,
    figure_format: str = "png",
) -> list[Path]:
    """Write the four files into ``out`` (created); returns their paths."""
    out.mkdir(exist_ok=True)
    paths = [out / POWER_CSV, out / REPLICATES_CSV, out / POWER_JSON]
    summary.to_csv(paths[0], index=False)
    replicates.to_csv(paths[1], index=False)
    document = {
        **settings,
        "smallest_n": smallest,
        "failed_fits": int((replicates["error"] != "").sum()),
    }
    paths[2].write_text(json.dumps(document, indent=2) + "\n")
    figure = out / f"{FIGURE_STEM}.{figure_format}"
    power_figure(summary, target, figure)
    return [*paths, figure]
