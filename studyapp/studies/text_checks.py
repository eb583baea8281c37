"""Warnings about page texts that may not agree with the study's design.

A new study inherits the reference study's texts, which promise its design: "five action
plans" "with minimal change costs" are true of `sparsest:1,proximate:1,random:3` and false of
a three-plan study with random and generated plans. Such a text is not an error (a researcher
may mean it), so saving and going live warn rather than refuse: where a text that speaks of
the plans is still the reference default while the design differs, and where a text names a
number of plans that no design of the study shows. `{n_plans}` keeps a text true whatever
the design (`studyapp.text_placeholders`).
"""

from __future__ import annotations

import re
from typing import Any

from recourse_engine import DesignError, carloan_schema, parse_design
from studyapp.definition.retention import retention_notes, retention_of
from studyapp.models import Study
from studyapp.studies import carloan
from studyapp.studies.services import schema_design

#: the reference texts that describe the plans (their number, how they were chosen)
DESIGN_TEXTS = ("consent", "waiting", "plan_intro")
#: the reference study's texts per language
REFERENCE_TEXTS = {"en": carloan.TEXTS, "ja": carloan.TEXTS_JA}
_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10,
    "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
}  # fmt: skip
_NUMBER = r"(\d+|[０-９]+|" + "|".join(_WORDS) + r")"
#: "five action plans", "3 plans", "5つの行動プラン", "３個のプラン"
PLAN_COUNTS = (
    re.compile(_NUMBER + r"\s+(?:[A-Za-z-]+\s+){0,2}?plans\b", re.IGNORECASE),
    re.compile(_NUMBER + r"\s*(?:つ|個|件)の(?:行動)?(?:プラン|計画)"),
)


def _count(word: str) -> int:
    word = word.lower().translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    return int(word) if word.isdigit() else _WORDS[word]


def named_plan_counts(text: str) -> list[int]:
    """The numbers of plans a text names ("five action plans" -> [5])."""
    return [_count(m.group(1)) for pattern in PLAN_COUNTS for m in pattern.finditer(text)]


def _designs(study: Study) -> list[str]:
    texts = [study.design, *(c.design for c in study.conditions.all() if c.design.strip())]
    out = []
    for text in texts:
        try:
            out.append(str(parse_design(text)))
        except DesignError:
            continue
    return out


def reference_design() -> str:
    return str(parse_design(schema_design(carloan_schema())))


def text_warnings(study: Study) -> list[str]:
    """One line per text that may contradict the design, naming it by its path."""
    designs = _designs(study)
    totals = sorted({parse_design(d).total for d in designs})
    shown = " or ".join(str(n) for n in totals) or "?"
    differs = any(d != reference_design() for d in designs)
    texts: dict[str, Any] = study.texts or {}
    warnings = []
    for lang, by_key in texts.items():
        if not isinstance(by_key, dict):
            continue
        reference = REFERENCE_TEXTS.get(lang, {})
        for key, text in by_key.items():
            text = str(text)
            if differs and key in DESIGN_TEXTS and text.strip() == reference.get(key, "").strip():
                warnings.append(
                    f"texts.{lang}.{key}: still the reference study's text, written for its "
                    f"design ({reference_design()}); this study shows {', '.join(designs)}"
                )
            wrong = [n for n in named_plan_counts(text) if n not in totals]
            if wrong:
                warnings.append(
                    f"texts.{lang}.{key}: names {wrong[0]} plans, but the design shows {shown} "
                    "(write {n_plans} to have the number filled in)"
                )
    return warnings


def study_warnings(study: Study) -> list[str]:
    """What saving a draft and going live warn of: texts that may contradict the design,
    retention rules whose combination may surprise, and (a draft) methods named before the
    decision model that can serve them is stored."""
    from studyapp.generation.method_fitting import generating_methods
    from studyapp.studies.model_training import missing_model_problem

    warnings = text_warnings(study)
    warnings += retention_notes(retention_of(study.retention))  # what the rules mean together
    if study.state == Study.State.DRAFT:
        missing = missing_model_problem(study, generating_methods(study))
        if missing:
            warnings.append(f"before going live: {missing}")
    return warnings
