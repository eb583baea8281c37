"""The analysis of a multi-wave study (issue 34): what happened to plans between waves.

Reads an export (folder or ZIP) with waves.csv and changes.csv (`analysis.contract_waves`)
and computes, per condition and wave:

* the invalidation rate: among the plans a participant followed and fully implemented
  (every planned item's `after` equals `planned`) that were valid when shown (approved by
  the model in force in the wave they were shown), the share rejected at re-application.
  The platform shows only plans the model in force approves, so "valid when shown" holds
  by construction; given the models by hash (`models=`), it is checked on the plan's
  `cf_<item>` codes instead of assumed;
* implementation fidelity: each planned item followed (after = planned), partial (moved
  towards the planned value without reaching it) or other (unchanged, or elsewhere); and the
  changes to items the plan left alone;
* approvals by group (gender, age band);
* the segregation indices of the population at each wave (every participant of the
  condition with their latest profile, so one approved early stays in the population), with
  wave 1's neighbourhoods, radius and minority (`analysis.segregation`);
* a GAMM of the ratings of wave k >= 2 on whether the participant's plan of wave k - 1 was
  invalidated at wave k, with a smooth in proximity and participant random intercepts.

Never imports Django (the analysis package's import contract)."""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis import contract as c
from analysis.export import ExportError, load_export

WAVES_CSV, CHANGES_CSV = "waves.csv", "changes.csv"
#: the columns this analysis reads (the contract's waves.csv and changes.csv have more)
WAVES_REQUIRED = ("participant", "wave", "condition", "model_hash", "decision", "followed_recourse")
CHANGES_REQUIRED = ("participant", "wave", "item", "before", "after", "planned")
DECISIONS = ("approved", "rejected", "hypothetical")
#: age bands of the approvals table: (lowest age, highest age, label)
AGE_BANDS = ((0, 29, "<30"), (30, 44, "30-44"), (45, 59, "45-59"), (60, 200, "60+"))
RATINGS = c.RATING_COLUMNS
#: the files `write_waves` writes
TABLES = ("invalidation", "fidelity", "approvals", "segregation", "gamm")


class WavesError(ValueError):
    """An export the waves analysis cannot use; the message names the file and problem."""


@dataclass
class WaveData:
    """The checked tables; participant and recourse ids as text, waves as integers."""

    source: str
    waves: pd.DataFrame
    changes: pd.DataFrame
    evaluations: pd.DataFrame
    participants: pd.DataFrame
    schema: Any


@dataclass
class WavesResult:
    tables: dict[str, pd.DataFrame]
    notes: dict[str, str] = field(default_factory=dict)


# --- reading ------------------------------------------------------------------------------


def _members(path: Path) -> dict[str, bytes]:
    """waves.csv and changes.csv of a folder, or of the ZIP folder holding evaluations.csv."""
    if path.is_dir():
        return {
            p.name: p.read_bytes() for p in path.iterdir() if p.name in (WAVES_CSV, CHANGES_CSV)
        }
    if not zipfile.is_zipfile(path):
        raise WavesError(f"{path}: neither an export folder nor a ZIP file")
    with zipfile.ZipFile(path) as zf:
        names = [i.filename for i in zf.infolist() if not i.is_dir()]
        tables = [n for n in names if Path(n).stem == c.EVALUATIONS]
        folder = Path(tables[0]).parent if tables else Path(".")
        return {
            Path(n).name: zf.read(n)
            for n in names
            if Path(n).parent == folder and Path(n).name in (WAVES_CSV, CHANGES_CSV)
        }


def has_waves(path: str | Path) -> bool:
    """Whether the export (folder or ZIP) holds waves.csv: a multi-wave study's."""
    p = Path(path)
    try:
        return WAVES_CSV in _members(p)
    except (WavesError, OSError, zipfile.BadZipFile):
        return False


