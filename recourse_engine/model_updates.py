"""The decision model between the waves of a multi-wave study, and plans robust to its changes.

A multi-wave study re-scores a participant's updated profile at each re-application with the
model in force for that wave. What that model is, is a design factor (`MODEL_POLICIES`):

* `frozen` — the study's model in every wave;
* `retrained` — endogenous drift (Fonseca et al. 2023; Altmeyer et al. 2023): the study's
  model kind and settings trained again on the pool plus the participants' updated profiles
  of the last wave (`retrain_with`), those labelled by the study's ground truth as the pool
  knows it (`label_updated_profiles`);
* `multiplicity` — another model that fits the pool as well: one of a set of near-equal
  models trained with other seeds (`train_model_set`; Marx et al. 2020, "predictive
  multiplicity"). A seed varies both the estimator's own randomness (where it has any) and a
  seeded 90% subsample of the pool, so even a logistic regression (which has none) differs.

Each wave's model is identified by `model_hash`: the SHA-256 of the bytes `save_model`
writes, so the export records which model decided, and a reader can reload it and check.

`robust_filter` is the "robust plans" design option: the candidates approved by every model
of a set (ROAR, Upadhyay et al. 2021, asks for plans valid under model changes; here the
changes are the study's own set, so validity is checked, not bounded).
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .decision import (
    DecisionModel,
    IncomeRule,
    ModelError,
    SklearnModel,
    TorchMLP,
    _features,
    save_model,
    train_torch_mlp,
)
from .distances import item_costs
from .pool import Pool
from .schema import FeatureSchema

if TYPE_CHECKING:
    from .model_training import LabelRule

#: the model between waves, a design factor of a multi-wave study's condition
MODEL_POLICIES = ("frozen", "retrained", "multiplicity")


def check_policy(name: object) -> str:
    """`name` if it is one of `MODEL_POLICIES`; ModelError naming the known ones otherwise."""
    if not isinstance(name, str) or name not in MODEL_POLICIES:
        raise ModelError(
            f"unknown model policy {name!r}; expected one of {', '.join(MODEL_POLICIES)}"
        )
    return name


def model_hash(model: DecisionModel) -> str:
    """SHA-256 hex of the bytes `save_model` writes: a model's identity in the export."""
    suffix = ".pt" if isinstance(model, TorchMLP) else ".joblib"
    with tempfile.TemporaryDirectory(prefix="model_hash_") as tmp:
        path = save_model(model, Path(tmp) / f"model{suffix}")
        return hashlib.sha256(path.read_bytes()).hexdigest()


def _retrainable(base_model: DecisionModel) -> None:
    if isinstance(base_model, IncomeRule) or getattr(base_model, "relative_to_factual", False):
        raise ModelError(
            "the income rule is not trained on data, so it cannot be retrained or varied by "
            "seed; the retrained and multiplicity policies need a model trained on the pool"
        )
    if not isinstance(base_model, SklearnModel | TorchMLP):
        raise ModelError(
            f"cannot retrain a model of type {type(base_model).__name__}; "
            "expected a scikit-learn model or a torch MLP"
        )


