"""Extraction stage: raw HTML -> clean article (schema.org -> DOM heuristics), or NULL.

Counts, globally and per publisher domain (monitoring reads both):
`extract/method/<method>` for each article, `extract/null/<reason>` for each NULL, and
`extract/seconds` (total CPU time spent extracting). Extraction runs in the reactor thread: it
costs a few milliseconds a page and never blocks on I/O.

EXTRACT_EXTRACTOR picks the extractor (`extractors.EXTRACTORS`, or a combination "a+b"); the
default is the production chain. An unknown name stops the crawl at startup.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.statscollectors import StatsCollector

from crawler.domainstats import EXTRACT_METHOD, EXTRACTION_TIME, NULL, inc_domain, observe_domain
from crawler.items import TRANSIENT_FIELDS
from extractors import Article, extract_verbose
from extractors.registry import validate
from pipelines.dedup import content_hash

log = logging.getLogger(__name__)


class ExtractionPipeline:
    def __init__(self, stats: StatsCollector, keep_html: bool, extractor: str = "default") -> None:
        self.stats = stats
        self.keep_html = keep_html
        self.extractor = validate(extractor)  # raises UnknownExtractorError on a typo

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ExtractionPipeline:
        settings = crawler.settings
        return cls(
            crawler.stats,
            settings.getbool("EXTRACT_KEEP_HTML"),
            settings.get("EXTRACT_EXTRACTOR") or "default",
        )

    def process_item(self, item: Any) -> Any:
        if "html" not in item:
            return item  # not a page to extract (e.g. an item another spider made)
        started = time.process_time()
        result = extract_verbose(
            item["html"],
            item["url"],
            encoding=item.get("http_encoding"),
            extractor=self.extractor,
        )
        elapsed = time.process_time() - started
        self.stats.inc_value("extract/seconds", elapsed)
        observe_domain(self.stats, item.get("domain") or "unknown", EXTRACTION_TIME, elapsed)
        entry = item.get("feed_entry") or {}
        if not self.keep_html:
            for name in TRANSIENT_FIELDS:
                item.pop(name, None)
        domain = item.get("domain") or "unknown"
        if result.article is None:
            self._count_null(domain, result.reason or "unknown")
            raise DropItem(f"NULL ({result.reason}): {item['url']}", log_level="INFO")
        self.stats.inc_value(f"extract/method/{result.article.method}")
        inc_domain(self.stats, domain, f"{EXTRACT_METHOD}/{result.article.method}")
        fill_item(item, result.article, entry)
        return item

    def _count_null(self, domain: str, reason: str) -> None:
        self.stats.inc_value("extract/null")
        self.stats.inc_value(f"extract/null/{reason}")
        inc_domain(self.stats, domain, NULL)
        inc_domain(self.stats, domain, f"{NULL}/{reason}")


def fill_item(item: Any, article: Article, entry: dict[str, Any]) -> None:
    """Copy the article into the item; the feed entry fills what the page did not say."""
    text = article.text
    item["title"] = article.title or entry.get("title")
    item["published"] = (
        article.published.isoformat() if article.published else entry.get("published")
    )
    item["authors"] = article.authors or entry.get("authors") or []
    item["language"] = article.language
    item["description"] = article.description or entry.get("summary")
    item["image"] = article.image
    item["canonical_url"] = article.canonical_url or item["url"]
    item["text"] = text
    item["blocks"] = [{"kind": kind, "text": block} for kind, block in article.blocks]
    item["extraction_method"] = article.method
    item["content_hash"] = content_hash(text)
    item.setdefault("duplicate_of", None)
