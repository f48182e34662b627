"""Scrapy's downloader, with CONCURRENT_REQUESTS_PER_DOMAIN enforced whatever DOWNLOAD_DELAY is.

Scrapy (2.19) counts a request against its domain's concurrency only once the coroutine that
downloads it starts running, but starts every request that fits in one synchronous pass over the
domain's queue. With no download delay that pass hands out the whole queue at once: the fixture's
server saw 8 requests at a time to one host with a limit of 1 (with a delay, Scrapy stops after
one request per pass and the race only narrows). Counting a request when its download is
scheduled closes the race; `tests/test_crawl.py` checks the limit at the server.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from scrapy import Request
from scrapy.core.downloader import Downloader as ScrapyDownloader
from scrapy.core.downloader import Slot
from twisted.internet.defer import Deferred


class Downloader(ScrapyDownloader):
    def _wait_for_download(
        self, slot: Slot, request: Request, queue_dfd: Deferred[Any]
    ) -> Coroutine[Any, Any, None]:
        # Counted now, while the scheduling pass is still deciding how many more fit; the
        # download itself adds it again (a set) and removes it when done.
        slot.transferring.add(request)
        return super()._wait_for_download(slot, request, queue_dfd)
