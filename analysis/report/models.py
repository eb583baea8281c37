"""The report's models, each the existing command's own: the seed study's four GAMMs
(Table S2, `analysis.study.seed_report`) with their ordinal robustness fits
(`analysis.gamm.ordinal`), and the comparison of strategies or methods (contrasts, smooths
by level, the test of whether the distance effect differs: `analysis.study.methods_report`).

A model that cannot be fitted to this export does not stop the report: its section says
why, in one sentence (the export and its descriptives are still worth reading)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from analysis.export import StudyExport
from analysis.gamm.validate import GammInputError
from analysis.study.methods_report import StudyReport, build_report
from analysis.study.selection import StudyReportError


@dataclass
class SeedModels:
    table: pd.DataFrame | None = None
    fits: list[Any] = field(default_factory=list, repr=False)
    ordinal: pd.DataFrame | None = None
    unavailable: str = ""
    ordinal_unavailable: str = ""


@dataclass
class Models:
    seed: SeedModels
    comparison: StudyReport | None
    comparison_unavailable: str = ""

    def contrasts(self) -> pd.DataFrame:
        if self.comparison is None:
            return pd.DataFrame()
        rows = [
            {"outcome": name, "reference": self.comparison.reference, **vars(x)}
            for name, o in self.comparison.outcomes.items()
            for x in o.contrasts
        ]
        return pd.DataFrame(rows)

    def verdicts(self) -> list[str]:
        if self.comparison is None:
            return []
        return [o.comparison.verdict for o in self.comparison.outcomes.values()]


_FAILS = (GammInputError, StudyReportError, np.linalg.LinAlgError, ValueError)


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def seed_models(export: StudyExport, *, k: int, ordinal: bool) -> SeedModels:
    """Table S2's GAMMs on the evaluations without an impossible item, and their ordinal
    twins when `ordinal`."""
    from analysis.study.seed_report import PARTICIPANT, fit_seed_models, table_s2

    kept = export.kept_evaluations()
    try:
        fits = fit_seed_models(kept, "tp", k, progress=False)
    except _FAILS as exc:
        return SeedModels(unavailable=f"the GAMMs could not be fitted: {_first_line(exc)}")
    out = SeedModels(table=table_s2(fits), fits=fits)
    if not ordinal:
        out.ordinal_unavailable = "not fitted (--no-ordinal)"
        return out
    from analysis.gamm.ordinal import compare_with_gaussian

    try:
        robust = compare_with_gaussian(kept, fits, PARTICIPANT, "tp", k, False)
    except _FAILS as exc:
        out.ordinal_unavailable = f"the ordinal models could not be fitted: {_first_line(exc)}"
        return out
    rows = []
    for name, r in robust.items():
        o = r["ordinal"]
        rows.append({
            "model": name, "outcome": r["outcome"], "distance": r["distance"],
            "gaussian_edf": r["gaussian"]["edf"], "gaussian_p": r["gaussian"]["p"],
            "ordinal_edf": o.get("edf", np.nan), "ordinal_p": o.get("p", np.nan),
            "same_conclusion": r["same_conclusion"], "note": r["note"],
        })  # fmt: skip
    out.ordinal = pd.DataFrame(rows)
    return out


def comparison_models(
    export: StudyExport, source: str, factor: str, *, k: int, min_per_level: int
) -> tuple[StudyReport | None, str]:
    """`recourse-analysis methods`'s report of `factor`, or None and why not."""
    try:
        return build_report(export, source, factor, "proximity", None,
                            min_per_level=min_per_level, k=k), ""  # fmt: skip
    except _FAILS as exc:
        return None, _first_line(exc).removeprefix(f"{source}: ")


def fit_models(
    export: StudyExport, source: str, factor: str, *, k: int = 10, ordinal: bool = True,
    min_per_level: int = 20,
) -> Models:  # fmt: skip
    seed = seed_models(export, k=k, ordinal=ordinal)
    comparison, why = comparison_models(export, source, factor, k=k, min_per_level=min_per_level)
    return Models(seed, comparison, why)
