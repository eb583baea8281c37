"""The embedded broker (kombu's SQLAlchemy transport on SQLite, studyapp.config.broker):
messages go through, and the file is in WAL mode, where the worker's reads of the queue never
hold a web process's message back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kombu import Connection

from studyapp.config import broker


def test_a_message_goes_through_a_wal_mode_file(tmp_path: Path) -> None:
    path = tmp_path / "broker.sqlite"
    with Connection(f"sqlite:///{path}", transport=broker.Transport) as conn:
        queue = conn.SimpleQueue("probe")
        queue.put({"participant": 7})
        message = queue.get(timeout=5)
        assert message.payload == {"participant": 7}
        message.ack()
        queue.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_the_polling_interval_is_short() -> None:
    assert broker.Transport.polling_interval == broker.POLLING_INTERVAL <= 0.2
