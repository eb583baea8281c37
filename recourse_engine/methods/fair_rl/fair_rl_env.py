"""The recourse MDP of `fair_rl` with gymnasium's API: states, actions, transitions.

State: the current candidate counterfactual x_t and the factual x_0 (item codes; the
observation is normalise(x_t), normalise(x_t) − normalise(x_0), the model's approval
probability of x_t, the step t/T and, with clustering, the factual's cluster one-hot).

Action: a vector in [-1, 1]^m with one entry per graded (ordinal/numeric) actionable item
and one entry per option of every actionable categorical or binary item; fixed items have
no entry at all, so no action can change them. `ActionMap.apply` decodes it:

* numeric item: a bounded step, a * step * range (step = 0.1 by default);
* ordinal item: a discrete move of one code, up when a > 1/3, down when a < −1/3;
* categorical / binary item: a discrete switch to the option with the largest entry when
  that entry exceeds 1/2 (binary: two entries, one per option);
* an `up` item never decreases and a `down` item never increases (the move is dropped for
  that item), values stay in the item's range, codes stay valid codes.

An episode ends when the model approves x_t (terminated) or after T steps (truncated).
`FairRecourseVectorEnv` runs a batch of episodes in one numpy step (gymnasium's
`VectorEnv`, autoreset in the same step, the finished episode's observation and reward
parts in `infos`); the group-level reward terms need such a batch. `FairRecourseEnv` is
the single-episode `gymnasium.Env` over the same transition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...decision import APPROVAL_THRESHOLD
from ...encoding import normalise
from ...schema import FeatureSchema
from ..base import MethodError

ORDINAL_MOVE = 1.0 / 3.0
SWITCH = 0.5


@dataclass
class ActionMap:
    """Which action entries act on which item, and how."""

    schema: FeatureSchema
    step: float = 0.1

    def __post_init__(self) -> None:
        self.slots: list[tuple[int, int, int]] = []  # (item index, first entry, width)
        m = 0
        for j, it in enumerate(self.schema.items):
            if it.constraint == "fixed" or it.span <= 0:
                continue
            width = 1 if it.is_graded else it.n_options
            self.slots.append((j, m, width))
            m += width
        self.dim = m
        if m == 0:
            raise MethodError(
                "fair_rl: the schema has nothing actionable (every item is fixed or has a "
                "single value); recourse needs at least one item that may change"
            )

    @property
    def actionable(self) -> list[int]:
        return [j for j, _, _ in self.slots]

    def apply(self, x: np.ndarray, a: np.ndarray) -> np.ndarray:
        """(n, d) codes after actions (n, m); actions are clipped to [-1, 1] first."""
        x = np.atleast_2d(np.asarray(x, dtype=float))
        a = np.clip(np.nan_to_num(np.atleast_2d(np.asarray(a, dtype=float))), -1.0, 1.0)
        if a.shape != (len(x), self.dim):
            raise MethodError(f"fair_rl: actions must be ({len(x)}, {self.dim}), got {a.shape}")
        out = x.copy()
        for j, m, width in self.slots:
            it = self.schema.items[j]
            cur = x[:, j]
            if it.is_numeric:
                new = cur + a[:, m] * self.step * it.span
            elif it.is_graded:
                move = np.where(
                    a[:, m] > ORDINAL_MOVE, 1.0, np.where(a[:, m] < -ORDINAL_MOVE, -1.0, 0.0)
                )
                new = cur + move
            else:
                block = a[:, m : m + width]
                target = block.argmax(axis=1) + 1.0
                new = np.where(block.max(axis=1) > SWITCH, target, cur)
            new = np.clip(new, it.min_value, it.max_value)
            if it.constraint == "up":
                new = np.maximum(new, cur)
            elif it.constraint == "down":
                new = np.minimum(new, cur)
            out[:, j] = new
        return out


def observe(
    schema: FeatureSchema,
    x0: np.ndarray,
    x: np.ndarray,
    proba: np.ndarray,
    t: np.ndarray,
    horizon: int,
    cluster_onehot: np.ndarray,
) -> np.ndarray:
    """The observation rows for factuals x0 at candidates x (float32)."""
    z = normalise(schema, x)
    z0 = normalise(schema, x0)
    tt = np.broadcast_to(np.asarray(t, dtype=float) / horizon, (len(x),))
    return np.column_stack([z, z - z0, proba, tt, cluster_onehot]).astype(np.float32)


def obs_dim(schema: FeatureSchema, n_clusters: int) -> int:
    p = normalise(schema, np.array([[it.min_value for it in schema.items]])).shape[1]
    return 2 * p + 2 + n_clusters


class Transition:
    """What the environment needs from the method: the model, the action map, the rewards.

    `reward(x0, prev, nxt, p_prev, p_next, approved, done, idx)` returns the per-row reward
    and a dict of its parts; `idx` are the episodes' factual indices (for twins and groups).
    """

    def __init__(
        self,
        schema: FeatureSchema,
        actions: ActionMap,
        proba: Any,
        reward: Any,
        horizon: int,
        clusters: np.ndarray,
        n_clusters: int,
    ) -> None:
        self.schema = schema
        self.actions = actions
        self.proba = proba
        self.reward = reward
        self.horizon = horizon
        self.clusters = clusters
        self.n_clusters = n_clusters

    def onehot(self, idx: np.ndarray) -> np.ndarray:
        out = np.zeros((len(idx), self.n_clusters))
        if self.n_clusters:
            out[np.arange(len(idx)), self.clusters[idx]] = 1.0
        return out


def _spaces(dim_obs: int, dim_act: int) -> tuple[Any, Any]:
    from gymnasium import spaces

    obs = spaces.Box(-np.inf, np.inf, shape=(dim_obs,), dtype=np.float32)
    act = spaces.Box(-1.0, 1.0, shape=(dim_act,), dtype=np.float32)
    return obs, act


def _vector_base() -> type:
    from gymnasium.vector import VectorEnv

    return VectorEnv


class FairRecourseVectorEnv(_vector_base()):  # type: ignore[misc]
    """A batch of `num_envs` recourse episodes over the factuals `x0s` (codes).

    Each reset draws the factuals of the finished episodes uniformly from `x0s` with the
    environment's generator. `step` returns (obs, rewards, terminations, truncations,
    infos); finished rows are reset in the same step (`infos["final_obs"]` holds their
    last observation, `infos["success"]` whether the model approved it).
    """

    def __init__(self, trans: Transition, x0s: np.ndarray, num_envs: int, seed: int = 0):
        from gymnasium.vector import AutoresetMode

        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}
        self.trans = trans
        self.x0s = np.asarray(x0s, dtype=float)
        self.num_envs = int(num_envs)
        dim_o = obs_dim(trans.schema, trans.n_clusters)
        self.single_observation_space, self.single_action_space = _spaces(dim_o, trans.actions.dim)
        from gymnasium.vector.utils import batch_space

        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.rng = np.random.default_rng(seed)

    def _draw(self, n: int) -> np.ndarray:
        return self.rng.integers(0, len(self.x0s), size=n)

    def _obs(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        tr = self.trans
        return observe(
            tr.schema,
            self.x0s[self.idx[rows]],
            self.x[rows],
            self.p[rows],
            self.t[rows],
            tr.horizon,
            tr.onehot(self.idx[rows]),
        )

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.idx = self._draw(self.num_envs)
        self.x = self.x0s[self.idx].copy()
        self.p = np.asarray(self.trans.proba(self.x), dtype=float)
        self.t = np.zeros(self.num_envs)
        return self._obs(), {}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        tr = self.trans
        prev, p_prev = self.x, self.p
        nxt = tr.actions.apply(prev, actions)
        p_next = np.asarray(tr.proba(nxt), dtype=float)
        approved = p_next >= APPROVAL_THRESHOLD
        self.t = self.t + 1
        term = approved
        trunc = ~approved & (self.t >= tr.horizon)
        done = term | trunc
        x0 = self.x0s[self.idx]
        reward, parts = tr.reward(x0, prev, nxt, p_prev, p_next, approved, done, self.idx)
        self.x, self.p = nxt, p_next
        infos: dict[str, Any] = {"parts": parts, "factual": x0, "next": nxt.copy()}
        if done.any():
            rows = np.flatnonzero(done)
            infos["final_obs"] = self._obs(rows)
            infos["done_rows"] = rows
            infos["success"] = approved[rows]
            self.idx[rows] = self._draw(len(rows))
            self.x[rows] = self.x0s[self.idx[rows]]
            self.p[rows] = np.asarray(tr.proba(self.x[rows]), dtype=float)
            self.t[rows] = 0
        return self._obs(), reward, term, trunc, infos


def _env_base() -> type:
    from gymnasium import Env

    return Env


class FairRecourseEnv(_env_base()):  # type: ignore[misc]
    """One recourse episode at a time (gymnasium.Env) over the same transition; the factual
    is drawn from `x0s` at each reset, or given as `options={"factual": index}`."""

    def __init__(self, trans: Transition, x0s: np.ndarray):
        self.vec = FairRecourseVectorEnv(trans, x0s, 1)
        self.observation_space = self.vec.single_observation_space
        self.action_space = self.vec.single_action_space

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        obs, info = self.vec.reset(seed=seed)
        if options and "factual" in options:
            v = self.vec
            v.idx[0] = int(options["factual"])
            v.x = v.x0s[v.idx].copy()
            v.p = np.asarray(v.trans.proba(v.x), dtype=float)
            obs = v._obs()
        return obs[0], info

    @property
    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """(factual, current candidate) codes."""
        return self.vec.x0s[self.vec.idx[0]].copy(), self.vec.x[0].copy()

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        obs, r, term, trunc, infos = self.vec.step(np.asarray(action, dtype=float)[None, :])
        infos = {**infos, "factual": infos["factual"][0], "next": infos["next"][0]}
        if term[0] or trunc[0]:
            obs = infos["final_obs"]
        return obs[0], float(r[0]), bool(term[0]), bool(trunc[0]), infos
