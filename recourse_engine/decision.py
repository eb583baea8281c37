"""Decision models behind one small interface: `predict_proba` and `approves`.

* `IncomeRule` — the reference study's bank: a loan of a third of the
  applicant's income is approved only for incomes of at least 4/3 of it, so a
  pool profile x' is approved *for x* when income(x') >= 4/3 income(x). It is
  relative to the factual profile, so it takes `factual_income`; the comparison
  is exact in integers of the ratio's fraction (no float edge cases at 4/3).
* `SklearnModel` — logistic regression, an MLP or gradient boosting trained on a pool
  with a label column, on the schema's normalised scale (optionally with log income).
* `TorchMLP` — a small torch MLP on the same features.

Models save and load with the schema hash they were trained on; loading a model
against another schema is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import joblib
import numpy as np

from .encoding import normalise
from .pool import Pool
from .schema import FeatureSchema

APPROVAL_THRESHOLD = 0.5


class ModelError(ValueError):
    """A model that cannot be trained, loaded or applied as asked."""


class DecisionModel:
    """The interface: the probability of approval of each row of `codes`, and approval where
    it reaches the threshold. A model gives `_proba`; a stand-in elsewhere (a test's) may
    instead give both methods itself."""

    name: str
    schema_hash: str | None
    #: True when approval depends on the factual profile (the income rule)
    relative_to_factual: bool

    def predict_proba(
        self,
        codes: np.ndarray,
        income: np.ndarray | None = None,
        *,
        factual_income: float | None = None,
    ) -> np.ndarray:
        return self._proba(np.atleast_2d(codes), income, factual_income)

    def approves(
        self,
        codes: np.ndarray,
        income: np.ndarray | None = None,
        *,
        factual_income: float | None = None,
    ) -> np.ndarray:
        return (
            self.predict_proba(codes, income, factual_income=factual_income) >= APPROVAL_THRESHOLD
        )

    def _proba(
        self, codes: np.ndarray, income: np.ndarray | None, factual_income: float | None
    ) -> np.ndarray:
        raise NotImplementedError


@dataclass
class IncomeRule(DecisionModel):
    """Approval is the exact comparison; its probability is that approval as 0 or 1."""

    ratio: float = 4 / 3
    name: str = "income_rule"
    schema_hash: str | None = None
    relative_to_factual: bool = True

    def __post_init__(self) -> None:
        if not np.isfinite(self.ratio) or self.ratio <= 0:
            raise ModelError(f"income ratio must be a positive number, got {self.ratio!r}")
        self._frac = Fraction(self.ratio).limit_denominator(10_000)

    def _proba(
        self, codes: np.ndarray, income: np.ndarray | None, factual_income: float | None
    ) -> np.ndarray:
        if income is None:
            raise ModelError("the income rule needs the candidates' income")
        if factual_income is None:
            raise ModelError("the income rule approves relative to a factual profile's income")
        # income' >= (p/q) income  <=>  q income' >= p income  (exact for integer JPY)
        approved = np.asarray(income, dtype=float) * self._frac.denominator >= (
            float(factual_income) * self._frac.numerator
        )
        return approved.astype(float)


def _features(
    schema: FeatureSchema, codes: np.ndarray, income: np.ndarray | None, use_income: bool
) -> np.ndarray:
    z = normalise(schema, codes)
    if use_income:
        if income is None:
            raise ModelError("this model was trained with income; pass the candidates' income")
        z = np.hstack([z, np.log1p(np.asarray(income, dtype=float))[:, None] / 20.0])
    return z


def _labels(pool: Pool, label: str) -> np.ndarray:
    if label not in pool.extra.columns:
        raise ModelError(f"pool has no label column {label!r}")
    y = np.asarray(pool.extra[label])
    values = set(np.unique(y).tolist())
    if not values <= {0, 1}:
        raise ModelError(f"label column {label!r} must hold 0/1, found {sorted(values)[:5]}")
    if len(values) < 2:
        raise ModelError(f"label column {label!r} holds a single class")
    return y.astype(int)


class _TrainedModel(DecisionModel):
    """Trained models: a probability from the schema's features (`_feature_proba`); neither
    it nor approval depends on the factual."""

    schema: FeatureSchema
    use_income: bool

    def _proba(
        self, codes: np.ndarray, income: np.ndarray | None, factual_income: float | None
    ) -> np.ndarray:
        return self._feature_proba(_features(self.schema, codes, income, self.use_income))

    def _feature_proba(self, feats: np.ndarray) -> np.ndarray:
        raise NotImplementedError


@dataclass
class SklearnModel(_TrainedModel):
    estimator: Any
    schema: FeatureSchema
    use_income: bool = False
    name: str = "sklearn"
    relative_to_factual: bool = False
    schema_hash: str | None = field(default=None)

    def __post_init__(self) -> None:
        self.schema_hash = self.schema.hash()

    def _feature_proba(self, feats: np.ndarray) -> np.ndarray:
        return self.estimator.predict_proba(feats)[:, 1]


def train_sklearn_model(
    schema: FeatureSchema,
    pool: Pool,
    label: str,
    *,
    kind: str = "logistic",
    use_income: bool = False,
    seed: int = 0,
) -> SklearnModel:
    """Fit a logistic regression, an MLP or gradient boosting on a pool with a 0/1 label
    column."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    y = _labels(pool, label)
    x = _features(schema, pool.codes, pool.income, use_income)
    if kind == "logistic":
        est = LogisticRegression(max_iter=2000)
    elif kind == "mlp":
        est = MLPClassifier(hidden_layer_sizes=(32, 16), max_iter=500, random_state=seed)
    elif kind == "gradient_boosting":
        from sklearn.ensemble import GradientBoostingClassifier

        est = GradientBoostingClassifier(random_state=seed)
    else:
        raise ModelError(
            f"unknown sklearn model kind {kind!r}; expected logistic, mlp or gradient_boosting"
        )
    est.fit(x, y)
    return SklearnModel(estimator=est, schema=schema, use_income=use_income, name=f"sklearn_{kind}")


@dataclass
class TorchMLP(_TrainedModel):
    schema: FeatureSchema
    hidden: tuple[int, ...] = (32, 16)
    use_income: bool = False
    name: str = "torch_mlp"
    relative_to_factual: bool = False
    schema_hash: str | None = field(default=None)
    module: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        import torch

        self.schema_hash = self.schema.hash()
        if self.module is None:
            n_in = _features(
                self.schema, np.ones((1, self.schema.d)), np.ones(1), self.use_income
            ).shape[1]
            layers: list[torch.nn.Module] = []
            for h in self.hidden:
                layers += [torch.nn.Linear(n_in, h), torch.nn.ReLU()]
                n_in = h
            layers.append(torch.nn.Linear(n_in, 1))
            self.module = torch.nn.Sequential(*layers)

    def logits(self, feats: np.ndarray) -> Any:
        import torch

        return self.module(torch.as_tensor(feats, dtype=torch.float32)).squeeze(-1)

    def _feature_proba(self, feats: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            return torch.sigmoid(self.logits(feats)).numpy().astype(float)


def train_torch_mlp(
    schema: FeatureSchema,
    pool: Pool,
    label: str,
    *,
    hidden: tuple[int, ...] = (32, 16),
    epochs: int = 200,
    lr: float = 1e-2,
    use_income: bool = False,
    seed: int = 0,
) -> TorchMLP:
    """Full-batch Adam on binary cross-entropy; seeded, so the same pool gives the same model."""
    import torch

    y = _labels(pool, label)
    torch.manual_seed(seed)
    model = TorchMLP(schema=schema, hidden=hidden, use_income=use_income)
    feats = _features(schema, pool.codes, pool.income, use_income)
    target = torch.as_tensor(y, dtype=torch.float32)
    opt = torch.optim.Adam(model.module.parameters(), lr=lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for _ in range(epochs):
        opt.zero_grad()
        loss = loss_fn(model.logits(feats), target)
        loss.backward()
        opt.step()
    model.module.eval()
    return model


def save_model(model: DecisionModel, path: str | Path) -> Path:
    """Torch models go to a state-dict file (.pt); the others to joblib, with their schema hash."""
    path = Path(path)
    if isinstance(model, TorchMLP):
        import torch

        torch.save(
            {
                "kind": "torch_mlp",
                "schema_hash": model.schema_hash,
                "hidden": list(model.hidden),
                "use_income": model.use_income,
                "state_dict": model.module.state_dict(),
            },
            path,
        )
    elif isinstance(model, SklearnModel):
        joblib.dump(
            {
                "kind": "sklearn",
                "schema_hash": model.schema_hash,
                "estimator": model.estimator,
                "use_income": model.use_income,
                "name": model.name,
            },
            path,
        )
    elif isinstance(model, IncomeRule):
        joblib.dump({"kind": "income_rule", "schema_hash": None, "ratio": model.ratio}, path)
    else:
        raise ModelError(f"cannot save a model of type {type(model).__name__}")
    return path


def load_model(path: str | Path, schema: FeatureSchema) -> DecisionModel:
    """Load a saved model; refuses one trained on a different schema."""
    path = Path(path)
    if not path.exists():
        raise ModelError(f"{path}: model file not found")
    payload: dict[str, Any]
    try:
        payload = joblib.load(path)
    except Exception:
        try:
            import torch

            payload = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise ModelError(f"{path}: not a saved decision model ({exc})") from None
    if not isinstance(payload, dict) or "kind" not in payload:
        raise ModelError(f"{path}: not a saved decision model")
    kind = payload["kind"]
    if kind == "income_rule":
        return IncomeRule(ratio=float(payload["ratio"]))
    if payload.get("schema_hash") != schema.hash():
        raise ModelError(
            f"{path}: model was trained on schema {payload.get('schema_hash')}, "
            f"not on this schema ({schema.hash()})"
        )
    if kind == "sklearn":
        return SklearnModel(
            estimator=payload["estimator"],
            schema=schema,
            use_income=bool(payload["use_income"]),
            name=str(payload.get("name", "sklearn")),
        )
    if kind == "torch_mlp":
        model = TorchMLP(
            schema=schema, hidden=tuple(payload["hidden"]), use_income=bool(payload["use_income"])
        )
        model.module.load_state_dict(payload["state_dict"])
        model.module.eval()
        return model
    raise ModelError(f"{path}: unknown model kind {kind!r}")


def rejects_factual(model: DecisionModel, codes: np.ndarray, income: float | None) -> bool:
    """Whether the model rejects the participant's own profile. Under the income rule it
    always does for a positive income: the loan asked (a third of income) exceeds the
    quarter the bank lends, which is income(x) < 4/3 income(x)."""
    inc = None if income is None else np.array([income], dtype=float)
    return not bool(model.approves(np.atleast_2d(codes), inc, factual_income=income)[0])
