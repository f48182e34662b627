"""Scrapy's downloader, with CONCURRENT_REQUESTS_PER_DOMAIN enforced whatever DOWNLOAD_DELAY is,
and, with REDIS_URL, the per-domain limit and delay held across all workers.

Scrapy (2.19) counts a request against its domain's concurrency only once the coroutine that
downloads it starts running, but starts every request that fits in one synchronous pass over the
domain's queue. With no download delay that pass hands out the whole queue at once: the fixture's
server saw 8 requests at a time to one host with a limit of 1 (with a delay, Scrapy stops after
one request per pass and the race only narrows). Counting a request when its download is
scheduled closes the race; `tests/test_crawl.py` checks the limit at the server.

Scrapy's slots are per process. With REDIS_URL set, a request also takes its domain's shared
slot right before it goes to the download handler and frees it when the answer (or error) comes
back (crawler/politeness.py); `tests/test_politeness.py` checks the limit and the delay at the
server with three worker processes.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from scrapy import Request
from scrapy.core.downloader import Downloader as ScrapyDownloader
from scrapy.core.downloader import Slot
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.internet.defer import Deferred

from crawler.politeness import DomainPoliteness


class Downloader(ScrapyDownloader):
    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.politeness = DomainPoliteness.from_crawler(crawler)

    def _wait_for_download(
        self, slot: Slot, request: Request, queue_dfd: Deferred[Any]
    ) -> Coroutine[Any, Any, None]:
        # Counted now, while the scheduling pass is still deciding how many more fit; the
        # download itself adds it again (a set) and removes it when done.
        slot.transferring.add(request)
        return super()._wait_for_download(slot, request, queue_dfd)

    async def _download(self, slot: Slot, request: Request) -> Response:
        politeness = self.politeness
        if politeness is None:
            return await super()._download(slot, request)
        domain = request.meta[self.DOWNLOAD_SLOT]  # set by _enqueue_request
        token = await politeness.acquire(domain, slot, request)
        try:
            return await super()._download(slot, request)
        finally:
            # After Scrapy's own bookkeeping: AutoThrottle has adjusted the slot's delay for
            # this response, which the release shares with the other workers.
            await politeness.release(domain, token, slot)
