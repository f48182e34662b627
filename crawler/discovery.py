"""Finding a site's sitemaps when it was given as a domain or homepage that advertises no feed.

A homepage given as a feed is read for `<link rel="alternate">` feeds first (crawler/feedparse.py).
When it names none, the site's robots.txt is read for `Sitemap:` lines (protego, Scrapy's own
robots.txt parser); when it names none either, the usual locations (USUAL_SITEMAPS) are probed,
and each that parses as a sitemap (or any feed) joins the feed list (the probe's answer is its
first poll: fetched once). From then on a sitemap is a
feed like any other: polled, conditionally, its entries claimed in the ledger.

Bounds, so that a site with a 20-year archive does not fetch 20 years:
* sitemap indexes are followed MAX_SITEMAP_DEPTH levels deep, at most MAX_SITEMAPS_PER_INDEX
  sitemaps of each, news sitemaps first (their URL says "news": what is recent);
* with ARTICLE_MAX_AGE_DAYS, a sitemap whose `<lastmod>` in the index is older than the cutoff
  is not fetched, and an entry older than it is not claimed (crawler/core/filters.py);
* every body is read within FEED_MAX_BYTES, a gzip-compressed one (sitemap.xml.gz) too, after
  decompression (a gzip bomb stops at the limit).

The depth of each sitemap is known to the process that found it; a restart finds it again from
the index.
"""

from __future__ import annotations

import gzip
import logging
import re
import zlib
from typing import Any, Protocol
from urllib.parse import urlsplit

from protego import Protego
from scrapy.http import Request, Response
from twisted.python.failure import Failure

from crawler.feedparse import Feed, FeedError, parse_feed
from crawler.polling import FeedState

log = logging.getLogger(__name__)

MAX_SITEMAP_DEPTH = 2  # an index of indexes of sitemaps; what lies deeper is not followed
MAX_SITEMAPS_PER_INDEX = 50  # sitemaps followed from one index (news sitemaps first)
MAX_ROBOTS_SITEMAPS = 20  # sitemaps taken from one robots.txt (news sitemaps first)
# Where sites put their sitemaps when robots.txt does not say (probed in this order).
USUAL_SITEMAPS = ("/news-sitemap.xml", "/sitemap_news.xml", "/sitemap.xml", "/sitemap_index.xml")
_NEWS = re.compile(r"news", re.IGNORECASE)
_GZIP_MAGIC = b"\x1f\x8b"
GZIP_CHUNK = 64 * 1024
DISCOVERY_PRIORITY = 100  # as feed requests: they discover the work


class DiscoveringSpider(Protocol):
    """What discovery needs of the feeds spider (its callbacks must be spider methods)."""

    crawler: Any
    feed_urls: list[str]

    async def _add_feeds(self, urls: list[str], parent: str) -> list[Request]: ...

    async def _adopt_feeds(self, urls: list[str], parent: str) -> list[str]: ...


def gunzip_feed(body: bytes, max_bytes: int) -> bytes:
    """The body, decompressed if it is gzip (a .xml.gz sitemap served as a file); FeedError
    when it is damaged or decompresses to more than max_bytes."""
    if not body.startswith(_GZIP_MAGIC):
        return body
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=_Reader(body)) as stream:
            while chunk := stream.read(GZIP_CHUNK):
                out += chunk
                if len(out) > max_bytes:
                    raise FeedError("too_large", f"decompresses to over {max_bytes} bytes")
    except (OSError, EOFError, zlib.error) as error:
        raise FeedError("bad_gzip", str(error)[:200]) from None
    return bytes(out)


class _Reader:
    """A read-only file over bytes (io.BytesIO would copy them)."""

    def __init__(self, data: bytes) -> None:
        self.view, self.at = memoryview(data), 0

    def read(self, size: int = -1) -> bytes:
        end = len(self.view) if size < 0 else self.at + size
        chunk, self.at = bytes(self.view[self.at : end]), min(end, len(self.view))
        return chunk


def news_first(urls: list[str]) -> list[str]:
    """News sitemaps (what is recent) before the others, each group in the given order."""
    return sorted(urls, key=lambda url: not _NEWS.search(urlsplit(url).path))


