"""Training a decision model on a pool with a label rule, and the card that describes a model.

A pool rarely carries a bank's decisions, so the researcher says what "approved" means with a
label rule: an income threshold, the pool's top income quantile, or a 0/1 column of the pool
(`approved` in an uploaded pool). The model learns the rule from the profile items alone, so
that generated counterfactuals (which have no income) can be judged by it. The console's
"Train decision model" page and the demo comparison study call `train_decision_model`; the
card (`model_card`) is what the study page shows of any stored model, trained or uploaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .decision import DecisionModel, ModelError, SklearnModel, TorchMLP, train_sklearn_model
from .encoding import feature_names
from .pool import Pool
from .schema import FeatureSchema

#: label rule kind -> what it means (the console's choices and the docs read this table)
LABEL_RULES: dict[str, str] = {
    "income_threshold": "approved when the income is at least `threshold` (the pool's unit)",
    "top_quantile": "approved when the income is in the pool's top `share` (0 < share < 1)",
    "column": "approved where the pool's 0/1 column `column` holds 1",
}
#: the settings each rule kind takes
_RULE_KEYS = {
    "income_threshold": ("threshold",),
    "top_quantile": ("share",),
    "column": ("column",),
}
#: model kind -> what it is (scikit-learn estimators on the schema's normalised items)
MODEL_KINDS: dict[str, str] = {
    "logistic": "logistic regression (linear; its coefficients are shown)",
    "gradient_boosting": "gradient boosting (trees; not differentiable, so no Wachter)",
}
#: the temporary label column the rule's labels are trained from
_LABEL = "__label__"


class LabelRuleError(ModelError):
    """A label rule that cannot label the pool; `path` names the faulty part ("column")."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)
        self.problem = message


