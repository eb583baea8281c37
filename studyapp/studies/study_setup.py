"""The console's and the API's "new study" choice in one call: no schema means the car-loan
reference study (`carloan.carloan_study_create`), a schema means a study made from it
(`services.study_create_from_schema`).

What used to live here moved by concern: pool preview and replacement to `pool`,
duplication to `duplicate`, decision models to `updates`/`decision_model`, settings checks
to the configuration model (`config`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from studyapp.models import Study
from studyapp.studies import carloan, services


def study_create_from_schema(
    *,
    slug: str,
    title: str,
    schema: Mapping[str, Any] | None,
    owner: Any,
    pool: bytes | None = None,
    pool_size: int = 3683,
    settings: Mapping[str, Any] | None = None,
) -> Study:
    """A new draft study owned by `owner`; `schema` None: the car-loan reference study in
    the language `settings` names (default English)."""
    if schema is None:
        given = dict(settings or {})
        return carloan.carloan_study_create(
            slug=slug,
            title=title,
            language=given.pop("language", "en"),
            owner=owner,
            pool=pool,
            pool_size=pool_size,
            settings=given,
        )
    return services.study_create_from_schema(
        slug=slug,
        title=title,
        schema=schema,
        owner=owner,
        pool=pool,
        pool_size=pool_size,
        settings=settings,
    )