def _table(
    source: str, files: dict[str, bytes], name: str, required: tuple[str, ...]
) -> pd.DataFrame:
    if name not in files:
        raise WavesError(f"{source}: the export has no {name} (not a multi-wave study's export)")
    try:
        frame = pd.read_csv(io.BytesIO(files[name]), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise WavesError(
            f"{source}: {name}: cannot read CSV ({str(exc).splitlines()[0]})"
        ) from None
    missing = [col for col in required if col not in frame.columns]
    if missing:
        raise WavesError(
            f"{source}: {name} lacks the column(s) {', '.join(missing)} (the waves analysis "
            f"needs {', '.join(required)}; export the study again)"
        )
    return frame


def _integers(
    frame: pd.DataFrame, column: str, where: str, *, low: int, empty: bool = False
) -> pd.Series:
    raw = frame[column].astype(str).str.strip()
    values = pd.to_numeric(raw.where(raw != "", None), errors="coerce")
    bad = (values.isna() & (raw != "" if empty else True)) | (
        values.notna() & ((values % 1 != 0) | (values < low))
    )
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise WavesError(
            f"{where}: row {row + 1}, column {column!r}: {raw.iloc[row]!r} is not a whole "
            f"number >= {low}" + (" (or empty)" if empty else "")
        )
    return values.astype("Int64")


def _check_waves(source: str, w: pd.DataFrame) -> pd.DataFrame:
    where = f"{source}: {WAVES_CSV}"
    w = w.assign(participant=w["participant"].astype(str).str.strip())
    w["wave"] = _integers(w, "wave", where, low=1).astype(int)
    w["followed_recourse"] = w["followed_recourse"].astype(str).str.strip()
    bad = ~w["decision"].isin(DECISIONS)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise WavesError(
            f"{where}: row {row + 1}, column 'decision': {w['decision'].iloc[row]!r} is not one "
            f"of {', '.join(DECISIONS)}"
        )
    dup = w.duplicated(["participant", "wave"])
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise WavesError(f"{where}: row {row + 1}: participant and wave repeat an earlier row")
    return w


def read_waves(path: str | Path) -> WaveData:
    """The export's tables for the waves analysis, checked; WavesError names what is wrong."""
    p = Path(path)
    source = str(p)
    if not p.exists():
        raise WavesError(f"{source}: no such file or folder")
    files = _members(p)
    waves = _check_waves(source, _table(source, files, WAVES_CSV, WAVES_REQUIRED))
    ch = _table(source, files, CHANGES_CSV, CHANGES_REQUIRED)
    where = f"{source}: {CHANGES_CSV}"
    ch = ch.assign(participant=ch["participant"].astype(str).str.strip())
    ch["wave"] = _integers(ch, "wave", where, low=2).astype(int)
    for col, empty in (("before", False), ("after", False), ("planned", True)):
        raw = ch[col].astype(str).str.strip()
        num = pd.to_numeric(raw.where(raw != "", None), errors="coerce")
        bad = num.isna() & ((raw != "") | (not empty))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise WavesError(
                f"{where}: row {row + 1}, column {col!r}: {raw.iloc[row]!r} is not a number"
            )
        ch[col] = num
    try:
        export = load_export(p)
    except ExportError as exc:
        raise WavesError(str(exc)) from None
    ev = export.evaluations.copy()
    ev["participant"] = ev["participant"].astype(str)
    ev["recourse"] = ev["recourse"].astype(str)
    if "wave" in ev.columns:
        ev["wave"] = _integers(ev, "wave", f"{source}: evaluations", low=1).astype(int)
    else:
        ev["wave"] = 1  # a single-wave export: every plan was shown in wave 1
    pa = export.participants.copy()
    pa["participant"] = pa["participant"].astype(str)
    known = set(waves["participant"])
    stray = sorted(set(ch["participant"]) - known)
    if stray:
        raise WavesError(f"{where}: participant {stray[0]} has no row in {WAVES_CSV}")
    return WaveData(source, waves, ch, ev, pa, export.schema)


def only_participants(data: WaveData, participants: set[str]) -> WaveData:
    """The same data restricted to `participants` (ids as text), e.g. without test ones."""

    def keep(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["participant"].astype(str).isin(participants)].reset_index(drop=True)

    return WaveData(
        data.source,
        keep(data.waves),
        keep(data.changes),
        keep(data.evaluations),
        keep(data.participants),
        data.schema,
    )


# --- the tables ---------------------------------------------------------------------------


def _reapplications(data: WaveData) -> pd.DataFrame:
    """One row per participant x wave k >= 2 with the wave k - 1 row's followed plan and
    model beside it (`prev_followed`, `prev_hash`)."""
    w = data.waves
    prev = w[["participant", "wave", "followed_recourse", "model_hash"]].rename(
        columns={"followed_recourse": "prev_followed", "model_hash": "prev_hash"}
    )
    prev = prev.assign(wave=prev["wave"] + 1)
    return w[w["wave"] >= 2].merge(prev, on=["participant", "wave"], how="left")


def _valid_when_shown(data: WaveData, rows: pd.DataFrame, models: Mapping[str, Any]) -> np.ndarray:
    schema = data.schema
    if schema is None:
        raise WavesError(f"{data.source}: checking plans against models needs the schema.json")
    cf = [f"{c.COUNTERFACTUAL_PREFIX}{k}" for k in schema.keys]
    plans = data.evaluations.drop_duplicates("recourse").set_index("recourse")
    out = np.zeros(len(rows), dtype=bool)
    for i, (rid, mhash) in enumerate(zip(rows["prev_followed"], rows["prev_hash"], strict=True)):
        if rid not in plans.index:
            raise WavesError(f"{data.source}: followed recourse {rid} is not in evaluations.csv")
        if mhash not in models:
            raise WavesError(f"{data.source}: no model with hash {mhash} was given")
        codes = plans.loc[rid, cf].to_numpy(dtype=float)[None, :]
        out[i] = bool(models[mhash].approves(codes)[0])
    return out


def participant_invalidation(
    data: WaveData, models: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """Per participant x wave k >= 2: followed a plan of wave k - 1, implemented it fully,
    it was valid when shown, and `invalidated` (all three and rejected at wave k)."""
    r = _reapplications(data)
    r["followed"] = r["prev_followed"].fillna("").astype(str) != ""
    planned = data.changes[data.changes["planned"].notna()]
    done = planned.assign(hit=planned["after"] == planned["planned"])
    full = done.groupby(["participant", "wave"])["hit"].all().rename("full").reset_index()
    r = r.merge(full, on=["participant", "wave"], how="left")
    r["full"] = r["followed"] & r["full"].fillna(False).astype(bool)
    r["valid"] = True
    if models is not None and r["full"].any():
        r.loc[r["full"], "valid"] = _valid_when_shown(data, r[r["full"]], models)
    r["invalidated"] = r["full"] & r["valid"] & (r["decision"] == "rejected")
    cols = [
        "participant",
        "wave",
        "condition",
        "decision",
        "followed",
        "full",
        "valid",
        "invalidated",
    ]
    return r[cols].reset_index(drop=True)


def invalidation(data: WaveData, models: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Per condition and wave k >= 2: re-applications, plans followed, fully implemented and
    valid when shown, invalidated, and the rate (invalidated / fully implemented and valid)."""
    r = participant_invalidation(data, models)
    r["full_valid"] = r["full"] & r["valid"]
    g = r.groupby(["condition", "wave"], sort=True)
    out = g.agg(
        reapplied=("participant", "size"),
        followed=("followed", "sum"),
        fully_implemented=("full_valid", "sum"),
        invalidated=("invalidated", "sum"),
    ).reset_index()
    n = out["fully_implemented"].astype(float)
    out["invalidation_rate"] = np.where(n > 0, out["invalidated"] / n.where(n > 0, 1), np.nan)
    return out


def _status(before: np.ndarray, after: np.ndarray, planned: np.ndarray) -> np.ndarray:
    followed = after == planned
    towards = np.sign(after - before) == np.sign(planned - before)
    partial = (
        ~followed
        & (after != before)
        & towards
        & (np.abs(after - before) < np.abs(planned - before))
    )
    return np.where(followed, "followed", np.where(partial, "partial", "other"))


def _with_condition(data: WaveData, frame: pd.DataFrame) -> pd.DataFrame:
    cond = data.waves[["participant", "wave", "condition"]]
    return frame.merge(cond, on=["participant", "wave"], how="left")


def fidelity(data: WaveData) -> pd.DataFrame:
    """Per condition and wave: planned items followed, partial and other (counts and
    shares), and changes to items the plan left alone."""
    ch = _with_condition(data, data.changes)
    planned = ch[ch["planned"].notna()].copy()
    planned["status"] = _status(
        planned["before"].to_numpy(float),
        planned["after"].to_numpy(float),
        planned["planned"].to_numpy(float),
    )
    keys = ["condition", "wave"]
    counts = pd.crosstab([planned["condition"], planned["wave"]], planned["status"])
    counts = counts.reindex(columns=["followed", "partial", "other"], fill_value=0).reset_index()
    counts.columns.name = None
    unplanned = ch[ch["planned"].isna() & (ch["after"] != ch["before"])]
    extra = unplanned.groupby(keys).size().rename("unplanned_changes").reset_index()
    out = counts.merge(extra, on=keys, how="outer").fillna(0)
    for col in ("followed", "partial", "other", "unplanned_changes"):
        out[col] = out[col].astype(int)
    out["planned_items"] = out["followed"] + out["partial"] + out["other"]
    for col in ("followed", "partial", "other"):
        out[f"share_{col}"] = out[col] / out["planned_items"].where(out["planned_items"] > 0)
    return out.sort_values(keys).reset_index(drop=True)


def age_band(age: Any) -> str:
    """The band of `AGE_BANDS` an age falls in ("" when it is missing or not a number)."""
    try:
        a = float(age)
    except (TypeError, ValueError):
        return ""
    if not math.isfinite(a):
        return ""
    return next((label for lo, hi, label in AGE_BANDS if lo <= a <= hi), "")


def approvals(data: WaveData) -> pd.DataFrame:
    """Per condition, wave and group (gender; age band): participants scored, approved
    (decision approved or hypothetical: the model approved), and the approval rate."""
    cols = [col for col in ("gender", "age") if col in data.participants.columns]
    w = data.waves.merge(data.participants[["participant", *cols]], on="participant", how="left")
    w["approved"] = w["decision"] != "rejected"
    frames = []
    if "gender" in w:
        frames.append(w.assign(grouping="gender", group=w["gender"].fillna("").astype(str)))
    if "age" in w:
        frames.append(w.assign(grouping="age_band", group=w["age"].map(age_band)))
    if not frames:
        return pd.DataFrame(
            columns=["condition", "wave", "grouping", "group", "n", "approved", "approval_rate"]
        )
    long = pd.concat(frames, ignore_index=True)
    out = (
        long.groupby(["condition", "wave", "grouping", "group"])
        .agg(n=("participant", "size"), approved=("approved", "sum"))
        .reset_index()
    )
    out["approval_rate"] = out["approved"] / out["n"]
    return out


def populations(data: WaveData, condition: str) -> dict[int, pd.DataFrame]:
    """Wave -> every participant of the condition with their latest profile up to it."""
    w = data.waves[data.waves["condition"] == condition]
    out = {}
    for wave in sorted(w["wave"].unique()):
        latest = w[w["wave"] <= wave].sort_values("wave").groupby("participant").tail(1)
        out[int(wave)] = latest.sort_values("participant").reset_index(drop=True)
    return out


def wave_segregation(data: WaveData, group: str = "gender") -> tuple[pd.DataFrame, str]:
    """Per condition and wave, the segregation indices of the population (the table, and a
    note of what was computed or why not)."""
    from analysis.segregation.indices import SegregationInputError, segregation_indices
    from recourse_engine import carloan_schema
    from recourse_engine.encoding import normalise

    schema = data.schema if data.schema is not None else carloan_schema()
    xcols = [f"{c.PROFILE_PREFIX}{k}" for k in schema.keys]
    missing = [col for col in xcols if col not in data.waves.columns]
    if missing:
        return pd.DataFrame(), f"not available because {WAVES_CSV} lacks {', '.join(missing)}"
    if group not in data.participants.columns:
        return pd.DataFrame(), f"not available because participants.csv has no column {group!r}"
    groups = data.participants.set_index("participant")[group].astype(str)
    rows, notes = [], []
    for cond in sorted(data.waves["condition"].unique()):
        base = None
        for wave, pop in populations(data, cond).items():
            g = pop["participant"].map(groups).fillna("")
            top = g[g != ""].value_counts().index[:2]
            keep = g.isin(top).to_numpy()
            X = normalise(schema, pop.loc[keep, xcols].to_numpy(dtype=float))
            try:
                if base is None:
                    clusters = max(2, min(30, len(X) // 10))
                    base = segregation_indices(X, g[keep].to_numpy(), clusters=clusters, seed=0)
                    res = base
                else:
                    res = segregation_indices(
                        X, g[keep].to_numpy(), minority=base.minority, eps=base.eps,
                        kmeans=base.kmeans,
                    )  # fmt: skip
            except (SegregationInputError, ValueError) as exc:
                notes.append(f"condition {cond!r} wave {wave}: {str(exc).splitlines()[0]}")
                break
            rows.append({"condition": cond, "wave": wave, "n": res.n, "n_minority": res.n_minority,
                         "minority": str(res.minority), **res.values})  # fmt: skip
    note = (
        f"every participant of the condition with their latest profile at each wave, grouped "
        f"by {group!r} (the two most frequent values); wave 1's neighbourhoods, radius and "
        "minority in every wave"
    )
    return pd.DataFrame(rows), note + ("; " + "; ".join(notes) if notes else "")


def invalidation_gamm(
    data: WaveData, rating: str = "acceptance", models: Mapping[str, Any] | None = None
) -> tuple[pd.DataFrame, str]:
    """`rating ~ invalidated + s(proximity) + s(participant, bs = "re")` on the evaluations
    of waves k >= 2, `invalidated` whether the participant's plan of wave k - 1 was
    invalidated at wave k; the term table, and a note (or why it could not be fitted)."""
    from analysis.gamm import GammInputError, fit_formula
    from analysis.gamm.results import to_frame

    inv = participant_invalidation(data, models)[["participant", "wave", "invalidated"]]
    ev = data.evaluations[data.evaluations["wave"] >= 2]
    ev = ev.merge(inv, on=["participant", "wave"], how="inner")
    frame = pd.DataFrame({
        rating: pd.to_numeric(ev[rating], errors="coerce"),
        "invalidated": ev["invalidated"].astype(float),
        "proximity": pd.to_numeric(ev["proximity"], errors="coerce"),
        "uid": ev["participant"].astype(str),
    }).dropna()  # fmt: skip
    what = f"{len(frame)} evaluations of {frame['uid'].nunique()} participants in waves >= 2"
    if len(frame) < 10 or frame["invalidated"].nunique() < 2:
        return pd.DataFrame(), (
            f"not fitted: {what}, "
            + ("fewer than 10" if len(frame) < 10 else "invalidation does not vary")
        )
    k = max(3, min(10, frame["proximity"].nunique() - 1))
    formula = f"{rating} ~ invalidated + s(proximity, k = {k}) + s(uid, bs = 're')"
    try:
        fit = fit_formula(formula, frame)
    except (GammInputError, ValueError, np.linalg.LinAlgError) as exc:
        return pd.DataFrame(), f"not fitted: {str(exc).splitlines()[0]}"
    table = to_frame(fit)
    table.insert(0, "rating", rating)
    return table, f"{formula} (REML) on {what}"


def analyse_waves(
    path: str | Path | WaveData, models: Mapping[str, Any] | None = None
) -> WavesResult:
    """Every table of this module for an export (WavesError on bad input)."""
    data = path if isinstance(path, WaveData) else read_waves(path)
    seg, seg_note = wave_segregation(data)
    gamms, gamm_notes = [], []
    for rating in RATINGS:
        table, note = invalidation_gamm(data, rating, models)
        gamms.append(table)
        gamm_notes.append(f"{rating}: {note}")
    gamm = (
        pd.concat([t for t in gamms if not t.empty], ignore_index=True)
        if any(not t.empty for t in gamms)
        else pd.DataFrame()
    )
    tables = {
        "invalidation": invalidation(data, models),
        "fidelity": fidelity(data),
        "approvals": approvals(data),
        "segregation": seg,
        "gamm": gamm,
    }
    notes = {"segregation": seg_note, "gamm": "; ".join(gamm_notes)}
    return WavesResult(tables, notes)


def write_waves(result: WavesResult, out: Path) -> list[Path]:
    """One CSV per table, and notes.txt; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in TABLES:
        path = out / f"waves_{name}.csv"
        result.tables[name].to_csv(path, index=False)
        written.append(path)
    notes = out / "waves_notes.txt"
    notes.write_text("".join(f"{k}: {v}\n" for k, v in result.notes.items()), encoding="utf-8")
    return [*written, notes]
