"""Preview and pilot links: a researcher walks a study (a draft too) from the console, and bots
arrive the same way; both become test participants (`Participant.is_test`), left out of
quotas, condition counts, the monitor's figures and (by default) the export.

The link carries a token signed with the site's secret key and bound to the study's slug
(``/s/<slug>/?preview=<token>``), valid for `MAX_AGE_S`; it cannot be made without the key,
so a participant cannot turn themselves into a test participant.
"""

from __future__ import annotations

from django.core import signing
from django.urls import reverse

from studyapp.models import Study

SALT = "studyapp.preview"
MAX_AGE_S = 7 * 24 * 3600
#: the link parameter carrying the token
PARAM = "preview"


def preview_token(study: Study) -> str:
    return signing.dumps({"study": study.slug}, salt=SALT)


def preview_ok(study: Study, token: str) -> bool:
    """Whether `token` is a fresh preview token of this study."""
    if not token or len(token) > 500:
        return False
    try:
        data = signing.loads(token, salt=SALT, max_age=MAX_AGE_S)
    except signing.BadSignature:
        return False
    return isinstance(data, dict) and data.get("study") == study.slug


def preview_link(study: Study) -> str:
    return f"{reverse('start', args=[study.slug])}?{PARAM}={preview_token(study)}"
