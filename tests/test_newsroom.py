"""The local news-site fixture: ground truth, rendering, feeds, server and text generator."""

from __future__ import annotations

import http.client
import itertools
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from lxml import etree
from lxml import html as lxml_html

from crawler.newsroom import (
    BASE_DATE,
    Block,
    Newsroom,
    NewsroomServer,
    Page,
    Redesign,
    textgen,
)
from crawler.newsroom.model import BLOCK_KINDS, PAGE_KINDS, TABLE_CELL_SEPARATOR
from crawler.newsroom.styles import STYLES, WIRE
from extractors import extract_verbose

REPO_ROOT = Path(__file__).resolve().parent.parent
HAND_DOMAINS = [
    "dailyherald.test",
    "metroledger.test",
    "valleytimes.test",
    "coastalpost.test",
    "wirewatch.test",
]
HAND_FEEDS = {
    "http://dailyherald.test/rss.xml",
    "http://metroledger.test/feed.rdf",
    "http://valleytimes.test/atom.xml",
    "http://coastalpost.test/feed.json",
    "http://coastalpost.test/rss092.xml",
    "http://wirewatch.test/feed/",
}
NON_ARTICLE_KINDS = set(PAGE_KINDS) - {"article"}
SHINGLE_SIZE = 4
MIN_COPY_CONTAINMENT = 0.6  # a syndicated copy shares most of its original's 4-grams
MAX_UNRELATED_JACCARD = 0.05  # two different stories share few 4-grams
MIN_INDEX_TEASERS = 15
SCALE_DOMAINS = 50
SCALE_ARTICLES_PER_DOMAIN = 100
SCALE_BUILD_BUDGET_S = 5.0
MIN_PARAGRAPHS_PER_SECOND = 2_000
MIN_VOCABULARY = 1_500
CONCURRENT_REQUESTS = 200
CONCURRENT_CLIENTS = 8
# Well below what the server does on loopback (>1,000/s), well above a Nagle-stalled server
# (~25/s per keep-alive connection).
MIN_REQUESTS_PER_SECOND = 300
DATELINE = re.compile(r"^[A-Z][A-Z .]+ \(Wire\) \u2014 ")
PRINT_NOTICE = re.compile(
    r"^A version of this article appears in print on [A-Z][a-z]+ \d{1,2}, \d{4}, "
    r"Section [A-D], Page \d{1,2} of the Coastal Post\.$"
)
LEGAL_DISCLAIMER = re.compile(
    r"^\u00a9 \d{4} WireWatch Media LLC\. All rights reserved\. This material may not be "
    r"published, .* Privacy Policy\.$"
)
# The "Garbage" case of the NewsFeed cleartext heuristic (Trampuš and Novak): a notice longer than
# many a brief, so an extractor that keeps it outputs a notice as the body of a page that has no
# article.
MIN_GARBAGE_NOTICE_CHARS = 500
ATOM_NS = "{http://www.w3.org/2005/Atom}"
RSS1_NS = "{http://purl.org/rss/1.0/}"
DC_NS = "{http://purl.org/dc/elements/1.1/}"
RDF_NS = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"


# --- fixtures and helpers ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def room() -> Newsroom:
    return Newsroom(seed=1)


@pytest.fixture(scope="module")
def scaled() -> tuple[Newsroom, float]:
    start = time.perf_counter()
    big = Newsroom(seed=1, n_domains=SCALE_DOMAINS, articles_per_domain=SCALE_ARTICLES_PER_DOMAIN)
    return big, time.perf_counter() - start


def split_url(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.netloc, parts.path + (f"?{parts.query}" if parts.query else "")


def fetch(room: Newsroom, url: str) -> tuple[int, dict[str, str], bytes]:
    return room.render(*split_url(url))


def charset_of(headers: dict[str, str]) -> str:
    match = re.search(r"charset=([\w-]+)", headers["Content-Type"])
    assert match, headers
    return match.group(1)


def parse_page(room: Newsroom, page: Page) -> lxml_html.HtmlElement:
    status, headers, body = fetch(room, page.url)
    assert status == 200, page.url
    return lxml_html.document_fromstring(body.decode(charset_of(headers)))


def norm(text: str) -> str:
    return " ".join(text.split())


def visible_text(element: lxml_html.HtmlElement) -> str:
    """Whitespace-normalised text content without scripts (JSON-LD must not count)."""
    clone = lxml_html.fromstring(lxml_html.tostring(element))
    for script in clone.xpath("//script | //style"):
        script.drop_tree()
    return norm(clone.text_content())


def container(room: Newsroom, page: Page, tree: lxml_html.HtmlElement) -> lxml_html.HtmlElement:
    found = tree.xpath(room.style_of(page.domain).body_xpath)
    assert len(found) == 1, (page.url, len(found))
    return found[0]


def fragments(block: Block) -> list[str]:
    """What of a block must appear verbatim: its text, or each cell of a table."""
    if block.kind == "table":
        return [
            cell for line in block.text.split("\n") for cell in line.split(TABLE_CELL_SEPARATOR)
        ]
    return [norm(block.text)]


def shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i : i + SHINGLE_SIZE]) for i in range(len(words) - SHINGLE_SIZE + 1)}


