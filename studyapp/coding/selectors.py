"""Reads of the coding: who is blind to what, the codings as the table `analysis.coding`
takes (`unit, coder, codes`), the final codes, and the agreement computed from them.

Blindness: an assigned coder sees only their own codes (and memos) until every assigned
coder has finished; in a study coded blind (`CodingSettings.blind`, the default) they also
see neither method, condition nor strategy until then, and the plan only if the study
shows it. A researcher who is not a coder of the study sees everything.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.coding import Agreement, Codebook, agreement
from studyapp.coding.models import (
    Code,
    CodeChange,
    CoderAssignment,
    Coding,
    CodingChange,
    CodingSettings,
    FinalCode,
    FinalCodeChange,
    Memo,
    unit_of,
)
from studyapp.models import Evaluation, Participant, Study


def all_finished(study: Study) -> bool:
    """Every assigned coder has finished (vacuously true with no coder)."""
    return not CoderAssignment.objects.filter(study=study, finished_at__isnull=True).exists()


def is_coder(user: Any, study: Study) -> bool:
    return CoderAssignment.objects.filter(study=study, coder_id=user.pk).exists()


def is_blind(user: Any, study: Study) -> bool:
    """`user` codes this study and some coder has not finished: others' codes are hidden."""
    return is_coder(user, study) and not all_finished(study)


def hides_recourse(user: Any, study: Study) -> bool:
    """Method, condition and strategy are hidden from `user` (a coder of a study coded blind,
    before every coder has finished)."""
    if not is_blind(user, study):
        return False
    blind = CodingSettings.objects.filter(study=study).values_list("blind", flat=True).first()
    return blind is None or bool(blind)


def hides_plan(user: Any, study: Study) -> bool:
    """The plan is hidden too (a study coded blind that does not show coders the plan)."""
    if not hides_recourse(user, study):
        return False
    shown = CodingSettings.objects.filter(study=study).values_list("show_plan", flat=True).first()
    return shown is not None and not shown


def codebook_of(study: Study) -> Codebook | None:
    rows = [
        {"code": c.name, "definition": c.definition, "example": c.example}
        for c in Code.objects.filter(study=study)
    ]
    return Codebook.of(rows) if rows else None


def _test_filter(qs: Any, with_test: bool) -> Any:
    return qs if with_test else qs.filter(participant__is_test=False)


def codings_frame(study: Study, *, coder: Any = None, with_test: bool = False) -> pd.DataFrame:
    """unit, coder (user name), codes (sorted, ';'-joined; empty: no code applies)."""
    qs = Coding.objects.filter(study=study).select_related("evaluation", "coder")
    if coder is not None:
        qs = qs.filter(coder=coder)
    rows = [
        {
            "unit": unit_of(c),
            "coder": c.coder.get_username(),
            "codes": ";".join(sorted(code.name for code in c.codes.all())),
        }
        for c in _test_filter(qs, with_test).prefetch_related("codes")
    ]
    return pd.DataFrame(rows, columns=["unit", "coder", "codes"])


def final_codes(study: Study, *, with_test: bool = False) -> list[FinalCode]:
    qs = FinalCode.objects.filter(study=study).select_related("evaluation", "decided_by")
    return list(_test_filter(qs, with_test).prefetch_related("codes"))


def final_codes_frame(study: Study, *, with_test: bool = False) -> pd.DataFrame:
    """unit, code (one row per code; a unit resolved with no code: one row, code empty),
    decided_by, decided_at, note: the `--codings FINAL.csv` of `coding quotes`."""
    rows = []
    for f in final_codes(study, with_test=with_test):
        names = sorted(c.name for c in f.codes.all()) or [""]
        who = f.decided_by.get_username() if f.decided_by else ""
        for name in names:
            rows.append({"unit": unit_of(f), "code": name,
                         "decided_by": who, "decided_at": f.decided_at.isoformat(),
                         "note": f.note})  # fmt: skip
    return pd.DataFrame(rows, columns=["unit", "code", "decided_by", "decided_at", "note"])


def study_agreement(study: Study) -> Agreement:
    """Kappa per pair of coders and alpha over all coders, per code and overall, by
    `analysis.coding.agreement` (raises its `CodingError` when it cannot be computed)."""
    return agreement(codings_frame(study), codebook_of(study))


def _test_units(study: Study, with_test: bool) -> set[str] | None:
    """The units of test participants' answers (None: keep every row)."""
    if with_test:
        return None
    evs = Evaluation.objects.filter(participant__study=study, participant__is_test=True)
    people = Participant.objects.filter(study=study, is_test=True)
    return {f"{r}:" for r in evs.values_list("recourse_id", flat=True)} | {
        f"p{p}:" for p in people.values_list("pk", flat=True)
    }


def _keep(unit: str, test: set[str] | None) -> bool:
    return test is None or unit.split(":", 1)[0] + ":" not in test


HISTORY_COLUMNS = {
    "coding_history": ["unit", "coder", "action", "codes", "at"],
    "final_code_history": ["unit", "codes", "decided_by", "decided_at", "note"],
    "code_history": ["code", "action", "definition", "example", "by", "at"],
    "memos": ["unit", "author", "text", "written_at"],
}


def _name(user: Any) -> str:
    return user.get_username() if user is not None else ""


def history_frames(study: Study, *, with_test: bool = False) -> dict[str, pd.DataFrame]:
    """The coding's history as tables: every change of a coding, of a final code and of the
    codebook, and the memos, oldest first (times in ISO 8601 UTC)."""
    test = _test_units(study, with_test)
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in HISTORY_COLUMNS}
    for c in CodingChange.objects.filter(study=study).select_related("coder"):
        if _keep(c.unit, test):
            rows["coding_history"].append({"unit": c.unit, "coder": _name(c.coder),
                "action": c.action, "codes": c.codes, "at": c.at.isoformat()})  # fmt: skip
    for f in FinalCodeChange.objects.filter(study=study).select_related("decided_by"):
        if _keep(f.unit, test):
            rows["final_code_history"].append({"unit": f.unit, "codes": f.codes,
                "decided_by": _name(f.decided_by), "decided_at": f.decided_at.isoformat(),
                "note": f.note})  # fmt: skip
    for e in CodeChange.objects.filter(study=study).select_related("by"):
        rows["code_history"].append({"code": e.code, "action": e.action,
            "definition": e.definition, "example": e.example, "by": _name(e.by),
            "at": e.at.isoformat()})  # fmt: skip
    for m in Memo.objects.filter(study=study).select_related("author"):
        if _keep(m.unit, test):
            rows["memos"].append({"unit": m.unit, "author": _name(m.author), "text": m.text,
                                  "written_at": m.written_at.isoformat()})  # fmt: skip
    return {k: pd.DataFrame(v, columns=HISTORY_COLUMNS[k]) for k, v in rows.items()}
