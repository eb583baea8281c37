"""Fair recourse for all: a Soft Actor-Critic policy that proposes counterfactuals with
individual, group or hybrid fairness terms in its reward ("Fair Recourse for All: Ensuring
Individual and Group Fairness in Counterfactual Explanations", arXiv 2601.20449).

Fit: the rows the decision model rejects are the training factuals. An episode starts at
one of them and moves actionable items step by step (`fair_rl_env`: bounded steps for
numeric items, discrete moves for ordinal and categorical ones, never a fixed item, never
an up/down item the forbidden way) until the model approves or T steps pass. The reward
(`fair_rl_rewards`) is validity + Gower similarity + sparsity + plausibility, plus the
fairness terms of the chosen variant (`reward=`: `none`, `individual_ee`, `group_ee`,
`ecr`, `hybrid`). A compact torch SAC (`fair_rl_sac`; why not stable-baselines3 is said
there) learns the policy from a batch of parallel episodes. With `clusters=k` the data are
first clustered by k-means (normalised scale, seeded) and the factual's cluster joins the
state as a one-hot: one policy that knows which local region it acts in (the paper's
clustering ablation; `clusters=0` switches it off).

Groups: `group=None` takes the dataset's own protected attribute (`Dataset.group`); a name
takes that schema item or that column of the data's `extra` frame (a study pool's column,
as `pool_groups` does for the pool strategies); two names joined by a comma take the
intersection of the two attributes (e.g. `group="sex,white"`). A dataset without one, a
name that is neither, or a schema with nothing actionable is refused with a MethodError.

Training sets torch to `threads` threads (default 1) and restores the caller's setting:
the networks are small (two hidden layers of 64), so more threads on a shared machine
only contend.

`untrained=True` builds everything but skips training: the initial actor with the same
rollouts, the ablation that shows what the noisy rollouts find on their own.

Generation runs the trained actor as plain numpy (no torch): `rollouts` episodes per
factual at once, the first with the policy's mean action and the others with its own
Gaussian noise (drawn from a generator seeded by the method's seed and the factual
itself, so a person's plan does not depend on the batch), each stopped at the first
approved state; the approved end state closest in Gower distance is the counterfactual,
and the usual finaliser (`base._finalise`) checks it again. A fitted FairRL holds only
numpy arrays, the schema, the decision model and the cluster centres, so it pickles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ...encoding import denormalise, normalise
from ...gower import gower_distance
from ..base import MethodError, RecourseMethod, pattern_rng
from ..capabilities import Capabilities
from .fair_rl_env import ActionMap, FairRecourseVectorEnv, Transition, obs_dim, observe
from .fair_rl_rewards import FairReward, RewardWeights, check_reward
from .fair_rl_sac import SAC, NumpyPolicy, SACConfig, train_sac

_INT_PARAMS = ("threads", "clusters", "horizon", "steps", "n_envs", "updates_per_step", "warmup", "batch",
               "hidden", "rollouts", "ecr_refs", "max_reference")  # fmt: skip


def _labels_of(data: Any, schema: Any, name: str) -> tuple[np.ndarray, str | None]:
    """String labels per row of attribute `name`, and the schema item's key if it is one."""
    extra = getattr(data, "extra", None)
    if extra is not None and name in getattr(extra, "columns", ()):
        return np.asarray(extra[name]).astype(str), None
    if name in schema.keys:
        codes = np.asarray(data.codes, dtype=float)[:, schema.index(name)]
        return np.array([f"{c:g}" for c in codes], dtype=object).astype(str), name
    raise MethodError(
        f"fair_rl: protected attribute {name!r} is neither a schema item nor a column of the "
        f"data; schema items: {', '.join(schema.keys)}"
    )


def group_labels(data: Any, schema: Any, group: str | None) -> tuple[np.ndarray, list[str]]:
    """Group label per row of `data` and the schema items that define it."""
    if group is None:
        g = getattr(data, "group", None)
        if g is None:
            raise MethodError(
                "fair_rl: the data have no protected attribute; pass group=<schema item or "
                "pool column> (two names joined by a comma for an intersection)"
            )
        sens = getattr(data, "sensitive", None)
        items = [sens] if sens in schema.keys else []
        return np.asarray(g).astype(str), items
    names = [n.strip() for n in str(group).split(",")]
    if not 1 <= len(names) <= 2 or any(not n for n in names):
        raise MethodError(f"fair_rl: group {group!r}: give one attribute or two joined by a comma")
    parts = [_labels_of(data, schema, n) for n in names]
    labels = (
        parts[0][0] if len(parts) == 1 else np.char.add(np.char.add(parts[0][0], "|"), parts[1][0])
    )
    return np.asarray(labels).astype(str), [k for _, k in parts if k is not None]


