"""The embedded near-duplicate index: the Redis index's semantics in one SQLite file.

For the local profile (no server): the same verdicts, the same time window (each row carries its
expiry), persisted between runs, and atomic even across processes on one machine (each check
holds SQLite's write lock from its first read to its last write: BEGIN IMMEDIATE).
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from crawler.core.sqlite import open_sqlite
from pipelines.dedup.index import (
    EXACT,
    KNOWN,
    MAX_BUCKET_DOCS,
    NEAR,
    NEW,
    Match,
    NearDuplicateIndex,
    Verdict,
    check_ids,
    decide,
    layout_mismatch,
)
from pipelines.fingerprints import Fingerprint, LshParams, sketch_matches

# Expired rows are deleted when the index opens and after this many additions.
SWEEP_EVERY_ADDS = 1_000
# Seconds a check waits for another process holding the write lock before giving up.
LOCK_TIMEOUT_SECONDS = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    docnum INTEGER PRIMARY KEY, sketch BLOB NOT NULL, doc_id TEXT NOT NULL, expires REAL NOT NULL,
    order_key TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS buckets (
    bucket INTEGER NOT NULL, docnum INTEGER NOT NULL, expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS buckets_by_bucket ON buckets (bucket);
CREATE INDEX IF NOT EXISTS buckets_by_expiry ON buckets (expires);
CREATE INDEX IF NOT EXISTS records_by_expiry ON records (expires);
"""


