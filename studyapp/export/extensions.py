"""Tables an installed app adds to the export: columns appended to evaluations.csv and whole
files beside it, each column with its codebook entry.

The export does not import such apps (they depend on it, so it importing them would make a
cycle); an app registers its `ExportExtension` when Django loads it (`AppConfig.ready`). The
qualitative coding (`studyapp.coding`) is one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from analysis.contract import Entry
from studyapp.models import Study


@dataclass
class ExtraTables:
    """One study's additions: `evaluation_entries` (column -> codebook entry, appended to
    evaluations.csv in this order), `evaluation_cells` (recourse id -> those columns'
    values; missing: empty), `files` (file name -> frame) and `file_entries` (file name ->
    column -> codebook entry)."""

    evaluation_entries: dict[str, Entry] = field(default_factory=dict)
    evaluation_cells: Callable[[int], dict[str, Any]] = lambda _recourse: {}
    files: dict[str, pd.DataFrame] = field(default_factory=dict)
    file_entries: dict[str, dict[str, Entry]] = field(default_factory=dict)


class ExportExtension(Protocol):
    def __call__(self, study: Study, *, with_test: bool) -> ExtraTables: ...


_EXTENSIONS: list[ExportExtension] = []


def register(extension: ExportExtension) -> None:
    """Add an app's tables to every export (once, however often the app is loaded)."""
    if extension not in _EXTENSIONS:
        _EXTENSIONS.append(extension)


def extra_tables(study: Study, *, with_test: bool = False) -> list[ExtraTables]:
    return [ext(study, with_test=with_test) for ext in _EXTENSIONS]