def strip_tracking(url: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if not k.startswith("utm_")]
    return parts._replace(query=urlencode(query)).geturl()


def feed_items(url: str, body: bytes) -> list[dict[str, str]]:
    """(link, published) per entry of any of the fixture's feed formats."""
    if url.endswith(".json"):
        doc = json.loads(body)
        assert doc["version"] == "https://jsonfeed.org/version/1.1"
        return [{"link": i["url"], "date": i["date_published"]} for i in doc["items"]]
    root = etree.fromstring(body)
    if root.tag == f"{ATOM_NS}feed":
        return [
            {
                "link": e.find(f"{ATOM_NS}link[@rel='alternate']").get("href"),
                "date": e.findtext(f"{ATOM_NS}published"),
            }
            for e in root.iter(f"{ATOM_NS}entry")
        ]
    if root.tag == f"{RDF_NS}RDF":
        return [
            {"link": i.get(f"{RDF_NS}about"), "date": i.findtext(f"{DC_NS}date")}
            for i in root.iter(f"{RSS1_NS}item")
        ]
    assert root.tag == "rss"
    return [
        {"link": i.findtext("link"), "date": i.findtext("pubDate") or ""} for i in root.iter("item")
    ]


def jsonld_bodies(tree: lxml_html.HtmlElement) -> list[str]:
    def walk(node: object) -> Iterator[str]:
        if isinstance(node, dict):
            if isinstance(node.get("articleBody"), str):
                yield node["articleBody"]
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, list):
            for value in node:
                yield from walk(value)

    bodies: list[str] = []
    for script in tree.xpath("//script[@type='application/ld+json']"):
        bodies += walk(json.loads(script.text))
    return bodies


def meta_content(tree: lxml_html.HtmlElement, key: str) -> str:
    found = tree.xpath(f"//meta[@property='{key}' or @name='{key}']/@content")
    assert len(found) == 1, key
    return found[0]


# --- catalog -------------------------------------------------------------------------------------


def test_default_room_has_the_five_designed_domains_and_their_feeds(room: Newsroom) -> None:
    assert room.domains == HAND_DOMAINS
    assert set(room.feed_urls) == HAND_FEEDS
    per_domain = Counter(p.domain for p in room.articles())
    assert all(per_domain[d] >= 8 for d in HAND_DOMAINS), per_domain
    kinds = {p.kind for p in room.non_articles()}
    assert kinds == NON_ARTICLE_KINDS
    assert all(p.url.startswith(f"http://{p.domain}/") for p in room.pages.values())
    assert all(url == page.url for url, page in room.pages.items())


def test_pages_have_consistent_ground_truth(room: Newsroom) -> None:
    for page in room.pages.values():
        assert page.published.tzinfo is not None
        assert BASE_DATE - timedelta(days=60) < page.published < BASE_DATE + timedelta(days=1)
        assert page.title and page.summary
        if page.kind == "article":
            paragraphs = [b for b in page.blocks if b.kind == "paragraph"]
            assert 4 <= len(paragraphs) <= 14, page.url  # copies add a dateline and credit
            assert {b.kind for b in page.blocks} <= set(BLOCK_KINDS)
            assert page.text == "\n".join(b.text for b in page.blocks)
            assert page.authors
        else:
            assert page.blocks == [] and page.text == "", page.url
            assert not page.has_schema_org
            if page.notices:  # a notice-only page: the wire style's video pages
                assert page.kind == "video" and room.sites[page.domain].style == WIRE, page.url


def test_article_furniture_occurs(room: Newsroom) -> None:
    kinds = Counter(b.kind for p in room.articles() for b in p.blocks)
    assert all(kinds[k] for k in ("heading", "list_item", "quote", "caption", "table")), kinds


def test_same_seed_renders_identical_bytes() -> None:
    first, second = Newsroom(seed=1), Newsroom(seed=1)
    urls = [*first.pages, *first.feed_urls, *(f"http://{d}/robots.txt" for d in first.domains)]
    urls += [f"http://{d}/" for d in first.domains]
    assert list(first.pages) == list(second.pages)
    for url in urls:
        assert fetch(first, url) == fetch(second, url), url


