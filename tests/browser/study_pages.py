"""A site that shows every participant page, for the accessibility and layout tests: the demo
study in English and in Japanese, each with an item of every question type, and participants
put straight into the states whose pages a walk does not reach (waiting, under review, the
report, every ending), so one browser opens each page by its link instead of walking there.

Recourse tasks run in the web process (`STUDYAPP_TASKS_EAGER`): no worker to start.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.browser.test_study_builder_browser import web
from tests.integration.stack import embedded_env, manage, migrate

#: the two studies: language -> slug
STUDIES = {"en": "carloan", "ja": "carloan-ja"}


def _text(en: str, ja: str) -> dict[str, str]:
    return {"en": en, "ja": ja}


#: an item of every researcher question type before the scenario, one on each plan's page,
#: one at the end; every answer a keyboard can give with TAB and SPACE (the first option)
#: is a valid one, and the attention item's right option is the first
ITEMS = [
    {"key": "trust_ai", "page": "pre", "type": "likert", "points": 5,
     "text": _text("How much do you trust AI systems that decide on loans?",
                   "ローンを審査するAIシステムをどの程度信頼しますか。"),
     "options": {"en": ["Not at all", "A little", "Somewhat", "Much", "Completely"],
                 "ja": ["全く信頼しない", "少し", "ある程度", "かなり", "完全に"]}},
    {"key": "numbered", "page": "pre", "type": "likert", "points": 7,
     "text": _text("Rate your interest in cars from 1 (none) to 7 (very high).",
                   "車への関心を1（ない）から7（非常に高い）で評価してください。")},
    {"key": "tried", "page": "pre", "type": "single",
     "text": _text("Have you applied for a loan before?", "以前にローンを申し込んだことがありますか。"),
     "options": {"en": ["Yes", "No"], "ja": ["はい", "いいえ"]}},
    {"key": "channels", "page": "pre", "type": "multi",
     "text": _text("Where do you read about loans?", "ローンについてどこで情報を得ますか。"),
     "options": {"en": ["Bank", "Web", "Friends"], "ja": ["銀行", "ウェブ", "友人"]}},
    {"key": "comment", "page": "pre", "type": "text", "required": False,
     "text": _text("Anything you would like to add?", "ほかに何かあればお書きください。")},
    {"key": "years", "page": "pre", "type": "number", "min": 0, "max": 60,
     "text": _text("How many years have you held a driving licence?",
                   "運転免許を何年持っていますか。")},
    {"key": "risk", "page": "pre", "type": "slider", "min": 0, "max": 10, "step": 1,
     "text": _text("How much risk do you take with money (0 to 10)?",
                   "お金に関してどの程度リスクをとりますか（0〜10）。")},
    {"key": "agree", "page": "pre", "type": "matrix", "required": False,
     "text": _text("How far do you agree with each statement?", "次の各文にどの程度同意しますか。"),
     "options": {"en": ["Disagree", "Neither", "Agree"], "ja": ["同意しない", "どちらでもない", "同意する"]},
     "rows": {"en": ["AI decides loans fairly", "I would follow its advice"],
              "ja": ["AIは公平にローンを審査する", "AIの助言に従う"]},
     "row_keys": ["fair", "follow"]},
    {"key": "wish", "page": "pre", "type": "ranking", "required": False,
     "text": _text("Put what matters most in a loan first", "ローンで最も大切なものから順に並べてください"),
     "options": {"en": ["A low rate", "A quick decision"], "ja": ["低い金利", "早い審査"]},
     "option_keys": ["rate", "speed"]},
    {"key": "check", "page": "pre", "type": "attention", "answer": 1,
     "text": _text("To show that you read this, choose the first option.",
                   "この文を読んだことを示すため、最初の選択肢を選んでください。"),
     "options": {"en": ["First", "Second", "Third"], "ja": ["一つ目", "二つ目", "三つ目"]}},
    {"key": "trust", "page": "evaluation", "type": "likert", "points": 5,
     "text": _text("How much do you trust this plan?", "このプランをどの程度信頼しますか。"),
     "options": {"en": ["Not at all", "Little", "Somewhat", "Much", "Fully"],
                 "ja": ["全く", "少し", "ある程度", "かなり", "完全に"]}},
    {"key": "fair", "page": "post", "type": "single",
     "text": _text("Was the AI system fair to you?", "AIシステムはあなたに公平でしたか。"),
     "options": {"en": ["Yes", "No"], "ja": ["はい", "いいえ"]}},
]  # fmt: skip

#: the pages shown by state alone: (page name, state, extra fields); delayed ones on a copy
#: of the study that releases its plans later
STATE_PAGES = [
    ("waiting", "waiting", {"generation": "queued"}),
    ("end: screened_out", "screened_out", {}),
    ("end: no_recourse", "no_recourse", {}),
    ("end: quota_full", "quota_full", {}),
    ("end: failed_attention", "failed_attention", {}),
    ("end: withdrawn", "withdrawn", {}),
    ("end: declined", "declined", {}),
    ("end: expired", "expired", {}),
    ("end: approved", "approved", {}),
]
DELAYED_PAGES = [("under_review", {"released_at": None}), ("report", {"released_at": "now"})]

SETUP = """
import json
from django.utils import timezone
from studyapp.definition import outcomes
from studyapp.models import Participant, Study
from studyapp.studies.updates import study_update