def _check_labels(labels: np.ndarray, n: int, what: str) -> np.ndarray:
    y = np.asarray(labels)
    if y.shape != (n,):
        raise ModelError(f"{what}: expected {n} labels, got shape {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ModelError(f"{what}: labels must be 0 or 1")
    return y.astype(int)


def _check_codes(schema: FeatureSchema, codes: np.ndarray, what: str) -> np.ndarray:
    x = np.atleast_2d(np.asarray(codes, dtype=float))
    if x.shape[1] != schema.d:
        raise ModelError(f"{what}: expected {schema.d} item codes per row, got {x.shape[1]}")
    for j, it in enumerate(schema.items):
        bad = np.flatnonzero(~it.valid(x[:, j]))
        if bad.size:
            raise ModelError(
                f"{what}: row {int(bad[0]) + 1}: item {it.key!r}: {x[bad[0], j]!r} is not a "
                "valid code"
            )
    return x


def _fit_like(
    base_model: DecisionModel,
    schema: FeatureSchema,
    codes: np.ndarray,
    income: np.ndarray | None,
    y: np.ndarray,
    seed: int,
) -> DecisionModel:
    """The base model's kind and settings fitted on (codes, income) -> y with `seed`."""
    if len(np.unique(y)) < 2:
        raise ModelError("the training labels hold a single class; nothing to learn")
    if isinstance(base_model, TorchMLP):
        import pandas as pd

        extra = pd.DataFrame({"__label__": y})
        pool = Pool(schema.hash(), np.arange(len(y)).astype(str), codes, income, extra)
        return train_torch_mlp(
            schema,
            pool,
            "__label__",
            hidden=tuple(base_model.hidden),
            use_income=base_model.use_income,
            seed=seed,
        )
    from sklearn.base import clone

    assert isinstance(base_model, SklearnModel)
    est = clone(base_model.estimator)
    if "random_state" in est.get_params():
        est.set_params(random_state=seed)
    est.fit(_features(schema, codes, income, base_model.use_income), y)
    return SklearnModel(
        estimator=est, schema=schema, use_income=base_model.use_income, name=base_model.name
    )


def _accuracy(model: DecisionModel, pool: Pool, y: np.ndarray) -> float:
    return float(np.mean(np.asarray(model.approves(pool.codes, pool.income), dtype=int) == y))


def train_model_set(
    pool: Pool,
    schema: FeatureSchema,
    base_model: DecisionModel,
    *,
    seeds: Sequence[int],
    tolerance: float = 0.02,
    labels: np.ndarray | None = None,
) -> list[DecisionModel]:
    """Near-equal models: the base model's kind and settings, one per seed, each trained on a
    seeded 90% subsample of the pool and kept only if its accuracy on the pool labels is
    within `tolerance` of the base model's. `labels`: the ground truth (the study's label
    rule's `labels(pool)`); without it, the base model's own decisions on the pool, so
    accuracy is agreement with the base model. ModelError names a seed that is not
    near-equal, and refuses a base model that cannot be retrained (the income rule)."""
    _retrainable(base_model)
    if pool.schema_hash != schema.hash():
        raise ModelError("the pool was validated against a different schema")
    if not isinstance(tolerance, int | float) or not 0 <= tolerance < 1:
        raise ModelError(f"tolerance must be a number in [0, 1), got {tolerance!r}")
    seeds = list(seeds)
    if not seeds:
        raise ModelError("train_model_set needs at least one seed")
    bad = [s for s in seeds if isinstance(s, bool) or not isinstance(s, int | np.integer)]
    if bad:
        raise ModelError(f"seeds must be integers, got {bad[0]!r}")
    if len(set(seeds)) != len(seeds):
        raise ModelError("seeds must be distinct (the same seed gives the same model)")
    if labels is None:
        y = np.asarray(base_model.approves(pool.codes, pool.income), dtype=int)
    else:
        y = _check_labels(labels, len(pool), "pool labels")
    base_acc = _accuracy(base_model, pool, y)
    out: list[DecisionModel] = []
    for seed in seeds:
        rng = np.random.default_rng([int(seed), 34])
        rows = np.sort(rng.choice(len(pool), size=max(2, int(0.9 * len(pool))), replace=False))
        income = None if pool.income is None else pool.income[rows]
        model = _fit_like(base_model, schema, pool.codes[rows], income, y[rows], int(seed))
        acc = _accuracy(model, pool, y)
        if abs(acc - base_acc) > tolerance:
            raise ModelError(
                f"seed {seed}: the model's accuracy on the pool labels is {acc:.3f}, the base "
                f"model's {base_acc:.3f}; they differ by more than the tolerance {tolerance:g}, "
                "so it is not a near-equal model (raise the tolerance or use other seeds)"
            )
        out.append(model)
    return out


def label_updated_profiles(
    label_rule: LabelRule | None, schema: FeatureSchema, codes: np.ndarray, *, pool: Pool
) -> np.ndarray:
    """0/1 labels of updated profiles by the study's ground truth as the pool knows it.

    A label rule reads the pool's income or a pool column, which an updated profile (item
    codes only) does not have; so each profile takes the rule's label of the nearest pool
    profile under the schema's proximity (sum of item costs), a majority vote among the pool
    profiles tied nearest (a tied vote labels 1: the profile is as close to approval as to
    rejection). A study whose model has no label rule (an uploaded model) cannot say what
    its ground truth is: ModelError."""
    if label_rule is None:
        raise ModelError(
            "the study's decision model has no label rule (it was uploaded, or is the income "
            "rule), so updated profiles have no ground truth to be labelled by and the "
            "'retrained' model policy cannot be used; train the model from a label rule"
        )
    if pool.schema_hash != schema.hash():
        raise ModelError("the pool was validated against a different schema")
    x = _check_codes(schema, codes, "updated profiles")
    truth = label_rule.labels(pool)
    out = np.empty(len(x), dtype=int)
    for i, row in enumerate(x):
        dist = np.round(item_costs(schema, row, pool.codes).sum(axis=1), 9)
        nearest = truth[dist == dist.min()]
        out[i] = int(2 * nearest.sum() >= len(nearest))
    return out


def retrain_with(
    base_model: DecisionModel,
    pool: Pool,
    schema: FeatureSchema,
    *,
    codes: np.ndarray,
    labels: np.ndarray,
    seed: int,
    pool_labels: np.ndarray | None = None,
) -> DecisionModel:
    """The base model's kind and settings trained on the pool plus the rows given (the
    participants' updated profiles of the last wave, with their `labels`). `pool_labels`:
    the pool's ground truth (the label rule's `labels(pool)`); without it, the base model's
    decisions on the pool. A model trained with income cannot take profiles that have none."""
    _retrainable(base_model)
    if pool.schema_hash != schema.hash():
        raise ModelError("the pool was validated against a different schema")
    if getattr(base_model, "use_income", False):
        raise ModelError(
            "the study's model was trained with income; updated profiles have no income, so "
            "it cannot be retrained on them (train the model on the profile items alone)"
        )
    x = _check_codes(schema, codes, "updated profiles") if len(codes) else np.empty((0, schema.d))
    y_new = _check_labels(labels, len(x), "updated profiles")
    if pool_labels is None:
        y_pool = np.asarray(base_model.approves(pool.codes, pool.income), dtype=int)
    else:
        y_pool = _check_labels(pool_labels, len(pool), "pool labels")
    all_codes = np.vstack([pool.codes, x])
    return _fit_like(
        base_model, schema, all_codes, None, np.concatenate([y_pool, y_new]), int(seed)
    )


def robust_filter(
    candidates_codes: np.ndarray,
    models: Sequence[DecisionModel],
    *,
    factual_income: float | None = None,
    income: np.ndarray | None = None,
) -> np.ndarray:
    """Boolean (m,) mask of the candidates approved by every model in `models` (all True for
    an empty set: no model disagrees). `income`: the candidates' income, for a model that
    reads it; `factual_income`: the participant's, for one that judges relative to it."""
    codes = np.atleast_2d(np.asarray(candidates_codes, dtype=float))
    ok = np.ones(codes.shape[0], dtype=bool)
    for model in models:
        if not ok.any():
            break
        ok &= np.asarray(model.approves(codes, income, factual_income=factual_income), dtype=bool)
    return ok


def models_by_hash(models: Sequence[DecisionModel]) -> dict[str, DecisionModel]:
    """Models keyed by `model_hash` (one entry per distinct model)."""
    return {model_hash(m): m for m in models}


def describe_policy(name: str) -> dict[str, Any]:
    """A policy's name and what it means, as a study page or the docs word it."""
    words = {
        "frozen": "the study's model decides every wave",
        "retrained": "the model is retrained on the pool plus the last wave's updated profiles",
        "multiplicity": "another near-equal model (trained with another seed) decides",
    }
    return {"policy": check_policy(name), "meaning": words[name]}
