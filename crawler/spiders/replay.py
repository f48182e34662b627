"""The `replay` spider: archived pages (WARC) through the same item pipeline as a crawl.

scrapy crawl replay -a warcs=a.warc.gz,b.warc.gz [-a domain=D] [-a since=ISO] [-a until=ISO]
                    [-a limit=N] [-a shard=I/N]  # `newsharvest replay` is the friendly front end

`start()` yields `ArticleItem`s built by the feeds spider's own `article_item`, so extraction,
notices, dedup, monitoring, the sinks and the journal run unchanged with the same settings.

Exactly once, across kills: each page is claimed in the harvest ledger under its replay key
(`warc:<entry_url>#<version>` for our own captures, whose metadata record names the article;
`warc:<WARC-Record-ID>` for other archives) before it is yielded; the ledger marks it done when
it leaves the pipeline (crawler/harvest.py), the journal reconciles a kill between its write and
that mark. Per source, a resume offset (the lowest offset still in the pipeline) is saved in the
harvest state every REPLAY_CHECKPOINT_SECONDS: a restart seeks there and the ledger skips the
pages done since. The replay takes back every claim a killed replay left pending, so run one
replay at a time per ledger (STATE_DIR, or REDIS_URL + REDIS_KEY_PREFIX); with Redis, those the
killed replay had marked as being output too, settled by its journal (crawler/ledger.py,
recover): a restart runs as another worker (host:pid), and such a claim left with the dead
writer would be skipped as done, in no journal.

A replay in several processes (`newsharvest replay --processes N`) runs one spider per shard
(`-a shard=I/N`): each reads every source and takes the pages of the publisher domains that hash
to it, with resume offsets of its own; they share the ledger, notices and near-duplicate index
through Redis. A shard taking back pending claims at its start may take a sibling's too: that
is harmless, since only the shard a page's domain hashes to yields it, and a done mark does not
depend on who holds the claim.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler

from crawler.core.domainstats import FETCHED, inc_domain
from crawler.core.failures import FailureLog
from crawler.core.items import ArticleItem
from crawler.core.order import replay_order_key
from crawler.core.outage import is_connection_error
from crawler.core.scrapy_adapter import engine_of, wake
from crawler.core.urls import publisher_domain
from crawler.harvest import Harvest
from crawler.ledger import Entry
from crawler.spiders.feeds import article_item
from crawler.warc.records import check_reader
from crawler.warc.replay import (
    Page,
    RecordFeeder,
    ReplayOffsets,
    Skip,
    SourceEnd,
    SourceStart,
    expand_sources,
    parse_shard,
    shard_of,
)

log = logging.getLogger(__name__)

KEY_PREFIX = "warc:"
RECENT_KEYS = 1_024  # finished pages remembered for an item_error signal that comes after
NUDGE_SECONDS = 0.05  # after the last page: let the item's signals finish first


def parse_when(value: str | None) -> datetime | None:
    if not value:
        return None
    moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def domain_matches(domain: str, wanted: str) -> bool:
    return domain == wanted or domain.endswith("." + wanted)


class ReplaySpider(scrapy.Spider):
    name = "replay"

    def __init__(
        self,
        warcs: str | list[str] | None = None,
        domain: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: str | None = None,
        shard: str | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if not warcs:
            raise ValueError("no WARC given: -a warcs=PATH[,PATH|GLOB|URL|LISTING...]")
        parts = warcs.split(",") if isinstance(warcs, str) else warcs
        self.sources = expand_sources([part.strip() for part in parts if part.strip()])
        self.source_index = {source: index for index, source in enumerate(self.sources)}
        self.domain = (domain or "").strip().lower().removeprefix("www.") or None
        self.since, self.until = parse_when(since), parse_when(until)
        self.limit = int(limit) if limit else None
        # One of several replay processes (`newsharvest replay --processes N`): this one takes
        # the pages of the publisher domains that hash to it.
        self.shard = parse_shard(shard) if shard else None
        self.in_flight: dict[str, tuple[str, int]] = {}  # replay key -> (source, offset)
        self.frontier: dict[str, int] = {}  # source -> offset of the last record handed over
        self.complete: set[str] = set()
        self.sizes: dict[str, int | None] = {}
        self.yielded = 0
        self.records = 0
        self._room = asyncio.Event()
        self.reading = True
        self.queued = 0  # claimed pages of the current batch not yielded yet
        self.failed: dict[str, tuple[str, int]] = {}  # pages a stage raised on: tried again
        self._recent: OrderedDict[str, tuple[str, int]] = OrderedDict()  # just finished
        self._feeder: RecordFeeder | None = None
        self._progress_task: asyncio.Task[None] | None = None
        self._started = time.monotonic()
        self._checkpoint_failures = FailureLog(log, "replay/checkpoint_errors",
                                               "saving the replay offsets or the heartbeat "
                                               "failed (retrying)",
                                               plain=is_connection_error)  # fmt: skip

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> ReplaySpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        spider.max_in_flight = settings.getint("REPLAY_MAX_IN_FLIGHT")
        spider.reader = settings.get("REPLAY_READER")
        check_reader(spider.reader)
        spider.max_bytes = settings.getint("DOWNLOAD_MAXSIZE")
        spider.checkpoint_every = settings.getfloat("REPLAY_CHECKPOINT_SECONDS")
        spider.progress_every = settings.getfloat("REPLAY_PROGRESS_SECONDS")
        spider.heartbeat_every = settings.getfloat("HEARTBEAT_SECONDS")
        spider.archive_user_agent = settings.get("USER_AGENT")
        spider.remote_retries = settings.getint("REPLAY_REMOTE_RETRIES")
        spider.remote_retry_seconds = settings.getfloat("REPLAY_REMOTE_RETRY_SECONDS")
        spider.verify_digests = settings.getbool("REPLAY_VERIFY_DIGESTS")
        spider.harvest = Harvest.of(crawler)
        scope = f"{spider.shard[0]}/{spider.shard[1]}" if spider.shard else ""
        spider.offsets = ReplayOffsets(settings, scope)
        spider.harvest.on_done(spider._finished)
        crawler.signals.connect(spider._failed, signal=signals.item_error)
        crawler.signals.connect(spider._closed, signal=signals.spider_closed)
        return spider

    # --- start: read, filter, claim, yield ---------------------------------------------------

    async def start(self) -> AsyncIterator[ArticleItem]:
        state = await self.harvest.open()
        await self.offsets.open()
        saved = await self.offsets.load(self.sources)
        todo = [s for s in self.sources if not saved.get(s, {}).get("complete")]
        for source in (s for s in self.sources if s not in todo):
            log.info("skipping %s: read to its end by an earlier run", source)
        self.crawler.stats.set_value("replay/sources", len(self.sources))
        self.crawler.stats.set_value(
            "replay/sources_already_complete", len(self.sources) - len(todo)
        )
        await state.heartbeat()  # a shared ledger: its claims are held by a live worker
        # Claims a killed replay left pending: this replay takes them back (see the docstring).
        now = self.harvest.clock.now()
        pending = {c.key for c in await state.recover(now, everything=True)}
        pending = {key for key in pending if key.startswith(KEY_PREFIX)}
        self.crawler.stats.set_value("replay/recovered", len(pending))
        starts = {s: int(saved.get(s, {}).get("offset", 0)) for s in todo}
        self._feeder = RecordFeeder(
            todo, starts, self.reader, self.max_bytes, self.archive_user_agent, queue_batches=8,
            remote_retries=self.remote_retries, remote_retry_seconds=self.remote_retry_seconds,
            verify_digests=self.verify_digests,
        )  # fmt: skip
        self._feeder.start()
        self._progress_task = asyncio.ensure_future(self._background())
        while (batch := await asyncio.to_thread(self._feeder.next_batch)) is not None:
            async for item in self._handle_batch(batch, pending):
                yield item
            if self.limit is not None and self.yielded >= self.limit:
                self._feeder.stop()
                break
        self._exhausted()

    def _exhausted(self) -> None:
        """Nothing more to read: the spider closes once the last page is done."""
        self.reading = False
        self._nudge_when_done()

    def _nudge_when_done(self) -> None:
        """Scrapy finds a spider idle when its engine looks, which it does after a download
        or at its 5-second heartbeat; a replay downloads nothing, so ask it to look now (a
        tail of up to 5 s otherwise, counted in every replay's time)."""
        if self.reading or self.in_flight:
            return
        engine = engine_of(self.crawler)
        asyncio.get_running_loop().call_later(NUDGE_SECONDS, wake, engine)

    async def _handle_batch(
        self, batch: list[Any], pending: set[str]
    ) -> AsyncIterator[ArticleItem]:
        """Count and filter a batch of records, claim its pages in one ledger call, yield
        what was claimed (or left pending by a killed replay). The resume points move past the
        batch only once its claimed pages are in flight: a checkpoint (which may run during
        the claim) never skips a page."""
        items: list[tuple[ArticleItem, Page]] = []
        read_to: dict[str, int] = {}
        ends: list[SourceEnd] = []
        for entry in batch:
            if self.limit is not None and self.yielded + len(items) >= self.limit:
                break
            if isinstance(entry, SourceEnd):
                ends.append(entry)
                continue
            page = self._account(entry)
            if not isinstance(entry, SourceStart):
                read_to[entry.source] = entry.offset
            item = self._filtered_item(page) if page is not None else None
            if item is not None and page is not None:
                items.append((item, page))
        taken = await self._claim(items, pending)
        self.frontier.update(read_to)
        for end in ends:
            self._source_ended(end)
        self.queued = len(taken)
        for item in taken:
            while len(self.in_flight) - self.queued >= self.max_in_flight:
                self._room.clear()
                await self._room.wait()
            self.queued -= 1
            self.yielded += 1
            inc_domain(self.crawler.stats, item["domain"], FETCHED)
            yield item

    async def _claim(
        self, items: list[tuple[ArticleItem, Page]], pending: set[str]
    ) -> list[ArticleItem]:
        if not items:
            return []
        entries = [Entry(item["replay_key"], None, {"source": page.source, "offset": page.offset})
                   for item, page in items]  # fmt: skip
        now = self.harvest.clock.now()
        claimed = {claim.key for claim in await self.harvest.state.claim_entries(entries, now)}
        taken = []
        for item, page in items:
            key = item["replay_key"]
            if key in self.in_flight:
                # Another copy of a page already sent on (a record archived twice, a capture
                # that fetched the article again): claimed once, so sent on once. The claim
                # answers for the key, not for each copy in the batch.
                self.crawler.stats.inc_value("replay/skipped/repeated")
                continue
            if key not in claimed and key not in pending:
                self.crawler.stats.inc_value("replay/skipped/done")  # output by an earlier run
                continue
            pending.discard(key)
            self.in_flight[key] = (page.source, page.offset)
            taken.append(item)
        return taken

    def _account(self, entry: Any) -> Page | None:
        """Count a feeder entry (a source's start, a skip, a page); the page if it is one."""
        stats = self.crawler.stats
        if isinstance(entry, SourceStart):
            self.sizes[entry.source] = entry.size
            self.frontier[entry.source] = entry.offset
            log.info("replaying %s from offset %d", entry.source, entry.offset)
            return None
        self.records += 1
        stats.inc_value("replay/records")
        if isinstance(entry, Skip):
            stats.inc_value(f"replay/skipped/{entry.reason}")
            return None
        return entry

    def _source_ended(self, end: SourceEnd) -> None:
        if end.error:
            self.crawler.stats.inc_value("replay/skipped/broken")
            log.warning("WARC %s is broken after offset %d: %s", end.source,
                        self.frontier.get(end.source, 0), end.error)  # fmt: skip
        else:
            self.complete.add(end.source)

    def _filtered_item(self, page: Page) -> ArticleItem | None:
        stats = self.crawler.stats
        domain = publisher_domain(page.url)
        if self.domain and not domain_matches(domain, self.domain):
            stats.inc_value("replay/filtered/domain")
            return None
        if self.shard and shard_of(domain, self.shard[1]) != self.shard[0]:
            stats.inc_value("replay/filtered/shard")  # another process's page
            return None
        when = page.date
        if (self.since and (when is None or when < self.since)) or (
            self.until and (when is None or when >= self.until)
        ):
            stats.inc_value("replay/filtered/date")
            return None
        meta = page.metadata
        entry_url = meta.get("entry_url") or page.canonical_url
        version = meta.get("version", 1)
        key = f"{KEY_PREFIX}{entry_url}#{version}" if meta else f"{KEY_PREFIX}{page.record_id}"
        item = article_item(
            url=page.url,
            body=page.body,
            content_type=page.content_type,
            feed_url=meta.get("feed_url"),
            entry=meta.get("entry") or {},
            claim={"key": entry_url, "version": version, "updated": meta.get("updated")},
            fetched_at=page.date or datetime.now(UTC),
        )
        item["replay_key"] = key
        # Archive order decides which of two copies is the original (pipelines/dedup/).
        item["order_key"] = replay_order_key(self.source_index[page.source], page.offset)
        return item

    # --- done marks, resume offsets, progress ------------------------------------------------

    def _finished(self, item: Any, stored: bool) -> None:
        key = item.get("replay_key") if hasattr(item, "get") else None
        if key and (where := self.in_flight.pop(key, None)) is not None:
            self._recent[key] = where
            if len(self._recent) > RECENT_KEYS:
                self._recent.popitem(last=False)
            self._room.set()
            self._nudge_when_done()

    def _failed(self, item: Any, **_: Any) -> None:
        """A stage raised on a page: the ledger keeps it pending for another try (up to
        HARVEST_MAX_ATTEMPTS), which the next replay makes, so the resume point stays at or
        before it."""
        key = item.get("replay_key") if hasattr(item, "get") else None
        where = (self.in_flight.get(key) or self._recent.get(key)) if key else None
        if key and where is not None:
            self.failed[key] = where

    def resume_points(self) -> dict[str, dict[str, Any]]:
        """Per source read so far: the lowest offset still in the pipeline (or of a page that
        failed in it), else the frontier (the last record read: reading it again is harmless,
        the ledger skips it)."""
        lowest: dict[str, int] = {}
        for source, offset in [*self.in_flight.values(), *self.failed.values()]:
            lowest[source] = min(offset, lowest.get(source, offset))
        points = {}
        for source, frontier in self.frontier.items():
            complete = source in self.complete and source not in lowest
            points[source] = {"offset": lowest.get(source, frontier), "complete": complete}
        return points

    async def _checkpoint(self) -> None:
        await self.offsets.save(self.resume_points())

    async def _background(self) -> None:
        """Save the resume offsets every REPLAY_CHECKPOINT_SECONDS, keep this worker's
        heartbeat in a shared ledger every HEARTBEAT_SECONDS (crawler/ledger.py: claims of a
        worker without one are taken over), print progress every REPLAY_PROGRESS_SECONDS."""
        next_progress = time.monotonic() + self.progress_every
        next_beat = time.monotonic() + self.heartbeat_every
        while True:
            await asyncio.sleep(min(self.checkpoint_every, self.heartbeat_every))
            try:
                if time.monotonic() >= next_beat:
                    next_beat += self.heartbeat_every
                    await self.harvest.state.heartbeat()
                await self._checkpoint()
            except Exception as error:  # a store hiccup costs a checkpoint, not the replay
                self._checkpoint_failures.report(self.crawler.stats, error)
            if time.monotonic() >= next_progress:
                next_progress += self.progress_every
                print(self.progress_line(), file=sys.stderr, flush=True)

    def progress_line(self) -> str:
        stats = self.crawler.stats
        elapsed = max(time.monotonic() - self._started, 1e-6)
        articles = stats.get_value("item_scraped_count", 0)
        nulls = stats.get_value("extract/null", 0)
        skipped = sum(v for k, v in stats.get_stats().items() if k.startswith("replay/skipped/"))
        name = f"replay {self.shard[0]}/{self.shard[1]}" if self.shard else "replay"
        line = (f"{name}: {self.records} records ({self.records / elapsed:.0f}/s), "
                f"{articles} articles, {nulls} NULLs, {skipped} skipped")  # fmt: skip
        eta = self._eta(elapsed)
        return line + (f", ETA {eta}" if eta else "")

    def _eta(self, elapsed: float) -> str | None:
        sizes = [self.sizes.get(source) for source in self.sources]
        if not sizes or any(size is None for size in sizes) or self._feeder is None:
            return None
        total = sum(size or 0 for size in sizes)
        done = sum(size or 0 for s, size in zip(self.sources, sizes, strict=True)
                   if s in self.complete)  # fmt: skip
        current = [s for s in self.frontier if s not in self.complete]
        done += sum(self.frontier[s] for s in current)
        if not done or not total:
            return None
        seconds = elapsed * (total - done) / done
        return time.strftime("%H:%M:%S", time.gmtime(max(seconds, 0)))

    async def _closed(self) -> None:
        if self._progress_task is not None:
            self._progress_task.cancel()
        if self._feeder is not None:
            self._feeder.stop()
        await self.offsets.save(self.resume_points())
        await self.offsets.close()
        print(self.progress_line(), file=sys.stderr, flush=True)