def test_different_seed_gives_different_text(room: Newsroom) -> None:
    other = Newsroom(seed=2)
    assert other.domains == room.domains
    ours = {p.text for p in room.articles()}
    theirs = {p.text for p in other.articles()}
    assert not ours & theirs
    assert {p.title for p in room.articles()} != {p.title for p in other.articles()}


# --- feeds ---------------------------------------------------------------------------------------


def test_feeds_parse_and_link_only_known_pages(room: Newsroom) -> None:
    linked: set[str] = set()
    tracked = 0
    for url in room.feed_urls:
        status, _, body = fetch(room, url)
        assert status == 200
        items = feed_items(url, body)
        assert items, url
        for item in items:
            tracked += item["link"] != strip_tracking(item["link"])
            link = strip_tracking(item["link"])
            assert link in room.pages, (url, link)
            assert urlsplit(link).netloc == urlsplit(url).netloc
            linked.add(link)
    assert linked == set(room.pages)  # every page is reachable from some feed
    assert tracked > 0  # WireWatch decorates some links with utm_* parameters


def test_feed_content_types_and_dates(room: Newsroom) -> None:
    expected = {
        "rss.xml": "application/rss+xml",
        "feed.rdf": "application/rdf+xml",
        "atom.xml": "application/atom+xml",
        "feed.json": "application/feed+json",
        "rss092.xml": "application/rss+xml",
        "feed/": "application/rss+xml",
    }
    for url in room.feed_urls:
        _, headers, body = fetch(room, url)
        suffix = next(k for k in expected if url.endswith(k))
        assert headers["Content-Type"].startswith(expected[suffix])
        for item in feed_items(url, body):
            if not item["date"]:
                continue  # RSS 0.92 items carry no date
            page = room.pages[strip_tracking(item["link"])]
            when = (
                parsedate_to_datetime(item["date"])
                if "," in item["date"]
                else datetime.fromisoformat(item["date"])
            )
            assert when == page.published, item


def test_legacy_feed_is_a_windows_1252_subset_of_the_json_feed(room: Newsroom) -> None:
    _, headers, legacy = fetch(room, "http://coastalpost.test/rss092.xml")
    assert headers["Content-Type"].endswith("charset=windows-1252")
    assert legacy.startswith(b'<?xml version="1.0" encoding="windows-1252"?>')
    legacy_links = {i["link"] for i in feed_items("rss092.xml", legacy)}
    _, _, full = fetch(room, "http://coastalpost.test/feed.json")
    json_links = {i["link"] for i in feed_items("feed.json", full)}
    assert legacy_links and legacy_links < json_links


def test_feed_limit_keeps_the_newest_entries() -> None:
    limited = Newsroom(seed=1, feed_limit=3)
    for url in limited.feed_urls:
        items = feed_items(url, fetch(limited, url)[2])
        assert 1 <= len(items) <= 3
        domain = urlsplit(url).netloc
        newest = {p.url for p in limited.pages_on(domain)[:3]}
        assert {strip_tracking(i["link"]) for i in items} <= newest


# --- rendered pages ------------------------------------------------------------------------------


def test_true_blocks_appear_in_order_inside_the_article_container(room: Newsroom) -> None:
    for page in room.articles():
        text = visible_text(container(room, page, parse_page(room, page)))
        position = 0
        for block in page.blocks:
            for fragment in fragments(block):
                found = text.find(fragment, position)
                assert found != -1, (page.url, block)  # found, after the previous block
                position = found + len(fragment)


def test_notices_sit_inside_the_container_but_not_in_blocks(room: Newsroom) -> None:
    with_notices = [p for p in room.articles() if p.notices]
    assert {p.domain for p in with_notices} == {
        "metroledger.test",
        "valleytimes.test",
        "coastalpost.test",
        "wirewatch.test",
    }
    for page in with_notices:
        inside = visible_text(container(room, page, parse_page(room, page)))
        for notice in page.notices:
            assert notice in inside, (page.url, notice)
            assert notice not in page.text


def test_notice_only_pages_hold_a_long_notice_and_no_article(room: Newsroom) -> None:
    notice_only = [p for p in room.non_articles() if p.notices]
    assert notice_only and {p.domain for p in notice_only} == {"wirewatch.test"}
    for page in notice_only:
        assert page.kind == "video" and page.blocks == []
        (notice,) = page.notices
        assert len(notice) >= MIN_GARBAGE_NOTICE_CHARS
        main = visible_text(parse_page(room, page).xpath("//main")[0])
        assert notice in main, page.url
        assert len(notice) > len(page.summary)  # the longest text on the page is the notice


