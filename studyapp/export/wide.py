"""The wide table: `participants_wide.csv` (and `.parquet`), one row per participant with
every column of participants.csv and, per plan position, the plan's strategy, method and
ratings, then each rating averaged per strategy — what a spreadsheet or SPSS user wants
without reshaping. Made from the two tidy frames the export has already built, so it cannot
disagree with them; its codebook rows are derived from theirs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import contract as c

WIDE = "participants_wide"
#: evaluation columns repeated per plan position: p<position>_<column>
PER_POSITION = ("strategy", "method", "recourse", "acceptance", "action", "sparsity",
                "proximity", "any_impossible")  # fmt: skip


def _slug(value: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in str(value)).strip("_") or "empty"


def wide_frame(participants: pd.DataFrame, evaluations: pd.DataFrame) -> pd.DataFrame:
    """One row per participant of `participants`, in its order (participants without
    evaluations keep empty plan columns)."""
    out = participants.reset_index(drop=True).copy()
    key = out["participant"].astype(str)
    if evaluations.empty:
        return out
    ev = evaluations.assign(participant=evaluations["participant"].astype(str))
    cols = [col for col in PER_POSITION if col in ev]
    by_pos = ev.pivot_table(index="participant", columns="position", values=cols,
                            aggfunc="first")  # fmt: skip
    positions = sorted(ev["position"].dropna().astype(int).unique())
    for pos in positions:
        for col in cols:
            series = by_pos[(col, pos)] if (col, pos) in by_pos.columns else pd.Series(dtype=object)
            out[f"p{pos}_{col}"] = key.map(series).to_numpy()
    for rating in c.RATING_COLUMNS:
        means = ev.groupby(["participant", "strategy"])[rating].mean().unstack("strategy")
        for strategy in means.columns:
            out[f"{rating}_mean_{_slug(strategy)}"] = key.map(means[strategy]).to_numpy()
    return out


def wide_codebook(codebook: pd.DataFrame, wide: pd.DataFrame) -> pd.DataFrame:
    """Codebook rows of `wide`'s columns (file participants_wide.csv), from the rows of
    participants.csv and evaluations.csv they are copied or averaged from."""
    entries = {}
    for file in (f"{c.EVALUATIONS}.csv", f"{c.PARTICIPANTS}.csv"):
        rows = codebook[codebook["file"] == file]
        for row in rows.itertuples(index=False):
            entries[(file, row.column)] = row
    out = []
    for col in wide.columns:
        base = entries.get((f"{c.PARTICIPANTS}.csv", col))
        if base is not None:
            out.append((col, base.type, base.allowed, base.description))
            continue
        head, _, rest = col.partition("_")
        if head[:1] == "p" and head[1:].isdigit():
            base = entries.get((f"{c.EVALUATIONS}.csv", rest))
            typ, allowed, text = (base.type, base.allowed, base.description) if base is not None \
                else ("string", "", rest)  # fmt: skip
            out.append((col, typ, allowed, f"plan at position {head[1:]}: {text}"))
            continue
        if "_mean_" not in col:
            out.append((col, "string", "", col))
            continue
        rating, _, strategy = col.partition("_mean_")
        base = entries.get((f"{c.EVALUATIONS}.csv", rating))
        question = base.description if base is not None else rating
        out.append((col, "float", f"{c.RATING_SCALE[0]}..{c.RATING_SCALE[1]}",
                    f"mean {rating} rating of the participant's plans of strategy {strategy} "
                    f"({question})"))  # fmt: skip
    frame = pd.DataFrame(out, columns=["column", "type", "allowed", "description"])
    frame.insert(0, "file", f"{WIDE}.csv")
    return frame[list(c.CODEBOOK_COLUMNS)]


def wide_from_copies(folder: Path, codebook: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The wide table from the CSV copies the streamed ZIP keeps of its two tables in
    `folder` (read back as typed), and its codebook rows."""
    from analysis.csv_safety import restore

    def read(stem: str) -> pd.DataFrame:
        # typed as the codebook says, so a text column of digits (';'-joined codes) stays text
        rows = codebook[codebook["file"] == f"{stem}.csv"]
        text = {col: str for col, t in zip(rows["column"], rows["type"], strict=True)
                if t in ("string", "datetime")}  # fmt: skip
        return restore(pd.read_csv(folder / f"{stem}.csv", dtype={**text, "participant": str}))

    wide = wide_frame(read(c.PARTICIPANTS), read(c.EVALUATIONS))
    return wide, wide_codebook(codebook, wide)
