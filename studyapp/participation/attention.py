"""Attention checks: instructed-response items shown as an extra question on a page.

`study.attention_checks` is a list of
``{"key", "prompt", "options": [...], "answer": <1-based code>, "page": "profile" |
"evaluation-N"}``. Answers go to `participant.attention` (key -> code) and each wrong
one adds to `attention_failures`. Once failures exceed `study.attention_max_failures`,
the study's rule applies: END stops the participant with the failed-attention outcome
(their answers so far are kept), FLAG lets them go on and flags them for the export.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from studyapp.models import Participant, Study

log = logging.getLogger(__name__)

_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_PAGE = re.compile(r"^(profile|evaluation-[1-9][0-9]{0,2})$")
FIELDS = ("key", "prompt", "options", "answer", "page")
#: form field name prefix, apart from any schema item key
FIELD_PREFIX = "attention__"


def validate_checks(obj: Any) -> list[dict[str, Any]]:
    """The checks as a clean list; ValueError naming the item and the problem otherwise."""
    if obj in (None, ""):
        return []
    if not isinstance(obj, list):
        raise ValueError("attention checks must be a list of items")
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, item in enumerate(obj, start=1):
        name = f"attention check #{i}"
        if not isinstance(item, Mapping):
            raise ValueError(f"{name}: must be an object with {', '.join(FIELDS)}")
        key = item.get("key")
        if not isinstance(key, str) or not _KEY.match(key):
            raise ValueError(
                f"{name}: 'key' must be 1-40 lower-case letters, digits or '_', "
                "starting with a letter"
            )
        name = f"attention check {key!r}"
        if key in seen:
            raise ValueError(f"{name}: duplicate key")
        seen.add(key)
        unknown = sorted(set(item) - set(FIELDS))
        if unknown:
            raise ValueError(f"{name}: unknown field(s) {', '.join(unknown)}")
        prompt = item.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(f"{name}: 'prompt' must be a non-empty text")
        options = item.get("options")
        if (
            not isinstance(options, list)
            or len(options) < 2
            or not all(isinstance(o, str) and o.strip() for o in options)
        ):
            raise ValueError(f"{name}: 'options' must be a list of at least two non-empty texts")
        answer = item.get("answer")
        if isinstance(answer, bool) or not isinstance(answer, int):
            raise ValueError(f"{name}: 'answer' must be the 1-based number of the right option")
        if not 1 <= answer <= len(options):
            raise ValueError(f"{name}: 'answer' {answer} is not an option (1..{len(options)})")
        page = item.get("page")
        if not isinstance(page, str) or not _PAGE.match(page):
            raise ValueError(f"{name}: 'page' must be 'profile' or 'evaluation-N' (N = 1, 2, ...)")
        out.append(
            {
                "key": key,
                "prompt": prompt.strip(),
                "options": [o.strip() for o in options],
                "answer": answer,
                "page": page,
            }
        )
    return out


def checks_for_page(study: Study, page: str) -> list[dict[str, Any]]:
    """The study's checks shown on a page. A list the console should have refused is
    logged and shows no check rather than breaking the participant's page."""
    try:
        checks = validate_checks(study.attention_checks)
    except ValueError as exc:
        log.error("study %s: attention checks not used: %s", study.slug, exc)
        return []
    return [c for c in checks if c["page"] == page]


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
