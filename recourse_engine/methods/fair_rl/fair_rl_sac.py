"""A compact Soft Actor-Critic (Haarnoja et al., 2018) in torch for `fair_rl`.

Why not stable-baselines3: the group-level reward terms (group EE, ECR) are functions of a
*batch* of episodes across groups, which `fair_rl_env.FairRecourseVectorEnv` computes in
one numpy step; the whole training loop is then a few dozen lines around one replay buffer,
with no per-environment Python objects, no callbacks and no extra dependency. Seeding is
explicit (a torch generator for every sample, network initialisation inside
`torch.random.fork_rng`, a numpy generator for warm-up actions and minibatches), so two
fits with the same seed and thread count give the same policy on the CPU, and the global
random state of the caller is left alone.

After training the actor is exported to plain numpy arrays (`NumpyPolicy`): generation
needs no torch, pickles small and runs the policy for many factuals in one matrix product.

Standard SAC: tanh-squashed Gaussian actor, twin Q critics with Polyak-averaged targets,
entropy temperature tuned towards a target entropy of −|A|. Every episode end is terminal
(no bootstrap), the model's approval and the horizon alike: the step t/T is part of the
state, so the horizon is part of the MDP, not a time limit imposed from outside (Pardo et
al., "Time Limits in Reinforcement Learning", ICML 2018), and the rewards' potential is 0
at every end (`fair_rl_rewards`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

LOG_STD_MIN, LOG_STD_MAX = -5.0, 1.0


@dataclass(frozen=True)
class SACConfig:
    """The first five are `FairRL`'s fields, passed on (their defaults live there, once);
    tau, buffer and alpha are SAC's own."""

    hidden: int
    lr: float
    gamma: float
    batch: int
    device: str
    tau: float = 0.02
    buffer: int = 200_000
    alpha: float = 0.05


@dataclass
class NumpyPolicy:
    """The trained actor as numpy arrays: layers (W, b), then the mean and log-std heads."""

    layers: list[tuple[np.ndarray, np.ndarray]]
    mean: tuple[np.ndarray, np.ndarray]
    log_std: tuple[np.ndarray, np.ndarray]

    def __call__(self, obs: np.ndarray, noise: np.ndarray | None = None) -> np.ndarray:
        h = np.asarray(obs, dtype=np.float32)
        for w, b in self.layers:
            h = np.maximum(h @ w + b, 0.0)
        mu = h @ self.mean[0] + self.mean[1]
        if noise is not None:
            ls = np.clip(h @ self.log_std[0] + self.log_std[1], LOG_STD_MIN, LOG_STD_MAX)
            mu = mu + np.exp(ls) * noise
        return np.tanh(mu)


class ReplayBuffer:
    def __init__(self, capacity: int, obs_dim: int, act_dim: int) -> None:
        self.o = np.zeros((capacity, obs_dim), np.float32)
        self.a = np.zeros((capacity, act_dim), np.float32)
        self.r = np.zeros(capacity, np.float32)
        self.o2 = np.zeros((capacity, obs_dim), np.float32)
        self.d = np.zeros(capacity, np.float32)
        self.capacity, self.n, self.pos = capacity, 0, 0

    def add(
        self, o: np.ndarray, a: np.ndarray, r: np.ndarray, o2: np.ndarray, d: np.ndarray
    ) -> None:
        k = len(o)
        idx = (self.pos + np.arange(k)) % self.capacity
        self.o[idx], self.a[idx], self.r[idx], self.o2[idx], self.d[idx] = o, a, r, o2, d
        self.pos = (self.pos + k) % self.capacity
        self.n = min(self.n + k, self.capacity)

    def sample(self, rng: np.random.Generator, k: int) -> tuple[np.ndarray, ...]:
        idx = rng.integers(0, self.n, size=k)
        return self.o[idx], self.a[idx], self.r[idx], self.o2[idx], self.d[idx]


