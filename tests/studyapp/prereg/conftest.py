"""A study with every setting used (conditions, quotas, questions with logic, attention
checks, texts in both languages, a delayed release, retention, a trained model, ...)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from recourse_engine import synth_pool
from studyapp.models import Study
from studyapp.studies import model_training, updates
from tests.studyapp.conftest import SCHEMA, make_study

QUESTIONS = [
    {"key": "car", "page": "pre", "type": "single", "text": {"en": "Own a car?", "ja": "車?"},
     "options": {"en": ["Yes", "No"], "ja": ["はい", "いいえ"]}},
    {"key": "km", "page": "post", "type": "number", "text": {"en": "km per week for {q.car}?"},
     "min": 0, "max": 1000, "show_if": {"all": [{"question": "q.car", "op": "equals", "value": 1}]}},
    {"key": "stop", "page": "pre", "type": "single", "text": {"en": "Continue?"},
     "options": {"en": ["Yes", "No"]},
     "end_if": {"all": [{"question": "q.stop", "op": "equals", "value": 2}]}},
    {"key": "plan_note", "page": "evaluation", "type": "text", "required": False,
     "text": {"en": "Anything else?"}},
]  # fmt: skip

EVERY_SETTING = {
    "title": "Every setting",
    "languages": ["en", "ja"],
    "texts": {"en": {"welcome": "Hello", "consent": "Agree?", "plan_intro": "Plan {position}"},
              "ja": {"welcome": "こんにちは", "consent": "同意?", "plan_intro": "プラン {position}"}},
    "consent_version": "2b",
    "design": "sparsest:1,proximate:1,random:1",
    "method_fallback": "fewer",
    "seed": 11,
    "conditions": [{"name": "sparse", "design": "sparsest:2,random:1"}, {"name": "mixed", "design": ""}],
    "quotas": [{"condition": "", "screening_key": "", "screening_value": "", "limit": 40},
               {"condition": "sparse", "screening_key": "", "screening_value": "", "limit": 20},
               {"condition": "", "screening_key": "gender", "screening_value": "2", "limit": 25}],
    "attention_checks": [{"key": "att1", "prompt": "Pick two", "options": ["one", "two", "three"],
                          "answer": 2, "page": "evaluation-2"}],
    "attention_max_failures": 1,
    "attention_rule": "flag",
    "outcome_codes": {"completed": {"code": "DONE1", "redirect_url": "https://panel.example/done"}},
    "panel_param": "PROLIFIC_PID",
    "assignment_timeout_minutes": 45,
    "page_order": "screening_first",
    "questions": QUESTIONS,
    "random_item_order": ["post"],
    "assignment": "block_random",
    "waiting_timeout_s": 90,
    "page_timeouts": {"scenario": 300},
    "page_min_seconds": {"decision": 5},
    "approved_branch": "hypothetical",
    "design_check_thresholds": {"approval_rate_above": 0.4},
    "release_mode": "delayed",
    "release_after_days": 3,
    "reminder_every_days": 2,
    "max_reminders": 3,
    "return_deadline_days": 10,
    "time_zone": "Asia/Tokyo",
    "retention": {"contact": {"days": 0}, "paradata": {"days": 30, "after": "completion"}},
}  # fmt: skip


def every_setting_study(slug: str = "every") -> Study:
    frame = synth_pool(SCHEMA, n=300, seed=4)
    frame["approved"] = ((frame["position"] >= 4) | (frame["education"] >= 4)).astype(int)
    study = make_study(slug=slug, pool=frame, state="draft")
    study = updates.study_update(study=study, changes=EVERY_SETTING)
    study = model_training.study_train_decision_model(
        study=study, kind="logistic", label_rule={"kind": "column", "column": "approved"}
    )
    release = (timezone.now() + timedelta(days=30)).replace(microsecond=0)
    return updates.study_update(
        study=study,
        changes={
            "method_params": {"wachter": {"lam": 0.05}},
            "release_at": release,
            "release_after_days": None,
        },
    )


@pytest.fixture
def every(transactional_db: Any) -> Study:
    return every_setting_study()
