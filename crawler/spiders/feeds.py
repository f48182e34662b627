"""The `feeds` spider: poll feeds, fetch each listed article once, hand the raw page on.

scrapy crawl feeds -a feeds=feeds.txt            # one feed URL a line (# comments allowed)
scrapy crawl feeds -a feeds=http://a/rss,http://b/atom.xml
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import scrapy
from scrapy.crawler import Crawler
from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure
from w3lib.encoding import http_content_type_encoding

from crawler.domainstats import ERRORS, FEED_ERRORS, FEEDS_POLLED, FETCHED, inc_domain
from crawler.feeds import FeedError, parse_feed
from crawler.items import ArticleItem
from crawler.urls import canonical_article_url, publisher_domain

log = logging.getLogger(__name__)

# Feed requests go first: they discover the work.
FEED_PRIORITY = 100


def load_feed_list(feeds: str | None) -> list[str]:
    """Feed URLs from a file path (one a line, '#' comments) or a comma-separated string."""
    if not feeds or not feeds.strip():
        raise ValueError("no feeds given: use -a feeds=PATH_OR_URLS (a file, or URLs joined by ,)")
    path = Path(feeds)
    if "://" not in feeds and path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines()
    else:
        lines = feeds.split(",")
    urls = [line.split("#", 1)[0].strip() for line in lines]
    urls = [url for url in urls if url]
    bad = [url for url in urls if not url.startswith(("http://", "https://"))]
    if bad:
        raise ValueError(f"feed URLs must be http(s): {', '.join(bad[:5])}")
    if not urls:
        raise ValueError(f"no feed URLs in {feeds!r}")
    return list(dict.fromkeys(urls))


class FeedsSpider(scrapy.Spider):
    name = "feeds"

    def __init__(self, feeds: str | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.feed_urls = load_feed_list(feeds)
        self.max_entries = 1_000
        self.max_feed_bytes = 8 * 1024 * 1024

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> FeedsSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.max_entries = crawler.settings.getint("FEED_MAX_ENTRIES")
        spider.max_feed_bytes = crawler.settings.getint("FEED_MAX_BYTES")
        return spider

    async def start(self) -> AsyncIterator[Request]:
        for url in self.feed_urls:
            yield self.feed_request(url)

    def feed_request(self, url: str) -> Request:
        return Request(
            url,
            callback=self.parse_feed,
            errback=self.on_error,
            priority=FEED_PRIORITY,
            dont_filter=True,  # a feed is polled again and again; articles are what is deduped
            meta={"feed_url": url, "download_maxsize": self.max_feed_bytes},
        )

    def parse_feed(self, response: Response) -> Iterator[Request]:
        feed_url = response.meta["feed_url"]
        domain = publisher_domain(feed_url)
        inc_domain(self.crawler.stats, domain, FEEDS_POLLED)
        try:
            feed = parse_feed(response.body, response.url, max_entries=self.max_entries)
        except FeedError as error:
            yield from self._feed_failed(feed_url, domain, error)
            return
        self.crawler.stats.inc_value(f"feeds/format/{feed.format}")
        if feed.truncated:
            log.warning("feed %s has more than %d entries; read the first ones", feed_url,
                        self.max_entries)  # fmt: skip
        for subfeed in feed.subfeeds:
            yield self.feed_request(subfeed)
        for entry in feed.entries:
            yield Request(
                canonical_article_url(entry.link),
                callback=self.parse_article,
                errback=self.on_error,
                cb_kwargs={"feed_url": feed_url, "entry": entry.to_meta()},
            )

    def _feed_failed(self, feed_url: str, domain: str, error: FeedError) -> Iterator[Request]:
        log.warning("not a usable feed: %s (%s)", feed_url, error)
        self.crawler.stats.inc_value(f"feeds/error/{error.reason}")
        inc_domain(self.crawler.stats, domain, FEED_ERRORS)
        # An HTML page that advertises its feeds: follow them (autodiscovery).
        for alternate in error.alternates:
            if alternate not in self.feed_urls:
                self.feed_urls.append(alternate)
                yield self.feed_request(alternate)

    def parse_article(
        self, response: Response, feed_url: str, entry: dict[str, Any]
    ) -> Iterator[ArticleItem]:
        domain = publisher_domain(response.url)
        inc_domain(self.crawler.stats, domain, FETCHED)
        content_type = response.headers.get("Content-Type", b"").decode("latin-1")
        yield ArticleItem(
            url=response.url,
            domain=domain,
            feed_url=feed_url,
            guid=entry.get("guid"),
            fetched_at=datetime.now(UTC).isoformat(timespec="seconds"),
            html=response.body,
            http_encoding=http_content_type_encoding(content_type),
            feed_entry=entry,
            duplicate_of=None,
        )

    def on_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        domain = publisher_domain(request.url)
        if failure.check(HttpError):
            reason = f"http_{failure.value.response.status}"
        else:
            reason = failure.type.__name__ if failure.type else "unknown"
        self.crawler.stats.inc_value(f"fetch/error/{reason}")
        inc_domain(self.crawler.stats, domain, ERRORS)
        inc_domain(self.crawler.stats, domain, f"{ERRORS}/{reason}")
        log.warning("fetch failed: %s (%s)", request.url, reason)
