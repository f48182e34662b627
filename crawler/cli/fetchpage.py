"""One page fetched the way the crawler fetches it: Scrapy's downloader with the crawl's settings.

`newsharvest extract URL` fetches through `fetch_page`, so the one-page command has no network
code of its own: the profile's downloader middlewares, resolver and limits apply as they do in a
crawl. That is the network policy (crawler/safety.py: http(s) only, no loopback, private,
link-local or special-use target, NETWORK_ALLOWLIST, each redirect checked before it is
followed, DNS answers checked where the connection is made, no proxy but PROXY_URL), the size
limit (DOWNLOAD_MAXSIZE, decompression bombs included) and robots.txt. Only the time limit is
tighter than a crawl's: it bounds the whole fetch (robots.txt, every redirect hop and retry),
not each request, so a server that drips a byte at a time cannot hold the command.

Failure: `FetchFailed`, with the crawler's reason for it (crawler/faults.py: refused_address,
timeout, too_large, http_404 ...) and the crawler's log line for it, in one line.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import scrapy
from scrapy.crawler import Crawler, CrawlerProcess
from scrapy.exceptions import DownloadTimeoutError
from scrapy.http import Request, Response
from scrapy.settings import Settings
from twisted.python.failure import Failure
from w3lib.encoding import http_content_type_encoding

from crawler.faults import TIMEOUT, describe_failure, redirect_chain
from crawler.safety import REFUSED_ADDRESS, REFUSED_HOST, REFUSED_SCHEME

POLICY_REASONS = frozenset({REFUSED_SCHEME, REFUSED_HOST, REFUSED_ADDRESS})
# After the crawl's own (DownloadTimeoutMiddleware, 350) so that the time left wins.
DEADLINE_MIDDLEWARE_ORDER = 360


@dataclass(frozen=True)
class FetchedPage:
    body: bytes
    url: str  # after redirects
    charset: str | None  # from the Content-Type header


class FetchFailed(Exception):
    """The page could not be fetched; `refused` when the network policy forbade the target."""

    def __init__(self, reason: str, line: str) -> None:
        super().__init__(line)
        self.reason = reason
        self.refused = reason in POLICY_REASONS


def fetch_page(url: str, seconds: float | None = None, profile: Any = None) -> FetchedPage:
    """Fetch `url` with the crawler's policy, within `seconds` for everything (default: the
    profile's DOWNLOAD_TIMEOUT). `profile`: the command's settings (default: the project's,
    crawler/cli/profile.py). Runs a reactor: call it once per process."""
    settings = fetch_settings(seconds, profile)
    outcome: dict[str, Any] = {}
    process = CrawlerProcess(settings)
    process.crawl(PageSpider, url=url, outcome=outcome)
    process.start()
    if "page" in outcome:
        return outcome["page"]
    if "failure" in outcome:
        raise outcome["failure"]
    # Stopped with no answer at all (the deadline refused a request the errback never saw).
    limit = settings.getfloat("DOWNLOAD_TIMEOUT")
    raise FetchFailed("timeout", f"{url} (timeout: no page within {limit:g} s)")


def fetch_settings(seconds: float | None = None, profile: Any = None) -> Settings:
    """The profile's settings, minus everything of a crawl but the download."""
    from crawler.cli.profile import project_settings

    settings = profile if profile is not None else project_settings()
    limit = seconds if seconds is not None else settings.getfloat("DOWNLOAD_TIMEOUT")
    middlewares = dict(settings.getdict("DOWNLOADER_MIDDLEWARES"))
    middlewares[f"{__name__}.WholeFetchDeadline"] = DEADLINE_MIDDLEWARE_ORDER
    overrides = {
        "DOWNLOAD_TIMEOUT": limit,
        "DNS_TIMEOUT": min(limit, settings.getfloat("DNS_TIMEOUT")),
        "DOWNLOADER_MIDDLEWARES": middlewares,
        # No stage, extension or shared queue: a distributed profile's Redis scheduler would put
        # the request in the crawl's queue, the monitoring would count it.
        "ITEM_PIPELINES": {},
        "EXTENSIONS": {},
        "SCHEDULER": "scrapy.core.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter",
        "LOG_LEVEL": "CRITICAL",  # the errback says what went wrong, in one line
        "STATS_DUMP": False,
    }
    settings.setdict(overrides, priority="cmdline")
    return settings


class PageSpider(scrapy.Spider):
    name = "page"

    def __init__(self, url: str, outcome: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.url = url
        self.outcome = outcome

    async def start(self) -> AsyncIterator[Request]:
        yield Request(self.url, callback=self.answered, errback=self.failed, dont_filter=True)

    def answered(self, response: Response) -> None:
        content_type = response.headers.get("Content-Type", b"").decode("latin-1")
        charset = http_content_type_encoding(content_type)
        self.outcome["page"] = FetchedPage(response.body, response.url, charset)

    def failed(self, failure: Failure) -> None:
        reason, detail = describe_failure(failure)
        if reason == TIMEOUT:  # Scrapy names the time left of the request, not the limit
            limit = self.settings.getfloat("DOWNLOAD_TIMEOUT")
            detail = f"no complete answer within {limit:g} s, the limit of the whole fetch"
        chain = redirect_chain(failure.request)  # type: ignore[attr-defined]
        if len(chain) > 1:
            detail += f"; redirected to {chain[-1]}"
        # The crawler's log line for a failed fetch, without its prefix.
        self.outcome["failure"] = FetchFailed(reason, f"{chain[0]} ({reason}: {detail})")


class WholeFetchDeadline:
    """Gives each request (robots.txt, redirect hops, retries) only the time left of the one
    DOWNLOAD_TIMEOUT for the whole fetch; past it, no request is sent."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds  # built as the crawl starts

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WholeFetchDeadline:
        return cls(crawler.settings.getfloat("DOWNLOAD_TIMEOUT"))

    def process_request(self, request: Request) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise DownloadTimeoutError(f"the whole fetch is limited to {self.seconds:g} s")
        request.meta["download_timeout"] = left
