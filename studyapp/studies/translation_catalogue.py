"""Every participant-facing text of a study under a stable message id, in each language: what
going live checks for completeness and what a translator's PO file carries
(`translation_files`).

Message ids name where a text lives, never its wording, so a translation survives an edit of
the source text: ``texts.consent`` (a page text; ``texts.title`` is the title participants
read), ``questions.<key>.text`` and ``questions.<key>.options.<n>`` (researcher-defined items,
options counted from 1; a matrix's statements ``rows.<n>``), ``attention_checks.<key>.prompt``
and ``...options.<n>``, and the
schema's words: ``schema.items.<key>.label``/``options.<n>`` (profile), ``schema.screening.
<key>.label``/``options.<n>`` and ``schema.evaluation.<text>``/``scale.<n>``.

Where each language's text is kept is the section's business (one entry per section in
`SECTIONS`): page texts per language in `Study.texts`; an item's text per language in its
``text``/``options``; an attention check's own words are the default language's, its others
under ``translations``; the schema's own labels are English (`SOURCE_LANGUAGE`), its others
under ``translations`` (`participation.forms.localized_schema`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from studyapp.definition.languages import SOURCE_LANGUAGE
from studyapp.definition.study_config import TEXT_KEYS
from studyapp.models import Study
from studyapp.participation.language import study_languages

#: the schema's evaluation texts participants read (the scale is a list of its own)
EVALUATION_TEXTS = ("acceptance_question", "action_question", "impossible_question", "why_question")
#: missing translations listed in one message at most
SHOWN = 12

Data = dict[str, Any]
Texts = dict[str, str]


def study_data(study: Study) -> Data:
    """The parts of a study that hold participant-facing texts, as plain data (a copy)."""
    return copy.deepcopy(
        {
            "language": study.language,
            "texts": study.texts or {},
            "questions": study.questions or [],
            "attention_checks": study.attention_checks or [],
            "schema": study.schema or {},
        }
    )


def _options(prefix: str, labels: Any, n: int) -> Iterator[tuple[str, str]]:
    """`prefix.1` ... `prefix.n` -> the labels (blank where there are fewer)."""
    labels = labels if isinstance(labels, list) else []
    for i in range(n):
        yield f"{prefix}.{i + 1}", str(labels[i]) if i < len(labels) else ""


def _set_list(problems: Texts, merged: Texts, prefix: str, n: int) -> list[str] | None:
    """The `n` labels `prefix.1` ... from the merged texts: None when none is given; a
    problem under `prefix` when only some are (a list is translated as a whole)."""
    labels = [merged.get(f"{prefix}.{i + 1}", "") for i in range(n)]
    if all(labels):
        return labels
    if any(labels):
        problems[prefix] = f"{sum(map(bool, labels))} of {n} options translated; all or none"
    return None


# --- page texts ------------------------------------------------------------------------------
def _texts_read(data: Data, lang: str) -> Texts:
    by_key = data["texts"].get(lang) or {}
    return {f"texts.{key}": str(by_key.get(key, "")) for key in TEXT_KEYS}


def _texts_write(data: Data, lang: str, merged: Texts, problems: Texts) -> None:
    data["texts"][lang] = {
        key: merged[f"texts.{key}"] for key in TEXT_KEYS if merged[f"texts.{key}"].strip()
    }


# --- researcher-defined questions ------------------------------------------------------------
#: an item's lists of labels per language: its options, a matrix's statements
LABEL_LISTS = ("options", "rows")


def _n_labels(entry: Mapping[str, Any], field: str) -> int:
    lists = [v for v in (entry.get(field) or {}).values() if isinstance(v, list)]
    return max((len(v) for v in lists), default=0)


def _questions_read(data: Data, lang: str) -> Texts:
    out: Texts = {}
    for q in data["questions"]:
        base = f"questions.{q['key']}"
        out[f"{base}.text"] = str((q.get("text") or {}).get(lang, ""))
        for field in LABEL_LISTS:
            labels = (q.get(field) or {}).get(lang)
            out.update(_options(f"{base}.{field}", labels, _n_labels(q, field)))
    return out


def _questions_write(data: Data, lang: str, merged: Texts, problems: Texts) -> None:
    for q in data["questions"]:
        base = f"questions.{q['key']}"
        q.setdefault("text", {})[lang] = merged[f"{base}.text"]
        for field in LABEL_LISTS:
            n = _n_labels(q, field)
            if n:
                q[field][lang] = _set_list(problems, merged, f"{base}.{field}", n) or []


# --- attention checks ------------------------------------------------------------------------
def _check_texts(data: Data, check: Mapping[str, Any], lang: str) -> Mapping[str, Any]:
    if lang == data["language"]:
        return check
    return (check.get("translations") or {}).get(lang) or {}


def _checks_read(data: Data, lang: str) -> Texts:
    out: Texts = {}
    for check in data["attention_checks"]:
        base, texts = f"attention_checks.{check['key']}", _check_texts(data, check, lang)
        out[f"{base}.prompt"] = str(texts.get("prompt", ""))
        n = len(check.get("options") or [])
        out.update(_options(f"{base}.options", texts.get("options"), n))
    return out


def _checks_write(data: Data, lang: str, merged: Texts, problems: Texts) -> None:
    for check in data["attention_checks"]:
        base = f"attention_checks.{check['key']}"
        prompt = merged[f"{base}.prompt"]
        options = _set_list(problems, merged, f"{base}.options", len(check.get("options") or []))
        if lang == data["language"]:
            check["prompt"], check["options"] = prompt, options or []
        elif prompt and options:
            check.setdefault("translations", {})[lang] = {"prompt": prompt, "options": options}
        elif prompt or options:
            problems[base] = "a translation needs the prompt and every option"


# --- the schema's words ----------------------------------------------------------------------
def _schema_parts(schema: Mapping[str, Any]) -> Iterator[tuple[str, list[Any]]]:
    """(section, entries) of the schema's labelled parts: profile items, screening."""
    yield "items", schema.get("profile_items", schema.get("items")) or []
    yield "screening", schema.get("screening") or []


