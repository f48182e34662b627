"""Opening an embedded store: every SQLite file newsharvest writes is opened here, the same way.

* autocommit (`isolation_level=None`): each store says where its transactions begin
  (BEGIN IMMEDIATE where a read decides a write), Python's sqlite3 never opens one behind it;
* WAL journal: readers (`newsharvest search`, the dashboard) never block the crawl's writer.
  Switching a new file to WAL is tried again until the busy timeout: when two processes open
  the same new file at once (the shards of `newsharvest replay --processes N`), SQLite answers
  one of them "database is locked" at once, without waiting (its busy handler is skipped where
  waiting could deadlock), and that process's store failed to open;
* synchronous=NORMAL: with WAL a process crash loses no committed transaction, and commits do
  not wait for fsync (a power loss may lose the last ones, which a restart fetches again);
* a busy timeout: another process holding the write lock is waited for, not an error at once;
* the store's schema (CREATE ... IF NOT EXISTS statements) is applied.

":memory:" opens a private in-memory database (the demo's throw-away stores). Errors are
sqlite3's own (sqlite3.Error, OSError for an unwritable directory).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

IN_MEMORY = ":memory:"  # SQLite's name for a database that lives and dies with the connection
WAL_RETRY_FIRST_SECONDS = 0.005  # the first wait before switching to WAL again (then doubled)
WAL_RETRY_MAX_SECONDS = 0.2  # the longest wait between two tries
PRIMARY_CODE_MASK = 0xFF  # an extended result code (SQLITE_BUSY_RECOVERY...) keeps its primary


def open_sqlite(
    path: str | Path, *, timeout_seconds: float, schema: str = ""
) -> sqlite3.Connection:
    """A connection to the store at `path` (its directory is created), with `schema` applied."""
    if str(path) != IN_MEMORY:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=timeout_seconds, isolation_level=None)
    _switch_to_wal(connection, timeout_seconds)
    connection.execute("PRAGMA synchronous=NORMAL")
    if schema:
        connection.executescript(schema)
    return connection


def _switch_to_wal(connection: sqlite3.Connection, timeout_seconds: float) -> None:
    """PRAGMA journal_mode=WAL, tried again while SQLite says the file is busy, for up to
    `timeout_seconds` (what the busy handler would have waited); then the error is raised."""
    deadline = time.monotonic() + timeout_seconds
    delay = WAL_RETRY_FIRST_SECONDS
    while True:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            busy = error.sqlite_errorcode & PRIMARY_CODE_MASK == sqlite3.SQLITE_BUSY
            if not busy or time.monotonic() >= deadline:
                raise
        time.sleep(min(delay, max(deadline - time.monotonic(), 0.0)))
        delay = min(delay * 2, WAL_RETRY_MAX_SECONDS)
