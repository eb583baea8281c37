"""The R (and SPSS) hand-off of a study export: labelled data files and an R script that
refits the study's models with mgcv.

The export carries option codes and a codebook whose labels sit in one string per column
(``1=Strongly no; 2=No; ...``). ``write_r_data`` turns them into

* ``evaluations.rds`` and ``participants.rds``: R data frames in which every column whose
  codebook lists labels for the codes 1..n is a factor with those labels as levels, in code
  order (so ``as.integer()`` gives the code back); other columns keep their values;
* ``evaluations.sav`` and ``participants.sav``: SPSS files with the codes as numbers, value
  labels and each column's codebook description as its variable label;
* ``analysis.R``: reads ``evaluations.rds`` beside it and refits, with mgcv, the seed study's
  four GAMMs and the strategy contrasts per outcome (see the script's header), writing
  ``mgcv_estimates.csv``.

One call wires it into an export folder: ``write_r_data(folder, folder)`` (or
``r_data_files(folder)`` for the bytes of each file, e.g. to add them to a ZIP).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from importlib import resources
from pathlib import Path

import pandas as pd

from analysis import contract as c
from analysis.export import ExportError, StudyExport, load_export
from recourse_engine.csv_table import read_csv_table

R_SCRIPT = "analysis.R"
#: the files write_r_data writes
R_FILES = (
    f"{c.EVALUATIONS}.rds",
    f"{c.PARTICIPANTS}.rds",
    f"{c.EVALUATIONS}.sav",
    f"{c.PARTICIPANTS}.sav",
    R_SCRIPT,
)
_CODE = re.compile(r"^\s*(-?\d+)\s*=\s*(.*?)\s*$")


def parse_labels(allowed: object) -> dict[int, str] | None:
    """``"1=No; 2=Yes"`` -> {1: "No", 2: "Yes"}; None unless every part is CODE=LABEL."""
    if not isinstance(allowed, str) or "=" not in allowed:
        return None
    out: dict[int, str] = {}
    for part in allowed.split(";"):
        m = _CODE.match(part)
        if m is None or not m.group(2):
            return None
        out[int(m.group(1))] = m.group(2)
    return out or None


def read_codebook(path: str | Path) -> pd.DataFrame:
    """The export's codebook.csv (from a folder or the console's ZIP)."""
    import zipfile

    p = Path(path)
    if p.is_dir():
        book = p / c.CODEBOOK
        if not book.is_file():
            raise ExportError(f"{p}: no {c.CODEBOOK}; the labels come from it")
        return read_csv_table(book, dtype=str, keep_default_na=False)
    with zipfile.ZipFile(p) as zf:
        names = [n for n in zf.namelist() if Path(n).name == c.CODEBOOK]
        if not names:
            raise ExportError(f"{p}: the ZIP holds no {c.CODEBOOK}; the labels come from it")
        with zf.open(names[0]) as fh:
            return pd.read_csv(fh, dtype=str, keep_default_na=False, index_col=False)


def column_labels(codebook: pd.DataFrame, file: str) -> tuple[dict, dict]:
    """(value labels by column, description by column) of one export file."""
    rows = codebook.loc[codebook["file"] == file]
    values = {}
    for col, allowed in zip(rows["column"], rows["allowed"], strict=True):
        labels = parse_labels(allowed)
        if labels:
            values[col] = labels
    descriptions = dict(zip(rows["column"], rows["description"], strict=True))
    return values, descriptions


def _is_one_to_n(labels: dict[int, str]) -> bool:
    return sorted(labels) == list(range(1, len(labels) + 1))


def r_frame(frame: pd.DataFrame, values: dict[int, dict[int, str]]) -> pd.DataFrame:
    """Columns with labels for the codes 1..n (and no other code in the data) as factors
    whose levels are the labels in code order; everything else unchanged."""
    out = frame.copy()
    for col, labels in values.items():
        if col not in out or not _is_one_to_n(labels):
            continue
        codes = pd.to_numeric(out[col], errors="coerce")
        if not codes.dropna().isin(list(labels)).all():
            continue
        names = [labels[k] for k in sorted(labels)]
        if len(set(names)) != len(names):
            continue  # R factors need distinct levels
        out[col] = pd.Categorical.from_codes(codes.fillna(0).astype(int) - 1, names)
    return out


def _sav_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Types SPSS can hold: numbers stay, anything else is text (missing as empty)."""
    out = pd.DataFrame(index=frame.index)
    for col in frame.columns:
        s = frame[col]
        if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
            out[col] = s.astype(float)
        else:
            out[col] = s.astype("string").fillna("").astype(str)
    return out


def _tables(export: StudyExport) -> dict[str, pd.DataFrame]:
    return {c.EVALUATIONS: export.evaluations, c.PARTICIPANTS: export.participants}


def write_r_data(export: str | Path | StudyExport, out: str | Path) -> list[Path]:
    """Write the labelled .rds and .sav files and analysis.R of an export (a folder, the
    console's ZIP, or a loaded StudyExport) into folder `out`; returns the paths."""
    import pyreadr
    import pyreadstat

    loaded = export if isinstance(export, StudyExport) else load_export(export)
    codebook = read_codebook(loaded.directory)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, frame in _tables(loaded).items():
        values, descriptions = column_labels(codebook, f"{stem}.csv")
        rds = out / f"{stem}.rds"
        pyreadr.write_rds(rds, r_frame(frame, values), compress="gzip")
        sav = out / f"{stem}.sav"
        plain = _sav_frame(frame)
        pyreadstat.write_sav(
            plain,
            sav,
            column_labels=[descriptions.get(col, "") for col in plain.columns],
            variable_value_labels={
                col: {float(k): v for k, v in labels.items()}
                for col, labels in values.items()
                if col in plain and pd.api.types.is_numeric_dtype(plain[col])
            },
        )
        written += [rds, sav]
    script = out / R_SCRIPT
    with resources.as_file(resources.files("analysis") / "r" / R_SCRIPT) as src:
        shutil.copyfile(src, script)
    written.append(script)
    return written


def r_data_files(export: str | Path | StudyExport) -> dict[str, bytes]:
    """The same files as bytes by name (to add to a ZIP without a folder of one's own)."""
    with tempfile.TemporaryDirectory(prefix="r-data-") as tmp:
        return {p.name: p.read_bytes() for p in write_r_data(export, tmp)}
