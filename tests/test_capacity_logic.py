"""The capacity benchmark's own logic (benchmarks/capacity_dwell.py, the oTree bots' form
filling): the dwell distribution it states, the search over N and what counts as meeting
the target. No server, no timing."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from benchmarks.capacity_dwell import (
    CAP,
    DEMO_PAGES,
    DwellTimes,
    largest_passing,
    median_s,
    next_step,
    passes,
    plan_run,
)
from benchmarks.otree_walk import form_answers


def _run(n: int, p95: float, *, errors: int = 0, ok: bool = True) -> dict:
    return {
        "n": n,
        "latency_ms": {"all": {"p95": p95}},
        "errors": errors,
        "failed_participants": 0,
        "verification": {"ok": ok},
    }


def test_dwell_draws_have_the_stated_median_and_stay_under_the_cap() -> None:
    rng = random.Random(1)
    draws = [DwellTimes()("profile", rng) for _ in range(4000)]
    assert statistics.median(draws) == pytest.approx(median_s("profile"), rel=0.05)
    assert max(draws) <= CAP * median_s("profile")
    assert min(draws) > 0


def test_a_time_scale_shortens_every_dwell_by_that_factor() -> None:
    full = [DwellTimes(1.0)("consent", random.Random(s)) for s in range(50)]
    tenth = [DwellTimes(0.1)("consent", random.Random(s)) for s in range(50)]
    assert tenth == pytest.approx([0.1 * x for x in full])
    with pytest.raises(ValueError):
        DwellTimes(0.0)
    with pytest.raises(ValueError):
        DwellTimes(1.5)


def test_an_unknown_page_gets_the_default_median() -> None:
    rng = random.Random(2)
    draws = [DwellTimes()("a-page-of-ones-own", rng) for _ in range(2000)]
    assert statistics.median(draws) == pytest.approx(median_s("a-page-of-ones-own"), rel=0.08)


def test_the_run_plan_bounds_its_typical_length() -> None:
    dwell = DwellTimes()
    plan = plan_run(dwell, ramp_s=60)
    medians = sum(median_s(p) for p in DEMO_PAGES)
    assert plan.typical_s > 60 + medians  # a 99th percentile is above the medians' sum
    assert plan.typical_s < plan.bound_s
    assert plan.bound_s == pytest.approx(60 + CAP * medians + 60)
    assert math.isclose(plan_run(DwellTimes(0.5), 0).bound_s - 60, (plan.bound_s - 120) / 2)


def test_a_run_passes_only_under_the_target_with_no_error_and_a_clean_check() -> None:
    assert passes(_run(100, 150))
    assert not passes(_run(100, 250))
    assert not passes(_run(100, 150, errors=1))
    assert not passes(_run(100, 150, ok=False))
    assert not passes({"n": 100, "failed": "the generator exited 2"})
    assert passes(_run(100, 250), target_ms=300)


def test_the_largest_n_is_the_last_pass_before_the_first_failure() -> None:
    runs = [_run(1000, 400), _run(250, 80), _run(500, 150), _run(1500, 120)]
    assert largest_passing(runs) == 500  # 1500's pass above a failure does not count
    assert largest_passing([_run(250, 900)]) == 0
    assert largest_passing([]) == 0


def test_the_search_stops_at_the_first_failure() -> None:
    steps = (250, 500, 1000)
    assert next_step(steps, []) == 250
    assert next_step(steps, [_run(250, 50)]) == 500
    assert next_step(steps, [_run(250, 50), _run(500, 300)]) is None
    assert next_step(steps, [_run(250, 50), _run(500, 60), _run(1000, 70)]) is None


def test_otree_forms_are_filled_as_a_participant_would() -> None:
    body = """
    <input type="hidden" name="page" value="evaluation-2">
    <input class="form-check-input" type="radio" id="id_a-0" name="acceptance_2" value="1">
    <input class="form-check-input" type="radio" id="id_a-1" name="acceptance_2" value="7">
    <input class="form-control" id="id_age" max="30" min="20" name="age" type="number">
    <textarea class="form-control" id="id_w" name="action_why_2"></textarea>
    <button class="otree-btn-next btn btn-primary">Next</button>
    """
    for seed in range(20):
        data = form_answers(body, random.Random(seed))
        assert set(data) == {"page", "acceptance_2", "age", "action_why_2"}
        assert data["page"] == "evaluation-2"
        assert data["acceptance_2"] in {"1", "7"}
        assert 20 <= int(data["age"]) <= 30
        assert data["action_why_2"]
