"""Django's SQLite backend, with writers queueing on a lock instead of polling SQLite's.

SQLite lets one writer at a time hold a database. A writer that finds it taken waits in
SQLite's busy handler, which sleeps and retries at growing intervals (up to 100 ms a
try) rather than waking when the lock frees. Under many concurrent participants every
page writes (its visit, its answers), so requests slept in that handler while the
cores idled: a profile of the web workers at 500 participants found half of every
thread's time inside SQL statements that take microseconds. Here every write transaction
and every write statement outside one first takes a writer lock that wakes its waiter at
once: a lock per process for its threads, then an `flock` on a file beside the database
for the processes (web workers, Celery worker, commands). The kernel drops the `flock`
of a process that dies. SQLite's own lock and time-out stay underneath, for writers that
do not use this backend (the sqlite3 shell, another program).

`DATABASES["default"]["ENGINE"] = "studyapp.sqlite_backend"`; `settings.py` chooses it for
the embedded default. An in-memory database has one connection and skips the lock.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable
from typing import Any

from django.db import OperationalError
from django.db.backends.sqlite3 import base

#: seconds a thread waits for its process's turn before the write fails, as SQLite's own
#: time-out would fail it ("database is locked")
WAIT_S = 30.0

_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


class WriterLock:
    """One database file's writer lock in this process: threads, then processes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.threads = threading.Lock()
        self.fd: int | None = None
        self.pid = 0

    def acquire(self) -> None:
        if not self.threads.acquire(timeout=WAIT_S):
            raise OperationalError(f"database is locked (waited {WAIT_S:.0f} s to write)")
        try:
            if self.fd is None or self.pid != os.getpid():  # a forked child opens its own
                self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                self.pid = os.getpid()
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            self.threads.release()
            raise

    def release(self) -> None:
        try:
            if self.fd is not None and self.pid == os.getpid():
                fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            self.threads.release()


_locks: dict[str, WriterLock] = {}
_locks_guard = threading.Lock()


def writer_lock(database: str) -> WriterLock:
    path = os.path.abspath(str(database)) + ".writer-lock"
    with _locks_guard:
        return _locks.setdefault(path, WriterLock(path))


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writer = None if self.is_in_memory_db() else writer_lock(self.settings_dict["NAME"])
        self.writing = False

    def write_begin(self) -> None:
        if self.writer is not None and not self.writing:
            self.writer.acquire()
            self.writing = True

    def write_end(self) -> None:
        if self.writing:
            self.writing = False
            self.writer.release()

    def _start_transaction_under_autocommit(self) -> None:
        self.write_begin()
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self.write_end()
            raise

    def _commit(self) -> Any:
        try:
            return super()._commit()
        finally:
            self.write_end()

    def _rollback(self) -> Any:
        try:
            return super()._rollback()
        finally:
            self.write_end()

    def _close(self) -> Any:
        try:
            return super()._close()
        finally:
            self.write_end()

    def create_cursor(self, name: str | None = None) -> Any:
        cursor = self.connection.cursor(factory=CursorWrapper)
        cursor.db = self
        return cursor


class CursorWrapper(base.SQLiteCursorWrapper):
    """A write statement outside a transaction takes the writer lock for itself."""

    db: DatabaseWrapper

    def execute(self, query: str, params: Any = None) -> Any:
        return self._locked(super().execute, query, params)

    def executemany(self, query: str, param_list: Any) -> Any:
        return self._locked(super().executemany, query, param_list)

    def _locked(self, run: Callable[[str, Any], Any], query: str, params: Any) -> Any:
        """`run` the statement, under the writer lock when it writes outside a transaction
        and the lock is not held yet."""
        db = self.db
        if db.writing or db.writer is None or db.in_atomic_block or not _is_write(query):
            return run(query, params)
        db.write_begin()
        try:
            return run(query, params)
        finally:
            db.write_end()


def _is_write(query: str) -> bool:
    return query.lstrip()[:7].upper().startswith(_WRITES)