items = json.loads('''{items}''')
now = timezone.now()
for language, slug in json.loads('''{studies}''').items():
    s = Study.objects.get(slug=slug)
    s.state = "draft"; s.save()
    study_update(study=s, changes={{"questions": items}})
    s.state = "live"; s.save()
    for name, state, extra in json.loads('''{states}'''):
        p = Participant.objects.create(study=s, state=state, generation_queued_at=now,
                                       completion_code=outcomes.end_code(s, state)
                                       if outcomes.is_end(state) else "", **extra)
        print("PAGE", language, name, p.code, sep="|")
    d = Study.objects.get(pk=s.pk)
    d.pk = None; d.id = None; d._state.adding = True; d.slug = slug + "-delayed"; d.save()
    study_update(study=d, changes=dict(release_mode="delayed", release_after_days=14,
                                       reminder_every_days=3, return_deadline_days=7))
    for name, extra in json.loads('''{delayed}'''):
        released = now if extra["released_at"] else None
        p = Participant.objects.create(study=d, state="evaluating", submitted_at=now,
                                       released_at=released, release_due_at=now)
        print("PAGE", language, name, p.code, sep="|")
"""


@dataclass
class Site:
    url: str
    env: dict[str, str]
    #: (language, page name) -> participant code of the pages shown by state
    codes: dict[tuple[str, str], str]


def prepare_site(var_dir: Path) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """Migrate, create both studies with their items and the participants by state."""
    env = {**embedded_env(var_dir), "STUDYAPP_TASKS_EAGER": "1"}
    migrate(env)
    for language, slug in STUDIES.items():
        manage(env, "create_demo_study", "--no-admin", "--pool-size", "300",
               "--language", language, "--slug", slug)  # fmt: skip
    script = SETUP.format(
        items=json.dumps(ITEMS),
        studies=json.dumps(STUDIES),
        states=json.dumps(STATE_PAGES),
        delayed=json.dumps(DELAYED_PAGES),
    )
    codes = {}
    for line in manage(env, "shell", "-c", script).splitlines():
        if line.startswith("PAGE|"):
            _, language, name, code = line.split("|")
            codes[(language, name)] = code
    return env, codes


@contextmanager
def site(var_dir: Path) -> Iterator[Site]:
    env, codes = prepare_site(var_dir)
    with web(env, var_dir) as url:
        yield Site(url, env, codes)
