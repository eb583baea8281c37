"""The reward of `fair_rl`: quality terms plus the fairness terms, selectable by name.

Every term is a function of one transition x_{t} -> x_{t+1} of an episode that started at
the factual x_0 (item codes), so each can be checked by hand on tiny inputs. Each quality
term has a potential Φ (a function of the state) and is paid as potential-based shaping
that respects the discount γ (Ng, Harada & Russell, ICML 1999):

    F_t = γ Φ(x_{t+1}) · (1 − done) − Φ(x_t)       (Φ of the ended episode's state is 0)

plus Φ(x_end) paid once when the episode ends (the recourse's own quality: what the
method is asked to optimise). The shaping telescopes over an episode to
−Φ(x_0), a constant per factual (0 for similarity and sparsity), so it changes no policy's
return and therefore no optimal policy; the discounted return of an episode of length T is
−Φ(x_0) + γ^{T−1} · (outcome). With γ = 1 this is Φ(x_{t+1}) − Φ(x_t) at every step, the
earlier undiscounted definition (which for γ < 1 was not policy-invariant).

* validity:      bonus · 1[h(x_{t+1}) approves] + the term of Φ = shaping · p(x), p the
                 model's approval probability (a black box: a margin at the end);
* similarity:    Φ = −gower(x_0, x) (`recourse_engine.gower`), paid at the end too;
* sparsity:      Φ = −L0(x_0, x) / number of actionable items, paid at the end too;
* plausibility:  Φ = −nn(x), nn = Euclidean distance on the normalised scale to the
                 nearest profile the model approves in the training data (a density
                 proxy: far from every approved person is implausible), paid at the end too;
* step cost:     −c per step.

Fairness terms are paid when an episode ends (approved or out of steps), following the
notions of FACTS (Kavouras et al., NeurIPS 2023) that `recourse_engine.metrics` measures:

* individual EE (equal effectiveness for similar individuals): −|h(x_{t+1}) − h(twin + a)|,
  where twin is the most similar (Euclidean on the normalised scale, group items left out)
  rejected training person of another group and a the episode's action x_0 -> x_{t+1}
  (`metrics.transfer_actions`): similar people in different groups should find the same
  action equally effective;
* group EE (equal effectiveness across groups): −(max_g SR_g − SR_{g(i)})_+ · (1 − s_i),
  s_i the episode's success and SR_g a running (exponential moving) success rate of group
  g's episodes. It is the gradient of −|SR_0 − SR_1| with respect to the lagging group's
  outcomes only: failing costs more the further one's group lags, and the leading group is
  never pushed to fail (levelling up, not down);
* ECR (equal choice of recourse): −(max_g eff_g(a) − min_g eff_g(a)) for a successful
  episode's action a, eff_g(a) the share of a fixed sample of group g's rejected people
  that a gets approved: actions that work as well for every group widen each group's
  choice of effective recourses equally (FACTS counts the actions with eff >= phi per
  group; the term is that count's smooth per-action version).

Variants by name (`REWARDS`): `none` (quality terms only), `individual_ee`, `group_ee`,
`ecr`, and `hybrid` (individual EE + group EE + ECR: individual and group fairness
together, the paper's hybrid EE–ECR).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ...encoding import normalise
from ...gower import gower_distance
from ...metrics import transfer_actions
from ...schema import FeatureSchema
from ..base import MethodError

#: reward variant -> the fairness terms it adds to the quality terms
REWARDS: dict[str, tuple[str, ...]] = {
    "none": (),
    "individual_ee": ("individual_ee",),
    "group_ee": ("group_ee",),
    "ecr": ("ecr",),
    "hybrid": ("individual_ee", "group_ee", "ecr"),
}


def check_reward(name: str) -> tuple[str, ...]:
    try:
        return REWARDS[name]
    except KeyError:
        raise MethodError(
            f"fair_rl: unknown reward {name!r}; known: {', '.join(REWARDS)}"
        ) from None


@dataclass(frozen=True)
class RewardWeights:
    validity: float = 1.0
    shaping: float = 1.0
    similarity: float = 5.0
    sparsity: float = 0.1
    plausibility: float = 0.5
    step_cost: float = 0.02
    individual_ee: float = 0.5
    group_ee: float = 1.0
    ecr: float = 0.5

    @classmethod
    def of(cls, given: dict[str, float] | None) -> RewardWeights:
        given = dict(given or {})
        known = {f.name for f in fields(cls)}
        bad = sorted(set(given) - known)
        if bad:
            raise MethodError(
                f"fair_rl: unknown reward weight {bad[0]!r}; known: {', '.join(sorted(known))}"
            )
        for k, v in given.items():
            if not (isinstance(v, int | float) and np.isfinite(v) and v >= 0):
                raise MethodError(f"fair_rl: reward weight {k!r} must be a number >= 0, got {v!r}")
        return cls(**{k: float(v) for k, v in given.items()})


# ---------------------------------------------------------------------------------------
# the terms, each on arrays of transitions


def potential_shaping(
    phi_prev: np.ndarray, phi_next: np.ndarray, done: np.ndarray, gamma: float
) -> np.ndarray:
    """γΦ(s') − Φ(s) with Φ = 0 once the episode has ended (Ng et al. 1999)."""
    d = np.asarray(done, dtype=float)
    return gamma * np.asarray(phi_next, float) * (1.0 - d) - np.asarray(phi_prev, float)


def cost_term(
    phi_prev: np.ndarray, phi_next: np.ndarray, done: np.ndarray, gamma: float
) -> np.ndarray:
    """A quality term: the shaping of its potential, plus the potential paid at the end
    (for γ = 1: Φ(s') − Φ(s) at every step)."""
    end = np.asarray(phi_next, float) * np.asarray(done, dtype=float)
    return potential_shaping(phi_prev, phi_next, done, gamma) + end


def validity_term(
    p_prev: np.ndarray,
    p_next: np.ndarray,
    approved: np.ndarray,
    bonus: float,
    shaping: float,
    done: np.ndarray | None = None,
    gamma: float = 1.0,
) -> np.ndarray:
    d = np.zeros(np.shape(p_prev)) if done is None else np.asarray(done, dtype=float)
    shaped = cost_term(shaping * np.asarray(p_prev), shaping * np.asarray(p_next), d, gamma)
    return bonus * np.asarray(approved, dtype=float) + shaped


def similarity_term(
    schema: FeatureSchema,
    x0: np.ndarray,
    prev: np.ndarray,
    nxt: np.ndarray,
    done: np.ndarray | None = None,
    gamma: float = 1.0,
) -> np.ndarray:
    d = np.zeros(len(np.atleast_2d(x0))) if done is None else done
    return cost_term(-gower_distance(schema, x0, prev), -gower_distance(schema, x0, nxt), d, gamma)


def changed_count(x0: np.ndarray, x: np.ndarray) -> np.ndarray:
    return (np.abs(np.asarray(x, float) - np.asarray(x0, float)) > 1e-9).sum(axis=-1)


def sparsity_term(
    x0: np.ndarray,
    prev: np.ndarray,
    nxt: np.ndarray,
    n_actionable: int,
    done: np.ndarray | None = None,
    gamma: float = 1.0,
) -> np.ndarray:
    d = np.zeros(len(np.atleast_2d(x0))) if done is None else done
    k = float(n_actionable)
    return cost_term(-changed_count(x0, prev) / k, -changed_count(x0, nxt) / k, d, gamma)


def nn_distance(schema: FeatureSchema, x: np.ndarray, reference_z: np.ndarray) -> np.ndarray:
    """Euclidean distance on the normalised scale from each row of x to the nearest row of
    `reference_z` (already normalised)."""
    z = normalise(schema, x)
    d2 = (z * z).sum(1)[:, None] - 2.0 * z @ reference_z.T + (reference_z**2).sum(1)[None, :]
    return np.sqrt(np.maximum(d2.min(axis=1), 0.0))


def plausibility_term(
    nn_prev: np.ndarray, nn_next: np.ndarray, done: np.ndarray | None = None, gamma: float = 1.0
) -> np.ndarray:
    d = np.zeros(np.shape(nn_prev)) if done is None else done
    return cost_term(-np.asarray(nn_prev, float), -np.asarray(nn_next, float), d, gamma)


def individual_ee_term(
    approved: np.ndarray, twin_approved: np.ndarray, done: np.ndarray
) -> np.ndarray:
    a = np.asarray(approved, dtype=float)
    b = np.asarray(twin_approved, dtype=float)
    return -np.abs(a - b) * np.asarray(done, dtype=float)


def group_ee_term(
    success: np.ndarray, group: np.ndarray, rates: np.ndarray, done: np.ndarray
) -> np.ndarray:
    lag = np.maximum(np.max(rates) - np.asarray(rates)[group], 0.0)
    return -lag * (1.0 - np.asarray(success, dtype=float)) * np.asarray(done, dtype=float)


def ecr_term(eff: np.ndarray, success: np.ndarray, done: np.ndarray) -> np.ndarray:
    """eff: (n, G) effectiveness of each row's action for each group."""
    e = np.atleast_2d(np.asarray(eff, dtype=float))
    spread = e.max(axis=1) - e.min(axis=1)
    return -spread * np.asarray(success, dtype=float) * np.asarray(done, dtype=float)


class RunningRates:
    """Exponential moving success rate per group over finished episodes (starts at 0)."""

    def __init__(self, n_groups: int, momentum: float = 0.02) -> None:
        self.rates = np.zeros(n_groups)
        self.seen = np.zeros(n_groups, dtype=bool)
        self.momentum = momentum

    def update(self, group: np.ndarray, success: np.ndarray) -> None:
        for g in np.unique(group):
            s = float(np.mean(success[group == g]))
            if not self.seen[g]:
                self.rates[g], self.seen[g] = s, True
            else:
                k = min(1.0, self.momentum * float(np.sum(group == g)))
                self.rates[g] += k * (s - self.rates[g])


@dataclass
class FairReward:
    """The reward of one variant, bound to the training data (callable by the env).

    group: group index per training factual; twins: (n, d) each training factual's twin;
    refs: per group, codes of a fixed sample of its rejected people (for ECR).
    """

    name: str
    weights: RewardWeights
    schema: FeatureSchema
    approves: Callable[[np.ndarray], np.ndarray]
    reference_z: np.ndarray
    group: np.ndarray
    twins: np.ndarray
    refs: list[np.ndarray]
    n_actionable: int
    momentum: float = 0.02
    gamma: float = 1.0

    def __post_init__(self) -> None:
        self.terms = check_reward(self.name)
        self.running = RunningRates(len(self.refs), self.momentum)

    def __call__(
        self,
        x0: np.ndarray,
        prev: np.ndarray,
        nxt: np.ndarray,
        p_prev: np.ndarray,
        p_next: np.ndarray,
        approved: np.ndarray,
        done: np.ndarray,
        idx: np.ndarray,
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        w = self.weights
        s = self.schema
        gm, end = self.gamma, np.asarray(done, dtype=bool)
        nn_prev, nn_next = (
            nn_distance(s, prev, self.reference_z),
            nn_distance(s, nxt, self.reference_z),
        )
        parts: dict[str, np.ndarray] = {
            "validity": validity_term(p_prev, p_next, approved, w.validity, w.shaping, end, gm),
            "similarity": w.similarity * similarity_term(s, x0, prev, nxt, end, gm),
            "sparsity": w.sparsity * sparsity_term(x0, prev, nxt, self.n_actionable, end, gm),
            "plausibility": w.plausibility * plausibility_term(nn_prev, nn_next, end, gm),
            "step": np.full(len(x0), -w.step_cost),
        }
        rows = np.flatnonzero(done)
        g = self.group[idx]
        if "individual_ee" in self.terms:
            twin_ok = np.zeros(len(x0), dtype=bool)
            if rows.size:
                moved = transfer_actions(s, self.twins[idx[rows]], x0[rows], nxt[rows])
                twin_ok[rows] = self.approves(moved)
            parts["individual_ee"] = w.individual_ee * individual_ee_term(approved, twin_ok, done)
        if "group_ee" in self.terms:
            parts["group_ee"] = w.group_ee * group_ee_term(approved, g, self.running.rates, done)
        if "ecr" in self.terms:
            eff = np.zeros((len(x0), len(self.refs)))
            ok_rows = rows[approved[rows]]
            if ok_rows.size:
                eff[ok_rows] = self.effectiveness(x0[ok_rows], nxt[ok_rows])
            parts["ecr"] = w.ecr * ecr_term(eff, approved, done)
        if rows.size:
            self.running.update(g[rows], approved[rows])
        total = np.sum(list(parts.values()), axis=0)
        return total, parts

    def effectiveness(self, x0: np.ndarray, x: np.ndarray) -> np.ndarray:
        """(n, G): share of each group's reference sample approved after the action."""
        out = np.zeros((len(x0), len(self.refs)))
        for k, ref in enumerate(self.refs):
            if not len(ref):
                continue
            moved = transfer_actions(self.schema, ref[None, :, :], x0[:, None, :], x[:, None, :])
            ok = np.asarray(self.approves(moved.reshape(-1, self.schema.d)), dtype=float)
            out[:, k] = ok.reshape(len(x0), len(ref)).mean(axis=1)
        return out


def describe(weights: RewardWeights) -> dict[str, Any]:
    return {f.name: getattr(weights, f.name) for f in fields(weights)}
