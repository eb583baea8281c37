"""Question types answered in parts, one export column per part: ``matrix`` (statements, the
rows, each rated on one shared scale, the options) and ``ranking`` (every option given a rank
1..n, each rank once). Their entries in `question_types.QUESTION_TYPES` are made of these.

An answer is a mapping part key -> value (a statement's scale code, an option's rank): the
form posts one input per part (`part_name`), the page stores the mapping, the export writes
``q_<key>_<part>`` per part. Both widgets work without JavaScript and without a table: a
radio group per statement (fieldset, legend, the scale's ends described) that stacks on a
phone, a rank select per option; the ranking's move buttons are an enhancement
(``studyapp/ranking.js``), never the only way to answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django import forms
from django.templatetags.static import static
from django.utils.translation import gettext as _

from analysis import contract as c
from studyapp.definition.question_errors import AnswerError, problem

if TYPE_CHECKING:
    import numpy as np

    from studyapp.definition.questions import Question


def part_name(name: str, part: str) -> str:
    """The form name of one part's input (`name`: the item's field name)."""
    return f"{name}.{part}"


def posted(name: str, answer: Any) -> dict[str, Any]:
    """A (simulated) answer as the form posts it: a part's value under its own name."""
    if isinstance(answer, Mapping):
        return {part_name(name, key): value for key, value in answer.items()}
    return {name: answer}


def matrix_parts(q: Question, language: str) -> list[tuple[str, str]]:
    """(key, statement) per row."""
    return list(zip(q.row_keys, q.row_labels(language), strict=False))


def ranking_parts(q: Question, language: str) -> list[tuple[str, str]]:
    """(key, option) per option."""
    return list(zip(q.option_keys, q.option_labels(language), strict=False))


# --- definition checks ---------------------------------------------------------------------------
def _part_keys(keys: list[str], n: int, what: str, at: str) -> None:
    """One key per part (its export column), each once."""
    if len(keys) != n:
        raise problem(f"{len(keys)} keys for {n} {what}s (one key per {what}: its column)", at)
    seen: set[str] = set()
    for i, key in enumerate(keys):
        if key in seen:
            raise problem(f"duplicate key {key!r}", f"{at}[{i}]")
        seen.add(key)


def matrix_check(q: Question) -> None:
    if not q.rows.en:
        raise problem("a matrix item needs at least one statement (its rows)", ".rows.en")
    _part_keys(q.row_keys, len(q.rows.en), "statement", ".row_keys")


def ranking_check(q: Question) -> None:
    _part_keys(q.option_keys, len(q.options.en), "option", ".option_keys")


# --- answer checks --------------------------------------------------------------------------------
def _given(q: Question, value: Any, parts: list[tuple[str, str]]) -> dict[str, Any]:
    """The answered parts of a mapping over the item's parts (blanks left out)."""
    keys = [key for key, _label in parts]
    if not isinstance(value, Mapping) or set(value) - set(keys):
        raise AnswerError(_("Please choose one of the listed options."))
    return {key: value[key] for key in keys if value.get(key) not in (None, "")}


def _whole(value: Any, allowed: range) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number in allowed and str(number) == str(value).strip() else None


def matrix_answer(q: Question, value: Any) -> dict[str, int]:
    """A scale code per answered statement (`unanswered` says which are left)."""
    out = {}
    for key, code in _given(q, value, matrix_parts(q, "en")).items():
        checked = _whole(code, range(1, len(q.codes()) + 1))
        if checked is None:
            raise AnswerError(_("Please choose one of the listed options."))
        out[key] = checked
    return out


def ranking_answer(q: Question, value: Any) -> dict[str, int]:
    """A rank per option: every option ranked, each rank 1..n once."""
    n = len(q.codes())
    given = _given(q, value, ranking_parts(q, "en"))
    ranks = {key: _whole(rank, range(1, n + 1)) for key, rank in given.items()}
    if None in ranks.values():
        raise AnswerError(_("Please choose a rank from 1 to %(n)s.") % {"n": n})
    if len(ranks) < n:
        raise AnswerError(_("Please give every option a rank."))
    twice = sorted(r for r, times in Counter(ranks.values()).items() if times > 1)
    if twice:
        raise AnswerError(
            _("Please give each rank only once (rank %(rank)s is given more than once).")
            % {"rank": twice[0]}
        )
    return {key: int(rank) for key, rank in ranks.items() if rank is not None}


