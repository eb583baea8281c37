"""The participant flow (CONSORT style) counted from the export's states and outcomes.

Each participant leaves the flow at one of three stages, read from their own row: before
consent (no `consented_at`), after consent but before the decision model judged a profile
(no `decision`), or after it. Everyone who did not complete leaves at their stage with their
outcome; so every outcome's count summed over the stages is that outcome's count in
participants.csv, and each stage's "went on" is the one before less those who left."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from analysis import contract as c

#: the outcome column's values as the diagram words them
OUTCOME_LABELS = {
    "declined_consent": "declined consent",
    "screened_out": "screened out",
    "quota_full": "quota full",
    "approved": "approved by the decision model (ended)",
    "no_recourse": "no admissible recourse",
    "failed_attention": "failed the attention checks",
    "withdrew": "withdrew",
    "expired": "did not return in time (expired)",
    "incomplete": "left unfinished (incomplete)",
}
COMPLETED = "completed"
#: (name of the stage, name of the box of those who went on past it)
STAGES = (
    ("before consent", "Consented"),
    ("after consent, before the decision", "Profile judged by the decision model"),
    ("after the decision", "Completed"),
)
#: outcomes that end a participation at a known stage when the export lacks the columns
_DEFAULT_STAGE = {"declined_consent": 0, "screened_out": 1, "quota_full": 1}


@dataclass
class Stage:
    name: str
    entered: int
    exits: dict[str, int]
    went_on: int
    went_on_label: str


@dataclass
class Flow:
    started: int
    n_test: int
    with_test: bool
    stages: list[Stage]
    outcomes: dict[str, int]
    by_state: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)

    @property
    def completed(self) -> int:
        return self.stages[-1].went_on

    def table(self) -> pd.DataFrame:
        """One row per box: stage, box, n (the CSV and LaTeX table of the flow)."""
        rows = [{"stage": "", "box": "Opened the study link", "n": self.started}]
        for s in self.stages:
            for outcome, n in s.exits.items():
                rows.append({"stage": s.name, "box": f"left: {OUTCOME_LABELS.get(outcome, outcome)}",
                             "n": n})  # fmt: skip
            rows.append({"stage": s.name, "box": s.went_on_label, "n": s.went_on})
        return pd.DataFrame(rows)


def _filled(frame: pd.DataFrame, column: str) -> pd.Series:
    if column not in frame:
        return pd.Series(pd.NA, index=frame.index, dtype="object")
    return frame[column].astype("string").str.strip().replace("", pd.NA)


def exit_stage(participants: pd.DataFrame) -> pd.Series:
    """0, 1 or 2 per participant: the stage their participation ended in (see the module)."""
    if "consented_at" in participants and "decision" in participants:
        consented = _filled(participants, "consented_at").notna()
        decided = _filled(participants, "decision").notna()
        stage = pd.Series(2, index=participants.index)
        stage[~decided] = 1
        stage[~consented] = 0
        # a participant who declined consent has no consent time, whatever else they have
        stage[participants["outcome"] == "declined_consent"] = 0
        return stage
    return participants["outcome"].map(_DEFAULT_STAGE).fillna(2).astype(int)


def participant_flow(participants: pd.DataFrame, n_test: int, with_test: bool) -> Flow:
    """The flow of `participants` (test participants already left out, `n_test` of them)."""
    outcome = participants["outcome"].astype(str)
    stage = exit_stage(participants)
    order = [o for o in c.OUTCOMES if o != COMPLETED]
    order += sorted(set(outcome) - set(order) - {COMPLETED})
    stages, entered = [], len(participants)
    for i, (name, label) in enumerate(STAGES):
        here = outcome[(stage == i) & (outcome != COMPLETED)]
        counts = here.value_counts()
        exits = {o: int(counts[o]) for o in order if counts.get(o, 0)}
        went_on = entered - sum(exits.values())
        stages.append(Stage(name, entered, exits, went_on, label))
        entered = went_on
    counts = outcome.value_counts()
    outcomes = {o: int(counts.get(o, 0)) for o in (COMPLETED, *order) if counts.get(o, 0)}
    by_state = pd.crosstab(participants["state"].astype(str), outcome).rename_axis(
        index="state", columns="outcome"
    )
    return Flow(len(participants), n_test, with_test, stages, outcomes, by_state)
