"""The docs' fair_rl tables come from an output folder: mean ± sd per method, and the
effects with the rows whose difference is 0 in every run named under the table; the
tables in docs/methods.md are those of the runs kept under docs/evidence/fair_rl."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.experiment.fair_tables import tables

ROOT = Path(__file__).resolve().parents[3]


def _runs() -> pd.DataFrame:
    rows = []
    for run, (sr, twin, twin_none) in enumerate([(1.0, 0.1, 0.5), (0.8, 0.3, 0.7)]):
        for method, metric, value in [
            ("origin", "atkinson", 0.2),
            ("fair_rl/ecr", "success_rate", sr),
            ("fair_rl/ecr-no_fairness", "success_rate", sr),
            ("fair_rl/ecr", "twin_action_mismatch", twin),
            ("fair_rl/ecr-no_fairness", "twin_action_mismatch", twin_none),
            ("fair_rl/ecr-untrained", "success_rate", 0.5),
            ("fair_rl/ecr-untrained", "twin_action_mismatch", 0.9),
            ("fair_rl/ecr-mean_action", "success_rate", 1.0),
            ("fair_rl/ecr-mean_action", "twin_action_mismatch", 0.0),
            ("gs", "success_rate", 1.0),
            ("gs", "twin_action_mismatch", 0.6),
        ]:
            rows.append({"run": run, "method": method, "metric": metric, "value": value})
    return pd.DataFrame(rows)


def test_tables_from_an_output_folder(tmp_path):
    runs = _runs()
    runs.to_csv(tmp_path / "runs.csv", index=False)
    factuals = pd.DataFrame(
        {
            "run": [0, 0, 1, 1],
            "method": ["gs"] * 4,
            "group": [0, 1, 0, 1],
            "valid": [True, True, True, False],
            "sparsity": [2.0, 1.0, 1.0, 2.0],
        }
    )
    factuals.to_csv(tmp_path / "factuals.csv", index=False)
    pd.DataFrame(
        [
            {
                "method": "fair_rl/ecr",
                "reference": "fair_rl/ecr-no_fairness",
                "metric": m,
                "diff_mean": d,
                "diff_lo": lo,
                "diff_hi": hi,
                "p_holm": p,
            }
            for m, d, lo, hi, p in [
                ("success_rate", 0.0, 0.0, 0.0, 1.0),
                ("twin_action_mismatch", -0.4, -0.5, -0.3, 0.01),
            ]
        ]  # fmt: skip
    ).to_csv(tmp_path / "fair_effects.csv", index=False)
    text = tables(tmp_path).splitlines()
    assert text[0] == "| method | SR | twin action |"
    assert "| fair_rl/ecr | 0.900 ± 0.141 | 0.200 ± 0.141 |" in text
    assert "| no-fairness reward | 0.900 ± 0.141 | 0.600 ± 0.141 |" in text
    assert "| untrained | 0.500 ± 0.000 | 0.900 ± 0.000 |" in text
    assert "| ecr, mean action | 1.000 ± 0.000 | 0.000 ± 0.000 |" in text
    assert "| gs | 1.000 ± 0.000 | 0.600 ± 0.000 |" in text
    assert not any("origin" in line for line in text)
    assert "| ecr | twin_action_mismatch | -0.400 | [-0.500, -0.300] | 0.01 |" in text
    assert not any(line.startswith("| ecr | success_rate") for line in text)
    note = "2 rows in all (Holm across them); Δ = 0 in every run: ecr: success_rate."
    assert note in text
    assert "| ecr, mean action | – | – |" in text  # no factuals of its own
    assert text[-1] == "| gs | 0.500 ± 0.707 | 0.000 ± 0.000 |"  # group 1: one valid, run 0


@pytest.mark.parametrize(("name", "parts"), [("routes", 3), ("biased", 2)])
def test_the_docs_carry_the_kept_runs_tables(name, parts):
    """Levels and effects for both runs, the changed-items table for the routes only."""
    doc = (ROOT / "docs" / "methods.md").read_text(encoding="utf-8").splitlines()
    text = tables(ROOT / "docs/evidence/fair_rl" / name).split("\n\n| method | group")[0]
    if parts == 3:
        text = tables(ROOT / "docs/evidence/fair_rl" / name)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    missing = [line for line in rows if line not in doc]
    assert len(rows) > 20 and not missing, missing[:3]
