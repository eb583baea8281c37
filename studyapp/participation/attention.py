"""Attention checks: instructed-response items shown as an extra question on a page.

`study.attention_checks` is a list of
``{"key", "prompt", "options": [...], "answer": <1-based code>, "page": "profile" |
"evaluation-N"}``. Answers go to `participant.attention` (key -> code) and each wrong
one adds to `attention_failures`. Once failures exceed `study.attention_max_failures`,
the study's rule applies: END stops the participant with the failed-attention outcome
(their answers so far are kept), FLAG lets them go on and flags them for the export.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from typing import Any

from studyapp.definition.errors import ConfigError
from studyapp.definition.study_config import attention_checks_read
from studyapp.models import Participant, Study

log = logging.getLogger(__name__)

#: form field name prefix, apart from any schema item key
FIELD_PREFIX = "attention__"


def checks_for_page(study: Study, page: str, language: str = "") -> list[dict[str, Any]]:
    """The study's checks shown on a page, worded in `language` where the check has a
    translation into it (else as written). A list the console should have refused is
    logged and shows no check rather than breaking the participant's page."""
    try:
        checks = _checks_read(json.dumps(study.attention_checks or [], sort_keys=True))
    except ConfigError as exc:
        log.error("study %s: attention checks not used: %s", study.slug, exc)
        return []
    return [
        {**c, **(c.get("translations") or {}).get(language, {})} for c in checks if c["page"] == page
    ]


@functools.lru_cache(maxsize=256)
def _checks_read(stored: str) -> tuple[dict[str, Any], ...]:
    """The checks validated once per stored text (every page asks; the text rarely changes)."""
    return tuple(attention_checks_read(json.loads(stored)))


def record(p: Participant, checks: list[dict[str, Any]], answers: Mapping[str, int]) -> bool:
    """Store the answers on the (locked) participant; True when the END rule applies now.

    Under the FLAG rule the participant is flagged instead and goes on.
    """
    if not checks:
        return False
    stored = dict(p.attention or {})
    for check in checks:
        answer = int(answers[check["key"]])
        stored[check["key"]] = answer
        if answer != check["answer"]:
            p.attention_failures += 1
    p.attention = stored
    study = p.study
    if p.attention_failures <= study.attention_max_failures:
        return False
    if study.attention_rule == Study.AttentionRule.END:
        return True
    others = [r for r in p.flag_reason.split("; ") if r and "attention check" not in r]
    reasons = [*others, f"failed {p.attention_failures} attention check(s)"]
    p.flag_reason = "; ".join(reasons)[:300]
    p.flagged = True
    return False
