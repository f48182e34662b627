"""The cyclic garbage collector of a crawl process: the start-up heap frozen, young collections
spaced out, and the time collections take counted.

A crawl process holds a large heap it built at start-up and keeps for its whole life (Scrapy,
Twisted, lxml, the stages, their compiled scripts: ~140,000 tracked objects), and makes many
short-lived containers per page (items, their dicts, a worker's unpickled reply). With CPython's
defaults, a young collection runs every 700 net container allocations, and every tenth of them a
middle one; the full collections these trigger walk the start-up heap again each time although
nothing in it becomes garbage. Measured on a 5,000-page replay: 1,035 collections took 0.88 s of
the reactor thread, the thread that bounds a replay's throughput.

`gc.freeze()` once the crawler is set up moves that heap to the permanent generation, which no
collection walks (the gc module's documented use for long-lived processes), and a larger young
generation makes the collections rarer: the garbage cycles that wait longer for one are bounded by
the threshold (a few MB). The collector itself stays on: reference cycles are still freed.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

STAT_FROZEN = "gc/frozen_objects"  # objects moved to the permanent generation at the start
STAT_COLLECTIONS = "gc/collections"  # collections during the crawl (all generations)
STAT_SECONDS = "gc/seconds"  # time they took, on whichever thread triggered them


class HeapTuning:
    """Scrapy extension: freezes the start-up heap when the spider opens and sets the young
    generation's threshold (GC_FREEZE_ENABLED, GC_GEN0_THRESHOLD; NotConfigured when both are
    off). The collections that follow are counted in stats either way."""

    def __init__(self, stats: StatsCollector, freeze: bool, gen0_threshold: int) -> None:
        self.stats = stats
        self.freeze = freeze
        self.gen0_threshold = gen0_threshold
        self._started_at: float | None = None
        self._thresholds = gc.get_threshold()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HeapTuning:
        settings = crawler.settings
        freeze = settings.getbool("GC_FREEZE_ENABLED")
        gen0 = settings.getint("GC_GEN0_THRESHOLD")
        if gen0 < 0:
            raise ValueError(f"GC_GEN0_THRESHOLD must be >= 0 (0: Python's default), not {gen0}")
        if not freeze and not gen0:
            raise NotConfigured("GC_FREEZE_ENABLED is off and GC_GEN0_THRESHOLD is 0")
        extension = cls(crawler.stats, freeze, gen0)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self, spider: Any) -> None:
        if self.freeze:
            gc.collect()  # what is garbage now must not be frozen with the rest
            gc.freeze()
            self.stats.set_value(STAT_FROZEN, gc.get_freeze_count())
        if self.gen0_threshold:
            _, middle, old = self._thresholds
            gc.set_threshold(self.gen0_threshold, middle, old)
        gc.callbacks.append(self._observe)

    def spider_closed(self, spider: Any) -> None:
        if self._observe in gc.callbacks:
            gc.callbacks.remove(self._observe)
        gc.set_threshold(*self._thresholds)
        if self.freeze:
            gc.unfreeze()  # the process may go on (tests, several crawls in one process)

    def _observe(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started_at = time.perf_counter()
        elif self._started_at is not None:
            self.stats.inc_value(STAT_COLLECTIONS)
            self.stats.inc_value(STAT_SECONDS, time.perf_counter() - self._started_at)
            self._started_at = None
