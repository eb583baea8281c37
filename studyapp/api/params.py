"""Query parameters shared by several endpoints, parsed strictly (a typo is a 400)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off", "")


def flag(request: Any, name: str) -> bool:
    """A yes/no query parameter: 1/true/yes or 0/false/no (missing: no)."""
    raw = request.query_params.get(name)
    if raw is None:
        return False
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ValidationError({name: [f"Expected 1 or 0 (true or false), not {raw[:40]!r}."]})


def flag_parameter(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, bool, OpenApiParameter.QUERY, description=description)


SLUG = OpenApiParameter(
    "slug",
    {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},
    OpenApiParameter.PATH,
    description="The study's slug.",
)
WITH_PANEL_IDS = flag_parameter(
    "with_panel_ids",
    "Include panel ids (recruitment_id, panel parameters). Owners only; others get 403.",
)
WITH_TEXT = flag_parameter("with_text", "Include the free-text reasons.")
WITH_TEST = flag_parameter(
    "with_test", "Include test participants (previews and bots; left out by default)."
)
WITH_R = flag_parameter(
    "with_r",
    "Include the R hand-off: labelled evaluations/participants .rds and .sav, and analysis.R.",
)


class Pages(PageNumberPagination):
    """100 rows a page; `?page_size=` up to 1,000."""

    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000
