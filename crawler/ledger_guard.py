"""The Redis harvest ledger through outages: operations wait for Redis, done marks never do.

`GuardedHarvestState` wraps `RedisHarvestState` for the crawler (crawler/core/outage.py has the
policy):

* reads, claims, feed schedules: retried through the `RedisGate` (they wait while Redis is down).
  Claims carry a token, so a claim whose reply was lost in the outage is handed out by its retry
  rather than left pending until its lease runs out;
* done and failed marks: stored directly while Redis answers; otherwise appended to the
  `MarkOutbox` and fsynced before the item counts as finished. An article that was output while
  Redis was down is therefore never fetched and output again: the outbox is replayed when Redis
  answers (before the crawl resumes) and at the next start (before pending claims are
  recovered), and a done mark is idempotent.
* a failed mark kept in the outbox has no outcome yet (`FailOutcome.DEFERRED`): whether it was
  the last try is known only when it is stored. It carries the rejected record its caller made
  (crawler/core/rejected.py); a replay that gives the article up keeps that record in
  `pipeline.rejected.jsonl` and counts `harvest/rejected`, as the harvest does when Redis
  answers at once (`harvest/given_up` for a failed fetch, which has no record; `harvest/retry`
  for a retry). A crash between storing such a mark and writing its record loses the record, as
  the same crash would without an outage.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from scrapy.statscollectors import StatsCollector

from crawler.core.outage import RedisGate, attempt, is_connection_error
from crawler.core.spill import JOURNAL_SUFFIX, Journal, journal_paths
from crawler.ledger import (
    DONE,
    FAILED,
    Claim,
    Count,
    Entry,
    FailOutcome,
    ForeignClaims,
    HarvestState,
    Orphans,
    RedisHarvestState,
    Rejected,
)
from crawler.polling import FeedState

log = logging.getLogger(__name__)

OUTBOX_NAME = "harvest-marks"  # <state dir>/journal/harvest-marks.journal.jsonl
OUTBOX_FILE = f"{OUTBOX_NAME}{JOURNAL_SUFFIX}"
REPLAY_CHUNK = 500  # marks read per chunk when replaying


class MarkOutbox:
    """Done/failed marks waiting for Redis, one JSON line each, in the sinks' journal format
    (locked per process, fsynced, replayed from a committed offset)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._journals: list[Journal] = []  # [own (once written), orphans of other runs ...]
        self._own: Journal | None = None
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        claimed = await asyncio.to_thread(self._claim_existing)
        self._journals = claimed
        self._own = next((j for j in claimed if j.path.name == OUTBOX_FILE), None)

    def _claim_existing(self) -> list[Journal]:
        found = (Journal.claim(path) for path in journal_paths(self.directory, OUTBOX_NAME))
        return [journal for journal in found if journal is not None]

    @property
    def pending(self) -> int:
        return sum(journal.pending for journal in self._journals)

    async def add(
        self,
        key: str,
        version: int,
        mark: str,
        at: float,
        counts: Sequence[Count] = (),
        rejected: Rejected | None = None,
    ) -> None:
        record: dict[str, Any] = {"canonical_url": key, "version": version, "mark": mark, "at": at}
        if counts:
            record["counts"] = [list(count) for count in counts]
        if rejected is not None:
            # As JSON text, ASCII only: an item holds what a JSON line may not (a datetime, a
            # lone surrogate); crawler/core/rejected.py writes it as the rejected file does.
            record["rejected"] = json.dumps(rejected, default=str)
        async with self._lock:
            if self._own is None:
                self._own = await asyncio.to_thread(
                    Journal.claim_for_appending, self.directory, OUTBOX_NAME
                )
                self._journals.insert(0, self._own)
            await asyncio.to_thread(self._own.append, [record])

    async def replay(self, state: HarvestState, on_failed: FailedMarkStored | None = None) -> int:
        """Store every mark in `state`, oldest first; `on_failed(outcome, rejected record or
        None)` acts on each failed mark's outcome before its chunk is committed. A connection
        error stops the replay where it is (what was stored is committed) and propagates."""
        replayed = 0
        async with self._lock:
            for journal in list(self._journals):
                chunks = journal.chunks(REPLAY_CHUNK)
                while (step := await asyncio.to_thread(next, chunks, None)) is not None:
                    records, offset = step
                    for record in records:
                        outcome = await _store(state, record)
                        if outcome is not None and on_failed is not None:
                            rejected = record.get("rejected")
                            await on_failed(outcome, json.loads(rejected) if rejected else None)
                    await asyncio.to_thread(journal.commit, offset, len(records))
                    replayed += len(records)
                if journal is not self._own:
                    await asyncio.to_thread(journal.close)
                    self._journals.remove(journal)
        return replayed

    async def close(self) -> None:
        async with self._lock:
            for journal in self._journals:
                await asyncio.to_thread(journal.close)
            self._journals, self._own = [], None


# What acts on a failed mark's outcome once the outbox stored it: (outcome, rejected record).
FailedMarkStored = Callable[[FailOutcome, Rejected | None], Awaitable[None]]


async def _store(state: HarvestState, record: dict[str, Any]) -> FailOutcome | None:
    """Store one mark; a failed mark's outcome (None for a done mark)."""
    key, version, at = record["canonical_url"], int(record["version"]), float(record["at"])
    if record.get("mark") == FAILED:
        return await state.fail(key, version, at)
    counts = [(str(hash_key), str(name)) for hash_key, name in record.get("counts") or ()]
    await state.done(key, version, at, counts)
    return None


