"""Segregation before and after the recourses of each strategy, with bootstrap intervals
(`analysis.segregation.effects`, as `recourse-analysis effects` computes them), or the
sentence saying why the export does not allow it."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analysis.report.inputs import ReportInput

#: participants.csv column used as the group when none is named
DEFAULT_GROUP = "gender"


@dataclass
class Segregation:
    table: pd.DataFrame | None
    group: str
    note: str  # what was computed on whom, or why nothing was


def segregation(
    data: ReportInput, group: str | None, groups: list[str] | None, *, bootstrap: int, seed: int
) -> Segregation:
    from analysis.segregation.effects import EffectsError, compute_effects, study_population
    from analysis.segregation.indices import SegregationInputError
    from recourse_engine import carloan_schema

    group = group or DEFAULT_GROUP
    pa, ev = data.participants, data.evaluations
    if group not in pa:
        return Segregation(None, group, f"not available because participants.csv has no "
                           f"column {group!r} to group participants by (--group)")  # fmt: skip
    if groups is None:
        counts = pa.loc[pa[group].notna(), group].astype(str).value_counts()
        if len(counts) < 2:
            return Segregation(None, group, f"not available because {group!r} has fewer than "
                               "two values among the participants")  # fmt: skip
        groups = sorted(counts.index[:2]) if len(counts) > 2 else None
    schema = data.export.schema if data.export.schema is not None else carloan_schema()
    try:
        pop = study_population(ev, pa, schema, group, groups)
        n = len(pop.participants)
        clusters = max(2, min(30, n // 10))
        effects = compute_effects(pop, clusters=clusters, bootstrap=bootstrap, draws=20,
                                  curve_draws=5, seed=seed)  # fmt: skip
    except (EffectsError, SegregationInputError, ValueError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        return Segregation(None, group, f"not available because {first}")
    table = effects.to_frame()
    kept = f" (only {groups[0]!r} and {groups[1]!r})" if groups else ""
    note = (
        f"{effects['n_participants']} participants with a profile, grouped by {group!r}{kept}, "
        f"minority {effects['minority']!s} ({effects['n_minority']}); {bootstrap} participant "
        f"bootstrap draws, {clusters} neighbourhoods. Worse or better only where the 95% "
        "interval of the change excludes zero and its bootstrap p-value, Holm-adjusted across "
        f"the {effects['multiplicity']['families'].get('strategy', 0)} intervals of the table, "
        "is below 0.05."
    )
    if "strategy" in effects["multiplicity"]["too_few_resamples"]:
        note += (
            f" {bootstrap} draws are too few for any verdict to pass Holm: use --bootstrap "
            f"{effects['multiplicity']['needed']['strategy']} or more."
        )
    return Segregation(table, group, note)
