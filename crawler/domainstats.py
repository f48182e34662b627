"""Per-domain counters in Scrapy stats, under `domain/<publisher domain>/<counter>`."""

from __future__ import annotations

from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector

DOMAIN_PREFIX = "domain/"
# The counters every stage shares; stages may add their own names.
FEEDS_POLLED = "feeds/polled"
FEED_ERRORS = "feeds/errors"
FETCHED = "fetched"
ARTICLES = "articles"
NULL = "null"
DUPLICATES = "duplicates"  # exact or near-duplicate copies of an earlier article
ERRORS = "errors"


def inc_domain(stats: StatsCollector, domain: str, counter: str, count: int = 1) -> None:
    stats.inc_value(f"{DOMAIN_PREFIX}{domain}/{counter}", count)


def domain_table(stats: dict[str, Any]) -> dict[str, dict[str, int]]:
    """{domain: {counter: value}} from a stats dict (only the domain/ counters)."""
    table: dict[str, dict[str, int]] = {}
    for key, value in stats.items():
        if key.startswith(DOMAIN_PREFIX) and isinstance(value, int):
            domain, _, counter = key[len(DOMAIN_PREFIX) :].partition("/")
            table.setdefault(domain, {})[counter] = value
    return table


class DomainItemStats:
    """Counts the articles that leave the pipeline, per domain."""

    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DomainItemStats:
        extension = cls(crawler.stats)
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        return extension

    def item_scraped(self, item: Any) -> None:
        domain = item.get("domain") if hasattr(item, "get") else None
        if domain:
            inc_domain(self.stats, domain, ARTICLES)