class GuardedHarvestState(HarvestState):
    """A RedisHarvestState that waits out Redis outages (see the module docstring)."""

    def __init__(
        self,
        inner: RedisHarvestState,
        gate: RedisGate,
        outbox: MarkOutbox,
        on_failed: FailedMarkStored | None = None,
    ) -> None:
        super().__init__(inner.config, inner.owner)
        self.inner = inner
        self.gate = gate
        self.outbox = outbox
        self.on_failed = on_failed  # acts on the outcome of a failed mark the outbox stored

    @property
    def stats(self) -> StatsCollector:
        return self.gate.stats

    async def open(self) -> None:
        await self.gate.check_at_start()
        async with self.gate.starting():
            await self.inner.open()
            await self.outbox.open()
            if self.outbox.pending:
                replayed = await self.outbox.replay(self.inner, self.on_failed)
                self.stats.inc_value("harvest/outbox/replayed", replayed)
                log.info("%d done mark(s) kept while Redis was down are stored now", replayed)
        self.gate.on_recovery(self._replay)

    async def close(self) -> None:
        if self.outbox.pending and self.gate.available:
            try:
                await self._replay()
            except Exception as error:
                if not is_connection_error(error):
                    raise
        if self.outbox.pending:
            log.warning("%d done mark(s) wait in %s for Redis; they are stored at the next "
                        "start", self.outbox.pending, self.outbox.directory)  # fmt: skip
        await self.outbox.close()
        await self.inner.close()

    async def _replay(self) -> str | None:
        replayed = await self.outbox.replay(self.inner, self.on_failed)
        if not replayed:
            return None
        self.stats.inc_value("harvest/outbox/replayed", replayed)
        return f"{replayed} done mark(s) stored"

    # --- marks: never wait ----------------------------------------------------------------

    async def output_started(self, key: str, version: int, counts: Sequence[Count] = ()) -> bool:
        """False when Redis is unreachable: the journal writes on without the mark (a take-over
        may then hand the article out again, as before there were output marks)."""
        if not self.gate.available:
            return False
        try:
            return await attempt(lambda: self.inner.output_started(key, version, counts))
        except Exception as error:
            self._unreachable(error)
        return False

    async def done(self, key: str, version: int, now: float, counts: Sequence[Count] = ()) -> bool:
        """True also for a mark kept in the outbox (as far as this process knows, it is the
        pending version: the replay stores it, idempotently)."""
        if self.gate.available:
            try:
                return await attempt(lambda: self.inner.done(key, version, now, counts))
            except Exception as error:
                self._unreachable(error)
        await self.outbox.add(key, version, DONE, now, counts)
        self.stats.inc_value("harvest/outbox/buffered")
        return True

    async def fail(
        self, key: str, version: int, now: float, rejected: Rejected | None = None
    ) -> FailOutcome:
        if self.gate.available:
            try:
                return await attempt(lambda: self.inner.fail(key, version, now))
            except Exception as error:
                self._unreachable(error)
        await self.outbox.add(key, version, FAILED, now, rejected=rejected)
        self.stats.inc_value("harvest/outbox/buffered")
        return FailOutcome.DEFERRED

    def _unreachable(self, error: Exception) -> None:
        """A mark's command failed: an outage is reported (the mark is then kept), anything
        else raises."""
        if not is_connection_error(error):
            raise error
        self.gate.report(error)

    # --- everything else: wait for Redis ------------------------------------------------------

    async def register_feeds(self, urls: Sequence[str]) -> None:
        await self.gate.call(lambda: self.inner.register_feeds(urls))

    async def load_feed(self, url: str) -> FeedState:
        return await self.gate.call(lambda: self.inner.load_feed(url))

    async def save_feed(self, state: FeedState) -> None:
        await self.gate.call(lambda: self.inner.save_feed(state))

    async def claim_due_feeds(self, now: float, limit: int = 100) -> list[str]:
        return await self.gate.call(lambda: self.inner.claim_due_feeds(now, limit))

    async def claim_entries(self, entries: Sequence[Entry], now: float) -> list[Claim]:
        token = uuid.uuid4().hex[:16]  # one per claim, reused by its retries
        return await self.gate.call(lambda: self.inner.claim_entries(entries, now, token=token))

    async def release_feed_polls(self, now: float) -> int:
        return await self.gate.call(lambda: self.inner.release_feed_polls(now))

    async def recover(self, now: float, everything: bool = False) -> list[Claim]:
        return await self.gate.call(lambda: self.inner.recover(now, everything))

    async def is_done(self, key: str, version: int) -> bool:
        return await self.gate.call(lambda: self.inner.is_done(key, version))

    async def heartbeat(self) -> bool:
        return await self.gate.call(self.inner.heartbeat)

    async def recover_orphans(self, now: float) -> Orphans:
        return await self.gate.call(lambda: self.inner.recover_orphans(now))

    async def foreign_claims(self) -> ForeignClaims:
        return await self.gate.call(self.inner.foreign_claims)

    async def register_journal(self, location: str) -> None:
        await self.gate.call(lambda: self.inner.register_journal(location))

    async def purge(self, now: float) -> int:
        return await self.gate.call(lambda: self.inner.purge(now))

    async def counts(self) -> dict[str, int]:
        return await self.gate.call(self.inner.counts)
