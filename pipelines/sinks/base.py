"""What every index sink shares: batching, retries with backoff, the spill journal and replay.

A sink is a Scrapy item pipeline that buffers article records and writes them to its backend in
batches (when `SINK_BATCH_SIZE` records are waiting, when the oldest has waited
`SINK_BATCH_SECONDS`, and at close). Backends upsert by canonical URL, so writing a record twice
changes nothing: that is what makes retries and journal replay safe.

When a write fails because the backend is unreachable, the sink retries with exponential backoff,
then appends the batch to its journal (under the state directory) and marks the backend down:
later batches go straight to the journal instead of stalling the crawl, and every
`SINK_RECONNECT_SECONDS` the sink tries to replay the journal. Replay also runs at start (a
previous run's leftovers) and at close. A backend unreachable at start stops the crawl with one
clear log line (SINK_START_POLICY = "fail", crawler/core/outage.py), or, with "journal", the sink
starts down and journals until the backend answers. A record the backend refuses for its
content (not for being down) is written aside to `<sink>.rejected.jsonl` with the error, never
retried forever.

Articles the sink could neither write nor journal (the journal's disk full, say), or neither
write nor set aside as refused, are not delivered: their items raise `NotDelivered`, so the
harvest records a failed try and they stay pending (fetched and processed again later), never
passing as done. Counted in `sink/<name>/undelivered`; each failed journal append in
`sink/<name>/spill_errors`, each failed rejected-file write in `sink/<name>/rejected_write_errors`.

Items flagged as near-duplicates (`duplicate_of` set) are counted, not indexed.
`sink/<name>/seconds` sums the time spent writing batches (retries and journal included).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from scrapy.statscollectors import StatsCollector

from crawler.core.domainstats import inc_domain, stage_seconds
from crawler.core.failures import FailureLog
from crawler.core.outage import start_failure
from crawler.core.paths import journal_dir
from crawler.core.rejected import append_rejected
from crawler.core.spill import JOURNAL_SUFFIX, REJECTED_SUFFIX, Journal, journal_paths
from crawler.core.unstored import OutputNotStored
from pipelines.sinks.records import InvalidRecord, article_record, latest_per_key

log = logging.getLogger(__name__)

# The timer wakes this many times per batch interval to check the oldest buffered record's age.
TIMER_TICKS_PER_INTERVAL = 4
MIN_TIMER_SECONDS = 0.05

# What a sink does when its backend is unreachable at start-up: "fail" = one clear log line and
# the crawl stops (finish_reason backend_unavailable); "journal" = log it and keep crawling into
# the journal, replayed once the backend answers.
START_POLICY_FAIL = "fail"
START_POLICY_JOURNAL = "journal"
START_POLICIES = (START_POLICY_FAIL, START_POLICY_JOURNAL)


@dataclass(frozen=True)
class SinkOptions:
    batch_size: int
    batch_seconds: float
    retry_times: int
    backoff_seconds: float
    backoff_max_seconds: float
    reconnect_seconds: float
    connect_timeout_seconds: float
    write_timeout_seconds: float
    journal_dir: Path
    journal_fsync: bool
    start_policy: str

    @classmethod
    def from_settings(cls, settings: Any) -> SinkOptions:
        options = cls(
            batch_size=max(1, settings.getint("SINK_BATCH_SIZE")),
            batch_seconds=max(0.0, settings.getfloat("SINK_BATCH_SECONDS")),
            retry_times=max(0, settings.getint("SINK_RETRY_TIMES")),
            backoff_seconds=max(0.0, settings.getfloat("SINK_RETRY_BACKOFF_SECONDS")),
            backoff_max_seconds=max(0.0, settings.getfloat("SINK_RETRY_BACKOFF_MAX_SECONDS")),
            reconnect_seconds=max(0.0, settings.getfloat("SINK_RECONNECT_SECONDS")),
            connect_timeout_seconds=settings.getfloat("SINK_CONNECT_TIMEOUT_SECONDS"),
            write_timeout_seconds=settings.getfloat("SINK_WRITE_TIMEOUT_SECONDS"),
            journal_dir=journal_dir(settings),
            journal_fsync=settings.getbool("SINK_JOURNAL_FSYNC"),
            start_policy=settings.get("SINK_START_POLICY"),
        )
        if options.start_policy not in START_POLICIES:
            raise ValueError(f"SINK_START_POLICY must be one of {START_POLICIES}")
        return options

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (0-based): doubling, capped."""
        return min(self.backoff_max_seconds, self.backoff_seconds * 2**attempt)


