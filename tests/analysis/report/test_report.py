"""`recourse-analysis report` on an export with every outcome: the flow's counts are the
export's own, the descriptives are pandas' groupby of the export, the page is self-contained,
the LaTeX tables compile, and bad input writes nothing."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.report.descriptives import descriptives
from analysis.report.flow import participant_flow
from analysis.report.inputs import read_input
from tests.analysis.report.every_outcome import DEMO, every_outcome_export


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return every_outcome_export(tmp_path_factory.mktemp("eo") / "export")


@pytest.fixture(scope="module")
def report(export: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "out"
    argv = ["report", "--export", str(export), "--out", str(out), "--no-ordinal",
            "--bootstrap", "5", "--min-per-level", "10"]  # fmt: skip
    assert main(argv) == 0
    return out


def _real(export: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    pa = pd.read_csv(export / "participants.csv", dtype={"participant": str})
    ev = pd.read_csv(export / "evaluations.csv", dtype={"participant": str})
    real = pa.loc[pa["is_test"] != 1]
    return real, ev.loc[ev["participant"].isin(real["participant"])]


def test_flow_counts_are_the_exports_state_counts(export: Path) -> None:
    real, _ = _real(export)
    data = read_input(export)
    flow = participant_flow(data.participants, data.n_test, data.with_test)
    expected = real["outcome"].value_counts().to_dict()
    left = {}
    for stage in flow.stages:
        for outcome, n in stage.exits.items():
            left[outcome] = left.get(outcome, 0) + n
    assert left == {k: v for k, v in expected.items() if k != "completed"}
    assert flow.completed == expected["completed"]
    assert flow.outcomes == expected
    assert flow.started == len(real)
    assert flow.n_test == 2
    # every outcome of the issue is in this export, and the by-state table is the export's
    assert set(expected) >= {"declined_consent", "screened_out", "approved", "failed_attention",
                             "quota_full", "withdrew", "expired"}  # fmt: skip
    by_state = real.groupby("state").size()
    assert flow.by_state.sum(axis=1).to_dict() == by_state.to_dict()
    # those who left before consent are the rows without a consent time
    assert sum(flow.stages[0].exits.values()) == int(real["consented_at"].isna().sum())


def test_descriptive_means_are_pandas_groupby(export: Path) -> None:
    _, ev = _real(export)
    table = descriptives(read_input(export).evaluations, "strategy")
    for rating in ("acceptance", "action"):
        grouped = ev.groupby("strategy")[rating]
        mine = table[table["rating"] == rating].set_index("strategy")
        pd.testing.assert_series_equal(mine["mean"], grouped.mean(), check_names=False)
        assert mine["n"].to_dict() == grouped.size().to_dict()
        for level, values in grouped:
            assert mine.loc[level, "sd"] == pytest.approx(statistics.stdev(values))
            assert mine.loc[level, "median"] == statistics.median(values)
            counts = values.value_counts()
            assert [mine.loc[level, f"n_{p}"] for p in range(1, 8)] == [
                int(counts.get(p, 0)) for p in range(1, 8)
            ]


def test_report_files_and_the_pages_figures(report: Path, export: Path) -> None:
    html = (report / "report.html").read_text(encoding="utf-8")
    for name in ("flow", "descriptives", "contrasts", "gamm_table_s2", "segregation", "states"):
        assert (report / "tables" / f"{name}.csv").is_file()
        assert (report / "tables" / f"{name}.tex").is_file()
    for name in ("flow", "smooths", "contrasts", "gamm_smooths", "segregation"):
        assert (report / "figures" / f"{name}.pdf").read_bytes()[:4] == b"%PDF"
        assert (report / "figures" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    # the outcome cells of the page are the export's counts
    real, _ = _real(export)
    cells = dict(re.findall(r'data-outcome="([a-z_]+)">(\d+)<', html))
    assert {k: int(v) for k, v in cells.items()} == real["outcome"].value_counts().to_dict()
    assert "2</strong>test participants left out" in html
    assert "Coding agreement: not available because the export has no codings.csv" in html


def test_the_page_fetches_nothing(report: Path) -> None:
    html = (report / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert not re.search(r"https?://", html)
    assert "url(" not in html and "@import" not in html
    assert html.count('src="data:image/png;base64,') >= 5


def test_latex_tables_compile(report: Path, tmp_path: Path) -> None:
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.skip("pdflatex missing: apt-get install texlive-latex-base (scripts/setup dev)")
    tables = sorted((report / "tables").glob("*.tex"))
    body = "\n".join(rf"\input{{{t}}}\par\bigskip" for t in tables)
    doc = tmp_path / "all.tex"
    doc.write_text(
        "\\documentclass{article}\n\\usepackage[margin=5mm,paperwidth=120cm,paperheight=200cm]"
        "{geometry}\n\\begin{document}\n\\tiny\n" + body + "\n\\end{document}\n"
    )
    run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", doc.name],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]
    assert (tmp_path / "all.pdf").is_file()


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


def test_missing_file_is_named_and_nothing_written(tmp_path: Path, capsys) -> None:
    export = tmp_path / "export"
    shutil.copytree(DEMO, export)
    (export / "codebook.csv").unlink()
    out = tmp_path / "out"
    err = _fails(["report", "--export", str(export), "--out", str(out), "--with-test"], capsys)
    assert "the export lacks codebook.csv" in err and err.count("\n") == 1
    assert not out.exists() or not any(out.iterdir())


def test_codebook_without_a_needed_column(tmp_path: Path, capsys) -> None:
    export = tmp_path / "export"
    shutil.copytree(DEMO, export)
    codebook = pd.read_csv(export / "codebook.csv")
    codebook.drop(columns=["description"]).to_csv(export / "codebook.csv", index=False)
    out = tmp_path / "out"
    err = _fails(["report", "--export", str(export), "--out", str(out), "--with-test"], capsys)
    assert "codebook.csv lacks the column(s) description" in err
    assert not out.exists() or not any(out.iterdir())
    # a codebook without the ratings' rows is refused too
    codebook[codebook["column"] != "action"].to_csv(export / "codebook.csv", index=False)
    err = _fails(["report", "--export", str(export), "--out", str(out), "--with-test"], capsys)
    assert "has no entry for evaluations.csv action" in err
    assert not out.exists() or not any(out.iterdir())


def test_only_test_participants_needs_with_test(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    err = _fails(["report", "--export", str(DEMO), "--out", str(out)], capsys)
    assert "all 60 participants are test participants" in err and "--with-test" in err
    assert not out.exists()


def test_the_consoles_zip_reads_as_the_folder(export: Path, tmp_path: Path) -> None:
    archive = Path(shutil.make_archive(str(tmp_path / "study-export"), "zip", export.parent,
                                       export.name))  # fmt: skip
    folder, zipped = read_input(export), read_input(archive)
    assert zipped.n_test == folder.n_test == 2
    pd.testing.assert_frame_equal(zipped.participants, folder.participants)
    assert zipped.codebook.equals(folder.codebook)
