"""Causal recourse (Karimi et al., 2020b) for a given additive-noise structural causal model.

An action intervenes on some features, do(x_A = x_A + delta_A); its counterfactual follows
from abduction-action-prediction, which for additive noise x_j = f_j(pa_j) + u_j is
x'_j = x_j + f_j(pa'_j) - f_j(pa_j) for every node not intervened on, in topological order.
With no SCM the features are independent and the counterfactual is the action itself (the
seed paper's setting for its synthetic data). The action of least L2 norm is searched with
growing spheres over the intervenable columns (step 0.2); the counterfactual of the first
shell holding approved ones, with the smallest action, is returned.

SCM nodes are items with a single normalised column (ordinal, numeric, binary) and the
equations work on that scale; categorical items may be intervened on but not be nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .base import MethodError, RecourseMethod, snap
from .capabilities import Capabilities
from .growing_spheres import layer_samples

Equation = Callable[[np.ndarray], np.ndarray]  # (m, |parents|) -> (m,)


@dataclass
class LinearEquation:
    """f(parents) = parents @ weights: a class, not a closure, so a fitted method pickles
    (a study stores its fitted methods)."""

    weights: np.ndarray

    def __call__(self, pa: np.ndarray) -> np.ndarray:
        return pa @ self.weights


@dataclass
class AdditiveSCM:
    """x_j = f_j(parents_j) + u_j for each child j; other nodes are exogenous."""

    parents: Mapping[str, Sequence[str]]
    equations: Mapping[str, Equation]

    @classmethod
    def linear(cls, weights: Mapping[str, Mapping[str, float]]) -> AdditiveSCM:
        """x_child = sum_parent w * x_parent + u."""
        parents = {c: list(ws) for c, ws in weights.items()}
        eqs = {
            c: LinearEquation(np.array(list(ws.values()), dtype=float)) for c, ws in weights.items()
        }
        return cls(parents, eqs)

    def order(self) -> list[str]:
        """Children in topological order; a cycle is an error."""
        done: list[str] = []
        state: dict[str, int] = {}

        def visit(node: str) -> None:
            if state.get(node) == 1:
                raise MethodError(f"causal graph has a cycle through {node!r}")
            if state.get(node) == 2:
                return
            state[node] = 1
            for p in self.parents.get(node, ()):
                visit(p)
            state[node] = 2
            if node in self.parents:
                done.append(node)

        for child in self.parents:
            visit(child)
        return done


@dataclass
class CausalRecourse(RecourseMethod):
    capabilities: ClassVar[Capabilities] = Capabilities(scm=True, item_params=("intervenable",))

    scm: AdditiveSCM | None = None
    intervenable: Sequence[str] | None = None
    step: float = 0.2
    n_samples: int = 500
    max_layers: int = 50
    name: str = field(default="causal", init=False)

    def _fit(self, data: Any) -> None:
        lay = self.layout
        col = {}
        for j, it in enumerate(self.schema.items):
            if len(lay.item_cols[j]) == 1:
                col[it.key] = int(lay.item_cols[j][0])
        keys = self.intervenable
        if keys is None:
            keys = [it.key for it in self.schema.items if it.constraint != "fixed"]
        for k in keys:
            if k not in self.schema.keys:
                raise MethodError(f"causal: unknown item {k!r}")
            if self.schema.item(k).constraint == "fixed":
                raise MethodError(f"causal: {k!r} is fixed and cannot be intervened on")
        self.act_cols_ = lay.columns_of(list(keys))
        self.plan_: list[tuple[int, np.ndarray, Equation]] = []
        if self.scm is not None:
            for child in self.scm.order():
                for node in (child, *self.scm.parents[child]):
                    if node not in col:
                        raise MethodError(f"causal: SCM node {node!r} is not a one-column item")
                pa = np.array([col[p] for p in self.scm.parents[child]], dtype=int)
                self.plan_.append((col[child], pa, self.scm.equations[child]))

    def propagate(self, z: np.ndarray, acted: np.ndarray) -> np.ndarray:
        """Counterfactuals (m, p) of factuals z (m, p) under actions already applied in
        `acted` (intervened columns hold their new values)."""
        out = acted.copy()
        act = set(self.act_cols_.tolist())
        changed = np.abs(acted - z) > 0
        for c, pa, f in self.plan_:
            intervened = changed[:, c] if c in act else np.zeros(len(z), dtype=bool)
            shift = f(out[:, pa]) - f(z[:, pa])
            out[:, c] = np.where(intervened, out[:, c], z[:, c] + shift)
        return out

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = np.full(z.shape, np.nan)
        todo = np.arange(len(z))
        cols = self.act_cols_
        p = z.shape[1]
        for t in range(self.max_layers):
            if todo.size == 0 or cols.size == 0:
                break
            m = len(todo)
            delta = layer_samples(
                rng, m, self.n_samples, cols.size, t * self.step, (t + 1) * self.step
            )
            base = np.repeat(z[todo], self.n_samples, axis=0)
            acted = base.copy()
            acted[:, cols] = np.clip(acted[:, cols] + delta.reshape(-1, cols.size), 0.0, 1.0)
            cf = self.propagate(base, acted).reshape(m, self.n_samples, p)
            cand = snap(self.layout, z[todo][:, None, :], cf)
            ok = self.approves_z(cand.reshape(-1, p)).reshape(m, -1)
            cost = np.linalg.norm(acted - base, axis=1).reshape(m, -1)  # action size
            cost = np.where(ok, cost, np.inf)
            best = cost.argmin(axis=1)
            found = np.isfinite(cost[np.arange(m), best])
            out[todo[found]] = cand[np.flatnonzero(found), best[found]]
            todo = todo[~found]
        return out