class BackendUnavailable(Exception):
    """Connecting failed: whatever the driver said, no record is to blame."""


class NotDelivered(OutputNotStored):
    """An item's article is neither in the backend nor in the journal (nor set aside as
    refused): the item fails, and the harvest tries it again later."""


class BatchingSink(ABC):
    """Base of the index sinks. Subclasses name themselves and implement the four backend
    methods; everything about batching, failure and replay lives here."""

    name: ClassVar[str]
    backend: ClassVar[str]  # what it writes to, for `backend/<backend>/...` stats and log lines
    setting: ClassVar[str]  # the setting that points at the backend (named when it is down)
    # False when another component counts the backend's outages (the Redis gate for Redis).
    counts_backend_outages: ClassVar[bool] = True

    def __init__(self, stats: StatsCollector, options: SinkOptions) -> None:
        self.stats = stats
        self.options = options
        self._buffer: list[dict[str, Any]] = []
        self._buffer_since: float | None = None
        # Resolved once the buffered batch is committed (or journalled): items wait for it.
        self._buffer_delivered: asyncio.Future[dict[str, str]] | None = None
        self._lock = asyncio.Lock()  # one delivery (write, spill or replay) at a time
        # Canonical URL -> why, of the articles of the batch being delivered that were not.
        self._undelivered: dict[str, str] = {}
        self._undelivered_count = 0  # articles not delivered so far (replay checks it moved)
        self._connected = False
        self._down_since: float | None = None  # monotonic time the backend went down
        self._retry_at = 0.0  # when to probe a down backend again
        self._journals: list[Journal] = []  # [own journal (if any), adopted orphans ...]
        self._own_journal: Journal | None = None
        self._timer_failures = FailureLog(
            log, f"sink/{self.name}/timer_errors", f"sink {self.name}: timer flush failed"
        )
        self._spill_failures = FailureLog(
            log, f"sink/{self.name}/spill_errors",
            f"sink {self.name}: articles neither written nor journalled; their items fail and "
            "are tried again later",
        )  # fmt: skip
        self._reject_failures = FailureLog(
            log, f"sink/{self.name}/rejected_write_errors",
            f"sink {self.name}: a refused article not set aside; its item fails and is tried "
            "again later",
        )  # fmt: skip
        self._timer: asyncio.Task[None] | None = None
        self._start_failed = False  # the backend was down at start and the policy is "fail"

    # --- the backend (subclasses) ---------------------------------------------------------

    @abstractmethod
    async def connect(self) -> None:
        """Open the connection and create or migrate what the backend needs."""

    @abstractmethod
    async def write(self, records: list[dict[str, Any]]) -> int:
        """Upsert the records (at most one per canonical URL) in one batch; idempotent.
        Returns how many were new articles or new versions (the rest changed nothing)."""

    @abstractmethod
    async def disconnect(self) -> None:
        """Close the connection; must not raise on a broken one."""

    @abstractmethod
    def is_unavailable(self, error: BaseException) -> bool:
        """True if the error means the backend cannot be reached (retry, then journal), False
        if it refused the data itself (reject the record)."""

    def describe(self) -> str:
        """Where this sink writes, for log lines (no credentials)."""
        return self.name

    # --- Scrapy pipeline interface --------------------------------------------------------

    async def open_spider(self) -> None:
        self._journals = await asyncio.to_thread(self._claim_existing_journals)
        own_name = f"{self.name}{JOURNAL_SUFFIX}"
        self._own_journal = next((j for j in self._journals if j.path.name == own_name), None)
        pending = self.journal_pending
        if pending:
            log.info(
                "sink %s: %d articles left in its journal by an earlier run", self.name, pending
            )
        try:
            await self._connect()
        except BackendUnavailable as error:
            self._unavailable_at_start(error)
        else:
            if pending:
                async with self._lock:
                    await self._replay(retries=self.options.retry_times)
        self._timer = asyncio.create_task(self._run_timer(), name=f"sink-{self.name}-timer")

    async def process_item(self, item: Any) -> Any:
        domain = item.get("domain") or "unknown"
        if item.get("duplicate_of"):
            self._inc("skipped_duplicate")
            inc_domain(self.stats, domain, f"sink/{self.name}/skipped_duplicate")
            return item
        try:
            record = article_record(item)
        except InvalidRecord as error:
            self._inc("skipped_invalid")
            log.warning("sink %s: not indexed: %s", self.name, error)
            return item
        self._buffer.append(record)
        if self._buffer_delivered is None:
            self._buffer_since = time.monotonic()
            self._buffer_delivered = asyncio.get_running_loop().create_future()
        delivered = self._buffer_delivered
        if len(self._buffer) >= self.options.batch_size:
            await self.flush()
        # Acknowledge only after the commit: the item leaves the pipeline (and the harvest
        # marks its URL done) when the article is durable in the backend or in the journal.
        undelivered = await asyncio.shield(delivered)
        why = undelivered.get(record["canonical_url"])
        if why is not None:
            raise NotDelivered(f"sink {self.name}: {record['canonical_url']} {why}")
        return item

    async def close_spider(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
        if self._start_failed:  # nothing was crawled: leave the journal as it is, at once
            for journal in self._journals:
                await asyncio.to_thread(journal.close)
            return
        await self.flush()
        async with self._lock:
            if self.journal_pending:
                # One last full attempt (with backoff) before leaving articles for the next run.
                await self._replay(retries=self.options.retry_times)
            left = self.journal_pending
            self.stats.set_value(f"sink/{self.name}/journal_pending", left)
            if self._down_since is not None:  # still down: count the outage so far
                self._count_down_time(time.monotonic() - self._down_since)
            for journal in self._journals:
                await asyncio.to_thread(journal.close)
            await self._disconnect()
        if left:
            log.warning(
                "sink %s: %d articles wait in %s; they are replayed on the next start",
                self.name,
                left,
                self.options.journal_dir,
            )

    # --- batching -------------------------------------------------------------------------

    async def flush(self) -> None:
        """Deliver everything buffered now, then release the items waiting for it (those of
        articles not delivered to fail)."""
        async with self._lock:
            batch, self._buffer, self._buffer_since = self._buffer, [], None
            delivered, self._buffer_delivered = self._buffer_delivered, None
            undelivered = self._undelivered = {}
            # Batches are written one at a time (the lock), so these seconds never overlap.
            with stage_seconds(self.stats, f"sink/{self.name}/seconds"):
                try:
                    if batch:
                        await self._deliver(batch)
                except BaseException as error:
                    # Not delivered: the items fail (the harvest retries them), never pass as done.
                    if delivered is not None and not delivered.done():
                        delivered.set_exception(error)
                    raise
            if delivered is not None and not delivered.done():
                delivered.set_result(undelivered)
            self._undelivered = {}  # what a replay outside a flush adds concerns no item

    @property
    def journal_pending(self) -> int:
        return sum(journal.pending for journal in self._journals)

    @property
    def available(self) -> bool:
        return self._down_since is None

    async def _deliver(self, batch: list[dict[str, Any]]) -> None:
        if not self.available and time.monotonic() < self._retry_at:
            await self._spill(batch)  # known down: do not stall the crawl on retries
            return
        if self.journal_pending:
            # Older articles first: a version replayed after a newer one would be ignored
            # anyway (backends keep the latest fetch), but readers of the stream see order.
            retries = 0 if not self.available else self.options.retry_times
            if not await self._replay(retries=retries):
                await self._spill(batch)
                return
        if not await self._write_with_retries(batch, self.options.retry_times):
            await self._spill(batch)

    async def _run_timer(self) -> None:
        interval = min(self.options.batch_seconds, self.options.reconnect_seconds)
        tick = max(MIN_TIMER_SECONDS, interval / TIMER_TICKS_PER_INTERVAL)
        while True:
            await asyncio.sleep(tick)
            try:
                await self._on_timer()
            except Exception as error:  # the timer must outlive any one failure
                self._timer_failures.report(self.stats, error)

    async def _on_timer(self) -> None:
        now = time.monotonic()
        if (
            self._buffer_since is not None
            and now - self._buffer_since >= self.options.batch_seconds
        ):
            await self.flush()
        elif self.journal_pending and not self.available and now >= self._retry_at:
            async with self._lock:
                await self._replay(retries=0)

    # --- writing, failing, spilling -------------------------------------------------------

    async def _write_with_retries(self, records: list[dict[str, Any]], retries: int) -> bool:
        """Write the records; False (backend marked down) once `retries` retries failed."""
        records = latest_per_key(records)
        error: BaseException | None = None
        for attempt in range(retries + 1):
            if attempt:
                self._inc("retries")
                await asyncio.sleep(self.options.backoff(attempt - 1))
            try:
                await self._write_batch(records)
            except Exception as failure:
                if not self._is_unavailable(failure):
                    return await self._write_individually(records)
                error = failure
                await self._disconnect()
                continue
            self._mark_up()
            return True
        assert error is not None
        self._mark_down(error)
        return False

    async def _write_batch(self, records: list[dict[str, Any]]) -> None:
        if not self._connected:
            await self._connect()
        changed = await asyncio.wait_for(self.write(records), self.options.write_timeout_seconds)
        self._inc("written", len(records))
        self._inc("changed", changed)
        self._inc("batches")

    async def _write_individually(self, records: list[dict[str, Any]]) -> bool:
        """A batch the backend refused: find the records it refuses and set them aside."""
        for index, record in enumerate(records):
            try:
                await self._write_batch([record])
            except Exception as error:
                if self._is_unavailable(error):
                    await self._disconnect()
                    self._mark_down(error)
                    await self._spill(records[index:])
                    return True  # the rest is safe in the journal
                await self._reject(record, error)
        self._mark_up()
        return True

    async def _connect(self) -> None:
        try:
            await asyncio.wait_for(self.connect(), self.options.connect_timeout_seconds)
        except Exception as error:
            await self._disconnect()
            raise BackendUnavailable(_one_line(error)) from error
        self._connected = True

    def _is_unavailable(self, error: BaseException) -> bool:
        return isinstance(error, BackendUnavailable | TimeoutError) or self.is_unavailable(error)

    async def _disconnect(self) -> None:
        self._connected = False
        try:
            await self.disconnect()
        except Exception as error:  # a broken connection may fail to close: it is gone anyway
            log.debug("sink %s: error while disconnecting: %r", self.name, error)

    def _mark_down(self, error: BaseException) -> None:
        now = time.monotonic()
        self._retry_at = now + self.options.reconnect_seconds
        if self._down_since is None:
            self._down_since = now
            self._inc("unavailable")
            if self.counts_backend_outages:
                self.stats.inc_value(f"backend/{self.backend}/unavailable")
            log.error(
                "sink %s: %s is unavailable (%s); journalling to %s, retrying every %g s",
                self.name,
                self.describe(),
                _one_line(error),
                self.options.journal_dir,
                self.options.reconnect_seconds,
            )

    def _mark_up(self) -> None:
        if self._down_since is not None:
            down = time.monotonic() - self._down_since
            log.info("sink %s: %s is back after %.1f s", self.name, self.describe(), down)
            self._count_down_time(down)
            self._down_since = None

    def _count_down_time(self, seconds: float) -> None:
        self.stats.inc_value(f"sink/{self.name}/unavailable_seconds", seconds)
        if self.counts_backend_outages:
            self.stats.inc_value(f"backend/{self.backend}/unavailable_seconds", seconds)

    def _unavailable_at_start(self, error: BaseException) -> None:
        """START_POLICY_FAIL: the crawl stops with one clear line; START_POLICY_JOURNAL: one
        clear line, then crawl into the journal."""
        if self.options.start_policy == START_POLICY_JOURNAL:
            self._mark_down(error)
            return
        self._start_failed = True
        raise start_failure(
            self.stats,
            self.backend,
            f"{self.describe()} is unavailable ({_one_line(error)}); check {self.setting}, or "
            "set SINK_START_POLICY=journal to crawl into the journal until it is back",
        )

    async def _spill(self, records: list[dict[str, Any]]) -> None:
        try:  # opening the journal fails on a full or broken disk as appending to it does
            if self._own_journal is None:
                self._own_journal = await asyncio.to_thread(
                    Journal.claim_for_appending,
                    self.options.journal_dir,
                    self.name,
                    fsync=self.options.journal_fsync,
                )
                self._journals.insert(0, self._own_journal)
            await asyncio.to_thread(self._own_journal.append, records)
        except OSError as error:  # the journal is left as it was: none of them is in it
            self._spill_failures.report(self.stats, error, f"{len(records)} articles")
            self._not_delivered(records, f"neither written nor journalled ({_one_line(error)})")
            return
        self._inc("spilled", len(records))
        for record in records:  # per domain: which publishers' articles wait in the journal
            inc_domain(self.stats, record.get("domain") or "unknown", f"sink/{self.name}/spilled")

    async def _reject(self, record: dict[str, Any], error: BaseException) -> None:
        self._inc("rejected")
        log.error(
            "sink %s: %s refused %s: %s",
            self.name,
            self.describe(),
            record.get("canonical_url"),
            _one_line(error),
        )
        path = self.options.journal_dir / f"{self.name}{REJECTED_SUFFIX}"
        rejected = {"error": _one_line(error), "record": record}
        try:
            await asyncio.to_thread(append_rejected, path, rejected)
        except OSError as write_error:
            url = str(record.get("canonical_url"))
            self._reject_failures.report(self.stats, write_error, url)
            why = f"refused and not set aside in {path} ({_one_line(write_error)})"
            self._not_delivered([record], why)

    def _not_delivered(self, records: list[dict[str, Any]], why: str) -> None:
        """The items of these articles fail when their batch is settled (flush)."""
        self._inc("undelivered", len(records))
        self._undelivered_count += len(records)
        for record in records:
            self._undelivered[record["canonical_url"]] = why

    # --- replay ---------------------------------------------------------------------------

    def _claim_existing_journals(self) -> list[Journal]:
        claimed = []
        for path in journal_paths(self.options.journal_dir, self.name):
            journal = Journal.claim(path, fsync=self.options.journal_fsync)
            if journal is not None:  # else another running crawl owns it
                claimed.append(journal)
        return claimed

    async def _replay(self, retries: int) -> bool:
        """Write every journalled record to the backend, oldest first; False if it is (still)
        down. Each chunk written is committed, so a failure mid-way resumes there."""
        for journal in list(self._journals):
            chunks = journal.chunks(self.options.batch_size)
            while (step := await asyncio.to_thread(next, chunks, None)) is not None:
                records, offset = step
                undelivered = self._undelivered_count
                if records and not await self._write_with_retries(records, retries):
                    return False
                if self._undelivered_count != undelivered:
                    # Some of the chunk went neither to the backend nor back to a journal nor
                    # aside: not committed, it is replayed again later.
                    return False
                await asyncio.to_thread(journal.commit, offset, len(records))
                self._inc("replayed", len(records))
            self._inc("journal_rejected", journal.rejected)
            journal.rejected = 0
            if journal is not self._own_journal:  # an adopted orphan, now empty: let it go
                await asyncio.to_thread(journal.close)
                self._journals.remove(journal)
        return True

    def _inc(self, counter: str, count: int = 1) -> None:
        if count:
            self.stats.inc_value(f"sink/{self.name}/{counter}", count)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    if isinstance(error, BackendUnavailable):
        return text  # already says what the driver said
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
