"""Wachter et al. (2017): gradient descent on the input, min l(h(x'), 1) + lambda d(x, x').

As in the seed paper (Appendix B): squared-error loss on the approval probability,
lambda = 0.01, L1 distance on the normalised scale; immutable columns are masked out of
the gradient (and reset again on output). All factuals are optimised in one batch; a
row stops moving as soon as its *decoded* profile is approved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .base import RecourseMethod, snap
from .capabilities import Capabilities
from .differentiable import torch_logit


@dataclass
class Wachter(RecourseMethod):
    capabilities: ClassVar[Capabilities] = Capabilities(gradient=True)

    lam: float = 0.01
    lr: float = 0.01
    max_iter: int = 1000
    check_every: int = 5
    name: str = field(default="wachter", init=False)

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        import torch

        logit = torch_logit(self.model)
        lay = self.layout
        mask = torch.as_tensor(lay.mutable, dtype=torch.float32)
        z0 = torch.as_tensor(z, dtype=torch.float32)
        zc = z0.clone().requires_grad_(True)
        opt = torch.optim.Adam([zc], lr=self.lr)
        active = np.ones(len(z), dtype=bool)
        out = np.full(z.shape, np.nan)
        for it in range(self.max_iter + 1):
            if it % self.check_every == 0 or it == self.max_iter:
                cand = snap(lay, z, zc.detach().numpy().astype(float))
                ok = active & self.approves_z(cand)
                out[ok] = cand[ok]
                active &= ~ok
                if not active.any() or it == self.max_iter:
                    break
            opt.zero_grad()
            prob = torch.sigmoid(logit(zc))
            act = torch.as_tensor(active, dtype=torch.float32)
            loss = ((prob - 1.0) ** 2 + self.lam * (zc - z0).abs().sum(dim=1)) * act
            loss.sum().backward()
            zc.grad *= mask
            opt.step()
            with torch.no_grad():  # stay inside the scale's range
                zc.clamp_(0.0, 1.0)
        return out
