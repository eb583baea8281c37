"""fair_rl's reward terms, Gower distance and the FACTS metrics against hand-computed values
on tiny inputs."""

from __future__ import annotations

import numpy as np
import pytest

from recourse_engine.encoding import normalise
from recourse_engine.gower import gower_distance, gower_similarity
from recourse_engine.methods.base import MethodError
from recourse_engine.methods.fair_rl.fair_rl_rewards import (
    REWARDS,
    FairReward,
    RewardWeights,
    RunningRates,
    check_reward,
    cost_term,
    ecr_term,
    group_ee_term,
    individual_ee_term,
    nn_distance,
    plausibility_term,
    potential_shaping,
    similarity_term,
    sparsity_term,
    validity_term,
)
from recourse_engine.metrics import (
    equal_choice_of_recourse,
    equal_effectiveness,
    gower_similarity_mean,
    intersect_groups,
    plausibility,
    proportion_difference,
    sparsity_mean,
    transfer_actions,
)
from recourse_engine.schema import load_schema

# a: numeric 0..10 (any), b: ordinal 1..5 (up), c: categorical 3 options (any), s: fixed
TINY = load_schema(
    {
        "name": "tiny",
        "profile_items": [
            {"key": "a", "type": "numeric", "min": 0, "max": 10, "constraint": "any"},
            {"key": "b", "type": "ordinal", "options": list("vwxyz"), "constraint": "up"},
            {"key": "c", "type": "categorical", "options": list("pqr"), "constraint": "any"},
            {"key": "s", "type": "binary", "options": ["f", "m"], "constraint": "fixed"},
        ],
    }
)
X0 = np.array([[0.0, 1, 1, 1]])
PREV = np.array([[5.0, 1, 1, 1]])  # a moved half its range: Gower 0.5 / 4
NXT = np.array([[5.0, 3, 2, 1]])  # + b two of four steps, c changed: Gower (0.5+0.5+1)/4


class Threshold:
    """Approves when item 0 reaches 5 (probability 1 or 0)."""

    relative_to_factual = False

    def predict_proba(self, codes, income=None, *, factual_income=None):
        return (np.atleast_2d(codes)[:, 0] >= 5).astype(float)

    def approves(self, codes, income=None, *, factual_income=None):
        return self.predict_proba(codes) >= 0.5


def test_gower_distance_by_hand():
    assert gower_distance(TINY, X0, NXT)[0] == pytest.approx(0.5)
    assert gower_distance(TINY, X0, PREV)[0] == pytest.approx(0.125)
    assert gower_similarity(TINY, X0, NXT)[0] == pytest.approx(0.5)
    assert np.isnan(gower_distance(TINY, X0, np.full((1, 4), np.nan))[0])


def test_quality_terms_by_hand():
    yes, no = np.array([True]), np.array([False])
    # validity: bonus 1 + shaping γΦ(s')·(1 − done) − Φ(s), Φ = p, + Φ(s') at the end
    assert validity_term(np.array([0.2]), np.array([0.7]), yes, 1.0, 1.0, yes, 0.9)[
        0
    ] == pytest.approx(1.0 - 0.2 + 0.7)
    assert validity_term(np.array([0.2]), np.array([0.1]), no, 2.0, 0.5, no, 0.9)[
        0
    ] == pytest.approx(0.5 * (0.9 * 0.1 - 0.2))
    # similarity: Φ = −gower(x0, x); gower(X0, PREV) = 0.125, gower(X0, NXT) = 0.5
    assert similarity_term(TINY, X0, PREV, NXT, no, 0.9)[0] == pytest.approx(-0.9 * 0.5 + 0.125)
    # at the end: the shaping's −Φ(s) plus Φ(s') paid once
    assert similarity_term(TINY, X0, PREV, NXT, yes, 0.9)[0] == pytest.approx(0.125 - 0.5)
    # sparsity: Φ = −changed/3; PREV changes 1 item, NXT 3
    assert sparsity_term(X0, PREV, NXT, 3, no, 0.9)[0] == pytest.approx(-0.9 + 1 / 3)
    assert sparsity_term(X0, PREV, NXT, 3, yes, 0.9)[0] == pytest.approx(1 / 3 - 1)
    # γ = 1 (and no `done`): the plain difference of the potential
    assert similarity_term(TINY, X0, PREV, NXT)[0] == pytest.approx(-(0.5 - 0.125))
    two = load_schema(
        {
            "name": "two",
            "profile_items": [
                {"key": "u", "type": "numeric", "min": 0, "max": 10, "constraint": "any"},
                {"key": "v", "type": "ordinal", "options": list("abcde"), "constraint": "any"},
            ],
        }
    )
    ref = np.array([[0.5, 1.0], [1.0, 1.0]])  # normalised reference rows
    # x = (5, c) is (0.5, 0.5): 0.5 from the first row, sqrt(0.5) from the second
    assert nn_distance(two, np.array([[5.0, 3.0]]), ref)[0] == pytest.approx(0.5)
    assert plausibility_term(np.array([0.5]), np.array([0.2]))[0] == pytest.approx(0.3)
    assert plausibility_term(np.array([0.5]), np.array([0.2]), no, 0.9)[0] == pytest.approx(
        -0.9 * 0.2 + 0.5
    )


