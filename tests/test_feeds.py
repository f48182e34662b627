"""Feed parsing: every supported format, and the malformed and hostile feeds of the open web."""

from __future__ import annotations

import base64
import json
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
    assert lights.categories == ["harbour", "Volunteers"]  # not a number, one per word


def test_entry_categories_from_rss_dublin_core_and_atom_are_distinct_tags_in_order() -> None:
    (tagged,) = load("categories.xml", "https://tagged.test/rss.xml").entries
    assert tagged.categories == ["Politics", "Elections", "City Hall"]
    (atom,) = load("categories-atom.xml", "https://tagged.test/atom.xml").entries
    assert atom.categories == ["Science", "space"]
    assert atom.to_meta()["categories"] == ["Science", "space"]  # travels with the request


def test_news_sitemap_and_sitemap_index() -> None:
    sitemap = load("sitemap-news.xml")
    assert sitemap.format == FORMAT_SITEMAP
    (entry,) = sitemap.entries
    assert entry.title == "Markets close higher"
    assert entry.published == datetime(2026, 11, 2, 9, 40, tzinfo=UTC)
    assert entry.categories == ["markets", "stocks", "bonds"]  # news:keywords
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


# --- Regression tests: one class of real-world damage each -----------------------------------


def test_ampersands_in_links_are_decoded_once_never_read_as_entities() -> None:
    feed = load("ampersand-links.xml", "https://ex.test/rss")
    plain, escaped = feed.entries
    # "&amp;section" is "&section", never "§ion" (nor &reg, &not, &para, &times, &copy).
    assert plain.link == "https://ex.test/a?id=1&section=world&region=eu&not=1&para=2&times=3"
    assert plain.guid == "https://ex.test/a?id=1&section=world&copy=1"
    assert plain.summary == "Read more at https://ex.test/b?id=2&section=world&reg=x"
    assert feed.title == "Tom & Jerry &copy Gazette"  # text written as "&amp;copy" is "&copy"
    # A link escaped twice keeps what its XML says: one decoding, not two.
    assert escaped.link == "https://ex.test/c?x=1&amp;y=2"
    # HTML decodes its own complete references once; a loose "&sect" stays as written.
    assert escaped.summary == "Query ?a=1&sect=2 & \u00a9 2026"


def test_elements_are_matched_by_namespace_not_by_local_name() -> None:
    feed = load("namespace-clash.xml", "https://harbour.test/rss")
    assert feed.title == "Harbour Post"  # not the channel's <media:title>
    ferry, tides = feed.entries
    assert ferry.link == "https://harbour.test/news/ferry.html"  # not the enclosure's image
    assert ferry.title == "Ferry service resumes"  # not the photo caption
    assert ferry.summary == "The ferry runs again from Monday."  # not <szf:description>
    assert tides.link == "https://harbour.test/news/tides.html"  # the alternate atom:link
    assert tides.title == "Only a media title"  # a media title only when there is no other


def test_rss1_module_elements_named_like_core_elements_are_ignored() -> None:
    (entry,) = load("rss1-module-clash.rdf").entries
    assert entry.summary == "The real description."
    assert entry.published == datetime(2026, 11, 2, 6, 0, tzinfo=UTC)


def test_xml_base_on_any_ancestor_or_the_link_itself_resolves_rss_links() -> None:
    feed = load("xml-base.xml", "http://feeds.test/rss")
    item_base, own_base, channel_base = feed.entries
    assert item_base.link == "http://base.test/section/story.html"
    assert item_base.guid == "http://base.test/guids/1"  # a relative permalink guid resolves
    assert own_base.link == "http://other.test/dir/own.html"
    assert channel_base.link == "http://base.test/root/channel/plain.html"
    assert channel_base.guid == "/not/a/link"  # isPermaLink="false": an opaque id, kept


def test_atom_link_xml_base_and_relative_ids() -> None:
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://valley.test/news/">'
        b'<entry><link href="a.html" xml:base="/sport/"/><id>/ids/7</id></entry>'
        b'<entry><link href="b.html"/><id>urn:uuid:1</id></entry></feed>'
    )
    sport, news = parse_feed(body, "http://feeds.test/atom").entries
    assert (sport.link, sport.guid) == (
        "http://valley.test/sport/a.html",
        "http://valley.test/ids/7",
    )
    assert (news.link, news.guid) == ("http://valley.test/news/b.html", "urn:uuid:1")


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("http://mirror.test/feeds/", "http://mirror.test/relative/uri"),
        ("/other/feed.xml", "http://feeds.test/relative/uri"),  # relative to the feed's URL
        ("javascript:alert(1)", "http://feeds.test/relative/uri"),  # not http(s): ignored
        (None, "http://feeds.test/relative/uri"),
    ],
)
def test_content_location_is_the_base_after_xml_base(location: str | None, expected: str) -> None:
    body = b'<rss version="2.0"><channel><item><link>/relative/uri</link></item></channel></rss>'
    feed = parse_feed(body, "http://feeds.test/x/rss.xml", content_location=location)
    assert feed.entries[0].link == expected
    based = body.replace(b"<item>", b'<item xml:base="http://base.test/">')
    feed = parse_feed(based, "http://feeds.test/x/rss.xml", content_location=location)
    assert feed.entries[0].link == "http://base.test/relative/uri"  # xml:base comes first


