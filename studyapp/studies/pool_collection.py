"""Pool-collection studies: a survey whose completed profiles become another study's pool.

The reference study's pool came from a separate survey (Tominaga et al., App. A): respondents
answered the same profile items and a 21-answer income item (20 bands and "choose not to
disclose"); non-disclosers were left out. A pool-collection study (``kind =
"pool_collection"``) asks exactly that — screening (age, gender when the schema has them, and
the income item), the profile items, the study's own questionnaire items — and nothing about
recourse. `collected_pool` turns its completed answers into a pool CSV, which goes through the
same preview (`pool.pool_preview`) and confirmation as an uploaded file; the confirmation
checks that the answers are still those previewed.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from studyapp.definition import screening
from studyapp.definition.errors import StudyError
from studyapp.models import Participant, Study
from studyapp.studies.pool import PoolPreview, pool_preview, study_replace_pool
from studyapp.studies.services import schema_of, study_create_from_schema
from studyapp.studies.updates import require_draft, study_update

#: the survey's 20 income bands (JPY), then the answer that discloses nothing
INCOME_BANDS = ["-2M", *(f"{m}M-{m + 1}M" for m in range(2, 20)), "20M-"]
UNDISCLOSED = "Prefer not to say"
INCOME_BANDS_JA = [
    "200万円未満",
    *(f"{m * 100}万〜{(m + 1) * 100}万円" for m in range(2, 20)),
    "2000万円以上",
]
UNDISCLOSED_JA = "回答しない"
#: screening questions of the source schema that a pool-collection study keeps
KEPT_SCREENING = ("age", "gender")


class PoolCollectionError(StudyError):
    """A pool-collection study or conversion that cannot be made; the message says why."""


def income_item() -> dict[str, Any]:
    """The survey's income question: 21 answers, the last one "prefer not to say"."""
    return {
        "key": "income",
        "label": "Please tell us your annual income (JPY).",
        "type": "choice",
        "options": [*INCOME_BANDS, UNDISCLOSED],
        "undisclosed": len(INCOME_BANDS) + 1,
    }


def income_question(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema's income question, checked for what a pool needs
    (`screening.pool_income_problem`)."""
    try:
        qs = screening.questions(schema)
    except screening.ScreeningError as exc:
        raise PoolCollectionError(f"pool collection: {exc}") from None
    problem = screening.pool_income_problem(qs)
    if problem is not None:
        raise PoolCollectionError(problem)
    return next(q for q in qs if q["key"] == "income")


def collection_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` made into a pool-collection schema: its profile items, its age and gender
    questions without eligibility rules, and the survey's income item (`income_item`)."""
    out = dict(schema)
    kept = []
    for q in schema.get("screening", []):
        if isinstance(q, Mapping) and q.get("key") in KEPT_SCREENING:
            kept.append({k: v for k, v in q.items() if k not in ("eligible", "eligible_only")})
    out["screening"] = [*kept, income_item()]
    translations = {}
    for lang, tr in (schema.get("translations") or {}).items():
        tr = dict(tr)
        screens = {k: v for k, v in (tr.get("screening") or {}).items() if k in KEPT_SCREENING}
        if lang == "ja":
            screens["income"] = {
                "label": "あなたの年収（円）を教えてください。",
                "options": [*INCOME_BANDS_JA, UNDISCLOSED_JA],
            }
        tr["screening"] = screens
        translations[lang] = tr
    if translations:
        out["translations"] = translations
    return out


def study_make_pool_collection(*, study: Study) -> Study:
    """Turn a draft study into a pool-collection study; refused (nothing changed) when its
    schema has no usable income item (said in the pool's words) or the settings refuse it."""
    require_draft(study, "its kind")
    income_question(study.schema)
    return study_update(study=study, changes={"kind": "pool_collection"})


@dataclass(frozen=True)
class CollectedPool:
    """A pool-collection study's completed answers as a pool CSV, with who was left out."""

    csv_bytes: bytes
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.csv_bytes).hexdigest()


def _failed_attention(p: Participant, study: Study) -> bool:
    return p.state == Participant.State.FAILED_ATTENTION or (
        p.attention_failures > study.attention_max_failures
    )


