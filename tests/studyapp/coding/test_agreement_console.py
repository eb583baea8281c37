"""Two coders code in the console; the agreement page shows kappa and alpha equal to the
hand computation (coding_plan.py), to the `krippendorff` package and scikit-learn on the
same judgements, and to `recourse-analysis coding agreement` run on the export."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from studyapp.export import export_study
from studyapp.models import Study
from tests.studyapp.coding import coding_plan as plan
from tests.studyapp.coding.conftest import client_of, evaluations

ROOT = Path(__file__).resolve().parents[3]


def code_all(study: Study, people: dict[str, Any]) -> None:
    """Both coders code the plan's ten answers through the answers page, then finish."""
    evs = evaluations(study)[: plan.N_UNITS]
    for who, codes in (("a", plan.A), ("b", plan.B)):
        c = client_of(people[who])
        for ev, given in zip(evs, codes, strict=True):
            r = c.post(f"/console/studies/{study.slug}/coding/answers/",
                       {"evaluation": ev.pk, "field": "acceptance_why", "codes": given})  # fmt: skip
            assert r.status_code == 302, r.content.decode()[-500:]
        assert (
            c.post(f"/console/studies/{study.slug}/coding/", {"action": "finish"}).status_code
            == 302
        )


def shown(page: str, table: str) -> dict[tuple[str, ...], tuple[str, int]]:
    """The agreement page's figures: (code[, coder_a, coder_b]) -> (value, units)."""
    body = page[page.index(f'<table id="{table}"') :]
    body = body[: body.index("</table>")]
    out = {}
    for row in re.findall(r"<tr data-code=.*?</tr>", body, flags=re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        if table == "alpha":
            out[(cells[0],)] = (cells[1], int(cells[2]))
        else:
            out[(cells[0], cells[1], cells[2])] = (cells[3], int(cells[4]))
    return out


def test_agreement_page_equals_hand_package_and_export(
    coded_study: Study, people: dict[str, Any], tmp_path: Path
) -> None:
    code_all(coded_study, people)
    page = client_of(people["pi"]).get(f"/console/studies/{coded_study.slug}/coding/agreement/")
    assert page.status_code == 200
    text = page.content.decode()
    alpha, kappa = shown(text, "alpha"), shown(text, "kappa")
    for code in plan.KAPPA:
        assert alpha[(code,)] == (f"{plan.ALPHA[code]:.3f}", plan.N_UNITS), code
        assert kappa[(code, "coder_a", "coder_b")] == (f"{plan.KAPPA[code]:.3f}", plan.N_UNITS)

    # the krippendorff package and scikit-learn on the same judgements, built here
    def labels(codes: list[list[str]], code: str | None) -> list[str]:
        return [";".join(sorted(c)) if code is None else str(code in c) for c in codes]

    for code in ("cost", "effort", None):
        a, b = labels(plan.A, code), labels(plan.B, code)
        index = {v: i for i, v in enumerate(sorted(set(a) | set(b)))}
        data = np.array([[index[v] for v in a], [index[v] for v in b]], dtype=float)
        name = code or "(all codes)"
        ka = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        assert ka == pytest.approx(plan.ALPHA[name], abs=1e-12)
        assert cohen_kappa_score(a, b) == pytest.approx(plan.KAPPA[name], abs=1e-12)

    # the export's codings, through the analysis command line
    written = export_study(study=coded_study, out=tmp_path / "export", with_text=True)
    names = {p.name for p in written}
    assert {"codings.csv", "final_codes.csv", "coding_codebook.csv"} <= names
    out = tmp_path / "agreement"
    subprocess.run(
        [sys.executable, "-m", "analysis", "coding", "agreement",
         "--codings", str(tmp_path / "export" / "codings.csv"),
         "--codebook", str(tmp_path / "export" / "coding_codebook.csv"), "--out", str(out)],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    cli_alpha = pd.read_csv(out / "alpha.csv").set_index("code")
    cli_kappa = pd.read_csv(out / "kappa.csv").set_index("code")
    for code in plan.KAPPA:
        assert alpha[(code,)] == (f"{cli_alpha.loc[code, 'alpha']:.3f}",
                                  int(cli_alpha.loc[code, "n_units"]))  # fmt: skip
        assert kappa[(code, "coder_a", "coder_b")][0] == f"{cli_kappa.loc[code, 'kappa']:.3f}"


def test_blind_until_every_coder_has_finished(
    coded_study: Study, people: dict[str, Any], tmp_path: Path
) -> None:
    ev = evaluations(coded_study)[0]
    a, b = client_of(people["a"]), client_of(people["b"])
    url = f"/console/studies/{coded_study.slug}/coding/"
    a.post(url + "answers/", {"evaluation": ev.pk, "field": "acceptance_why", "codes": ["effort"]})
    b.post(url + "answers/", {"evaluation": ev.pk, "field": "acceptance_why", "codes": ["cost"]})

    def sees_other(client: Any, other: str) -> bool:
        return f"{other}: " in client.get(url + "answers/").content.decode()

    assert not sees_other(b, "coder_a") and not sees_other(a, "coder_b")
    assert "mine: cost" in b.get(url + "answers/").content.decode()
    page = b.get(url + "agreement/").content.decode()
    assert "every assigned coder must finish first" in page and 'id="kappa"' not in page
    assert b.get(url + "resolve/").status_code == 403
    r = b.get(url + "quotes/", {"codes": ["cost"], "format": "csv"})
    assert r.status_code == 400 and "final codes" in r.content.decode()
    # a download does not unblind either: codings withheld while coding is under way
    export_study(study=coded_study, out=tmp_path / "during")
    assert len(pd.read_csv(tmp_path / "during" / "codings.csv")) == 0
    # a finishes; b is still coding, so both stay blind
    a.post(url, {"action": "finish"})
    assert not sees_other(a, "coder_b") and not sees_other(b, "coder_a")
    b.post(url, {"action": "finish"})
    assert sees_other(b, "coder_a") and sees_other(a, "coder_b")
    assert "coder_a: effort" in b.get(url + "answers/").content.decode()
    export_study(study=coded_study, out=tmp_path / "after")
    assert len(pd.read_csv(tmp_path / "after" / "codings.csv")) == 2
