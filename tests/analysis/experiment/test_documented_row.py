"""A documented table row rerun from its recorded settings: German, `gao2023`, EBR in
docs/methods.md ("The reproduction report"), made by `python -m analysis reproduce --dataset
german` (paper-style data `german_gao2023`, seeds 0–9, one thread per numeric library; EBR
has no epochs or batch). The expected digits are read from the doc, not copied here, so the
test fails when either the code or the doc moves. EBR alone costs about 36 CPU seconds
(10 runs of the authors' 10-start K-Means and classifier), so it is marked slow; the
cheapest documented row there is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis.experiment.report import run_setting, setting_paired
from analysis.segregation.catalogue import names

DOC = Path(__file__).resolve().parents[3] / "docs" / "methods.md"
NUM = r"([+-]\d\.\d{4})"


def _documented_row() -> list[tuple[float, float, float]]:
    """(mean, lo, hi) of each index in German's table, row EBR under gao2023."""
    text = DOC.read_text()
    table = text.split("##### german: the paper's Table 6", 1)[1].split("\n##### ", 1)[0]
    row = next(line for line in table.splitlines() if line.startswith("| ebr | gao2023 |"))
    cells = re.findall(NUM + r" \[" + NUM + ", " + NUM + r"\]", row)
    return [(float(m), float(lo), float(hi)) for m, lo, hi in cells]


def _rederived_intervals() -> dict[str, tuple[float, float]]:
    """t intervals of German gao2023 EBR in the doc's table of changed verdicts."""
    out = {}
    pat = re.compile(
        r"^\| German \| gao2023 \| ebr \| (\w+) \| [^|]+\| [^|]+\| \[" + NUM + ", " + NUM + r"\] \|"
    )
    for line in DOC.read_text().splitlines():
        m = pat.match(line)
        if m:
            out[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return out


@pytest.mark.slow
def test_german_gao2023_ebr_row_reproduces_its_documented_digits(tmp_path):
    means = _documented_row()
    assert len(means) == len(names())
    run_setting(
        "german",
        "gao2023",
        tmp_path,
        runs=10,
        methods=["ebr"],
        training={"epochs": 15, "batch": 128},
        threads=1,
    )
    got = setting_paired(tmp_path / "gao2023").set_index("metric")
    for k, doc in zip(names(), means, strict=True):
        assert [f"{got.loc[k, c]:+.4f}" for c in ("diff_mean", "diff_lo", "diff_hi")] == [
            f"{v:+.4f}" for v in doc
        ], k
    intervals = _rederived_intervals()
    assert intervals, "the doc's re-derived table lists German gao2023 EBR"
    for k, (lo, hi) in intervals.items():
        assert f"{got.loc[k, 'diff_lo']:+.4f}" == f"{lo:+.4f}", k
        assert f"{got.loc[k, 'diff_hi']:+.4f}" == f"{hi:+.4f}", k
