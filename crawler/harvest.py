"""The commit protocol of continuous harvesting: when an article counts as done.

One `Harvest` per crawler (`Harvest.of(crawler)`) owns the state store and the clock, and
listens to the item signals:

* `item_scraped` (the item left the last pipeline: every sink returned, so every sink has
  written it) and `item_dropped` (a stage decided on purpose not to output it: NULL page,
  duplicate) mark the article version *done* in the ledger;
* `item_error` (a stage raised: a sink that could not write, a bug some item triggers) records
  a failed try in the ledger, so the article is fetched and processed again later. The tries
  are counted in the ledger (across restarts and workers): the HARVEST_MAX_ATTEMPTS-th failure
  is final. The article then goes to `pipeline.rejected.jsonl` in the journal directory (beside
  the sinks' `<sink>.rejected.jsonl`: SINK_JOURNAL_DIR, else <STATE_DIR>/journal) with the error
  and where it was raised, and counts as `errors/rejected` of its domain: never lost silently,
  never tried again.

For sinks this means: finish the durable write before `process_item` returns (a batching sink
awaits the commit of the batch holding the item; items are processed concurrently, so batches
still fill), and raise rather than drop when the write failed. The crash window is between a
sink's write and the done mark: a sink keyed by (entry_url, version) is idempotent and needs
nothing more; an append-only sink reconciles on open like `pipelines.journal` does. Listeners
added with `on_done` run after the mark is stored. With the Redis ledger, a mark that cannot
reach Redis is stored in a local outbox instead and replayed (crawler/ledger_guard.py).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from twisted.python.failure import Failure

from crawler import polling
from crawler.core.clock import Clock, clock_from_settings
from crawler.core.commit import DoneCounter, install_ledger, item_version, ledger_of
from crawler.core.outage import RedisGate
from crawler.core.paths import state_dir
from crawler.core.rejected import keep_rejected, rejected_record
from crawler.core.unstored import UnstoredGuard
from crawler.core.urls import canonical_article_url
from crawler.feedparse import Feed, FeedEntry, FeedError, parse_feed
from crawler.ledger import (
    Claim,
    Entry,
    FailOutcome,
    HarvestState,
    RedisHarvestState,
    Rejected,
    SqliteHarvestState,
    open_harvest_state,
)
from crawler.ledger_guard import FailedMarkStored, GuardedHarvestState, MarkOutbox
from crawler.polling import FeedState, PollPolicy

log = logging.getLogger(__name__)


def iso(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch, UTC).isoformat() if epoch is not None else None


class Harvest:
    def __init__(self, crawler: Crawler, state: HarvestState, clock: Clock) -> None:
        self.crawler = crawler
        self.state = state
        self.clock = clock
        self._opened = False
        self._open_lock = asyncio.Lock()
        self._done_listeners: list[Callable[[Any, bool], None]] = []
        self._counters: list[DoneCounter] = []
        self._unstored = UnstoredGuard(crawler)  # closes the crawl when nothing can be stored

    @classmethod
    def of(cls, crawler: Crawler) -> Harvest:
        """The crawler's Harvest (created, and its signals connected, on first use)."""
        harvest = ledger_of(crawler)
        if not isinstance(harvest, Harvest):
            settings = crawler.settings
            harvest = cls(crawler, open_harvest_state(settings), clock_from_settings(settings))
            harvest.state = _guarded(crawler, harvest.state, harvest.failed_mark_stored)
            install_ledger(crawler, harvest)
            crawler.signals.connect(harvest.item_scraped, signal=signals.item_scraped)
            crawler.signals.connect(harvest.item_dropped, signal=signals.item_dropped)
            crawler.signals.connect(harvest.item_error, signal=signals.item_error)
            crawler.signals.connect(harvest.spider_closed, signal=signals.spider_closed)
        return harvest

    @property
    def available(self) -> bool:
        """False while the state's backend (Redis) is unreachable and the crawl paused."""
        return not isinstance(self.state, GuardedHarvestState) or self.state.gate.available

    @property
    def single_process(self) -> bool:
        """True for the embedded store: nothing but this process works on its claims."""
        return isinstance(self.state, SqliteHarvestState)

    async def open(self) -> HarvestState:
        async with self._open_lock:
            if not self._opened:
                await self.state.open()
                self._opened = True
        return self.state

    async def mark_done(self, key: str, version: int, item: Any = None) -> bool:
        """Mark an article version done outside the item signals (a journal reconciling)."""
        counts = self._counts(item) if item is not None else []
        return await self.state.done(key, version, self.clock.now(), counts)

    async def output_started(self, item: Any) -> None:
        """The journal is about to write `item` (crawler/ledger.py, output_started)."""
        found = item_version(item)
        if found is not None:
            await self.state.output_started(*found, self._counts(item))

    async def journal_opened(self, location: str) -> None:
        await self.state.register_journal(location)

    def count_on_done(self, counter: DoneCounter) -> bool:
        if self.single_process:
            return False  # nothing shared to count in: the counts stay the monitor's own
        self._counters.append(counter)
        return True

    def _counts(self, item: Any) -> list[tuple[str, str]]:
        return [count for counter in self._counters for count in counter(item)]

    def on_done(self, listener: Callable[[Any, bool], None]) -> None:
        """Call listener(item, outcome_stored) after an item's done/failed mark is stored."""
        self._done_listeners.append(listener)

    async def item_scraped(self, item: Any) -> None:
        await self._finish(item, output=True)

    async def item_dropped(self, item: Any, exception: BaseException) -> None:
        await self._finish(item, output=False)

    async def item_error(self, item: Any, failure: Failure) -> None:
        found = item_version(item)
        if found is None:
            return
        now = self.clock.now()
        # Made now, while the item and its error are at hand: kept if this try was the last.
        rejected = rejected_record(item, failure, self.state.config.max_attempts, iso(now))
        self._unstored.failed(failure.value)
        outcome = await self.state.fail(*found, now, rejected=rejected)
        await self.failed_mark_stored(outcome, rejected)
        self._notify(item, stored=False)

    async def failed_mark_stored(self, outcome: FailOutcome, rejected: Rejected | None) -> None:
        """Act on a failed try's outcome, now or when the outbox stores its mark (DEFERRED
        until then): the last try keeps the article and its error (`pipeline.rejected.jsonl`;
        a failed fetch has no record: counted only)."""
        stats = self.crawler.stats
        if outcome is FailOutcome.GIVEN_UP and rejected is not None:
            await keep_rejected(self.crawler.settings, stats, rejected)
        elif outcome is FailOutcome.GIVEN_UP:
            stats.inc_value("harvest/given_up")
        elif outcome is FailOutcome.RETRY:
            stats.inc_value("harvest/retry")

    async def _finish(self, item: Any, output: bool) -> None:
        found = item_version(item)
        if found is None:
            return
        counts = self._counts(item) if output else []
        if output:
            self._unstored.output()
        await self.state.done(*found, self.clock.now(), counts)
        self.crawler.stats.inc_value("harvest/done/output" if output else "harvest/done/dropped")
        self._notify(item, stored=output)

    def _notify(self, item: Any, stored: bool) -> None:
        for listener in self._done_listeners:
            listener(item, stored)

    async def spider_closed(self) -> None:
        if self._opened:
            await self.state.close()
            self._opened = False


