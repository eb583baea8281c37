"""The level tables of docs/methods.md ("Synthetic data, 10 runs", "Real data, 10 runs each",
"Does conditioning change EBR's outcome?"), rewritten from the run files of
`benchmarks/level_tables.sh`: one experiment per data set, committed trimmed under
`docs/evidence/levels/NAME`.

Per data set: the command, the levels (mean ± sd over runs), and the change of each
segregation index after recourse, paired on the same people, with its Student-t interval
over runs, Holm-adjusted p-value (across that data set's method × index cells) and
verdict, centralization's change also in people (`report.setting_paired`). Then one table
of EBR conditioned on the immutables against EBR unconditioned (`ebr/uncond`), paired over
the same runs, seeds and decision models, Holm across the whole table.

    python -m analysis.experiment.level_tables DIR    # writes DIR/levels.md

The docs hold its blocks verbatim; `tests/analysis/experiment/test_level_tables.py`
rewrites them from the committed run files and finds each in docs/methods.md.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.experiment.paired import adjustment_note, holm, interval, t_pvalue
from analysis.experiment.report import change_cell, claims, setting_paired
from analysis.experiment.run import summarise, table
from analysis.segregation.catalogue import CATALOGUE, names
from analysis.significance import ALPHA

TITLES = {
    "synthetic": "Synthetic data",
    "german": "German credit (sex)",
    "law_sex": "Law school (sex)",
    "law_race": "Law school (race: white vs non-white)",
    "gmc": "Give Me Some Credit (age, split at the median)",
    "compas_sex": "COMPAS (sex)",
    "compas_race": "COMPAS (race: African-American vs other)",
    "adult": "Adult (sex)",
}
#: the rows of the levels tables (the run files keep every metric)
SHOWN = (*names(), "cost", "cost_gap", "ynn", "failure_rate", "success_gap", "worse_indices")
#: EBR's unconditioned variant, run beside it on the real data
UNCONDITIONED = "ebr/uncond"
CONDITIONING = (*names(), "cost", "cost_gap", "ynn", "failure_rate")
#: command-line arguments left out of the printed command (output, or at their defaults)
_QUIET = {"command": None, "out": None, "no_progress": None, "seed": 0, "subsample": 10_000,
          "preset": "sound", "replicate_published_defects": False}  # fmt: skip


def command(meta: dict[str, Any]) -> str:
    """The `python -m analysis experiment` line that settings.json's arguments record."""
    parts = ["python -m analysis experiment"]
    for key, value in (meta.get("arguments") or {}).items():
        if key in _QUIET and (_QUIET[key] is None or value == _QUIET[key]):
            continue
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            parts.append(flag)
        elif isinstance(value, list):
            parts += [f"{flag} {shlex.quote(str(v))}" for v in value]
        else:
            parts.append(f"{flag} {shlex.quote(str(value))}")
    return " ".join(parts)


def wall_times(text: str) -> dict[str, str]:
    """NAME -> 'S s wall, load before … after …' from the script's times.txt."""
    before = dict(re.findall(r"^(\w+): load before (.+)$", text, re.M))
    out = {}
    for name, secs, after in re.findall(r"^(\w+): (\d+) s wall, load after (.+)$", text, re.M):
        out[name] = (
            f"{secs} s wall (1/5/15-minute load {before.get(name, '?')} before, {after} after)"
        )
    return out


def _split_line(meta: dict[str, Any]) -> str:
    splits = meta.get("splits") or []
    if not splits:
        return "scored in-sample"
    n_test = sorted({int(s["n_test"]) for s in splits})
    n_all = sorted({int(s["n_test"]) + int(s["n_train"]) for s in splits})
    return (
        f"scored on {'/'.join(f'{n:,}' for n in n_test)} held-out people per run of "
        f"{'/'.join(f'{n:,}' for n in n_all)} rows, methods and model fitted on the rest"
    )