def test_each_designed_site_has_its_own_boilerplate(room: Newsroom) -> None:
    for page in room.articles():
        if page.domain == "metroledger.test":
            assert page.notices[-1] == (
                f"\u00a9 {page.published.year} Metro Ledger Media Group. All rights reserved. "
                "This material may not be published, broadcast, rewritten or redistributed "
                "without permission."
            )
            body = visible_text(container(room, page, parse_page(room, page)))
            assert body.endswith(page.notices[-1])  # the notice closes the articleBody
        elif page.domain == "valleytimes.test":
            assert page.notices == [
                "Get the Valley Times morning briefing in your inbox. "
                "Sign up for our free newsletter."
            ]
        elif page.domain == "coastalpost.test":
            assert len(page.notices) == 1 and PRINT_NOTICE.match(page.notices[0])
        elif page.domain == "wirewatch.test":
            assert len(page.notices) == 1 and LEGAL_DISCLAIMER.match(page.notices[0])
        else:
            assert page.notices == []
    herald = next(p for p in room.articles() if p.domain == "dailyherald.test")
    tree = parse_page(room, herald)
    copyright_line = norm(tree.xpath("//footer[@class='site-footer']//p")[0].text_content())
    assert copyright_line.startswith("\u00a9 2026 Daily Herald Publishing Co.")
    assert copyright_line not in visible_text(container(room, herald, tree))


def test_syndicated_copies_point_to_originals_and_share_their_text(room: Newsroom) -> None:
    copies = [p for p in room.articles() if p.duplicate_of]
    assert 3 <= len(copies) <= 4
    assert {p.domain for p in copies} == {"wirewatch.test"}
    sources = set()
    for copy in copies:
        original = room.pages[copy.duplicate_of]
        sources.add(original.domain)
        assert original.kind == "article" and original.duplicate_of is None
        assert original.domain != copy.domain
        assert DATELINE.match(copy.blocks[0].text)
        site = room.sites[original.domain]
        assert copy.blocks[-1].text == f"This story was originally published by {site.text_name}."
        ours, theirs = shingles(copy.text), shingles(original.text)
        containment = len(ours & theirs) / min(len(ours), len(theirs))
        assert containment >= MIN_COPY_CONTAINMENT, (copy.url, containment)
    assert sources == {"dailyherald.test", "valleytimes.test"}


def test_unrelated_stories_share_few_word_4grams(room: Newsroom) -> None:
    originals = [p for p in room.articles() if not p.duplicate_of]
    sets = {p.url: shingles(p.text) for p in originals}
    for a, b in itertools.combinations(originals, 2):
        sa, sb = sets[a.url], sets[b.url]
        jaccard = len(sa & sb) / len(sa | sb)
        assert jaccard < MAX_UNRELATED_JACCARD, (a.url, b.url, jaccard)


def test_schema_org_bodies_match_the_flag_and_the_traps(room: Newsroom) -> None:
    teaser_only = mixed_case = graphs = 0
    for page in room.articles():
        tree = parse_page(room, page)
        json_bodies = jsonld_bodies(tree)
        micro = tree.xpath("//*[@itemprop='articleBody' or @itemprop='ArticleBody']")
        assert page.has_schema_org == bool(json_bodies or micro), page.url
        if page.domain == "dailyherald.test":
            assert [norm(b) for b in json_bodies] == [norm(page.text)]
            graphs += '"@graph"' in lxml_html.tostring(tree, encoding="unicode")
        if page.domain == "metroledger.test":
            mixed_case += micro[0].get("itemprop") == "ArticleBody"
        if page.domain == "wirewatch.test" and json_bodies:
            if json_bodies[0] == page.blocks[0].text:
                teaser_only += 1  # the trap: JSON-LD carries only the first paragraph
            else:
                assert norm(json_bodies[0]) == norm(page.text)
    assert teaser_only and mixed_case and graphs
    for page in room.non_articles():
        assert not jsonld_bodies(parse_page(room, page))


def test_head_metadata_is_consistent_with_the_page(room: Newsroom) -> None:
    for page in room.pages.values():
        tree = parse_page(room, page)
        site = room.sites[page.domain]
        title = norm(tree.findtext(".//title"))
        assert title in (f"{page.title} | {site.name}", f"{page.title} - {site.name}")
        assert meta_content(tree, "og:title") == page.title
        assert meta_content(tree, "og:description") == page.summary
        assert meta_content(tree, "og:image").startswith(f"http://{page.domain}/")
        assert tree.xpath("//link[@rel='canonical']/@href") == [page.url]
        assert tree.get("lang") == site.language
        if page.kind != "index":
            published = meta_content(tree, "article:published_time")
            assert datetime.fromisoformat(published) == page.published
        if page.authors:
            assert meta_content(tree, "author") == ", ".join(page.authors)


