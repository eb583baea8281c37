"""Reads of the coding: who is blind to what, the codings as the table `analysis.coding`
takes (`unit, coder, codes`), the final codes, and the agreement computed from them.

Blindness: an assigned coder sees only their own codes until every assigned coder has
finished; a researcher who is not a coder of the study sees everything.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.coding import Agreement, Codebook, agreement
from studyapp.coding.models import Code, CoderAssignment, Coding, FinalCode
from studyapp.coding.units import unit_name
from studyapp.models import Study


def all_finished(study: Study) -> bool:
    """Every assigned coder has finished (vacuously true with no coder)."""
    return not CoderAssignment.objects.filter(study=study, finished_at__isnull=True).exists()


def is_coder(user: Any, study: Study) -> bool:
    return CoderAssignment.objects.filter(study=study, coder_id=user.pk).exists()


def is_blind(user: Any, study: Study) -> bool:
    """`user` codes this study and some coder has not finished: others' codes are hidden."""
    return is_coder(user, study) and not all_finished(study)


def codebook_of(study: Study) -> Codebook | None:
    rows = [
        {"code": c.name, "definition": c.definition, "example": c.example}
        for c in Code.objects.filter(study=study)
    ]
    return Codebook.of(rows) if rows else None


def _test_filter(qs: Any, with_test: bool) -> Any:
    return qs if with_test else qs.filter(evaluation__participant__is_test=False)


def codings_frame(study: Study, *, coder: Any = None, with_test: bool = False) -> pd.DataFrame:
    """unit, coder (user name), codes (sorted, ';'-joined; empty: no code applies)."""
    qs = Coding.objects.filter(study=study).select_related("evaluation", "coder")
    if coder is not None:
        qs = qs.filter(coder=coder)
    rows = [
        {
            "unit": unit_name(c.evaluation.recourse_id, c.field),
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
            rows.append({"unit": unit_name(f.evaluation.recourse_id, f.field), "code": name,
                         "decided_by": who, "decided_at": f.decided_at.isoformat(),
                         "note": f.note})  # fmt: skip
    return pd.DataFrame(rows, columns=["unit", "code", "decided_by", "decided_at", "note"])


def study_agreement(study: Study) -> Agreement:
    """Kappa per pair of coders and alpha over all coders, per code and overall, by
    `analysis.coding.agreement` (raises its `CodingError` when it cannot be computed)."""
    return agreement(codings_frame(study), codebook_of(study))
