"""The embedded default's Celery broker: kombu's SQLAlchemy transport on a SQLite file, with
a short polling interval.

kombu's SQLAlchemy transport hands every transport option to `create_engine`, so its
`polling_interval` (1 s by default, the bulk of a participant's wait) cannot be set from
Celery's settings; this subclass takes the option out first. Selected by the broker URL
``studyapp.config.broker:Transport+sqlite:///path``.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import sqlalchemy as sqla
from sqlalchemy import create_engine

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
        return create_engine(conninfo.hostname, **options)


class Transport(sqla.Transport):
    Channel = Channel
    polling_interval = POLLING_INTERVAL
