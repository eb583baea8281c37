"""A study's codebook: the codes coders may give an answer, each with a definition and an
example, as a researcher writes them in a spreadsheet (`code,definition,example`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from recourse_engine.csv_table import read_csv_table

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


class CodebookError(ValueError):
    """A codebook that cannot be used; the message names the code and the problem."""


@dataclass(frozen=True)
class Code:
    name: str
    definition: str = ""
    example: str = ""


@dataclass(frozen=True)
class Codebook:
    codes: tuple[Code, ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.codes]

    @classmethod
    def of(cls, rows: list[dict[str, str]]) -> Codebook:
        """From rows with `code` (and optional `definition`, `example`); duplicate or
        malformed names are refused, naming the row."""
        codes, seen = [], set()
        for i, row in enumerate(rows, start=1):
            name = str(row.get("code") or "").strip()
            if not _NAME.match(name):
                raise CodebookError(
                    f"row {i}: code {name!r} must be 1-40 lower-case letters, digits or '_', "
                    "starting with a letter"
                )
            if name in seen:
                raise CodebookError(f"row {i}: duplicate code {name!r}")
            seen.add(name)
            codes.append(
                Code(name, str(row.get("definition") or ""), str(row.get("example") or ""))
            )
        if not codes:
            raise CodebookError("the codebook holds no code")
        return cls(tuple(codes))

    @classmethod
    def read(cls, path: Path | str) -> Codebook:
        frame = read_csv_table(path, dtype=str, keep_default_na=False)
        if "code" not in frame.columns:
            raise CodebookError(
                f"{path}: needs a 'code' column (and optionally definition, example)"
            )
        try:
            return cls.of(frame.to_dict("records"))
        except CodebookError as exc:
            raise CodebookError(f"{path}: {exc}") from None
