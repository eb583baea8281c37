"""The report's section on a multi-wave study (`analysis.waves`), present only when the
export holds waves.csv: invalidation, fidelity, approvals and segregation per condition and
wave, and the GAMM of ratings on invalidation, on the participants the report covers."""

from __future__ import annotations

from typing import Any

from analysis.report.inputs import ReportError, ReportInput

#: table -> caption, in the order the section shows them
CAPTIONS = {
    "invalidation": "invalidation of fully implemented plans per condition and wave",
    "fidelity": "implementation fidelity of planned items per condition and wave",
    "approvals": "approvals per condition, wave and group",
    "segregation": "segregation indices of the population per condition and wave",
    "gamm": "GAMM of wave-k ratings on the invalidation of the wave k - 1 plan",
}


def waves_section(data: ReportInput) -> Any | None:
    """The waves analysis (`analysis.waves.WavesResult`) of the report's participants, or
    None when the export has no waves.csv; a broken waves.csv stops the report."""
    from analysis.waves import WavesError, analyse_waves, has_waves, only_participants, read_waves

    if not has_waves(data.source):
        return None
    try:
        waves = read_waves(data.source)
        kept = set(data.participants["participant"].astype(str))
        return analyse_waves(only_participants(waves, kept))
    except WavesError as exc:
        raise ReportError(str(exc)) from None


def waves_records(result: Any | None) -> dict[str, Any] | None:
    """What the template shows: each table's rows and caption, and the notes."""
    if result is None:
        return None
    tables = {
        name: {"caption": caption, "columns": list(result.tables[name].columns),
               "rows": result.tables[name].to_dict(orient="records")}
        for name, caption in CAPTIONS.items()
    }  # fmt: skip
    return {"tables": tables, "notes": result.notes}
