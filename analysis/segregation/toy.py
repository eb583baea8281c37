"""The seed paper's toy models and its Hausdorff-form Segregation Index (SI).

Groups: X1 = majority (M) repay, X2 = minority (F) repay, X3 = M default,
X4 = F default; a perfect classifier approves y >= 0. Recourse moves X3 and X4:

* distance-based (Wachter-like): straight up to the decision boundary, (x, y) -> (x, 0);
* realistic (CCHVAE-like): to the nearest point where the own group repays;
* balanced (EBR-like): to the nearest point of the region where *both* groups repay.

`rectangles` is the uniform model of Theorems 4.1 and 5.1 (the paper's l is `left`) (sampled on a grid that
contains every corner, where the Hausdorff suprema are attained), `gaussians`
four-Gaussian data after Section 6.2 (200 people per group; the paper does not
state the means or spreads, so ours mirror the rectangle layout).

SI = d(X1, X2) + d(X1, X4) − d(X1, X1) − d(X1, X3) with d the Hausdorff distance
under the Euclidean metric (scipy's exact `directed_hausdorff`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import directed_hausdorff

RECOURSES = ("distance", "realistic", "balanced")


@dataclass(frozen=True)
class Toy:
    X1: np.ndarray  # majority, repays
    X2: np.ndarray  # minority, repays
    X3: np.ndarray  # majority, defaults
    X4: np.ndarray  # minority, defaults

    def population(self) -> tuple[np.ndarray, np.ndarray]:
        """All four sets stacked, with the group (1 = minority) of each point."""
        X = np.vstack([self.X1, self.X2, self.X3, self.X4])
        g = np.concatenate(
            [
                np.zeros(len(self.X1)),
                np.ones(len(self.X2)),
                np.zeros(len(self.X3)),
                np.ones(len(self.X4)),
            ]
        ).astype(int)
        return X, g


def hausdorff(A: np.ndarray, B: np.ndarray) -> float:
    """Symmetric Hausdorff distance between two finite point sets."""
    return max(directed_hausdorff(A, B)[0], directed_hausdorff(B, A)[0])


def segregation_index(toy: Toy) -> float:
    return (
        hausdorff(toy.X1, toy.X2)
        + hausdorff(toy.X1, toy.X4)
        - hausdorff(toy.X1, toy.X1)
        - hausdorff(toy.X1, toy.X3)
    )


def _grid(x0: float, x1: float, y0: float, y1: float, k: int) -> np.ndarray:
    xs, ys = np.meshgrid(np.linspace(x0, x1, k), np.linspace(y0, y1, k))
    return np.column_stack([xs.ravel(), ys.ravel()])


def rectangles(left: float, u: float, a: float, b: float, c: float, k: int = 41) -> Toy:
    """Theorem 4.1's uniform model on a k x k grid per rectangle (corners included)."""
    if not (a > 0 and b > 0 and u > 0 and 0 < c < b):
        raise ValueError("need a, b, u > 0 and 0 < c < b")
    return Toy(
        X1=_grid(left, left + b, u, u + a, k),
        X2=_grid(left + b - c, left + 2 * b - c, u, u + a, k),
        X3=_grid(left, left + b, -u - a, -u, k),
        X4=_grid(left + b - c, left + 2 * b - c, -u - a, -u, k),
    )


def rectangle_recourse(
    toy: Toy, kind: str, left: float, u: float, a: float, b: float, c: float
) -> Toy:
    """Move the defaulting sets X3, X4 of `rectangles` by the recourse `kind`."""

    def move(P: np.ndarray, own_lo: float, own_hi: float) -> np.ndarray:
        x = P[:, 0]
        if kind == "distance":
            return np.column_stack([x, np.zeros_like(x)])
        if kind == "realistic":  # nearest point of the own group's repay rectangle
            return np.column_stack([np.clip(x, own_lo, own_hi), np.full_like(x, u)])
        if kind == "balanced":  # nearest point of the overlap of both repay rectangles
            return np.column_stack([np.clip(x, left + b - c, left + b), np.full_like(x, u)])
        raise ValueError(f"unknown recourse {kind!r}; expected one of {', '.join(RECOURSES)}")

    return Toy(
        toy.X1, toy.X2, move(toy.X3, left, left + b), move(toy.X4, left + b - c, left + 2 * b - c)
    )


@dataclass(frozen=True)
class GaussianToy:
    toy: Toy
    means: np.ndarray  # (4, 2): X1..X4
    sd: float


def gaussians(
    n: int = 200, seed: int = 0, gap: float = 1.5, height: float = 2.0, sd: float = 0.6
) -> GaussianToy:
    """Section 6.2's synthetic data: four 2-D Gaussians, n people each."""
    rng = np.random.default_rng(seed)
    means = np.array([[0.0, height], [gap, height], [0.0, -height], [gap, -height]])
    sets = [m + sd * rng.standard_normal((n, 2)) for m in means]
    # the perfect classifier approves y >= 0: keep repayers above and defaulters below
    sets[0][:, 1] = np.abs(sets[0][:, 1])
    sets[1][:, 1] = np.abs(sets[1][:, 1])
    sets[2][:, 1] = -np.abs(sets[2][:, 1])
    sets[3][:, 1] = -np.abs(sets[3][:, 1])
    return GaussianToy(Toy(*sets), means, sd)


def _nearest(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    d = ((P[:, None, :] - Q[None, :, :]) ** 2).sum(-1)
    return Q[np.argmin(d, axis=1)]


def gaussian_recourse(gt: GaussianToy, kind: str, balanced_share: float = 0.3) -> Toy:
    """Move the defaulters of `gaussians` by the recourse `kind`.

    Realistic: the nearest repaying person of the own group. Balanced: the nearest
    repaying person (either group) among the `balanced_share` with the highest
    product of the two groups' repay densities — Algorithm 1's high-density region.
    """
    t = gt.toy
    if kind == "distance":
        return Toy(t.X1, t.X2, t.X3 * [1, 0], t.X4 * [1, 0])
    if kind == "realistic":
        return Toy(t.X1, t.X2, _nearest(t.X3, t.X1), _nearest(t.X4, t.X2))
    if kind == "balanced":
        pool = np.vstack([t.X1, t.X2])
        logp = sum(-((pool - m) ** 2).sum(1) / (2 * gt.sd**2) for m in gt.means[:2])
        keep = pool[logp >= np.quantile(logp, 1 - balanced_share)]
        return Toy(t.X1, t.X2, _nearest(t.X3, keep), _nearest(t.X4, keep))
    raise ValueError(f"unknown recourse {kind!r}; expected one of {', '.join(RECOURSES)}")