def _schema_read(data: Data, lang: str) -> Texts:
    schema = data["schema"]
    tr = (schema.get("translations") or {}).get(lang) or {}
    own = lang == SOURCE_LANGUAGE  # the schema's own labels are English
    out: Texts = {}
    for part, entries in _schema_parts(schema):
        for entry in entries:
            if not isinstance(entry, Mapping) or "key" not in entry:
                continue
            given = (tr.get(part) or {}).get(entry["key"]) or {}
            base = f"schema.{part}.{entry['key']}"
            out[f"{base}.label"] = str(
                given.get("label") or (entry.get("label", "") if own else "")
            )
            if isinstance(entry.get("options"), list):
                labels = given.get("options") or (entry["options"] if own else [])
                out.update(_options(f"{base}.options", labels, len(entry["options"])))
    evaluation, tr_eval = schema.get("evaluation") or {}, tr.get("evaluation") or {}
    for key in EVALUATION_TEXTS:
        out[f"schema.evaluation.{key}"] = str(
            tr_eval.get(key) or (evaluation.get(key, "") if own else "")
        )
    if isinstance(evaluation.get("scale"), list):
        scale = tr_eval.get("scale") or (evaluation["scale"] if own else [])
        out.update(_options("schema.evaluation.scale", scale, len(evaluation["scale"])))
    return out


