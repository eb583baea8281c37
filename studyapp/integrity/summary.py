"""The per-participant integrity summary: four signals, each a documented rule over what is
stored, for the researcher to look at — never an automatic rejection.

* **speeding**: the participant's time on the answer pages (the server's clock: each page
  from its first showing to its submit) is under `SPEED_RATIO` of the study's median time on
  the same pages (each page's median over the completed participants who submitted it,
  summed over the pages this participant submitted, so a participant shown fewer plans is
  compared with what others took on those pages, not on more); judged for completed
  participants only, once at least `MIN_FOR_MEDIAN` have completed (a median of two says
  little).
* **pasted**: text was pasted into at least one field of a rating or question page (the page
  script's count; empty where the script recorded nothing: switched off, no JavaScript).
* **identical_text**: at least one of the participant's free texts (the "why" answers and
  the free-text items), compared without case, punctuation and repeated spaces and at least
  `MIN_TEXT_CHARS` long, is also another participant's in this study.
* **straightlining**: every 1–7 rating the participant gave (acceptance and action of each
  plan) is the same, over at least `STRAIGHT_MIN_PLANS` rated plans.

Tab switches, leaving the window, time away, typing time and the time to a first answer are
reported beside them as counts and durations, not as signals of their own: people switch
tabs for good reasons, so a count alone says little about the answers. The rules and their
thresholds are documented in `docs/participants.md` (Integrity signals).
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

import pandas as pd

from studyapp.models import Evaluation, IntegrityRecord, PageVisit, Participant, Study
from studyapp.retention.classes import text_keys

#: a completed participant faster than this share of the median is flagged
SPEED_RATIO = 0.5
#: completed participants needed before speeding is judged
MIN_FOR_MEDIAN = 5
#: a free text shorter than this (normalised) is not compared: "no", "good idea" coincide
MIN_TEXT_CHARS = 20
#: rated plans needed before identical ratings count as straight-lining
STRAIGHT_MIN_PLANS = 3
#: the signals, in the order the `signals` column lists them
SIGNALS = ("speeding", "pasted", "identical_text", "straightlining")
#: the summary's columns
COLUMNS = (
    "participant", "state", "seconds", "median_seconds", "speed_ratio", "speeding",
    "recorded_pages", "pastes", "pasted_chars", "pasted", "tab_hidden", "window_blurs",
    "away_seconds", "typing_seconds", "first_answer_seconds", "free_texts", "shared_texts",
    "identical_text", "ratings", "rating_sd", "straightlining", "signals",
)  # fmt: skip
#: nullable integer columns (empty: not judged or not recorded)
INTEGER_COLUMNS = (
    "participant", "speeding", "recorded_pages", "pastes", "pasted_chars", "pasted",
    "tab_hidden", "window_blurs", "free_texts", "shared_texts", "identical_text", "ratings",
    "straightlining",
)  # fmt: skip

_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_SPACE = re.compile(r"\s+")


def normalised(text: str) -> str:
    """A free text as compared: NFKC, case-folded, without punctuation, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _PUNCT.sub(" ", text)).strip()


def _participants(study: Study, with_test: bool) -> list[dict[str, Any]]:
    qs = Participant.objects.filter(study=study)
    if not with_test:
        qs = qs.filter(is_test=False)
    return list(qs.order_by("pk").values("pk", "state", "answers"))


def _of(study: Study, with_test: bool) -> dict[str, Any]:
    """A filter on a participant's rows: the study's, test participants' only when asked."""
    return {"participant__study": study, **({} if with_test else {"participant__is_test": False})}


def _seconds(of: dict[str, Any]) -> dict[int, dict[str, float]]:
    """Participant -> page -> seconds from its first showing to its submit."""
    out: dict[int, dict[str, float]] = defaultdict(dict)
    visits = PageVisit.objects.filter(exited_at__isnull=False, **of)
    fields = ("participant_id", "page", "entered_at", "exited_at")
    for pid, page, entered, exited in visits.values_list(*fields):
        out[pid][page] = max((exited - entered).total_seconds(), 0.0)
    return out


def _page_medians(seconds: dict[int, dict[str, float]], done: list[int]) -> dict[str, float]:
    """Page -> the median of the completed participants' seconds on it."""
    per_page: dict[str, list[float]] = defaultdict(list)
    for pid in done:
        for page, s in seconds.get(pid, {}).items():
            per_page[page].append(s)
    return {page: statistics.median(values) for page, values in per_page.items()}


