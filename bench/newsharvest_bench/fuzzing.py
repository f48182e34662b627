"""Fuzz targets: the parsers of untrusted input, their invariants, and input generators.

Each `Target` pairs a Hypothesis strategy (structure-aware: generated HTML/feeds/URLs, mutated
real documents, raw bytes) with a `check` that runs the code under test and raises when an
invariant breaks. The property tests (tests/test_fuzz_properties.py) run them briefly in every
test run; `newsharvest fuzz` runs them for minutes, driven by atheris (coverage-guided, through
Hypothesis' `fuzz_one_input`) when it is installed, else by Hypothesis' own random generation.
To fuzz another entry point (e.g. an isolated extraction worker), add a Target to TARGETS.

Hypothesis is in the `fuzz` extra (pip install '.[fuzz]' in the checkout): only the fuzz command
and the property tests import this module. Seeds come from the checkout's test fixtures when they
are there, else from the news-site simulator's pages and feeds (an installed copy has no tests/).
"""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import re
import socket
import string
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]  # the checkout, when run from one
SEED_DIRS = (ROOT / "tests" / "fixtures" / "pages", ROOT / "tests" / "fixtures" / "feeds")
SIMULATOR_SEED_PAGES = 12  # simulator documents used as seeds when the fixtures are not there
MAX_SEED_BYTES = 256 * 1024  # longer seed documents are cut (mutations stay cheap)
MAX_MUTATIONS = 8
FEED_MAX_ENTRIES = 5  # small, so that truncation is exercised
WARC_MAX_BYTES = 64 * 1024  # the record and body limit of the warc target (DOWNLOAD_MAXSIZE)
WARC_SEED_PAGES = 3
WARC_RECORD_TYPES = ("response", "response", "response", "resource", "revisit", "metadata",
                     "metadata", "request", "warcinfo")  # fmt: skip
HOSTILE_JSON = (b"[" * 100_000, b'{"a":' * 50_000, b"1e999999", b'"\\ud800"')
WARC_CONTENT_TYPES = (b"text/html", b"text/html; charset=windows-1252", b"application/pdf", b"")
CONTENT_CODINGS = ("", "gzip", "deflate", "br", "gzip, gzip", "identity", "x-unknown")
CHUNK_SIZE_LINES = ("-6", "+5", "0x10", "ffffffffffffffffff", "1;ext=1", "")
WARC_DATE = datetime(2026, 11, 1, tzinfo=UTC)
GOOD_URLS = ("https://news.example.com/2026/story.html", "http://www.example.org/a?id=1")
GOOD_METADATA = {"entry_url": "https://news.example.com/2026/story.html", "version": 1,
                 "feed_url": "https://news.example.com/rss", "updated": 1.7e9,
                 "entry": {"title": "T", "authors": ["A"]}}  # fmt: skip
DEFAULT_FEED_URL = "http://feeds.example.com/rss"
SEED_URLS = (
    b"https://www.example.com/news/2026/11/01/story.html?utm_source=rss&id=7#comments",
    b"http://user:pw@EXAMPLE.com:80/a/../b/%7Euser?b=2&a=1&fbclid=x",
    b"http://[::ffff:127.0.0.1]:8080/x", b"http://0x7f.1/", b"http://2130706433/",
    b"http://xn--nxasmq6b.example/\xce\xb1?q=%zz", b"ftp://example.com/file",
)  # fmt: skip


class InvariantError(AssertionError):
    """The code under test returned something its contract forbids."""


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise InvariantError(message)


# --- inputs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PageInput:
    html: bytes
    url: str | None
    encoding: str | None  # the HTTP charset


@dataclass(frozen=True)
class FeedInput:
    body: bytes
    url: str
    max_entries: int = FEED_MAX_ENTRIES


@dataclass(frozen=True)
class WarcInput:
    data: bytes  # a WARC file, gzip per record or not, whole, cut or damaged
    reader: str = "fastwarc"


# --- invariants ----------------------------------------------------------------------------------