def test_pages_carry_realistic_chrome(room: Newsroom) -> None:
    for page in room.pages.values():
        tree = parse_page(room, page)
        text = visible_text(tree)
        assert "cookie" in text.lower(), page.url
        assert "\u00a9" in text and "All rights reserved." in text
        assert "/private/staff/" in tree.xpath("//a/@href")
        assert len(tree.xpath("//a")) >= 30
        if page.kind == "article":
            assert "Related articles" in text
            assert any(len(re.findall(r"[.!?](?:\s|$)", c)) >= 2 for c in comment_texts(page, tree))


def comment_texts(page: Page, tree: lxml_html.HtmlElement) -> list[str]:
    xpaths = {
        "dailyherald.test": "//p[@class='comment-text']",
        "metroledger.test": "//div[@class='comment-content']",
        "valleytimes.test": "//div[@class='cb-body']",
        "coastalpost.test": "//table[@class='comments']//tr[position() mod 2 = 1]/td",
        "wirewatch.test": "//div[@class='Comment_body__m4']",
    }
    return [norm(e.text_content()) for e in tree.xpath(xpaths[page.domain])]


def test_non_article_pages_look_like_their_kind(room: Newsroom) -> None:
    for page in room.non_articles():
        tree = parse_page(room, page)
        text = visible_text(tree)
        if page.kind == "paywall":
            assert "Subscribe to continue reading" in text and page.summary in text
        elif page.kind == "video":
            assert tree.xpath("//div[@class='video-player']") and page.summary in text
        elif page.kind == "gallery":
            assert len(tree.xpath("//img[contains(@src, '/slide-')]")) >= 6
        elif page.kind == "index":
            links = tree.xpath("//ul[contains(@class, '-teasers')]//h3/a/@href")
            assert len(links) >= MIN_INDEX_TEASERS
            assert all(link in room.pages for link in links)


def test_coastal_post_is_windows_1252_with_br_paragraphs(room: Newsroom) -> None:
    pages = [p for p in room.articles() if p.domain == "coastalpost.test"]
    br_pages = [p for p in pages if "br_paragraphs" in p.features]
    assert br_pages and len(br_pages) < len(pages)
    for page in pages:
        _, headers, body = fetch(room, page.url)
        assert headers["Content-Type"] == "text/html; charset=windows-1252"
        assert b'content="text/html; charset=windows-1252"' in body
        assert b"<font" in body
        body.decode("cp1252")  # strictly valid cp1252
        cell = container(room, page, parse_page(room, page))
        if page in br_pages:
            assert b"<br><br>" in body and not cell.xpath(".//p")


def test_robots_txt_disallows_private(room: Newsroom) -> None:
    for domain in room.domains:
        status, headers, body = room.render(domain, "/robots.txt")
        assert status == 200 and headers["Content-Type"].startswith("text/plain")
        assert b"User-agent: *\nDisallow: /private/\n" in body
        assert room.render(domain, "/private/staff/")[0] == 200


def test_render_routing_and_headers(room: Newsroom) -> None:
    page = next(p for p in room.articles() if p.domain == "dailyherald.test")
    host, path = split_url(page.url)
    expected = room.render(host, path)
    assert expected[0] == 200
    assert room.render("DailyHerald.test:80", path) == expected
    assert room.render(host, path + "?utm_source=rss&utm_medium=feed") == expected
    assert room.render(host, path + "#comments") == expected
    assert room.render("unknown.test", path)[0] == 404
    assert room.render(host, "/no/such/page.html")[0] == 404
    coastal = next(p for p in room.articles() if p.domain == "coastalpost.test")
    assert room.render(*split_url(coastal.url))[0] == 200  # ?id= is part of the URL
    assert room.render("coastalpost.test", "/news/story.asp?id=1")[0] == 404
    for url in [page.url, "http://nowhere.test/", *room.feed_urls]:
        _, headers, _ = fetch(room, url)
        assert headers["ETag"].startswith('"') and parsedate_to_datetime(headers["Last-Modified"])


# --- server --------------------------------------------------------------------------------------


