"""Appending to a JSON Lines file so that each append lands whole or leaves the file as it was.

A buffered file that fails to write (disk full, over a file-size limit, an I/O error) keeps the
unwritten rest in its buffer and writes it with the next write, and a write longer than its
buffer leaves its first part in the file, with the next line glued to it (unparseable). So the
file is written unbuffered, the bytes written whole (a raw write may take part of them), fsynced
when asked, and on any OSError cut back to where the append started. If even the cut fails the
file is dirty: it is cut before the next append (which fails while it cannot be).

Used by the harvest's journal (pipelines/journal.py), the sinks' spill journal
(crawler/core/spill.py), the rejected files (crawler/core/rejected.py) and the WARC writer
(crawler/warc/writer.py, whole gzip members rather than lines).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import BinaryIO

from crawler.core.failures import one_line

log = logging.getLogger(__name__)


def open_for_appending(path: Path) -> BinaryIO:
    """`path` opened unbuffered for appending and reading (created if missing)."""
    return path.open("ab+", buffering=0)


class LineAppender:
    """Appends to `file` (opened with `open_for_appending`), which ends at `end`."""

    def __init__(self, file: BinaryIO, end: int, *, fsync: bool, name: str) -> None:
        self.file = file
        self.end = end
        self.fsync = fsync
        self.name = name  # the file, for log lines
        self.dirty = False  # the file holds bytes past `end` a failed append could not cut

    def append(self, data: bytes) -> int:
        """Write `data` (whole lines) at the end and return where it starts; on OSError the
        file is left as it was before (or dirty, cut before the next append) and it raises."""
        start = self.end
        try:
            if self.dirty:
                self.truncate(start)
            view = memoryview(data)
            while view:
                written = self.file.write(view)
                view = view[written:]
            if self.fsync:
                os.fsync(self.file.fileno())
        except OSError:
            try:
                self.truncate(start)
            except OSError as cut_error:
                log.error("%s: cannot cut the partial line of a failed write (%s); cut before "
                          "the next write", self.name, one_line(cut_error))  # fmt: skip
            raise
        self.end = start + len(data)
        return start

    def truncate(self, offset: int) -> None:
        """Cut the file to `offset`, which becomes its end (dirty until the cut is done)."""
        self.dirty = True
        self.file.truncate(offset)
        self.end = offset
        self.dirty = False


def append_line_to(path: Path, line: bytes, *, fsync: bool = False) -> None:
    """Append one line to the file at `path` (created, with its directory, on first use), whole
    or not at all. A line an earlier crash or failed cut left without its newline is ended
    first, so this one starts on a line of its own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_for_appending(path) as file:
        end = file.seek(0, os.SEEK_END)
        if end:
            file.seek(end - 1)
            if file.read(1) != b"\n":
                line = b"\n" + line
        LineAppender(file, end, fsync=fsync, name=str(path)).append(line)
