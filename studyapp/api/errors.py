"""Turning a service's refusal into an HTTP answer that names the field or the conflict."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rest_framework import serializers, status
from rest_framework.exceptions import APIException, ValidationError

from studyapp.definition.errors import ConfigError


class DetailSerializer(serializers.Serializer):
    """The body of a refusal that is not about one field."""

    detail = serializers.CharField()


class Conflict(APIException):
    """The request is well formed but the study's state forbids it (e.g. a live study's
    design)."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "The study's current state does not allow this."
    default_code = "conflict"


_LEAD = re.compile(r"^\s*([a-z_]+)")


def as_validation_error(exc: Exception, fields: Iterable[str]) -> ValidationError:
    """A service message such as "design: unknown strategy 'x'" under the field it names
    ("design"), else under non_field_errors; a configuration error's problems each under
    the setting its path starts with."""
    if isinstance(exc, ConfigError):
        return ValidationError(exc.by_field())
    message = str(exc)
    match = _LEAD.match(message)
    known = set(fields)
    field = "non_field_errors"
    if match:
        lead = match.group(1)
        for name in (lead, lead.replace(" ", "_")):
            if name in known:
                field = name
        if message.startswith("pool size"):
            field = "pool_size" if "pool_size" in known else field
    return ValidationError({field: [message]})
