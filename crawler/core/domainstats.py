"""Per-domain counters in Scrapy stats, under `domain/<publisher domain>/<counter>`.

Every stage counts its per-domain events with `inc_domain` and its per-domain timings with
`observe_domain`. Monitoring (pipelines/monitoring) subscribes to both with `watch_domains`, so a
counter a stage adds tomorrow reaches Redis, the dashboard and Prometheus with no code change.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol
from weakref import WeakKeyDictionary

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector

DOMAIN_PREFIX = "domain/"
# The counters every stage shares; stages may add their own names.
FEEDS_POLLED = "feeds/polled"
FEED_ERRORS = "feeds/errors"
FEEDS_NOT_MODIFIED = "feeds/304"  # feed polls answered 304 (also counted in feeds/polled)
FEEDS_UNCHANGED = "feeds/unchanged"  # feed polls whose body or entries had not changed
FETCHED = "fetched"
ARTICLES = "articles"
NULL = "null"
DUPLICATES = "duplicates"  # exact or near-duplicate copies of an earlier article
ERRORS = "errors"
EXTRACT_METHOD = "method"  # method/<method>: articles by extraction method
FILTERED = "filtered"  # articles the harvest filters ruled out; filtered/<reason> by reason
# Counters whose `<name>/<value>` children break the count down by one label (NULL by reason,
# errors by reason, articles by extraction method): (metric name, label) for Prometheus.
BREAKDOWN_LABELS = {
    NULL: ("null", "reason"),
    ERRORS: ("errors", "reason"),
    EXTRACT_METHOD: ("extracted", "method"),
    FILTERED: ("filtered", "reason"),
}
# Timings (seconds) recorded with observe_domain.
FETCH_TIME = "fetch"  # response headers received, from the request's download_latency
EXTRACTION_TIME = "extraction"  # HTML -> article or NULL


MONITOR_TICKET = "monitor_ticket"  # item field: the page's place in its domain's page order


class DomainListener(Protocol):
    """What `watch_domains` subscribes: called synchronously on the reactor thread."""

    def domain_inc(self, domain: str, counter: str, count: int) -> None: ...

    def domain_observe(self, domain: str, timing: str, seconds: float) -> None: ...

    def page_ticket(self, domain: str) -> int | None: ...


_listeners: WeakKeyDictionary[StatsCollector, DomainListener] = WeakKeyDictionary()


def watch_domains(stats: StatsCollector, listener: DomainListener | None) -> None:
    """Subscribe `listener` to every inc_domain/observe_domain on `stats` (None unsubscribes)."""
    if listener is None:
        _listeners.pop(stats, None)
    else:
        _listeners[stats] = listener


def domain_listener(stats: StatsCollector) -> DomainListener | None:
    """The listener watching `stats` (monitoring's extension), if any."""
    return _listeners.get(stats)


def inc_domain(stats: StatsCollector, domain: str, counter: str, count: int = 1) -> None:
    stats.inc_value(f"{DOMAIN_PREFIX}{domain}/{counter}", count)
    listener = _listeners.get(stats)
    if listener is not None:
        listener.domain_inc(domain, counter, count)


def take_page_ticket(stats: StatsCollector, item: Any) -> None:
    """A page entering the item pipeline takes its place in its domain's order: monitoring judges
    pages in this order, not in the order the stages finish them (pipelines/monitoring/order.py)."""
    listener = _listeners.get(stats)
    if listener is not None:
        ticket = listener.page_ticket(item.get("domain") or "")
        if ticket is not None:
            item[MONITOR_TICKET] = ticket


def observe_domain(stats: StatsCollector, domain: str, timing: str, seconds: float) -> None:
    """Record one timing. Stats keep its sum and count (`domain/<d>/seconds/<timing>/sum|count`):
    written here, or, when monitoring listens, by monitoring at each flush (it keeps the full
    distribution and spares the hot path two stats updates)."""
    listener = _listeners.get(stats)
    if listener is not None:
        listener.domain_observe(domain, timing, seconds)
        return
    stats.inc_value(f"{DOMAIN_PREFIX}{domain}/seconds/{timing}/sum", seconds)
    stats.inc_value(f"{DOMAIN_PREFIX}{domain}/seconds/{timing}/count")


@contextmanager
def stage_seconds(stats: StatsCollector, key: str) -> Iterator[None]:
    """Add the wall time of the block to `<stage>/seconds`. Stages time their own work on the
    reactor thread, never their awaits: concurrent items overlap while they wait, so wait time
    would sum to far more than the crawl lasted (`newsharvest bench pipeline` reads these)."""
    started = time.perf_counter()
    try:
        yield
    finally:
        stats.inc_value(key, time.perf_counter() - started)


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
