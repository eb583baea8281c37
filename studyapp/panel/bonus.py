"""Bonuses from a rule over the export: `amount` per participant whose row of
`participants.csv` matches every `where` filter (COLUMN=VALUE), times the number in the `per`
column when one is named. Beside the export's own columns the rule can name
`sessions_completed` (a delayed-release study's sessions done: 0, 1 or 2) and
`second_session_completed` (0/1), so "per completed session" is `--per sessions_completed`.

A rule that names a column the export does not have, an amount that is not a positive sum
of money, or a rule that selects nobody is refused before anything is set up."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

import pandas as pd

from studyapp.export.tables import participants_frame
from studyapp.models import Participant, Study
from studyapp.panel.errors import PanelError

#: the largest bonus per participant accepted (in the study's currency)
MAX_AMOUNT = Decimal("100")


def bonus_frame(study: Study) -> pd.DataFrame:
    """participants.csv with panel ids, and the session columns."""
    frame = participants_frame(study, with_panel_ids=True)
    done = {
        p.pk: (p.submitted_at is not None, p.returned_at is not None and p.state == "completed")
        for p in Participant.objects.filter(study=study, is_test=False)
    }
    delayed = study.release_mode == "delayed"

    def sessions(row: pd.Series) -> int:
        first, second = done.get(int(row["participant"]), (False, False))
        if not delayed:
            return int(row.get("outcome") == "completed")
        return int(first) + int(second)

    frame["sessions_completed"] = frame.apply(sessions, axis=1) if len(frame) else []
    frame["second_session_completed"] = (
        frame["participant"].map(lambda n: int(done.get(int(n), (0, 0))[1])) if len(frame) else []
    )
    return frame


def parse_amount(text: str) -> Decimal:
    try:
        amount = Decimal(str(text).strip())
    except InvalidOperation as exc:
        raise PanelError(f"bonus amount {text!r} is not a number (e.g. 0.50)") from exc
    if not amount.is_finite() or amount <= 0 or amount > MAX_AMOUNT:
        raise PanelError(f"bonus amount {text!r} must be above 0 and at most {MAX_AMOUNT}")
    if amount != amount.quantize(Decimal("0.01")):
        raise PanelError(f"bonus amount {text!r} has more than two decimals")
    return amount.quantize(Decimal("0.01"))


def bonus_rows(
    study: Study, amount: str, where: list[str] | None = None, per: str = ""
) -> list[tuple[str, str]]:
    """(panel id, amount) per participant the rule selects."""
    base = parse_amount(amount)
    frame = bonus_frame(study)
    columns = list(frame.columns)
    filters = []
    for item in where or []:
        column, sep, value = item.partition("=")
        column = column.strip()
        if not sep or not column:
            raise PanelError(f"bonus filter {item!r} is not COLUMN=VALUE")
        filters.append((column, value.strip()))
    named = [c for c, _ in filters] + ([per] if per else [])
    if not named:
        raise PanelError(
            "the bonus rule names no column: give --where COLUMN=VALUE and/or --per COLUMN "
            "(e.g. --where outcome=completed, or --per sessions_completed)"
        )
    unknown = [c for c in named if c not in columns]
    if unknown:
        raise PanelError(
            f"the bonus rule names no column of the export: {', '.join(map(repr, unknown))} "
            f"(columns: {', '.join(columns)})"
        )
    keep = pd.Series(True, index=frame.index)
    for column, value in filters:
        keep &= frame[column].astype(str) == value
    rows = []
    for _, row in frame[keep].iterrows():
        pid = str(row.get("recruitment_id") or "")
        if not pid:
            continue
        times = Decimal(1)
        if per:
            try:
                times = Decimal(str(row[per]))
            except InvalidOperation as exc:
                raise PanelError(f"--per {per}: {row[per]!r} is not a number") from exc
        total = (base * times).quantize(Decimal("0.01"))
        if total > 0:
            rows.append((pid, f"{total:.2f}"))
    return rows