def test_shaping_telescopes_to_minus_the_first_potential_for_any_gamma():
    # an episode of 4 steps with potentials Φ_0..Φ_4 (Φ_4 at the end): the discounted sum
    # of the shaping is −Φ_0 for every γ, so no policy's return changes (Ng et al. 1999)
    phi = np.array([0.3, -0.2, 0.7, 0.1, 0.4])
    done = np.array([0, 0, 0, 1.0])
    for gamma in (0.5, 0.9, 1.0):
        f = potential_shaping(phi[:-1], phi[1:], done, gamma)
        assert float(np.sum(gamma ** np.arange(4) * f)) == pytest.approx(-0.3)
        # a cost term also pays its final potential once: γ^3 Φ_4 on top
        c = cost_term(phi[:-1], phi[1:], done, gamma)
        assert float(np.sum(gamma ** np.arange(4) * c)) == pytest.approx(-0.3 + gamma**3 * 0.4)
    # the undiscounted difference (the earlier definition) does not telescope for γ < 1
    diff = phi[1:] - phi[:-1]
    assert float(np.sum(0.9 ** np.arange(4) * diff)) != pytest.approx(-0.3 + 0.9**3 * 0.4)


def test_fairness_terms_by_hand():
    got = individual_ee_term(
        np.array([True, True, False, True]),
        np.array([True, False, False, False]),
        np.array([True, True, True, False]),
    )
    assert got.tolist() == [0.0, -1.0, 0.0, 0.0]  # the last episode has not ended
    got = group_ee_term(
        np.array([False, False, True, False]),
        np.array([0, 1, 0, 0]),
        np.array([0.4, 0.9]),
        np.array([True, True, True, False]),
    )
    # group 0 lags group 1 by 0.5: its failed, ended episode pays 0.5; successes and the
    # leading group pay nothing
    assert got.tolist() == pytest.approx([-0.5, 0.0, 0.0, 0.0])
    eff = np.array([[0.25, 0.75], [0.5, 0.5], [1.0, 0.0]])
    got = ecr_term(eff, np.array([True, True, False]), np.array([True, True, True]))
    assert got.tolist() == pytest.approx([-0.5, 0.0, 0.0])


def test_running_rates_start_at_the_first_batch_then_move_by_momentum():
    rr = RunningRates(2, momentum=0.1)
    rr.update(np.array([0, 0, 1]), np.array([True, False, True]))
    assert rr.rates.tolist() == [0.5, 1.0]
    rr.update(np.array([0, 0]), np.array([True, True]))  # k = 0.1 * 2
    assert rr.rates[0] == pytest.approx(0.5 + 0.2 * (1.0 - 0.5))
    assert rr.rates[1] == 1.0