def _schema_write(data: Data, lang: str, merged: Texts, problems: Texts) -> None:
    schema = data["schema"]
    current = _schema_read(data, lang)
    if all(merged[k] == current[k] for k in current):
        return  # nothing of the schema changed: its stored form stays as it is
    tr = schema.setdefault("translations", {}).setdefault(lang, {})
    for part, entries in _schema_parts(schema):
        for entry in entries:
            if not isinstance(entry, Mapping) or "key" not in entry:
                continue
            base = f"schema.{part}.{entry['key']}"
            given: dict[str, Any] = {}
            if merged.get(f"{base}.label"):
                given["label"] = merged[f"{base}.label"]
            if isinstance(entry.get("options"), list):
                labels = _set_list(problems, merged, f"{base}.options", len(entry["options"]))
                if labels:
                    given["options"] = labels
            if given:
                tr.setdefault(part, {})[entry["key"]] = given
    evaluation = schema.get("evaluation") or {}
    tr_eval = {k: merged[f"schema.evaluation.{k}"] for k in EVALUATION_TEXTS}
    tr_eval = {k: v for k, v in tr_eval.items() if v}
    if isinstance(evaluation.get("scale"), list):
        scale = _set_list(problems, merged, "schema.evaluation.scale", len(evaluation["scale"]))
        if scale:
            tr_eval["scale"] = scale
    if tr_eval:
        tr["evaluation"] = tr_eval


@dataclass(frozen=True)
class Section:
    """Where one kind of text is kept: read all of a language's, write them back."""

    name: str
    read: Callable[[Data, str], Texts]
    #: (data, language, every text of the section in it, problems by id) -> None
    write: Callable[[Data, str, Texts, Texts], None]


SECTIONS = (
    Section("texts", _texts_read, _texts_write),
    Section("questions", _questions_read, _questions_write),
    Section("attention_checks", _checks_read, _checks_write),
    Section("schema", _schema_read, _schema_write),
)


def texts_in(data: Data, lang: str) -> Texts:
    """Every message id of the study -> its text in `lang` ("" where there is none)."""
    out: Texts = {}
    for section in SECTIONS:
        out.update(section.read(data, lang))
    return out


def texts_written(data: Data, lang: str, merged: Texts) -> tuple[Data, Texts]:
    """A copy of `data` with `lang`'s texts set from `merged` (every id of `texts_in`), and
    the problems by id (an option list translated only in part, ...)."""
    out, problems = copy.deepcopy(data), {}
    for section in SECTIONS:
        mine = {k: v for k, v in merged.items() if k.startswith(f"{section.name}.")}
        section.write(out, lang, mine, problems)
    return out, problems


def missing_path(msgid: str, lang: str) -> str:
    """`texts.consent` in Japanese -> `texts.ja.consent` (the language after the section)."""
    section, _, rest = msgid.partition(".")
    return f"{section}.{lang}.{rest}"


def shown_ids(data: Data, languages: list[str]) -> list[str]:
    """The message ids with a text in at least one of `languages`: the ones to translate."""
    by_lang = [texts_in(data, lang) for lang in languages]
    return [msgid for msgid in by_lang[0] if any(t[msgid].strip() for t in by_lang)]


def missing_translations(study: Study) -> list[str]:
    """`texts.ja.consent: missing` for each text that one of the study's languages has and
    another lacks (a study in one language lacks nothing)."""
    languages = study_languages(study)
    if len(languages) < 2:
        return []
    data = study_data(study)
    ids = shown_ids(data, languages)
    return [
        f"{missing_path(msgid, lang)}: missing"
        for lang in languages
        for texts in [texts_in(data, lang)]
        for msgid in ids
        if not texts[msgid].strip()
    ]


def missing_problem(study: Study) -> str | None:
    """What going live says about missing translations (None: nothing is missing)."""
    missing = missing_translations(study)
    if not missing:
        return None
    more = f"; and {len(missing) - SHOWN} more" if len(missing) > SHOWN else ""
    return "; ".join(missing[:SHOWN]) + more


@dataclass(frozen=True)
class Row:
    """One text beside its translations (the console's side-by-side view)."""

    msgid: str
    source: str
    #: the study's other languages -> the text in it ("" where missing)
    others: dict[str, str]


def side_by_side(study: Study) -> list[Row]:
    """Every text of the study in its default language beside each other language."""
    languages = study_languages(study)
    data = study_data(study)
    by_lang = {lang: texts_in(data, lang) for lang in languages}
    default = languages[0]
    return [
        Row(msgid, by_lang[default][msgid], {lang: by_lang[lang][msgid] for lang in languages[1:]})
        for msgid in shown_ids(data, languages)
    ]
