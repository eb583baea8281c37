"""The retention schedule at controlled times: `apply_retention --now` before and after each
period deletes exactly the due data classes (checked in the rows and fields themselves, the
other classes untouched), each with a receipt whose counts are what went; a second run
deletes nothing and writes nothing; a dry run changes nothing; bad input changes nothing."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from studyapp.models import (
    DeletionReceipt,
    Evaluation,
    PageVisit,
    Participant,
    Profile,
    Recourse,
    Study,
)
from studyapp.retention.service import retention_apply
from studyapp.studies import services
from tests.studyapp.retention.conftest import day, person, set_rules

#: one rule per class, all counted from the participant's end
RULES = {
    "contact": {"days": 0},
    "panel_id": {"days": 10},
    "free_text": {"days": 30},
    "paradata": {"days": 60},
    "answers": {"days": 90},
    "participant": {"days": 365},
}


def apply(study: Study, at: Any, *more: str) -> list[str]:
    out = io.StringIO()
    call_command("apply_retention", study.slug, "--now", at.isoformat(), *more, stdout=out)
    return out.getvalue().splitlines()


def state(p: Participant) -> dict[str, Any]:
    """Every class of a participant as it is stored now (None: the row is gone)."""
    row = Participant.objects.filter(pk=p.pk).first()
    if row is None:
        return {"row": None}
    evaluations = Evaluation.objects.filter(participant=row).order_by("pk")
    return {
        "contact": row.contact_email,
        "panel_id": (row.recruitment_id, row.panel),
        "text": (
            row.answers.get("comments"),
            [(e.acceptance_why, e.action_why, e.answers.get("more")) for e in evaluations],
        ),
        "paradata": (
            PageVisit.objects.filter(participant=row).count(),
            [e.seconds_on_page for e in evaluations],
            (row.device_class, row.viewport_width, row.viewport_height),
        ),
        "answers": (
            Profile.objects.filter(participant=row).count(),
            Recourse.objects.filter(participant=row).count(),
            evaluations.count(),
            row.screening,
            row.age,
            row.answers.get("trust"),
        ),
    }


FULL_PARADATA = (3, [12.5, 12.5], ("phone", 390, 844))


def full(n: int) -> dict[str, Any]:
    return {
        "contact": f"p{n}@example.org",
        "panel_id": (f"PANEL{n}", {"STUDY_ID": "s1"}),
        "text": (f"thoughts of {n}", [("fair", "hard", "no")] * 2),
        "paradata": FULL_PARADATA,
        "answers": (1, 2, 2, {"gender": "1", "occupation": "1"}, 30 + n, 4),
    }


def receipts(**filters: Any) -> dict[str, tuple[int, int, dict[str, int]]]:
    """data class -> (participants, rows, detail) of the receipts written."""
    rows = DeletionReceipt.objects.filter(**filters).order_by("pk")
    return {r.data_class: (r.participants, r.rows, r.detail) for r in rows}


@pytest.fixture
def people(study: Study) -> tuple[Participant, Participant, Participant]:
    """a ended on day 0, b on day 20, c is still evaluating."""
    set_rules(study, RULES)
    return person(study, 1, day(0)), person(study, 2, day(20)), person(study, 3, None)


def test_before_any_period_nothing_is_deleted(study: Study, people: Any) -> None:
    a, b, c = people
    assert apply(study, day(-1)) == ["kept: nothing due"]
    assert [state(p) for p in people] == [full(1), full(2), full(3)]
    assert not DeletionReceipt.objects.exists()


def test_each_class_goes_when_its_period_has_passed(study: Study, people: Any) -> None:
    a, b, c = people
    # day 35: a's contact, panel id and free text (0, 10, 30 days); b's contact and panel
    # id (20 + 0, 20 + 10); b's free text is due on day 50
    lines = apply(study, day(35))
    assert lines[0] == "kept:"
    assert "  deleted contact of: 2 participant(s), 2 row(s); retention.contact: 0 days after " \
           "the participant's end" in lines  # fmt: skip
    sa, sb = state(a), state(b)
    assert (sa["contact"], sa["panel_id"]) == ("", ("", {}))
    assert (sb["contact"], sb["panel_id"]) == ("", ("", {}))
    assert sa["text"] == (None, [("", "", None)] * 2)
    assert sb["text"] == full(2)["text"]
    for s, n in ((sa, 1), (sb, 2)):
        assert (s["paradata"], s["answers"]) == (full(n)["paradata"], full(n)["answers"])
    assert state(c) == full(3)
    assert receipts() == {
        "panel_id": (2, 2, {"Participant.recruitment_id, panel": 2}),
        "free_text": (1, 5, {
            "Evaluation.acceptance_why, action_why": 2,
            "Evaluation.answers (free-text items)": 2,
            "Participant.answers (free-text items)": 1,
        }),
        "contact": (2, 2, {"Participant.contact_email": 2}),
    }  # fmt: skip

    # the same time again: nothing due, nothing written
    assert apply(study, day(35)) == ["kept: nothing due"]
    assert DeletionReceipt.objects.count() == 3

    # day 95: a's answers (90), a's and b's paradata (60, 80); a's plans went with the answers
    apply(study, day(95))
    sa, sb = state(a), state(b)
    assert sa["answers"] == (0, 0, 0, {}, None, None)
    assert sa["paradata"] == (0, [], ("", None, None))
    assert sb["paradata"] == (0, [None, None], ("", None, None))
    assert sb["answers"] == full(2)["answers"] and sb["text"] == (None, [("", "", None)] * 2)
    assert state(c) == full(3)
    new = receipts(as_of=day(95))
    assert new["answers"] == (1, 6, {
        "Recourse rows": 2, "Evaluation rows": 2, "Profile rows": 1,
        "Participant.screening, age, gender, income_band, income_jpy, attention, "
        "attention_failures, answers, item_orders": 1,
    })  # fmt: skip
    assert new["paradata"] == (2, 10, {
        "PageVisit rows": 6, "Evaluation.seconds_on_page": 2,
        "Participant.device_class, viewport_width, viewport_height": 2,
    })  # fmt: skip
    assert set(new) == {"answers", "paradata", "free_text"}  # b's free text (day 50)

    # a year on: both ended participants go whole; c, still evaluating, is untouched
    apply(study, day(400))
    assert state(a) == state(b) == {"row": None}
    assert state(c) == full(3)
    whole = receipts(as_of=day(400))
    assert whole["participant"][:2] == (2, 2 + 2 + 2 + 1)  # 2 rows, b's 2 plans, 2 ratings, profile
    assert DeletionReceipt.objects.get(data_class="participant").participant_numbers == [a.pk, b.pk]


def test_receipt_counts_equal_the_rows_that_went(study: Study, people: Any) -> None:
    before = {m: m.objects.count() for m in (PageVisit, Evaluation, Recourse, Profile)}
    apply(study, day(95))
    went = {m: before[m] - m.objects.count() for m in before}
    detail: dict[str, int] = {}
    for r in DeletionReceipt.objects.all():
        for k, n in r.detail.items():
            detail[k] = detail.get(k, 0) + n
    assert {m.__name__: n for m, n in went.items()} == {
        name.removesuffix(" rows"): n for name, n in detail.items() if name.endswith(" rows")
    }
    assert all(r.rows == sum(r.detail.values()) for r in DeletionReceipt.objects.all())


def test_a_dry_run_changes_nothing_and_says_what_the_run_does(study: Study, people: Any) -> None:
    before = [state(p) for p in people]
    dry = apply(study, day(95), "--dry-run")
    assert dry[0].startswith("dry run as at 2030-04-06")
    assert [state(p) for p in people] == before and not DeletionReceipt.objects.exists()
    real = apply(study, day(95))
    assert [line.replace("would delete", "deleted") for line in dry[1:]] == real


def test_rules_after_the_study_close_count_from_the_close(study: Study, people: Any) -> None:
    a, b, c = people
    set_rules(study, {"participant": {"days": 30, "after": "study_close"}})
    assert apply(study, day(400)) == ["kept: nothing due"]  # live: not closed yet
    services.study_set_state(study=study, state=Study.State.CLOSED)
    assert Study.objects.get(pk=study.pk).closed_at is not None
    Study.objects.filter(pk=study.pk).update(closed_at=day(10))
    assert apply(study, day(39)) == ["kept: nothing due"]
    apply(study, day(40))
    assert [state(p) for p in people] == [{"row": None}] * 3  # in progress or not
    assert receipts()["participant"][0] == 3


def test_a_reopened_study_has_no_close_to_count_from(study: Study, people: Any) -> None:
    set_rules(study, {"contact": {"days": 0, "after": "study_close"}})
    services.study_set_state(study=study, state=Study.State.CLOSED)
    services.study_set_state(study=study, state=Study.State.LIVE)
    assert Study.objects.get(pk=study.pk).closed_at is None
    assert apply(study, day(400)) == ["kept: nothing due"]


def test_a_study_without_rules_keeps_everything(study: Study) -> None:
    p = person(study, 1, day(0))
    assert study.retention == {}
    run = retention_apply(now=day(10_000))
    assert run.receipts == {"kept": []} and run.failed == {}
    assert state(p) == full(1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "no study 'nope' (studies: kept)"),
        (["kept", "--now", "yesterday"], "--now: 'yesterday' is not an ISO 8601 time"),
        (["--now", "2030-06-01T00:00:00"], "has no time zone (add +00:00 or Z)"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    study: Study, people: Any, args: list[str], message: str
) -> None:
    before = [state(p) for p in people]
    with pytest.raises(CommandError, match=re.escape(message)) as e:
        call_command("apply_retention", *args)
    assert e.value.returncode == 2
    assert [state(p) for p in people] == before and not DeletionReceipt.objects.exists()


def test_all_studies_at_once(study: Study, people: Any) -> None:
    out = io.StringIO()
    call_command("apply_retention", "--now", day(35).isoformat(), stdout=out)
    assert out.getvalue().splitlines()[0] == "kept:"
    out = io.StringIO()
    call_command("apply_retention", "--now", day(35).isoformat(), stdout=out)
    assert out.getvalue().splitlines() == ["nothing due"]
