"""The experiment as a grid of cells, one per run × method (`analysis.grid.map_cells`): in
this process, on a `LocalCluster` (`--workers N`) or on a Dask cluster (`--scheduler
tcp://HOST:PORT`), with the same files whatever ran where.

Why a cell gives the same numbers anywhere: run r's cells draw the data, the decision model,
the held-out split and the original's indices from the run's seed (seed + r) alone, and the
method from it too, exactly as one `run_once` over every method does (each method's part of
a run depends on nothing another method did); and each cell runs with one thread per numeric
library (`one_thread`), as Dask's workers do, so no sum depends on a thread count. A
fair_rl label's ablations run in its cell (they need its fitted policy). The timing metrics
(`fit_seconds`, `cf_per_second`, `wall_seconds`) are measured where the cell ran.

A run's cells repeat its shared work (data, decision model, original's indices) on a
cluster; in this process a cell takes it from the run's earlier cell (`RunMemo`,
`analysis.experiment.memo`). Files are written only once every cell is back, so a grid that
cannot start (or a cell that fails) writes nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.experiment.factuals import FACTUAL_COLUMNS
from analysis.experiment.fair_eval import ablations, effects, effects_table
from analysis.experiment.figure import scatter
from analysis.experiment.memo import RunMemo
from analysis.experiment.paired import BOOTSTRAP_MIN_RUNS, paired_frame, paired_table
from analysis.experiment.settings import DEFECTS_NOTE, ExperimentSettings
from analysis.grid import map_cells, tqdm_progress
from recourse_engine.datasets import Dataset, load_dataset
from recourse_engine.datasets.real import SUBSAMPLE

__all__ = ["Cell", "ExperimentCell", "one_thread", "run_experiment"]


@dataclass(frozen=True)
class Cell:
    """One method's part of one run (seed = the experiment's seed + run)."""

    run: int
    seed: int
    method: str

    def __str__(self) -> str:
        return f"run {self.run} (seed {self.seed}), method {self.method}"


@dataclass
class CellOutput:
    """What a cell sends back: its metric rows (origin's first) and its labels' per-factual
    frames, people resamples and audits; the run's split record; on run 0 the population
    and the counterfactuals the figure draws."""

    rows: list[dict[str, Any]]
    factuals: dict[str, pd.DataFrame]
    people: dict[str, np.ndarray]
    audits: dict[str, pd.DataFrame]
    split: dict[str, Any] | None
    figure: tuple[Dataset, dict[str, Any]] | None = None


@contextmanager
def one_thread() -> Iterator[None]:
    """BLAS, OpenMP and torch (when installed) on one thread inside the block."""
    from threadpoolctl import threadpool_limits

    try:
        import torch
    except ImportError:  # the engine without the `methods` extra
        torch = None
    before = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(before)


@dataclass
class ExperimentCell:
    """The function of the grid: `cell -> CellOutput` (picklable: a Dask task). `local`
    (cells run in this process): a run's cells share its data, decision model and
    original's indices, kept until the next run starts; `memo` (the caller's, `local`
    only) is shared by every cell instead."""

    run_once: Callable[..., tuple[list[dict[str, Any]], dict[str, Any]]]
    dataset: str
    subsample: int | None
    settings: ExperimentSettings
    people: bool
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)
    progress: bool = False
    local: bool = False
    memo: RunMemo | None = None
    _run: dict[int, tuple[Dataset, RunMemo]] = field(default_factory=dict, repr=False)

    def __call__(self, cell: Cell) -> CellOutput:
        with one_thread():
            data, memo = self._shared(cell.seed)
            rows, out = self.run_once(
                data,
                [cell.method],
                cell.seed,
                progress=self.progress,
                params=self.params,
                training=self.training,
                settings=self.settings,
                people=self.people,
                memo=memo,
            )
        figure = None
        if cell.run == 0:
            results = {k: out[k] for k in out["factuals"]}  # the labels' RecourseResults
            figure = (out["data"], {"rejected": out["rejected"], **results})
        return CellOutput(rows, out["factuals"], out["people"], out["audits"], out["split"], figure)

    def _shared(self, seed: int) -> tuple[Dataset, RunMemo | None]:
        """The run's data and memo (none on a cluster)."""
        if not self.local:
            return load_dataset(self.dataset, seed=seed, subsample=self.subsample), None
        if seed not in self._run:
            self._run.clear()
            data = load_dataset(self.dataset, seed=seed, subsample=self.subsample)
            self._run[seed] = (data, RunMemo())
        data, memo = self._run[seed]
        return data, self.memo if self.memo is not None else memo


