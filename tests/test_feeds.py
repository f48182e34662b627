"""Feed parsing: every supported format, and the malformed and hostile feeds of the open web."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from crawler.feedparse import (
    FORMAT_ATOM,
    FORMAT_JSON_FEED,
    FORMAT_RSS09X,
    FORMAT_RSS1,
    FORMAT_RSS2,
    FORMAT_SITEMAP,
    FORMAT_SITEMAP_INDEX,
    FeedError,
    parse_feed,
)
from crawler.spiders.feeds import load_feed_list

FEEDS = Path(__file__).parent / "fixtures" / "feeds"
# A bomb or a huge feed must parse in well under this (it is a hang guard, not a benchmark).
HOSTILE_PARSE_LIMIT_SECONDS = 2.0


def load(name: str, url: str = "http://feeds.test/feed") -> object:
    return parse_feed((FEEDS / name).read_bytes(), url)


def test_rss2_entries_carry_link_metadata_and_skip_unusable_links() -> None:
    feed = load("rss2.xml", "https://dailyherald.test/rss.xml")
    assert feed.format == FORMAT_RSS2
    assert feed.title == "Daily Herald \u2013 World"
    assert [entry.link for entry in feed.entries] == [
        "https://dailyherald.test/local/harbour-budget.html?utm_source=rss&utm_medium=feed",
        "https://dailyherald.test/world/guid-link.html",
        "https://dailyherald.test/science/comet.html",
    ]
    first, second, third = feed.entries
    assert first.title == "Council approves new harbour budget"  # double-escaped HTML removed
    assert first.guid == "dh-1001"
    assert first.authors == ["Maria Okafor"]
    assert first.published == datetime(2026, 11, 2, 7, 30, tzinfo=UTC)
    assert first.summary == "The council voted 7-2 on Monday."
    assert second.authors == ["Tom Reyes"]  # "email (Name)" keeps the name
    assert third.published == datetime(2026, 11, 2, 3, 15, tzinfo=UTC)  # EST understood
    assert feed.skipped == 2  # no link at all; javascript: link


def test_rss091_relative_links_resolve_against_the_feed_url() -> None:
    feed = load("rss091.xml", "http://coastalpost.test/rss091.xml")
    assert feed.format == FORMAT_RSS09X
    assert [entry.link for entry in feed.entries] == [
        "http://coastalpost.test/news/ferry.html",
        "http://coastalpost.test/news/tides.html",
    ]
    assert feed.entries[0].summary == "Caf\u00e9 owners welcome the return."


def test_rss1_rdf_items_are_siblings_of_the_channel() -> None:
    feed = load("rss1.rdf")
    assert feed.format == FORMAT_RSS1
    assert [entry.title for entry in feed.entries] == [
        "Transit authority unveils night buses",
        "Library extends opening hours",
    ]
    transit, library = feed.entries
    assert transit.authors == ["Ines Alvarez"]
    assert transit.published == datetime(2026, 11, 2, 6, 0, tzinfo=UTC)
    # No <link>: rdf:about is the article's URL.
    assert library.link == "http://metroledger.test/city/library.html"
    assert library.published == datetime(2026, 11, 1, 16, 45, tzinfo=UTC)


def test_atom_alternate_link_xml_base_and_several_authors() -> None:
    feed = load("atom.xml", "http://valleytimes.test/atom.xml")
    assert feed.format == FORMAT_ATOM
    assert feed.title == "Valley Times \u2014 News"
    orchards, derby = feed.entries
    assert orchards.link == "http://valleytimes.test/news/orchards.html"  # not rel=self
    assert orchards.authors == ["Lena Fischer", "Sam Osei"]
    assert orchards.published == datetime(2026, 11, 2, 13, 0, tzinfo=UTC)
    assert orchards.updated == datetime(2026, 11, 2, 14, 0, tzinfo=UTC)
    assert derby.link == "http://valleytimes.test/sport/derby.html"  # entry-level xml:base
    assert derby.published == derby.updated == datetime(2026, 11, 1, 21, 0, tzinfo=UTC)


def test_json_feed() -> None:
    feed = load("feed.json", "http://coastalpost.test/feed.json")
    assert feed.format == FORMAT_JSON_FEED
    assert [entry.link for entry in feed.entries] == [
        "http://coastalpost.test/news/harbour-lights.html",
        "http://coastalpost.test/news/relative.html",
    ]
    lights = feed.entries[0]
    assert (lights.guid, lights.authors) == ("cp-77", ["Priya Nair"])
    assert lights.updated == datetime(2026, 11, 2, 7, 30, tzinfo=UTC)
    assert feed.entries[1].guid == "78"
    assert feed.skipped == 2


def test_news_sitemap_and_sitemap_index() -> None:
    sitemap = load("sitemap-news.xml")
    assert sitemap.format == FORMAT_SITEMAP
    (entry,) = sitemap.entries
    assert entry.title == "Markets close higher"
    assert entry.published == datetime(2026, 11, 2, 9, 40, tzinfo=UTC)
    index = load("sitemap-index.xml", "https://wirewatch.test/sitemap.xml")
    assert index.format == FORMAT_SITEMAP_INDEX
    assert index.subfeeds == [
        "https://wirewatch.test/sitemap-news-1.xml",
        "https://wirewatch.test/sitemap-news-2.xml",
    ]


def test_malformed_feed_bare_ampersands_and_undeclared_entities_are_recovered() -> None:
    feed = load("malformed-entities.xml")
    assert feed.title == "Smith & Sons Gazette"
    assert [entry.title for entry in feed.entries] == [
        "R&D budget grows \u2014 again",
        "Second entry survives the first one's errors",
    ]
    assert feed.entries[0].link == "http://gazette.test/a.html?x=1&y=2"


def test_wrong_encoding_declaration_keeps_every_entry() -> None:
    feed = load("wrong-encoding.xml")
    assert [entry.title for entry in feed.entries] == [
        "Caf\u00e9 owners cheer \u201cnew\u201d square",
        "Second",
    ]


def test_html_page_is_not_a_feed_but_its_advertised_feeds_are_reported() -> None:
    with pytest.raises(FeedError) as raised:
        load("html-page.html", "https://gazette.test/")
    assert raised.value.reason == "html_not_feed"
    assert raised.value.alternates == [
        "https://gazette.test/rss.xml",
        "https://gazette.test/atom.xml",
    ]


def test_entity_bomb_is_not_expanded_and_parses_fast() -> None:
    started = time.monotonic()
    feed = load("billion-laughs.xml")
    assert time.monotonic() - started < HOSTILE_PARSE_LIMIT_SECONDS
    (entry,) = feed.entries
    assert entry.link == "http://gazette.test/bomb.html"
    assert "lollol" not in (entry.title or "")


def test_external_entities_are_never_resolved() -> None:
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else ""
    (entry,) = load("xxe.xml").entries
    assert entry.link == "http://gazette.test/xxe.html"
    assert entry.title is not None and entry.title.startswith("Leak:")
    if hostname:
        assert hostname not in entry.title


def test_huge_feed_reads_at_most_max_entries() -> None:
    items = b"".join(
        b"<item><title>t%d</title><link>http://big.test/%d.html</link></item>" % (i, i)
        for i in range(100_000)
    )
    body = b'<rss version="2.0"><channel>' + items + b"</channel></rss>"
    started = time.monotonic()
    feed = parse_feed(body, "http://big.test/rss", max_entries=500)
    assert time.monotonic() - started < HOSTILE_PARSE_LIMIT_SECONDS
    assert len(feed.entries) == 500 and feed.truncated
    assert feed.entries[-1].link == "http://big.test/499.html"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "empty_feed"),
        (b"   \n", "empty_feed"),
        (b"{not json", "malformed_json"),
        (b'{"items": 3}', "unknown_format"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "unknown_format"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "malformed_xml"),
    ],
)
def test_non_feeds_raise_feed_error_with_a_reason(body: bytes, reason: str) -> None:
    with pytest.raises(FeedError) as raised:
        parse_feed(body, "http://x.test/feed")
    assert raised.value.reason == reason


def test_entry_metadata_is_json_safe() -> None:
    meta = load("atom.xml").entries[0].to_meta()
    assert meta["published"] == "2026-11-02T08:00:00-05:00"
    assert meta["authors"] == ["Lena Fischer", "Sam Osei"]


def test_feed_list_from_file_and_from_comma_separated_urls(tmp_path: Path) -> None:
    listing = tmp_path / "feeds.txt"
    listing.write_text("# publishers\nhttp://a.test/rss\n\nhttps://b.test/atom.xml  # main\n")
    assert load_feed_list(str(listing)) == ["http://a.test/rss", "https://b.test/atom.xml"]
    assert load_feed_list("http://a.test/rss, http://b.test/x,http://a.test/rss") == [
        "http://a.test/rss",
        "http://b.test/x",
    ]
    for bad in ("", "ftp://a.test/rss", str(tmp_path / "missing.txt")):
        with pytest.raises(ValueError):
            load_feed_list(bad)
