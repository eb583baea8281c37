"""Which evaluations of a study export the method-comparison report uses, and why the others
are left out (`analysis.study.methods_report`, `python -m analysis methods`).

The export is read by `analysis.export.load_export` (a folder, or the console's ZIP extracted
first), so the report refuses exactly what every other analysis refuses. Evaluations are then
dropped for a reason each, and the reasons are counted: a comparison of methods is only as
good as the account of what went into it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import contract as c
from analysis.export import ExportError, StudyExport, load_export

OUTCOMES = c.RATING_COLUMNS
DISTANCES = c.DISTANCE_COLUMNS
PARTICIPANT = "participant"
#: a level needs this many kept evaluations to get its own contrast and smooth (default)
MIN_PER_LEVEL = 20
#: the fewest distinct distance values a level's smooth can be fitted on (mgcv's k >= 3)
MIN_DISTINCT = 3

WITHDREW = "participant withdrew"
ATTENTION = "participant failed the attention checks"
IMPOSSIBLE = "an item of the plan marked impossible"
FALLBACK = "a fallback shown instead of the method's own counterfactual"
#: the export's column saying why a generating part showed a fallback (empty: it did not);
#: older exports lack it
FALLBACK_COLUMN = "fallback"


class StudyReportError(ValueError):
    """Input the report cannot use; the message is one line naming the problem."""


# --- reading ----------------------------------------------------------------------------------


def load_study_export(path: str | Path) -> StudyExport:
    """The export as a folder or as the console's ZIP, read and checked by `load_export`
    (whose messages start with the export's path); a problem is a StudyReportError."""
    try:
        return load_export(path)
    except ExportError as exc:
        raise StudyReportError(str(exc)) from None


# --- which evaluations are used ---------------------------------------------------------------


@dataclass
class Selection:
    """Every evaluation of the export with the reason it was dropped ("" when kept)."""

    evaluations: pd.DataFrame
    reasons: pd.Series
    factor: str
    distance: str
    levels: list[str]  # kept levels, in mgcv's (sorted) order
    all_levels: list[str]
    k: int
    participants: dict[str, int]
    rules: list[str]  # every reason in the order the rules apply

    @property
    def kept(self) -> pd.DataFrame:
        return self.evaluations.loc[self.reasons == ""]

    @property
    def n_kept(self) -> int:
        return int((self.reasons == "").sum())

    @property
    def n_dropped(self) -> int:
        return int((self.reasons != "").sum())

    def dropped_by_reason(self) -> dict[str, int]:
        counts = self.reasons.value_counts()
        return {r: int(counts[r]) for r in self.rules if counts.get(r, 0)}

    def by_level(self) -> pd.DataFrame:
        """Evaluations per level: kept, dropped, and dropped for each reason."""
        level = self.evaluations[self.factor].replace("", "(empty)")
        table = pd.crosstab(level, self.reasons.replace("", "kept"))
        if "kept" not in table:
            table["kept"] = 0
        reasons = [r for r in self.rules if r in table.columns]
        table = table[["kept", *reasons]]
        table.insert(1, "dropped", table[reasons].sum(axis=1).astype(int))
        table.index.name, table.columns.name = self.factor, None
        return table


def _participant_reasons(export: StudyExport) -> pd.Series:
    """Per participant id: why all their evaluations are dropped ("" for none)."""
    pa = export.participants
    reason = pd.Series("", index=pa["participant"].astype(str).to_numpy(), dtype=object)
    failed = np.zeros(len(pa), dtype=bool)
    if "outcome" in pa:
        failed |= (pa["outcome"] == c.STATE_OUTCOME["failed_attention"]).to_numpy()
    if "attention_excluded" in pa:
        failed |= (pd.to_numeric(pa["attention_excluded"], errors="coerce") == 1).to_numpy()
    withdrew = np.zeros(len(pa), dtype=bool)
    if "outcome" in pa:
        withdrew |= (pa["outcome"] == c.STATE_OUTCOME["withdrawn"]).to_numpy()
    if "state" in pa:
        withdrew |= (pa["state"] == "withdrawn").to_numpy()
    reason[failed] = ATTENTION
    reason[withdrew] = WITHDREW
    return reason


#: the rules `rule_reasons` applies, in order: the ones a registration names
#: (`analysis_plan.exclusions.analysis`, read by `analysis.study.registered`)
EVALUATION_RULES = (WITHDREW, ATTENTION, IMPOSSIBLE, FALLBACK)


def rule_reasons(export: StudyExport, by_participant: pd.Series | None = None) -> pd.Series:
    """Per evaluation, the first of `EVALUATION_RULES` that drops it ("" for none): the part
    of the selection that does not depend on the compared factor, so that a registered run
    applies it to the seed study's models too."""
    ev = export.evaluations
    if by_participant is None:
        by_participant = _participant_reasons(export)
    reasons = pd.Series("", index=ev.index, dtype=object)
    reasons[:] = ev["participant"].astype(str).map(by_participant).fillna("").to_numpy()
    impossible = ~ev.index.isin(export.kept_evaluations().index)
    reasons[(reasons == "") & impossible] = IMPOSSIBLE
    if FALLBACK_COLUMN in ev:  # a substitute would be counted as the method's own plan
        fallback = ev[FALLBACK_COLUMN].astype("string").str.strip().fillna("") != ""
        reasons[(reasons == "") & fallback] = FALLBACK
    return reasons


def select_evaluations(
    export: StudyExport,
    factor: str = "strategy",
    distance: str = "proximity",
    *,
    reference: str | None = None,
    min_per_level: int = MIN_PER_LEVEL,
    k: int = 10,
) -> Selection:
    """Drop, in this order and each for its reason: evaluations of participants who withdrew
    or failed the attention checks, evaluations with an item marked impossible (the seed
    study's rule, `StudyExport.kept_evaluations`), evaluations that show a fallback instead
    of the method's counterfactual (`fallback` not empty), evaluations without a value of the
    factor,
    then levels with fewer than `min_per_level` evaluations or fewer than three distinct
    distances left. The smooths' basis dimension is `k`, lowered to the fewest distinct
    distances of a kept level (one k for every model, so that they stay nested)."""
    ev = export.evaluations
    if distance not in DISTANCES:
        raise StudyReportError(
            f"--distance must be one of {', '.join(DISTANCES)}, got {distance!r}"
        )
    if factor not in ev.columns:
        raise StudyReportError(
            f"the export's evaluations have no column {factor!r} to compare (--factor); their "
            "text columns are "
            + ", ".join(
                col
                for col in ev.columns
                if col not in c.IDENTIFIERS and not pd.api.types.is_numeric_dtype(ev[col])
            )
        )
    if not factor.isidentifier() or factor in (*OUTCOMES, *DISTANCES, PARTICIPANT):
        raise StudyReportError(f"--factor {factor!r} cannot be the compared factor")
    values = ev[factor].astype("string").str.strip().fillna("").astype(str)
    all_levels = sorted(values.loc[values != ""].unique())
    if not all_levels:
        raise StudyReportError(f"the export's column {factor!r} is empty in every row")
    if len(all_levels) == 1:
        raise StudyReportError(
            f"the export's column {factor!r} has a single level ({all_levels[0]!r}); "
            "nothing to compare"
        )
    if reference is not None and reference not in all_levels:
        raise StudyReportError(
            f"--reference {reference!r} is not a level of {factor!r} "
            f"(levels: {', '.join(all_levels)})"
        )
    by_participant = _participant_reasons(export)
    reasons = rule_reasons(export, by_participant)
    no_value = f"no {factor} value"
    reasons[(reasons == "") & (values == "")] = no_value
    kept = reasons == ""
    counts = values[kept].value_counts()
    distinct = ev.loc[kept].groupby(values[kept])[distance].nunique()
    rare = [lv for lv in all_levels if counts.get(lv, 0) < min_per_level]
    flat = [lv for lv in all_levels if lv not in rare and distinct.get(lv, 0) < MIN_DISTINCT]
    too_rare = f"{factor} level with fewer than {min_per_level} evaluations"
    too_flat = f"{factor} level with fewer than {MIN_DISTINCT} distinct {distance} values"
    for level in rare:
        reasons[kept & (values == level)] = too_rare
    for level in flat:
        reasons[kept & (values == level)] = too_flat
    levels = [lv for lv in all_levels if lv not in rare and lv not in flat]
    if reference is not None and reference not in levels:
        raise StudyReportError(
            f"too few evaluations: reference level {reference!r} has {counts.get(reference, 0)} "
            f"kept evaluation(s) with {distinct.get(reference, 0)} distinct {distance} value(s) "
            f"(needs {min_per_level} and {MIN_DISTINCT}; --min-per-level)"
        )
    if len(levels) < 2:
        have = ", ".join(f"{lv} {counts.get(lv, 0)}" for lv in all_levels)
        raise StudyReportError(
            f"too few evaluations: fewer than two levels of {factor!r} have {min_per_level} kept "
            f"evaluations with {MIN_DISTINCT} distinct {distance} values (kept per level: {have})"
        )
    k_used = int(min(k, *(distinct[lv] for lv in levels)))
    frame = ev.assign(**{factor: values})
    rules = [*EVALUATION_RULES, no_value, too_rare, too_flat]
    selection = Selection(frame, reasons, factor, distance, levels, all_levels, k_used, {}, rules)
    if selection.kept["participant"].nunique() < 2:
        raise StudyReportError(
            "too few evaluations: the kept evaluations come from one participant"
        )
    selection.participants = _participant_counts(export, selection, by_participant)
    return selection


def _participant_counts(export: StudyExport, sel: Selection, reason: pd.Series) -> dict[str, int]:
    """participants.csv's rows: with kept evaluations, and the others by why not."""
    ids = export.participants["participant"].astype(str)
    kept_ids = set(sel.kept["participant"].astype(str))
    rated = set(sel.evaluations["participant"].astype(str))
    out = {"total": int(len(ids)), "kept": int(ids.isin(kept_ids).sum())}
    for pid in ids[~ids.isin(kept_ids)]:
        why = reason.get(pid, "") or (
            "no evaluations" if pid not in rated else "all evaluations dropped"
        )
        out[why] = out.get(why, 0) + 1
    return out
