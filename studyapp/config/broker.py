"""The embedded default's Celery broker: kombu's SQLAlchemy transport on a SQLite file, with
a short polling interval and the file in WAL mode.

kombu's SQLAlchemy transport hands every transport option to `create_engine`, so its
`polling_interval` (1 s by default, the bulk of a participant's wait) cannot be set from
Celery's settings; this subclass takes the option out first. Selected by the broker URL
``studyapp.config.broker:Transport+sqlite:///path``.

In SQLite's default journal mode the worker's reads of the queue, ten a second, keep the web
processes' task messages from committing, and those wait in SQLite's busy handler, which
sleeps: at 500 participants, a sampling profile of the web workers found a fifth of their
threads' time inside the profile page's queueing of the task. In WAL mode readers never
block the writer.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import sqlalchemy as sqla
from sqlalchemy import create_engine, event

POLLING_INTERVAL = 0.1  # seconds; an idle worker then reads the queue table ten times a second


class Channel(sqla.Channel):
    def _engine_from_config(self) -> Any:
        conninfo = self.connection.client
        options = dict(conninfo.transport_options)
        for key in (
            "polling_interval",
            "queue_tablename",
            "message_tablename",
            "callback",
            "errback",
            "max_retries",
            "interval_start",
            "interval_step",
            "interval_max",
            "retry_errors",
        ):
            options.pop(key, None)
        engine = create_engine(conninfo.hostname, **options)
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", _sqlite_pragmas)
        return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


class Transport(sqla.Transport):
    Channel = Channel
    polling_interval = POLLING_INTERVAL
