"""Withdrawal and deletion on request write receipts through the retention machinery; the
files of exports written to disk are registered and deleted when the data in them is due;
the receipts are in the export (`deletion_receipts.csv`, with codebook entries)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pandas as pd
from django.contrib.auth import get_user_model
from django.core.management import call_command

from studyapp.export import export_study
from studyapp.models import DeletionReceipt, ExportRecord, PageVisit, Participant, Study
from studyapp.participation import release, withdrawal
from studyapp.retention.service import retention_apply
from tests.studyapp.retention.conftest import day, person, set_rules


def test_withdrawal_writes_a_receipt_per_class_it_erased(study: Study) -> None:
    p = person(study, 1, None)
    other = person(study, 2, None)
    log = withdrawal.participant_withdraw(participant=p, page="evaluation-1")
    p.refresh_from_db()
    assert p.state == Participant.State.WITHDRAWN and log.participant_number == p.pk
    assert (p.recruitment_id, p.panel, p.contact_email, p.device_class) == ("PANEL1", {}, "", "")
    got = {
        r.data_class: (r.by, r.participants, r.rows, r.participant_numbers, r.rule)
        for r in DeletionReceipt.objects.all()
    }
    rule = "withdrawn by the participant (page evaluation-1)"
    assert got == {
        "answers": ("withdrawal", 1, 6, [p.pk], rule),
        "paradata": ("withdrawal", 1, 4, [p.pk], rule),  # 3 visits and the device
        "panel_id": ("withdrawal", 1, 1, [p.pk], rule + " (the panel id itself is kept: the "
                     "same panel member resumes the withdrawn row)"),
        "contact": ("withdrawal", 1, 1, [p.pk], rule),
    }  # fmt: skip
    # the free text went with the answers it was part of; the other participant is untouched
    assert PageVisit.objects.filter(participant=other).count() == 3
    # a second withdrawal is the first one's: no new receipt
    withdrawal.participant_withdraw(participant=p, page="withdrawn")
    assert DeletionReceipt.objects.count() == 4


def test_deletion_on_request_names_the_researcher(study: Study) -> None:
    p = person(study, 1, day(0))
    user = get_user_model().objects.create_user("researcher", password="x")
    withdrawal.participant_delete(participant=p, by_user=user)
    r = DeletionReceipt.objects.get()
    assert (r.data_class, r.by, r.by_user, r.participants, r.participant_numbers) == (
        "participant", "researcher", user, 1, [p.pk],
    )  # fmt: skip
    assert r.detail == {
        "Participant rows": 1, "Recourse rows": 2, "Evaluation rows": 2, "Profile rows": 1,
        "PageVisit rows": 3,
    }  # fmt: skip
    assert not Participant.objects.filter(pk=p.pk).exists()


def _exported(study: Study, out: Path, **kwargs: Any) -> list[Path]:
    written = export_study(study=study, out=out, **kwargs)
    assert written and all(f.is_file() for f in written)
    return written


def test_export_files_are_deleted_when_their_data_is_due(study: Study, tmp_path: Path) -> None:
    person(study, 1, day(0))
    person(study, 2, day(20))
    set_rules(study, {"free_text": {"days": 30}, "answers": {"days": 90}})
    plain = _exported(study, tmp_path / "plain")
    texts = _exported(study, tmp_path / "texts", with_text=True)
    records = {Path(r.folder).name: r for r in ExportRecord.objects.all()}
    assert records["plain"].classes == ["participant", "answers", "paradata"]
    assert records["texts"].classes == ["participant", "answers", "paradata", "free_text"]
    assert records["plain"].earliest_end == day(0) and records["plain"].participants == 2
    assert records["plain"].files == [f.name for f in plain]

    # the free text of the earliest-ended participant is due on day 30: the export holding it
    retention_apply(now=day(29))
    assert all(f.exists() for f in plain + texts)
    retention_apply(now=day(30))
    assert not any(f.exists() for f in texts) and all(f.exists() for f in plain)
    r = DeletionReceipt.objects.get(data_class="export_files")
    assert r.files == [str(f.resolve()) for f in texts] and r.rows == len(texts)
    assert r.rule.startswith("retention.free_text: 30 days after the participant's end")
    # the answers of the earliest-ended participant on day 90: the plain export
    retention_apply(now=day(89))
    assert all(f.exists() for f in plain)
    retention_apply(now=day(90))
    assert not any(f.exists() for f in plain)
    assert DeletionReceipt.objects.filter(data_class="export_files").count() == 2
    retention_apply(now=day(91))  # nothing left: no receipt
    assert DeletionReceipt.objects.filter(data_class="export_files").count() == 2
    assert ExportRecord.objects.filter(deleted_at__isnull=True).count() == 0


def test_an_export_into_the_same_folder_takes_over_its_files(study: Study, tmp_path: Path) -> None:
    person(study, 1, day(0))
    _exported(study, tmp_path)
    again = _exported(study, tmp_path)
    assert ExportRecord.objects.count() == 1
    assert ExportRecord.objects.get().files == [f.name for f in again]


def test_a_dry_run_leaves_export_files_on_disk(study: Study, tmp_path: Path) -> None:
    person(study, 1, day(0))
    set_rules(study, {"answers": {"days": 0}})
    written = _exported(study, tmp_path)
    out = io.StringIO()
    call_command("apply_retention", "kept", "--now", day(1).isoformat(), "--dry-run", stdout=out)
    assert f"  would delete export_files: 1 participant(s), {len(written)} export file(s)" in (
        out.getvalue()
    )
    assert all(f.exists() for f in written)
    assert not DeletionReceipt.objects.exists()
    assert ExportRecord.objects.get().deleted_at is None


def test_the_export_holds_the_receipts_with_their_codebook(study: Study, tmp_path: Path) -> None:
    plain = {f.name for f in _exported(study, tmp_path / "before")}
    assert "deletion_receipts.csv" not in plain  # no rule, no receipt: the export as before
    p = person(study, 1, day(0))
    withdrawal.participant_withdraw(participant=p, page="profile")
    out = tmp_path / "after"
    names = {f.name for f in _exported(study, out)}
    assert names == plain | {"deletion_receipts.csv"}
    frame = pd.read_csv(out / "deletion_receipts.csv", keep_default_na=False)
    assert sorted(frame["data_class"]) == ["answers", "contact", "panel_id", "paradata"]
    assert set(frame["by"]) == {"withdrawal"} and set(frame["participant_ids"]) == {p.pk}
    stored = {r.data_class: r.rows for r in DeletionReceipt.objects.all()}
    assert dict(zip(frame["data_class"], frame["rows"], strict=True)) == stored
    codebook = pd.read_csv(out / "codebook.csv", keep_default_na=False)
    described = codebook[codebook["file"] == "deletion_receipts.csv"]
    assert list(described["column"]) == list(frame.columns)
    assert all(described["description"].str.len() > 0)


def test_the_delayed_release_forgets_addresses_with_a_receipt(study: Study) -> None:
    Study.objects.filter(pk=study.pk).update(release_mode="delayed", release_after_days=14)
    done = person(study, 1, day(0))
    waiting = person(study, 2, None, state=Participant.State.DECISION)
    assert release.tick(now=day(1))["forgotten"] == [done.pk]
    assert Participant.objects.get(pk=waiting.pk).contact_email == "p2@example.org"
    r = DeletionReceipt.objects.get()
    assert (r.data_class, r.by, r.participant_numbers, r.rows, r.as_of) == (
        "contact", "schedule", [done.pk], 1, day(1),
    )  # fmt: skip
    assert r.rule == release.FORGET_RULE
    assert release.tick(now=day(2))["forgotten"] == [] and DeletionReceipt.objects.count() == 1
