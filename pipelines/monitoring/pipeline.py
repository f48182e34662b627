"""The monitoring stage (ITEM_PIPELINES, after near-duplicates and before the sinks).

The monitoring extension (pipelines/monitoring/extension.py) sees every page's counters through
`inc_domain`; this stage tells it when an article's content is final, so the page rules judge
articles in fetch order. Off (NotConfigured) when monitoring is off.
"""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from crawler.core.commit import ledger_of
from crawler.core.domainstats import domain_listener
from pipelines.monitoring.extension import MonitoringExtension


class MonitoringPipeline:
    """Hands each article to monitoring once its content is final: after notice suppression and
    near-duplicate detection, before the sinks (whose batching delays `item_scraped` by seconds,
    which would let a redesign's NULLs overtake the articles fetched before it). NULL pages
    reach monitoring through `item_dropped`, as soon as a stage drops them."""

    def __init__(self, extension: MonitoringExtension) -> None:
        self.extension = extension

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MonitoringPipeline:
        extension = domain_listener(crawler.stats)
        if not isinstance(extension, MonitoringExtension):
            raise NotConfigured("monitoring is off (MONITOR_ENABLED)")
        ledger = ledger_of(crawler)
        if ledger is not None and extension.redis_url:
            # Output articles are counted with their done mark, in one atomic step: a worker
            # killed between the mark and its next flush then loses no count (nor doubles one).
            extension.ledger_counts = ledger.count_on_done(extension.done_counts)
        return cls(extension)

    def open_spider(self) -> None:
        self.extension.ordering = True  # this stage takes the tickets out (see page_ticket)

    def process_item(self, item: Any) -> Any:
        self.extension.article_done(item)
        return item
