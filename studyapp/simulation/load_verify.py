"""After a load run: does the database hold exactly what each simulated participant sent?

Every participant complete, their profile stored as sent, every rating and reason stored
as sent on the plan it was given for, no plan rated twice, no plan left unrated, and no
participant the bots did not create (a double start would show as one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count

from studyapp.models import Evaluation, Participant, Recourse, Study
from studyapp.participation import attention
from studyapp.simulation.load import TIME_LIMIT_PASSED, LoadResult


@dataclass
class Verification:
    participants: int = 0
    complete: int = 0
    evaluations_sent: int = 0
    evaluations_matching: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        head = (
            f"{self.complete}/{self.participants} participants completed (the others: the end "
            f"page they saw, as stored), "
            f"{self.evaluations_matching}/{self.evaluations_sent} ratings stored as sent"
        )
        if self.ok:
            return f"verification OK: {head}, no duplicates"
        more = f" (+{len(self.problems) - 5} more)" if len(self.problems) > 5 else ""
        return f"verification FAILED: {head}; {'; '.join(self.problems[:5])}{more}"


def _same_number(stored: Any, sent: Any) -> bool:
    try:
        return abs(float(stored) - float(sent)) < 1e-9
    except (TypeError, ValueError):
        return False


def _check_profile(p: Participant, sent: dict[str, Any], out: list[str]) -> None:
    profile = getattr(p, "profile", None)
    if profile is None:
        out.append(f"{p.code}: no profile stored")
        return
    items = {
        k: v for k, v in sent.items() if k != "page" and not k.startswith(attention.FIELD_PREFIX)
    }
    if set(items) != set(profile.values):
        out.append(f"{p.code}: profile items {sorted(profile.values)} != sent {sorted(items)}")
        return
    wrong = [k for k, v in items.items() if not _same_number(profile.values[k], v)]
    if wrong:
        out.append(f"{p.code}: profile items stored differently from what was sent: {wrong}")


def _check_evaluation(code: str, e: Evaluation | None, sent: dict[str, Any]) -> str:
    """'' when the stored evaluation is the one sent, else what differs."""
    if e is None:
        return f"{code}: plan {sent.get('recourse')} ({sent.get('page')}) sent but not stored"
    marked = {
        k.removeprefix("impossible_")
        for k, v in sent.items()
        if k.startswith("impossible_") and v == "yes"
    }
    diffs = [
        name
        for name, same in (
            ("acceptance", e.acceptance == int(sent["acceptance"])),
            ("action", e.action == int(sent["action"])),
            ("acceptance_why", e.acceptance_why == sent["acceptance_why"]),
            ("action_why", e.action_why == sent["action_why"]),
            ("impossible", set(e.impossible) == marked),
        )
        if not same
    ]
    return f"{code}: {sent['page']} stored differently: {diffs}" if diffs else ""


def _sent_before_the_cut(sent: dict[str, Any], p: Participant, mine: dict) -> dict[str, Any]:
    """What a participant whom the run's time limit stopped did send: the last page they
    filled in may have been stopped before its request, so it counts only where the
    database holds it (and is then checked like the rest)."""
    if not sent:
        return sent
    last = next(reversed(sent))
    data = sent[last]
    stored = (
        p.consented_at is not None
        if last == "consent"
        else hasattr(p, "profile")  # a reverse one-to-one: absent raises, hasattr False
        if last == "profile"
        else last.startswith("evaluation-") and int(data["recourse"]) in mine
    )
    return sent if stored else {k: d for k, d in sent.items() if k != last}


def verify_load(
    study: Study,
    results: Sequence[LoadResult],
    *,
    since: datetime | None = None,
    require_complete: bool = True,
) -> Verification:
    """Compare the database with what the bots sent. `since`: when the run began; nobody
    else joined the study after it, so any participant beyond the bots' is a duplicate.
    `require_complete=False` accepts another end page when the database agrees with what
    the bot saw (a small pool may leave a profile without recourse)."""
    v = Verification(participants=len(results))
    codes = [r.code for r in results if r.code]
    for r in results:
        if not r.code and r.error != TIME_LIMIT_PASSED:
            v.problems.append(f"participant #{r.index} never got a participant link: {r.error}")
    stored = {
        p.code: p
        for p in Participant.objects.filter(study=study, code__in=codes)
        .select_related("profile")
        .only("pk", "code", "state", "consented_at", "profile__values", "study_id")
    }
    evaluations: dict[int, list[Evaluation]] = {}
    for e in Evaluation.objects.filter(participant__in=[p.pk for p in stored.values()]):
        evaluations.setdefault(e.participant_id, []).append(e)
    plans = dict(
        Recourse.objects.filter(participant__in=[p.pk for p in stored.values()])
        .values_list("participant_id")
        .annotate(n=Count("pk"))
        .values_list("participant_id", "n")
    )
    for r in results:
        if not r.code:
            continue
        p = stored.get(r.code)
        if p is None:
            v.problems.append(f"{r.code}: not in the database")
            continue
        mine = {e.recourse_id: e for e in evaluations.get(p.pk, [])}
        sent = r.sent
        if r.error == TIME_LIMIT_PASSED:
            sent = _sent_before_the_cut(sent, p, mine)
        elif r.error:
            v.problems.append(f"{r.code}: stopped in state {p.state}: {r.error}")
        elif p.state == Participant.State.COMPLETED:
            v.complete += 1
        elif require_complete or p.state != r.outcome:
            v.problems.append(f"{r.code}: the bot saw {r.outcome}, the database says {p.state}")
        if "consent" in sent and p.consented_at is None:
            v.problems.append(f"{r.code}: consent sent but not recorded")
        if "profile" in sent:
            _check_profile(p, sent["profile"], v.problems)
        sent_plans = [d for k, d in sent.items() if k.startswith("evaluation-")]
        v.evaluations_sent += len(sent_plans)
        for d in sent_plans:
            problem = _check_evaluation(r.code, mine.get(int(d["recourse"])), d)
            if problem:
                v.problems.append(problem)
            else:
                v.evaluations_matching += 1
        if len(evaluations.get(p.pk, [])) != len(sent_plans):
            v.problems.append(
                f"{r.code}: {len(evaluations.get(p.pk, []))} evaluations stored, {len(sent_plans)} sent"
            )
        if p.state == Participant.State.COMPLETED and plans.get(p.pk, 0) != len(mine):
            v.problems.append(f"{r.code}: {plans.get(p.pk, 0)} plans but {len(mine)} rated")
    if since is not None:
        total = Participant.objects.filter(study=study, created_at__gte=since).count()
        if total != len(codes):
            v.problems.append(
                f"{total} participants joined during the run, the bots were {len(codes)}"
            )
    return v
