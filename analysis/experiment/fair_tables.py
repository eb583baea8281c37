"""The fair_rl tables of docs/methods.md, made from an experiment's output folder (so that
the page carries what the run wrote, not numbers copied by hand).

`python -m analysis.experiment.fair_tables DIR` prints two markdown tables: per method,
the mean ± sd over runs of the fairness metrics (`runs.csv`), and per reward variant the
paired difference against the no-fairness reward with its interval and Holm-adjusted p
(`fair_effects.csv`), leaving out the rows whose difference is 0 in every run (listed
under the table instead); and per method and group, the share of the valid recourses that
change more than one item (`factuals.csv`: on the two-routes scenario, a majority member's
recourse that moves both routes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

#: runs.csv metric -> column heading
LEVELS = {
    "success_rate": "SR",
    "proportion_difference": "PD",
    "equal_effectiveness": "EE gap",
    "equal_choice": "ECR gap",
    "cost": "cost",
    "cost_gap": "cost gap",
    "audit_ee_max": "audit EE max",
    "audit_ecr_max": "audit ECR max",
    "audit_cost_max": "audit cost max",
    "twin_action_mismatch": "twin action",
    "twin_recourse_mismatch": "twin recourse",
    "twin_success_mismatch": "twin success",
}


def _variant(label: str) -> str:
    return label.partition("/")[2] or "hybrid"


def _rows(runs: pd.DataFrame) -> list[tuple[str, str]]:
    """(label in runs.csv, name in the table): each fair_rl variant, the no-fairness and the
    untrained fits once (every variant's are the same fit), each variant's mean action,
    then the other methods."""
    labels = list(dict.fromkeys(runs["method"]))
    labels = [m for m in labels if m != "origin"]
    fair = [m for m in labels if m.split("/", 1)[0] == "fair_rl"]
    main = [m for m in fair if not m.endswith(("untrained", "no_fairness", "mean_action"))]
    out = [(m, f"fair_rl ({_variant(m)})" if m == "fair_rl" else m) for m in main]
    for kind, name in (("no_fairness", "no-fairness reward"), ("untrained", "untrained")):
        found = [m for m in fair if m.endswith(kind)]
        if found:
            out.append((found[0], name))
    out += [(m, f"{_variant(m.rsplit('mean_action', 1)[0].rstrip('/-'))}, mean action")
            for m in fair if m.endswith("mean_action")]  # fmt: skip
    out += [(m, m) for m in labels if m not in fair]
    return out


def levels_table(runs: pd.DataFrame) -> str:
    """Mean ± sd over runs per method (sd with ddof 1; one run: sd 0)."""
    have = [k for k in LEVELS if k in set(runs["metric"])]
    lines = [
        "| method | " + " | ".join(LEVELS[k] for k in have) + " |",
        "|---|" + "---|" * len(have),
    ]
    for label, name in _rows(runs):
        cells = []
        for k in have:
            v = runs[(runs["method"] == label) & (runs["metric"] == k)]["value"].astype(float)
            sd = float(v.std(ddof=1)) if len(v) > 1 else 0.0
            cells.append(f"{v.mean():.3f} ± {sd:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def effects_rows(effects: pd.DataFrame, runs: pd.DataFrame) -> str:
    """The variants' differences against the no-fairness reward; rows with a difference of
    0 in every run are named under the table."""
    lines = [
        "| variant | metric | Δ − none | 95% interval | p (Holm) |",
        "|---|---|---|---|---|",
    ]
    zero: list[str] = []
    for r in effects.itertuples():
        a = runs[(runs["method"] == r.method) & (runs["metric"] == r.metric)]
        b = runs[(runs["method"] == r.reference) & (runs["metric"] == r.metric)]
        d = a.merge(b, on="run")
        if ((d["value_x"] - d["value_y"]).abs() < 1e-12).all():
            zero.append(f"{_variant(r.method)}: {r.metric}")
            continue
        lines.append(
            f"| {_variant(r.method)} | {r.metric} | {r.diff_mean:+.3f} | "
            f"[{r.diff_lo:+.3f}, {r.diff_hi:+.3f}] | {r.p_holm:.2g} |"
        )
    note = f"\n{len(effects)} rows in all (Holm across them)"
    if zero:
        note += "; Δ = 0 in every run: " + ", ".join(zero)
    return "\n".join(lines) + "\n" + note + ".\n"


def multi_item_table(factuals: pd.DataFrame, runs: pd.DataFrame) -> str:
    """Per method and group: mean ± sd over runs of the share of valid recourses that
    change more than one item."""
    ok = factuals[factuals["valid"].astype(bool)]
    share = (ok["sparsity"] > 1).groupby([ok["method"], ok["group"], ok["run"]]).mean()
    groups = sorted(ok["group"].unique())
    lines = [
        "| method | " + " | ".join(f"group {g}" for g in groups) + " |",
        "|---|" + "---|" * len(groups),
    ]
    for label, name in _rows(runs):
        cells = []
        for g in groups:
            v = share.get((label, g))
            if v is None or not len(v):
                cells.append("–")
                continue
            sd = float(v.std(ddof=1)) if len(v) > 1 else 0.0
            cells.append(f"{v.mean():.3f} ± {sd:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def tables(folder: Path) -> str:
    runs = pd.read_csv(folder / "runs.csv")
    effects = pd.read_csv(folder / "fair_effects.csv")
    name = "factuals.csv" if (folder / "factuals.csv").exists() else "factuals.csv.gz"
    factuals = pd.read_csv(folder / name)  # the docs' evidence keeps it trimmed, gzipped
    return (
        levels_table(runs)
        + "\n"
        + effects_rows(effects, runs)
        + "\n"
        + multi_item_table(factuals, runs)
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m analysis.experiment.fair_tables DIR")
    print(tables(Path(sys.argv[1])), end="")