def site_root(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Discovery:
    """The sitemap discovery of one feeds spider (see the module docstring)."""

    def __init__(self, spider: DiscoveringSpider, max_bytes: int) -> None:
        self.spider = spider
        self.max_bytes = max_bytes
        self.depth: dict[str, int] = {}  # sitemap URL -> how many indexes lead to it
        self.started: set[str] = set()  # site roots whose discovery began in this process

    @property
    def stats(self) -> Any:
        return self.spider.crawler.stats

    def start(self, page_url: str) -> list[Request]:
        """The page is HTML without feed links: ask the site's robots.txt (once a process)."""
        root = site_root(page_url)
        if root in self.started:
            return []
        self.started.add(root)
        self.stats.inc_value("discovery/sites")
        log.info("no feed advertised by %s: looking for its sitemaps", page_url)
        return [self._request(root + "/robots.txt", page_url, "parse_robots", "on_robots_error")]

    def _request(self, url: str, page_url: str, callback: str, errback: str) -> Request:
        # A probe that turns out a sitemap is read as its feed's first poll (parse_feed): it
        # carries what a feed request does.
        feed = {"feed_url": url, "feed_state": FeedState(url=url).to_json()}
        return Request(
            url,
            callback=getattr(self.spider, callback),
            errback=getattr(self.spider, errback),
            priority=DISCOVERY_PRIORITY,
            dont_filter=True,
            meta={"discover_for": page_url, "download_maxsize": self.max_bytes, **feed},
        )

    async def robots(self, response: Response) -> list[Request]:
        """robots.txt answered: its sitemaps, else probes of the usual locations."""
        page_url = response.meta["discover_for"]
        text = response.body.decode("utf-8", errors="replace")
        sitemaps = [url for url in Protego.parse(text).sitemaps
                    if url.startswith(("http://", "https://"))]  # fmt: skip
        if not sitemaps:
            return self.probes(page_url)
        chosen = news_first(list(dict.fromkeys(sitemaps)))[:MAX_ROBOTS_SITEMAPS]
        self.stats.inc_value("discovery/sitemaps/robots", len(chosen))
        return await self._found(chosen, page_url)

    def probes(self, page_url: str) -> list[Request]:
        root = site_root(page_url)
        return [self._request(root + path, page_url, "parse_probe", "on_probe_error")
                for path in USUAL_SITEMAPS]  # fmt: skip

    async def probe(self, response: Response) -> bool:
        """A usual location answered: True when it parses as a sitemap (or any feed), which
        is then a feed of the crawl, this answer its first poll."""
        try:
            parse_feed(gunzip_feed(response.body, self.max_bytes), response.url, max_entries=1)
        except FeedError:
            self.stats.inc_value("discovery/probe_misses")
            return False
        url = response.meta["feed_url"]
        self.stats.inc_value("discovery/sitemaps/probed")
        self.depth.setdefault(url, 0)
        log.info("sitemap of %s found at %s", site_root(url), url)
        await self.spider._adopt_feeds([url], parent=response.meta["discover_for"])
        return True

    def probe_failed(self, failure: Failure) -> None:
        self.stats.inc_value("discovery/probe_misses")

    async def _found(self, urls: list[str], page_url: str) -> list[Request]:
        for url in urls:
            self.depth.setdefault(url, 0)
        log.info("sitemaps of %s: %s", site_root(page_url), ", ".join(urls))
        return await self.spider._add_feeds(urls, parent=page_url)

    def wanted_subfeeds(self, index_url: str, feed: Feed, cutoff: float | None) -> list[str]:
        """The sitemaps of an index worth following: not too deep, not older than the cutoff
        (by their <lastmod>), news sitemaps first, at most MAX_SITEMAPS_PER_INDEX."""
        if not feed.subfeeds:
            return []
        depth = self.depth.get(index_url, 0) + 1
        if depth > MAX_SITEMAP_DEPTH:
            self.stats.inc_value("discovery/sitemaps/too_deep", len(feed.subfeeds))
            return []
        recent = [url for url in feed.subfeeds if not _older(feed, url, cutoff)]
        if old := len(feed.subfeeds) - len(recent):
            self.stats.inc_value("discovery/sitemaps/too_old", old)
        chosen = news_first(recent)[:MAX_SITEMAPS_PER_INDEX]
        if over := len(recent) - len(chosen):
            self.stats.inc_value("discovery/sitemaps/over_limit", over)
        for url in chosen:
            self.depth.setdefault(url, depth)
        return chosen


def _older(feed: Feed, url: str, cutoff: float | None) -> bool:
    changed = feed.subfeed_dates.get(url)
    return cutoff is not None and changed is not None and changed.timestamp() < cutoff
