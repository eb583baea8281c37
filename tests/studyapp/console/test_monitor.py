"""Monitor figures against counts made directly from the rows."""

from __future__ import annotations

import json
import statistics
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from studyapp.models import Condition, Participant, Quota
from studyapp.participation.assignment import quota_count
from studyapp.studies.monitor import study_monitor
from tests.studyapp.conftest import make_study

S = Participant.State
G = Participant.Generation


@pytest.fixture
def populated(transactional_db: Any) -> Any:
    study = make_study(slug="mon")
    Condition.objects.create(study=study, name="a", position=0)
    Condition.objects.create(study=study, name="b", position=1)
    now = timezone.now()
    rng = np.random.default_rng(5)
    states = [S.COMPLETED] * 7 + [S.SCREENED_OUT] * 3 + [S.EVALUATING] * 2 + [S.WAITING] * 2
    states += [S.QUOTA_FULL, S.WITHDRAWN, S.NO_RECOURSE, S.SCREENING]
    for i, state in enumerate(states):
        p = Participant.objects.create(
            study=study,
            state=state,
            condition="a" if i % 2 else "b",
            screening={"gender": ("1" if i % 3 else 2), "loans": ["8"] if i % 4 else ["1", "3"]},
            generation=G.FAILED if state == S.NO_RECOURSE else "",
            flagged=state == S.NO_RECOURSE,
        )
        created = now - timedelta(minutes=int(rng.integers(5, 200)))
        fields: dict[str, Any] = {"created_at": created}
        if state in (S.COMPLETED, S.NO_RECOURSE, S.SCREENED_OUT):
            fields["finished_at"] = created + timedelta(seconds=float(rng.uniform(60, 900)))
        if state in (S.COMPLETED, S.EVALUATING, S.NO_RECOURSE):
            queued = created + timedelta(seconds=30)
            fields["generation_queued_at"] = queued
            fields["generation_finished_at"] = queued + timedelta(
                seconds=float(rng.uniform(0.1, 3))
            )
        Participant.objects.filter(pk=p.pk).update(**fields)
    Quota.objects.create(study=study, condition=study.conditions.get(name="a"), limit=4)
    Quota.objects.create(study=study, screening_key="gender", screening_value="2", limit=50)
    Quota.objects.create(study=study, screening_key="gender", screening_value="Male", limit=5)
    Quota.objects.create(study=study, screening_key="loans", screening_value="3", limit=9)
    return study


def test_figures_match_rows(populated: Any) -> None:
    study = populated
    m = study_monitor(study)
    json.dumps(m)  # JSON-serialisable
    rows = list(Participant.objects.filter(study=study))
    assert m["participants"] == len(rows) == 18
    for state in S.values:
        assert m["by_state"][state] == sum(p.state == state for p in rows)
    for cond in ("a", "b"):
        for state in S.values:
            assert m["by_condition"][cond][state] == sum(
                p.state == state and p.condition == cond for p in rows
            )
    done = [p for p in rows if p.state == S.COMPLETED]
    admitted = [p for p in rows if p.state not in (S.SCREENING, S.SCREENED_OUT, S.QUOTA_FULL)]
    assert m["completion"]["rate"] == round(len(done) / len(rows), 4)
    assert m["completion"]["past_screening"] == len(admitted)
    assert m["completion"]["rate_past_screening"] == round(len(done) / len(admitted), 4)
    durations = [(p.finished_at - p.created_at).total_seconds() for p in done]
    assert m["duration_seconds"]["median"] == pytest.approx(statistics.median(durations), abs=1e-3)
    assert m["duration_seconds"]["n"] == 7
    lat = [
        (p.generation_finished_at - p.generation_queued_at).total_seconds()
        for p in rows
        if p.generation_finished_at
    ]
    assert m["recourse_latency_seconds"]["n"] == len(lat) == 10
    assert m["recourse_latency_seconds"]["median"] == pytest.approx(
        statistics.median(lat), abs=1e-3
    )
    assert m["recourse_latency_seconds"]["p95"] == pytest.approx(np.percentile(lat, 95), abs=1e-3)
    assert m["recourse_failures"]["failed"] == 1 and m["recourse_failures"]["flagged"] == 1
    assert m["last_activity"] == max(p.updated_at for p in rows).isoformat()
    fresh = timezone.now() - timedelta(minutes=study.assignment_timeout_minutes)
    in_progress = (S.SCREENING, S.CONSENT, S.SCENARIO, S.PROFILE, S.WAITING, S.EVALUATING)

    def cell(pred: Any) -> int:
        return sum(
            pred(p)
            and (p.state == S.COMPLETED or (p.state in in_progress and p.created_at >= fresh))
            for p in rows
        )

    qa, qg, qmale, qloans = m["quotas"]
    assert (qa["condition"], qa["limit"]) == ("a", 4)
    assert qa["count"] == cell(lambda p: p.condition == "a")
    assert qa["full"] == (qa["count"] >= 4)
    assert qg["count"] == cell(lambda p: str(p.screening.get("gender")) == "2") > 0
    assert qmale["count"] == qg["count"]  # a label names the same option as its code
    assert qloans["count"] == cell(lambda p: "3" in p.screening["loans"]) > 0
    # the participant side's own count (used for screen-outs) agrees
    for figure, quota in zip(m["quotas"], study.quotas.order_by("pk"), strict=True):
        assert figure["count"] == quota_count(quota)


def test_queries_do_not_grow_with_participants(populated: Any) -> None:
    with CaptureQueriesContext(connection) as few:
        study_monitor(populated)
    Participant.objects.bulk_create(
        [Participant(study=populated, state=S.COMPLETED, condition="a") for _ in range(200)]
    )
    with CaptureQueriesContext(connection) as many:
        m = study_monitor(populated)
    assert m["participants"] == 218
    assert len(many.captured_queries) == len(few.captured_queries)


def test_empty_study(transactional_db: Any) -> None:
    m = study_monitor(make_study(slug="empty"))
    assert m["participants"] == 0 and m["completion"]["rate"] is None
    assert m["duration_seconds"]["median"] is None and m["last_activity"] is None
