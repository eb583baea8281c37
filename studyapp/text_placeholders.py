"""Placeholders in page texts, filled from the participant's design: a text that says
"{n_plans} action plans" stays true when the design changes, where "five action plans" does
not.

One table (`PLACEHOLDERS`) says which names exist, what they mean and on which pages; the
settings model refuses a text naming any other (`unknown_placeholders`: "{n_plan}" is a typo,
not text to show), and the participant pages fill them (`fill`). Plain Python beside the
models (no Django), so that the models, the settings and the pages all read the same table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from recourse_engine import DesignError, parse_design

#: a placeholder as texts write it: a name in braces, or an earlier answer's name
#: ("{q.age}", "{profile.position}"); other braces are left alone
PATTERN = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)\}")
#: where an answer placeholder's answer comes from: the study's own items, the screening,
#: the profile (`definition.logic` checks them with the study's questions and fills them)
ANSWER_SOURCES = ("q", "screening", "profile")


@dataclass(frozen=True)
class Placeholder:
    name: str
    meaning: str
    #: the page texts that may use it (empty: every text)
    texts: tuple[str, ...] = ()


PLACEHOLDERS: dict[str, Placeholder] = {
    p.name: p
    for p in (
        Placeholder("n_plans", "the number of action plans the participant's design shows"),
        Placeholder("position", "the plan's number (1, 2, ...)", ("plan_intro",)),
        Placeholder("total", "the number of plans the participant rates", ("plan_intro",)),
    )
}


def allowed_in(key: str) -> list[str]:
    """The placeholder names the text `key` may use."""
    return [p.name for p in PLACEHOLDERS.values() if not p.texts or key in p.texts]


def answer_names(text: str) -> list[str]:
    """The earlier answers a text names ("q.age", ...), each once, in order."""
    found = PATTERN.findall(text)
    return list(dict.fromkeys(n for n in found if n.partition(".")[0] in ANSWER_SOURCES))


def unknown_placeholders(key: str, text: str) -> list[str]:
    """The `{names}` in the text `key` that are no placeholder of that text, in order (an
    answer's name is checked with the study's questions: `definition.logic`)."""
    allowed = {*allowed_in(key), *answer_names(text)}
    return list(dict.fromkeys(n for n in PATTERN.findall(text) if n not in allowed))


#: the placeholders filled from the design (the others are filled by their page)
DESIGN_NAMES = ("n_plans",)


def names_design(texts: Mapping[str, object]) -> bool:
    """Whether any text uses a placeholder filled from the design (else nothing to fill)."""
    return any(f"{{{n}}}" in str(t) for t in texts.values() for n in DESIGN_NAMES)


def design_values(design: str) -> dict[str, str]:
    """The placeholder values a design gives ({} for a design that does not parse)."""
    try:
        return {"n_plans": str(parse_design(design).total)}
    except DesignError:
        return {}


def fill(text: str, values: Mapping[str, str]) -> str:
    """`text` with each placeholder in `values` filled; any other brace text left as is."""
    return PATTERN.sub(lambda m: str(values.get(m.group(1), m.group(0))), text)
