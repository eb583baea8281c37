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
    *, schema: Mapping[str, Any] | None, settings: Mapping[str, Any] | None = None, **common: Any
) -> Study:
    """A new draft study; `schema` None: the car-loan reference study in the language
    `settings` names (default English). `common`: slug, title, owner, pool, pool_size, as
    `services.study_create_from_schema` takes them."""
    if schema is None:
        given = dict(settings or {})
        return carloan.carloan_study_create(
            language=given.pop("language", "en"), settings=given, **common
        )
    return services.study_create_from_schema(schema=schema, settings=settings, **common)