class SAC:
    def __init__(self, obs_dim: int, act_dim: int, cfg: SACConfig, seed: int) -> None:
        import torch
        from torch import nn

        self.torch, self.cfg, self.act_dim = torch, cfg, act_dim
        dev = torch.device(cfg.device)
        self.dev = dev
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            h = cfg.hidden

            def mlp(i: int, o: int) -> Any:
                return nn.Sequential(
                    nn.Linear(i, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, o)
                ).to(dev)

            self.actor = mlp(obs_dim, 2 * act_dim)
            self.q1, self.q2 = mlp(obs_dim + act_dim, 1), mlp(obs_dim + act_dim, 1)
            self.q1_t, self.q2_t = mlp(obs_dim + act_dim, 1), mlp(obs_dim + act_dim, 1)
        self.q1_t.load_state_dict(self.q1.state_dict())
        self.q2_t.load_state_dict(self.q2.state_dict())
        self.log_alpha = torch.tensor(
            np.log(cfg.alpha), dtype=torch.float32, device=dev, requires_grad=True
        )
        self.target_entropy = -float(act_dim)
        self.opt_a = torch.optim.Adam(self.actor.parameters(), lr=cfg.lr)
        self.opt_q = torch.optim.Adam([*self.q1.parameters(), *self.q2.parameters()], lr=cfg.lr)
        self.opt_al = torch.optim.Adam([self.log_alpha], lr=cfg.lr)
        self.gen = torch.Generator(device=dev).manual_seed(seed)

    def _sample(self, o: Any) -> tuple[Any, Any]:
        torch = self.torch
        out = self.actor(o)
        mu, ls = out[:, : self.act_dim], out[:, self.act_dim :].clamp(LOG_STD_MIN, LOG_STD_MAX)
        std = ls.exp()
        eps = torch.randn(mu.shape, generator=self.gen, device=self.dev)
        u = mu + std * eps
        a = torch.tanh(u)
        logp = (-0.5 * eps**2 - ls - 0.5 * np.log(2 * np.pi)).sum(1)
        logp = logp - (2 * (np.log(2.0) - u - torch.nn.functional.softplus(-2 * u))).sum(1)
        return a, logp

    def act(self, obs: np.ndarray) -> np.ndarray:
        torch = self.torch
        with torch.no_grad():
            a, _ = self._sample(torch.as_tensor(obs, device=self.dev))
        return a.cpu().numpy()

    def update(self, batch: tuple[np.ndarray, ...]) -> None:
        torch, cfg = self.torch, self.cfg
        o, a, r, o2, d = (torch.as_tensor(v, device=self.dev) for v in batch)
        alpha = self.log_alpha.exp().detach()
        with torch.no_grad():
            a2, logp2 = self._sample(o2)
            oa2 = torch.cat([o2, a2], 1)
            qt = torch.min(self.q1_t(oa2), self.q2_t(oa2)).squeeze(1) - alpha * logp2
            y = r + cfg.gamma * (1.0 - d) * qt
        oa = torch.cat([o, a], 1)
        lq = ((self.q1(oa).squeeze(1) - y) ** 2).mean() + ((self.q2(oa).squeeze(1) - y) ** 2).mean()
        self.opt_q.zero_grad()
        lq.backward()
        self.opt_q.step()
        an, logp = self._sample(o)
        oan = torch.cat([o, an], 1)
        qn = torch.min(self.q1(oan), self.q2(oan)).squeeze(1)
        la = (alpha * logp - qn).mean()
        self.opt_a.zero_grad()
        la.backward()
        self.opt_a.step()
        lal = -(self.log_alpha * (logp.detach() + self.target_entropy)).mean()
        self.opt_al.zero_grad()
        lal.backward()
        self.opt_al.step()
        with torch.no_grad():
            for net, tgt in ((self.q1, self.q1_t), (self.q2, self.q2_t)):
                for p, pt in zip(net.parameters(), tgt.parameters(), strict=True):
                    pt.mul_(1 - cfg.tau).add_(cfg.tau * p)

    def export(self) -> NumpyPolicy:
        lin = [m for m in self.actor if hasattr(m, "weight")]
        arr = [
            (m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy())
            for m in lin
        ]
        w, b = arr[-1]
        k = self.act_dim
        return NumpyPolicy(arr[:-1], (w[:, :k], b[:k]), (w[:, k:], b[k:]))


def train_sac(
    env: Any,
    agent: SAC,
    steps: int,
    *,
    warmup: int,
    updates_per_step: int,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
    horizon: int | None = None,
) -> dict[str, float]:
    """Run `steps` vector-env steps (random actions for the first `warmup`), one replay
    buffer, `updates_per_step` SAC updates per step after warm-up.

    Returns `late_success`: the success share of the training episodes that *started* in
    the last quarter of training and at least `horizon` steps before its end, so that every
    one of them has finished. Counting the episodes that *finished* in a window instead (the
    earlier definition) is biased towards success: a success can end after one step, a
    failure only after the horizon, so a window that does not reach T steps past an
    episode's start sees its successes and misses its failures (with `steps` <= T the
    earlier share read 1.0 whenever anything succeeded, a random policy included).
    NaN when no episode qualifies (training shorter than the horizon). `late_episodes`:
    how many episodes it counts."""
    rng = np.random.default_rng(seed)
    n, m = env.num_envs, env.single_action_space.shape[0]
    horizon = int(env.trans.horizon) if horizon is None else int(horizon)
    buf = ReplayBuffer(agent.cfg.buffer, env.single_observation_space.shape[0], m)
    obs, _ = env.reset(seed=seed)
    started = np.zeros(n, dtype=int)  # the step at which each env's episode began
    first, last = steps * 3 // 4, steps - horizon
    late_done, late_ok = 0, 0
    for step in range(steps):
        a = rng.uniform(-1.0, 1.0, (n, m)).astype(np.float32) if step < warmup else agent.act(obs)
        obs2, r, term, trunc, info = env.step(a)
        nxt = obs2.copy()
        if "done_rows" in info:
            rows = info["done_rows"]
            nxt[rows] = info["final_obs"]
            counted = (started[rows] >= first) & (started[rows] <= last)
            late_done += int(counted.sum())
            late_ok += int(np.sum(np.asarray(info["success"], dtype=bool) & counted))
            started[rows] = step + 1
        ended = np.asarray(term, dtype=bool) | np.asarray(trunc, dtype=bool)
        buf.add(obs, a, r.astype(np.float32), nxt, ended.astype(np.float32))
        obs = obs2
        if step >= warmup and buf.n >= agent.cfg.batch:
            for _ in range(updates_per_step):
                agent.update(buf.sample(rng, agent.cfg.batch))
        if progress is not None:
            progress(step + 1, steps)
    share = late_ok / late_done if late_done else float("nan")
    return {"late_success": share, "late_episodes": float(late_done)}
