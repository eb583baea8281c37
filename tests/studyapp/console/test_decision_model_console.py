"""A decision model from the console: a methods design saved before the model exists, going
live refused with what to do, a model trained on the pool, the study page showing it with its
approval rate, going live after; a bad label rule refused with its path and nothing stored."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from recourse_engine import synth_pool
from studyapp.definition.errors import StudyError
from studyapp.models import Study
from studyapp.studies import model_training, pool, services
from tests.studyapp.conftest import SCHEMA, make_study
from tests.studyapp.console.conftest import change_data, change_url, client_for, researcher

METHODS_DESIGN = "proximate:1,gs:1,random:1"


@pytest.fixture
def owner(transactional_db: Any) -> Any:
    return researcher("owner")


@pytest.fixture
def methods_draft(owner: Any) -> Study:
    """A draft whose design names a recourse method, saved while it still has the income
    rule (refused at creation before the console could train a model)."""
    frame = synth_pool(SCHEMA, n=300, seed=4)
    frame["approved"] = ((frame["position"] >= 4) | (frame["education"] >= 4)).astype(int)
    return make_study(
        slug="methods",
        pool=frame,
        state="draft",
        title="Internal: Wachter vs GS vs pool",
        design=METHODS_DESIGN,
        seed=3,
        owner=owner,
    )


def _model_url(study: Study) -> str:
    return f"/admin/studyapp/study/{study.pk}/decision-model/"


def _stored(study: Study) -> tuple[Any, ...]:
    row = Study.objects.get(pk=study.pk)
    return row.decision_model, row.decision_model_blob, row.decision_model_info, row.state


def test_a_model_trained_in_the_console_lets_the_methods_design_go_live(
    methods_draft: Study, owner: Any
) -> None:
    assert methods_draft.design == METHODS_DESIGN and methods_draft.decision_model == "income_rule"
    # going live without a model says what to do, and changes nothing
    with pytest.raises(StudyError, match="gs, which need a decision model") as caught:
        services.study_set_state(study=methods_draft, state=Study.State.LIVE)
    assert "train one on the pool in the console" in str(caught.value)
    assert Study.objects.get(pk=methods_draft.pk).state == Study.State.DRAFT

    client = client_for(owner)
    page = client.get(change_url(methods_draft)).content.decode()
    assert "Income rule" in page and _model_url(methods_draft) in page
    r = client.post(
        _model_url(methods_draft),
        {"train": "1", "model_kind": "logistic", "rule": "top_quantile", "share": "0.3"},
    )
    assert r.status_code == 302, r.content.decode()[:3000]
    methods_draft.refresh_from_db()
    card = methods_draft.decision_model_info
    assert methods_draft.decision_model == "uploaded" and methods_draft.decision_model_blob
    assert card["source"] == "trained" and card["kind"] == "logistic"
    assert card["label_rule"] == {"kind": "top_quantile", "share": 0.3}
    assert card["pool_rows"] == 300 and 0 < card["approval_rate"] < 1

    page = client.get(change_url(methods_draft)).content.decode()
    shown = re.search(r'<table id="model-card">(.*?)</table>', page, re.S)
    assert shown is not None
    assert "logistic (trained)" in shown.group(1)
    assert f"{card['approval_rate']:.1%}" in shown.group(1)
    assert card["sha256"] in shown.group(1) and "top 30%" in shown.group(1)
    assert 'id="model-coefficients"' in page and "position" in page

    # going live (the study page's button) works now, and warns of the inherited texts
    r = client.post(
        f"/admin/studyapp/study/{methods_draft.pk}/state/", {"state": "live"}, follow=True
    )
    assert Study.objects.get(pk=methods_draft.pk).state == Study.State.LIVE
    shown = [str(m) for m in r.context["messages"]]
    assert "methods is now live." in shown
    assert any(m.startswith("texts.en.plan_intro: still the reference study's text") for m in shown)


def test_a_label_rule_naming_no_column_is_refused_and_nothing_changes(
    methods_draft: Study, owner: Any
) -> None:
    before = _stored(methods_draft)
    client = client_for(owner)
    r = client.post(
        _model_url(methods_draft),
        {"train": "1", "model_kind": "logistic", "rule": "column", "column": ""},
    )
    assert r.status_code == 200
    assert "label_rule.column: required: the name of a 0/1 column of the pool" in r.content.decode()
    r = client.post(
        _model_url(methods_draft),
        {"train": "1", "model_kind": "logistic", "rule": "column", "column": "approvd"},
    )
    assert "label_rule.column: the pool has no column &#x27;approvd&#x27;" in r.content.decode()
    assert _stored(methods_draft) == before
    # the service refuses the same way, naming the path
    with pytest.raises(StudyError, match=r"^label_rule\.column: required"):
        model_training.study_train_decision_model(
            study=methods_draft, kind="logistic", label_rule={"kind": "column"}
        )
    assert _stored(methods_draft) == before


def test_the_pool_label_column_trains_gradient_boosting(methods_draft: Study) -> None:
    study = model_training.study_train_decision_model(
        study=methods_draft,
        kind="gradient_boosting",
        label_rule={"kind": "column", "column": "approved"},
    )
    card = study.decision_model_info
    assert card["kind"] == "gradient_boosting" and card["coefficients"] is None
    assert card["label_rule_text"] == "approved where the pool's column 'approved' is 1"
    frame = synth_pool(SCHEMA, n=300, seed=4)
    labels = ((frame["position"] >= 4) | (frame["education"] >= 4)).to_numpy()
    assert abs(card["approval_rate"] - labels.mean()) < 0.1


def test_the_pool_upload_accepts_a_label_column_of_zeros_and_ones() -> None:
    frame = synth_pool(SCHEMA, n=30, seed=1)
    frame["approved"] = [0, 1] * 15
    preview = pool.pool_preview(SCHEMA, frame.to_csv(index=False).encode())
    assert preview.ok and "approved" in preview.csv_text.splitlines()[0]
    frame.loc[4, "approved"] = 2
    preview = pool.pool_preview(SCHEMA, frame.to_csv(index=False).encode())
    assert not preview.ok
    assert preview.rejected == [(6, "column 'approved': '2' is not 0 or 1")]


def test_only_superusers_see_the_upload_form(methods_draft: Study, owner: Any) -> None:
    assert 'id="upload-form"' not in client_for(owner).get(_model_url(methods_draft)).text
    admin = researcher("root", superuser=True)
    assert 'id="upload-form"' in client_for(admin).get(_model_url(methods_draft)).text


def test_a_live_study_model_cannot_be_trained(methods_draft: Study, owner: Any) -> None:
    client: Client = client_for(owner)
    client.post(_model_url(methods_draft), {"train": "1", "model_kind": "logistic",
                                            "rule": "top_quantile", "share": "0.5"})  # fmt: skip
    methods_draft.refresh_from_db()
    services.study_set_state(study=methods_draft, state=Study.State.LIVE)
    before = _stored(methods_draft)
    r = client.post(
        _model_url(methods_draft),
        {"train": "1", "model_kind": "logistic", "rule": "top_quantile", "share": "0.2"},
    )
    assert r.status_code == 302 and _stored(methods_draft) == before


def test_saving_a_draft_warns_of_texts_and_of_the_missing_model(owner: Any) -> None:
    study = make_study(slug="warned", state="draft")
    study.owner = owner
    study.save(update_fields=["owner"])
    r = client_for(owner).post(
        change_url(study), change_data(study, design="random:1,proximate:1,gs:1"), follow=True
    )
    shown = [str(m) for m in r.context["messages"]]
    assert Study.objects.get(pk=study.pk).design == "random:1,proximate:1,gs:1"
    assert any(
        m.startswith("texts.en.consent: names 5 plans, but the design shows 3") for m in shown
    )
    assert any("before going live: the design names gs" in m for m in shown)
