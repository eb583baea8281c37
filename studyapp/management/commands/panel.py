"""The study's Prolific connection from the command line (docs/prolific.md):

    recourse-study panel connect SLUG --study-id ID [--second-study-id ID]   (token: $PROLIFIC_TOKEN or --token-file)
    recourse-study panel codes SLUG [--push]        the outcome -> completion-code mapping
    recourse-study panel sync SLUG                  every mismatch with its proposed action
    recourse-study panel approve SLUG [ID ...] [--agreeing]
    recourse-study panel reject SLUG ID --category C --message M
    recourse-study panel screen-out SLUG ID ...
    recourse-study panel return SLUG ID ... --reason R
    recourse-study panel bonus SLUG --amount A [--where COL=VALUE ...] [--per COL] [--session 2]
    recourse-study panel pay SLUG ACTION
    recourse-study panel actions SLUG               the ledger: what was sent, by whom, when

Every action is recorded before it is sent and never sent twice (studyapp/panel/actions.py).
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path
from typing import Any

from studyapp.management.base import StudyCommand
from studyapp.models import PanelAction
from studyapp.panel import actions, bonus, codes, service
from studyapp.panel.errors import PanelError

TOKEN_ENV = "PROLIFIC_TOKEN"


class Command(StudyCommand):
    help = "Keep a study and its Prolific study in step: connect, codes, sync, actions."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> Any:
        """The convention's one `error:` line for a subcommand's bad arguments too."""
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        for action in parser._subparsers._group_actions if parser._subparsers else []:
            for sub in getattr(action, "choices", {}).values():
                sub.error = parser.error
        return parser

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        p = sub.add_parser("connect", help="store the Prolific study and token (encrypted)")
        p.add_argument("study")
        p.add_argument("--study-id", required=True, help="the Prolific study id")
        p.add_argument("--second-study-id", default="", help="delayed release: session 2's")
        p.add_argument("--token-file", default="", help=f"file with the token (else ${TOKEN_ENV})")
        p.add_argument(
            "--api-url", default="", help="the API address (default: https://api.prolific.com)"
        )
        p = sub.add_parser("codes", help="the outcome -> completion code mapping")
        p.add_argument("study")
        p.add_argument("--push", action="store_true", help="send the codes to Prolific")
        p = sub.add_parser("sync", help="list every mismatch with the proposed action")
        p.add_argument("study")
        p = sub.add_parser("approve", help="approve submissions in bulk")
        p.add_argument("study")
        p.add_argument("ids", nargs="*")
        p.add_argument("--agreeing", action="store_true", help="every agreeing one awaiting review")
        p = sub.add_parser("reject", help="reject one submission")
        p.add_argument("study")
        p.add_argument("id")
        p.add_argument("--category", required=True)
        p.add_argument("--message", required=True, help="at least 100 characters")
        p = sub.add_parser("screen-out", help="screen submissions out")
        p.add_argument("study")
        p.add_argument("ids", nargs="+")
        p = sub.add_parser("return", help="ask participants to return their submissions")
        p.add_argument("study")
        p.add_argument("ids", nargs="+")
        p.add_argument("--reason", required=True)
        p = sub.add_parser("bonus", help="set up (not pay) bonuses from a rule over the export")
        p.add_argument("study")
        p.add_argument("--amount", required=True)
        p.add_argument("--where", action="append", default=[], help="COLUMN=VALUE (repeatable)")
        p.add_argument("--per", default="", help="a numeric column: amount times its value")
        p.add_argument("--session", type=int, choices=[1, 2], default=1)
        p = sub.add_parser("pay", help="pay bonuses set up before (once)")
        p.add_argument("study")
        p.add_argument("setup", type=int, help="the set-up action's number (panel actions)")
        p = sub.add_parser("actions", help="the ledger of actions")
        p.add_argument("study")

    def handle(self, *args: Any, **o: Any) -> None:
        study = self.study(o["study"])
        who = actions.Who(by=f"command line ({getpass.getuser()})")
        try:
            getattr(self, "do_" + o["action"].replace("-", "_"))(study, who, o)
        except PanelError as exc:
            self.fail(str(exc))

    def _token(self, o: dict[str, Any]) -> str:
        if o["token_file"]:
            path = Path(o["token_file"])
            if not path.is_file():
                self.fail(f"--token-file: {path}: no such file")
            return path.read_text(encoding="utf-8").strip()
        token = os.environ.get(TOKEN_ENV, "")
        if not token:
            self.fail(f"no token: set ${TOKEN_ENV} or give --token-file")
        return token

    def do_connect(self, study: Any, who: actions.Who, o: dict[str, Any]) -> None:
        conn = service.panel_connect(
            study=study, token=self._token(o), panel_study_id=o["study_id"],
            second_study_id=o["second_study_id"], api_url=o["api_url"],
        )  # fmt: skip
        second = f" and {conn.second_study_id} (session 2)" if conn.second_study_id else ""
        self.stdout.write(
            f"{study.slug}: connected to Prolific study {conn.panel_study_id}{second}"
        )

    def do_codes(self, study: Any, who: actions.Who, o: dict[str, Any]) -> None:
        conn = service.connection_of(study) if o["push"] else None
        two = bool(conn and conn.second_study_id)
        for row in codes.mapping(study, two):
            session = f" [session {row['sessions']}]" if row["sessions"] else ""
            self.stdout.write(
                f"{row['outcome']}: {row['code']} {row['code_type']} ({row['actions']}) -> "
                f"{row['gets']}{session}"
            )
        if o["push"]:
            sent = service.panel_push_codes(study)
            for n, wanted in sent.items():
                self.stdout.write(f"sent {len(wanted)} code(s) to session {n}'s Prolific study")

    def do_sync(self, study: Any, who: actions.Who, o: dict[str, Any]) -> None:
        rec = service.panel_sync(study)
        self.stdout.write(
            f"{study.slug}: {rec.submissions} submission(s), {rec.participants} participant(s) "
            f"with a panel id; {len(rec.mismatches)} mismatch(es); {len(rec.to_approve)} "
            "agreeing submission(s) awaiting review (panel approve --agreeing)"
        )
        for m in rec.mismatches:
            self.stdout.write("  " + m.line())

    def do_approve(self, study: Any, who: actions.Who, o: dict[str, Any]) -> None:
        conn = service.connection_of(study)
        client = service.client_for(study)
        if o["agreeing"]:
            rec = service.panel_sync(study)
            by_session: dict[int, list[str]] = {}
            for n, sid in rec.to_approve:
                by_session.setdefault(n, []).append(sid)
        else:
            by_session = {1: list(o["ids"])}
        if not any(by_session.values()):
            self.stdout.write("nothing to approve")
            return
        for n, ids in sorted(by_session.items()):
            row = actions.approve(study, client, ids, who, service.sessions(conn)[n])
            self.stdout.write(_said(row, f"approve {len(ids)} submission(s)"))

    def do_reject(self, study: Any, who: actions.Who, o: dict[str, Any]) -> None:
        actions.check_rejection(o["category"], o["message"])  # before any connection is made
        row = actions.reject(
            study, service.client_for(study), o["id"], o["category"], o["message"], who
        )
        self.stdout.write(_said(row, f"reject {o['id']}"))

    def do_screen_out(self, study: Any, who: actions.Who, o: dict[str, Any]) -> None:
        for row in actions.screen_out(study, service.client_for(study), o["ids"], who):
            self.stdout.write(_said(row, f"screen out {row.submission_ids[0]}"))

    def do_return(self, study: Any, who: actions.Who, o: dict[str, Any]) -> None:
        client = service.client_for(study)
        for row in actions.request_return(study, client, o["ids"], o["reason"], who):
            self.stdout.write(_said(row, f"ask {row.submission_ids[0]} to return"))

    def do_bonus(self, study: Any, who: actions.Who, o: dict[str, Any]) -> None:
        rows = bonus.bonus_rows(study, o["amount"], o["where"], o["per"])
        conn = service.connection_of(study)
        sid = service.sessions(conn).get(o["session"])
        if sid is None:
            self.fail("--session 2 needs a second Prolific study (panel connect --second-study-id)")
        row = actions.bonus_setup(study, service.client_for(study), rows, who, sid)
        total = row.response.get("total_amount", "?")
        self.stdout.write(
            _said(row, f"set up bonuses for {len(rows)} participant(s) (total with fees {total})")
            + f"; pay with: panel pay {study.slug} {row.pk}"
        )

    def do_pay(self, study: Any, who: actions.Who, o: dict[str, Any]) -> None:
        setup = PanelAction.objects.filter(study=study, pk=o["setup"]).first()
        if setup is None:
            self.fail(f"study {study.slug!r} has no action {o['setup']}")
        row = actions.bonus_pay(study, service.client_for(study), setup, who)
        self.stdout.write(_said(row, f"pay bulk bonus {setup.response.get('id')}"))

    def do_actions(self, study: Any, who: actions.Who, o: dict[str, Any]) -> None:
        for a in PanelAction.objects.filter(study=study).order_by("pk"):
            when = (a.sent_at or a.created_at).isoformat(timespec="seconds")
            self.stdout.write(
                f"{a.pk} {a.kind} {len(a.submission_ids)} submission(s) {a.state} by {a.by} at "
                f"{when}" + (f": {a.error}" if a.error else "")
            )


def _said(row: PanelAction, what: str) -> str:
    if not getattr(row, "just_sent", False):
        return f"{what}: already sent (action {row.pk}); not sent again"
    return f"{what}: {row.state} (action {row.pk}, {row.attempts} request(s))"
