"""Articles whose output is stored nowhere, and the crawl closing when that keeps happening.

A stage that can neither write an article nor keep it for later (a sink whose backend is down
and whose journal's disk is full; the harvest's journal on a full disk) fails the item with an
`OutputNotStored` error: the harvest records a failed try and the article stays pending. One
such failure is one article; OUTPUT_MAX_UNSTORED_IN_A_ROW of them with no article output in
between are the disk or the backend, and a crawl that went on would spend every article's
HARVEST_MAX_ATTEMPTS tries and give them all up. So the crawl closes (finish reason
`output_unstored`, `scrapy crawl` exit status 74) and they wait, pending, for the next start.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from scrapy.crawler import Crawler

from crawler.core.failures import one_line
from crawler.core.scrapy_adapter import engine_of, is_closing

log = logging.getLogger(__name__)

# Items failed in a row for want of storage (none output in between) after which the crawl
# closes: that many is the disk or the backend, not one article.
OUTPUT_MAX_UNSTORED_IN_A_ROW = 10
OUTPUT_UNSTORED = "output_unstored"  # finish_reason of a crawl closed for it
EXIT_OUTPUT_UNSTORED = getattr(os, "EX_IOERR", 74)  # `scrapy crawl` exit status then


class OutputNotStored(Exception):
    """An article's output went neither to its destination nor anywhere it is kept for later:
    the item fails and the article stays pending."""


def close_crawl(crawler: Crawler, reason: str) -> asyncio.Task[Any] | None:
    """Start closing the crawl with `reason` in a task of its own (closing waits for the items
    in the pipelines, the caller's among them); None when it is not running or already closing.
    Keep the task: an unreferenced task may be collected before it ends."""
    engine = engine_of(crawler)
    if engine is None or crawler.spider is None or is_closing(engine):
        return None
    return asyncio.get_running_loop().create_task(engine.close_spider_async(reason=reason))


class UnstoredGuard:
    """Counts items failed for want of storage since the last one output; closes the crawl at
    OUTPUT_MAX_UNSTORED_IN_A_ROW."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.in_a_row = 0
        self.closing: asyncio.Task[Any] | None = None

    def output(self) -> None:
        self.in_a_row = 0

    def failed(self, error: BaseException) -> None:
        if not isinstance(error, OutputNotStored):
            return
        self.in_a_row += 1
        if self.in_a_row < OUTPUT_MAX_UNSTORED_IN_A_ROW or self.closing is not None:
            return  # (asked again while no close could start: the crawl was not running yet)
        task = close_crawl(self.crawler, OUTPUT_UNSTORED)
        if task is None:
            return
        log.critical("%d articles in a row were stored nowhere (last: %s); closing the crawl, "
                     "they stay pending for the next start", self.in_a_row,
                     one_line(error))  # fmt: skip
        self.crawler.stats.set_value("harvest/output_unstored", 1)
        self.closing = task