def test_full_reward_sums_its_weighted_parts_by_hand():
    model = Threshold()
    ref_z = normalise(TINY, np.array([[5.0, 3, 2, 1]]))  # the approved reference = NXT
    twins = np.array([[1.0, 1, 1, 2]])  # twin of factual 0: a = 1, other group
    refs = [np.array([[0.0, 1, 1, 1], [4.0, 1, 1, 1]]), np.array([[1.0, 1, 1, 2]])]
    w = RewardWeights(
        validity=1, shaping=1, similarity=2, sparsity=0.3, plausibility=1, step_cost=0.1,
        individual_ee=0.5, group_ee=1, ecr=0.25,
    )  # fmt: skip
    r = FairReward("hybrid", w, TINY, model.approves, ref_z, np.array([0]), twins, refs, 3)
    total, parts = r(X0, PREV, NXT, np.array([1.0]), np.array([1.0]), np.array([True]),
                     np.array([True]), np.array([0]))  # fmt: skip
    nn_prev = np.sqrt(0.5**2 + 1.0)  # PREV vs NXT on the normalised scale: b 0.5, c 1
    expect = {
        "validity": 1.0,  # bonus 1; −p(PREV) + p(NXT) at the end = 0 (γ = 1)
        "similarity": 2 * -(0.5 - 0.125),
        "sparsity": 0.3 * -(2 / 3),
        "plausibility": -(0.0 - nn_prev),
        "step": -0.1,
        # the action (a +5, b +2, c -> q) takes the twin to a = 6: approved, as is NXT
        "individual_ee": 0.0,
        "group_ee": 0.0,  # a success pays nothing
        # group 0's refs reach a = 5 and 9 (2 of 2), group 1's a = 6 (1 of 1): spread 0
        "ecr": 0.0,
    }
    for k, v in expect.items():
        assert parts[k][0] == pytest.approx(v), k
    assert total[0] == pytest.approx(sum(expect.values()))
    # a failed final step of group 0 while it lags: group EE pays the lag
    r.running.rates[:] = [0.25, 0.75]
    _, parts = r(X0, X0, PREV, np.array([0.0]), np.array([0.0]), np.array([False]),
                 np.array([True]), np.array([0]))  # fmt: skip
    assert parts["group_ee"][0] == pytest.approx(-0.5)
    # the action (a +5) takes the twin to a = 6, approved, while this step's end is not
    assert parts["individual_ee"][0] == pytest.approx(-0.5)


def test_reward_names_and_weights_are_checked():
    assert set(REWARDS) == {"none", "individual_ee", "group_ee", "ecr", "hybrid"}
    assert check_reward("hybrid") == ("individual_ee", "group_ee", "ecr")
    with pytest.raises(MethodError, match="unknown reward 'fairest'; known: none, "):
        check_reward("fairest")
    with pytest.raises(MethodError, match="unknown reward weight 'beauty'"):
        RewardWeights.of({"beauty": 1.0})
    with pytest.raises(MethodError, match="must be a number >= 0"):
        RewardWeights.of({"ecr": -1.0})


def test_transfer_actions_by_hand():
    f = np.array([2.0, 2, 1, 1])
    cf = np.array([5.0, 4, 3, 1])  # a +3, b +2, c -> r
    targets = np.array([[9.0, 4, 2, 2], [0.0, 5, 3, 1]])
    got = transfer_actions(TINY, targets, f, cf)
    # a clipped at 10; b = 4 + 2 clipped at 5; c set to r; s (fixed) kept
    assert got.tolist() == [[10.0, 5, 3, 2], [3.0, 5, 3, 1]]
    down = transfer_actions(TINY, targets, np.array([2.0, 4, 1, 1]), np.array([2.0, 2, 1, 1]))
    assert down[:, 1].tolist() == [4.0, 5.0]  # b is up-only: a decrease is not applied


def test_facts_equal_effectiveness_and_choice_by_hand():
    schema = load_schema(
        {
            "name": "one",
            "profile_items": [
                {"key": "x", "type": "numeric", "min": 0, "max": 10, "constraint": "any"},
                {"key": "s", "type": "binary", "options": ["a", "b"], "constraint": "fixed"},
            ],
        }
    )
    model = Threshold()
    f = np.array([[4.0, 1], [3, 1], [1, 2], [2, 2]])
    cf = np.array([[5.0, 1], [5, 1], [np.nan, np.nan], [5, 2]])  # actions +1, +2, +3
    groups = np.array(["A", "A", "B", "B"])
    per, gap = equal_effectiveness(schema, model, f, cf, groups)
    # A: 4 (+1) and 3 (+2) reach 5; B: 1 reaches at most 4, 2 (+3) reaches 5
    assert per == {"A": 1.0, "B": 0.5} and gap == 0.5
    per, gap = equal_choice_of_recourse(schema, model, f, cf, groups, phi=0.5)
    # eff(+1) = 1/2, eff(+2) = eff(+3) = 1 for A; for B only +3 reaches 0.5
    assert per == pytest.approx({"A": 1.0, "B": 1 / 3}) and gap == pytest.approx(2 / 3)
    per, pd_ = proportion_difference(~np.isnan(cf[:, 0]), groups)
    assert per == {"A": 1.0, "B": 0.5} and pd_ == 0.5
    assert sparsity_mean(f, cf) == 1.0
    assert gower_similarity_mean(schema, f, cf) == pytest.approx(1 - np.mean([0.05, 0.1, 0.15]))
    assert plausibility(schema, cf, np.array([[5.0, 1], [5.0, 2]])) == pytest.approx(0.0)
    assert intersect_groups(["f", "m"], [1, 2]).tolist() == ["f|1", "m|2"]