def request(
    port: int, target: str, headers: dict[str, str], method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, target, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def test_server_answers_proxy_and_host_header_requests(room: Newsroom) -> None:
    page = next(p for p in room.articles() if p.domain == "wirewatch.test")
    with NewsroomServer(room, port=0) as server:
        assert server.proxy_url == f"http://127.0.0.1:{server.port}"
        status, headers, body = request(server.port, page.url, {"Host": "wirewatch.test"})
        assert status == 200 and body == fetch(room, page.url)[2]
        assert headers["Content-Length"] == str(len(body))
        host, path = split_url(page.url)
        assert request(server.port, path, {"Host": host})[2] == body
        assert request(server.port, "/", {"Host": "unknown.test"})[0] == 404
        assert request(server.port, page.url, {"Host": host}, method="HEAD")[2] == b""
        etag, modified = headers["ETag"], headers["Last-Modified"]
        assert request(server.port, page.url, {"If-None-Match": etag})[0] == 304
        assert request(server.port, page.url, {"If-Modified-Since": modified})[0] == 304
        refused = request(server.port, page.url, {}, method="POST")
        assert refused[0] == 405 and "ETag" in refused[1] and "Last-Modified" in refused[1]
        feed = request(server.port, "http://wirewatch.test/feed/", {})
        assert feed[0] == 200 and feed[1]["Content-Type"].startswith("application/rss+xml")
        port = server.port
    log = server.request_log
    assert log[0].host == "wirewatch.test" and log[0].target == path and log[0].status == 200
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


def test_redesign_switches_a_domain_template_after_n_pages(room: Newsroom) -> None:
    herald = room.pages_on("dailyherald.test")
    other = next(p for p in room.articles() if p.domain == "metroledger.test")
    redesigns = [
        Redesign("dailyherald.test", after_pages=2, kind="client_side"),
        Redesign("valleytimes.test", after_pages=0, kind="server_error"),
    ]
    with NewsroomServer(room, port=0, redesigns=redesigns) as server:
        feed = request(server.port, "http://dailyherald.test/rss.xml", {})
        bodies = [request(server.port, page.url, {})[2] for page in herald[:4]]
        assert request(server.port, other.url, {})[2] == fetch(room, other.url)[2]
        valley = next(p for p in room.pages_on("valleytimes.test"))
        assert request(server.port, valley.url, {})[0] == 503
    assert feed[0] == 200  # feeds never change: the site still "publishes"
    assert bodies[:2] == [fetch(room, page.url)[2] for page in herald[:2]]
    assert all(b"window.__INITIAL_STATE__" in body for body in bodies[2:])
    article = next(page for page in herald[2:4] if page.kind == "article")
    assert extract_verbose(bodies[herald.index(article)], article.url).article is None
    served = [(r.target, r.redesign) for r in server.request_log if r.host == "dailyherald.test"]
    assert [kind for _, kind in served] == ["", "", "", "client_side", "client_side"]
    with pytest.raises(ValueError, match="unknown redesign"):
        Redesign("dailyherald.test", 1, kind="fancy")
    with pytest.raises(ValueError, match="unknown domains"):
        NewsroomServer(room, redesigns=[Redesign("nowhere.test", 1)])


def test_boilerplate_redesign_leaves_a_thin_article_or_null(room: Newsroom) -> None:
    for page in room.articles()[:10]:
        host, path = split_url(page.url)
        body = room.render_redesigned(host, path, "boilerplate")[2]
        result = extract_verbose(body, page.url)
        assert result.article is None or len(result.article.text) < 0.6 * len(page.text)
        assert room.render_redesigned(host, "/robots.txt", "boilerplate") == room.render(
            host, "/robots.txt"
        )


def test_server_handles_concurrent_keep_alive_clients(room: Newsroom) -> None:
    urls = list(room.pages)[: CONCURRENT_REQUESTS // CONCURRENT_CLIENTS]
    statuses: list[int] = []
    lock = threading.Lock()

    def client(port: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        for url in urls:  # one persistent connection per client, as a crawler would
            conn.request("GET", url)
            response = conn.getresponse()
            response.read()
            with lock:
                statuses.append(response.status)
        conn.close()

    with NewsroomServer(room) as server:
        threads = [
            threading.Thread(target=client, args=(server.port,)) for _ in range(CONCURRENT_CLIENTS)
        ]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        elapsed = time.perf_counter() - start
    assert statuses == [200] * (len(urls) * CONCURRENT_CLIENTS)
    assert len(statuses) / elapsed >= MIN_REQUESTS_PER_SECOND


def test_server_refuses_non_loopback_addresses(room: Newsroom) -> None:
    with pytest.raises(ValueError):
        NewsroomServer(room, host="0.0.0.0")


def test_module_entry_point_prints_feeds_and_proxy() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "crawler.newsroom", "--port", "0", "--dry-run"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert re.search(r"Proxy URL: http://127\.0\.0\.1:\d+", result.stdout)
    assert all(url in result.stdout for url in HAND_FEEDS)


# --- scale ---------------------------------------------------------------------------------------


def test_scaled_room_builds_fast_with_thousands_of_articles(
    scaled: tuple[Newsroom, float],
) -> None:
    big, seconds = scaled
    assert seconds < SCALE_BUILD_BUDGET_S
    assert len(big.domains) >= SCALE_DOMAINS
    assert len(big.articles()) >= SCALE_DOMAINS * SCALE_ARTICLES_PER_DOMAIN
    assert big.domains[:5] == HAND_DOMAINS and big.domains[5] == "site-001.test"
    assert {s.style for s in big.sites.values()} == set(STYLES)
    assert len({s.name for s in big.sites.values()}) == len(big.domains)
    for domain in big.domains:
        assert {p.kind for p in big.pages_on(domain)} - {"article"}, domain


def test_scaled_room_renders_feeds_and_copies(scaled: tuple[Newsroom, float]) -> None:
    big, _ = scaled
    for url in big.feed_urls:
        links = [strip_tracking(i["link"]) for i in feed_items(url, fetch(big, url)[2])]
        assert links and all(link in big.pages for link in links)
    copies = [p for p in big.articles() if p.duplicate_of]
    assert len({p.domain for p in copies}) >= 5
    for copy in copies:
        original = big.pages[copy.duplicate_of]
        assert original.domain != copy.domain and original.duplicate_of is None
    generated = [p for p in big.articles() if p.domain.startswith("site-")][::97]
    for page in generated:
        text = visible_text(container(big, page, parse_page(big, page)))
        assert all(notice in text for notice in page.notices)
        assert norm(page.blocks[-1].text) in text


# --- text generator ------------------------------------------------------------------------------


def test_textgen_is_deterministic_and_seed_dependent() -> None:
    a, b, c = (textgen.TextGenerator(s) for s in (7, 7, 8))
    first = [a.story(t, 5) for t in textgen.TOPICS]
    assert first == [b.story(t, 5) for t in textgen.TOPICS]
    assert first != [c.story(t, 5) for t in textgen.TOPICS]


def test_textgen_sentences_are_news_shaped() -> None:
    tg = textgen.TextGenerator(3)
    lengths = []
    for topic in itertools.islice(itertools.cycle(textgen.TOPICS), 500):
        sentence = tg.sentence(topic)
        lengths.append(len(sentence.split()))
        assert sentence[0].isupper() or sentence[0] in '"$0123456789', sentence
        assert sentence.endswith((".", '."')), sentence
    assert min(lengths) >= textgen.MIN_SENTENCE_WORDS
    assert max(lengths) <= textgen.MAX_SENTENCE_WORDS
    assert len(set(lengths)) >= 15  # varied lengths
    prose = " ".join(tg.paragraph("economy", 5) for _ in range(20))
    assert re.search(r"\d+(\.\d)? percent", prose) and re.search(r'," (said|added|noted) ', prose)


def test_textgen_topics_use_different_vocabulary() -> None:
    tg = textgen.TextGenerator(5)
    words = {
        topic: set(re.findall(r"[a-z]+", " ".join(tg.story(topic, 12)).lower()))
        for topic in textgen.TOPICS
    }
    for topic, lex in textgen.LEXICONS.items():
        own = words[topic] & set(lex.nouns)
        others = set().union(*(words[t] for t in textgen.TOPICS if t != topic))
        assert len(own - others) >= 5, topic
    assert len(textgen.vocabulary()) >= MIN_VOCABULARY


def test_textgen_is_fast() -> None:
    tg = textgen.TextGenerator(1)
    count = 2_000
    start = time.perf_counter()
    for i in range(count):
        tg.paragraph(textgen.TOPICS[i % len(textgen.TOPICS)])
    assert count / (time.perf_counter() - start) >= MIN_PARAGRAPHS_PER_SECOND


# --- Time, live publishing, revisions, conditional GET ---------------------------------------


def test_live_publishing_follows_the_clock_and_a_changeable_rate() -> None:
    from crawler.feedparse import parse_feed

    room = Newsroom(seed=1)
    start = room.clock.now()
    before = len(room.pages)
    room.publish_every("dailyherald.test", timedelta(minutes=20))
    feed_url = "http://dailyherald.test/rss.xml"
    listed = len(parse_feed(fetch(room, feed_url)[2], feed_url).entries)
    assert listed == len(room.pages_on("dailyherald.test"))
    room.clock.advance(timedelta(minutes=59))
    entries = parse_feed(fetch(room, feed_url)[2], feed_url).entries
    assert len(entries) == listed + 2 and len(room.pages) == before + 2
    newest = room.pages[entries[0].link]
    assert newest.kind == "article" and newest.blocks and newest.published > start
    assert fetch(room, newest.url)[0] == 200
    room.publish_every("dailyherald.test", timedelta(hours=2))  # the rate drops
    room.clock.advance(timedelta(hours=3))
    assert len(room.pages_on("dailyherald.test")) == listed + 2 + 1
    # Deterministic: another room with the same history has the same new pages.
    twin = Newsroom(seed=1)
    twin.publish_every("dailyherald.test", timedelta(minutes=20))
    twin.clock.advance(timedelta(minutes=59))
    twin_page = twin.pages_on("dailyherald.test")[0]
    assert twin_page.url == newest.url
    assert twin_page.title == newest.title and twin_page.blocks == newest.blocks


def test_a_page_published_in_the_future_is_unlisted_and_unservable_until_then() -> None:
    room = Newsroom(seed=1)
    page = room.publish("wirewatch.test", room.clock.now() + timedelta(hours=1))
    assert fetch(room, page.url)[0] == 404
    assert page not in room.feed_entries("wirewatch.test")
    room.clock.advance(3600)
    assert fetch(room, page.url)[0] == 200 and room.feed_entries("wirewatch.test")[0] is page
    with pytest.raises(ValueError):
        room.clock.advance(-1)


def test_a_revision_changes_the_page_and_the_feed_entry_dates() -> None:
    from crawler.feedparse import parse_feed

    room = Newsroom(seed=1)
    for feed_url in (
        "http://valleytimes.test/atom.xml",
        "http://metroledger.test/feed.rdf",
        "http://dailyherald.test/rss.xml",
        "http://coastalpost.test/feed.json",
    ):
        domain = urlsplit(feed_url).netloc
        page = room.pages_on(domain)[2]
        old_etag = fetch(room, feed_url)[1]["ETag"]
        room.clock.advance(600)
        room.revise(page.url)
        _, headers, body = fetch(room, feed_url)
        entry = next(e for e in parse_feed(body, feed_url).entries if e.link == page.url)
        assert entry.updated == room.clock.now() and headers["ETag"] != old_etag
        assert page.blocks[-1].text.startswith("Update:")
        assert "Update:" in fetch(room, page.url)[2].decode(charset_of(fetch(room, page.url)[1]))


def test_the_server_honours_or_ignores_conditional_requests_and_records_them() -> None:
    room = Newsroom(seed=1)
    room.ignore_conditional_requests("valleytimes.test")
    with NewsroomServer(room, port=0, delay=0.05) as server:
        connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
        results = {}
        for url in ("http://dailyherald.test/rss.xml", "http://valleytimes.test/atom.xml"):
            connection.request("GET", url)
            first = connection.getresponse()
            first.read()
            started = time.monotonic()
            connection.request("GET", url, headers={"If-None-Match": first.getheader("ETag")})
            second = connection.getresponse()
            body = second.read()
            results[url] = (second.status, len(body) > 0, time.monotonic() - started)
        connection.close()
        log = server.request_log
    assert results["http://dailyherald.test/rss.xml"][:2] == (304, False)
    assert results["http://valleytimes.test/atom.xml"][:2] == (200, True)
    assert all(elapsed >= 0.05 for _, _, elapsed in results.values())  # the slow publisher
    assert [r.conditional for r in log] == [False, True, False, True]
    assert all(r.at == room.clock.now() for r in log)


def test_near_duplicate_corpus_is_deterministic_and_ordered() -> None:
    from newsharvest_bench.neardup import (
        COPY_KINDS,
        EDIT_RATE,
        ORIGINAL,
        SAME_TOPIC,
        near_duplicate_corpus,
    )

    docs = near_duplicate_corpus(80, seed=3)
    assert docs == near_duplicate_corpus(80, seed=3)
    assert docs != near_duplicate_corpus(80, seed=4)
    assert len({doc.doc_id for doc in docs}) == len(docs)
    seen: set[str] = set()
    for doc in docs:
        if doc.original_id:
            assert doc.original_id in seen and doc.variant in COPY_KINDS
        seen.add(doc.doc_id)
    variants = {doc.variant for doc in docs}
    assert variants == {ORIGINAL, SAME_TOPIC, *COPY_KINDS}
    edited = [doc.edit_rate for doc in docs if doc.variant == "edited"]
    assert edited and all(EDIT_RATE[0] <= rate <= EDIT_RATE[1] for rate in edited)
    families = {doc.family for doc in docs if doc.variant in (ORIGINAL, SAME_TOPIC)}
    assert len(families) == sum(doc.variant in (ORIGINAL, SAME_TOPIC) for doc in docs)
