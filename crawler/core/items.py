"""The item every stage passes along. Output field names are a public contract: keep them."""

from __future__ import annotations

from typing import Any

import scrapy

# Fields that only travel between stages and are never exported.
TRANSIENT_FIELDS = ("html", "http_encoding", "feed_entry")


class ArticleItem(scrapy.Item):
    # Where the article came from.
    url = scrapy.Field()  # the URL fetched (after redirects)
    canonical_url = scrapy.Field()  # the page's own canonical URL, else the fetched URL
    domain = scrapy.Field()  # the publisher's domain (host without www.)
    feed_url = scrapy.Field()  # the feed that listed it
    guid = scrapy.Field()  # the feed entry's id
    fetched_at = scrapy.Field()  # ISO 8601 UTC time of the fetch
    # Versions: a feed entry whose `updated` date moves on is fetched again as a new version.
    entry_url = scrapy.Field()  # canonical form of the feed's link: the article's identity
    version = scrapy.Field()  # 1 for the first fetch, 2, 3... for revisions
    updated = scrapy.Field()  # the entry's updated (else published) date behind this version
    # Replayed from a web archive (`newsharvest replay`): the archive record's identity in the
    # ledger, "warc:<entry_url>#<version>" or "warc:<WARC-Record-ID>"; absent in a crawl.
    replay_key = scrapy.Field()

    # The article.
    title = scrapy.Field()
    published = scrapy.Field()  # ISO 8601 with offset, or None
    authors = scrapy.Field()  # list of names
    language = scrapy.Field()  # ISO 639-1 code, or None
    description = scrapy.Field()
    image = scrapy.Field()  # top image URL
    text = scrapy.Field()  # blocks joined by "\n"
    blocks = scrapy.Field()  # list of {"kind": ..., "text": ...}
    extraction_method = scrapy.Field()  # "schema_org", "dom", "dom_fallback", ...
    notices_removed = scrapy.Field()  # blocks removed as the domain's recurring notices
    modified = scrapy.Field()  # ISO 8601 with offset when the page (or feed) says, or None
    section = scrapy.Field()  # the publisher's section ("Business"), or None
    keywords = scrapy.Field()  # list of the page's keywords/tags
    paywalled = scrapy.Field()  # True / False as the page marks it, None when it says nothing
    images = scrapy.Field()  # list of {"url", "caption", "credit"}, the lead image first
    word_count = scrapy.Field()  # words of `text`
    markdown = scrapy.Field()  # the article as Markdown (OUTPUT_MARKDOWN), else None

    # Deduplication.
    content_hash = scrapy.Field()  # hash of the normalised text (exact duplicates)
    duplicate_of = scrapy.Field()  # canonical URL of the first near-duplicate copy, or None
    # Which copy of a story came first (crawler/core/order.py): archive order in a replay,
    # publication date (else fetch time) in a crawl.
    order_key = scrapy.Field()
    # Articles indexed earlier that turned out to be copies of this one (it came first by
    # order_key): their ids in the near-duplicate index, now `duplicate_of` this article. Set
    # only when there are any; the sinks take them out of their index.
    supersedes = scrapy.Field()
    # The text's near-duplicate Fingerprint, computed with the extraction; the dedup stage takes
    # it out (never exported), the notices stage makes it again when it changes the text.
    fingerprint = scrapy.Field()
    # Work later stages asked the extraction worker to do on the article, by the stage's
    # `worker_preparation` path (take_prepared); each stage takes its own out, never exported.
    prepared = scrapy.Field()
    # The page's place in its domain's order for monitoring (domainstats.take_page_ticket); the
    # monitoring stage takes it out before the sinks, a dropped page's signal reads it.
    monitor_ticket = scrapy.Field()

    # Transient (see TRANSIENT_FIELDS): raw page and feed entry, dropped after extraction.
    html = scrapy.Field()  # response body bytes
    http_encoding = scrapy.Field()  # charset from the Content-Type header
    feed_entry = scrapy.Field()  # FeedEntry.to_meta() of the entry that listed the article


def take_prepared(item: Any, path: str) -> Any:
    """Take out what the extraction worker prepared for the stage whose preparation is `path`
    (None when it did not); the field goes with the last taker."""
    prepared = item.get("prepared")
    if not prepared:
        return None
    found = prepared.pop(path, None)
    if not prepared:
        del item["prepared"]
    return found
