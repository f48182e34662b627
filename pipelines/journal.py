"""Crash-safe JSON Lines output: each article is appended and flushed before it counts as done.

Scrapy's FEEDS (`-o`) buffer what they write and finish the file on close, so a killed crawler
loses the articles they held while the ledger already counts them as seen. The journal writes
every article as one line, flushed to the operating system (and fsync'ed with
HARVEST_JOURNAL_FSYNC) inside `process_item`; only afterwards (item_scraped) does the ledger
mark it done. It is the last pipeline, so nothing after it can fail an item it has written.

The one crash window left is between the write and the done mark. Before the write, the ledger
gets an output mark (`output_started`), and the journal registers where it is: a worker killed
in the window and never restarted has its journal's tail read by the worker that takes its
claims over, which marks done what the journal holds instead of fetching it into a second
journal, and fetches again what it does not (killed between the mark and the write) or cannot
read (another host) (crawler/core/journal_files.py). On open the journal closes it:
it reads the lines written after its checkpoint (the offset up to which every line is known to be
marked done), marks those articles done (idempotent), and cuts a trailing partial line. The
checkpoint (`<journal>.checkpoint`, replaced atomically) advances as done marks are confirmed.

A write that fails (disk full, over a file-size limit, an I/O error; or its fsync) leaves the
journal as it was before it: the partial line is cut off, so the next article's line does not
start glued to its bytes (unparseable: lost to readers and to reconciling, though marked done).
If even the cut fails, the journal is dirty and is cut before the next write (which fails while
it cannot be): crawler/core/lines.py. The item raises: it stays pending and is output on a later
try. Failures count in `journal/write_errors`; after JOURNAL_MAX_FAILURES_IN_A_ROW of them with
no write in between, the crawl closes with finish_reason `journal_unwritable` (exit status 74).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.serialize import ScrapyJSONEncoder

from crawler.core.commit import ArticleLedger, item_version, ledger_of
from crawler.core.failures import FailureLog, one_line
from crawler.core.items import TRANSIENT_FIELDS
from crawler.core.journal_files import (
    JOURNAL_UNWRITABLE,
    complete_records,
    journal_location,
    tail_after_checkpoint,
    write_checkpoint,
)
from crawler.core.lines import LineAppender, open_for_appending
from crawler.core.unstored import OutputNotStored, close_crawl

log = logging.getLogger(__name__)

CHECKPOINT_EVERY = 100  # confirmed lines between checkpoint writes (a restart rereads fewer)
# Failed writes in a row (no write succeeding in between) after which the crawl closes: that
# many is the file system (full, read-only, failing), not one article. Each failed write spends
# one of the article's HARVEST_MAX_ATTEMPTS tries; a crawl that went on against a full disk would
# give up every article it fetched. Closed, the articles stay pending for the next start.
JOURNAL_MAX_FAILURES_IN_A_ROW = 10


class JournalWriteError(OSError, OutputNotStored):
    """The journal could not take an article's line (the journal is left as it was)."""


