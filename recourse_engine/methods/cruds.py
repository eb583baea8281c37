"""CRUDS (Downs et al., 2020): counterfactuals from a conditional subspace VAE (CSVAE).

The latent space is split in two: w, tied to the decision by its prior p(w | y) =
N(mu_y, s^2 I) with mu_1 = -mu_0 = `w_mean` * 1, and z, made uninformative about y by an
adversary that predicts y from z (the encoder maximises the adversary's entropy, as in
CSVAE). Encoders q(z | x_f, x_I) and q(w | x_f, y); decoder p(x_f | z, w, x_I); y is the
decision model's prediction. A counterfactual keeps the factual's posterior mean of z,
draws w from p(w | y = 1), decodes with the factual's immutables and returns the closest
approved draw; rounds of draws repeat until one is approved or `max_rounds` is reached.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..encoding import normalise
from .base import nearest_valid, snap
from .vae import GaussianEncoder, VAEMethod, kl_normal, mlp, reparameterise


@dataclass
class CRUDS(VAEMethod):
    latent_z: int = 2
    latent_w: int = 2
    w_mean: float = 1.5
    w_sd: float = 0.3
    adversary_weight: float = 1.0
    n_samples: int = 300
    max_rounds: int = 20
    name: str = field(default="cruds", init=False)

    def _fit(self, data: Any) -> None:
        import torch

        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        z = normalise(self.schema, data.codes)
        lay = self.layout
        self.f_cols_ = np.flatnonzero(lay.mutable)
        self.i_cols_ = np.flatnonzero(~lay.mutable)
        nf, ni = len(self.f_cols_), len(self.i_cols_)
        self.enc_z_ = GaussianEncoder(nf + ni, self.hidden, self.latent_z)
        self.enc_w_ = GaussianEncoder(nf + 1, self.hidden, self.latent_w)
        self.decoder_ = mlp(self.latent_z + self.latent_w + ni, self.hidden[::-1], nf)
        adv = mlp(self.latent_z, (16,), 1)
        params = [
            *self.enc_z_.parameters(),
            *self.enc_w_.parameters(),
            *self.decoder_.parameters(),
        ]
        opt = torch.optim.Adam(params, lr=self.lr)
        adv_opt = torch.optim.Adam(adv.parameters(), lr=self.lr)
        y = np.asarray(self.model.approves(data.codes), dtype=float)
        xf = torch.as_tensor(z[:, self.f_cols_], dtype=torch.float32)
        xi = torch.as_tensor(z[:, self.i_cols_], dtype=torch.float32)
        yt = torch.as_tensor(y, dtype=torch.float32)[:, None]
        bce = torch.nn.functional.binary_cross_entropy_with_logits
        prior_logvar = float(2 * np.log(self.w_sd))
        for idx in self.batches(len(z), rng):
            mu_z, lv_z = self.enc_z_(torch.cat([xf[idx], xi[idx]], dim=1))
            mu_w, lv_w = self.enc_w_(torch.cat([xf[idx], yt[idx]], dim=1))
            lz, lw = reparameterise(mu_z, lv_z), reparameterise(mu_w, lv_w)
            adv_opt.zero_grad()
            bce(adv(lz.detach()), yt[idx]).backward()
            adv_opt.step()
            rec = torch.sigmoid(self.decoder_(torch.cat([lz, lw, xi[idx]], dim=1)))
            nll = ((rec - xf[idx]) ** 2).sum(dim=1) / (2 * self.recon_sigma**2)
            prior_mu = (2 * yt[idx] - 1) * self.w_mean
            kl = kl_normal(mu_z, lv_z) + kl_normal(mu_w, lv_w, prior_mu, prior_logvar)
            p = torch.sigmoid(adv(lz))
            entropy = -(p * torch.log(p + 1e-8) + (1 - p) * torch.log(1 - p + 1e-8)).squeeze(-1)
            loss = (nll + kl - self.adversary_weight * entropy).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        for net in (self.enc_z_.net, self.enc_w_.net, self.decoder_):
            net.eval()

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        import torch

        with torch.no_grad():
            inp = torch.as_tensor(
                np.hstack([z[:, self.f_cols_], z[:, self.i_cols_]]), dtype=torch.float32
            )
            mu_z = self.enc_z_(inp)[0].numpy().astype(float)
        out = np.full(z.shape, np.nan)
        todo = np.arange(len(z))
        s = self.n_samples
        for _ in range(self.max_rounds):
            if todo.size == 0:
                break
            w = self.w_mean + self.w_sd * rng.standard_normal((len(todo) * s, self.latent_w))
            owner = np.repeat(todo, s)
            with torch.no_grad():
                inp = torch.as_tensor(
                    np.hstack([mu_z[owner], w, z[owner][:, self.i_cols_]]), dtype=torch.float32
                )
                xf = torch.sigmoid(self.decoder_(inp)).numpy().astype(float)
            dec = z[owner].copy()
            dec[:, self.f_cols_] = xf
            cand = snap(self.layout, z[todo][:, None, :], dec.reshape(len(todo), s, -1))
            ok = self.approves_z(cand.reshape(-1, z.shape[1])).reshape(len(todo), -1)
            picked, found = nearest_valid(z[todo], cand, ok)
            out[todo[found]] = picked[found]
            todo = todo[~found]
        return out
