"""Capture: every fetched response (feeds, articles, robots.txt) archived as WARC records.

A downloader middleware ordered after Scrapy's HttpCompressionMiddleware (590) in
`process_response` terms, i.e. with a higher number (595, closer to the download handler): it
sees the body as the server sent it, before decompression (Scrapy has already undone chunked
transfer coding, so that header is kept under the name `X-Archive-Orig-Transfer-Encoding`, the
convention of pywb and Common Crawl). Configured below 590 it would see decoded bodies: it then
archives them with their Content-Encoding header renamed the same way and says so in a
`WARC-Body-Note` header. A redirect (3xx) is not archived: RedirectMiddleware (600) turns it
into the next request before the capture sees it; the response it leads to is, under its URL.

Per response: a `request` record (method, path and headers as sent), the `response` record
(status line and headers as received, body) and, for an article, a `metadata` record (JSON: its
feed, feed entry and ledger identity) that lets a replay rebuild exactly the item the crawl
built. The group goes to the writer thread (crawler/warc/writer.py); the response moves on once
the group is in the file, so an article is never marked done before it is archived.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Request, Response

from crawler.core.failures import FailureLog
from crawler.core.paths import output_dir
from crawler.warc.records import HTTP_REQUEST_TYPE, OutRecord, http_block, response_record
from crawler.warc.writer import WarcWriter

log = logging.getLogger(__name__)

COMPRESSION_MIDDLEWARE = "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware"
METADATA_TYPE = "application/vnd.newsharvest.article+json"  # what replay looks for
ORIGINAL_PREFIX = b"X-Archive-Orig-"
# Settings named in each file's warcinfo record: what shaped the fetches it holds.
WARCINFO_SETTINGS = (
    "BOT_NAME", "USER_AGENT", "ROBOTSTXT_OBEY", "DOWNLOAD_MAXSIZE", "DOWNLOAD_TIMEOUT",
    "CONCURRENT_REQUESTS_PER_DOMAIN", "DOWNLOAD_DELAY", "WARC_ROTATE_BYTES",
)  # fmt: skip


def software_name() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"newsharvest/{version('newsharvest')}"
    except PackageNotFoundError:
        return "newsharvest"


class WarcCaptureMiddleware:
    def __init__(self, crawler: Crawler, writer: WarcWriter, decoded: bool) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.writer = writer
        self.decoded = decoded  # ordered where bodies are already decompressed
        self.failures = FailureLog(log, "warc/errors", "WARC capture failed")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcCaptureMiddleware:
        settings = crawler.settings
        if not settings.getbool("WARC_CAPTURE_ENABLED"):
            raise NotConfigured("WARC_CAPTURE_ENABLED is off")
        directory = settings.get("WARC_DIR") or str(output_dir(settings) / "warc")
        info = {name: settings.get(name) for name in WARCINFO_SETTINGS}
        info["spider"] = crawler.spidercls.name
        writer = WarcWriter(
            directory=Path(directory),
            prefix=settings.get("WARC_PREFIX"),
            rotate_bytes=settings.getint("WARC_ROTATE_BYTES"),
            queue_records=settings.getint("WARC_QUEUE_RECORDS"),
            software=software_name(),
            info=info,
        )
        middlewares = settings.getwithbase("DOWNLOADER_MIDDLEWARES")
        ours = middlewares.get(f"{cls.__module__}.{cls.__name__}")
        theirs = middlewares.get(COMPRESSION_MIDDLEWARE)
        decoded = ours is not None and theirs is not None and ours < theirs
        middleware = cls(crawler, writer, decoded)
        crawler.signals.connect(middleware.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    def spider_opened(self) -> None:
        repaired = self.writer.start()
        self.stats.set_value("warc/repaired_files", len(repaired))
        log.info("archiving every response as WARC in %s", self.writer.directory)

    def spider_closed(self) -> None:
        self.writer.close()
        self.stats.set_value("warc/files", len(self.writer.files))
        self.stats.set_value("warc/bytes", self.writer.bytes)

    async def process_response(self, request: Request, response: Response) -> Response:
        records = self.records_of(request, response)
        try:
            await self.writer.write(records)
        except Exception as error:  # a full disk must not stop the crawl: counted and logged
            self.failures.report(self.stats, error, response.url)
            return response
        self.stats.inc_value("warc/records", len(records))
        self.stats.inc_value("warc/responses")
        return response

    def records_of(self, request: Request, response: Response) -> list[OutRecord]:
        now = datetime.now(UTC)
        headers, extra = self._headers(response)
        protocol = response.protocol or "HTTP/1.1"
        archived = response_record(response.url, response.status, headers, response.body,
                                   date=now, protocol=protocol, extra=extra)  # fmt: skip
        concurrent = [("WARC-Concurrent-To", archived.record_id)]
        records = [
            OutRecord("request", _request_block(request, protocol), HTTP_REQUEST_TYPE,
                      response.url, now, extra=concurrent),
            archived,
        ]  # fmt: skip
        metadata = article_metadata(request)
        if metadata is not None:
            records.append(OutRecord("metadata", json.dumps(metadata).encode(), METADATA_TYPE,
                                     response.url, now, extra=concurrent))  # fmt: skip
        return records

    def _headers(
        self, response: Response
    ) -> tuple[list[tuple[bytes, bytes]], list[tuple[str, str]]]:
        renamed = {b"transfer-encoding"}
        extra: list[tuple[str, str]] = []
        if self.decoded and response.headers.get(b"Content-Encoding"):
            renamed.add(b"content-encoding")
            extra.append(("WARC-Body-Note", "decoded by the crawler before capture"))
        headers = [
            (ORIGINAL_PREFIX + name if name.lower() in renamed else name, value)
            for name, values in response.headers.items()
            for value in values
        ]
        return headers, extra


def article_metadata(request: Request) -> dict[str, Any] | None:
    """What the feeds spider knew of an article request (not in the page): its feed entry and
    its identity in the ledger. None for feeds and robots.txt."""
    claim = request.meta.get("harvest")
    if not claim:
        return None
    return {
        "feed_url": request.cb_kwargs.get("feed_url"),
        "entry": request.cb_kwargs.get("entry") or {},
        "entry_url": claim.get("key"),
        "version": claim.get("version"),
        "updated": claim.get("updated"),
    }


def _request_block(request: Request, protocol: str) -> bytes:
    parts = urlsplit(request.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = [(b"Host", parts.netloc.encode("latin-1"))]
    headers += [(name, value) for name, values in request.headers.items() for value in values]
    return http_block(f"{request.method} {target} {protocol}", headers, request.body or b"").data
