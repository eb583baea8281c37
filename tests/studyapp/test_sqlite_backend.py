"""The embedded default's SQLite backend: a writer waits on the writer lock and goes on the
moment it is free, where SQLite's own busy handler would have failed it (its time-out here
is far shorter than the wait) or slept; other processes' writers queue on the same file."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.db import OperationalError, connections
from django.db.utils import load_backend

from studyapp.sqlite_backend import base


def _wrapper(path: Path, alias: str) -> Any:
    settings = {**connections.settings["default"], "NAME": str(path)}
    settings["ENGINE"] = "studyapp.sqlite_backend"
    # SQLite's own wait: far shorter than the holds below, so only the writer lock can
    # make the second writer succeed
    settings["OPTIONS"] = {"timeout": 0.05, "transaction_mode": "IMMEDIATE"}
    return load_backend("studyapp.sqlite_backend").DatabaseWrapper(settings, alias)


@pytest.fixture(autouse=True)
def _own_databases(django_db_blocker: Any) -> Any:
    """These tests open their own database files, not the test database."""
    with django_db_blocker.unblock():
        yield


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    path = tmp_path / "db.sqlite3"
    w = _wrapper(path, "setup")
    with w.cursor() as c:
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT)")
    w.close()
    return path


def _hold_transaction(path: Path, started: threading.Event, seconds: float) -> None:
    w = _wrapper(path, "holder")
    w.set_autocommit(False, force_begin_transaction_with_broken_autocommit=True)
    with w.cursor() as c:
        c.execute("INSERT INTO t (who) VALUES (%s)", ["holder"])
    started.set()
    time.sleep(seconds)
    w.commit()
    w.set_autocommit(True)
    w.close()


def test_a_writer_waits_for_a_long_transaction_instead_of_failing(db_file: Path) -> None:
    started = threading.Event()
    holder = threading.Thread(target=_hold_transaction, args=(db_file, started, 0.4))
    holder.start()
    assert started.wait(5)
    w = _wrapper(db_file, "second")
    t0 = time.monotonic()
    with w.cursor() as c:  # an autocommit write outside a transaction
        c.execute("INSERT INTO t (who) VALUES (%s)", ["second"])
    waited = time.monotonic() - t0
    holder.join()
    with w.cursor() as c:
        c.execute("SELECT who FROM t ORDER BY id")
        assert [r[0] for r in c.fetchall()] == ["holder", "second"]
    w.close()
    assert waited > 0.2  # it did wait for the holder (SQLite alone gives up at 0.05 s)


def test_a_writer_gives_up_after_the_wait_limit_with_a_clear_message(
    db_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(base, "WAIT_S", 0.1)
    started = threading.Event()
    holder = threading.Thread(target=_hold_transaction, args=(db_file, started, 0.6))
    holder.start()
    assert started.wait(5)
    w = _wrapper(db_file, "second")
    with pytest.raises(OperationalError, match="database is locked"), w.cursor() as c:
        c.execute("INSERT INTO t (who) VALUES (%s)", ["second"])
    holder.join()
    with w.cursor() as c:
        c.execute("SELECT who FROM t")
        assert [r[0] for r in c.fetchall()] == ["holder"]  # nothing half-written
    w.close()


def test_another_processes_lock_holds_a_transaction_back(db_file: Path) -> None:
    # another process's writer holds the file lock (a separate open file: flock then
    # conflicts as between processes)
    fd = os.open(str(db_file) + ".writer-lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    wrote = threading.Event()  # set once its transaction holds the lock and has written
    thread = threading.Thread(target=_hold_transaction, args=(db_file, wrote, 0.0))
    thread.start()
    assert not wrote.wait(0.3)  # queued behind the other process
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    assert wrote.wait(5)
    thread.join()


def test_reads_take_no_lock_and_an_in_memory_database_has_none(db_file: Path) -> None:
    fd = os.open(str(db_file) + ".writer-lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        w = _wrapper(db_file, "reader")
        with w.cursor() as c:
            c.execute("SELECT count(*) FROM t")
            assert c.fetchone() == (0,)
        w.close()
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    settings = {**connections.settings["default"], "NAME": ":memory:"}
    memory = load_backend("studyapp.sqlite_backend").DatabaseWrapper(settings, "memory")
    assert memory.writer is None
