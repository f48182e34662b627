"""Opening an embedded store: every SQLite file newsharvest writes is opened here, the same way.

* autocommit (`isolation_level=None`): each store says where its transactions begin
  (BEGIN IMMEDIATE where a read decides a write), Python's sqlite3 never opens one behind it;
* WAL journal: readers (`newsharvest search`, the dashboard) never block the crawl's writer;
* synchronous=NORMAL: with WAL a process crash loses no committed transaction, and commits do
  not wait for fsync (a power loss may lose the last ones, which a restart fetches again);
* a busy timeout: another process holding the write lock is waited for, not an error at once;
* the store's schema (CREATE ... IF NOT EXISTS statements) is applied.

":memory:" opens a private in-memory database (the demo's throw-away stores). Errors are
sqlite3's own (sqlite3.Error, OSError for an unwritable directory).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

IN_MEMORY = ":memory:"  # SQLite's name for a database that lives and dies with the connection


def open_sqlite(
    path: str | Path, *, timeout_seconds: float, schema: str = ""
) -> sqlite3.Connection:
    """A connection to the store at `path` (its directory is created), with `schema` applied."""
    if str(path) != IN_MEMORY:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=timeout_seconds, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    if schema:
        connection.executescript(schema)
    return connection
