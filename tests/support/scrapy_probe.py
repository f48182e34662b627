"""A crawl that exercises every use of Scrapy's internals (crawler/core/scrapy_adapter.py) and the
public signals we depend on, on the installed Scrapy; prints what it saw as one JSON line.

Run as `python -m tests.support.scrapy_probe` (tests/test_scrapy_adapter.py does): a Scrapy
reactor runs once per process.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import scrapy
from scrapy import Request, signals
from scrapy.core.downloader import Slot
from scrapy.crawler import Crawler, CrawlerProcess
from scrapy.http import Response

from crawler.core.scrapy_adapter import AdaptedDownloader, Download, engine_of, is_closing, wake
from tests.support.loopback import Answer, LoopbackServer, page

SLOW_PAGES = 5  # queued at once for one host whose limit is 1
PAUSE_SECONDS = 0.3  # the engine stays paused this long, then is woken
seen: dict[str, Any] = {"in_flight": 0, "max_in_flight": 0, "around_download": 0}


class CountingDownloader(AdaptedDownloader):
    """Counts the downloads under way at once: the limit must hold without a download delay."""

    async def around_download(self, slot: Slot, request: Request, download: Download) -> Response:
        seen["around_download"] += 1
        seen["in_flight"] += 1
        seen["max_in_flight"] = max(seen["max_in_flight"], seen["in_flight"])
        try:
            return await download()
        finally:
            seen["in_flight"] -= 1


class ProbeSpider(scrapy.Spider):
    name = "probe"

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> ProbeSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        seen["engine_before_crawl"] = engine_of(crawler) is not None
        crawler.signals.connect(spider.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(spider.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(spider.engine_stopped, signal=signals.engine_stopped)
        return spider

    async def start(self) -> AsyncIterator[Request]:
        for i in range(SLOW_PAGES):
            yield Request(f"{self.settings['PROBE_ORIGIN']}/slow/{i}", callback=self.slow)
        yield Request(f"{self.settings['PROBE_ORIGIN']}/first", callback=self.first)

    def slow(self, response: Response) -> None:
        return None

    def first(self, response: Response) -> Any:
        engine = engine_of(self.crawler)
        seen["closing_while_running"] = is_closing(engine)
        engine.pause()
        paused_at = time.monotonic()

        def resume() -> None:
            seen["woken_at"] = time.monotonic()
            engine.unpause()
            wake(engine)

        asyncio.get_running_loop().call_later(PAUSE_SECONDS, resume)
        seen["paused_at"] = paused_at
        yield Request(f"{self.settings['PROBE_ORIGIN']}/second", callback=self.second)

    def second(self, response: Response) -> None:
        # How long the engine took to send the next request once woken (its heartbeat: 5 s).
        seen["resumed_after"] = time.monotonic() - seen["woken_at"]

    def robots_parsed(self, robotparser: Any, request: Request) -> None:
        seen["crawl_delay"] = robotparser.crawl_delay("probe")

    def spider_closed(self) -> None:
        seen["closing_in_spider_closed"] = is_closing(engine_of(self.crawler))

    def engine_stopped(self) -> None:
        seen["closing_after_close"] = is_closing(engine_of(self.crawler))


def main() -> None:
    routes = {
        "/robots.txt": lambda origin: Answer(body=b"User-agent: *\nCrawl-delay: 3\n"),
        "/first": page(b"<html>first</html>"),
        "/second": page(b"<html>second</html>"),
        **{f"/slow/{i}": page(b"slow", drip_seconds=0.05) for i in range(SLOW_PAGES)},
    }
    with LoopbackServer(routes).running() as server:
        process = CrawlerProcess(
            {
                "PROBE_ORIGIN": server.origin,
                "DOWNLOADER": f"{__name__}.CountingDownloader",
                "ROBOTSTXT_OBEY": True,
                "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
                "DOWNLOAD_DELAY": 0,
                "LOG_LEVEL": "WARNING",
                "TELNETCONSOLE_ENABLED": False,
            }
        )
        process.crawl(ProbeSpider)
        process.start()
    print(json.dumps({"scrapy": scrapy.__version__, **seen}))


if __name__ == "__main__":
    main()