# --- codebook entries (one per part) --------------------------------------------------------------
def matrix_codebook(q: Question) -> tuple[str, str]:
    return "integer", c.labels(q.option_labels("en"))


def ranking_codebook(q: Question) -> tuple[str, str]:
    return "integer", f"1..{len(q.codes())} (1: ranked first; each rank given once)"


# --- simulated answers ----------------------------------------------------------------------------
def matrix_simulated(q: Question, rng: np.random.Generator, error_rate: float) -> dict[str, str]:
    return {key: str(int(rng.choice(q.codes()))) for key in q.row_keys}


def ranking_simulated(q: Question, rng: np.random.Generator, error_rate: float) -> dict[str, str]:
    ranks = rng.permutation(len(q.option_keys)) + 1
    return {key: str(int(r)) for key, r in zip(q.option_keys, ranks, strict=True)}


# --- widgets --------------------------------------------------------------------------------------
class PartsWidget(forms.Widget):
    """One input per part, named `part_name`; its value a mapping part key -> posted value.
    Rendered by the participant pages' Jinja2 renderer (`participation.field_renderer`)."""

    use_fieldset = True

    def __init__(self, parts: list[tuple[str, str]], choices: list[tuple[int, str]]) -> None:
        super().__init__()
        self.parts = parts
        self.choices = choices

    def value_from_datadict(self, data: Any, files: Any, name: str) -> dict[str, Any]:
        got = {key: data.get(part_name(name, key)) for key, _label in self.parts}
        return {key: value for key, value in got.items() if value not in (None, "")}

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return not any(part_name(name, key) in data for key, _label in self.parts)

    def format_value(self, value: Any) -> dict[str, str]:
        return {k: str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}

    def id_for_label(self, id_: str) -> str:
        return ""  # a group: its legend labels no single input

    def get_context(self, name: str, value: Any, attrs: Any) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        widget = context["widget"]
        base = widget["attrs"].get("id") or f"id_{name}"
        widget["id"] = base
        invalid = bool(widget["attrs"].get("aria-invalid"))
        widget["parts"] = [
            {"label": label, "name": part_name(name, key), "id": f"{base}_{key}",
             "value": widget["value"].get(key, ""), "invalid": invalid}
            for key, label in self.parts
        ]  # fmt: skip
        widget["choices"] = [(str(code), label) for code, label in self.choices]
        return context


class MatrixWidget(PartsWidget):
    """A radio group per statement, described by the scale's two ends (the words the Likert
    scale's group is described with, `participation.field_renderer.scale_anchors`)."""

    template_name = "studyapp/matrix_widget.html"

    def get_context(self, name: str, value: Any, attrs: Any) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        widget = context["widget"]
        for part in widget["parts"]:
            part["invalid"] = part["invalid"] and not part["value"]  # the rows left out
        (_low, low), (_high, high) = self.choices[0], self.choices[-1]
        widget["anchors"] = _("A scale from “%(low)s” to “%(high)s”") % {"low": low, "high": high}
        return context


class RankingWidget(PartsWidget):
    """A rank select per option; ``ranking.js`` adds move buttons."""

    template_name = "studyapp/ranking_widget.html"

    def get_context(self, name: str, value: Any, attrs: Any) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        widget = context["widget"]
        widget["script"] = static("studyapp/ranking.js")
        how = _("Give each option a rank from 1 (first) to %(n)s, each rank once.")
        widget["how"] = how % {"n": len(self.parts)}
        for part in widget["parts"]:
            option = {"option": part["label"]}
            part["up"] = _("Move %(option)s up") % option
            part["down"] = _("Move %(option)s down") % option
            part["moved"] = _("%(option)s: now rank {rank}") % option
        return context


def matrix_widget(q: Question, language: str) -> MatrixWidget:
    labels = q.option_labels(language)
    return MatrixWidget(matrix_parts(q, language), list(enumerate(labels, start=1)))


def ranking_widget(q: Question, language: str) -> RankingWidget:
    ranks = [(r, str(r)) for r in q.codes()]
    return RankingWidget(ranking_parts(q, language), ranks)
