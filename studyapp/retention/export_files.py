"""Exports written to disk hold copies of the data the rules limit, so the schedule deletes
their files too: `export_register` records each export `export_study` writes (folder, files,
when, which data classes, the earliest end among its participants), and `delete_due` deletes
the files of an export once the first class it holds is due for the earliest-ended
participant in it.

With a rule counted from the participant's end, an export is due `days` after the earliest
end among its participants (without any ended participant: after it was written, which is no
later than any of theirs); with one counted from the study's close, `days` after the close.
The streamed ZIP downloaded from the console or the API is not on the platform's disk: it is
the researcher's to keep within the rules (docs/data-protection.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from django.db.models import Count, Min
from django.utils import timezone

from studyapp.definition.retention import RetentionRule
from studyapp.models import DeletionReceipt, ExportRecord, Participant, Study

#: the data classes every export holds (panel ids and free text only when asked for)
ALWAYS_EXPORTED = ("participant", "answers", "paradata")


def export_register(
    *,
    study: Study,
    folder: Path,
    files: Sequence[Path],
    with_text: bool = False,
    with_panel_ids: bool = False,
    with_test: bool = False,
) -> ExportRecord:
    """Record an export just written to `folder`; an earlier export's files of the same
    names were replaced by it and are this one's now."""
    people = Participant.objects.filter(study=study)
    if not with_test:
        people = people.filter(is_test=False)
    counted = people.aggregate(n=Count("pk"), first=Min("finished_at"))
    place = str(folder.resolve())
    names = [f.name for f in files]
    for earlier in ExportRecord.objects.filter(folder=place, deleted_at__isnull=True):
        left = [n for n in earlier.files if n not in names]
        if not left:
            earlier.delete()
        elif left != earlier.files:
            earlier.files = left
            earlier.save(update_fields=["files"])
    classes = [*ALWAYS_EXPORTED, *(["free_text"] if with_text else [])]
    return ExportRecord.objects.create(
        study=study,
        folder=place,
        files=names,
        classes=classes + (["panel_id"] if with_panel_ids else []),
        participants=counted["n"],
        earliest_end=counted["first"],
        written_at=timezone.now(),
    )


def due_at(
    record: ExportRecord, rules: Mapping[str, RetentionRule], study: Study
) -> tuple[datetime, str] | None:
    """When the export's files are due, and under which rule (None: no rule limits them)."""
    best: tuple[datetime, str] | None = None
    for name in record.classes:
        rule = rules.get(name)
        if rule is None or rule.days is None:
            continue
        if rule.after == "completion":
            base = record.earliest_end or record.written_at
        elif study.state == Study.State.CLOSED and study.closed_at is not None:
            base = study.closed_at
        else:
            continue
        at = base + timedelta(days=rule.days)
        if best is None or at < best[0]:
            best = (at, f"retention.{name}: {rule.words()}")
    return best


def _remove(paths: list[Path], dry_run: bool) -> tuple[list[str], list[str], list[str]]:
    """(deleted, already gone, could not be deleted) among `paths`."""
    deleted, gone, failed = [], [], []
    for path in paths:
        try:
            if dry_run:
                if not path.is_file():
                    raise FileNotFoundError(path)
            else:
                path.unlink()
        except FileNotFoundError:
            gone.append(str(path))
        except OSError:
            failed.append(str(path))
        else:
            deleted.append(str(path))
    return deleted, gone, failed


def delete_due(
    *,
    study: Study,
    rules: Mapping[str, RetentionRule],
    now: datetime,
    by: str,
    by_user: Any = None,
    dry_run: bool = False,
) -> list[DeletionReceipt]:
    """Delete the files of the study's exports due at `now` (in the caller's transaction),
    a receipt per export that had files to delete; a file that cannot be deleted stays
    registered for the next run. `dry_run`: files are only looked at."""
    receipts = []
    for record in ExportRecord.objects.filter(study=study, deleted_at__isnull=True):
        due = due_at(record, rules, study)
        if due is None or due[0] > now:
            continue
        folder = Path(record.folder)
        deleted, gone, failed = _remove([folder / n for n in record.files], dry_run)
        record.files = [Path(p).name for p in failed]
        record.deleted_at = None if failed else now
        record.save(update_fields=["files", "deleted_at"])
        if not deleted:
            continue
        detail = {"files deleted": len(deleted), "files already gone": len(gone)}
        detail["files not deleted (tried again next run)"] = len(failed)
        written = record.written_at.astimezone(UTC)
        receipts.append(
            DeletionReceipt.objects.create(
                study=study,
                study_slug=study.slug,
                data_class=DeletionReceipt.DataClass.EXPORT_FILES,
                rule=f"{due[1]} (export of {written:%Y-%m-%d %H:%M} UTC)"[:300],
                by=by,
                by_user=by_user if getattr(by_user, "pk", None) is not None else None,
                participants=record.participants,
                rows=len(deleted),
                detail={k: n for k, n in detail.items() if n},
                files=deleted,
                as_of=now,
            )
        )
    return receipts
