"""The methods paragraph, generated from what the export itself records of the study: the
schema (profile items shown), the codebook (the ratings' questions, the design), and the
evaluations (plans per participant, the methods with the parameters they ran with)."""

from __future__ import annotations

import json

import pandas as pd

from analysis import contract as c
from analysis.report.inputs import ReportInput


def _question(codebook: pd.DataFrame, column: str) -> str:
    rows = codebook[(codebook["file"] == f"{c.EVALUATIONS}.csv") & (codebook["column"] == column)]
    return str(rows["description"].iloc[0]).strip() if len(rows) else ""


def _scale(codebook: pd.DataFrame, column: str) -> str:
    rows = codebook[(codebook["file"] == f"{c.EVALUATIONS}.csv") & (codebook["column"] == column)]
    allowed = str(rows["allowed"].iloc[0]) if len(rows) else ""
    labels = [part.split("=", 1)[1].strip() for part in allowed.split(";") if "=" in part]
    lo, hi = c.RATING_SCALE
    if len(labels) >= 2:
        return f"a {hi - lo + 1}-point scale from {lo} ({labels[0]}) to {hi} ({labels[-1]})"
    return f"a {hi - lo + 1}-point scale ({lo}..{hi})"


def _params(text: str) -> str:
    try:
        params = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return ""
    if not isinstance(params, dict) or not params:
        return ""
    return ", ".join(f"{k} = {v}" for k, v in sorted(params.items()))


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def methods_paragraph(data: ReportInput, factor: str) -> list[str]:
    """Sentences describing the study as the export records it."""
    ev, pa, codebook = data.evaluations, data.participants, data.codebook
    schema = data.export.schema
    out = []
    if schema is not None:
        labels = [it.label for it in schema.items]
        shown = _join([f"{lbl.lower()}" for lbl in labels[:6]])
        more = f" and {len(labels) - 6} more" if len(labels) > 6 else ""
        out.append(
            f"Participants entered a profile of {len(labels)} items ({shown}{more}) and were "
            "shown action plans (counterfactual profiles) that would change the decision."
        )
    per = ev.groupby("participant").size()
    plans = f"{int(per.median())}" if per.min() == per.max() else f"{per.min()} to {per.max()}"
    out.append(
        f"Each participant rated {plans} plans, shown one per page in a randomised order, on "
        f"two questions answered on {_scale(codebook, 'acceptance')}: "
        f"“{_question(codebook, 'acceptance')}” (acceptance) and "
        f"“{_question(codebook, 'action')}” (action)."
    )
    if factor in ev:
        arms = sorted(ev[factor].astype("string").dropna().unique())
        out.append(f"Plans were chosen by {len(arms)} {factor} levels: {_join(list(arms))}.")
    if "method" in ev:
        described = []
        for method, rows in ev.groupby(ev["method"].astype(str), sort=True):
            params = _params(str(rows["method_params"].iloc[0])) if "method_params" in rows else ""
            origin = str(rows["origin"].iloc[0]) if "origin" in rows else ""
            what = "chosen from the study's pool" if origin == "pool" else "generated"
            described.append(f"{method} ({what}{'; ' + params if params else ''})")
        out.append(f"Recourse methods: {_join(described)}.")
    conditions = pa["condition"].astype("string").str.strip().replace("", pd.NA).dropna() \
        if "condition" in pa else pd.Series(dtype=str)  # fmt: skip
    if conditions.nunique() > 1:
        out.append(
            f"Participants were assigned to {conditions.nunique()} between-participant "
            f"conditions ({_join(sorted(conditions.unique()))})."
        )
    if "language" in pa:
        langs = sorted(
            pa["language"].astype("string").dropna().replace("", pd.NA).dropna().unique()
        )
        if langs:
            out.append(f"The study was taken in {_join(langs)} (language codes).")
    out.append(
        "Everything above is read from the export (schema.json, codebook.csv and the "
        "evaluations); check it against the preregistered study file before publishing."
    )
    return out