def check_extract(page: PageInput) -> None:
    """extract_verbose never raises, says why when it returns NULL, never falls back on its
    internal-error net, and returns an article whose text is its blocks' running text (captions
    left out) and whose output item exports."""
    from crawler.core.items import ArticleItem
    from extractors import BLOCK_KINDS, extract_verbose
    from extractors.article import PREFORMATTED, running_text
    from extractors.chain import NULL_EXTRACTOR_ERROR
    from pipelines.extraction.pipeline import fill_item

    with _caught_by_the_safety_net() as caught:
        result = extract_verbose(page.html, page.url, encoding=page.encoding)
    article = result.article
    if article is None:
        _require(isinstance(result.reason, str) and bool(result.reason), "NULL without a reason")
        if result.reason == NULL_EXTRACTOR_ERROR and caught:
            raise caught[0]  # the bug itself, with its traceback, not just its NULL
        _require(result.reason != NULL_EXTRACTOR_ERROR, "an extractor raised (extractor_error)")
        return
    _require(result.reason is None, "an article with a NULL reason")
    _require(bool(article.blocks), "an article without blocks")
    for kind, text in article.blocks:
        _require(kind in BLOCK_KINDS, f"unknown block kind {kind!r}")
        _require(isinstance(text, str) and bool(text.strip()), "bad block text")
        # A preformatted block keeps its lines' indentation (its first line's too, when later
        # lines are indented less: code quoted from inside a function), no blank line at either
        # end and no trailing space; every other block is one stripped line.
        kept = text.lstrip(" \t") if kind == PREFORMATTED else text
        _require(kept == kept.strip(), "bad block text")
        _require("\x00" not in text, "NUL in block text")
    _require(len(article.text) <= len(page.html), "more text than input")
    for value in (
        article.title,
        article.description,
        article.language,
        article.image,
        article.canonical_url,
        article.section,
        *article.authors,
        *article.keywords,
        *(image.url for image in article.images),
    ):
        _require(value is None or isinstance(value, str), f"non-string metadata {value!r}")
    for moment in (article.published, article.modified):
        _require(moment is None or moment.utcoffset() is not None, "naive date")
    _require(article.paywalled in (None, True, False), "paywalled is not a flag")
    for value in (article.title, article.description, article.section, *article.authors,
                  *article.keywords):  # fmt: skip
        _require_one_line(value)
    item = ArticleItem(url=page.url or "http://fuzz.example/", domain="fuzz.example")
    fill_item(item, article, {})
    blocks = [(block["kind"], block["text"]) for block in item["blocks"]]
    _require(item["text"] == running_text(blocks), "the text is not the blocks' running text")
    _json_line(dict(item))


