"""Scrapy's downloader, with CONCURRENT_REQUESTS_PER_DOMAIN enforced whatever DOWNLOAD_DELAY is,
and, with REDIS_URL, the per-domain limit and delay held across all workers.

Scrapy counts a request against its domain's concurrency only once the coroutine that downloads
it starts running, but starts every request that fits in one synchronous pass over the domain's
queue. With no download delay that pass hands out the whole queue at once: the fixture's server
saw 8 requests at a time to one host with a limit of 1 (with a delay, Scrapy stops after one
request per pass and the race only narrows). Counting a request when its download is scheduled
closes the race (crawler/core/scrapy_adapter.py: Scrapy has no public hook for it);
`tests/test_crawl.py` checks the limit at the server.

Scrapy's slots are per process. With REDIS_URL set, a request also takes its domain's shared
slot right before it goes to the download handler and frees it when the answer (or error) comes
back (crawler/politeness.py); `tests/test_politeness.py` checks the limit and the delay at the
server with three worker processes.
"""

from __future__ import annotations

from scrapy import Request
from scrapy.core.downloader import Slot
from scrapy.crawler import Crawler
from scrapy.http import Response

from crawler.core.scrapy_adapter import AdaptedDownloader, Download
from crawler.politeness import DomainPoliteness


class Downloader(AdaptedDownloader):
    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.politeness = DomainPoliteness.from_crawler(crawler)

    async def around_download(self, slot: Slot, request: Request, download: Download) -> Response:
        politeness = self.politeness
        if politeness is None:
            return await download()
        domain = request.meta[self.DOWNLOAD_SLOT]  # set by Scrapy when the request was queued
        token = await politeness.acquire(domain, slot, request)
        try:
            return await download()
        finally:
            # After Scrapy's own bookkeeping: AutoThrottle has adjusted the slot's delay for
            # this response, which the release shares with the other workers.
            await politeness.release(domain, token, slot)
