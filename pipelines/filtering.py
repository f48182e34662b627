"""Filter stage: drop an extracted article the harvest filters rule out (crawler/core/filters.py).

The feeds spider already skips, before fetching, the entries whose feed says enough (a declared
language, a publication date, a link outside the feed's URL pattern). This stage judges what only
the page told: the language of the extracted text (the stop list its words overlap most:
extractors/language.py; else the page's `<html lang>`) and the extracted publication date. A
dropped article counts as `filtered/<reason>` (globally and for its domain) and
`filtered/after_fetch`; the drop marks it done in the ledger (crawler/harvest.py), so it is
never fetched again and never output.

Off (NotConfigured) unless ARTICLE_LANGUAGES or ARTICLE_MAX_AGE_DAYS is set. "Now" is the
harvest clock's (HARVEST_CLOCK_*), as for the spider's filtering.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.statscollectors import StatsCollector

from crawler.core.clock import Clock, clock_from_settings
from crawler.core.filters import ArticleFilter, count_filtered, text_language


class FilterPipeline:
    def __init__(self, stats: StatsCollector, article_filter: ArticleFilter, clock: Clock) -> None:
        self.stats = stats
        self.article_filter = article_filter
        self.clock = clock

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FilterPipeline:
        article_filter = ArticleFilter.from_settings(crawler.settings)
        if not article_filter:
            raise NotConfigured("no ARTICLE_LANGUAGES or ARTICLE_MAX_AGE_DAYS")
        return cls(crawler.stats, article_filter, clock_from_settings(crawler.settings))

    def process_item(self, item: Any) -> Any:
        if "text" not in item:
            return item  # not an extracted article (another spider's item)
        published = _date(item.get("published"))
        language = text_language(item.get("text"), item.get("language"))
        reason = self.article_filter.after_extraction(language, published, self.clock.now())
        if reason is None:
            return item
        count_filtered(self.stats, item.get("domain") or "unknown", reason, before_fetch=False)
        raise DropItem(f"filtered ({reason}): {item.get('url')}", log_level="INFO")


def _date(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None
