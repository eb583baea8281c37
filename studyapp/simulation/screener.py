"""How a bot answers a page whose items carry end rules (a screener, `definition.logic`):
so that the study ends for it, when it was told to be screened out, or else so that it goes
on. The bot keeps the answers it gave (`given`), by the names conditions use, as the server
stores them, so an end rule that also names an earlier answer is judged as the server will.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from studyapp.definition import logic
from studyapp.definition.question_types import AnswerError, answer_check
from studyapp.definition.questions import Question

#: random answers tried before a bot gives up going past a screener
TRIES = 200


class ScreenerError(RuntimeError):
    """The page's answers cannot end (or cannot avoid ending) the study as the bot was told."""


def stored(q: Question, answer: Any) -> Any:
    """A posted answer as the server stores it (None: not given)."""
    try:
        return answer_check(q, answer)
    except AnswerError:
        return None


def screened(
    items: Sequence[Question],
    answers: dict[str, Any],
    given: Mapping[str, Any],
    *,
    end: bool,
    draw: Callable[[Question], Any],
) -> dict[str, Any]:
    """The page's answers (item key -> as posted) changed so that its end rules end the
    study (`end`) or do not; `given`: the earlier answers by name; `draw`: a fresh answer."""
    if not any(q.end_if.is_set() for q in items):
        return answers

    def ends(candidate: Mapping[str, Any]) -> bool:
        now = {f"q.{q.key}": stored(q, candidate.get(q.key)) for q in items}
        return logic.ending(items, {**given, **now}) is not None

    if ends(answers) == end:
        return answers
    if end:
        for q in (q for q in items if q.end_if.is_set()):
            met = _meeting(q.end_if, items, answers)
            if ends(met):
                return met
        raise ScreenerError("no answer on this page meets its end rule (earlier answers?)")
    named = {c.question for q in items for _at, c in q.end_if.clauses()}
    for _ in range(TRIES):
        answers = {**answers, **{q.key: draw(q) for q in items if f"q.{q.key}" in named}}
        if not ends(answers):
            return answers
    raise ScreenerError(f"no answer found in {TRIES} tries that passes the page's end rules")


def _meeting(
    condition: logic.Condition, items: Sequence[Question], answers: dict[str, Any]
) -> dict[str, Any]:
    """Answers that meet each clause of `all` and the first of `any` naming this page."""
    by_name = {f"q.{q.key}": q for q in items}
    out = dict(answers)
    for clause in [*condition.all, *condition.any[:1]]:
        q = by_name.get(clause.question)
        if q is not None:
            value = _meets(clause, q)
            multi = logic.COMPARED_AS.get(q.type) == "codes"
            out[q.key] = [value] if multi else value
    return out


def _meets(clause: logic.Clause, q: Question) -> str:
    """One answer (as posted) that meets the clause."""
    value = clause.values[0] if clause.op == "in" else clause.value
    if clause.op == "not_equals":
        others = [c for c in q.codes() if str(c) != str(value)] or [q.min]
        return str(others[0])
    if isinstance(value, str):
        return value
    number = float(value) + {"<": -1, ">": 1}.get(clause.op, 0) * (
        q.step if q.type == "slider" else 1
    )
    return str(int(number)) if number == int(number) else str(number)
