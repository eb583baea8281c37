"""The OpenAPI description of every endpoint also lists the refusals it can answer with
(401, 403, 404, 400), so clients and schemathesis know them without a note per view."""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema

ERROR_BODY_SCHEMA = {
    "type": "object",
    "description": "{'detail': message} or {field: [messages]} naming each bad field.",
    "additionalProperties": True,
}
ERROR_BODY = {"application/json": {"schema": ERROR_BODY_SCHEMA}}
REFUSALS = {
    "400": "Invalid payload or query parameter; the body names each one.",
    "401": "No (valid) credentials: send 'Authorization: Token <key>'.",
    "403": "Not a researcher account, or an action for the study's owner only.",
    "404": "No such study (or participant, or page) among those you can see.",
    "429": "Too many attempts; the body says after how many seconds to try again.",
}


class ApiSchema(AutoSchema):
    """drf-spectacular's AutoSchema plus the shared refusals, each with a JSON error body."""

    #: the refusals this view can give; views narrow it (the token view: 400 only)
    refusals = ("400", "401", "403", "404")

    def get_operation(self, *args: Any, **kwargs: Any) -> Any:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        responses = operation.setdefault("responses", {})
        for code in getattr(self.view, "schema_refusals", self.refusals):
            entry = responses.setdefault(code, {"description": REFUSALS[code]})
            entry.setdefault("content", ERROR_BODY)
        return operation
