"""The journal's files, as both its writer and a worker taking a dead one's claims over read them.

A journal (pipelines/journal.py) is a JSON Lines file; beside it, `<journal>.checkpoint` holds
the offset up to which every line is known to be marked done in the ledger. The lines after the
checkpoint are the ones a crash may have left without a done mark. A worker that takes a dead
worker's claims over reads those lines to tell, for an article the dead worker had marked as
being output, whether its line was written (then it is output: marked done) or not (the kill
came between the mark and the write: the article is handed out again, never lost).

Where a journal is: "<host>\\n<absolute path>", registered in the ledger by the worker that
writes it (crawler/ledger.py, register_journal). Another host cannot read it.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from crawler.core.commit import item_version

CHECKPOINT_SUFFIX = ".checkpoint"
# The most of a journal a take-over reads after its checkpoint: the checkpoint advances every
# few hundred lines, so what follows it is small; a larger tail is not read (the article is
# then handed out again, as when the journal is on another host).
MAX_TAIL_BYTES = 64 * 1024 * 1024
JOURNAL_UNWRITABLE = "journal_unwritable"  # finish_reason of a crawl its journal stopped
EXIT_JOURNAL_UNWRITABLE = getattr(os, "EX_IOERR", 74)  # `scrapy crawl` exit status then


def checkpoint_path(journal: Path) -> Path:
    return journal.with_name(journal.name + CHECKPOINT_SUFFIX)


def read_checkpoint(journal: Path) -> int:
    """The offset every line before which is marked done; 0 when unknown."""
    try:
        return int(json.loads(checkpoint_path(journal).read_text())["offset"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def write_checkpoint(journal: Path, offset: int) -> None:
    """Record that every line before `offset` is marked done (replaced atomically)."""
    final = checkpoint_path(journal)
    temporary = final.with_name(final.name + ".tmp")
    temporary.write_text(json.dumps({"offset": offset}))
    os.replace(temporary, final)


def parse_line(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def journal_location(journal: Path) -> str:
    """What a worker registers for its journal: this host and the file's absolute path."""
    return f"{socket.gethostname()}\n{journal.resolve()}"


def tail_after_checkpoint(file: BinaryIO, journal: Path) -> tuple[int, bytes]:
    """(offset, bytes) of what the open journal holds after its checkpoint (all of it when the
    checkpoint lies past the end: the journal was truncated or replaced)."""
    size = file.seek(0, os.SEEK_END)
    start = read_checkpoint(journal)
    start = 0 if start > size else start
    file.seek(start)
    return start, file.read()


def complete_records(tail: bytes) -> Iterator[dict[str, Any]]:
    """The records on the complete lines of `tail` (a torn last line is not one)."""
    for line in tail[: tail.rfind(b"\n") + 1].splitlines():
        record = parse_line(line)
        if record is not None:
            yield record


def versions_written(location: str) -> set[tuple[str, int]] | None:
    """The article versions on complete lines after the checkpoint of the journal at
    `location`; None when it cannot be read from here (another host, gone, too long)."""
    host, _, path = location.partition("\n")
    if host != socket.gethostname() or not path:
        return None
    journal = Path(path)
    try:
        if journal.stat().st_size - read_checkpoint(journal) > MAX_TAIL_BYTES:
            return None
        with journal.open("rb") as file:
            _, tail = tail_after_checkpoint(file, journal)
    except OSError:
        return None
    versions = (item_version(record) for record in complete_records(tail))
    return {version for version in versions if version is not None}
