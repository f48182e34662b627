"""Near-duplicate stage (ITEM_PIPELINES 300): flag (or drop) articles seen before.

Every article is checked against the shared index (Redis when REDIS_URL is set, else the
embedded one) by its canonical URL and final text: a copy gets `duplicate_of` (the canonical URL
of the first copy) and is kept flagged (later sinks skip it) or dropped (DEDUP_DROP_DUPLICATES);
a first copy is added to the index.

Which copy is first is decided by the article's order key (crawler/core/order.py: archive order
in a replay; publication date, else fetch time, in a crawl), not by which worker got there
first. A page whose canonical URL names a page on another site is a copy by its own statement:
it is checked under its own URL with a key that sorts after every other, so it never stands as
the original of the page it names. When an article turns out to be earlier than copies already
indexed, the index takes them out and the item names them in `supersedes`: the sinks take them
out of the search index (pipelines/sinks/), the JSON Lines output carries the correction.

When the Redis index cannot be reached, the article waits for it (crawler/core/outage.py: the
crawl pauses until Redis answers) and is then checked as if nothing happened (`dedup/waited`):
letting it through unflagged would put a copy into the index for good, and the crawl is paused
anyway because the harvest ledger is in the same Redis. Only if the crawl closes during the
outage, or a command keeps failing while Redis answers PING, does it pass unflagged
(`dedup/unchecked`), since a duplicate is a nuisance and a lost article is not recoverable. The
embedded index has no outages; its errors let articles through unflagged (`dedup/errors`, then
`dedup/unavailable` for INDEX_RETRY_SECONDS).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from typing import Any

import redis
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.statscollectors import StatsCollector

from crawler.core.domainstats import DUPLICATES, inc_domain, stage_seconds
from crawler.core.order import declared_copy_key, item_order_key
from crawler.core.outage import REDIS_CALL_FAILURES, RedisGate, RedisUnavailable
from crawler.core.urls import publisher_domain
from pipelines.dedup.backends import AsyncIndex, open_stage_index
from pipelines.dedup.index import Verdict
from pipelines.fingerprints import Fingerprint, LshParams, fingerprint

log = logging.getLogger(__name__)

# Failures that mean "the index is unavailable", not "this item is bad".
INDEX_ERRORS = (redis.exceptions.RedisError, sqlite3.Error, OSError)
# After a failure, articles pass unchecked for this long before the index is tried again (a dead
# or unreachable server would otherwise cost every article a connect timeout).
INDEX_RETRY_SECONDS = 30.0
# Seconds of this stage's own work on the reactor thread (fingerprints; index calls excluded).
STAGE_SECONDS = "dedup/seconds"


class DedupPipeline:
    # The extraction stage fingerprints texts in its workers only when a stage takes the
    # fingerprint out of the item again (it must never reach an exporter): this one does.
    TAKES_FINGERPRINT = True

    def __init__(
        self, stats: StatsCollector, index: AsyncIndex, params: LshParams, drop: bool
    ) -> None:
        self.stats = stats
        self.index = index
        self.params = params
        self.drop = drop
        self._opened = False
        self._retry_at = 0.0  # monotonic time before which the index is not asked
        self.gate: RedisGate | None = None  # the Redis index's outages: wait for it

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DedupPipeline:
        settings = crawler.settings
        if not settings.getbool("DEDUP_ENABLED"):
            raise NotConfigured("near-duplicate detection is off (DEDUP_ENABLED)")
        params = LshParams.for_threshold(settings.getfloat("DEDUP_THRESHOLD"))
        index = open_stage_index(settings, params)
        pipeline = cls(crawler.stats, index, params, settings.getbool("DEDUP_DROP_DUPLICATES"))
        pipeline.gate = RedisGate.of(crawler)
        return pipeline

    async def open_spider(self) -> None:
        if self.gate is not None:  # Redis unreachable at start: the crawl does not start
            await self.gate.check_at_start()
            async with self.gate.starting():
                await self.index.open()
            self._opened = True
        await self._open()

    async def close_spider(self) -> None:
        await self.index.close()

    async def _open(self) -> bool:
        """Check the index layout once (a wrong layout stops the crawl; an unreachable index is
        retried with the next item)."""
        if not self._opened:
            try:
                await self.index.open()
            except INDEX_ERRORS as exc:
                self._unavailable(exc)
                return False
            self._opened = True
        return True

    def _unavailable(self, exc: BaseException) -> None:
        self.stats.inc_value("dedup/errors")
        self._retry_at = time.monotonic() + INDEX_RETRY_SECONDS
        log.warning(
            "near-duplicate index unavailable (%s): articles pass unflagged, retrying in %.0f s",
            exc,
            INDEX_RETRY_SECONDS,
        )

    async def process_item(self, item: Any) -> Any:
        found = self._fingerprint(item)
        if found is None:
            self.stats.inc_value("dedup/skipped/no_text")
            return item
        item["content_hash"] = found.content_hash  # of the text as checked (after notices)
        item.setdefault("duplicate_of", None)
        verdict = await self._check(item, found)
        if verdict is not None and verdict.superseded:
            self._supersede(item, verdict.superseded)
        if verdict is None or not verdict.is_duplicate:
            return item
        item["duplicate_of"] = verdict.duplicate_of
        if item.get("domain"):
            inc_domain(self.stats, item["domain"], DUPLICATES)
        if self.drop:
            self.stats.inc_value("dedup/dropped")
            raise DropItem(
                f"duplicate ({verdict.kind}) of {verdict.duplicate_of}: {item.get('url')}",
                log_level="INFO",
            )
        return item

    def _supersede(self, item: Any, copies: tuple[str, ...]) -> None:
        """The item came before copies already indexed: it names them (the sinks take them out)
        and they count as their domains' duplicates now."""
        item["supersedes"] = list(copies)
        self.stats.inc_value("dedup/superseded", len(copies))
        for copy in copies:
            inc_domain(self.stats, publisher_domain(copy) or "unknown", DUPLICATES)

    def _fingerprint(self, item: Any) -> Fingerprint | None:
        """The fingerprint of the item's final text: the one the extraction worker made with the
        article (made again from its blocks by the notices stage when it took notices out), else
        made here. Not a second trip to the workers: it would queue behind every page waiting to
        be extracted, and articles would reach the later stages (and monitoring) long after NULL
        pages."""
        found = item.pop("fingerprint", None)
        text = item.get("text")
        if found is not None or not text:
            return found
        with stage_seconds(self.stats, STAGE_SECONDS):
            return fingerprint(text, self.params)

    async def _check(self, item: Any, found: Fingerprint) -> Verdict | None:
        doc_id, order_key = identity(item)
        if not doc_id:
            self.stats.inc_value("dedup/skipped/no_url")
            return None
        if time.monotonic() < self._retry_at:
            self.stats.inc_value("dedup/unavailable")
            return None
        if not await self._open():
            return None
        try:
            if self.gate is None:
                verdict = await self.index.check_fingerprint(doc_id, found, order_key=order_key)
            else:
                # A retry is safe: the index answers `known` for a document it holds.
                verdict = await self.gate.call(
                    lambda: self.index.check_fingerprint(doc_id, found, order_key=order_key),
                    REDIS_CALL_FAILURES,
                    on_wait=lambda: self._waited(item),
                )
        except RedisUnavailable:
            self.stats.inc_value("dedup/unchecked")
            return None
        except INDEX_ERRORS as exc:
            self._unavailable(exc)
            return None
        self.stats.inc_value(f"dedup/{verdict.kind}")
        return verdict

    def _waited(self, item: Any) -> None:
        """The item waits for Redis: counted in total and for its domain."""
        self.stats.inc_value("dedup/waited")
        inc_domain(self.stats, item.get("domain") or "unknown", "dedup/waited")


def identity(item: Any) -> tuple[str | None, str]:
    """The article's id in the index and its order key (also set on the item, for the output).
    A page naming another site's page as its canonical is checked under its own URL, as a
    declared copy: it must not take the id of the page it copies."""
    url, canonical = item.get("url"), item.get("canonical_url")
    order_key = item_order_key(item)
    item["order_key"] = order_key
    if url and canonical and publisher_domain(canonical) != publisher_domain(url):
        return url, declared_copy_key(order_key)
    return canonical or url, order_key
