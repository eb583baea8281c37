"""Between-participant conditions and quotas: who counts as filling a cell, which condition
a newcomer gets, and whether a participant's cell is full.

"Filling" = completed, plus in progress (screening .. evaluating) and created less than
`study.assignment_timeout_minutes` ago; an abandoned session stops counting after the
timeout, so it does not hold a place forever. Test participants (previews, bots) never fill
anything. Callers hold the Study row lock (`select_for_update`) around count and write, so
concurrent arrivals are serialised.

Assignment (`study.assignment`): least-filled (ties: position, then name; deterministic), or
block-randomised: the n-th real arrival (0-based) is in block n // k of the k conditions, and
each block is a shuffle of all k seeded by the study's seed and the block number, so every k
arrivals see every condition once. Either way a condition whose quota is full is skipped
(block-randomised: the least-filled free one is taken instead). The participant's
`assignment` records how: ``least_filled`` or ``block_random:<block>``.

Test participants (a pilot's bots, previews without a chosen condition) are assigned by the
same rule among the test participants alone, each one counted whatever its state (a
pilot's split is then the rule's: 60 bots on two conditions split 30/30), and never shift a
real participant's assignment; quotas do not apply to them.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from studyapp.definition import outcomes
from studyapp.models import Condition, Participant, Quota, Study

S = Participant.State

#: participants on their way (every state but the endings), who hold a place while fresh
IN_PROGRESS = outcomes.ON_THE_WAY


def filling(study: Study, *, exclude_pk: int | None = None) -> QuerySet[Participant]:
    """Participants that hold a place in the study's conditions and quotas."""
    fresh = timezone.now() - timedelta(minutes=study.assignment_timeout_minutes)
    qs = Participant.objects.filter(study=study, is_test=False).filter(
        Q(state=S.COMPLETED) | Q(state__in=IN_PROGRESS, created_at__gte=fresh)
    )
    return qs.exclude(pk=exclude_pk) if exclude_pk is not None else qs


def condition_counts(study: Study) -> Counter[str]:
    """Places held per condition, counted by the database (one row per condition, not per
    participant: arrivals count inside the study's lock)."""
    rows = filling(study).order_by().values_list("condition").annotate(n=Count("pk"))
    return Counter(dict(rows))


def test_condition_counts(study: Study) -> Counter[str]:
    """Test participants per condition, whatever their state: a pilot's bots and previews
    are placed by the study's rule among themselves, apart from the real participants."""
    rows = (
        Participant.objects.filter(study=study, is_test=True)
        .order_by()
        .values_list("condition")
        .annotate(n=Count("pk"))
    )
    return Counter(dict(rows))


def _answer_matches(answer: Any, wanted: str) -> bool:
    """A quota's screening value against an answer (a code, or codes for a multi)."""
    values = answer if isinstance(answer, list) else [answer]
    return any(str(v) == wanted for v in values if v is not None)


def _label_codes(study: Study, key: str, wanted: str) -> set[str]:
    """A screening value may name the option's code ("2") or its label ("Male")."""
    codes = {wanted}
    for q in (study.schema or {}).get("screening", []):
        if isinstance(q, Mapping) and q.get("key") == key:
            for i, option in enumerate(q.get("options", []) or [], start=1):
                if str(option) == wanted:
                    codes.add(str(i))
    return codes


def quota_count(quota: Quota, *, exclude_pk: int | None = None) -> int:
    """Participants filling the quota's cell (the one being checked excluded)."""
    study = quota.study
    qs = filling(study, exclude_pk=exclude_pk)
    if quota.condition_id is not None:
        qs = qs.filter(condition=quota.condition.name)
    if not quota.screening_key:
        return qs.count()
    codes = _label_codes(study, quota.screening_key, quota.screening_value)
    answers = qs.values_list("screening", flat=True)
    return sum(
        1
        for a in answers
        if isinstance(a, Mapping)
        and any(_answer_matches(a.get(quota.screening_key), c) for c in codes)
    )


def quota_applies(quota: Quota, participant: Participant) -> bool:
    """Whether the participant falls in the quota's cell (blank parts match everyone)."""
    if quota.condition_id is not None and quota.condition.name != participant.condition:
        return False
    if quota.screening_key:
        answer = (participant.screening or {}).get(quota.screening_key)
        codes = _label_codes(quota.study, quota.screening_key, quota.screening_value)
        return any(_answer_matches(answer, c) for c in codes)
    return True


def full_quota(participant: Participant, quotas: Iterable[Quota]) -> Quota | None:
    """The first quota whose cell the participant is in and which is already full."""
    for quota in quotas:
        if quota_applies(quota, participant) and (
            quota_count(quota, exclude_pk=participant.pk) >= quota.limit
        ):
            return quota
    return None


def _quotas(study: Study, **filters: Any) -> list[Quota]:
    quotas = list(Quota.objects.filter(study=study, **filters).select_related("condition"))
    for quota in quotas:
        quota.study = study  # the caller's study: no second read of its large columns
    return quotas


def screening_quotas(study: Study) -> list[Quota]:
    return _quotas(study)


def block_condition(names: list[str], seed: int, n: int) -> tuple[str, int]:
    """The condition of the n-th arrival (0-based) under block randomisation, and its block."""
    block = n // len(names)
    order = list(names)
    random.Random(f"{seed}:{block}").shuffle(order)
    return order[n % len(names)], block


def pick_condition(study: Study, *, is_test: bool = False) -> tuple[str, bool, str]:
    """The condition a newcomer gets, whether a condition-only quota leaves no room, and how
    it was assigned (module docstring).

    Conditions whose condition-only quota is full are skipped; when all are full the
    newcomer gets the least-filled one and ends with QUOTA_FULL (a test participant never
    does). A study without conditions assigns "" (the study's design).
    """
    conditions = list(Condition.objects.filter(study=study).order_by("position", "name"))
    arrival_quotas = [] if is_test else _quotas(study, screening_key="")
    if not conditions:
        return "", _cell_full(study, "", arrival_quotas), ""
    counts = test_condition_counts(study) if is_test else condition_counts(study)
    ranked = sorted(conditions, key=lambda c: (counts[c.name], c.position, c.name))
    if study.assignment == "block_random":
        n = Participant.objects.filter(study=study, is_test=is_test).count()
        name, block = block_condition([c.name for c in conditions], int(study.seed), n)
        if not _cell_full(study, name, arrival_quotas):
            return name, False, f"block_random:{block}"
    for condition in ranked:
        if not _cell_full(study, condition.name, arrival_quotas):
            return condition.name, False, "least_filled"
    return ranked[0].name, True, "least_filled"


def _cell_full(study: Study, condition: str, quotas: list[Quota]) -> bool:
    for quota in quotas:
        if quota.condition_id is not None and quota.condition.name != condition:
            continue
        if quota_count(quota) >= quota.limit:
            return True
    return False
