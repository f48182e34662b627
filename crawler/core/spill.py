"""The spill journal: where a sink puts articles its backend cannot take right now.

One JSON line per article, appended and flushed (fsynced unless told otherwise) before the sink
forgets the article. Replay reads from the committed offset (kept in a `.offset` file beside the
journal) in chunks; each chunk written to the backend moves the offset, and a fully replayed
journal is truncated. A crash between a chunk's write and its commit replays that chunk again,
which idempotent backends absorb.

A journal file belongs to one process at a time (an exclusive `flock`), so two crawls sharing a
state directory never interleave lines or replay each other's articles twice; the second crawl
spills to a file suffixed with its process id, which any later start adopts.

An append that fails (disk full, an I/O error, its fsync) leaves the journal as it was and
raises (crawler/core/lines.py): the caller still holds the records, none of them journalled.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from crawler.core.lines import LineAppender, append_line_to, open_for_appending

log = logging.getLogger(__name__)

JOURNAL_SUFFIX = ".journal.jsonl"
OFFSET_SUFFIX = ".offset"
REJECTED_SUFFIX = ".rejected.jsonl"


def journal_paths(directory: Path, name: str) -> list[Path]:
    """Every journal file of the sink `name` in `directory` (its own and adopted orphans)."""
    if not directory.is_dir():
        return []
    own = directory / f"{name}{JOURNAL_SUFFIX}"
    others = sorted(directory.glob(f"{name}.*{JOURNAL_SUFFIX}"))
    return [path for path in (own, *others) if path.is_file()]


class Journal:
    """One locked journal file. Not thread-safe: its sink serialises every call."""

    def __init__(self, path: Path, handle: BinaryIO, fsync: bool) -> None:
        self.path = path
        self._handle = handle  # unbuffered (open_for_appending)
        self._fsync = fsync
        end = handle.seek(0, os.SEEK_END)
        self._lines = LineAppender(handle, end, fsync=fsync, name=f"spill journal {path}")
        self.offset = self._read_offset()
        self.pending = self._count_pending()
        self.rejected = 0  # unreadable lines moved aside (a line torn by a crash, say)

    @classmethod
    def claim(cls, path: Path, *, fsync: bool = True) -> Journal | None:
        """Open and lock `path` for this process, or None if another process holds it."""
        path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            handle = open_for_appending(path)
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                return None
            # The holder may have deleted the file between our open and our lock: then we
            # locked a ghost; open the path again.
            with contextlib.suppress(FileNotFoundError):
                if os.fstat(handle.fileno()).st_ino == path.stat().st_ino:
                    break
            handle.close()
        journal = cls(path, handle, fsync)
        journal._end_torn_line()
        return journal

    @classmethod
    def claim_for_appending(cls, directory: Path, name: str, *, fsync: bool = True) -> Journal:
        """This sink's own journal, or a per-process one if another crawl holds it."""
        own = cls.claim(directory / f"{name}{JOURNAL_SUFFIX}", fsync=fsync)
        if own is not None:
            return own
        fallback = cls.claim(directory / f"{name}.{os.getpid()}{JOURNAL_SUFFIX}", fsync=fsync)
        if fallback is None:  # only if our own pid's file is held: a bug, not a race
            raise RuntimeError(f"cannot lock a journal for {name} in {directory}")
        return fallback

    # --- writing --------------------------------------------------------------------------

    def append(self, records: list[dict[str, Any]]) -> None:
        """Append the records, one JSON line each, and make them durable before returning; all
        of them or (OSError) none."""
        if not records:
            return
        payload = b"".join(
            json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
            for record in records
        )
        self._lines.append(payload)
        self.pending += len(records)

    # --- replaying ------------------------------------------------------------------------

    def chunks(self, size: int) -> Iterator[tuple[list[dict[str, Any]], int]]:
        """(records, offset after them) from the committed offset on, at most `size` a chunk."""
        with self.path.open("rb") as reader:
            reader.seek(self.offset)
            chunk: list[dict[str, Any]] = []
            while line := reader.readline():
                record = self._parse(line)
                if record is not None:
                    chunk.append(record)
                if len(chunk) >= size:
                    yield chunk, reader.tell()
                    chunk = []
            if chunk or reader.tell() > self.offset:
                yield chunk, reader.tell()

    def commit(self, offset: int, replayed: int) -> None:
        """Mark everything before `offset` as written; truncate when nothing is left."""
        self.pending = max(0, self.pending - replayed)
        if offset >= self._lines.end:
            self._lines.truncate(0)
            self._flush()
            self.offset = 0
            self.pending = 0
            self._offset_path.unlink(missing_ok=True)
            return
        self.offset = offset
        temporary = self._offset_path.with_suffix(".tmp")
        temporary.write_text(str(offset))
        os.replace(temporary, self._offset_path)

    def close(self) -> None:
        """Release the lock; an empty journal is deleted first (while still locked)."""
        if self._handle.closed:
            return
        self._handle.seek(0, os.SEEK_END)
        if self._handle.tell() == 0:
            self.path.unlink(missing_ok=True)
            self._offset_path.unlink(missing_ok=True)
        self._handle.close()

    # --- internals ------------------------------------------------------------------------

    @property
    def _offset_path(self) -> Path:
        return self.path.with_name(self.path.name + OFFSET_SUFFIX)

    def _read_offset(self) -> int:
        try:
            offset = int(self._offset_path.read_text().strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0
        self._handle.seek(0, os.SEEK_END)
        return offset if 0 <= offset <= self._handle.tell() else 0

    def _count_pending(self) -> int:
        with self.path.open("rb") as reader:  # buffered: the handle reads a byte at a time
            reader.seek(self.offset)
            return sum(1 for line in reader if line.strip())

    def _end_torn_line(self) -> None:
        """A crash mid-append leaves a line without its newline: close it so the next append
        starts a fresh line (the torn one is rejected at replay)."""
        end = self._lines.end
        if end == 0:
            return
        self._handle.seek(end - 1)
        if self._handle.read(1) != b"\n":
            self._lines.append(b"\n")

    def _parse(self, line: bytes) -> dict[str, Any] | None:
        if not line.strip():
            return None
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and record.get("canonical_url"):
            return record
        self.rejected += 1
        self.pending = max(0, self.pending - 1)
        rejected_path = self.path.with_name(self.path.name.removesuffix(JOURNAL_SUFFIX))
        aside = rejected_path.with_name(rejected_path.name + REJECTED_SUFFIX)
        append_line_to(aside, line if line.endswith(b"\n") else line + b"\n")
        log.error("journal %s: unreadable line moved aside (%d bytes)", self.path, len(line))
        return None

    def _flush(self) -> None:
        if self._fsync:
            os.fsync(self._handle.fileno())
