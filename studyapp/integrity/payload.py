"""The page script's payload: one JSON object posted in the hidden `integrity` field of a
rating or question page. Checked here before anything is stored: a payload that is too
large, not JSON, of another shape, or that names a field the page does not have is refused
as a whole with the reason (the page's answers are stored all the same)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: the hidden field the payload comes in
FIELD = "integrity"
#: the largest payload accepted (bytes of its UTF-8 text); a page has tens of fields
MAX_BYTES = 16_000
#: fields per page at most
MAX_FIELDS = 200
#: a day in milliseconds: no duration on one page is longer
DAY_MS = 86_400_000
#: counts are at most this (a page has no more events than that)
MAX_COUNT = 100_000
#: how the script names a field: a form field's name (`q_<key>`, `impossible_<item>`), a
#: matrix or ranking part's (`q_<key>.<part>`) or a multi-widget's (`_0`, `_1` ...)
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")

Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Millis = Annotated[int, Field(ge=0, le=DAY_MS)]


class PayloadError(ValueError):
    """Why a payload was refused (logged; the page's answers are stored regardless)."""


class FieldSignals(BaseModel):
    """One form field: pastes into it (and their characters), input events, time spent
    typing, and the time from the page's showing to the field's first answer."""

    model_config = ConfigDict(extra="forbid")

    pastes: Count = 0
    pasted_chars: Annotated[int, Field(ge=0, le=10 * MAX_COUNT)] = 0
    inputs: Count = 0
    typing_ms: Millis = 0
    first_ms: Millis | None = None


class Payload(BaseModel):
    """One page's signals, as the script sends them (version 1)."""

    model_config = ConfigDict(extra="forbid")

    v: Literal[1]
    page_ms: Millis
    blurs: Count = 0
    hidden: Count = 0
    away_ms: Millis = 0
    fields: Annotated[dict[str, FieldSignals], Field(max_length=MAX_FIELDS)] = Field(
        default_factory=dict
    )


def _belongs(name: str, form_fields: Collection[str]) -> bool:
    """A form field's own name, or one of its parts (`<name>.<part>`, `<name>_<n>`)."""
    if name in form_fields or name.partition(".")[0] in form_fields:
        return True
    base, _, part = name.rpartition("_")
    return part.isdigit() and base in form_fields


def payload_parse(raw: str, form_fields: Collection[str]) -> Payload:
    """The checked payload, or PayloadError saying what is wrong with it."""
    size = len(raw.encode("utf-8"))
    if size > MAX_BYTES:
        raise PayloadError(f"payload of {size:,} bytes; at most {MAX_BYTES:,}")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise PayloadError(f"not JSON: {exc}") from None
    try:
        payload = Payload.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "payload"
        raise PayloadError(f"{where}: {first['msg']}") from None
    for name in payload.fields:
        if not NAME.match(name) or not _belongs(name, form_fields):
            raise PayloadError(f"field {name[:100]!r} is not a field of this page")
    return payload
