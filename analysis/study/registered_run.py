"""The registered analysis of a study export (`recourse-analysis registered`): the models of a
registration bundle (`analysis.study.registered`) fitted to the evaluations its exclusion
rules keep, written as the unregistered commands write them, with the deviations the export
alone can show.

The tables are those commands' own code: the seed study's GAMMs go through
`seed_report.write_study_report` (what `recourse-analysis study --no-ordinal --no-pygam`
writes, into `study/`), the method comparison through `methods_report.build_report` and
`methods_figures` (what `recourse-analysis methods` writes, into `methods/`). The evaluations
are `selection`'s: the registered rules (`selection.rule_reasons`) for every model, and for
the method comparison the rest of its selection (a level too rare or too flat) as well.

Every model is fitted and every file written into a hidden folder beside `--out` first; the
files are moved into `--out` only when all is done, so a failure writes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from analysis import contract as c
from analysis.export import StudyExport
from analysis.gamm.validate import GammInputError
from analysis.study.registered import (
    METHODS,
    SEED,
    RegisteredModel,
    Registration,
    RegistrationError,
    normalised,
    seed_formula,
)
from analysis.study.selection import (
    EVALUATION_RULES,
    IMPOSSIBLE,
    StudyReportError,
    load_study_export,
    rule_reasons,
)

MODELS_RUN = "models_run.txt"
DEVIATIONS_JSON = "deviations.json"
DEVIATIONS_MD = "deviations.md"
_FIT_ERRORS = (GammInputError, StudyReportError, np.linalg.LinAlgError)


def _folder(kind: str, group: tuple[str, str, str, int], first: bool) -> str:
    """`study` / `methods` for the first group of a kind (the registration has one), else
    a name that says which k, factor and distance."""
    _, factor, distance, k = group
    if first:
        return "study" if kind == SEED else "methods"
    return f"study-k{k}" if kind == SEED else f"methods-{factor}-{distance}-k{k}"


class _Run:
    """What one registered run fitted, dropped and found."""

    def __init__(self, reg: Registration, export: StudyExport, source: str) -> None:
        self.reg, self.export, self.source = reg, export, source
        self.run: list[str] = []
        self.deviations: list[dict[str, Any]] = []
        self.selections: dict[str, dict[str, Any]] = {}
        self.reasons = rule_reasons(export)

    def not_fitted(self, models: list[RegisteredModel], why: str) -> None:
        for m in models:
            self.deviations.append({
                "kind": "registered_model_not_fitted", "model": m.name, "formula": m.formula,
                "why": why,
            })  # fmt: skip

    def unregistered_drops(self, dropped: dict[str, int], where: str) -> None:
        """A rule the selection applied that the registration does not name, where it dropped
        evaluations."""
        for rule, n in dropped.items():
            if rule not in self.reg.rules and n:
                self.deviations.append({
                    "kind": "exclusion_not_registered", "rule": rule, "evaluations": n,
                    "models": where,
                })  # fmt: skip

    def seed(self, models: list[RegisteredModel], stage: Path, folder: str) -> None:
        from analysis.study.seed_report import seed_models, write_study_report

        k = models[0].k
        data = self.export.evaluations.loc[self.reasons == ""]
        try:
            write_study_report(
                data, stage / folder, basis="tp", k=k,
                n_dropped=int((self.reasons == IMPOSSIBLE).sum()),
                ordinal=False, progress=False, fixed_gam=False,
            )  # fmt: skip
        except _FIT_ERRORS as exc:
            shutil.rmtree(stage / folder, ignore_errors=True)
            self.not_fitted(models, f"{folder}: {str(exc).splitlines()[0]}")
            return
        self.run += [seed_formula(s.outcome, s.distance, k) for s in seed_models()]
        counts = self.reasons.value_counts()
        dropped = {r: int(counts.get(r, 0)) for r in EVALUATION_RULES}
        self.unregistered_drops(dropped, folder)
        self.selections[folder] = {
            "evaluations": int(len(data)),
            "dropped_by_rule": {r: n for r, n in dropped.items() if n},
        }

    def methods(self, models: list[RegisteredModel], stage: Path, folder: str) -> None:
        from analysis.cli.methods import SUMMARY_JSON
        from analysis.study.methods_figures import render_report, write_report
        from analysis.study.methods_report import build_report

        m0 = models[0]
        try:
            report = build_report(self.export, self.source, m0.factor, m0.distance, k=m0.k)
            files = render_report(report)
        except _FIT_ERRORS as exc:
            self.not_fitted(models, f"{folder}: {str(exc).splitlines()[0]}")
            return
        write_report(files, stage / folder)
        summary = json.dumps(report.to_json(), indent=2) + "\n"
        (stage / folder / SUMMARY_JSON).write_text(summary, encoding="utf-8")
        sel = report.selection
        run: dict[str, str] = {}
        for o in report.outcomes.values():
            run[normalised(o.formula_common)] = o.formula_common
            run[normalised(o.formula_by)] = o.formula_by
        self.run += list(run.values())
        if sel.k != m0.k:
            for m in models:
                now = [f for f in run.values() if normalised(f) == normalised(
                    m.formula.replace(f"k = {m.k}", f"k = {sel.k}"))]  # fmt: skip
                self.deviations.append({
                    "kind": "model_changed", "model": m.name, "registered": m.formula,
                    "run": now[0] if now else "",
                    "why": f"k lowered from {m.k} to {sel.k}: a kept level of {sel.factor} "
                    f"has only {sel.k} distinct {sel.distance} values",
                })  # fmt: skip
        self.unregistered_drops(sel.dropped_by_reason(), folder)
        self.selections[folder] = {
            "factor": sel.factor,
            "levels": sel.levels,
            "evaluations": sel.n_kept,
            "dropped_by_rule": sel.dropped_by_reason(),
            "participants": sel.participants,
        }


def _facts(run: _Run) -> dict[str, Any]:
    pa = run.export.participants
    completed = int((pa["outcome"] == c.STATE_OUTCOME["completed"]).sum()) if "outcome" in pa else 0
    counts = run.reasons.value_counts()
    return {
        "participants": int(len(pa)),
        "completed": completed,
        "evaluations": int(len(run.export.evaluations)),
        "excluded_by_rule": {r: int(counts.get(r, 0)) for r in EVALUATION_RULES},
        "selections": run.selections,
    }


def _move_into(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for p in sorted(src.iterdir()):
        if p.is_dir():
            _move_into(p, dst / p.name)
        else:
            os.replace(p, dst / p.name)


def run_registered(
    reg: Registration,
    export_path: Path,
    out: Path,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], list[Path]]:
    """Read the export, check it has the registered outcomes, fit every registered model and
    write the tables, `models_run.txt` and the deviation report into `out`. Raises
    RegistrationError or StudyReportError (nothing written) when the export cannot be used."""
    export = load_study_export(export_path)
    cols = export.evaluations.columns
    for outcome in reg.outcomes:
        if outcome not in cols:
            raise RegistrationError(
                f"{export_path}: the evaluations have no column {outcome!r}, a registered "
                "outcome (analysis_plan.outcomes.primary)"
            )
    run = _Run(reg, export, str(export_path))
    groups: dict[tuple[str, str, str, int], list[RegisteredModel]] = {}
    for m in reg.models:
        if m.kind:
            groups.setdefault(m.group, []).append(m)
        else:
            run.not_fitted([m], m.why)
    parent = out.parent if str(out.parent) else Path(".")
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=parent))
    try:
        seen: set[str] = set()
        for group, models in groups.items():
            folder = _folder(group[0], group, group[0] not in seen)
            seen.add(group[0])
            if progress is not None:
                progress(f"fitting {len(models)} registered model(s) -> {folder}/")
            if group[0] == SEED:
                run.seed(models, stage, folder)
            elif group[0] == METHODS:
                run.methods(models, stage, folder)
        report = deviation_report(reg, run)
        (stage / MODELS_RUN).write_text("".join(f + "\n" for f in run.run), encoding="utf-8")
        (stage / DEVIATIONS_JSON).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        (stage / DEVIATIONS_MD).write_text(deviations_markdown(report), encoding="utf-8")
        written = sorted(out / p.relative_to(stage) for p in stage.rglob("*") if p.is_file())
        _move_into(stage, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return report, written


def deviation_report(reg: Registration, run: _Run) -> dict[str, Any]:
    """What the export shows against the registration: the facts and one entry per
    difference (see docs/study-file.md, "Registered analysis")."""
    facts = _facts(run)
    entries: list[dict[str, Any]] = []
    if reg.planned is not None and facts["completed"] != reg.planned:
        entries.append({"kind": "sample_size", "registered": reg.planned,
                        "observed": facts["completed"]})  # fmt: skip
    entries += run.deviations
    registered = {normalised(m.formula) for m in reg.models}
    changed = {normalised(d["run"]) for d in run.deviations if d["kind"] == "model_changed"}
    for formula in dict.fromkeys(run.run):
        if normalised(formula) not in registered | changed:
            entries.append({"kind": "exploratory_model", "formula": formula})
    return {
        "registration": {
            "file": str(reg.path),
            "sha256": reg.sha256,
            "title": reg.title,
            "hash_checked_against": reg.hash_source,
        },  # fmt: skip
        "export": run.source,
        "registered_rules": reg.rules,
        "observed": facts,
        "models_run": run.run,
        "deviations": entries,
    }


def deviations_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown, beside the study side's (which adds the edits after
    registration)."""
    reg, obs = report["registration"], report["observed"]
    lines = [
        "# Registered analysis: deviations the export shows",
        "",
        f"Registration SHA-256 `{reg['sha256']}` ({reg['title'] or 'untitled'}), checked "
        f"against {reg['hash_checked_against']}; export `{report['export']}`.",
        "",
        "## What the export holds",
        "",
        f"- participants: {obs['participants']}, completed: {obs['completed']}",
        f"- evaluations: {obs['evaluations']}",
    ]
    for rule, n in obs["excluded_by_rule"].items():
        mark = "" if rule in report["registered_rules"] else " (not registered)"
        lines.append(f"- evaluations excluded ({rule}){mark}: {n}")
    for folder, sel in obs["selections"].items():
        lines.append(f"- `{folder}/`: {sel['evaluations']} evaluations fitted")
    lines += ["", f"## Deviations ({len(report['deviations'])})", ""]
    if not report["deviations"]:
        lines.append("None that the export shows: the registered analysis ran as registered.")
    for i, d in enumerate(report["deviations"], start=1):
        lines.append(f"{i}. " + _entry_line(d))
    return "\n".join(lines) + "\n"


def _entry_line(d: dict[str, Any]) -> str:
    kind = d["kind"]
    if kind == "sample_size":
        return f"Sample size: registered {d['registered']}, completed {d['observed']}"
    if kind == "registered_model_not_fitted":
        return f"Registered model not fitted: {d['model']} `{d['formula']}`: {d['why']}"
    if kind == "model_changed":
        return f"Model changed: {d['model']} `{d['registered']}` -> `{d['run']}`: {d['why']}"
    if kind == "exclusion_not_registered":
        return (f"Exclusion not registered: {d['rule']}: {d['evaluations']} evaluation(s) "
                f"dropped for `{d['models']}/`")  # fmt: skip
    return f"Exploratory (not registered): `{d['formula']}`"
