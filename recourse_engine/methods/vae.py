"""Small torch building blocks shared by CCHVAE, IBR and CRUDS: their training settings,
MLPs, the reparameterised Gaussian encoder, a training loop with an optional progress bar,
and the growing-sphere search in latent space (CCHVAE's counterfactual search)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import RecourseMethod, judged_candidates, nearest_valid
from .growing_spheres import layer_samples


def mlp(n_in: int, hidden: tuple[int, ...], n_out: int) -> Any:
    import torch

    layers: list[Any] = []
    for h in hidden:
        layers += [torch.nn.Linear(n_in, h), torch.nn.ReLU()]
        n_in = h
    layers.append(torch.nn.Linear(n_in, n_out))
    return torch.nn.Sequential(*layers)


class GaussianEncoder:
    """x -> (mu, logvar) of q(z | x)."""

    def __init__(self, n_in: int, hidden: tuple[int, ...], latent: int):
        self.net = mlp(n_in, hidden, 2 * latent)
        self.latent = latent

    def __call__(self, x: Any) -> tuple[Any, Any]:
        out = self.net(x)
        return out[:, : self.latent], out[:, self.latent :].clamp(-8.0, 8.0)

    def parameters(self) -> Iterator[Any]:
        return self.net.parameters()


def reparameterise(mu: Any, logvar: Any) -> Any:
    import torch

    return mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)


def kl_normal(mu: Any, logvar: Any, prior_mu: Any = 0.0, prior_logvar: Any = 0.0) -> Any:
    """KL(N(mu, e^logvar) || N(prior_mu, e^prior_logvar)) summed over dimensions."""
    import torch

    var, pvar = torch.exp(logvar), torch.exp(torch.as_tensor(prior_logvar))
    return 0.5 * (
        (var + (mu - prior_mu) ** 2) / pvar - 1.0 + torch.as_tensor(prior_logvar) - logvar
    ).sum(dim=1)


def minibatches(
    n: int,
    batch: int,
    epochs: int,
    rng: np.random.Generator,
    progress: bool | Callable[[int, int], None],
    desc: str,
) -> Iterator[np.ndarray]:
    """Index batches for `epochs` passes, with a tqdm bar over epochs when asked, or a
    callback `progress(epochs done, epochs)` after each epoch (the study app's progress)."""
    epochs_iter: Any = range(epochs)
    if progress is True:
        import sys

        from tqdm import tqdm

        epochs_iter = tqdm(  # on a terminal only: a log gets no bar lines
            epochs_iter, desc=desc, unit="epoch", file=sys.stderr, leave=False, disable=None
        )
    for epoch in epochs_iter:
        order = rng.permutation(n)
        for start in range(0, n, batch):
            yield order[start : start + batch]
        if callable(progress):
            progress(epoch + 1, epochs)


@dataclass
class VAEMethod(RecourseMethod):
    """A method that trains VAE-style networks: hidden layers (the decoder mirrors them) and
    minibatch Adam on a Gaussian decoder with a fixed sd `recon_sigma` (normalised scale)."""

    hidden: tuple[int, ...] = (32, 16)
    epochs: int = 60
    batch: int = 64
    lr: float = 5e-3
    recon_sigma: float = 0.1

    def batches(self, n: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """Minibatch indices over `epochs` passes, reporting progress as the method asks."""
        return minibatches(n, self.batch, self.epochs, rng, self.progress, self.name)


def latent_sphere_search(
    method: RecourseMethod,
    z: np.ndarray,
    mu: np.ndarray,
    decode: Callable[[np.ndarray, np.ndarray], np.ndarray],
    rng: np.random.Generator,
    *,
    step: float,
    n_samples: int,
    max_layers: int,
) -> np.ndarray:
    """CCHVAE's search: shells of growing radius around each factual's latent mean; the
    first shell whose decoded, snapped points include approved ones gives the closest (L2 on
    the normalised scale). `decode(latents (m, k), factual rows (m,)) -> (m, p)`."""
    out = np.full(z.shape, np.nan)
    todo = np.arange(len(z))
    k = mu.shape[1]
    for t in range(max_layers):
        if todo.size == 0:
            break
        lat = mu[todo][:, None, :] + layer_samples(
            rng, len(todo), n_samples, k, t * step, (t + 1) * step
        )
        flat = lat.reshape(-1, k)
        owner = np.repeat(todo, n_samples)
        cand, ok = judged_candidates(
            method, z[todo], lambda rows, f=flat, o=owner: decode(f[rows], o[rows]), n_samples
        )
        picked, found = nearest_valid(z[todo], cand, ok)
        out[todo[found]] = picked[found]
        todo = todo[~found]
    return out
