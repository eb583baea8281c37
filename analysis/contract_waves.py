"""The export contract of a multi-wave study (kind ``multi_wave``; docs/waves.md): the `wave`
column of evaluations.csv and the files waves.csv and changes.csv, each column with its
codebook entry. Kept apart from `analysis.contract` (which imports it) for its size.

Single-wave exports have no `wave` column; readers take wave = 1. In a multi-wave export
evaluations.csv's `x_<item>` are the profile scored in the row's wave and `cf_<item>` the plan
shown then; participants.csv's `x_<item>` are the last wave's profile.
"""

from __future__ import annotations

from analysis.contract import ISO_UTC, Entry

WAVES = "waves.csv"
CHANGES = "changes.csv"
#: the model between waves (`recourse_engine.model_updates.MODEL_POLICIES`)
MODEL_POLICIES = ("frozen", "retrained", "multiplicity")
#: a reported change the study accepted and marked (empty: none)
FLAGS = ("outside", "fixed", "direction")

#: the column evaluations.csv gains
WAVE_ENTRY = Entry("integer", "1..5", "the wave in which the plan was shown and rated")

#: waves.csv: one row per participant x wave reached (then `x_<item>`: the profile scored)
WAVES_ENTRIES: dict[str, Entry] = {
    "study": Entry("string", "", "study slug"),
    "participant": Entry("integer", ">=1", "participant id (as in participants.csv)"),
    "wave": Entry("integer", "1..5", "the wave"),
    "condition": Entry("string", "", "the participant's condition (empty: none)"),
    "model_policy": Entry(
        "string", "; ".join(MODEL_POLICIES), "the condition's model between waves"
    ),
    "announced": Entry("integer", "0; 1", "1 when the condition announces the model's change"),
    "model_hash": Entry(
        "string", "64 hex digits", "SHA-256 of the saved model that decided this wave"
    ),
    "decision": Entry("string", "approved; rejected; hypothetical", "the model's decision"),
    "probability": Entry("float", "0..1", "the model's probability of approval (empty for a rule)"),
    "followed_recourse": Entry(
        "integer",
        ">=1",
        "the recourse the participant said they would follow after this "
        "wave (as in evaluations.csv; empty: none, or not asked)",
    ),  # fmt: skip
    "decided_at": Entry("datetime", ISO_UTC, "when the wave's profile was scored"),
}

#: changes.csv: one row per participant x re-application wave (>= 2) x profile item
CHANGES_ENTRIES: dict[str, Entry] = {
    "study": Entry("string", "", "study slug"),
    "participant": Entry("integer", ">=1", "participant id (as in participants.csv)"),
    "wave": Entry("integer", "2..5", "the re-application wave the report was made for"),
    "item": Entry("string", "", "the profile item's key"),
    "before": Entry("float", "", "option code before (the previous wave's profile)"),
    "after": Entry("float", "", "option code reported now"),
    "changed": Entry("integer", "0; 1", "1 when after differs from before"),
    "planned": Entry(
        "float",
        "",
        "the code the followed plan asked for (empty: the plan leaves the item, "
        "or no plan was followed)",
    ),  # fmt: skip
    "effort": Entry("integer", "1..7", "the reported effort of the change (empty: not asked)"),
    "flag": Entry(
        "string",
        "; ".join(FLAGS),
        "a change the study accepted and marked: outside the "
        "item's options, to a fixed item, against its up/down constraint (empty: none)",
    ),  # fmt: skip
}