def _texts(
    participant: dict[str, Any], evaluations: list[dict[str, Any]], keys: set[str]
) -> set[str]:
    """The participant's free texts, normalised, long enough to compare."""
    raw: list[Any] = []
    for ev in evaluations:
        raw += [ev["acceptance_why"], ev["action_why"]]
        raw += [(ev["answers"] or {}).get(k) for k in keys]
    raw += [(participant["answers"] or {}).get(k) for k in keys]
    texts = {normalised(t) for t in raw if isinstance(t, str)}
    return {t for t in texts if len(t) >= MIN_TEXT_CHARS}


def _records(of: dict[str, Any]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for r in IntegrityRecord.objects.filter(**of):
        s = out.setdefault(
            r.participant_id,
            {"pages": 0, "pastes": 0, "chars": 0, "hidden": 0, "blurs": 0, "away": 0,
             "typing": 0, "firsts": []},
        )  # fmt: skip
        s["pages"] += 1
        s["pastes"] += r.pastes
        s["chars"] += r.pasted_chars
        s["hidden"] += r.hidden
        s["blurs"] += r.blurs
        s["away"] += r.away_ms
        s["typing"] += r.typing_ms
        s["firsts"] += [
            f["first_ms"] for f in (r.fields or {}).values() if f.get("first_ms") is not None
        ]
    return out


def _median(values: Iterable[float]) -> float | None:
    values = list(values)
    return statistics.median(values) if values else None


def summary_rows(study: Study, *, with_test: bool = False) -> list[dict[str, Any]]:
    """One dict per participant (test participants only when asked), in `COLUMNS`."""
    people = _participants(study, with_test)
    of = _of(study, with_test)
    seconds = _seconds(of)
    done = [p["pk"] for p in people if p["state"] == Participant.State.COMPLETED]
    medians = _page_medians(seconds, done) if len(done) >= MIN_FOR_MEDIAN else None
    evaluations: dict[int, list[dict[str, Any]]] = defaultdict(list)
    fields = ("participant_id", "acceptance", "action", "acceptance_why", "action_why", "answers")
    for ev in Evaluation.objects.filter(**of).values(*fields):
        evaluations[ev["participant_id"]].append(ev)
    keys = text_keys(study)
    texts = {p["pk"]: _texts(p, evaluations[p["pk"]], keys) for p in people}
    given_by = Counter(t for ts in texts.values() for t in ts)  # each participant counted once
    records = _records(of)
    rows = []
    for p in people:
        pid = p["pk"]
        pages = seconds.get(pid, {})
        own = sum(pages.values())
        median = sum(medians.get(page, 0.0) for page in pages) if medians is not None else None
        judged = bool(median) and p["state"] == Participant.State.COMPLETED
        ratio = own / median if judged and median else None
        rec = records.get(pid)
        ratings = [v for ev in evaluations[pid] for v in (ev["acceptance"], ev["action"])]
        plans = len(evaluations[pid])
        shared = sum(1 for t in texts[pid] if given_by[t] > 1)
        row: dict[str, Any] = {
            "participant": pid,
            "state": p["state"],
            "seconds": round(own, 3),
            "median_seconds": None if median is None else round(median, 3),
            "speed_ratio": None if ratio is None else round(ratio, 4),
            "speeding": None if ratio is None else int(ratio < SPEED_RATIO),
            "recorded_pages": rec["pages"] if rec else 0,
            "pastes": rec["pastes"] if rec else None,
            "pasted_chars": rec["chars"] if rec else None,
            "pasted": int(rec["pastes"] > 0) if rec else None,
            "tab_hidden": rec["hidden"] if rec else None,
            "window_blurs": rec["blurs"] if rec else None,
            "away_seconds": round(rec["away"] / 1000, 3) if rec else None,
            "typing_seconds": round(rec["typing"] / 1000, 3) if rec else None,
            "first_answer_seconds": (
                round(m / 1000, 3) if rec and (m := _median(rec["firsts"])) is not None else None
            ),
            "free_texts": len(texts[pid]),
            "shared_texts": shared,
            "identical_text": int(shared > 0),
            "ratings": len(ratings),
            "rating_sd": round(statistics.pstdev(ratings), 4) if ratings else None,
            "straightlining": (
                int(len(set(ratings)) == 1) if plans >= STRAIGHT_MIN_PLANS else None
            ),
        }
        row["signals"] = ";".join(s for s in SIGNALS if row[s] == 1)
        rows.append(row)
    return rows


def summary_frame(study: Study, *, with_test: bool = False) -> pd.DataFrame:
    """The summary as a table (`COLUMNS`; empty integer cells stay empty, not 0.0)."""
    frame = pd.DataFrame(summary_rows(study, with_test=with_test), columns=list(COLUMNS))
    for col in INTEGER_COLUMNS:
        frame[col] = frame[col].astype("Int64")
    return frame


def flagged_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Signal -> participants it flags (the monitor's table)."""
    return {s: sum(1 for r in rows if r[s] == 1) for s in SIGNALS}
