"""Survey logic as data on the study's own questions: when a question is shown (`show_if`),
when an answer ends the study with an outcome of the outcome table (`end_if`, `ends_with`:
a screener), and earlier answers piped into later texts (``{q.age}``, ``{profile.position}``,
``{screening.income}``: the braces of the page texts' placeholders, `text_placeholders`).

Conditions and texts name an answer the one way: ``q.<key>`` (the study's own items),
``screening.<key>`` (the schema's screening questions), ``profile.<item>`` (the profile).
`logic_problem` checks them with the study's questions (an unknown answer, a comparison the
answer's type cannot make, an answer given only later, a cycle), each problem path-named;
the participant pages evaluate them on the server (`is_met`, `ending`) with the answers the
participant has given. An answer not given (an optional item skipped, a hidden question,
a page not reached) meets no condition and is piped as nothing.

A question is shown by answers from earlier pages only (the page is built on the server
before it is answered); an end rule may also use its own page's answers, as it is applied
when the page is submitted. An item of the plan pages is answered once per plan, so no
condition or text names it, and it ends nothing.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from studyapp import text_placeholders
from studyapp.definition import outcomes

if TYPE_CHECKING:
    from studyapp.definition.questions import Question

#: how a condition compares
OPS = ("equals", "not_equals", "in", "<", "<=", ">", ">=")
#: the outcomes an answer may end the study with (states of the outcome table)
ENDS_WITH = ("screened_out", "completed", "quota_full", "failed_attention")
assert set(ENDS_WITH) <= set(outcomes.BY_STATE)
#: where an answer is given, in the order of the flow (screening, the questionnaire before
#: the scenario, the profile, the plan pages, the questionnaire after them)
RANK = {"screening": 0, "pre": 1, "profile": 2, "evaluation": 3, "post": 4}
#: the page texts that may pipe answers -> the last page whose answers they may use
#: (texts not listed are read before any answer, or on endings reached from anywhere)
TEXT_AFTER = {
    "screenout": "screening", "quota_full": "screening",
    "scenario": "pre", "profile_intro": "pre",
    "rejection": "profile", "waiting": "profile", "plan_intro": "profile",
    "no_recourse": "profile", "under_review": "profile", "released": "profile",
    "expired": "profile", "approved": "profile", "hypothetical": "profile",
    "completion": "post",
}  # fmt: skip
#: how a question type's answer is compared: number (every operator), code (an option:
#: equals, not_equals, in), codes (options chosen: equals/not_equals one of them, in: any of
#: them), text (equals, not_equals, in; case and surrounding spaces ignored); a type not
#: listed (a matrix, a ranking) is named by no condition
COMPARED_AS = {
    "likert": "number", "number": "number", "slider": "number", "integer": "number",
    "single": "code", "attention": "code", "multi": "codes", "text": "text",
}  # fmt: skip
_OPS_OF = {
    "number": OPS,
    "code": ("equals", "not_equals", "in"),
    "codes": ("equals", "not_equals", "in"),
    "text": ("equals", "not_equals", "in"),
}
_NAMED = {"q": "question", "screening": "screening question", "profile": "profile item"}
_SCREENING_KINDS = {"integer": "number", "choice": "code", "multi": "codes"}
ANSWER_NAME = rf"^({'|'.join(text_placeholders.ANSWER_SOURCES)})\.[A-Za-z_][A-Za-z0-9_]{{0,59}}$"

Scalar = StrictInt | StrictFloat | StrictStr


def _problem(message: str, at: str = "") -> PydanticCustomError:
    return PydanticCustomError("logic", "{problem}", {"problem": message, "at": at})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Clause(_Strict):
    """One comparison of an earlier answer."""

    model_config = ConfigDict(title="Comparison")

    question: Annotated[str, Field(pattern=ANSWER_NAME)] = Field(
        title="Answer",
        description="An earlier answer: q.<key>, screening.<key> or profile.<item>.",
    )
    op: Literal[OPS] = Field("equals", title="Is")  # type: ignore[valid-type]
    value: Scalar | None = Field(
        None, description="What the answer is compared with (an option's number for a choice)."
    )
    values: Annotated[list[Scalar], Field(max_length=50)] = Field(
        default_factory=list, description="in: the answer is one of these."
    )

    @field_validator("value", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _value_for_op(self) -> Clause:
        if self.op == "in":
            if not self.values:
                raise _problem("'in' needs values: the list the answer may be one of", ".values")
            if self.value is not None:
                raise _problem("'in' takes values (a list), not a value", ".value")
        else:
            if self.value is None:
                raise _problem(f"{self.op!r} needs a value to compare with", ".value")
            if self.values:
                raise _problem(f"values are for 'in'; {self.op!r} takes one value", ".values")
        return self


class Condition(_Strict):
    """Every clause of `all` and, when `any` has clauses, at least one of those (none at all:
    no condition)."""

    model_config = ConfigDict(title="Condition")

    all: Annotated[list[Clause], Field(max_length=20)] = Field(default_factory=list, title="All of")
    any: Annotated[list[Clause], Field(max_length=20)] = Field(default_factory=list, title="Any of")

    def is_set(self) -> bool:
        return bool(self.all or self.any)

    def clauses(self) -> Iterator[tuple[str, Clause]]:
        """Each clause with its path below the condition ("all[0]")."""
        for group in ("all", "any"):
            for i, clause in enumerate(getattr(self, group)):
                yield f"{group}[{i}]", clause


EndsWith = Literal[ENDS_WITH]  # type: ignore[valid-type]


# --- the answers a study's conditions and texts can name -------------------------------------
@dataclass(frozen=True)
class Source:
    """An answer conditions and texts may name, as the flow gives it."""

    name: str
    #: how it is compared (`COMPARED_AS`); "" when no condition can use it
    kind: str
    #: its page in the flow (`RANK`)
    page: str
    #: "a single question", for messages
    what: str
    #: option labels (code 1 first) in the language asked for
    labels: tuple[str, ...] = ()


def sources(
    questions: Sequence[Question],
    *,
    screening: Sequence[Mapping[str, Any]] | None = None,
    items: Sequence[Any] | None = None,
    language: str = "en",
) -> dict[str, Source]:
    """Every answer the study's conditions and texts can name: its items, the schema's
    screening questions (`screening`) and profile items (`items`, `FeatureSchema.items`),
    with option labels in `language`."""
    out: dict[str, Source] = {}
    for q in screening or []:
        kind = _SCREENING_KINDS.get(str(q.get("type")), "")
        labels = tuple(str(o) for o in q.get("options") or [])
        out[f"screening.{q['key']}"] = Source(
            f"screening.{q['key']}", kind, "screening", f"a screening {q.get('type')} question",
            labels,
        )  # fmt: skip
    for item in items or []:
        labels = () if item.is_numeric else tuple(item.options)
        out[f"profile.{item.key}"] = Source(
            f"profile.{item.key}", "number", "profile", "a profile item", labels
        )
    for q in questions:
        kind = COMPARED_AS.get(q.type, "")
        labels = tuple(q.option_labels(language)) if kind else ()
        out[f"q.{q.key}"] = Source(f"q.{q.key}", kind, q.page, f"a {q.type} question", labels)
    return out


# --- checks ----------------------------------------------------------------------------------
def logic_problem(
    questions: Sequence[Question],
    texts: Mapping[str, Mapping[str, str]] | None = None,
    *,
    screening: Sequence[Mapping[str, Any]] | None = None,
    items: Sequence[Any] | None = None,
) -> tuple[str, str] | None:
    """(path, problem) for the first condition or piped answer the study cannot use (None:
    all can). `texts`: the page texts by language; `screening` and `items`: the schema's
    screening questions and profile items (None: not known here, names of theirs pass)."""
    table = sources(questions, screening=screening, items=items)
    known = {"q", *(["screening"] if screening is not None else []),
             *(["profile"] if items is not None else [])}  # fmt: skip
    found = _cycle(questions)
    if found is not None:
        return found
    for i, q in enumerate(questions):
        for rule in ("show_if", "end_if"):
            condition: Condition = getattr(q, rule)
            if rule == "end_if" and condition.is_set() and q.page == "evaluation":
                return (
                    f"questions[{i}].end_if",
                    "an item of the plan pages cannot end the study (it is answered once per "
                    "plan); ask the screener on the pre or post page",
                )
            for where, clause in condition.clauses():
                at = f"questions[{i}].{rule}.{where}"
                problem = _clause_problem(q, rule, clause, table, known)
                if problem is not None:
                    return at + problem[0], problem[1]
        for lang, text in q.text.model_dump().items():
            problem = _pipe_problem(str(text), q.page, table, known, own=q.key)
            if problem is not None:
                return f"questions[{i}].text.{lang}", problem
    for lang, by_key in (texts or {}).items():
        for key, text in by_key.items():
            after = TEXT_AFTER.get(key)
            problem = _pipe_problem(str(text), after, table, known, own="", text_key=key)
            if problem is not None:
                return f"texts.{lang}.{key}", problem
    return None


def logic_checked(
    questions: Sequence[Question], texts: Mapping[str, Mapping[str, str]], context: Mapping
) -> None:
    """The settings model's check (`study_config.StudyConfig`): raises the first problem at
    its path; the schema's screening questions and profile items come from the validation
    context when the study is known."""
    screening, schema = context.get("screening"), context.get("schema")
    problem = logic_problem(
        questions,
        texts,
        screening=list(screening.values()) if screening is not None else None,
        items=schema.items if schema is not None else None,
    )
    if problem is not None:
        raise _problem(problem[1], problem[0])


def _cycle(questions: Sequence[Question]) -> tuple[str, str] | None:
    """A question shown (or ended) by its own answer, or by a chain of questions that leads
    back to it."""
    position = {q.key: i for i, q in enumerate(questions)}
    edges = {q.key: _refers_to(q, position) for q in questions}
    for q in questions:
        for key, rule in edges[q.key]:
            path = _way(key, q.key, edges, [q.key, key], set())
            if path is not None:
                chain = " -> ".join(f"q.{k}" for k in path)
                words = "refers to its own answer" if len(path) == 2 else f"is a cycle: {chain}"
                return f"questions[{position[q.key]}].{rule}", f"the condition {words}"
    return None


def _refers_to(q: Question, keys: Mapping[str, int]) -> list[tuple[str, str]]:
    """The study's items `q`'s conditions name (an end rule may name its own answer)."""
    out = []
    for rule in ("show_if", "end_if"):
        for _where, clause in getattr(q, rule).clauses():
            head, _, key = clause.question.partition(".")
            if head == "q" and key in keys and not (rule == "end_if" and key == q.key):
                out.append((key, rule))
    return out


def _way(
    at: str, goal: str, edges: Mapping[str, list[tuple[str, str]]], path: list[str], seen: set
) -> list[str] | None:
    """A path of references from `at` to `goal` (depth first), or None."""
    if at == goal:
        return path
    seen.add(at)
    for key, _rule in edges.get(at, []):
        if key not in seen:
            found = _way(key, goal, edges, [*path, key], seen)
            if found is not None:
                return found
    return None


def _clause_problem(
    q: Question, rule: str, clause: Clause, table: Mapping[str, Source], known: set[str]
) -> tuple[str, str] | None:
    """(path below the clause, problem) for a clause of `q`'s `rule`; its values are read as
    the answer's kind (a number written as text, as the console's editor sends it)."""
    name = clause.question
    source = table.get(name)
    if source is None:
        return _unknown(name, table, known)
    if source.page == "evaluation":
        return (
            ".question",
            f"{name} is answered once per plan (the plan pages): no condition can use it",
        )
    limit, ours = RANK[q.page], RANK[source.page]
    own_end = rule == "end_if" and name == f"q.{q.key}"  # applied when its page is submitted
    if not own_end and (ours >= limit if rule == "show_if" else ours > limit):
        where = (
            f"on the same page as this question ({q.page})"
            if ours == limit
            else f"later (on the {source.page} page) than this question (on the {q.page} page)"
        )
        may = (
            "a question can be shown only by answers from earlier pages"
            if rule == "show_if"
            else "an end rule can use only answers from its own or earlier pages"
        )
        return ".question", f"{name} is answered {where}: {may}"
    if not source.kind:
        return ".question", f"{name} is {source.what}, which no condition can use"
    if clause.op not in _OPS_OF[source.kind]:
        allowed = ", ".join(_OPS_OF[source.kind])
        return ".op", f"{name} is {source.what}, which {clause.op!r} cannot compare (use {allowed})"
    if clause.op == "in":
        read = [_read_value(source, v) for v in clause.values]
        bad = next((i for i, (_, p) in enumerate(read) if p), None)
        if bad is not None:
            return f".values[{bad}]", str(read[bad][1])
        clause.values = [v for v, _ in read]
        return None
    value, problem = _read_value(source, clause.value)
    if problem:
        return ".value", problem
    clause.value = value
    return None


def _unknown(name: str, table: Mapping[str, Source], known: set[str]) -> tuple[str, str] | None:
    head = name.partition(".")[0]
    if head not in known:
        return None  # the schema's answers are not known here (checked with the study)
    names = ", ".join(n for n in table if n.startswith(f"{head}.")) or "none"
    return ".question", f"unknown {_NAMED[head]} {name} (this study has: {names})"


def _read_value(source: Source, value: Any) -> tuple[Any, str]:
    """(the value as the answer's kind, "") or (value, the problem)."""
    if source.kind == "text":
        if not isinstance(value, str):
            return value, f"{source.name} is {source.what}: compare it with a text, not {value!r}"
        return value, ""
    number = _number(value)
    if number is None:
        return value, f"{source.name} is {source.what}: compare it with a number, not {value!r}"
    if (
        source.kind in ("code", "codes")
        and source.labels
        and number not in range(1, len(source.labels) + 1)
    ):
        return value, (f"{value!r} is not an option of {source.name} (1..{len(source.labels)})")
    return (int(number) if number == int(number) else number), ""


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # NaN is no number to compare with


def _pipe_problem(
    text: str,
    page: str | None,
    table: Mapping[str, Source],
    known: set[str],
    *,
    own: str,
    text_key: str = "",
) -> str | None:
    """The problem with the answers a text pipes (`page`: where the text is read; a page
    text not in `TEXT_AFTER`: None, it may pipe no answer)."""
    for name in text_placeholders.answer_names(text):
        source = table.get(name)
        if source is None:
            found = _unknown(name, table, known)
            if found is not None:
                return f"{{{name}}}: {found[1]}"
            continue
        if page is None:
            return f"{{{name}}}: the {text_key} text is read before any answer can be piped into it"
        if not source.kind:
            return f"{{{name}}}: {source.what} cannot be piped into a text"
        if source.page == "evaluation":
            return f"{{{name}}}: answered once per plan (the plan pages), so it cannot be piped"
        if (
            name == f"q.{own}"
            or RANK[source.page] > RANK[page]
            or (own and RANK[source.page] == RANK[page])
        ):
            return f"{{{name}}}: answered on the {source.page} page, not before this text is read"
    return None


# --- evaluation ------------------------------------------------------------------------------
def is_met(condition: Condition, answers: Mapping[str, Any]) -> bool:
    """Whether the participant's `answers` (by name: "q.age", ...) meet the condition."""
    every = all(_holds(c, answers.get(c.question)) for c in condition.all)
    return every and (
        not condition.any or any(_holds(c, answers.get(c.question)) for c in condition.any)
    )


def is_shown(q: Question, answers: Mapping[str, Any]) -> bool:
    return not q.show_if.is_set() or is_met(q.show_if, answers)


def ending(items: Sequence[Question], answers: Mapping[str, Any]) -> str | None:
    """The end state the first of these (shown) items' end rule gives (None: none ends)."""
    for q in items:
        if q.end_if.is_set() and is_met(q.end_if, answers):
            return str(q.ends_with)
    return None


def _given(answer: Any) -> bool:
    return answer is not None and answer != "" and answer != []


def _holds(clause: Clause, answer: Any) -> bool:
    """One clause; an answer not given meets none."""
    if not _given(answer):
        return False
    values = clause.values if clause.op == "in" else [clause.value]
    if isinstance(answer, list):  # options chosen
        chosen = {_number(a) for a in answer}
        hits = [_number(v) in chosen for v in values]
        return not hits[0] if clause.op == "not_equals" else any(hits)
    if isinstance(answer, str):
        text, wanted = answer.strip().casefold(), [str(v).strip().casefold() for v in values]
        if clause.op == "not_equals":
            return text != wanted[0]
        return clause.op in ("equals", "in") and text in wanted
    number, wanted_n = _number(answer), [_number(v) for v in values]
    if number is None or None in wanted_n:
        return False
    return _compare(number, clause.op, wanted_n)


_COMPARE = {
    "equals": operator.eq, "not_equals": operator.ne,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}  # fmt: skip


def _compare(number: float, op: str, values: list[Any]) -> bool:
    return number in values if op == "in" else bool(_COMPARE[op](number, values[0]))


# --- piping and words ------------------------------------------------------------------------
def piped_value(source: Source, answer: Any) -> str:
    """An answer as a text shows it: an option's label, several joined by ", ", a number
    without a trailing .0; nothing when it was not given."""
    if not _given(answer):
        return ""
    if isinstance(answer, list):
        return ", ".join(piped_value(source, a) for a in answer)
    number = _number(answer) if not isinstance(answer, str) else None
    if number is not None and source.labels and number == int(number):
        code = int(number)
        if 1 <= code <= len(source.labels):
            return source.labels[code - 1]
    if number is not None:
        return f"{int(number)}" if number == int(number) else f"{number:g}"
    return str(answer)


def pipe(text: str, answers: Mapping[str, Any], table: Mapping[str, Source]) -> str:
    """`text` with the answers it names filled in (`text_placeholders.fill`)."""
    names = text_placeholders.answer_names(text)
    if not names:
        return text
    values = {n: piped_value(table[n], answers.get(n)) for n in names if n in table}
    return text_placeholders.fill(text, values)


def rules_in_words(q: Question, table: Mapping[str, Source]) -> list[str]:
    """When the item is shown and when its answer ends the study, in words (none: always
    shown, never ends)."""
    out = []
    if q.show_if.is_set():
        out.append(f"shown only when {describe(q.show_if, table)}")
    if q.end_if.is_set():
        out.append(f"ends the study ({q.ends_with}) when {describe(q.end_if, table)}")
    return out


#: a comparison in words
OP_WORDS = {
    "equals": "is", "not_equals": "is not", "in": "is one of",
    "<": "is below", "<=": "is at most", ">": "is above", ">=": "is at least",
}  # fmt: skip


def describe(condition: Condition, table: Mapping[str, Source]) -> str:
    """A condition in words, for the console ("q.drives is 1 (Yes) and ...")."""
    every = [_clause_words(c, table) for c in condition.all]
    some = [_clause_words(c, table) for c in condition.any]
    if len(some) > 1:
        some = [f"({' or '.join(some)})" if every else " or ".join(some)]
    return " and ".join(every + some)


def _clause_words(clause: Clause, table: Mapping[str, Source]) -> str:
    source = table.get(clause.question)
    values = clause.values if clause.op == "in" else [clause.value]
    said = ", ".join(_with_label(source, v) for v in values)
    return f"{clause.question} {OP_WORDS[clause.op]} {said}"


def _with_label(source: Source | None, value: Any) -> str:
    """A compared value as the console says it: an option's code with its label."""
    text = repr(value) if isinstance(value, str) else str(value)
    coded = source is not None and source.labels and not isinstance(value, str)
    label = piped_value(source, value) if coded and source is not None else ""
    return f"{text} ({label})" if label and label != text else text