class JournalPipeline:
    def __init__(self, crawler: Crawler, ledger: ArticleLedger, path: Path, fsync: bool) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.path = path
        self.fsync = fsync
        self.harvest = ledger
        self.encoder = ScrapyJSONEncoder(ensure_ascii=False)
        self.file: Any = None
        self.lines: LineAppender | None = None  # appends to `file`, each line whole or not at all
        # (key, version) of each line written and not yet marked done -> offset where it starts.
        # Keyed by the article, not by id(item): the id of a freed item is reused by the next
        # one, which would overwrite (or, confirmed, drop) the entry of a line never marked
        # done, and the checkpoint would move past it (a restart fetches it again: a duplicate).
        self.unconfirmed: dict[tuple[str, int], int] = {}
        self.checkpoint = 0
        self.confirmed_since_checkpoint = 0
        self.failures_in_a_row = 0
        self.closing: asyncio.Task[None] | None = None  # the close this journal asked for
        what = f"journal {path}: an article's line not written"
        self.write_failures = FailureLog(log, "journal/write_errors", what)
        self.harvest.on_done(self._confirmed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> JournalPipeline:
        path = (crawler.settings.get("HARVEST_JOURNAL_PATH") or "").strip()
        if not path:
            raise NotConfigured("HARVEST_JOURNAL_PATH is empty")
        ledger = ledger_of(crawler)
        if ledger is None:
            raise NotConfigured("HARVEST_JOURNAL_PATH needs the feeds spider (it keeps the ledger)")
        # A shared ledger (other workers take over a killed one's claims) gets output marks.
        journal = JournalPipeline if ledger.single_process else SharedLedgerJournalPipeline
        return journal(
            crawler, ledger, Path(path), crawler.settings.getbool("HARVEST_JOURNAL_FSYNC")
        )

    async def open_spider(self) -> None:
        await self.harvest.open()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open_for_appending(self.path)
        reconciled = await self._reconcile()
        if reconciled:
            log.info("journal %s: %d article(s) written before a crash marked done", self.path,
                     reconciled)  # fmt: skip
        self.stats.set_value("journal/reconciled", reconciled)

    async def _reconcile(self) -> int:
        """Mark done every article written after the checkpoint; cut a torn last line."""
        start, tail = tail_after_checkpoint(self.file, self.path)
        complete = tail.rfind(b"\n") + 1
        if complete < len(tail):
            log.warning("journal %s: cutting a partial last line (%d bytes)", self.path,
                        len(tail) - complete)  # fmt: skip
            self.file.truncate(start + complete)
        marked = 0
        for record in complete_records(tail):
            found = item_version(record)
            if found and await self.harvest.mark_done(*found, item=record):
                marked += 1
        end = start + complete
        self.lines = LineAppender(self.file, end, fsync=self.fsync, name=f"journal {self.path}")
        self._write_checkpoint(self.offset)
        return marked

    @property
    def offset(self) -> int:
        """The end of the journal (0 before it is opened)."""
        return 0 if self.lines is None else self.lines.end

    def process_item(self, item: Any) -> Any:
        return self._write(item)

    def _write(self, item: Any) -> Any:
        record = {k: v for k, v in dict(item).items() if k not in TRANSIENT_FIELDS}
        line = (self.encoder.encode(record) + "\n").encode("utf-8")
        assert self.lines is not None, "process_item before open_spider"
        try:
            start = self.lines.append(line)
        except OSError as error:
            self._failed(item, error)
            message = f"journal {self.path}: {one_line(error)}"
            raise JournalWriteError(error.errno, message) from error
        self.failures_in_a_row = 0
        found = item_version(item)
        if found is not None:  # the first line of a version written twice holds the checkpoint
            self.unconfirmed.setdefault(found, start)
        self.stats.inc_value("journal/written")
        return item

    def _failed(self, item: Any, error: OSError) -> None:
        """A write failed part way (or its fsync did; the appender cut what it added): report,
        and close the crawl once writes keep failing."""
        self.failures_in_a_row += 1
        self.write_failures.report(self.stats, error, str(item.get("url") or ""))
        if self.failures_in_a_row == JOURNAL_MAX_FAILURES_IN_A_ROW:
            self._close_crawl(error)

    def _close_crawl(self, error: OSError) -> None:
        closing = close_crawl(self.crawler, JOURNAL_UNWRITABLE)
        if closing is None:
            return
        log.critical("journal %s: %d writes failed in a row (last: %s); closing the crawl, the "
                     "articles not written stay pending for the next start", self.path,
                     self.failures_in_a_row, one_line(error))  # fmt: skip
        self.stats.set_value("journal/unwritable", 1)
        self.closing = closing  # held: not collected

    def _confirmed(self, item: Any, stored: bool) -> None:
        found = item_version(item)
        if found is None or self.unconfirmed.pop(found, None) is None:
            return
        self.confirmed_since_checkpoint += 1
        if self.confirmed_since_checkpoint >= CHECKPOINT_EVERY:
            self._advance()

    def _advance(self) -> None:
        safe = min(self.unconfirmed.values(), default=self.offset)
        if safe > self.checkpoint:
            self._write_checkpoint(safe)
        self.confirmed_since_checkpoint = 0

    def close_spider(self) -> None:
        if self.file is None:
            return
        self._advance()
        self.file.close()
        self.file = None

    def _write_checkpoint(self, offset: int) -> None:
        write_checkpoint(self.path, offset)
        self.checkpoint = offset


class SharedLedgerJournalPipeline(JournalPipeline):
    """The journal of a worker whose claims another worker takes over if it is killed."""

    async def open_spider(self) -> None:
        await super().open_spider()
        # Where this journal is: a worker taking this one's claims over reads what it holds.
        try:
            await self.harvest.journal_opened(journal_location(self.path))
        except Exception as error:  # a take-over then hands marked articles out again
            log.warning("journal %s: not registered with the ledger (%s)", self.path, error)

    async def process_item(self, item: Any) -> Any:
        # Marked first: killed after the write and before the done mark, this worker's journal
        # holds the article, and the ledger says so to whoever takes its claims over (who reads
        # the journal's tail: killed between the mark and the write, the article is not there
        # and is handed out again).
        await self.harvest.output_started(item)
        return self._write(item)