def run_experiment(
    dataset: str,
    methods: Sequence[str],
    runs: int,
    out_dir: Path,
    *,
    run_once: Callable[..., tuple[list[dict[str, Any]], dict[str, Any]]],
    summarise: Callable[[list[dict[str, Any]]], pd.DataFrame],
    table: Callable[[pd.DataFrame], str],
    seed: int = 0,
    progress: bool = True,
    params: dict[str, dict[str, Any]] | None = None,
    training: dict[str, Any] | None = None,
    subsample: int | None = SUBSAMPLE,
    settings: ExperimentSettings | None = None,
    record: dict[str, Any] | None = None,
    memo: RunMemo | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
) -> pd.DataFrame:
    """All runs, as cells (`map_cells`: `scheduler`, `workers`); then creates out_dir (its
    parent exists) and writes settings.json, runs.csv, factuals.csv, results.csv,
    results.md and figure.png into it. `record`: extra entries for settings.json (the
    command's); `memo`: work shared with another setting's experiment (in this process
    only). `run_once`, `summarise`, `table`: those of `analysis.experiment.run`, passed in
    so that this module does not import it back."""
    st = settings or ExperimentSettings()
    methods = list(methods)
    here = scheduler is None and (workers is None or workers == 1)
    if memo is not None and not here:
        raise ValueError("a memo is shared in this process only: give no scheduler or workers")
    fn = ExperimentCell(
        run_once,
        dataset,
        subsample,
        st,
        people=runs < BOOTSTRAP_MIN_RUNS and st.people_resamples > 0,
        params=params or {},
        training=training or {},
        progress=progress and here,
        local=here,
        memo=memo,
    )
    cells = [Cell(r, seed + r, m) for r in range(runs) for m in methods]
    bar = tqdm_progress(f"{dataset} cells (run × method)") if progress else None
    t0 = time.perf_counter()
    outs = map_cells(fn, cells, scheduler=scheduler, workers=workers, progress=bar)
    seconds = time.perf_counter() - t0
    merged = [merge_run(outs[r * len(methods) : (r + 1) * len(methods)], methods, params) for r in range(runs)]  # fmt: skip
    rows: list[dict[str, Any]] = []
    per_factual: list[pd.DataFrame] = []
    draws: dict[str, list[np.ndarray]] = {}
    splits: list[dict[str, Any]] = []
    split_rows: list[pd.DataFrame] = []
    audits: list[pd.DataFrame] = []
    for r, run in enumerate(merged):
        s = seed + r
        rows += [{"run": r, "seed": s, **row} for row in run.rows]
        for name, frame in run.factuals.items():
            per_factual.append(frame.assign(run=r, seed=s, method=name))
        for name, d in run.people.items():
            draws.setdefault(name, []).append(d)
        for name, frame in run.audits.items():
            if len(frame):
                audits.append(frame.assign(run=r, seed=s, method=name))
        if run.split is not None:
            sp = dict(run.split)
            held = sp.pop("test_rows")
            splits.append({"run": r, **sp})
            split_rows.append(pd.DataFrame({"run": r, "seed": s, "heldout_row": held}))
    out_dir.mkdir(exist_ok=True)
    runs_frame = pd.DataFrame(rows)
    runs_frame.to_csv(out_dir / "runs.csv", index=False)
    if per_factual:
        facts = pd.concat(per_factual, ignore_index=True)[list(FACTUAL_COLUMNS)]
        facts.to_csv(out_dir / "factuals.csv", index=False)
    if split_rows:
        pd.concat(split_rows, ignore_index=True).to_csv(out_dir / "split.csv", index=False)
    if audits:
        pd.concat(audits, ignore_index=True).to_csv(out_dir / "audits.csv", index=False)
    fx = effects(runs_frame, methods, params or {})
    fx.to_csv(out_dir / "fair_effects.csv", index=False)
    paired = paired_frame(runs_frame, draws or None)
    summary = summarise(rows).merge(paired, on=["method", "metric"], how="left")
    summary.to_csv(out_dir / "results.csv", index=False)
    meta = {
        "dataset": dataset,
        "methods": methods,
        "runs": runs,
        "seed": seed,
        "subsample": subsample,
        "training": training or {},
        "params": params or {},
        "settings": st.to_json(),
        "seconds": round(seconds, 1),
        "grid": {"scheduler": scheduler, "workers": workers, "cells": len(cells)},
        "splits": splits,
        **(record or {}),
    }
    (out_dir / "settings.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
    banner = f"{DEFECTS_NOTE}\n\n" if st.replicate_defects else ""
    (out_dir / "results.md").write_text(
        f"{dataset}, {runs} runs, {seconds:.1f} s; {st.describe()}\n\n"
        + banner
        + "Levels, mean ± sd over runs:\n\n"
        + table(summary)
        + "\n"
        + banner
        + "Paired differences of the indices:\n\n"
        + paired_table(paired, runs)
        + (
            "\nfair_rl against its no-fairness reward (paired over runs, "
            "`fair_effects.csv`):\n\n" + effects_table(fx)
            if len(fx)
            else ""
        )
    )
    if merged and merged[0].figure is not None:
        scatter(merged[0].figure[0], merged[0].figure[1], methods, out_dir / "figure.png")
    return summary


def merge_run(
    outs: Sequence[CellOutput], methods: list[str], params: dict[str, dict[str, Any]] | None
) -> CellOutput:
    """One run's cells as one `run_once` over every method gives them: origin's rows once,
    then each label's in the order methods, then their ablations."""
    labels = ["origin", *methods, *(a for a, *_ in ablations(methods, params or {}))]
    order = {label: i for i, label in enumerate(labels)}
    origin = [row for row in outs[0].rows if row["method"] == "origin"]
    rest = [row for out in outs for row in out.rows if row["method"] != "origin"]
    rest.sort(key=lambda row: order[row["method"]])  # stable: a label's metrics keep order

    def by_label(part: str) -> dict[str, Any]:
        got = {k: v for out in outs for k, v in getattr(out, part).items()}
        return {k: got[k] for k in sorted(got, key=order.__getitem__)}

    figure = None
    if outs[0].figure is not None:
        figure = (outs[0].figure[0], {k: v for o in outs for k, v in o.figure[1].items()})
    return CellOutput(
        origin + rest,
        by_label("factuals"),
        by_label("people"),
        by_label("audits"),
        outs[0].split,
        figure,
    )