def _guarded(crawler: Crawler, state: HarvestState, on_failed: FailedMarkStored) -> HarvestState:
    """A Redis state store waits out outages inside a crawl; `on_failed` acts on the outcome
    of a failed mark the outage kept back."""
    gate = RedisGate.of(crawler)
    if isinstance(state, RedisHarvestState) and gate is not None:
        outbox = MarkOutbox(state_dir(crawler.settings) / "journal")
        return GuardedHarvestState(state, gate, outbox, on_failed)
    return state


@dataclass
class PollResult:
    """What one feed poll yielded: its outcome (polling.NOT_MODIFIED, ...), the articles it
    claimed to fetch, those the filters ruled out (each once: the ledger remembers), and the
    parsed feed (for subfeeds) or why it is not a feed."""

    outcome: str
    claims: list[Claim] = field(default_factory=list)
    filtered: list[Claim] = field(default_factory=list)  # ruled out by a filter: done, unfetched
    feed: Feed | None = None
    error: FeedError | None = None


# Why an entry of a feed (feed URL, entry) is not worth fetching, or None: the harvest filters.
Screen = Callable[[str, FeedEntry], "str | None"]


class FeedPoller:
    """One feed poll, from HTTP answer to claimed articles and the next poll time.

    The order is what makes it crash-safe: claims are stored before the feed's new validators
    and hashes, so a crash in between makes the next poll fetch and parse the feed again.
    Used by the spider and by `newsharvest bench polling` alike. `screen` (the harvest filters)
    rules entries out before they are fetched: they are claimed as done (`Claim.filtered`).
    """

    def __init__(
        self,
        state: HarvestState,
        policy: PollPolicy,
        clock: Clock,
        rng: random.Random | None = None,
        max_entries: int = 1_000,
        screen: Screen | None = None,
    ) -> None:
        self.state = state
        self.policy = policy
        self.clock = clock
        self.rng = rng or random.Random()
        self.max_entries = max_entries
        self.screen = screen

    async def handle(
        self, feed: FeedState, status: int, headers: dict[str, str | None], body: bytes, url: str
    ) -> PollResult:
        """`status` 304 or 200; `headers` gives the response's ETag and Last-Modified, and its
        Content-Location (a base for the feed's relative links) if any."""
        if status == 304:  # nothing new, and no body to parse
            return await self._finish(feed, PollResult(polling.NOT_MODIFIED))
        polling.remember_validators(feed, headers.get("ETag"), headers.get("Last-Modified"))
        digest = polling.body_digest(body)
        if digest == feed.body_hash:  # the server ignored the conditional request
            return await self._finish(feed, PollResult(polling.UNCHANGED_BODY))
        try:
            location = headers.get("Content-Location")
            parsed = parse_feed(body, url, content_location=location, max_entries=self.max_entries)
        except FeedError as error:
            return await self.failed(feed, error)
        entries_digest = polling.entries_digest(
            (entry.link, entry.to_meta()["updated"]) for entry in parsed.entries
        )
        if entries_digest == feed.entries_hash:  # e.g. only the feed's build date moved
            feed.body_hash = digest
            return await self._finish(feed, PollResult(polling.UNCHANGED_ENTRIES, feed=parsed))
        claimed = await self._claim(feed.url, parsed)
        undated = sum(1 for claim in claimed if claim.updated is None)
        changes = (changed_at(entry) for entry in parsed.entries)
        polling.record_publications(feed, changes, undated, self.clock.now())
        feed.body_hash, feed.entries_hash = digest, entries_digest
        result = PollResult(polling.CHANGED, feed=parsed)
        for claim in claimed:
            (result.filtered if claim.filtered else result.claims).append(claim)
        return await self._finish(feed, result)

    async def failed(self, feed: FeedState, error: FeedError | None = None) -> PollResult:
        """The poll failed (HTTP error, timeout, not a feed): back off."""
        return await self._finish(feed, PollResult(polling.ERROR, error=error), failed=True)

    async def _claim(self, feed_url: str, feed: Feed) -> list[Claim]:
        """Claim the feed's entries; of a link listed twice, the ledger keeps one
        (`distinct_entries`: the latest dated)."""
        entries = []
        for entry in feed.entries:
            changed = changed_at(entry)
            filtered = self.screen(feed_url, entry) if self.screen else None
            # A filtered entry is never requested: nothing to keep for its request.
            payload = {} if filtered else {"feed_url": feed_url, "entry": entry.to_meta()}
            key = canonical_article_url(entry.link)
            entries.append(Entry(key, changed.timestamp() if changed else None, payload, filtered))
        return await self.state.claim_entries(entries, self.clock.now())

    async def _finish(
        self, feed: FeedState, result: PollResult, failed: bool = False
    ) -> PollResult:
        feed.errors = feed.errors + 1 if failed else 0
        feed.count(result.outcome)
        self.policy.schedule(feed, self.clock.now(), self.rng)
        await self.state.save_feed(feed)
        return result


def changed_at(entry: FeedEntry) -> datetime | None:
    """When the entry last changed, as far as the feed says."""
    return entry.updated or entry.published
