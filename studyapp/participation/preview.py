"""Preview and pilot links: a researcher walks a study (a draft too) from the console, and bots
arrive the same way; both become test participants (`Participant.is_test`), left out of
quotas, condition counts, the monitor's figures and (by default) the export.

The link carries a token signed with the site's secret key and bound to the study's slug
(``/s/<slug>/?preview=<token>``), valid for `MAX_AGE_S`; it cannot be made without the key,
so a participant cannot turn themselves into a test participant. The token may also say
which condition the test participant is in (the researcher previews each condition; without
one, the study's own assignment rule places them among the test participants,
`assignment.pick_condition`) and, for a delayed-release study, that their plans are released
at once (`skip_delay`), so the pilot shows the plans instead of stopping at "under review".
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core import signing
from django.urls import reverse

from studyapp.models import Condition, Participant, Study

SALT = "studyapp.preview"
MAX_AGE_S = 7 * 24 * 3600
#: the link parameter carrying the token
PARAM = "preview"


class PreviewError(ValueError):
    """A genuine preview link that no longer fits the study (its condition was removed)."""


@dataclass(frozen=True)
class PreviewClaims:
    """What a valid preview token says about its test participant."""

    condition: str = ""
    skip_delay: bool = False


def preview_token(study: Study, *, condition: str = "", skip_delay: bool = False) -> str:
    data: dict[str, object] = {"study": study.slug}
    if condition:
        data["condition"] = condition
    if skip_delay:
        data["skip_delay"] = True
    return signing.dumps(data, salt=SALT)


def preview_claims(study: Study, token: str) -> PreviewClaims | None:
    """The token's claims when it is a fresh preview token of this study (None otherwise).
    A condition the study no longer has raises PreviewError (the link is stale)."""
    if not token or len(token) > 500:
        return None
    try:
        data = signing.loads(token, salt=SALT, max_age=MAX_AGE_S)
    except signing.BadSignature:
        return None
    if not isinstance(data, dict) or data.get("study") != study.slug:
        return None
    condition = str(data.get("condition") or "")
    if condition and not Condition.objects.filter(study=study, name=condition).exists():
        raise PreviewError(
            f"This preview link is for condition {condition!r}, which the study no longer "
            "has; make a new link in the console."
        )
    return PreviewClaims(condition=condition, skip_delay=bool(data.get("skip_delay")))


def preview_ok(study: Study, token: str) -> bool:
    """Whether `token` is a fresh preview token of this study."""
    try:
        return preview_claims(study, token) is not None
    except PreviewError:
        return False


def preview_link(study: Study, *, condition: str = "", skip_delay: bool = False) -> str:
    token = preview_token(study, condition=condition, skip_delay=skip_delay)
    return f"{reverse('start', args=[study.slug])}?{PARAM}={token}"


def preview_links(study: Study) -> list[dict[str, str]]:
    """The console's preview links: one by the study's assignment rule, one per condition;
    each also without the delay when the study releases its plans later."""
    from studyapp.participation.release import is_delayed

    delayed = is_delayed(study)
    names = [""] + list(
        Condition.objects.filter(study=study)
        .order_by("position", "name")
        .values_list("name", flat=True)
    )
    out = []
    for name in names:
        row = {
            "condition": name,
            "label": f"condition {name}" if name else "by the study's assignment rule",
            "link": preview_link(study, condition=name),
        }
        if delayed:
            row["link_skip_delay"] = preview_link(study, condition=name, skip_delay=True)
        out.append(row)
    return out


def skip_delay_set(participant: Participant) -> None:
    """Mark a test participant whose plans are released as soon as they are ready
    (`release.participant_schedule`); a real participant is never marked."""
    if participant.is_test and not participant.preview_skip_delay:
        Participant.objects.filter(pk=participant.pk, is_test=True).update(preview_skip_delay=True)
        participant.preview_skip_delay = True
