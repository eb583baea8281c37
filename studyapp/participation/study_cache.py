"""Studies as participant requests read them, kept per process between requests.

Every participant request needs its study (language, schema, texts, pages, checks), and
reading it with the participant costs more than the rest of the query: forty columns to
select and convert, JSON columns to decode. A study changes rarely and only through the
researcher's tools, and each write moves its `updated_at` (`studyapp.versioned`), so a
request reads the participant with the study's `updated_at` only and takes the study from
here when that version is the one kept. A stale study is never served: a newer version
misses and is read again.

The kept objects are shared by the process's threads: callers treat them as read-only.
Large columns stay deferred (`STUDY_LARGE`); one read on demand (the uploaded
model file at a profile submit) then stays with the kept object, as it would for a
request's own copy.
"""

from __future__ import annotations

import threading
from datetime import datetime

from studyapp.models import Study

#: studies kept per process; a platform runs a handful live at a time
MAX_STUDIES = 64

_kept: dict[int, tuple[datetime, Study]] = {}
_lock = threading.Lock()


#: Study columns a participant request never needs: the counterfactual pool (hundreds of KB)
#: and the uploaded decision model. Read lazily where one is needed (the profile's decision).
STUDY_LARGE = ("pool_csv", "decision_model_blob")


def study_at(pk: int, version: datetime) -> Study:
    """The study `pk` as of `version` (its `updated_at`), from the cache or the database."""
    hit = _kept.get(pk)
    if hit is not None and hit[0] == version:
        return hit[1]
    study = Study.objects.defer(*STUDY_LARGE).get(pk=pk)
    with _lock:
        if pk not in _kept and len(_kept) >= MAX_STUDIES:
            _kept.pop(next(iter(_kept)))  # the oldest entry
        _kept[pk] = (study.updated_at, study)
    return study


def forget() -> None:
    """Drop every kept study (tests that change a study behind the ORM's back)."""
    with _lock:
        _kept.clear()
