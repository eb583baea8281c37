"""CCHVAE (Pawelczyk et al., 2020), whose training also serves implicit balanced recourse.

CCHVAE: a conditional VAE — encoder q(z | x_f, x_I), decoder p(x_f | z, x_I) with a
standard normal prior — on the mutable columns x_f given the immutable columns x_I;
counterfactuals by growing spheres around the factual's latent mean (step 0.1, 300 samples
per shell, as in CARLA), decoded with the factual's immutables, the closest approved kept.

With `balanced` (IBR, `recourse_engine.methods.ibr.ibr`) the encoder sees x_f only, the
decoder [z, x_I without the sensitive attribute], and a group discriminator on z is trained
adversarially (`adversary_objective`).

The decoder is Gaussian with a fixed sd `recon_sigma` (0.1) on the normalised scale.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..encoding import normalise
from .base import MethodError
from .vae import GaussianEncoder, VAEMethod, kl_normal, latent_sphere_search, mlp, reparameterise

ADVERSARIES = ("cross_entropy", "entropy")


def adversary_objective(logits: Any, m: Any, kind: str) -> Any:
    """What the VAE maximises against the group discriminator (mean over the batch): the
    discriminator's cross-entropy on the true group, or the entropy of its prediction."""
    import torch

    if kind == "cross_entropy":
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, m)
    p = torch.sigmoid(logits)
    return -(p * torch.log(p + 1e-10) + (1 - p) * torch.log(1 - p + 1e-10)).mean()


@dataclass
class CCHVAE(VAEMethod):
    latent: int = 2
    step: float = 0.1
    n_samples: int = 300
    max_layers: int = 100
    name: str = field(default="cchvae", init=False)
    balanced: bool = field(default=False, init=False)
    beta: float = field(default=0.0, init=False)
    adversary: str = field(default="cross_entropy", init=False)

    def _columns(self, data: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lay = self.layout
        f_cols = np.flatnonzero(lay.mutable)
        i_cols = np.flatnonzero(~lay.mutable)
        sens = lay.columns_of([data.sensitive] if data.sensitive else [])
        enc_cols = f_cols if self.balanced else np.concatenate([f_cols, i_cols])
        dec_cols = np.setdiff1d(i_cols, sens) if self.balanced else i_cols
        return f_cols, enc_cols, dec_cols

    def _fit(self, data: Any) -> None:
        import torch

        if self.adversary not in ADVERSARIES:
            raise MethodError(
                f"{self.name}: unknown adversary {self.adversary!r}; "
                f"expected one of {', '.join(ADVERSARIES)}"
            )

        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        z = normalise(self.schema, data.codes)
        self.f_cols_, self.enc_cols_, self.dec_cols_ = self._columns(data)
        self.encoder_ = GaussianEncoder(len(self.enc_cols_), self.hidden, self.latent)
        self.decoder_ = mlp(self.latent + len(self.dec_cols_), self.hidden[::-1], len(self.f_cols_))
        params = list(self.encoder_.parameters()) + list(self.decoder_.parameters())
        opt = torch.optim.Adam(params, lr=self.lr)
        xf = torch.as_tensor(z[:, self.f_cols_], dtype=torch.float32)
        xe = torch.as_tensor(z[:, self.enc_cols_], dtype=torch.float32)
        xd = torch.as_tensor(z[:, self.dec_cols_], dtype=torch.float32)
        m = torch.as_tensor(np.asarray(data.group), dtype=torch.float32)
        disc = disc_opt = None
        if self.balanced:
            disc = mlp(self.latent, (16,), 1)
            disc_opt = torch.optim.Adam(disc.parameters(), lr=self.lr)
        bce = torch.nn.functional.binary_cross_entropy_with_logits
        for idx in self.batches(len(z), rng):
            mu, logvar = self.encoder_(xe[idx])
            lat = reparameterise(mu, logvar)
            if disc is not None and disc_opt is not None:
                disc_opt.zero_grad()
                bce(disc(lat.detach()).squeeze(-1), m[idx]).backward()
                disc_opt.step()
            rec = torch.sigmoid(self.decoder_(torch.cat([lat, xd[idx]], dim=1)))
            nll = ((rec - xf[idx]) ** 2).sum(dim=1) / (2 * self.recon_sigma**2)
            loss = (nll + kl_normal(mu, logvar)).mean()
            if disc is not None:
                objective = adversary_objective(disc(lat).squeeze(-1), m[idx], self.adversary)
                loss = loss - self.beta * objective
            opt.zero_grad()
            loss.backward()
            opt.step()
        self.encoder_.net.eval()
        self.decoder_.eval()

    def _decode(self, z: np.ndarray) -> Any:
        import torch

        def decode(lat: np.ndarray, owner: np.ndarray) -> np.ndarray:
            with torch.no_grad():
                inp = torch.cat(
                    [
                        torch.as_tensor(lat, dtype=torch.float32),
                        torch.as_tensor(z[owner][:, self.dec_cols_], dtype=torch.float32),
                    ],
                    dim=1,
                )
                xf = torch.sigmoid(self.decoder_(inp)).numpy().astype(float)
            out = z[owner].copy()
            out[:, self.f_cols_] = xf
            return out

        return decode

    def latent_mean(self, z: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            mu, _ = self.encoder_(torch.as_tensor(z[:, self.enc_cols_], dtype=torch.float32))
        return mu.numpy().astype(float)

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return latent_sphere_search(
            self,
            z,
            self.latent_mean(z),
            self._decode(z),
            rng,
            step=self.step,
            n_samples=self.n_samples,
            max_layers=self.max_layers,
        )
