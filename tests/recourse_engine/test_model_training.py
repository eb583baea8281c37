"""Decision models trained on a pool with a label rule, and the card that describes them."""

from __future__ import annotations

import numpy as np
import pytest

from recourse_engine import load_model, save_model
from recourse_engine.model_training import (
    LabelRule,
    LabelRuleError,
    model_card,
    train_decision_model,
)

from .labelled_pool import labelled_carloan_pool


@pytest.fixture(scope="module")
def pool():
    return labelled_carloan_pool(500, seed=2)


def test_each_rule_labels_the_pool_as_it_says(pool):
    _, p = pool
    top = LabelRule.parse({"kind": "top_quantile", "share": 0.25}).labels(p)
    assert top.sum() == pytest.approx(0.25 * len(p), abs=2)
    assert set(np.asarray(p.income)[top == 1]) >= {float(np.max(p.income))}
    cut = float(np.median(p.income))
    thr = LabelRule.parse({"kind": "income_threshold", "threshold": cut}).labels(p)
    assert (thr == (np.asarray(p.income) >= cut)).all()
    col = LabelRule.parse({"kind": "column", "column": "approved"}).labels(p)
    assert (col == p.extra["approved"].to_numpy()).all()


@pytest.mark.parametrize(
    ("raw", "path", "words"),
    [
        ({"kind": "column"}, "column", "required"),
        ({"kind": "column", "column": " "}, "column", "required"),
        ({"kind": "column", "column": "nope"}, "column", "no column 'nope'"),
        ({"kind": "column", "column": "gender"}, "column", "0 or 1 only"),
        ({"kind": "top_quantile", "share": 1.5}, "share", "between 0 and 1"),
        ({"kind": "top_quantile", "share": "half"}, "share", "not a number"),
        ({"kind": "income_threshold"}, "threshold", "required"),
        ({"kind": "income_threshold", "threshold": 1e12}, "", "all 500 pool profiles declined"),
        ({"kind": "income", "share": 0.5}, "kind", "not one of"),
        ({"kind": "top_quantile", "share": 0.5, "column": "x"}, "column", "unknown field"),
    ],
)
def test_bad_rules_are_refused_with_the_faulty_part_named(pool, raw, path, words):
    _, p = pool
    with pytest.raises(LabelRuleError, match=words) as caught:
        LabelRule.parse(raw).labels(p)
    assert caught.value.path == path


@pytest.mark.parametrize("kind", ["logistic", "gradient_boosting"])
def test_trained_model_learns_the_rule_and_its_card_says_so(tmp_path, pool, kind):
    schema, p = pool
    rule = LabelRule.parse({"kind": "column", "column": "approved"})
    model = train_decision_model(schema, p, rule, kind=kind, seed=0)
    y = p.extra["approved"].to_numpy().astype(bool)
    approves = model.approves(p.codes)
    assert (approves == y).mean() > 0.9
    card = model_card(model, schema, p)
    assert card["kind"] == kind and card["features"] == list(schema.keys)
    assert card["approved"] == int(approves.sum())
    assert card["approval_rate"] == pytest.approx(approves.mean(), abs=1e-4)
    if kind == "logistic":
        coefficients = card["coefficients"]
        assert {name.split("=")[0] for name in coefficients} == set(schema.keys)
        # the rule rises with position and education: both weigh positively, among the most
        top3 = sorted(coefficients, key=lambda k: -abs(coefficients[k]))[:3]
        assert {"position", "education"} <= set(top3)
        assert coefficients["position"] > 0 and coefficients["education"] > 0
    else:
        assert card["coefficients"] is None
    loaded = load_model(save_model(model, tmp_path / "m.joblib"), schema)
    assert model_card(loaded, schema, p) == card


def test_unknown_model_kind_is_refused(pool):
    schema, p = pool
    with pytest.raises(ValueError, match="unknown model kind 'svm'"):
        train_decision_model(schema, p, LabelRule("top_quantile", share=0.5), kind="svm")