def collected_pool(
    source: Study,
    keys: list[str],
    extras: tuple[str, ...] = KEPT_SCREENING,
    *,
    with_test: bool = False,
) -> CollectedPool:
    """The completed answers of a pool-collection study as a pool CSV with the columns id,
    income, `extras` (gender, age: group attributes) and `keys`; non-disclosers and
    participants who failed the attention checks are left out and counted. Test
    participants (previews, bots) only `with_test` (a dry run of the whole pipeline)."""
    if source.kind != "pool_collection":
        raise PoolCollectionError(f"study {source.slug} is not a pool-collection study")
    rows = Participant.objects.filter(study=source)
    if not with_test:
        rows = rows.filter(is_test=False)
    rows = (
        rows.filter(state__in=(Participant.State.COMPLETED, Participant.State.FAILED_ATTENTION))
        .select_related("profile")
        .order_by("pk")
    )
    counts = {"completed": 0, "failed_attention": 0, "not_disclosed": 0, "included": 0}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "income", *extras, *keys])
    for p in rows:
        counts["completed"] += 1
        if _failed_attention(p, source):
            counts["failed_attention"] += 1
            continue
        if p.income_jpy is None:
            counts["not_disclosed"] += 1
            continue
        values = p.profile.values
        missing = [k for k in keys if k not in values]
        if missing:
            raise PoolCollectionError(
                f"study {source.slug} did not ask {', '.join(missing)}: its profile items "
                "differ from this study's"
            )
        attrs = {"gender": p.gender, "age": "" if p.age is None else p.age}
        writer.writerow(
            [f"{source.slug}-{p.pk}", p.income_jpy]
            + [attrs[k] for k in extras]
            + [values[k] for k in keys]
        )
        counts["included"] += 1
    return CollectedPool(buf.getvalue().encode("utf-8"), counts)


def pool_from_collection_preview(
    *, target: Study, source: Study, with_test: bool = False
) -> tuple[PoolPreview, CollectedPool]:
    """What `target`'s pool would become from `source`'s answers (nothing is stored)."""
    if target.pk == source.pk:
        raise PoolCollectionError("a study cannot take its own answers as its pool")
    asked = {q["key"] for q in screening.questions(target.schema)}
    extras = tuple(k for k in KEPT_SCREENING if k in asked)
    collected = collected_pool(
        source, list(schema_of(target.schema).keys), extras, with_test=with_test
    )
    if collected.counts["included"] == 0:
        raise PoolCollectionError(
            f"study {source.slug} has no completed answer to use "
            f"({collected.counts['completed']} completed, "
            f"{collected.counts['not_disclosed']} without income, "
            f"{collected.counts['failed_attention']} failed attention)"
        )
    return pool_preview(target.schema, collected.csv_bytes), collected


def study_pool_from_collection(
    *, target: Study, source: Study, sha256: str, with_test: bool = False
) -> PoolPreview:
    """Confirm a preview: store `source`'s answers as `target`'s pool when they are still the
    ones previewed (`sha256`); otherwise refuse and change nothing."""
    require_draft(target, "its pool")
    preview, collected = pool_from_collection_preview(
        target=target, source=source, with_test=with_test
    )
    if collected.sha256 != sha256:
        raise PoolCollectionError(
            "the answers changed since the preview (new participants finished); "
            "please look at the preview again"
        )
    if not preview.ok:
        raise PoolCollectionError(f"pool: {preview.summary()}")
    return study_replace_pool(study=target, data=collected.csv_bytes)


def pool_collection_study_create(
    *,
    slug: str,
    title: str,
    schema: Mapping[str, Any],
    owner: Any = None,
    settings: Mapping[str, Any] | None = None,
) -> Study:
    """A draft pool-collection study asking `schema`'s profile items and the survey's income
    item (`collection_schema`); its own pool is a token synthetic one (it shows no plans)."""
    made = collection_schema(schema)
    income_question(made)
    return study_create_from_schema(
        slug=slug,
        title=title,
        schema=made,
        owner=owner,
        pool_size=10,
        settings={**(settings or {}), "kind": "pool_collection"},
    )