class EmbeddedNearDuplicateIndex(NearDuplicateIndex):
    def __init__(
        self,
        path: Path,
        params: LshParams,
        ttl_seconds: int,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(params, ttl_seconds)
        self.path = Path(path)
        self.clock = clock
        self._adds = 0
        self.db = open_sqlite(self.path, timeout_seconds=LOCK_TIMEOUT_SECONDS, schema=_SCHEMA)
        self._add_order_keys()
        self._check_layout()
        self.sweep()

    def _check_layout(self) -> None:
        with self._transaction():
            self.db.execute(
                "INSERT OR IGNORE INTO meta (name, value) VALUES ('layout', ?)",
                (self.params.layout,),
            )
            (stored,) = self.db.execute("SELECT value FROM meta WHERE name = 'layout'").fetchone()
        if stored != self.params.layout:
            raise layout_mismatch(str(self.path), stored, self.params.layout)

    def _add_order_keys(self) -> None:
        """An index written before order keys existed gets the column (its records: "", the
        earliest key, as in Redis)."""
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(records)")}
        if "order_key" not in columns:
            with self._transaction():
                self.db.execute("ALTER TABLE records ADD COLUMN order_key TEXT NOT NULL DEFAULT ''")

    def _transaction(self) -> _Transaction:
        return _Transaction(self.db)

    def sweep(self) -> None:
        """Delete expired rows (they are already invisible to checks)."""
        now = self.clock()
        with self._transaction():
            self.db.execute("DELETE FROM records WHERE expires <= ?", (now,))
            self.db.execute("DELETE FROM buckets WHERE expires <= ?", (now,))

    def check_fingerprint(
        self, doc_id: str, found: Fingerprint, *, add: bool = True, order_key: str = ""
    ) -> Verdict:
        check_ids(doc_id, order_key)
        now = self.clock()
        with self._transaction():
            found_matches, known, record_taken, full_buckets = self._lookup(doc_id, found, now)
            if known:
                return Verdict(KNOWN)
            verdict = decide(found_matches, doc_id, order_key, self.params.similarity)
            exact_gone = any(m.kind == EXACT for m in found_matches)
            if verdict.kind == NEW and add and (exact_gone or not record_taken):
                buckets = [int(bucket, 16) for bucket in found.buckets]
                self._remove([m.docnum for m in found_matches], buckets)
                self._add(doc_id, found, now, full_buckets, order_key)
        if self._adds >= SWEEP_EVERY_ADDS:
            self._adds = 0
            self.sweep()
        return verdict

    def _lookup(
        self, doc_id: str, found: Fingerprint, now: float
    ) -> tuple[list[Match], bool, bool, list[int]]:
        """The matching documents, whether this very document is indexed, whether this content
        hash already names a live record, and which of the fingerprint's buckets already hold
        MAX_BUCKET_DOCS documents."""
        row = self.db.execute(
            "SELECT sketch, doc_id, order_key FROM records WHERE docnum = ? AND expires > ?",
            (found.docnum, now),
        ).fetchone()
        matches: list[Match] = []
        if row is not None and row[0] == found.sketch:
            if row[1] == doc_id:
                return [], True, True, []
            matches.append(Match(row[1], row[2], 2 * len(found.sketch), found.docnum, EXACT))
        candidates, full_buckets = self._candidates(found, now)
        for sketch, owner, key, docnum in candidates:
            if owner == doc_id:
                continue
            agreeing = sketch_matches(found.sketch, sketch)
            if agreeing >= self.params.min_matches:
                matches.append(Match(owner, key, agreeing, docnum, NEAR))
        return matches, False, row is not None, full_buckets

    def _candidates(
        self, found: Fingerprint, now: float
    ) -> tuple[list[tuple[bytes, str, str, int]], list[int]]:
        """Sketches, ids, order keys and docnums of the live documents among the newest
        MAX_BUCKET_DOCS of each of this fingerprint's buckets, and the buckets that are full."""
        buckets = [int(bucket, 16) for bucket in found.buckets]
        rows = self.db.execute(
            f"SELECT bucket, docnum FROM buckets WHERE bucket IN ({','.join('?' * len(buckets))})"
            " AND expires > ? ORDER BY rowid DESC",
            (*buckets, now),
        )
        per_bucket: Counter[int] = Counter()
        docnums: set[int] = set()
        for bucket, docnum in rows:
            per_bucket[bucket] += 1
            if per_bucket[bucket] <= MAX_BUCKET_DOCS:
                docnums.add(docnum)
        docnums.discard(found.docnum)
        full = [bucket for bucket, count in per_bucket.items() if count >= MAX_BUCKET_DOCS]
        if not docnums:
            return [], full
        marks = ",".join("?" * len(docnums))
        rows = self.db.execute(
            f"SELECT sketch, doc_id, order_key, docnum FROM records WHERE docnum IN ({marks})"
            " AND expires > ?",
            (*docnums, now),
        ).fetchall()
        return rows, full

    def _remove(self, docnums: list[int], buckets: list[int]) -> None:
        """Take superseded documents out (they are copies of the one being added): their
        records, and their places in the buckets the new one joins (as in Redis; elsewhere they
        point at no record, which a check skips, until they expire)."""
        marks = ",".join("?" * len(buckets))
        for docnum in docnums:
            self.db.execute("DELETE FROM records WHERE docnum = ?", (docnum,))
            self.db.execute(
                f"DELETE FROM buckets WHERE bucket IN ({marks}) AND docnum = ?",
                (*buckets, docnum),
            )

    def _add(
        self,
        doc_id: str,
        found: Fingerprint,
        now: float,
        full_buckets: list[int],
        order_key: str,
    ) -> None:
        expires = now + self.ttl_seconds
        self.db.execute(
            "INSERT OR REPLACE INTO records (docnum, sketch, doc_id, expires, order_key)"
            " VALUES (?, ?, ?, ?, ?)",
            (found.docnum, found.sketch, doc_id, expires, order_key),
        )
        self.db.executemany(
            "INSERT INTO buckets (bucket, docnum, expires) VALUES (?, ?, ?)",
            [(int(bucket, 16), found.docnum, expires) for bucket in found.buckets],
        )
        for bucket in full_buckets:  # keep the newest MAX_BUCKET_DOCS, as in Redis
            self.db.execute(
                "DELETE FROM buckets WHERE bucket = ? AND rowid NOT IN"
                " (SELECT rowid FROM buckets WHERE bucket = ? ORDER BY rowid DESC LIMIT ?)",
                (bucket, bucket, MAX_BUCKET_DOCS),
            )
        self._adds += 1

    def close(self) -> None:
        self.db.close()


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error): the write lock from the first read on."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
