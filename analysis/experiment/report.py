"""The reproduction report of Gao & Lakkaraju (2023), one command per data set:
`python -m analysis reproduce --dataset NAME --out DIR`.

It runs the experiment three times on the same seeds — under `--preset gao2023` (on the
paper-style data where there is one: `german_gao2023`, `gmc_gao2023`), under `gao2023`
with `--replicate-published-defects`, and under the sound default (on the sound data) —
into DIR/gao2023, DIR/gao2023_defects and DIR/sound, and writes DIR/report.md: the paper's
Table 6 row beside each setting's Origin levels and paired differences (95% t interval,
Holm-adjusted p-value and verdict, centralization's change in people), recomputed from
each setting's runs.csv (`setting_paired`), and which of the paper's claims hold under
which setting.

The VAE methods' training is shortened for time (`--epochs`, `--batch`) under every
setting alike; their searches run to the methods' own limits (IBR/CCHVAE 100 shells, CRUDS
20 rounds: a cap of 30 shells, tried before, made IBR fail where the full search finds a
counterfactual). report.md says so in its first lines.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.experiment.memo import RunMemo
from analysis.experiment.paired import PEOPLE_INDEX, adjustment_note, paired_frame
from analysis.experiment.paper import (
    METHODS,
    TABLE3,
    TABLE6,
    paper_change,
    paper_failure,
    paper_origin,
)
from analysis.experiment.people import minority_sizes
from analysis.experiment.run import run_experiment
from analysis.experiment.settings import ExperimentSettings, merge_params, preset
from analysis.experiment.threads import thread_limit
from analysis.segregation.catalogue import CATALOGUE, names

#: the paper-style loader of a data set, where there is one
PAPER_DATA = {"german": "german_gao2023", "gmc": "gmc_gao2023"}
SETTINGS = ("gao2023", "gao2023_defects", "sound")


def setting(name: str) -> ExperimentSettings:
    if name == "gao2023_defects":
        return preset("gao2023").with_(replicate_defects=True)
    return preset(name)


def run_setting(
    dataset: str,
    name: str,
    out: Path,
    *,
    runs: int,
    methods: list[str],
    training: dict,
    threads: int | None = 1,
    memo: RunMemo | None = None,
) -> float:
    """One setting's experiment into out/name, with `threads` threads per numeric library
    (`analysis.experiment.threads`) and work shared through `memo`
    (`analysis.experiment.memo`); its wall time in seconds."""
    st = setting(name)
    data = PAPER_DATA.get(dataset, dataset) if st.preset == "gao2023" else dataset
    params = merge_params(st.method_params(data), {}, methods, training)
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with thread_limit(threads):
        run_experiment(
            data,
            methods,
            runs,
            folder,
            progress=False,
            params=params,
            training=training,
            settings=st,
            record={
                "reproduction": {"setting": name, "paper_dataset": dataset, "threads": threads}
            },
            memo=memo,
        )
    return time.perf_counter() - t0


def _direction(index: str, change: float) -> str:
    if change == 0:
        return "no change"
    return "worse" if CATALOGUE[index].is_worse(change) else "better"


def _paper_cells(dataset: str, value: Any) -> list[str]:
    """A cell per index from the paper's Table 6 (`value(index)`); "–" for an index the
    paper did not report."""
    printed = TABLE6.get(dataset, {})
    return [value(k) if k in printed else "–" for k in names()]


def change_cell(row: pd.Series) -> str:
    """A paired change: mean [interval], in people for centralization, Holm p, verdict."""
    mark = {"worse": " **worse**", "better": " better"}.get(str(row["verdict"]), "")
    ppl = ""
    if row["metric"] == PEOPLE_INDEX and pd.notna(row.get("people_mean")):
        ppl = f" ({row['people_mean']:+.1f} people)"
    return (
        f"{row['diff_mean']:+.4f} [{row['diff_lo']:+.4f}, {row['diff_hi']:+.4f}]{ppl} "
        f"p {row['p_holm']:.2g}{mark}"
    )


def setting_paired(folder: Path) -> pd.DataFrame:
    """One setting's paired differences from its runs.csv and settings.json, with the
    minority's size per run (centralization's change in people), under this module's
    statistics (`analysis.experiment.paired`) whatever the folder was written with."""
    meta = json.loads((folder / "settings.json").read_text())
    runs = pd.read_csv(folder / "runs.csv")
    st = meta.get("settings") or {}
    seeds = {int(r): int(s) for r, s in runs[["run", "seed"]].drop_duplicates().to_numpy()}
    sizes = minority_sizes(
        meta["dataset"],
        sorted(seeds.values()),
        st.get("population", "all"),
        float(st.get("train_share", 0.75)),
        meta.get("subsample"),
        float(st.get("holdout") or 0.0),
    )
    return paired_frame(runs, minority={r: sizes[s] for r, s in seeds.items()})


def claims(dataset: str, results: dict[str, pd.DataFrame], methods: list[str]) -> list[str]:
    """Per setting: do the balanced methods (IBR, EBR) make every index better, as the paper
    reports, and does some other method make an index worse?"""
    lines = []
    balanced = [m for m in ("ibr", "ebr") if m in methods]
    others = [m for m in methods if m not in ("ibr", "ebr")]
    for name, res in results.items():
        v = res.dropna(subset=["verdict"]).set_index(["method", "metric"])["verdict"]
        bal = {m: [k for k in names() if v.get((m, k)) == "better"] for m in balanced}
        worse = sorted({m for m in others for k in names() if v.get((m, k)) == "worse"})
        n = len(CATALOGUE)
        bal_txt = "; ".join(
            f"{m.upper()} better on {len(ks)}/{n}" + (f" ({', '.join(ks)})" if ks else "")
            for m, ks in bal.items()
        )
        holds = all(len(ks) == n for ks in bal.values()) and bool(bal)
        lines.append(
            f"* **{name}**: balanced methods reduce every index — "
            f"{'holds' if holds else 'does not hold'} ({bal_txt}); some existing method makes "
            f"an index worse — {'holds (' + ', '.join(worse) + ')' if worse else 'not shown'}."
        )
    return lines


def report(
    dataset: str,
    out: Path,
    methods: list[str],
    seconds: dict[str, float],
    load: tuple[float, ...] | None = None,
) -> str:
    """report.md from the three settings' results in `out` (`load`: the load average to
    state, by default the current one)."""
    results = {n: pd.read_csv(out / n / "results.csv", index_col=False) for n in SETTINGS}
    paired = {n: setting_paired(out / n) for n in SETTINGS}
    load = tuple(os.getloadavg()) if load is None else tuple(load)
    meta = json.loads((out / "sound" / "settings.json").read_text())
    training = meta.get("training") or {}
    head = [
        f"### {dataset}: the paper's Table 6 beside this project",
        "",
        f"{meta['runs']} run(s) per setting (seeds {meta['seed']}..{meta['seed'] + meta['runs'] - 1}),"
        f" methods {', '.join(methods)}; VAE methods trained with epochs "
        f"{training.get('epochs', 'default')}, batch {training.get('batch', 'default')} (all "
        "settings alike), searches to the methods' own limits. Data: "
        f"`{PAPER_DATA.get(dataset, dataset)}` under gao2023, `{dataset}` under sound. "
        "Intervals: "
        + ", ".join(sorted(set(paired["sound"]["interval"].dropna())))
        + "."
        + f" Threads per numeric library: {meta.get('reproduction', {}).get('threads', 'default')}.",
        "Wall time: "
        + ", ".join(f"{n} {seconds[n]:.0f} s" for n in SETTINGS if n in seconds)
        + f"; load average at the end {', '.join(f'{x:.2f}' for x in load)}.",
        "",
        "Origin (before recourse), " + " / ".join(ix.label for ix in CATALOGUE.values()) + ":",
        "",
        "| setting | " + " | ".join(ix.short for ix in CATALOGUE.values()) + " |",
        "|---" * (len(CATALOGUE) + 1) + "|",
    ]
    if dataset in TABLE6:
        cells = _paper_cells(dataset, lambda k: f"{paper_origin(dataset, k):.4f}")
        head.append("| paper Table 6 | " + " | ".join(cells) + " |")
    for n, res in results.items():
        o = res[res["method"] == "origin"].set_index("metric")["mean"]
        head.append(f"| {n} | " + " | ".join(f"{o[k]:.4f}" for k in names()) + " |")
    head += [
        "",
        "Change after recourse, Δ = after − before (paper: difference of its printed means; "
        "here: mean paired difference [" + adjustment_note(paired["sound"]) + ", per setting; "
        "p: the Holm-adjusted p-value; centralization's change also in people: the net "
        "number of minority members who became central per run (Atkinson and proximity "
        "have no such count)):",
        "",
        "| method | setting | " + " | ".join(f"Δ {ix.short}" for ix in CATALOGUE.values()) + " |",
        "|---" * (len(CATALOGUE) + 2) + "|",
    ]
    for m in methods:
        if dataset in TABLE6 and m in METHODS:

            def change(k: str, m: str = m) -> str:
                d = paper_change(dataset, m, k)
                return f"{d:+.4f} ({_direction(k, d)})"

            head.append(f"| {m} | paper | " + " | ".join(_paper_cells(dataset, change)) + " |")
        for n, res in paired.items():
            r = res[res["method"] == m].set_index("metric", drop=False)
            cells = [change_cell(r.loc[k]) if k in r.index else "–" for k in names()]
            head.append(f"| {m} | {n} | " + " | ".join(cells) + " |")
    head += [
        "",
        "Share of factuals without a valid counterfactual (`failure_rate`; the paper's "
        "Table 3 calls it invalidation rate):",
        "",
        "| setting | " + " | ".join(methods) + " |",
        "|---" * (len(methods) + 1) + "|",
    ]
    if dataset in TABLE3:
        cells = [f"{paper_failure(dataset, m):.4f}" if m in METHODS else "–" for m in methods]
        head.append("| paper Table 3 | " + " | ".join(cells) + " |")
    for n, res in results.items():
        fr = res[res["metric"] == "failure_rate"].set_index("method")["mean"]
        head.append(
            f"| {n} | " + " | ".join(f"{fr.get(m, float('nan')):.4f}" for m in methods) + " |"
        )
    head += ["", "Claims:", "", *claims(dataset, paired, methods), ""]
    return "\n".join(head)


def rewrite(dataset: str, out: Path) -> None:
    """report.md again from a finished reproduction folder (its timing.json's times and load)."""
    timing = json.loads((out / "timing.json").read_text())
    meta = json.loads((out / "sound" / "settings.json").read_text())
    seconds = {n: float(timing[n]) for n in SETTINGS}
    text = report(dataset, out, list(meta["methods"]), seconds, timing.get("load"))
    (out / "report.md").write_text(text)


def reproduce(
    dataset: str,
    out: Path,
    *,
    runs: int,
    methods: list[str],
    training: dict[str, Any],
    threads: int | None = 1,
) -> dict[str, float]:
    seconds: dict[str, float] = {}
    memo = RunMemo()  # gao2023's models, methods and neighbourhoods, for gao2023_defects
    for name in SETTINGS:
        seconds[name] = run_setting(
            dataset,
            name,
            out,
            runs=runs,
            methods=methods,
            training=training,
            threads=threads,
            memo=memo if name.startswith("gao2023") else None,
        )
        if name == "gao2023_defects":
            memo = RunMemo()
    (out / "report.md").write_text(report(dataset, out, methods, seconds))
    total = {
        **{k: round(v, 1) for k, v in seconds.items()},
        "total": round(sum(seconds.values()), 1),
    }
    (out / "timing.json").write_text(
        json.dumps({**total, "load": os.getloadavg()}, indent=2) + "\n"
    )
    return seconds