def _number(raw: Mapping[str, Any], key: str) -> float:
    value = raw.get(key)
    if value is None or value == "":
        raise LabelRuleError(key, "required")
    if isinstance(value, bool):
        raise LabelRuleError(key, f"{value!r} is not a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise LabelRuleError(key, f"{value!r} is not a number") from None
    if not np.isfinite(number):
        raise LabelRuleError(key, f"{value!r} is not a finite number")
    return number


@dataclass(frozen=True)
class LabelRule:
    """What "approved" means for training: one of `LABEL_RULES`."""

    kind: str
    threshold: float | None = None
    share: float | None = None
    column: str = ""

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> LabelRule:
        """A rule from its JSON form, e.g. {"kind": "top_quantile", "share": 0.5}; unknown
        keys, a missing or out-of-range value are refused with the key's name."""
        if not isinstance(raw, Mapping):
            raise LabelRuleError("", "expected an object with a 'kind'")
        kind = raw.get("kind")
        if kind not in LABEL_RULES:
            raise LabelRuleError("kind", f"{kind!r} is not one of {', '.join(LABEL_RULES)}")
        allowed = ("kind", *_RULE_KEYS[kind])
        for key in raw:
            if key not in allowed:
                raise LabelRuleError(
                    str(key), f"unknown field for a {kind} rule; expected: {', '.join(allowed)}"
                )
        if kind == "income_threshold":
            threshold = _number(raw, "threshold")
            if threshold <= 0:
                raise LabelRuleError("threshold", f"{threshold:g} is not a positive income")
            return cls(kind=kind, threshold=threshold)
        if kind == "top_quantile":
            share = _number(raw, "share")
            if not 0 < share < 1:
                raise LabelRuleError("share", f"{share:g} is not between 0 and 1 (exclusive)")
            return cls(kind=kind, share=share)
        column = raw.get("column")
        if not isinstance(column, str) or not column.strip():
            raise LabelRuleError("column", "required: the name of a 0/1 column of the pool")
        return cls(kind=kind, column=column.strip())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for key in _RULE_KEYS[self.kind]:
            out[key] = getattr(self, key)
        return out

    def describe(self) -> str:
        """In words, as the study page shows it."""
        if self.kind == "income_threshold":
            return f"approved when income >= {self.threshold:,.0f}"
        if self.kind == "top_quantile":
            return f"approved when income is in the pool's top {self.share:.0%}"
        return f"approved where the pool's column {self.column!r} is 1"

    def labels(self, pool: Pool) -> np.ndarray:
        """0/1 per pool profile; a rule the pool cannot serve, or one that labels every
        profile alike (nothing to learn), is refused."""
        if self.kind == "column":
            if self.column not in pool.extra.columns:
                known = ", ".join(str(c) for c in pool.extra.columns) or "none"
                raise LabelRuleError(
                    "column", f"the pool has no column {self.column!r} (its extra columns: {known})"
                )
            raw = np.asarray(pool.extra[self.column], dtype=object)
            try:
                y = np.array([float(v) for v in raw])
            except (TypeError, ValueError):
                y = np.array([np.nan])
            if not np.isin(y, (0.0, 1.0)).all():
                raise LabelRuleError("column", f"column {self.column!r} must hold 0 or 1 only")
            y = y.astype(int)
        else:
            if pool.income is None:
                raise LabelRuleError("kind", f"a {self.kind} rule needs the pool's income")
            income = np.asarray(pool.income, dtype=float)
            if self.kind == "income_threshold":
                y = (income >= float(self.threshold or 0)).astype(int)
            else:
                cut = np.quantile(income, 1.0 - float(self.share or 0))
                y = (income >= cut).astype(int)
        approved = int(y.sum())
        if approved in (0, len(y)):
            what = "approved" if approved else "declined"
            raise LabelRuleError(
                "", f"the rule labels all {len(y)} pool profiles {what}; nothing to learn"
            )
        return y


def train_decision_model(
    schema: FeatureSchema, pool: Pool, rule: LabelRule, *, kind: str = "logistic", seed: int = 0
) -> SklearnModel:
    """A scikit-learn model of `kind` (`MODEL_KINDS`) on the profile items, learning `rule`."""
    if kind not in MODEL_KINDS:
        raise ModelError(f"unknown model kind {kind!r}; expected one of {', '.join(MODEL_KINDS)}")
    y = rule.labels(pool)
    labelled = replace(pool, extra=pool.extra.assign(**{_LABEL: y}))
    return train_sklearn_model(schema, labelled, _LABEL, kind=kind, seed=seed)


def model_kind(model: DecisionModel) -> str:
    """A model's kind as `MODEL_KINDS` names it ("income_rule", "torch_mlp", ... otherwise)."""
    if isinstance(model, SklearnModel):
        est = type(model.estimator).__name__
        return {
            "LogisticRegression": "logistic",
            "GradientBoostingClassifier": "gradient_boosting",
            "MLPClassifier": "mlp",
        }.get(est, est)
    if isinstance(model, TorchMLP):
        return "torch_mlp"
    return str(getattr(model, "name", type(model).__name__))


def model_card(model: DecisionModel, schema: FeatureSchema, pool: Pool) -> dict[str, Any]:
    """What a researcher needs to see of a stored model: its kind, the features it reads,
    how many pool profiles it approves, and (linear models) its coefficients per column of
    the normalised items (a categorical item has one per option, "key=option")."""
    features = list(schema.keys)
    columns = feature_names(schema)
    if getattr(model, "use_income", False):
        features.append("log_income")
        columns.append("log_income")
    card: dict[str, Any] = {
        "kind": model_kind(model),
        "features": features,
        "pool_rows": len(pool),
        "approved": None,
        "approval_rate": None,
        "coefficients": None,
        "intercept": None,
    }
    if not getattr(model, "relative_to_factual", False):
        approved = np.asarray(model.approves(pool.codes, pool.income), dtype=bool)
        card["approved"] = int(approved.sum())
        card["approval_rate"] = round(float(approved.mean()), 4) if len(pool) else None
    est = getattr(model, "estimator", None)
    coef = getattr(est, "coef_", None)
    if card["kind"] == "logistic" and coef is not None:
        card["coefficients"] = {
            name: round(float(c), 4) for name, c in zip(columns, np.ravel(coef), strict=True)
        }
        card["intercept"] = round(float(np.ravel(est.intercept_)[0]), 4)
    return card
