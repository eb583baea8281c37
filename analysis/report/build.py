"""Everything the report shows, computed before anything is written (`build_report`;
`render.write_report` writes it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.report.descriptives import descriptives
from analysis.report.flow import Flow, participant_flow
from analysis.report.inputs import ReportError, ReportInput, read_input
from analysis.report.methods_text import methods_paragraph
from analysis.report.models import Models, fit_models
from analysis.report.segregation import Segregation, segregation
from analysis.report.waves import waves_section
from analysis.significance import BOOTSTRAP


@dataclass
class Coding:
    kappa: pd.DataFrame | None
    alpha: pd.DataFrame | None
    note: str


@dataclass
class Options:
    factor: str = "strategy"
    with_test: bool = False
    k: int = 10
    ordinal: bool = True
    min_per_level: int = 20
    group: str | None = None
    groups: list[str] | None = None
    bootstrap: int = BOOTSTRAP
    segregation: bool = True
    seed: int = 0


@dataclass
class Report:
    data: ReportInput
    options: Options
    flow: Flow
    descriptives: pd.DataFrame
    models: Models
    segregation: Segregation
    coding: Coding
    methods: list[str]
    extra: dict[str, Any] = field(default_factory=dict)


def coding_agreement(data: ReportInput) -> Coding:
    from analysis.coding.agreement import CodingError, agreement

    if data.codings is None:
        return Coding(None, None, "not available because the export has no codings.csv "
                      "(no codebook, or the coding is not finished)")  # fmt: skip
    try:
        result = agreement(data.codings)
    except CodingError as exc:
        return Coding(None, None, f"not available because {exc}")
    n_units = data.codings["unit"].nunique() if "unit" in data.codings else 0
    return Coding(result.kappa, result.alpha,
                  f"{n_units} answers coded by {data.codings['coder'].nunique()} coders; "
                  "Cohen's κ per pair of coders and Krippendorff's α over all, per code "
                  "and for the whole code set.")  # fmt: skip


def build_report(export: str | Path, options: Options | None = None) -> Report:
    """Read and check the export and compute every section; raises ReportError on bad input."""
    opts = options or Options()
    data = read_input(export, with_test=opts.with_test)
    ev = data.evaluations
    if opts.factor not in ev.columns:
        raise ReportError(
            f"{data.source}: evaluations.csv has no column {opts.factor!r} (--factor; e.g. "
            "strategy, method, origin)"
        )
    flow = participant_flow(data.participants, data.n_test, data.with_test)
    table = descriptives(ev, opts.factor)
    models = fit_models(data.export, data.source, opts.factor, k=opts.k, ordinal=opts.ordinal,
                        min_per_level=opts.min_per_level)  # fmt: skip
    if opts.segregation:
        seg = segregation(data, opts.group, opts.groups, bootstrap=opts.bootstrap, seed=opts.seed)
    else:
        seg = Segregation(None, opts.group or "", "not computed (--no-segregation)")
    waves = waves_section(data)
    return Report(data, opts, flow, table, models, seg, coding_agreement(data),
                  methods_paragraph(data, opts.factor), {"waves": waves})  # fmt: skip
