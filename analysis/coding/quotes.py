"""Exemplar quotes for a paper: for chosen codes or rating bands, the answers with the
participant's pseudonymous id, the recourse's strategy, sparsity, proximity and rating, as
CSV, Markdown or LaTeX (LaTeX by pandas, special characters escaped)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from analysis.csv_safety import neutralise

#: the free-text answers and the rating each one explains
FIELDS = {"acceptance_why": "acceptance", "action_why": "action"}
COLUMNS = ["participant", "strategy", "sparsity", "proximity", "rating", "question", "quote"]


def quotes_table(
    evaluations: pd.DataFrame,
    codes: pd.DataFrame | None = None,
    *,
    want: Sequence[str] = (),
    ratings: tuple[int, int] | None = None,
    field: str | None = None,
) -> pd.DataFrame:
    """One row per non-empty answer: of the codes in `want` (via `codes`: unit, code with
    units `<recourse>:<field>`), with a rating in the closed band `ratings`, of one `field`
    or both."""
    fields = [field] if field else list(FIELDS)
    for f in fields:
        if f not in FIELDS:
            raise ValueError(f"unknown answer field {f!r}; expected one of {', '.join(FIELDS)}")
        if f not in evaluations.columns:
            raise ValueError(f"the evaluations hold no {f!r} column (export them with the text)")
    if want and codes is None:
        raise ValueError("choosing quotes by code needs the codes")
    frames = []
    for f in fields:
        part = evaluations[evaluations[f].fillna("").astype(str).str.strip() != ""]
        frame = pd.DataFrame(
            {
                "unit": part["recourse"].astype(str) + ":" + f,
                "participant": part["participant"],
                "strategy": part["strategy"],
                "sparsity": part["sparsity"],
                "proximity": part["proximity"].round(3),
                "rating": part[FIELDS[f]],
                "question": FIELDS[f],
                "quote": part[f].astype(str).str.strip(),
            }
        )
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    if ratings is not None:
        lo, hi = ratings
        if lo > hi:
            raise ValueError(f"rating band {lo}-{hi} is empty")
        table = table[table["rating"].between(lo, hi)]
    if want:
        chosen = codes[codes["code"].isin(want)][["unit", "code"]]
        unknown = sorted(set(want) - set(codes["code"]))
        if unknown:
            raise ValueError(f"no answer has the code {unknown[0]!r}")
        table = table.merge(chosen, on="unit")
    return table.sort_values(["participant", "unit"]).reset_index(drop=True)


def _markdown(frame: pd.DataFrame) -> str:
    """A pipe table (pandas' to_markdown needs `tabulate`, which nothing else here uses)."""

    def cell(v: object) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += [
        "| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)
    ]
    return "\n".join(lines) + "\n"


def write_quotes(table: pd.DataFrame, out: Path, stem: str = "quotes") -> list[Path]:
    """`<stem>.csv`, `.md` and `.tex` in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    cols = [c for c in [*COLUMNS, "code"] if c in table.columns]
    shown = table[cols]
    paths = [out / f"{stem}.csv", out / f"{stem}.md", out / f"{stem}.tex"]
    neutralise(shown).to_csv(paths[0], index=False)
    paths[1].write_text(_markdown(shown))
    paths[2].write_text(shown.to_latex(index=False, escape=True, longtable=True))
    return paths
