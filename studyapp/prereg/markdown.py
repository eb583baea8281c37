"""A registration bundle as a Markdown document following the sections of the OSF Prereg
template (Study information, Design plan, Sampling plan, Variables, Analysis plan, Other),
ready to paste or upload; every fact is read from the bundle, and the bundle's SHA-256
closes it so that the document and the file can be matched."""

from __future__ import annotations

import json
from typing import Any

from recourse_engine import parse_design


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def registration_markdown(
    bundle: dict[str, Any], sha256: str, *, at: str = "", by: str = ""
) -> str:
    doc = bundle["study_file"]
    s, plan = doc["settings"], bundle["analysis_plan"]
    conditions = s.get("conditions") or []
    design = parse_design(s["design"])
    excl = plan["exclusions"]
    lines = [
        f"# Preregistration: {s['title']}",
        "",
        f"Bundle SHA-256: `{sha256}`" + (f" — frozen {at}" if at else "") + (f" by {by}" if by else ""),
        "",
        "## 1. Study information",
        "",
        f"**Title.** {s['title']}",
        "",
        "**Description.** Participants are rejected by an AI system (decision model "
        f"`{doc['decision_model']['name']}`), see {design.total} "
        "counterfactual action plans (recourses) for their own profile and rate each.",
        "",
        "**Hypotheses.** Ratings of a plan depend on the plan's distance from the "
        "participant's profile (smooth terms) and on how it was selected (strategy or condition).",
        "",
        "## 2. Design plan",
        "",
        "**Study type.** Experiment (a randomised design of recourse selection).",
        "",
        "**Blinding.** Participants are not told which strategy selected a plan; the plans "
        "are shown in random order.",
        "",
        f"**Study design.** Within participants: the design `{s['design']}`. "
        + (f"Between participants: {len(conditions)} conditions ("
           + ", ".join(f"`{c['name']}`: `{c['design'] or s['design']}`" for c in conditions)
           + ")." if conditions else "No between-participant conditions."),
        "",
        f"**Randomisation.** Conditions assigned by `{s['assignment']}`; recourse selection "
        f"seeded from {plan['seeds']['recourse_selection']} per participant.",
        "",
        "## 3. Sampling plan",
        "",
        "**Existing data.** Registration prior to creation of data.",
        "",
        f"**Data collection procedures.** Study kind `{s['kind']}`, release "
        f"`{s['release_mode']}`, languages {', '.join(s.get('languages') or [s['language']])}; "
        f"eligibility {_json(s.get('eligibility') or {})}.",
        "",
        "**Sample size.** "
        + (f"{plan['sample']['planned_participants']} participants (the overall quota)."
           if plan["sample"]["planned_participants"] else "Not fixed by a quota."),
        "",
        f"**Stopping rule.** Quotas: {_json(plan['sample']['quotas'])}.",
        "",
        "## 4. Variables",
        "",
        "**Manipulated variables.** The strategy or method that selected each plan; the "
        "condition.",
        "",
        "**Measured variables.** "
        + ", ".join(f"`{o['name']}` ({o['scale']})" for o in plan["outcomes"]["primary"])
        + (("; secondary: " + ", ".join(f"`{q['key']}`" for q in plan["outcomes"]["secondary"]))
           if plan["outcomes"]["secondary"] else ""),
        "",
        "## 5. Analysis plan",
        "",
        "**Statistical models** (mgcv syntax, REML):",
        "",
        *[f"- {name}: `{formula}`" for name, formula in plan["models"].items()],
        "",
        "**Data exclusion.** "
        f"Attention: {len(excl['attention']['checks'])} check(s), more than "
        f"{excl['attention']['max_failures']} failure(s) -> `{excl['attention']['rule']}`. "
        f"Speed: minimum seconds per page {_json(excl['speed']['page_min_seconds'])}. "
        f"Approved profiles: `{excl['approved_branch']}`. Evaluations dropped: "
        + "; ".join(excl["analysis"]) + ".",
        "",
        "**Missing data.** Participants who withdrew are excluded with their data deleted.",
        "",
        "**Exploratory analysis.** Any model not listed above is reported as exploratory in "
        "the deviation report.",
        "",
        "## 6. Other",
        "",
        f"Study file SHA-256 `{bundle['study_file_sha256']}`; pool SHA-256 "
        f"`{doc['pool']['sha256']}` ({doc['pool']['rows']} profiles)"
        + (f"; decision model SHA-256 `{doc['decision_model']['sha256']}`"
           if doc["decision_model"].get("sha256") else "") + ".",
    ]  # fmt: skip
    return "\n".join(lines) + "\n"
