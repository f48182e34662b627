"""The commit protocol of continuous harvesting: when an article counts as done.

One `Harvest` per crawler (`Harvest.of(crawler)`) owns the state store and the clock, and
listens to the item signals:

* `item_scraped` (the item left the last pipeline: every sink returned, so every sink has
  written it) and `item_dropped` (a stage decided on purpose not to output it: NULL page,
  duplicate) mark the article version *done* in the ledger;
* `item_error` (a stage raised: e.g. a sink that could not write) records a failed attempt, so
  the article is fetched again later (at most HARVEST_MAX_ATTEMPTS times).

For sinks this means: finish the durable write before `process_item` returns (a batching sink
awaits the commit of the batch holding the item; items are processed concurrently, so batches
still fill), and raise rather than drop when the write failed. The crash window is between a
sink's write and the done mark: a sink keyed by (entry_url, version) is idempotent and needs
nothing more; an append-only sink reconciles on open like `pipelines.journal` does. Listeners
added with `on_done` run after the mark is stored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from twisted.python.failure import Failure

from crawler.clock import Clock, clock_from_settings
from crawler.state import HarvestState, SqliteHarvestState, open_harvest_state

log = logging.getLogger(__name__)

_ATTRIBUTE = "_newsharvest_harvest"


def item_version(item: Any) -> tuple[str, int] | None:
    """(entry_url, version) of a harvested article item, None for other items."""
    get = getattr(item, "get", None)
    if get is None:
        return None
    key, version = get("entry_url"), get("version")
    return (key, int(version)) if key and version else None


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

    @classmethod
    def of(cls, crawler: Crawler) -> Harvest:
        """The crawler's Harvest (created, and its signals connected, on first use)."""
        harvest = getattr(crawler, _ATTRIBUTE, None)
        if harvest is None:
            settings = crawler.settings
            harvest = cls(crawler, open_harvest_state(settings), clock_from_settings(settings))
            setattr(crawler, _ATTRIBUTE, harvest)
            crawler.signals.connect(harvest.item_scraped, signal=signals.item_scraped)
            crawler.signals.connect(harvest.item_dropped, signal=signals.item_dropped)
            crawler.signals.connect(harvest.item_error, signal=signals.item_error)
            crawler.signals.connect(harvest.spider_closed, signal=signals.spider_closed)
        return harvest

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
        retry = await self.state.fail(*found, self.clock.now())
        self.crawler.stats.inc_value("harvest/retry" if retry else "harvest/given_up")
        self._notify(item, stored=False)

    async def _finish(self, item: Any, output: bool) -> None:
        found = item_version(item)
        if found is None:
            return
        await self.state.done(*found, self.clock.now())
        self.crawler.stats.inc_value("harvest/done/output" if output else "harvest/done/dropped")
        self._notify(item, stored=output)

    def _notify(self, item: Any, stored: bool) -> None:
        for listener in self._done_listeners:
            listener(item, stored)

    async def spider_closed(self) -> None:
        if self._opened:
            await self.state.close()
            self._opened = False
