"""The extraction pipeline: items in, articles or NULL drops out, counted per method, reason and
publisher domain."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from crawler.core.items import ArticleItem
from pipelines.extraction.pipeline import ExtractionPipeline

PAGES = Path(__file__).parent / "fixtures" / "pages"


def _item(name: str, domain: str) -> ArticleItem:
    return ArticleItem(
        url=f"https://{domain}/{name}",
        domain=domain,
        html=(PAGES / name).read_bytes(),
        http_encoding=None,
        feed_entry={"title": "Feed title", "summary": "Feed summary", "authors": ["Feed Author"]},
    )


def test_articles_and_nulls_are_counted_globally_and_per_domain() -> None:
    crawler = get_crawler()
    pipeline = ExtractionPipeline.from_crawler(crawler)
    started = time.perf_counter()
    article = asyncio.run(pipeline.process_item(_item("dom-article.html", "valleytimes.test")))
    assert article["extraction_method"] == "dom"
    assert article["text"].startswith("Overnight passenger trains")
    assert article["blocks"][0] == {"kind": "paragraph", "text": article["text"].split("\n")[0]}
    assert article["authors"] == ["Lena Fischer"] and article["content_hash"]
    assert "html" not in article and "feed_entry" not in article
    schema = asyncio.run(pipeline.process_item(_item("jsonld-graph.html", "dailyherald.test")))
    assert schema["extraction_method"] == "schema_org"
    with pytest.raises(DropItem, match="NULL"):
        asyncio.run(pipeline.process_item(_item("video-page.html", "valleytimes.test")))
    elapsed = time.perf_counter() - started

    stats = crawler.stats.get_stats()
    assert stats["extract/method/dom"] == 1 and stats["extract/method/schema_org"] == 1
    assert stats["extract/null"] == 1 and stats["extract/null/too_short"] == 1
    assert stats["domain/valleytimes.test/method/dom"] == 1
    assert stats["domain/dailyherald.test/method/schema_org"] == 1
    assert stats["domain/valleytimes.test/null"] == 1
    assert stats["domain/valleytimes.test/null/too_short"] == 1
    assert 0 < stats["extract/seconds"] <= elapsed  # the three extractions' time, in seconds


def test_the_item_carries_the_record_fields_and_markdown_when_asked() -> None:
    metadata = Path(__file__).parent / "fixtures" / "metadata"
    item = ArticleItem(
        url="https://riversidegazette.test/news/elm-street-bridge-closure",
        domain="riversidegazette.test",
        html=(metadata / "jsonld-author-object-late-evening.html").read_bytes(),
        http_encoding=None,
        feed_entry={},
    )
    plain = asyncio.run(ExtractionPipeline.from_crawler(get_crawler()).process_item(item.copy()))
    assert plain["markdown"] is None  # OUTPUT_MARKDOWN is off by default
    assert plain["paywalled"] is None and plain["section"] == "Local"
    assert plain["modified"] == "2024-03-06T08:15:00-05:00"
    assert plain["word_count"] == len(plain["text"].split()) and plain["images"] == []
    crawler = get_crawler(settings_dict={"OUTPUT_MARKDOWN": True})
    rendered = asyncio.run(ExtractionPipeline.from_crawler(crawler).process_item(item.copy()))
    assert rendered["markdown"].startswith(
        "# Elm Street bridge to close for six weeks of repairs\n"
    )


def test_feed_entry_fills_what_the_page_does_not_say() -> None:
    pipeline = ExtractionPipeline.from_crawler(get_crawler())
    item = asyncio.run(pipeline.process_item(_item("table-layout.html", "coastalpost.test")))
    assert item["authors"] == ["Feed Author"]  # the page names no author
    assert item["description"] == "Feed summary"
    assert item["canonical_url"] == item["url"]
    assert item["modified"] is None  # the entry has no `updated` of its own
    updated = _item("table-layout.html", "coastalpost.test")
    updated["feed_entry"] = {"published": "2026-11-01T08:00:00+00:00",
                             "updated": "2026-11-02T09:00:00+00:00"}  # fmt: skip
    assert asyncio.run(pipeline.process_item(updated))["modified"] == "2026-11-02T09:00:00+00:00"
    assert item["keywords"] == []  # neither the page nor the entry tags it
    tagged = _item("table-layout.html", "coastalpost.test")
    tagged["feed_entry"] = {"categories": ["Harbour", "Lights"]}
    assert asyncio.run(pipeline.process_item(tagged))["keywords"] == ["Harbour", "Lights"]