def dataset_block(name: str, folder: Path, wall: str | None = None) -> str:
    """One data set's command, levels and paired changes (markdown)."""
    meta = json.loads((folder / "settings.json").read_text())
    runs = pd.read_csv(folder / "runs.csv")
    seeds = sorted(set(runs["seed"]))
    levels = summarise(runs[runs["metric"].isin(SHOWN)].to_dict("records"))
    paired = setting_paired(folder)
    methods = list(meta["methods"])
    head = (
        f"**{TITLES.get(name, name)}** — {meta['runs']} runs (seeds {seeds[0]}..{seeds[-1]}), "
        f"{_split_line(meta)}" + (f"; {wall}" if wall else "") + ":"
    )
    rows = [
        head,
        "",
        f"    {command(meta)}",
        "",
        "Levels, mean ± sd over runs:",
        "",
        table(levels).rstrip(),
        "",
        "Change of each index after recourse, Δ = after − before on the same people, mean "
        f"[{adjustment_note(paired)}; p: Holm-adjusted; centralization also in people, the "
        "net number of minority members who became central per run; runs: how many of the "
        "runs' own changes are on the worse side]:",
        "",
        "| method | " + " | ".join(f"Δ {ix.short}" for ix in CATALOGUE.values()) + " | worse | better |",
        "|---" * (len(CATALOGUE) + 3) + "|",
    ]  # fmt: skip
    for m in methods:
        r = paired[paired["method"] == m].set_index("metric", drop=False)
        cells = [
            f"{change_cell(r.loc[k])} ({int(r.loc[k, 'worse_runs'])}/{meta['runs']} runs)"
            for k in names()
        ]
        n_worse = int((r["verdict"] == "worse").sum())
        n_better = int((r["verdict"] == "better").sum())
        rows.append(f"| {m} | " + " | ".join(cells) + f" | {n_worse} | {n_better} |")
    shown = [m for m in methods if m != UNCONDITIONED]
    rows += ["", *claims(name, {"held-out, sound": paired}, shown)]
    return "\n".join(rows) + "\n"


def conditioning_frame(folders: dict[str, Path]) -> pd.DataFrame:
    """Per data set × metric: EBR minus its unconditioned variant, paired per run (mean,
    t interval, p, Holm across the frame, runs with a positive difference). A metric equal
    in every run (e.g. where there is no immutable to condition on) gets no p-value and
    stays out of the family."""
    rows = []
    for name, folder in folders.items():
        runs = pd.read_csv(folder / "runs.csv")
        if UNCONDITIONED not in set(runs["method"]):
            continue
        wide = runs[runs["metric"].isin(CONDITIONING)].pivot_table(
            index=["run", "metric"], columns="method", values="value"
        )
        for metric in CONDITIONING:
            part = wide.xs(metric, level="metric")
            d = (part["ebr"] - part[UNCONDITIONED]).to_numpy(dtype=float)
            lo, hi, _ = interval(d)
            same = bool(np.all(d == 0))  # no test: left out of the Holm family
            rows.append(
                {"dataset": name, "metric": metric, "mean": float(d.mean()), "lo": lo,
                 "hi": hi, "p": math.nan if same else t_pvalue(d), "positive": int((d > 0).sum()),
                 "zero": int((d == 0).sum()), "runs": len(d)}
            )  # fmt: skip
    out = pd.DataFrame(rows)
    if len(out):
        out["p_holm"] = holm(out["p"].to_numpy(dtype=float))
    return out


def conditioning_table(frame: pd.DataFrame) -> str:
    """Markdown: a row per data set, a column per metric."""
    lines = [
        "| dataset | " + " | ".join(f"Δ {m}" for m in CONDITIONING) + " |",
        "|---" * (len(CONDITIONING) + 1) + "|",
    ]
    for name, part in frame.groupby("dataset", sort=False):
        by = part.set_index("metric")
        cells = []
        for m in CONDITIONING:
            r = by.loc[m]
            if r["zero"] == r["runs"]:
                cells.append("0 (identical in every run)")
                continue
            mark = " **≠ 0**" if r["p_holm"] < ALPHA else ""
            cells.append(
                f"{r['mean']:+.4f} [{r['lo']:+.4f}, {r['hi']:+.4f}] p {r['p_holm']:.2g} "
                f"({int(r['positive'])}/{int(r['runs'])} > 0){mark}"
            )
        lines.append(f"| {TITLES.get(str(name), name)} | " + " | ".join(cells) + " |")
    family = int(frame["p"].notna().sum())
    lines += [
        "",
        f"Δ = conditioned − unconditioned EBR, mean over the runs [95% t interval over runs]; "
        f"p: Holm-adjusted across the {family} cells of the table that differ in some run; "
        f"**≠ 0**: p < {ALPHA}.",
    ]
    return "\n".join(lines) + "\n"


def levels_markdown(out: Path) -> str:
    """Every data set's block found in `out`, then the conditioning table."""
    times = wall_times((out / "times.txt").read_text()) if (out / "times.txt").exists() else {}
    folders = {n: out / n for n in TITLES if (out / n / "runs.csv").exists()}
    blocks = [dataset_block(n, f, times.get(n)) for n, f in folders.items()]
    frame = conditioning_frame(folders)
    if len(frame):
        blocks.append(conditioning_table(frame))
    return "\n".join(blocks)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m analysis.experiment.level_tables DIR (a folder of "
              "benchmarks/level_tables.sh)", file=sys.stderr)  # fmt: skip
        return 2
    out = Path(args[0])
    (out / "levels.md").write_text(levels_markdown(out))
    print(out / "levels.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