@contextmanager
def _caught_by_the_safety_net() -> Iterator[list[BaseException]]:
    """The exceptions extract_verbose caught and logged (it turns them into extractor_error)."""
    caught: list[BaseException] = []

    class Catcher(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.exc_info and record.exc_info[1] is not None:
                caught.append(record.exc_info[1])

    logger = logging.getLogger("extractors.chain")
    handler, propagate = Catcher(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False  # expected failures stay out of the fuzzer's output
    try:
        yield caught
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _json_line(data: Any) -> None:
    """What the JSON Lines exporter does: it must not fail (lone surrogates would)."""
    line = json.dumps(data, ensure_ascii=False, default=str)
    _require(_LONE_SURROGATE.search(line) is None, "a lone surrogate in the output")
    line.encode("utf-8")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def _require_one_line(value: str | None) -> None:
    """Single-line metadata (titles, authors, descriptions): no line break, no bidirectional
    control that would make it display as another text."""
    if value is not None:
        _require(not _BIDI_CONTROLS.search(value), f"bidirectional control in {value!r}")
        _require("\n" not in value and "\r" not in value, f"line break in {value!r}")


def check_feed(feed: FeedInput) -> None:
    """parse_feed raises nothing but FeedError, reads at most max_entries entries, and every
    entry is a fetchable http(s) link with bounded, exportable metadata."""
    from crawler.core.urls import canonical_article_url
    from crawler.feedparse import (
        MAX_AUTHORS_PER_ENTRY,
        MAX_FIELD_CHARS,
        FeedError,
        parse_feed,
    )

    try:
        parsed = parse_feed(feed.body, feed.url, max_entries=feed.max_entries)
    except FeedError as error:
        _require(isinstance(error.reason, str) and bool(error.reason), "FeedError without reason")
        for link in error.alternates:
            _require(_is_http_url(link), f"alternate feed {link!r} is not http(s)")
        return
    _require(len(parsed.entries) <= feed.max_entries, "more entries than max_entries")
    _require(parsed.truncated == (parsed.total_entries > feed.max_entries), "truncated flag")
    for entry in parsed.entries:
        _require(_is_http_url(entry.link), f"entry link {entry.link!r} is not http(s)")
        canonical_article_url(entry.link)  # the spider requests this: it must not raise
        for text in (entry.title, entry.summary, entry.guid):
            _require(text is None or len(text) <= max(MAX_FIELD_CHARS, len(entry.link)), "long")
        for text in (entry.title, entry.summary, *entry.authors):
            _require_one_line(text)
        _require(len(entry.authors) <= MAX_AUTHORS_PER_ENTRY, "too many authors")
        for when in (entry.published, entry.updated):
            _require(when is None or when.utcoffset() is not None, "naive date")
        _json_line(entry.to_meta())
    for link in parsed.subfeeds:
        _require(_is_http_url(link), f"subfeed {link!r} is not http(s)")


def check_warc(warc: WarcInput) -> None:
    """Reading any bytes as a WARC file (damaged stretches searched past, as a replay does)
    gives pages and skips, and may end in one of the errors that mark a file broken from there
    on (READ_ERRORS); nothing else escapes. They come in the order of the file, none twice
    (the feeder takes an item that does not come after the last one for one read again, and
    drops it). Every page has a fetchable address, a body within the limit, and metadata of
    the shape capture writes."""
    from crawler.warc.replay import (
        READ_ERRORS,
        SKIP_REASONS,
        STATUS,
        Page,
        Skip,
        place_in_source,
        source_pages,
    )

    found: list[Any] = []
    with suppress(READ_ERRORS):
        found.extend(source_pages(io.BytesIO(warc.data), "fuzz", warc.reader, WARC_MAX_BYTES))
    places = [place_in_source(item) for item in found]
    _require(places == sorted(set(places)), f"items out of order or repeated: {places}")
    for item in found:
        if isinstance(item, Skip):
            reason = item.reason
            _require(reason in SKIP_REASONS or reason.startswith(f"{STATUS}_"), reason)
            continue
        _require(isinstance(item, Page), f"neither page nor skip: {item!r}")
        _require(_is_http_url(item.canonical_url), f"page address {item.canonical_url!r}")
        _require(len(item.body) <= WARC_MAX_BYTES, f"body of {len(item.body)} bytes")
        meta = item.metadata
        _require(not meta or isinstance(meta.get("version"), int), f"metadata {meta!r}")
        _json_line(meta)


def _is_http_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def check_url(url: str) -> None:
    """canonical_article_url raises nothing but ValueError and is idempotent; the network
    policy never raises and never allows a URL whose host the C library reads as a non-public
    address (the address a connection would really go to)."""
    from scrapy import Request

    from crawler.core.urls import canonical_article_url, is_tracking_parameter, publisher_domain
    from crawler.safety import NetworkPolicy, RequestRefused

    policy = NetworkPolicy()
    _require(policy.refusal(url) is None or isinstance(policy.refusal(url), RequestRefused), "?")
    try:
        canonical = canonical_article_url(url)
    except ValueError:
        return
    _require(canonical_article_url(canonical) == canonical, f"not idempotent: {canonical!r}")
    parts = urlsplit(canonical)
    _require(not parts.fragment, "fragment kept")
    keys = [pair.split("=", 1)[0] for pair in parts.query.split("&") if pair]
    _require(not any(is_tracking_parameter(key) for key in keys), "tracking parameter kept")
    publisher_domain(canonical)
    try:
        request_url = Request(canonical).url  # what the downloader sees
    except (ValueError, TypeError):
        return
    if policy.refusal(request_url) is None:
        host = urlsplit(request_url).hostname or ""
        address = _libc_address(host)
        from crawler.safety import non_public_why

        _require(
            address is None or non_public_why(address) is None,
            f"policy allows {request_url!r}, whose host is {address}",
        )


def _libc_address(host: str) -> Any:
    """The address the C resolver reads a numeric host as (None for a name)."""
    import ipaddress

    for family in (socket.AF_INET6, socket.AF_INET):
        try:
            info = socket.getaddrinfo(host, None, family, 0, 0, socket.AI_NUMERICHOST)
        except (OSError, UnicodeError, ValueError):
            continue
        return ipaddress.ip_address(info[0][4][0].split("%", 1)[0])
    return None


# --- strategies ----------------------------------------------------------------------------------

PROSE = (
    "the council said on monday that the new harbor plan would cost more than expected and "
    "residents who live near the water front were worried about traffic noise and rising rents "
    "officials promised a public hearing before any vote while critics called the proposal rushed"
)
WORDS = tuple(PROSE.split())
TAGS = (
    "div", "p", "article", "section", "main", "span", "a", "h1", "h2", "h3", "ul", "ol", "li",
    "table", "tr", "td", "th", "blockquote", "figure", "figcaption", "br", "img", "script",
    "style", "nav", "footer", "header", "aside", "font", "b", "i", "pre", "noscript", "form",
    "time", "meta", "link", "iframe", "svg", "template", "textarea", "title",
)  # fmt: skip
CLASS_WORDS = (
    "content", "article", "article-body", "story", "post", "entry", "text", "comment", "nav",
    "menu", "footer", "sidebar", "related", "ad", "share", "newsletter", "caption", "byline",
    "headline", "main", "paywall", "cookie", "promo", "teaser",
)  # fmt: skip
ENCODINGS = ("utf-8", "cp1252", "iso-8859-1", "utf-16", "utf-16-le", "shift_jis", "koi8-r")
ENCODING_LABELS = (*ENCODINGS, "UTF8", "latin1", "x-unknown", "", "utf-7", "bogus\x00")
MARKUP_SNIPPETS = (
    b"<", b">", b"</div>", b"<div>" * 40, b"<p>", b"</p>", b"&", b"&#x", b"&#99999999;", b"&nbsp;",
    b"&bogus;", b"<![CDATA[", b"]]>", b"<!--", b"-->", b"\x00", b"\xff\xfe", b"\xef\xbb\xbf",
    b"\xc3", b"\xe2\x80", b"<script>", b"</script>", b'"', b"'", b'itemprop="articleBody"',
    b'<script type="application/ld+json">{"@graph":[{"articleBody":',
    b"<!DOCTYPE x [<!ENTITY a 'aaaa'><!ENTITY b '&a;&a;&a;'>]>", b"<?xml version='1.0'?>",
    b'<meta charset="utf-16">', b"<item><link>http://x.example/a</link></item>",
    b"<entry><link href='//x.example/b'/></entry>", b'{"items":[{"url":"http://x.example/"}]}',
    # Half an emoji (a lone surrogate) as HTML/XML references and in JSON; bidi controls.
    b"&#xD83D;", b"&#56320;", b'"\\ud83d"', b'"headline":"x\\udc00"', b"\xed\xa0\xbd",
    "\u202e".encode(), "\u2067".encode(), b"&#x202E;",
)  # fmt: skip
# Text a CMS publishes by mistake: half an emoji (a lone surrogate, which each generator spells
# as its format does: JSON escapes it, HTML and XML as a character reference), bidirectional
# controls (a title displayed reversed), the replacement character itself.
HOSTILE_TEXT = (
    "\ud83d", "\udc00", "cut \ud83d", "\ud83d\ud83d", "\u202eevil\u202c", "\u2067rtl\u2069",
    "\u202a\u202b\u202d", "\u2066x\u2068", "\ufffd",
)  # fmt: skip
FEED_DTDS = (
    "",
    "<!DOCTYPE rss [<!ENTITY a 'aaaaaaaaaa'><!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>]>",
    "<!DOCTYPE rss [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>",
    "<!DOCTYPE rss SYSTEM 'http://127.0.0.1:9/dtd' [<!ENTITY % p SYSTEM 'http://127.0.0.1:9/'>%p;]>",
    "<!DOCTYPE rss PUBLIC '-//x//' 'x.dtd'>",
)
JSONLD_KEYS = (
    "@type", "@graph", "articleBody", "headline", "datePublished", "author", "name", "text", "url",
    "image", "inLanguage",
)  # fmt: skip
TRACKING_KEYS = ("utm_source", "UTM_Medium", "fbclid", "gclid", "ref", "id", "page", "a", "")


@cache
def _prose() -> st.SearchStrategy[str]:
    words = st.lists(st.sampled_from(WORDS), min_size=4, max_size=60).map(" ".join)
    return words.map(lambda text: text.capitalize() + ".")


@cache
def _text() -> st.SearchStrategy[str]:
    hostile = st.tuples(_prose(), st.sampled_from(HOSTILE_TEXT)).map(" ".join)
    return st.one_of(
        _prose(),
        st.text(max_size=40),
        st.sampled_from(["&amp;", "&lt;b&gt;", "\u00a0"]),
        hostile,
    )


@cache
@st.composite
def _attributes(draw: st.DrawFn) -> str:
    parts = []
    if draw(st.booleans()):
        parts.append(
            f'class="{" ".join(draw(st.lists(st.sampled_from(CLASS_WORDS), max_size=3)))}"'
        )
    if draw(st.booleans()):
        parts.append(f'id="{draw(st.sampled_from(CLASS_WORDS))}"')
    if draw(st.integers(0, 9)) == 0:
        prop = draw(st.sampled_from(["articleBody", "ArticleBody", "articlebody", "text"]))
        parts.append(f'itemprop="{prop}"')
    if draw(st.integers(0, 9)) == 0:
        parts.append(draw(st.text(max_size=20)).replace(">", ""))
    return (" " + " ".join(parts)) if parts else ""


def _element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    @st.composite
    def build(draw: st.DrawFn) -> str:
        tag = draw(st.sampled_from(TAGS))
        inner = "".join(draw(st.lists(children, max_size=6)))
        closing = "" if draw(st.integers(0, 7)) == 0 else f"</{tag}>"  # unclosed tags happen
        return f"<{tag}{draw(_attributes())}>{inner}{closing}"

    return build()


@cache
def _json_value() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _text(), _prose()
    )
    return st.recursive(scalars, _json_containers, max_leaves=12)


def _json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(JSONLD_KEYS), inner, max_size=5),
    )


