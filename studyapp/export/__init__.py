"""Study export: tidy tables (docs/export.md) and a codebook describing every column.

`evaluations.csv` has one row per evaluation, `participants.csv` one per participant,
`page_visits.csv` one per page a participant was shown (paradata),
`codebook.csv` one per column of both, `schema.json` the study's schema (so analyses can
decode item codes). The access code is never exported; panel ids (recruitment id, panel
parameters) and free-text answers only when asked for. Columns, types and wording are the
contract's (`analysis.contract`), which the analysis reader and the API use too.

The package is split by concern: `tables` (rows and frames), `codebook`, `files` (the folder
and Parquet typing), `stream` (the streamed ZIP); callers need only the names below.
"""

from studyapp.export.codebook import ExportError, codebook_frame
from studyapp.export.files import export_study
from studyapp.export.stream import export_zip_stream
from studyapp.export.tables import evaluations_frame, page_visits_frame, participants_frame

__all__ = [
    "ExportError",
    "codebook_frame",
    "evaluations_frame",
    "export_study",
    "export_zip_stream",
    "page_visits_frame",
    "participants_frame",
]
