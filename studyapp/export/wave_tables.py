"""A multi-wave study's export (`analysis.contract_waves`): the `wave` column of
evaluations.csv, waves.csv and changes.csv; registered as an export extension
(`studyapp.export.extensions`) when the app loads.

evaluations.csv's `x_<item>` cells of a multi-wave study are the profile scored in the row's
wave (the participant's `Profile` holds only their last wave's), so this extension gives them
per recourse too; an extension's cells are merged last into a row, over the fixed ones.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis import contract as c
from analysis import contract_waves as cw
from studyapp.definition import engine_objects
from studyapp.export.extensions import ExtraTables
from studyapp.models import Recourse, Study
from studyapp.wave_models import Wave, WaveChange


def _code(value: Any) -> Any:
    """An option code as written: whole numbers without ".0"."""
    if value is None:
        return None
    return int(value) if float(value).is_integer() else float(value)


def wave_tables(study: Study, *, with_test: bool) -> ExtraTables:
    if study.kind != "multi_wave":
        return ExtraTables()
    keys = engine_objects.schema_of(study.schema).keys
    waves = Wave.objects.filter(participant__study=study).order_by("participant_id", "number")
    changes = WaveChange.objects.filter(participant__study=study).order_by(
        "participant_id", "wave", "pk"
    )
    recourses = Recourse.objects.filter(participant__study=study)
    if not with_test:
        waves = waves.filter(participant__is_test=False)
        changes = changes.filter(participant__is_test=False)
        recourses = recourses.filter(participant__is_test=False)
    wave_rows = list(waves)
    by_participant: dict[int, list[Wave]] = {}
    for w in wave_rows:
        by_participant.setdefault(w.participant_id, []).append(w)

    def wave_of(pid: int, position: int) -> Wave | None:
        found = None
        for w in by_participant.get(pid, []):
            if w.first_position <= position:
                found = w
        return found

    cells: dict[int, dict[str, Any]] = {}
    for rid, pid, position in recourses.values_list("pk", "participant_id", "position"):
        w = wave_of(pid, position)
        if w is not None:
            profile = {f"{c.PROFILE_PREFIX}{k}": _code(w.values.get(k)) for k in keys}
            cells[rid] = {"wave": w.number, **profile}
    waves_frame = pd.DataFrame(
        [
            {
                "study": study.slug,
                "participant": w.participant_id,
                "wave": w.number,
                "condition": w.condition,
                "model_policy": w.model_policy,
                "announced": int(w.announced),
                "model_hash": w.model_hash,
                "decision": w.decision,
                "probability": w.probability,
                "followed_recourse": w.followed_id,
                "decided_at": w.decided_at.isoformat(),
                **{f"{c.PROFILE_PREFIX}{k}": _code(w.values.get(k)) for k in keys},
            }  # fmt: skip
            for w in wave_rows
        ],
        columns=[*cw.WAVES_ENTRIES, *(f"{c.PROFILE_PREFIX}{k}" for k in keys)],
    )
    waves_frame["followed_recourse"] = waves_frame["followed_recourse"].astype("Int64")
    waves_frame["probability"] = waves_frame["probability"].astype("float64")
    changes_frame = pd.DataFrame(
        [
            {
                "study": study.slug,
                "participant": ch.participant_id,
                "wave": ch.wave,
                "item": ch.item,
                "before": _code(ch.before),
                "after": _code(ch.after),
                "changed": int(ch.before != ch.after),
                "planned": _code(ch.planned),
                "effort": ch.effort,
                "flag": ch.flag,
            }  # fmt: skip
            for ch in changes
        ],
        columns=list(cw.CHANGES_ENTRIES),
    )
    changes_frame["effort"] = changes_frame["effort"].astype("Int64")
    return ExtraTables(
        evaluation_entries={"wave": cw.WAVE_ENTRY},
        evaluation_cells=lambda recourse_id: cells.get(recourse_id, {}),
        files={cw.WAVES: waves_frame, cw.CHANGES: changes_frame},
        file_entries={cw.WAVES: cw.WAVES_ENTRIES, cw.CHANGES: cw.CHANGES_ENTRIES},
    )
