"""The translation round trip: a study's participant-facing texts as a gettext PO file per
language (polib), and a translated file read back into the study, all or nothing.

Each entry's msgid is the text's message id (`translation_catalogue`: ``texts.consent``,
``questions.trust.options.2``, ...), stable while the wording changes; its extracted comment
(``#.``) carries the text in the study's default language, the source a translator works
from; its msgstr is the text in the file's language as the study holds it now (blank: not
translated yet). Texts with placeholders are flagged ``python-brace-format``.

Reading a file back refuses, naming each problem and changing nothing: a file that is not a
PO file, one for another language, message ids the study does not have, a translation that
drops or adds a placeholder (``{n_plans}``; piped values such as ``{q.age}`` alike), a list
of options translated only in part, a study past its draft, and whatever the study settings
refuse (`updates.study_update`). Untranslated and fuzzy entries leave the study's text as it
is.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from typing import Any

import polib
from django.db import transaction

from studyapp.definition.errors import StudyError
from studyapp.models import Study
from studyapp.participation.language import study_languages
from studyapp.studies import updates
from studyapp.studies.translation_catalogue import (
    SECTIONS,
    shown_ids,
    study_data,
    texts_in,
    texts_written,
)

#: a placeholder of any kind a text may hold: `{n_plans}`, `{q.age}`, `{profile.position}`
PLACEHOLDER = re.compile(r"\{[^{}\s]+\}")
#: the largest PO file read (a study's texts are tens of kilobytes)
MAX_BYTES = 2_000_000
#: problems listed in one message at most
SHOWN = 12


class TranslationRejected(StudyError):
    """A PO file that cannot be applied; nothing was changed. One message per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        more = f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
        super().__init__("translation not imported: " + "; ".join(problems[:SHOWN]) + more)


def _language_checked(study: Study, lang: str) -> None:
    languages = study_languages(study)
    if lang not in languages:
        raise StudyError(
            f"{lang!r} is not a language of study {study.slug} (its languages: "
            f"{', '.join(languages)}; add it to `languages` first)"
        )


def _source_texts(study: Study, data: dict[str, Any]) -> dict[str, str]:
    """Each message id's source: the default language's text, else the first language's
    that has one."""
    by_lang = [texts_in(data, lang) for lang in study_languages(study)]
    return {k: next((t[k] for t in by_lang if t[k].strip()), "") for k in by_lang[0]}


def po_export(study: Study, lang: str) -> str:
    """The PO file of the study's texts in `lang` (one of its languages)."""
    _language_checked(study, lang)
    data = study_data(study)
    source, target = _source_texts(study, data), texts_in(data, lang)
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": f"study {study.slug}",
        "Language": lang,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "X-Source-Language": study.language,
    }
    for msgid in shown_ids(data, study_languages(study)):
        flags = ["python-brace-format"] if PLACEHOLDER.search(source[msgid]) else []
        po.append(
            polib.POEntry(msgid=msgid, msgstr=target[msgid], comment=source[msgid], flags=flags)
        )
    return str(po)


def _parsed(content: str | bytes) -> polib.POFile:
    """The PO file in `content` (parsed from a file of its own: polib would read a short
    text that names a path on this machine as that file)."""
    if isinstance(content, bytes):
        if len(content) > MAX_BYTES:
            raise TranslationRejected([f"the file is over {MAX_BYTES:,} bytes"])
        try:
            content = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TranslationRejected([f"the file is not UTF-8 text ({exc.reason})"]) from None
    with tempfile.NamedTemporaryFile("w", suffix=".po", encoding="utf-8") as tmp:
        tmp.write(content)
        tmp.flush()
        try:
            return polib.pofile(tmp.name)
        except (OSError, ValueError) as exc:
            message = str(exc).replace(tmp.name, "the file")
            raise TranslationRejected([f"not a PO file: {message}"]) from None


def _placeholder_problems(given: dict[str, str], source: dict[str, str]) -> list[str]:
    problems = []
    for msgid, text in given.items():
        want, have = set(PLACEHOLDER.findall(source[msgid])), set(PLACEHOLDER.findall(text))
        for name in sorted(want - have):
            problems.append(f"{msgid}: the translation drops the placeholder {name}")
        for name in sorted(have - want):
            problems.append(f"{msgid}: the translation adds the placeholder {name}")
    return problems


@dataclass(frozen=True)
class Imported:
    language: str
    #: the message ids whose text changed
    changed: list[str]


def po_import(study: Study, lang: str, content: str | bytes) -> Imported:
    """Read a translated PO file of `lang` into the (draft) study, all or nothing."""
    _language_checked(study, lang)
    updates.require_draft(study, "its texts")
    po = _parsed(content)
    data = study_data(study)
    current = texts_in(data, lang)
    problems = []
    said = str(po.metadata.get("Language", "")).strip()
    if said and said.replace("_", "-").split("-")[0].lower() != lang:
        problems.append(f"the file is a translation into {said!r}, not {lang!r}")
    unknown = [e.msgid for e in po if not e.obsolete and e.msgid not in current]
    if unknown:
        problems.append(f"unknown message ids: {', '.join(unknown)}")
    given = {
        e.msgid: e.msgstr
        for e in po.translated_entries()
        if e.msgid in current and e.msgstr.strip()
    }
    problems += _placeholder_problems(given, _source_texts(study, data))
    if problems:
        raise TranslationRejected(problems)
    written, faults = texts_written(data, lang, {**current, **given})
    if faults:
        raise TranslationRejected([f"{msgid}: {problem}" for msgid, problem in faults.items()])
    changed = [k for k, v in given.items() if v != current[k]]
    _store(study, data, written)
    return Imported(lang, changed)


def _store(study: Study, before: dict[str, Any], after: dict[str, Any]) -> None:
    """Write the sections that changed: settings through `study_update` (validated as every
    setting change is), the schema's translations beside them, in one transaction."""
    changes = {
        s.name: after[s.name]
        for s in SECTIONS
        if s.name != "schema" and after[s.name] != before[s.name]
    }
    with transaction.atomic():
        if changes:
            updates.study_update(study=study, changes=changes)
        if after["schema"] != before["schema"]:
            locked = Study.objects.select_for_update().get(pk=study.pk)
            updates.require_draft(locked, "its schema")
            locked.schema = after["schema"]
            locked.save(update_fields=["schema", "updated_at"])
            study.refresh_from_db()
