"""The rotating WARC file writer: a thread, a bounded queue, one gzip member per record.

The crawl's reactor never compresses nor writes: it hands a group of records (request, response,
metadata) to `submit`, which queues them and returns a future the writer thread resolves once the
group is in the file (written to the operating system; a kill -9 cannot lose it from then on).
The capture middleware awaits that future before the response goes on, so a page is archived
before its article can count as done. The queue is bounded (WARC_QUEUE_RECORDS): when the disk
falls behind, `submit` waits in a thread of the pool, never in the reactor.

Crash safety: every record is compressed as one gzip member and handed to the file in a single
unbuffered write. The file being written is named `<name>.warc.gz.open` and held with an
exclusive lock; on rotation (WARC_ROTATE_BYTES) and on close it is renamed to `<name>.warc.gz`.
A writer starting in the directory repairs what a killed one left: every `.open` file nobody
holds is cut after its last complete gzip member and renamed (or removed when nothing in it was
complete).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import queue
import socket
import threading
import zlib
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crawler.core.failures import one_line
from crawler.core.lines import LineAppender
from crawler.warc.records import GZIP_WBITS, OutRecord, gzip_member, warcinfo_record

log = logging.getLogger(__name__)

OPEN_SUFFIX = ".open"
NEW_SUFFIX = ".new"  # a file being opened, not yet locked and named .open
WARC_SUFFIX = ".warc.gz"
REPAIR_CHUNK_BYTES = 1 << 20  # read a left-over file this much at a time while repairing it
_STOP = object()


@dataclass(frozen=True)
class RepairOutcome:
    path: Path
    kept_records: int
    cut_bytes: int


def repair_directory(directory: Path) -> list[RepairOutcome]:
    """Close every `.open` file that no live writer holds: cut a torn last member, rename.
    Safe while other workers start in the same directory: each file is repaired by the one
    that holds its lock, renamed before the lock goes, and skipped by the others."""
    for path in directory.glob(f"*{WARC_SUFFIX}{OPEN_SUFFIX}{NEW_SUFFIX}"):
        with _locked(path, "rb") as handle:
            if handle is not None:
                path.unlink()  # killed between creating and naming it: nothing was written
    outcomes = []
    for path in sorted(directory.glob(f"*{WARC_SUFFIX}{OPEN_SUFFIX}")):
        with _locked(path, "rb+") as handle:
            if handle is None or not path.exists():
                continue  # a live writer holds it, or another repairer just closed it
            members, end = complete_members(handle)
            size = handle.seek(0, os.SEEK_END)
            if end < size:
                handle.truncate(end)
                os.fsync(handle.fileno())
            final = path.with_name(path.name.removesuffix(OPEN_SUFFIX))
            if members:
                os.replace(path, final)
            else:
                path.unlink()
        outcomes.append(RepairOutcome(final, members, size - end))
        log.warning("WARC %s was left open (killed writer?): kept %d record(s), cut %d byte(s)",
                    final, members, size - end)  # fmt: skip
    return outcomes


@contextmanager
def _locked(path: Path, mode: str) -> Iterator[Any]:
    """The file opened and exclusively locked, or None if someone holds it (or it is gone)."""
    try:
        handle = path.open(mode)
    except FileNotFoundError:
        yield None
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield None
            return
        yield handle


def complete_members(handle: Any) -> tuple[int, int]:
    """(count, end offset) of the complete gzip members at the start of a file."""
    handle.seek(0)
    count, end, position = 0, 0, 0
    decompressor = zlib.decompressobj(GZIP_WBITS)
    pending = b""
    while True:
        data = pending or handle.read(REPAIR_CHUNK_BYTES)
        pending = b""
        if not data:
            return count, end
        try:
            decompressor.decompress(data)
        except zlib.error:
            return count, end  # garbage: what follows the last good member goes
        if decompressor.eof:
            consumed = len(data) - len(decompressor.unused_data)
            position += consumed
            count, end = count + 1, position
            pending = decompressor.unused_data
            decompressor = zlib.decompressobj(GZIP_WBITS)
        else:
            position += len(data)


class WarcWriter:
    """Writes record groups into rotating `<prefix>-<time>-<serial>-<host>-<pid>.warc.gz`."""

    def __init__(
        self,
        directory: Path,
        prefix: str,
        rotate_bytes: int,
        queue_records: int,
        software: str,
        info: dict[str, Any],
    ) -> None:
        self.directory = directory
        self.prefix = prefix
        self.rotate_bytes = rotate_bytes
        self.software = software
        self.info = info
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, queue_records))
        self.thread: threading.Thread | None = None
        self.file: Any = None
        self.appender: LineAppender | None = None  # appends to `file` whole or not at all
        self.path: Path | None = None
        self.size = 0
        self.serial = 0
        self.records = 0
        self.bytes = 0
        self.files: list[Path] = []  # closed by this writer
        self.error: BaseException | None = None

    def start(self) -> list[RepairOutcome]:
        self.directory.mkdir(parents=True, exist_ok=True)
        repaired = repair_directory(self.directory)
        self.thread = threading.Thread(target=self._run, name="warc-writer", daemon=True)
        self.thread.start()
        return repaired

    def submit_nowait(self, records: Sequence[OutRecord]) -> Future[None] | None:
        """Queue a group of records; None when the queue is full (then use `submit`)."""
        done: Future[None] = Future()
        try:
            self.queue.put_nowait((list(records), done))
        except queue.Full:
            return None
        return done

    def submit(self, records: Sequence[OutRecord]) -> Future[None]:
        """Queue a group, waiting for room (call it from a thread, not the reactor)."""
        done: Future[None] = Future()
        self.queue.put((list(records), done))
        return done

    async def write(self, records: Sequence[OutRecord]) -> None:
        """Queue a group and wait until it is in the file, without blocking the event loop."""
        future = self.submit_nowait(records)
        if future is None:
            future = await asyncio.to_thread(self.submit, records)
        await asyncio.wrap_future(future)

    def close(self) -> None:
        if self.thread is None:
            return
        self.queue.put(_STOP)
        self.thread.join()
        self.thread = None

    # --- the writer thread --------------------------------------------------------------

    def _run(self) -> None:
        while True:
            job = self.queue.get()
            if job is _STOP:
                self._finish_file()
                return
            records, done = job
            try:
                # A group (request, response, metadata) in one write: a kill -9 cannot fall
                # between its records (a response without the metadata naming its article
                # would replay as an article of its own, beside its fetch after the restart).
                self._write(b"".join(gzip_member(record.serialize()) for record in records),
                            len(records))  # fmt: skip
                done.set_result(None)
            except BaseException as error:  # a full disk: the capture reports it, item by item
                self.error = error
                done.set_exception(error)
            if self.file is not None and self.size >= self.rotate_bytes:
                self._finish_file()

    def _write(self, members: bytes, records: int) -> None:
        if self.appender is None:
            self._open_file()
        assert self.appender is not None
        # A full disk may take part of the members before refusing the rest: the appender cuts
        # the file back, or the next group would follow a torn member (damage to every reader).
        self.appender.append(members)
        self.size += len(members)
        self.records += records
        self.bytes += len(members)

    def _open_file(self) -> None:
        self.serial += 1
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")
        host = socket.gethostname().replace("-", "_") or "host"
        name = f"{self.prefix}-{stamp}-{self.serial:05d}-{host}-{os.getpid()}{WARC_SUFFIX}"
        self.path = self.directory / (name + OPEN_SUFFIX)
        # Locked before it gets the name a repairer looks for: another worker starting in this
        # directory can never take a file being born for a killed writer's.
        hidden = self.path.with_name(self.path.name + NEW_SUFFIX)
        self.file = hidden.open("ab", buffering=0)
        fcntl.flock(self.file, fcntl.LOCK_EX)
        os.replace(hidden, self.path)
        self.size = 0
        appender = LineAppender(self.file, 0, fsync=False, name=str(self.path))
        member = gzip_member(warcinfo_record(self.software, self.info, name).serialize())
        try:
            appender.append(member)
        except OSError:
            self._drop_file()  # a file without its warcinfo: the next group opens another
            raise
        self.appender = appender
        self.size += len(member)
        self.bytes += len(member)

    def _drop_file(self) -> None:
        """Remove the file being opened (it holds no record); a removal that fails leaves it
        `.open` and unlocked, for the next writer's repair."""
        assert self.path is not None
        with suppress(OSError):
            self.path.unlink()
        self.file.close()
        self.file, self.path = None, None

    def _finish_file(self) -> None:
        """Sync, rename and close the file. Never raises: the writer thread must outlive a
        failing disk, or every group queued after it would wait forever."""
        if self.file is None or self.path is None:
            return
        final = self.path.with_name(self.path.name.removesuffix(OPEN_SUFFIX))
        try:
            if self.appender is not None and self.appender.dirty:
                self.appender.truncate(self.appender.end)  # the torn tail of a failed write
            os.fsync(self.file.fileno())
            os.replace(self.path, final)
        except OSError as error:
            self.error = error
            log.error("WARC %s cannot be closed (%s): left open for the next start's repair",
                      self.path, one_line(error))  # fmt: skip
        else:
            self.files.append(final)
        self.file.close()  # releases the lock after the rename: no repairer sees it half-done
        self.file, self.appender, self.path = None, None, None
