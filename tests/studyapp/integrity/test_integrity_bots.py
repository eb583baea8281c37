"""Each bot kind is flagged by its own signal and a human-paced bot by none; the summary's
figures are checked against the stored rows directly."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from studyapp.integrity.summary import MIN_TEXT_CHARS, SPEED_RATIO, summary_rows
from studyapp.models import Evaluation, IntegrityRecord, PageVisit, Participant
from studyapp.simulation.integrity_bots import PacedBot, PasterBot, SpeederBot
from tests.studyapp.integrity.conftest import integrity_study

HUMANS = 6


def _completed(study: Any, kind: type[PacedBot], seed: int, clock: Any) -> int:
    """The participant id of the first bot of `kind` from `seed` on that completes (a
    synthetic person the pool has no admissible plan for ends with no_recourse)."""
    for s in range(seed, seed + 20):
        result = kind(study, seed=s, test=False, think=clock.advance).run()
        if result.outcome == "completed":
            return Participant.objects.get(code=result.code).pk
        assert result.outcome == "no_recourse", result
    raise AssertionError(f"no {kind.kind} bot completed")


def test_each_bot_is_flagged_by_its_own_signal_and_a_human_paced_one_by_none(
    transactional_db: Any, eager: None, clock: Any
):
    study = integrity_study()
    humans = [_completed(study, PacedBot, 100 * i, clock) for i in range(HUMANS)]
    speeder = _completed(study, SpeederBot, 1000, clock)
    paster = _completed(study, PasterBot, 2000, clock)
    rows = {r["participant"]: r for r in summary_rows(study)}

    for pk in humans:
        assert rows[pk]["signals"] == "", rows[pk]
    assert rows[speeder]["signals"] == "speeding", rows[speeder]
    assert rows[paster]["signals"] == "pasted", rows[paster]
    for pk in [*humans, speeder, paster]:  # every plan page carried the script
        plans = Evaluation.objects.filter(participant_id=pk).count()
        assert rows[pk]["recorded_pages"] == plans >= 1

    # speeding: against each page's median over the completed, computed here directly
    own: dict[int, dict[str, float]] = {}
    done = Participant.objects.filter(study=study, state=Participant.State.COMPLETED)
    for v in PageVisit.objects.filter(participant__in=done, exited_at__isnull=False):
        own.setdefault(v.participant_id, {})[v.page] = (v.exited_at - v.entered_at).total_seconds()
    pages = {page for times in own.values() for page in times}
    median = {pg: statistics.median(t[pg] for t in own.values() if pg in t) for pg in pages}
    for pk, times in own.items():
        expected = sum(median[pg] for pg in times)
        assert rows[pk]["seconds"] == pytest.approx(sum(times.values()), abs=1e-3)
        assert rows[pk]["median_seconds"] == pytest.approx(expected, abs=1e-3)
        assert rows[pk]["speeding"] == int(sum(times.values()) / expected < SPEED_RATIO)

    # the paster's pastes: one per reason, stored per field and summed
    records = IntegrityRecord.objects.filter(participant_id=paster, page__startswith="evaluation-")
    assert records.count() == Evaluation.objects.filter(participant_id=paster).count()
    for r in records:
        assert r.fields["acceptance_why"]["pastes"] == 1 and r.fields["action_why"]["pastes"] == 1
        assert r.pastes == 2 and r.typing_ms == 0
    assert rows[paster]["pastes"] == sum(r.pastes for r in records)
    assert rows[paster]["pasted_chars"] == sum(r.pasted_chars for r in records)


class _StraightLiner(PacedBot):
    kind = "straight"

    def _answers(self, page: str, body: str) -> dict[str, Any]:
        data = super()._answers(page, body)
        if page.startswith("evaluation-"):
            data["acceptance"] = data["action"] = "4"
        return data


class _Copier(PacedBot):
    """Gives the same long reason as another copier."""

    kind = "copier"

    def why_text(self) -> str:
        return "I think the plan is reasonable; it matches what my bank told me last year."


def test_straight_lining_and_a_free_text_shared_across_participants_are_flagged(
    transactional_db: Any, eager: None, clock: Any
):
    study = integrity_study("copies")
    straight = _completed(study, _StraightLiner, 1, clock)
    a, b = _completed(study, _Copier, 30, clock), _completed(study, _Copier, 60, clock)
    other = _completed(study, PacedBot, 90, clock)
    rows = {r["participant"]: r for r in summary_rows(study)}
    assert rows[straight]["straightlining"] == 1 and rows[straight]["rating_sd"] == 0
    assert "identical_text" in rows[a]["signals"] and "identical_text" in rows[b]["signals"]
    assert rows[a]["shared_texts"] == 1  # one distinct text, given by both
    assert rows[other]["identical_text"] == 0 and rows[other]["straightlining"] == 0
    # under four completed participants, nobody is judged for speed
    assert all(r["speeding"] is None for r in rows.values())
    assert len(_Copier.why_text(None)) >= MIN_TEXT_CHARS  # type: ignore[arg-type]