@cache
@st.composite
def _jsonld(draw: st.DrawFn) -> str:
    data = draw(
        st.dictionaries(
            st.sampled_from(
                [
                    "@context",
                    "@type",
                    "@graph",
                    "articleBody",
                    "headline",
                    "datePublished",
                    "author",
                ]
            ),
            _json_value(),
            max_size=6,
        )
    )
    if draw(st.booleans()):
        data["@type"] = draw(st.sampled_from(["NewsArticle", "Article", "WebPage", "Person"]))
        data["articleBody"] = "\n".join(draw(st.lists(_prose(), max_size=8)))
    text = json.dumps(data)
    if draw(st.integers(0, 4)) == 0:
        text = text[: draw(st.integers(0, len(text)))]  # broken JSON
    return f'<script type="application/ld+json">{text}</script>'


@cache
def _html_body() -> st.SearchStrategy[str]:
    return st.recursive(_text(), _element, max_leaves=30)


@cache
@st.composite
def _html_document(draw: st.DrawFn) -> bytes:
    body = draw(_html_body())
    head = ""
    if draw(st.booleans()):
        head += f'<meta charset="{draw(st.sampled_from(ENCODING_LABELS))}">'
    head += f"<title>{draw(_text())}</title>"
    if draw(st.booleans()):
        head += draw(_jsonld())
    for name in draw(
        st.lists(
            st.sampled_from(
                [
                    "og:title",
                    "description",
                    "author",
                    "og:image",
                    "article:published_time",
                    "og:locale",
                ]
            ),
            max_size=3,
        )
    ):
        head += f'<meta property="{name}" name="{name}" content="{draw(_text())}">'
    lang = draw(st.sampled_from(["en", "de-AT", "", "xx-invalid-language-tag", "\u00e9"]))
    document = f'<!DOCTYPE html><html lang="{lang}"><head>{head}</head><body>{body}</body></html>'
    encoding = draw(st.sampled_from(ENCODINGS))
    data = document.encode(encoding, errors="xmlcharrefreplace")
    if draw(st.integers(0, 5)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return data


@cache
@st.composite
def mutated(draw: st.DrawFn, seeds: Sequence[bytes]) -> bytes:
    """A real document with a few random edits: insertions of markup or bytes, deletions,
    duplications, truncation."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, MAX_MUTATIONS))):
        at = draw(st.integers(0, len(data)))
        operation = draw(st.sampled_from(["insert", "delete", "duplicate", "truncate", "bytes"]))
        if operation == "insert":
            data[at:at] = draw(st.sampled_from(MARKUP_SNIPPETS))
        elif operation == "bytes":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif operation == "delete":
            del data[at : at + draw(st.integers(1, 256))]
        elif operation == "duplicate":
            data[at:at] = data[at : at + draw(st.integers(1, 512))] * draw(st.integers(2, 20))
        else:
            del data[at:]
    return bytes(data)


def _documents(
    seeds: Sequence[bytes], *generated: st.SearchStrategy[bytes]
) -> st.SearchStrategy[bytes]:
    """Generated documents, raw bytes, and mutated seed documents."""
    choices = [*generated, st.binary(max_size=2048)]
    if seeds:
        choices.append(mutated(seeds))
    return st.one_of(choices)


@cache
def html_documents(seeds: Sequence[bytes] = ()) -> st.SearchStrategy[bytes]:
    return _documents(seeds, _html_document())


@cache
def page_inputs(seeds: Sequence[bytes] = ()) -> st.SearchStrategy[PageInput]:
    return st.builds(
        PageInput,
        html=html_documents(seeds),
        url=st.one_of(st.none(), st.just("https://news.example.com/2026/story.html"), urls()),
        encoding=st.one_of(st.none(), st.sampled_from(ENCODING_LABELS)),
    )


def _xml_escape_maybe(draw: st.DrawFn, text: str) -> str:
    from xml.sax.saxutils import escape

    return text if draw(st.integers(0, 3)) == 0 else escape(text)  # unescaped text happens


@cache
@st.composite
def _xml_feed(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["rss2", "rss091", "rdf", "atom", "urlset", "sitemapindex"]))
    entries = []
    for _ in range(draw(st.integers(0, 8))):
        link = _xml_escape_maybe(draw, draw(st.one_of(urls(), st.sampled_from(["/a", "b.html"]))))
        title = _xml_escape_maybe(draw, draw(_text()))
        date = draw(st.one_of(st.text(max_size=30), st.datetimes().map(datetime.isoformat)))
        author = _xml_escape_maybe(draw, draw(_text()))
        entries.append(_feed_entry(kind, link, title, date, author))
    inner = "".join(entries)
    root = {
        "rss2": f'<rss version="2.0"><channel><title>T</title>{inner}</channel></rss>',
        "rss091": f'<rss version="0.91"><channel><title>T</title>{inner}</channel></rss>',
        "rdf": '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        f'xmlns="http://purl.org/rss/1.0/"><channel><title>T</title></channel>{inner}'
        "</rdf:RDF>",
        "atom": f'<feed xmlns="http://www.w3.org/2005/Atom" xml:base="{draw(urls())}">'
        f"<title>T</title>{inner}</feed>",
        "urlset": f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{inner}</urlset>',
        "sitemapindex": f"<sitemapindex>{inner}</sitemapindex>",
    }[kind]
    label = draw(st.sampled_from(ENCODING_LABELS))
    document = f'<?xml version="1.0" encoding="{label}"?>{draw(st.sampled_from(FEED_DTDS))}{root}'
    return document.encode(draw(st.sampled_from(ENCODINGS)), errors="xmlcharrefreplace")


def _feed_entry(kind: str, link: str, title: str, date: str, author: str) -> str:
    if kind == "atom":
        return (
            f'<entry><title>{title}</title><link rel="alternate" href="{link}"/>'
            f"<id>{link}</id><updated>{date}</updated><author><name>{author}</name>"
            "</author></entry>"
        )
    if kind in ("urlset", "sitemapindex"):
        tag = "url" if kind == "urlset" else "sitemap"
        return f"<{tag}><loc>{link}</loc><lastmod>{date}</lastmod></{tag}>"
    return (
        f"<item><title>{title}</title><link>{link}</link><pubDate>{date}</pubDate>"
        f"<author>{author}</author><guid>{link}</guid></item>"
    )


@cache
@st.composite
def _json_feed(draw: st.DrawFn) -> bytes:
    items = draw(
        st.lists(
            st.one_of(
                st.dictionaries(
                    st.sampled_from(
                        [
                            "url",
                            "external_url",
                            "id",
                            "title",
                            "summary",
                            "content_text",
                            "date_published",
                            "date_modified",
                            "author",
                            "authors",
                        ]
                    ),
                    st.one_of(urls(), _json_value()),
                    max_size=6,
                ),
                _json_value(),
            ),
            max_size=8,
        )
    )
    data: Any = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": draw(_text()),
        "items": items,
    }
    if draw(st.integers(0, 5)) == 0:
        data = draw(_json_value())
    return json.dumps(data, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")


@cache
def feed_documents(seeds: Sequence[bytes] = ()) -> st.SearchStrategy[bytes]:
    return _documents(seeds, _xml_feed(), _json_feed())


@cache
def feed_inputs(seeds: Sequence[bytes] = ()) -> st.SearchStrategy[FeedInput]:
    return st.builds(
        FeedInput,
        body=feed_documents(seeds),
        url=st.sampled_from([DEFAULT_FEED_URL, "https://x.example/a/b/atom.xml"]),
        max_entries=st.integers(1, FEED_MAX_ENTRIES),
    )


_HOST_CHARS = string.ascii_lowercase + string.digits + "-"


@cache
@st.composite
def _host(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.ip_addresses(v=4)).exploded
    if kind == 1:
        return f"[{draw(st.ip_addresses(v=6)).compressed}]"
    if kind == 2:  # numeric spellings: decimal, hex, octal, short forms
        parts = draw(st.lists(st.integers(0, 2**32), min_size=1, max_size=4))
        style = draw(st.sampled_from(["{}", "0x{:x}", "0{:o}", "0X{:X}"]))
        return ".".join(style.format(part) for part in parts)
    if kind == 3:
        return draw(
            st.sampled_from(
                [
                    "localhost",
                    "LOCALHOST.",
                    "a.localhost",
                    "x.internal",
                    "[::ffff:127.0.0.1]",
                    "[fe80::1%25eth0]",
                    "0",
                    "127.1",
                    "metadata",
                    "xn--nxasmq6b.example",
                ]
            )
        )
    if kind == 4:
        return draw(st.text(max_size=20))
    labels = draw(st.lists(st.text(_HOST_CHARS, min_size=1, max_size=12), min_size=1, max_size=4))
    return ".".join(labels) + draw(st.sampled_from(["", ".com", ".example", ".", ".test"]))


@cache
@st.composite
def _url(draw: st.DrawFn) -> str:
    scheme = draw(
        st.sampled_from(
            ["http", "https", "HTTP", "hTTps", "ftp", "file", "javascript", "data", "gopher", ""]
        )
    )
    userinfo = draw(st.sampled_from(["", "user@", "u:p@", "@", "a@b@"]))
    port = draw(
        st.one_of(
            st.just(""),
            st.integers(0, 70_000).map(lambda p: f":{p}"),
            st.sampled_from([":", ":x", ":80", ":443"]),
        )
    )
    odd_paths = st.sampled_from(["/a/../b/./c", "/%7Euser/%zz", "//double"])
    path = draw(st.one_of(st.just("/"), st.text(max_size=30).map(lambda p: "/" + p), odd_paths))
    query = "&".join(
        f"{key}={value}"
        for key, value in draw(
            st.lists(st.tuples(st.sampled_from(TRACKING_KEYS), st.text(max_size=8)), max_size=4)
        )
    )
    fragment = draw(st.sampled_from(["", "#top", "#"]))
    separator = "?" if query or draw(st.booleans()) else ""
    return f"{scheme}://{userinfo}{draw(_host())}{port}{path}{separator}{query}{fragment}"


@cache
def urls() -> st.SearchStrategy[str]:
    return st.one_of(_url(), st.text(max_size=60))


@st.composite
def _http_block(draw: st.DrawFn) -> bytes:
    """An HTTP response as an archive holds it: head, then the body as sent (coded, chunked,
    cut short, or not)."""
    import brotli

    sent = draw(st.one_of(_html_document(), st.binary(max_size=512)))
    coding = draw(st.sampled_from(("", "", *CONTENT_CODINGS)))
    for name in reversed([c.strip() for c in coding.split(",") if c.strip()]):
        if name in ("gzip", "deflate"):
            sent = zlib.compress(sent, wbits=31 if name == "gzip" else 15)
        elif name == "br":
            sent = brotli.compress(sent)
    if draw(st.integers(0, 4)) == 0:
        sent = sent[: draw(st.integers(0, len(sent)))]  # cut short
    headers = [b"Content-Type: " + draw(st.sampled_from(WARC_CONTENT_TYPES))]
    if coding:
        headers.append(b"Content-Encoding: " + coding.encode())
    if draw(st.booleans()):  # chunked, as some archivers leave it; sizes right or not
        size = draw(st.one_of(st.just(f"{len(sent):x}"), st.sampled_from(CHUNK_SIZE_LINES)))
        sent = size.encode() + b"\r\n" + sent + b"\r\n0\r\n\r\n"
        headers.append(b"Transfer-Encoding: chunked")
    headers += draw(st.lists(st.binary(max_size=40), max_size=3))  # junk header lines
    status = draw(st.sampled_from(["200 OK", "200 OK", "200 OK", "404 Not Found", "abc", "200"]))
    head = b"\r\n".join([f"HTTP/1.1 {status}".encode(), *headers])
    end = draw(st.sampled_from([b"\r\n\r\n", b"\r\n\r\n", b"\n\n", b"\r\n"]))
    return head + end + sent


@st.composite
def _warc_file(draw: st.DrawFn) -> bytes:
    """A few records of every type replay meets, gzip per record or not, possibly cut."""
    from crawler.warc.capture import METADATA_TYPE
    from crawler.warc.records import OutRecord, gzip_member

    parts = []
    compressed = draw(st.booleans())
    response_id = None  # the last response's: a metadata record describes it
    for number in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(WARC_RECORD_TYPES))
        uri = draw(st.one_of(st.sampled_from(GOOD_URLS), st.sampled_from(GOOD_URLS), _url()))
        extra = []
        if kind == "metadata" and response_id is not None:
            block = draw(st.one_of(
                st.builds(lambda value: json.dumps(value).encode(), _json_value()),
                st.just(json.dumps(GOOD_METADATA).encode()), st.sampled_from(HOSTILE_JSON),
            ))  # fmt: skip
            content_type = METADATA_TYPE
            extra.append(("WARC-Concurrent-To", response_id))
        elif kind == "resource":
            block, content_type = draw(_html_document()), "text/html"
        else:
            block, content_type = draw(_http_block()), "application/http; msgtype=response"
        # Fixed ids and dates: a random one changes the gzip size, and so the draws after it.
        record = OutRecord(kind, block, content_type, target_uri=uri, extra=extra,
                           date=WARC_DATE, record_id=f"<urn:uuid:{UUID(int=number)}>",
                           version=draw(st.sampled_from(["WARC/1.0", "WARC/1.1"])))  # fmt: skip
        response_id = record.record_id if kind == "response" else response_id
        data = record.serialize()
        parts.append(gzip_member(data) if compressed else data)
    data = b"".join(parts)
    if draw(st.integers(0, 3)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return data


@cache
def warc_inputs(seeds: Sequence[bytes] = ()) -> st.SearchStrategy[WarcInput]:
    from crawler.warc.records import READERS

    readers = [name for name in READERS if importlib.util.find_spec(name) is not None]
    files = _warc_file()  # mostly well-formed files: the record and HTTP parsers get reached
    return st.builds(WarcInput, data=st.one_of(files, files, files, _documents(seeds)),
                     reader=st.sampled_from(readers))  # fmt: skip


# --- targets -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    name: str
    strategy: Callable[[Sequence[bytes]], st.SearchStrategy[Any]]  # (seed documents) -> inputs
    check: Callable[[Any], None]
    modules: tuple[str, ...]  # the code under test (instrumented for coverage by atheris)

    def dump(self, value: Any) -> tuple[dict[str, Any], bytes]:
        """An input as (metadata, payload bytes), for crash files."""
        if isinstance(value, PageInput):
            return {"url": value.url, "encoding": value.encoding}, value.html
        if isinstance(value, FeedInput):
            return {"url": value.url, "max_entries": value.max_entries}, value.body
        if isinstance(value, WarcInput):
            return {"reader": value.reader}, value.data
        return {}, str(value).encode("utf-8", "surrogatepass")

    def load(self, meta: dict[str, Any], payload: bytes) -> Any:
        """The input back from a crash file; with empty `meta`, raw bytes as an input."""
        if self.name == "extract":
            return PageInput(payload, meta.get("url"), meta.get("encoding"))
        if self.name == "feeds":
            url = meta.get("url", DEFAULT_FEED_URL)
            return FeedInput(payload, url, meta.get("max_entries", FEED_MAX_ENTRIES))
        if self.name == "warc":
            return WarcInput(payload, meta.get("reader", "fastwarc"))
        return payload.decode("utf-8", "surrogatepass" if meta else "replace")


TARGETS: dict[str, Target] = {
    "extract": Target(
        "extract", page_inputs, check_extract, ("extractors", "pipelines.extraction.pipeline")
    ),
    "feeds": Target("feeds", feed_inputs, check_feed, ("crawler.feedparse",)),
    "urls": Target(
        "urls", lambda seeds: urls(), check_url, ("crawler.core.urls", "crawler.safety")
    ),
    "warc": Target(
        "warc", warc_inputs, check_warc, ("crawler.warc.records", "crawler.warc.replay")
    ),
}


@cache
def fixture_seeds(kind: str) -> tuple[bytes, ...]:
    """Seed inputs from the repository's fixtures: pages for `extract`, feeds for `feeds`."""
    if kind == "urls":
        return SEED_URLS
    if kind == "warc":
        return warc_seeds()
    directory = SEED_DIRS[0] if kind == "extract" else SEED_DIRS[1]
    if not directory.is_dir():
        return simulator_seeds(kind)
    return tuple(
        path.read_bytes()[:MAX_SEED_BYTES] for path in sorted(directory.iterdir()) if path.is_file()
    )


def simulator_seeds(kind: str) -> tuple[bytes, ...]:
    """Pages (or feeds) of the news-site simulator, for an installed product without tests/."""
    from urllib.parse import urlsplit as split

    from crawler.newsroom import Newsroom

    room = Newsroom(seed=1)
    urls = [page.url for page in room.articles()[:SIMULATOR_SEED_PAGES]]
    if kind != "extract":
        urls = room.feed_urls[:SIMULATOR_SEED_PAGES]
    bodies = (room.render(split(url).netloc, split(url).path)[2] for url in urls)
    return tuple(body[:MAX_SEED_BYTES] for body in bodies if isinstance(body, bytes))


@cache
def warc_seeds() -> tuple[bytes, ...]:
    """WARC files of simulator pages: one gzip per record, one uncompressed (whose mutations
    reach the record and HTTP parsers rather than only breaking a gzip member)."""
    from crawler.warc.records import gzip_member, response_record

    records = [
        response_record(f"https://news.example.com/{i}.html", 200,
                        [(b"Content-Type", b"text/html; charset=utf-8")], body).serialize()
        for i, body in enumerate(simulator_seeds("extract")[:WARC_SEED_PAGES])
    ]  # fmt: skip
    return (b"".join(gzip_member(record) for record in records), b"".join(records))
