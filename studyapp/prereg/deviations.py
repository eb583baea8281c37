"""The deviation report: every difference between a study's registration and what happened,
one entry each: an edit of the definition after registration (with its version, who, when
and what changed), a sample size other than the registered one, a model run that was not
registered (marked exploratory), a registered model not run. The counts of what happened
(participants, exclusions by rule) stand beside the entries as facts, not deviations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from studyapp.definition.errors import StudyError
from studyapp.models import Participant, Study
from studyapp.prereg.bundle import bundle_of, first_registration
from studyapp.prereg.diff import document_diff
from studyapp.version_models import StudyRegistration

#: keys of an analysis output (JSON) that hold a model's formula
_FORMULA_KEYS = ("formula", "formula_common", "formula_by")


def _formulas_in(node: Any, out: list[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _FORMULA_KEYS and isinstance(value, str):
                out.append(value)
            else:
                _formulas_in(value, out)
    elif isinstance(node, list):
        for value in node:
            _formulas_in(value, out)


def models_run_read(path: Path) -> list[str]:
    """Formulas of the models an analysis ran: a JSON report (every `formula*` key) or a text
    file with one formula per line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise StudyError(f"--models {path}: cannot read it: {exc}") from None
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StudyError(f"--models {path}: not JSON: {exc.msg}") from None
        found: list[str] = []
        _formulas_in(data, found)
    else:
        found = [line.strip() for line in text.splitlines() if line.strip()]
    return list(dict.fromkeys(found))


def _norm(formula: str) -> str:
    return "".join(formula.split())


def observed(study: Study, *, with_test: bool = False) -> dict[str, Any]:
    """What happened: participants by outcome and the exclusions the registered rules made."""
    qs = Participant.objects.filter(study=study)
    if not with_test:
        qs = qs.filter(is_test=False)
    states = {s: qs.filter(state=s).count() for s in qs.values_list("state", flat=True).distinct()}
    return {
        "participants": qs.count(),
        "completed": states.get(Participant.State.COMPLETED, 0),
        "by_state": dict(sorted(states.items())),
        "excluded": {
            "attention": states.get(Participant.State.FAILED_ATTENTION, 0)
            + qs.filter(
                state=Participant.State.COMPLETED,
                attention_failures__gt=study.attention_max_failures,
            ).count(),
            "approved_branch": states.get(Participant.State.APPROVED, 0),
            "withdrew": states.get(Participant.State.WITHDRAWN, 0),
        },
        "with_test": with_test,
    }


def deviation_entries(
    registration: StudyRegistration,
    versions: list[Any],
    facts: dict[str, Any],
    models_run: list[str] | None,
) -> list[dict[str, Any]]:
    """One entry per difference (see the module's docstring)."""
    bundle = bundle_of(registration)
    plan = bundle["analysis_plan"]
    entries: list[dict[str, Any]] = []
    before = bundle["study_file"]
    for v in versions:
        changes = document_diff(before, v.document)
        entries.append({
            "kind": "edit_after_registration",
            "version": v.number,
            "at": v.at.isoformat(),
            "by": v.by.get_username() if v.by_id else "",
            "note": v.note,
            "changes": [c.line() for c in changes],
        })  # fmt: skip
        before = v.document
    planned = plan["sample"]["planned_participants"]
    if planned is not None and facts["completed"] != planned:
        entries.append({
            "kind": "sample_size", "registered": planned, "observed": facts["completed"],
        })  # fmt: skip
    if models_run is not None:
        registered = {_norm(f): name for name, f in plan["models"].items()}
        run = {_norm(f) for f in models_run}
        for formula in models_run:
            if _norm(formula) not in registered:
                entries.append({"kind": "exploratory_model", "formula": formula})
        for name, formula in plan["models"].items():
            if _norm(formula) not in run:
                entries.append({"kind": "registered_model_not_run", "model": name,
                                "formula": formula})  # fmt: skip
    return entries


def study_deviations(
    study: Study, *, models_run: list[str] | None = None, with_test: bool = False
) -> dict[str, Any]:
    """The deviation report of the study against its first registration."""
    registration = first_registration(study)
    if registration is None:
        raise StudyError(
            f"study {study.slug} has no registration (it registers when it goes live, "
            "or with `study register`)"
        )
    versions = list(
        study.versions.filter(number__gt=registration.version.number)
        .select_related("by")
        .order_by("number")
    )
    facts = observed(study, with_test=with_test)
    return {
        "study": study.slug,
        "registration": {
            "sha256": registration.sha256,
            "version": registration.version.number,
            "at": registration.at.isoformat(),
            "reason": registration.reason,
        },
        "observed": facts,
        "deviations": deviation_entries(registration, versions, facts, models_run),
    }


def deviations_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown, for the paper's supplement."""
    reg = report["registration"]
    lines = [
        f"# Deviations from the registration of {report['study']}",
        "",
        f"Registration SHA-256 `{reg['sha256']}` (version {reg['version']}, {reg['at']}).",
        "",
        "## What happened",
        "",
        f"- participants: {report['observed']['participants']}, completed: "
        f"{report['observed']['completed']}",
    ]
    for rule, n in report["observed"]["excluded"].items():
        lines.append(f"- excluded ({rule}): {n}")
    lines += ["", f"## Deviations ({len(report['deviations'])})", ""]
    if not report["deviations"]:
        lines.append("None: the study ran as registered.")
    for i, d in enumerate(report["deviations"], start=1):
        kind = d["kind"]
        if kind == "edit_after_registration":
            who = f" by {d['by']}" if d["by"] else ""
            lines.append(f"{i}. Edit after registration: version {d['version']}{who}, {d['at']}")
            lines += [f"    - `{c}`" for c in d["changes"]]
        elif kind == "sample_size":
            lines.append(
                f"{i}. Sample size: registered {d['registered']}, completed {d['observed']}"
            )
        elif kind == "exploratory_model":
            lines.append(f"{i}. Exploratory (not registered): `{d['formula']}`")
        else:
            lines.append(f"{i}. Registered model not run: {d['model']} `{d['formula']}`")
    return "\n".join(lines) + "\n"
