"""The decision model as a torch function of the normalised scale, for gradient methods.

Supports the engine's own trainable models: scikit-learn logistic regression and MLP
(rebuilt from their fitted weights) and `TorchMLP` (its module), all without income.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..decision import SklearnModel, TorchMLP
from .base import MethodError


def torch_logit(model: Any) -> Callable[[Any], Any]:
    """A function z (n, p) float32 tensor -> logit of approval (n,)."""
    import torch

    if getattr(model, "use_income", False):
        raise MethodError("gradient methods need a model trained without income")
    if isinstance(model, TorchMLP):
        module = model.module.eval()
        return lambda z: module(z).squeeze(-1)
    if isinstance(model, SklearnModel):
        est = model.estimator
        name = type(est).__name__
        if name == "LogisticRegression":
            w = torch.as_tensor(est.coef_[0], dtype=torch.float32)
            b = float(est.intercept_[0])
            return lambda z: z @ w + b
        if name == "MLPClassifier" and est.out_activation_ == "logistic":
            ws = [torch.as_tensor(c, dtype=torch.float32) for c in est.coefs_]
            bs = [torch.as_tensor(c, dtype=torch.float32) for c in est.intercepts_]
            act = {"relu": torch.relu, "tanh": torch.tanh, "logistic": torch.sigmoid}.get(
                est.activation
            )
            if act is None:
                raise MethodError(f"unsupported MLP activation {est.activation!r}")

            def mlp(z: Any) -> Any:
                h = z
                for i, (w, b) in enumerate(zip(ws, bs, strict=True)):
                    h = h @ w + b
                    if i < len(ws) - 1:
                        h = act(h)
                return h.squeeze(-1)

            return mlp
    raise MethodError(
        f"model {getattr(model, 'name', type(model).__name__)!r} has no gradient; "
        "use a logistic, MLP or torch model"
    )
