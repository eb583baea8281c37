"""The language a participant takes a study in, chosen once on the welcome page.

In order: the link's ``?lang=xx`` when it is one of the study's languages; else the first of
the browser's ``Accept-Language`` entries (by weight, as Django reads the header) whose
language is one of them (``ja-JP`` counts as ``ja``); else the study's default. The welcome
page offers the study's other languages as links that keep the panel's parameters, and its
start form carries the choice, which the participant row keeps: every page, e-mail and end
page of theirs is in it, whatever their browser says later.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from django.utils import translation
from django.utils.translation.trans_real import parse_accept_lang_header

from studyapp.models import Study

#: the link (and welcome form) parameter that names a language
PARAM = "lang"


def study_languages(study: Study) -> list[str]:
    """The study's languages, the default first. A row whose list lacks its default (one
    written before the list existed, or its default changed alone) runs in the default."""
    given = list(study.languages or [])
    if study.language not in given:
        return [study.language]
    return [study.language, *(code for code in given if code != study.language)]


def _primary(code: str) -> str:
    return code.lower().replace("_", "-").split("-")[0]


def browser_language(header: str, offered: Iterable[str]) -> str | None:
    """The first language of an ``Accept-Language`` header that is offered, or None."""
    offered = list(offered)
    for code, _weight in parse_accept_lang_header(header or ""):
        if code == "*":
            continue
        for wanted in (code.lower(), _primary(code)):
            if wanted in offered:
                return wanted
    return None


def chosen_language(study: Study, *, asked: str = "", accept: str = "") -> str:
    """The language of a participant arriving with `?lang=asked` and the header `accept`
    (an unknown or foreign `asked` is passed over, not refused: the link still works)."""
    offered = study_languages(study)
    if asked in offered:
        return asked
    return browser_language(accept, offered) or offered[0]


@dataclass(frozen=True)
class LanguageLink:
    code: str
    name: str
    url: str
    current: bool


def language_links(
    study: Study, current: str, params: Mapping[str, str], path: str
) -> list[LanguageLink]:
    """One link per study language for the welcome page's switch (none for a study with
    one language), each keeping the link's other parameters; names in their own language."""
    offered = study_languages(study)
    if len(offered) < 2:
        return []
    kept = [(k, v) for k, v in params.items() if k != PARAM]
    return [
        LanguageLink(
            code=code,
            name=translation.get_language_info(code)["name_local"],
            url=f"{path}?{urlencode([*kept, (PARAM, code)])}",
            current=code == current,
        )
        for code in offered
    ]
