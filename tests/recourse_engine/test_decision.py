import numpy as np
import pytest

from recourse_engine import (
    IncomeRule,
    ModelError,
    load_model,
    load_schema,
    rejects_factual,
    save_model,
    train_sklearn_model,
    train_torch_mlp,
)

from .labelled_pool import labelled_carloan_pool


def test_income_rule_is_exact_at_four_thirds():
    rule = IncomeRule()
    codes = np.ones((3, 16))
    # 3,000,000 * 4/3 = 4,000,000 exactly: equal income is approved, one yen less is not
    got = rule.approves(
        codes, np.array([4_000_000, 3_999_999, 5_000_000]), factual_income=3_000_000
    )
    assert got.tolist() == [True, False, True]
    assert rejects_factual(rule, np.ones(16), 3_000_000)
    with pytest.raises(ModelError, match="relative to a factual"):
        rule.approves(codes, np.ones(3))
    with pytest.raises(ModelError, match="positive number"):
        IncomeRule(ratio=-1)


@pytest.fixture(scope="module")
def labelled():
    return labelled_carloan_pool(600, seed=5)


@pytest.mark.parametrize("kind", ["logistic", "mlp", "torch"])
def test_trained_models_learn_save_and_load_with_schema_hash(tmp_path, labelled, kind):
    schema, pool = labelled
    if kind == "torch":
        model = train_torch_mlp(schema, pool, "approved", epochs=300, seed=0)
        path = tmp_path / "m.pt"
    else:
        model = train_sklearn_model(schema, pool, "approved", kind=kind, seed=0)
        path = tmp_path / "m.joblib"
    y = pool.extra["approved"].to_numpy().astype(bool)
    acc = (model.approves(pool.codes) == y).mean()
    assert acc > 0.9
    save_model(model, path)
    loaded = load_model(path, schema)
    np.testing.assert_allclose(
        loaded.predict_proba(pool.codes), model.predict_proba(pool.codes), atol=1e-6
    )
    other = load_schema({"profile_items": [{"key": "a", "type": "binary", "options": ["n", "y"]}]})
    with pytest.raises(ModelError, match="trained on schema"):
        load_model(path, other)


def test_bad_labels_and_files(tmp_path, labelled):
    schema, pool = labelled
    with pytest.raises(ModelError, match="no label column 'nope'"):
        train_sklearn_model(schema, pool, "nope")
    with pytest.raises(ModelError, match="must hold 0/1"):
        train_sklearn_model(schema, pool, "age")
    (tmp_path / "junk.joblib").write_text("not a model")
    with pytest.raises(ModelError, match="not a saved decision model"):
        load_model(tmp_path / "junk.joblib", schema)
    with pytest.raises(ModelError, match="not found"):
        load_model(tmp_path / "missing.joblib", schema)
