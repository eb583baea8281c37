"""The reproduction report: the paper's changes from Table 6, the claims read from verdicts,
and the command's refusals (the full command runs three experiments and is not run here)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.experiment.paper import paper_change, paper_origin
from analysis.experiment.report import claims, setting
from analysis.segregation.catalogue import names


def test_paper_changes_are_differences_of_table_6_means():
    # Table 6, Law (Sex): Origin centralization 0.0858, IBR 0.0694; Wachter Atkinson 0.0326
    assert paper_origin("law_sex", "centralization") == 0.0858
    assert paper_change("law_sex", "ibr", "centralization") == pytest.approx(0.0694 - 0.0858)
    assert paper_change("law_sex", "wachter", "atkinson") == pytest.approx(0.0326 - 0.0319)
    assert paper_change("german", "cruds", "avg_proximity") == pytest.approx(0.4548 - 0.3051)


def _results(verdicts: dict[tuple[str, str], str]) -> pd.DataFrame:
    rows = [{"method": "origin", "metric": "atkinson", "verdict": None}]
    rows += [{"method": m, "metric": k, "verdict": v} for (m, k), v in verdicts.items()]
    return pd.DataFrame(rows)


def test_claims_follow_the_interval_verdicts():
    idx = names()
    all_better = {(m, k): "better" for m in ("ebr", "ibr") for k in idx}
    res = {
        "a": _results({**all_better, ("gs", "atkinson"): "worse"}),
        "b": _results({**all_better, ("ibr", "atkinson"): "no clear change"}),
    }
    a, b = claims("x", res, ["ebr", "ibr", "gs"])
    assert "reduce every index — holds" in a and "worse — holds (gs)" in a
    n = len(idx)
    assert "does not hold" in b and f"IBR better on {n - 1}/{n}" in b and "worse — not shown" in b


def test_settings_of_the_report():
    assert setting("gao2023_defects").replicate_defects
    assert setting("gao2023").preset == "gao2023" and not setting("gao2023").replicate_defects
    assert setting("sound").preset == "sound"


def test_reproduce_refuses_an_unknown_data_set_and_method(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "--dataset", "adult", "--out", str(tmp_path / "a")])
    assert exc.value.code == 2
    out = tmp_path / "b"
    argv = ["reproduce", "--dataset", "law_sex", "--methods", "ebr,magic", "--out", str(out)]
    assert main(argv) == 2
    assert "unknown method 'magic'" in capsys.readouterr().err and not out.exists()
