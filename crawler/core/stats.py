"""The crawl's stats collector: Scrapy's in-memory one, at the cost of a dict update again."""

from __future__ import annotations

from scrapy.statscollectors import MemoryStatsCollector


class HarvestStatsCollector(MemoryStatsCollector):
    """`MemoryStatsCollector` without the deprecation shim Scrapy 2.13 put on every attribute
    access of a stats collector (its `__getattribute__` looks up a cached wrapper that warns
    about the old `spider` argument). Through the shim an `inc_value` costs 1.7 us instead of
    0.12; every stage counts per article and per domain, some thirty calls an article, all on
    the reactor thread. The `spider` argument is still accepted, and ignored, as before."""

    __getattribute__ = object.__getattribute__
