"""Where the export's columns come from: each column of the export contract
(`analysis.contract`) mapped to the fields of the platform's rows it is written from.

Kept beside the contract rather than in it because only the writer (`studyapp.export`) and
the API read it; analyses of an export never need the platform's field names.
"""

from __future__ import annotations

from analysis.contract import (
    COUNTERFACTUAL_PREFIX,
    EVALUATIONS,
    PAGE_VISITS,
    PARTICIPANTS,
    PROFILE_PREFIX,
    QUESTION_PREFIX,
    RECOURSE_COLUMNS,
    SCREENING_PREFIX,
)

#: each file's fixed columns -> the fields of the platform's rows they are written from, as
#: Django's `.values()` names them (a related row's field after "__"; `n_evaluations` is a
#: count the writer annotates). A column with several fields is computed from them (e.g.
#: `recourses_seconds`); `study` is the study's slug and comes from no row. The writer reads
#: exactly these fields, so a column and its fields are stated here once.
SOURCES: dict[str, dict[str, tuple[str, ...]]] = {
    EVALUATIONS: {
        "participant": ("participant_id",),
        "condition": ("participant__condition",),
        "gender": ("participant__gender",),
        "age": ("participant__age",),
        "income": ("participant__income_jpy",),
        "recourse": ("recourse_id",),
        "strategy": ("recourse__strategy",),
        "position": ("recourse__position",),
        "sparsity": ("recourse__sparsity",),
        "proximity": ("recourse__proximity",),
        "changed": ("recourse__changed",),
        "impossible": ("impossible",),
        "any_impossible": ("impossible",),
        "acceptance": ("acceptance",),
        "action": ("action",),
        "acceptance_why": ("acceptance_why",),
        "action_why": ("action_why",),
        "seconds_on_page": ("seconds_on_page",),
        "submitted_at": ("submitted_at",),
        **{col: (f"recourse__{col}",) for col in RECOURSE_COLUMNS},
    },
    PARTICIPANTS: {
        "participant": ("pk",),
        "recruitment_id": ("recruitment_id",),
        "panel": ("panel",),
        "condition": ("condition",),
        "state": ("state",),
        "outcome": ("state",),
        "gender": ("gender",),
        "age": ("age",),
        "income_band": ("income_band",),
        "income": ("income_jpy",),
        "consent_version": ("consent_version",),
        "consented_at": ("consented_at",),
        "decision": ("profile__decision",),
        "generation": ("generation",),
        "recourses_seconds": ("generation_queued_at", "generation_finished_at"),
        "n_evaluations": ("n_evaluations",),
        "attention_failures": ("attention_failures",),
        "attention_excluded": ("attention_failures",),
        "flagged": ("flagged",),
        "flag_reason": ("flag_reason",),
        "started_at": ("created_at",),
        "finished_at": ("finished_at",),
        "assignment": ("assignment",),
        "language": ("language", "study__language"),
        "is_test": ("is_test",),
        "wait_timeouts": ("wait_timeouts",),
        "submitted_at": ("submitted_at",),
        "released_at": ("released_at",),
        "returned_at": ("returned_at",),
        "device_class": ("device_class",),
        "viewport_width": ("viewport_width",),
        "viewport_height": ("viewport_height",),
    },
    PAGE_VISITS: {
        "participant": ("participant_id",),
        "page": ("page",),
        "entered_at": ("entered_at",),
        "exited_at": ("exited_at",),
        "seconds": ("entered_at", "exited_at"),
        "views": ("views",),
        "timeout": ("timeout_happened",),
    },
}
#: each file's column families -> the field holding their values (a JSON object by key):
#: profile and counterfactual codes, screening answers, researcher-defined items' answers
#: and the order they were shown in
FAMILY_SOURCES: dict[str, dict[str, str]] = {
    EVALUATIONS: {
        PROFILE_PREFIX: "participant__profile__values",
        COUNTERFACTUAL_PREFIX: "recourse__values",
        QUESTION_PREFIX: "answers",
        "items_order": "item_order",
    },
    PARTICIPANTS: {
        SCREENING_PREFIX: "screening",
        PROFILE_PREFIX: "profile__values",
        QUESTION_PREFIX: "answers",
        "items_order_": "item_orders",
    },
    PAGE_VISITS: {},
}


def source_fields(file: str) -> list[str]:
    """Every field a file's rows are written from, each once (the writer's `.values()`)."""
    fields = [f for sources in SOURCES[file].values() for f in sources]
    return list(dict.fromkeys([*fields, *FAMILY_SOURCES[file].values()]))
