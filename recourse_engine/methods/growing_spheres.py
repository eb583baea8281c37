"""Growing Spheres (Laugel et al., 2017): random search in growing spherical layers.

Layer t holds points at distance (t * step, (t + 1) * step] from the factual in the
mutable columns (step = 0.2 as in the seed paper), drawn uniformly in volume. The first
layer holding an approved (snapped) point gives the counterfactual: its closest approved
point. All unresolved factuals advance one layer together, in one model call per layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .base import RecourseMethod, judged_candidates, nearest_valid


def layer_samples(
    rng: np.random.Generator, n: int, s: int, dim: int, low: float, high: float
) -> np.ndarray:
    """(n, s, dim) points uniform in volume in the shell low < |v| <= high."""
    v = rng.standard_normal((n, s, dim))
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    u = rng.random((n, s, 1))
    r = (low**dim + u * (high**dim - low**dim)) ** (1.0 / dim)
    return v * r


@dataclass
class GrowingSpheres(RecourseMethod):
    step: float = 0.2
    n_samples: int = 500
    max_layers: int = 50
    name: str = field(default="gs", init=False)

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        lay = self.layout
        cols = np.flatnonzero(lay.mutable)
        out = np.full(z.shape, np.nan)
        todo = np.arange(len(z))
        for t in range(self.max_layers):
            if todo.size == 0:
                break
            zt = z[todo]
            delta = layer_samples(
                rng, len(todo), self.n_samples, cols.size, t * self.step, (t + 1) * self.step
            )
            raw = np.repeat(zt[:, None, :], self.n_samples, axis=1)
            raw[:, :, cols] += delta
            flat = raw.reshape(-1, z.shape[1])
            cand, ok = judged_candidates(self, zt, lambda rows, f=flat: f[rows], self.n_samples)
            picked, found = nearest_valid(zt, cand, ok)
            out[todo[found]] = picked[found]
            todo = todo[~found]
        return out
