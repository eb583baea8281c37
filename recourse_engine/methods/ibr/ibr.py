"""Implicit balanced recourse (IBR, Gao & Lakkaraju 2023): CCHVAE made group-blind.

The encoder sees x_f only and the decoder [z, x_I without the sensitive attribute]; a
discriminator predicts the group m from z and is trained adversarially: it minimises its
cross-entropy, the VAE maximises it with weight beta — so z, and the recourse decoded from
it, carry as little of the group as the data allow. Same search as CCHVAE; the training is
CCHVAE's own with `balanced` set (`recourse_engine.methods.cchvae`).
`adversary="entropy"` is the authors' published code instead (ruijiang81/Balanced-Recourse,
`balancevae.py`: `loss = elbo - gamma * entropy(sen_clf(z))`): the VAE maximises the
entropy of the discriminator's prediction, not its cross-entropy (the paper prints
−β log P(m|z)); the discriminator is trained on its cross-entropy either way.

The pool variant, the design strategy `ibr`, is in `ibr_pool`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..capabilities import Capabilities
from ..cchvae import CCHVAE


@dataclass
class IBR(CCHVAE):
    """Implicit balanced recourse: CCHVAE with a group-blind encoder and an adversary on z."""

    capabilities: ClassVar[Capabilities] = Capabilities(group_column=True)

    beta: float = 10.0  # type: ignore[assignment]
    adversary: str = "cross_entropy"  # type: ignore[assignment]
    name: str = field(default="ibr", init=False)
    balanced: bool = field(default=True, init=False)