def _twins(z: np.ndarray, gidx: np.ndarray) -> np.ndarray:
    """Index of each row's nearest row (Euclidean) in another group."""
    from sklearn.neighbors import NearestNeighbors

    out = np.zeros(len(z), dtype=int)
    for g in np.unique(gidx):
        mine, other = np.flatnonzero(gidx == g), np.flatnonzero(gidx != g)
        nn = NearestNeighbors(n_neighbors=1).fit(z[other])
        out[mine] = other[nn.kneighbors(z[mine], return_distance=False)[:, 0]]
    return out


@dataclass
class FairRL(RecourseMethod):
    capabilities: ClassVar[Capabilities] = Capabilities(group_param=True)

    reward: str = "hybrid"
    group: str | None = None
    weights: dict[str, float] | None = None
    clusters: int = 0
    horizon: int = 10
    step: float = 0.1
    steps: int = 1500
    n_envs: int = 32
    updates_per_step: int = 1
    warmup: int = 50
    batch: int = 256
    hidden: int = 64
    lr: float = 3e-3
    gamma: float = 0.9
    rollouts: int = 16
    ecr_refs: int = 16
    max_reference: int = 1000
    device: str = "cpu"
    threads: int = 1
    untrained: bool = False
    name: str = field(default="fair_rl", init=False)

    def __post_init__(self) -> None:
        self._check()

    def _check(self) -> None:
        check_reward(self.reward)
        RewardWeights.of(self.weights)
        for key in _INT_PARAMS:
            v = getattr(self, key)
            low = 0 if key in ("clusters", "warmup") else 1
            if isinstance(v, bool) or not (isinstance(v, int | np.integer) and v >= low):
                raise MethodError(f"fair_rl: {key} must be an integer >= {low}, got {v!r}")
        if not isinstance(self.untrained, bool | np.bool_):
            raise MethodError(f"fair_rl: untrained must be true or false, got {self.untrained!r}")
        if not 0.0 < self.gamma <= 1.0:
            raise MethodError(f"fair_rl: gamma must be in (0, 1], got {self.gamma}")
        if not 0.0 < self.step <= 1.0:
            raise MethodError(f"fair_rl: step must be in (0, 1], got {self.step}")

    def _fit(self, data: Any) -> None:
        self._check()
        schema = self.schema
        self.actions_ = ActionMap(schema, self.step)
        labels, group_items = group_labels(data, schema, self.group)
        codes = np.asarray(data.codes, dtype=float)
        if len(labels) != len(codes):
            raise MethodError(f"fair_rl: need one group value per row ({len(codes)})")
        self.group_labels_ = sorted(set(labels))
        if len(self.group_labels_) < 2:
            raise MethodError("fair_rl: the protected attribute holds a single value")
        gidx_all = np.searchsorted(self.group_labels_, labels)
        approved = np.asarray(self.model.approves(codes), dtype=bool)
        if approved.all() or not approved.any():
            what = "rejects nobody" if approved.all() else "approves nobody"
            raise MethodError(f"fair_rl: the decision model {what} in the data; nothing to learn")
        x0s, gidx = codes[~approved], gidx_all[~approved]
        z_all = normalise(schema, codes)
        rng = np.random.default_rng(self.seed)
        ref = np.flatnonzero(approved)
        if len(ref) > self.max_reference:
            ref = np.sort(rng.choice(ref, self.max_reference, replace=False))
        keep = np.setdiff1d(np.arange(z_all.shape[1]), self.layout.columns_of(group_items))
        twins = x0s[_twins(z_all[~approved][:, keep], gidx)]
        refs = []
        for g in range(len(self.group_labels_)):
            mine = np.flatnonzero(gidx == g)
            if len(mine) > self.ecr_refs:
                mine = np.sort(rng.choice(mine, self.ecr_refs, replace=False))
            refs.append(x0s[mine])
        self.centres_ = np.zeros((0, z_all.shape[1]))
        if self.clusters:
            from sklearn.cluster import KMeans

            k = min(self.clusters, len(codes))
            self.centres_ = KMeans(k, n_init=3, random_state=self.seed).fit(z_all).cluster_centers_
        model = self.model
        reward = FairReward(
            self.reward,
            RewardWeights.of(self.weights),
            schema,
            lambda x: np.asarray(model.approves(x), dtype=bool),
            z_all[ref],
            gidx,
            twins,
            refs,
            len(self.actions_.slots),
            gamma=self.gamma,
        )
        trans = Transition(
            schema,
            self.actions_,
            lambda x: np.asarray(model.predict_proba(x), dtype=float),
            reward,
            self.horizon,
            self._cluster_of(x0s),
            len(self.centres_),
        )
        env = FairRecourseVectorEnv(trans, x0s, self.n_envs, seed=self.seed)
        cfg = SACConfig(self.hidden, self.lr, self.gamma, batch=self.batch, device=self.device)
        agent = SAC(obs_dim(schema, len(self.centres_)), self.actions_.dim, cfg, self.seed)
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=self.steps, desc="fair_rl", unit="step", disable=None)
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(self.threads)  # small networks: more threads only contend
        try:
            if self.untrained:  # the ablation: the initial actor, the same rollouts
                self.train_stats_ = {"late_success": float("nan"), "late_episodes": 0.0}
            else:
                self.train_stats_ = self._train(env, agent, bar)
        finally:
            torch.set_num_threads(threads)
        if bar is not None:
            bar.close()
        self.policy_: NumpyPolicy = agent.export()

    def _train(self, env: Any, agent: SAC, bar: Any) -> dict[str, float]:
        return train_sac(
            env,
            agent,
            self.steps,
            warmup=self.warmup,
            updates_per_step=self.updates_per_step,
            seed=self.seed,
            progress=None if bar is None else (lambda done, total: bar.update(1)),
            horizon=self.horizon,
        )

    def _cluster_of(self, x: np.ndarray) -> np.ndarray:
        if not len(self.centres_):
            return np.zeros(len(x), dtype=int)
        z = normalise(self.schema, x)
        d = ((z[:, None, :] - self.centres_[None, :, :]) ** 2).sum(-1)
        return d.argmin(axis=1)

    def _onehot(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros((len(x), len(self.centres_)))
        if len(self.centres_):
            out[np.arange(len(x)), self._cluster_of(x)] = 1.0
        return out

    def rollout(self, x0: np.ndarray, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Run the policy from factuals x0 (codes) with per-step action noise (T, n, m);
        returns each row's first approved state (or its last state) and whether approved."""
        x = x0.copy()
        hot = self._onehot(x0)
        proba = np.asarray(self.model.predict_proba(x), dtype=float)
        done = np.zeros(len(x), dtype=bool)
        for t in range(self.horizon):
            act = np.flatnonzero(~done)
            if act.size == 0:
                break
            obs = observe(
                self.schema,
                x0[act],
                x[act],
                proba[act],
                np.full(act.size, t),
                self.horizon,
                hot[act],
            )
            a = self.policy_(obs, noise[t, act])
            x[act] = self.actions_.apply(x[act], a)
            proba[act] = np.asarray(self.model.predict_proba(x[act]), dtype=float)
            done[act] = np.asarray(self.model.approves(x[act]), dtype=bool)
        return x, done

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        x = denormalise(self.schema, z)
        n, r = len(x), self.rollouts
        x0 = np.repeat(x, r, axis=0)
        # each factual's noise from its own generator: a participant's plan does not depend
        # on who else is in the batch (the study asks for one person at a time)
        shape = (r, self.horizon, self.actions_.dim)
        per = [pattern_rng(self.seed, row).standard_normal(shape) for row in z]
        noise = np.concatenate(per, axis=0).swapaxes(0, 1).astype(np.float32)  # (T, n*r, d)
        noise[:, ::r] = 0.0  # the first rollout of each factual: the policy's mean action
        end, ok = self.rollout(x0, noise)
        cost = np.where(ok, gower_distance(self.schema, x0, end), np.inf).reshape(n, r)
        best = cost.argmin(axis=1)
        out = np.full(z.shape, np.nan)
        found = np.isfinite(cost[np.arange(n), best])
        if found.any():
            pick = end.reshape(n, r, -1)[np.flatnonzero(found), best[found]]
            out[found] = normalise(self.schema, pick)
        return out