def test_a_doctype_inside_cdata_loses_nothing() -> None:
    feed = load("doctype-in-cdata.xml")
    assert [entry.title for entry in feed.entries] == ["Code sample", "The next item survives"]
    assert feed.entries[0].summary == "An HTML page starts with"
    assert feed.repairs == []  # no DTD was there to remove, and nothing was malformed


def test_a_prolog_dtd_is_removed_even_when_its_strings_contain_brackets() -> None:
    body = (
        b'<?xml version="1.0"?><!-- a comment first --><!DOCTYPE rss [<!ENTITY x "]> &lt;">]>'
        b'<rss version="2.0"><channel><item><title>T &x;</title>'
        b"<link>http://a.test/1</link></item></channel></rss>"
    )
    feed = parse_feed(body, "http://a.test/rss")
    assert feed.entries[0].title == "T &x;"  # never expanded, kept as written
    assert "dtd_removed" in feed.repairs


def test_rss091_items_outside_the_channel_are_read() -> None:
    feed = load("rss091-outside-channel.xml", "http://coastalpost.test/rss")
    assert feed.format == FORMAT_RSS09X
    assert [entry.link for entry in feed.entries] == [
        "http://coastalpost.test/news/a.html",
        "http://coastalpost.test/news/b.html",
    ]


def test_content_fallbacks_authors_and_no_script_or_style_text() -> None:
    feed = load("content-fallbacks.xml")
    assert feed.title == "Fallbacks Daily"  # escaped <script> in a title: its code is dropped
    encoded, xhtml, both = feed.entries
    assert encoded.summary == "Full text here."  # content:encoded, its script and style dropped
    assert encoded.authors == ["Ana Lima"]  # "Name (email)"
    assert xhtml.title == "Headline with a script"
    assert xhtml.summary == "Inline XHTML body."  # xhtml:body
    assert xhtml.authors == ["Ben Ode", "Cara Diaz"]  # "Name <email>", "email (Name)"
    assert both.summary == "Short summary."  # the description first


def test_atom03_base64_content_is_decoded_and_plain_text_kept_as_written() -> None:
    feed = load("atom03-base64.xml", "http://valleytimes.test/atom.xml")
    assert feed.title == "Valley Times Archive"  # base64 of "Valley Times <b>Archive</b>"
    (entry,) = feed.entries
    assert entry.title == "History of the <blink> tag"  # type="text/plain": not markup
    assert entry.summary == "Summary decoded."
    assert entry.guid == "http://valleytimes.test/archive/blink"
    assert entry.published == datetime(2004, 1, 1, 19, 48, 21, tzinfo=UTC)


def test_utf16_feeds_are_read() -> None:
    text = '<?xml version="1.0" encoding="utf-16"?><rss version="2.0"><channel><item>'
    text += "<title>Caf\u00e9</title><link>http://a.test/1</link></item></channel></rss>"
    for body in (text.encode("utf-16"), text.encode("utf-8")):  # with BOM; mislabelled
        (entry,) = parse_feed(body, "http://a.test/rss").entries
        assert entry.title == "Caf\u00e9"


def test_control_characters_and_lone_surrogates_never_reach_a_field() -> None:
    """Found by fuzzing: base64 and JSON payloads can carry what XML text cannot. Control
    characters are dropped; a lone surrogate becomes U+FFFD, as everywhere (extractors.safetext).
    """
    payload = base64.b64encode(b"<p>Bad\x00\x05 bytes</p>").decode()
    atom = (
        '<feed xmlns="http://purl.org/atom/ns#"><entry><link href="http://a.test/1"/>'
        f'<summary type="text/html" mode="base64">{payload}</summary></entry></feed>'
    )
    (entry,) = parse_feed(atom.encode(), "http://a.test/atom").entries
    assert entry.summary == "Bad bytes"
    body = b'{"items": [{"url": "http://a.test/2", "id": "x\\ud800y", "title": "Ti\\u0000tle"}]}'
    (entry,) = parse_feed(body, "http://a.test/feed.json").entries
    assert (entry.guid, entry.title) == ("x\ufffdy", "Title")
    json.dumps(entry.to_meta(), ensure_ascii=False).encode("utf-8")  # exportable
