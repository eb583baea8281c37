"""The codes in the export: `code_<name>` columns holding the final code (1, 0, empty when
unresolved), described in codebook.csv; final_codes.csv with who decided and when; and a
`code_` column taken by `recourse-analysis gamm` as a covariate in its formula."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from studyapp.coding import answer_services, services
from studyapp.coding.models import FinalCode
from studyapp.export import export_study
from studyapp.models import Study
from tests import warm_python
from tests.studyapp.coding.conftest import client_of, evaluations
from tests.studyapp.coding.test_agreement_console import ROOT, code_all
from tests.studyapp.console.factory import populate


def test_final_codes_resolved_in_the_console_reach_the_export(
    coded_study: Study, people: dict[str, Any], tmp_path: Path
) -> None:
    code_all(coded_study, people)
    pi = client_of(people["pi"])
    url = f"/console/studies/{coded_study.slug}/coding/resolve/"
    page = pi.get(url).content.decode()
    evs = evaluations(coded_study)
    for i in (1, 2, 4, 5):  # the plan's disagreements are listed
        assert f'data-unit="{evs[i].recourse_id}:acceptance_why"' in page
    assert f'data-unit="{evs[3].recourse_id}:acceptance_why"' not in page  # agreed: not listed
    assert pi.post(url, {"action": "agreed"}).status_code == 302
    assert FinalCode.objects.count() == 6  # units 0, 3, 6-9
    r = pi.post(url, {"evaluation": evs[1].pk, "field": "acceptance_why", "codes": ["cost"],
                      "note": "effort is not said"})  # fmt: skip
    assert r.status_code == 302
    final = FinalCode.objects.get(evaluation=evs[1])
    assert final.decided_by == people["pi"] and final.decided_at is not None

    export_study(study=coded_study, out=tmp_path, with_text=True)
    ev = pd.read_csv(tmp_path / "evaluations.csv").set_index("recourse")
    assert ev.loc[evs[0].recourse_id, ["code_cost", "code_effort"]].tolist() == [1, 1]
    assert ev.loc[evs[1].recourse_id, ["code_cost", "code_effort"]].tolist() == [1, 0]
    assert ev.loc[evs[6].recourse_id, ["code_cost", "code_effort"]].tolist() == [0, 0]
    assert ev.loc[evs[2].recourse_id, ["code_cost", "code_effort"]].isna().all()  # unresolved
    book = pd.read_csv(tmp_path / "codebook.csv", keep_default_na=False)
    rows = book.set_index(["file", "column"])
    assert "money or effort it costs" in rows.loc[("evaluations.csv", "code_cost"), "description"]
    assert rows.loc[("evaluations.csv", "code_cost"), "type"] == "integer"
    for f, col in (("codings.csv", "coder"), ("final_codes.csv", "decided_by"),
                   ("coding_codebook.csv", "definition")):  # fmt: skip
        assert (f, col) in rows.index
    finals = pd.read_csv(tmp_path / "final_codes.csv", keep_default_na=False)
    mine = finals[finals["unit"] == f"{evs[1].recourse_id}:acceptance_why"]
    assert mine[["code", "decided_by", "note"]].values.tolist() == [
        ["cost", "pi", "effort is not said"]
    ]
    # the resolved code needs a code of the codebook, like a coding
    before = FinalCode.objects.count()
    r = pi.post(url, {"evaluation": evs[2].pk, "field": "acceptance_why", "codes": ["greed"]})
    assert r.status_code == 400 and FinalCode.objects.count() == before


@pytest.fixture
def resolved_study(coded_study: Study, people: dict[str, Any]) -> Study:
    """40 more participants, every answer resolved: cost on every third evaluation (the
    coders finished: codes are exported only then)."""
    populate(coded_study, 40, k=4, seed=3, panel=False)
    for who in ("a", "b"):
        services.coder_finish(study=coded_study, coder=people[who])
    for i, ev in enumerate(evaluations(coded_study)):
        answer_services.final_code_save(study=coded_study, by=people["pi"], unit=f"{ev.recourse_id}:acceptance_why",
                                 code_names=["cost"] if i % 3 == 0 else [])  # fmt: skip
    return coded_study


def _gamm(formula: str, data: Path) -> dict[str, Any]:
    r = warm_python.python(["-m", "analysis", "gamm", "--input", str(data), "--formula", formula],
                           ROOT, dict(os.environ))  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_gamm_takes_a_code_column_of_the_export(resolved_study: Study, tmp_path: Path) -> None:
    written = export_study(study=resolved_study, out=tmp_path, with_r=True)
    assert "evaluations.rds" in {p.name for p in written}  # the R hand-off takes them too
    data = tmp_path / "evaluations.csv"
    ev = pd.read_csv(data)
    assert ev["code_cost"].notna().all() and set(ev["code_cost"]) == {0, 1}
    # a code alone: the coefficient is the difference of the two groups' mean ratings
    fit = _gamm("acceptance ~ code_cost", data)
    means = ev.groupby("code_cost")["acceptance"].mean()
    assert fit["parametric"]["code_cost"]["estimate"] == pytest.approx(means[1] - means[0])
    # beside a smooth of a distance, as the seed study's models have it
    fit = _gamm("acceptance ~ code_cost + s(proximity, k = 4)", data)
    assert "code_cost" in fit["parametric"] and fit["n"] == len(ev)
    # the analysis reader takes the export with its code columns
    from analysis.export import load_export

    assert "code_cost" in load_export(tmp_path).evaluations.columns
    # an unresolved answer leaves its code empty: gamm refuses it, naming the column
    FinalCode.objects.filter(study=resolved_study).first().delete()
    export_study(study=resolved_study, out=tmp_path / "gap")
    r = warm_python.python(["-m", "analysis", "gamm", "--input",
                            str(tmp_path / "gap" / "evaluations.csv"), "--formula",
                            "acceptance ~ code_cost"], ROOT, dict(os.environ))  # fmt: skip
    assert r.returncode != 0 and "'code_cost' must be numeric and finite" in r.stderr


def test_the_streamed_zip_holds_the_same_coding_files(
    resolved_study: Study, tmp_path: Path
) -> None:
    import zipfile

    from studyapp.export import export_zip_stream

    export_study(study=resolved_study, out=tmp_path)
    blob = tmp_path / "export.zip"
    blob.write_bytes(b"".join(export_zip_stream(resolved_study, parquet=False)))
    with zipfile.ZipFile(blob) as zf:
        for name in ("codings.csv", "final_codes.csv", "coding_codebook.csv", "evaluations.csv"):
            assert zf.read(name) == (tmp_path / name).read_bytes(), name
