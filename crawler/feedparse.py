"""Feed parsing: RSS 0.9x/1.0/2.0, Atom 0.3/1.0, CDF, JSON Feed and news sitemaps, into one
entry shape.

`parse_feed(body, url)` returns a `Feed` or raises `FeedError` (with a `reason`) when the body is
not a feed; nothing else escapes. Entries without an http(s) link are not returned (a crawler has
nothing to fetch): `Feed.skipped` counts them.

What the parser guarantees, on the open web's feeds:
- Elements are matched by namespace, not by local name: an item's title is the RSS (or Atom)
  title, never `<media:title>`; its link never an `<atom:link rel="enclosure">`; a module's
  `<x:description>` never replaces the item's description. Module elements are read as
  themselves (dc:creator, dc:date, content:encoded, xhtml:body, atom:link, feedburner:origLink).
- Entities are decoded exactly once: XML references by the XML parser; a second, HTML decoding
  only for text that is HTML (declared so, or RSS text that contains markup or complete entity
  references), and then only for references that end in ';' (so "?id=1&section=2" stays as
  written). Links and ids are never HTML-decoded.
- Relative links and ids resolve against xml:base (on any ancestor or the element itself), then
  the Content-Location header, then the feed's URL.
- Titles, summaries and names are text: markup removed, script and style bodies dropped,
  whitespace collapsed, cut to MAX_FIELD_CHARS.
- Hostile input stays harmless: a DTD before the root element is dropped and entities are never
  expanded (no entity bombs, no XXE), nothing is fetched, libxml2's depth and size limits stay
  on, HTML is parsed from at most MAX_MARKUP_CHARS a field, and at most `max_entries` entries
  are read. Broken feeds are recovered (bare '&', undeclared entities, a wrong encoding label,
  items outside <channel>), and `Feed.repairs` says what was repaired.
"""

from __future__ import annotations

import base64
import binascii
import html as html_entities
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from functools import lru_cache
from html.entities import name2codepoint
from itertools import islice
from typing import Any
from urllib.parse import urljoin, urlsplit

from lxml import etree

from crawler.core.urls import canonical_article_url
from extractors.language import primary_subtag
from extractors.metadata import (
    EARLIEST_PUBLICATION_YEAR,
    MAX_KEYWORDS,
    parse_date,
    unique_keywords,
)
from extractors.safetext import scrub_json, single_line, storable_text

DEFAULT_MAX_ENTRIES = 1_000
MAX_FIELD_CHARS = 2_000  # titles, summaries, ids and names are cut to this length
MAX_AUTHORS_PER_ENTRY = 10
# HTML in a field is parsed from at most this much source: far more than MAX_FIELD_CHARS of
# text needs, and a bound on the work a hostile multi-megabyte description can cause.
MAX_MARKUP_CHARS = 100_000
XML_DECLARATION_SNIFF_BYTES = 200

FORMAT_RSS2 = "rss2"
FORMAT_RSS09X = "rss09x"
FORMAT_RSS1 = "rss1"
FORMAT_ATOM = "atom"
FORMAT_CDF = "cdf"  # Microsoft's Channel Definition Format: <channel><item href=...>
FORMAT_JSON_FEED = "jsonfeed"
FORMAT_SITEMAP = "sitemap"
FORMAT_SITEMAP_INDEX = "sitemapindex"

# What `Feed.repairs` may name.
REPAIR_DTD_REMOVED = "dtd_removed"  # a DOCTYPE (entity definitions, external DTD) was dropped
# Bare '&' escaped, HTML named entities made numeric, references to lone surrogates made U+FFFD.
REPAIR_ENTITIES = "entities_repaired"
REPAIR_ENCODING = "encoding_mislabelled"  # the declared encoding did not decode the bytes
REPAIR_MALFORMED = "malformed_xml"  # the XML parser had to recover from syntax errors

NS_XML = "http://www.w3.org/XML/1998/namespace"
NS_ATOM10 = "http://www.w3.org/2005/Atom"
NS_ATOM03 = "http://purl.org/atom/ns#"
NS_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
NS_DC = "http://purl.org/dc/elements/1.1/"
NS_DCTERMS = "http://purl.org/dc/terms/"
NS_CONTENT = "http://purl.org/rss/1.0/modules/content/"
NS_XHTML = "http://www.w3.org/1999/xhtml"
NS_FEEDBURNER = "http://rssnamespace.org/feedburner/ext/1.0"
NS_ITUNES = "http://www.itunes.com/dtds/podcast-1.0.dtd"
NS_MEDIA = "http://search.yahoo.com/mrss/"
XML_BASE = f"{{{NS_XML}}}base"
XML_LANG = f"{{{NS_XML}}}lang"
RDF_ABOUT = f"{{{NS_RDF}}}about"
# The namespaces RSS's own elements come in (besides none and the document's own).
RSS_NAMESPACES = (
    "http://purl.org/rss/1.0/",
    "http://my.netscape.com/rdf/simple/0.9/",
    "http://backend.userland.com/rss2",
    "http://backend.userland.com/rss",
    "http://blogs.law.harvard.edu/tech/rss",
)
ATOM_NAMESPACES = (NS_ATOM10, NS_ATOM03)

_XML_PARSER_OPTIONS = {
    "recover": True,  # keep what is parseable in broken feeds
    "resolve_entities": False,  # no entity expansion: no billion laughs, no XXE
    "no_network": True,  # never fetch a DTD or an external entity
    "load_dtd": False,
    "huge_tree": False,  # libxml2's own depth and size limits stay on
    "remove_comments": True,
    "remove_pis": True,
}
_HTML_PARSER = etree.HTMLParser(
    recover=True, no_network=True, remove_comments=True, remove_pis=True, default_doctype=False
)
_XML_ENCODING_DECLARATION = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']+)["']""")
_XML_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*\?>")
# A DOCTYPE is only legal in the prolog: before it, only whitespace, the XML declaration,
# comments and processing instructions. Quoted strings may contain '>' and ']'.
# Atomic groups and possessive repeats: no backtracking, linear time on any input.
_PROLOG_DOCTYPE = re.compile(
    rb"\A((?:\xef\xbb\xbf)?(?>\s+|<\?.*?\?>|<!--.*?-->)*+)"
    rb"<!DOCTYPE(?>[^\[>\"']+|\"[^\"]*\"|'[^']*')*+"
    rb"(?:\[(?>[^\]\"']+|\"[^\"]*\"|'[^']*')*+\])?\s*>",
    re.DOTALL | re.IGNORECASE,
)
# What needs repair: an '&' that starts no XML reference (a bare '&', an HTML or undeclared
# entity), outside CDATA sections and comments (matched too, to be left as they are). XML's own
# references are not matched at all: a feed full of "&lt;" costs no Python call.
_ENTITY_OR_VERBATIM = re.compile(
    rb"<!\[CDATA\[.*?(?:\]\]>|\Z)|<!--.*?(?:-->|\Z)"
    rb"|&(?!(?:amp|lt|gt|quot|apos|#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8});)"
    rb"(?:([A-Za-z][A-Za-z0-9]{0,31});)?",
    re.DOTALL,
)
# A character reference to half of a UTF-16 pair (&#xD83D;, &#55357;: an emoji cut in half):
# libxml2 turns it into bytes that are no UTF-8, and lxml then fails to read the text. It
# becomes U+FFFD, what a lone surrogate becomes everywhere (extractors.safetext). A pass of its
# own: as an alternative of the pattern above it tripled that pass on feeds full of "&lt;".
_SURROGATE_REFERENCE = re.compile(
    rb"&#(?:[xX]0*[dD][89a-fA-F][0-9a-fA-F]{2}"  # U+D800-U+DFFF in hex, in decimal:
    rb"|0*(?:5529[6-9]|55[3-9][0-9]{2}|56[0-9]{3}|57[0-2][0-9]{2}|573[0-3][0-9]|5734[0-3]));"
)
_REPLACEMENT_REFERENCE = b"&#xFFFD;"
# Text that is HTML although nothing says so: a tag, or a complete entity reference.
_LOOKS_LIKE_HTML = re.compile(r"<[A-Za-z/!]|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
# An '&' that does not start a complete reference is a literal ampersand, never an entity.
_LOOSE_AMPERSAND = re.compile(r"&(?!#[0-9]+;|#[xX][0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9]*;)")
_COMPLETE_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
# Characters no text may carry (XML forbids them; JSON and base64 payloads can hold them):
# control characters and noncharacters. (Lone surrogates are U+FFFD by then: see
# `_parse_json_feed` and `_REPLACEMENT_REFERENCE`.)
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
_HIDDEN_TAGS = ("{*}script", "{*}style")  # their bodies are code, never text
# Elements whose boundaries separate words ("<p>a</p><p>b</p>" is "a b", "<b>a</b>b" is "ab").
_BLOCK_TAG_NAMES = ("address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt",
    "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "img",
    "li", "main", "nav", "ol", "p", "pre", "section", "table", "td", "th", "title", "tr",
    "ul")  # fmt: skip
_BLOCK_TAGS = tuple("{*}" + name for name in _BLOCK_TAG_NAMES)
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_EMAIL = r"(?:mailto:)?[^\s@()<>]+@[^\s@()<>]+"
_AUTHOR_EMAIL = re.compile(rf"\(\s*{_EMAIL}\s*\)|<\s*{_EMAIL}\s*>|{_EMAIL}")
_ALTERNATE_FEED_TYPES = ("application/rss+xml", "application/atom+xml", "application/feed+json")
_HTML_LINK_TYPES = ("text/html", "application/xhtml+xml")

# Text kinds: how a field's text is read.
PLAIN, HTML, GUESS = "plain", "html", "guess"


@dataclass(slots=True)
class FeedEntry:
    """One feed entry: the article link and the metadata that travels with its request."""

    link: str
    title: str | None = None
    guid: str | None = None
    published: datetime | None = None
    updated: datetime | None = None
    authors: list[str] = field(default_factory=list)
    summary: str | None = None
    language: str | None = None  # as declared by the entry, else by its feed (a filter's hint)
    categories: list[str] = field(default_factory=list)  # its tags: the record's keywords

    def to_meta(self) -> dict[str, Any]:
        """A JSON-safe dict (dates as ISO 8601) for request metadata and queues."""
        data = asdict(self)
        for key in ("published", "updated"):
            data[key] = data[key].isoformat() if data[key] else None
        return data


@dataclass(slots=True)
class Feed:
    format: str
    title: str | None
    entries: list[FeedEntry]
    subfeeds: list[str] = field(default_factory=list)  # sitemap indexes list further sitemaps
    skipped: int = 0  # entries without a usable http(s) link
    truncated: bool = False  # more than max_entries entries were present
    total_entries: int = 0  # entries present in the document (read or not)
    repairs: list[str] = field(default_factory=list)  # REPAIR_* names: what was broken
    language: str | None = None  # the feed's declared language (RSS <language>, Atom xml:lang)
    # When each subfeed of a sitemap index last changed (its <lastmod>), where it says.
    subfeed_dates: dict[str, datetime] = field(default_factory=dict)


class FeedError(ValueError):
    """Not a feed. `reason` names why; `alternates` are feed links found on an HTML page."""

    def __init__(self, reason: str, detail: str = "", alternates: list[str] | None = None):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.alternates = alternates or []


def parse_feed(
    body: bytes,
    url: str,
    *,
    content_location: str | None = None,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> Feed:
    """Parse any supported feed format; raises FeedError when `body` is not a feed.

    `url` is the URL the feed was fetched from, `content_location` the response's
    Content-Location header if any: relative links resolve against xml:base, then it, then
    `url`."""
    return parse_feed_items(body, url, content_location=content_location,
                            max_entries=max_entries)[0]  # fmt: skip


def parse_feed_items(
    body: bytes,
    url: str,
    *,
    content_location: str | None = None,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    keep_linkless: bool = False,
) -> tuple[Feed, list[FeedEntry | None]]:
    """`parse_feed`, plus every entry read in document order: its FeedEntry, or None where it
    had no usable link (what `Feed.skipped` counts); with `keep_linkless`, such an entry comes
    with its metadata and an empty link instead. For tools that relate entries to the document
    (the conformance test), never for crawling."""
    stripped = body.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise FeedError("empty_feed")
    base = document_base(url, content_location)
    if stripped[:1] in (b"{", b"["):
        feed, items = _parse_json_feed(stripped, base, max_entries)
    else:
        repairs: list[str] = []
        feed, items = _parse_xml_feed(_parse_xml(body, repairs), base, max_entries)
        feed.repairs = repairs
    if not keep_linkless:
        items = [entry if entry is not None and entry.link else None for entry in items]
    if feed.language:
        for entry in feed.entries:
            entry.language = entry.language or feed.language
    return feed, items


def document_base(url: str, content_location: str | None) -> str:
    """The URL relative references resolve against: Content-Location (itself relative to the
    URL) when it is a usable http(s) URL, else the URL."""
    located = _join(url, content_location.strip()) if content_location else None
    return located if located and urlsplit(located).scheme in ("http", "https") else url


def _join(base: str, reference: str) -> str | None:
    try:
        return urljoin(base, reference)
    except ValueError:  # broken IPv6 brackets and the like
        return None


# --- XML: bytes to tree ----------------------------------------------------------------------


def _repair_entity(match: re.Match[bytes]) -> bytes:
    """An HTML named entity made numeric, any other '&' escaped; CDATA sections and comments
    are returned as they are."""
    whole, name = match.group(0), match.group(1)
    if whole[:1] == b"<":
        return whole
    if name and (codepoint := name2codepoint.get(name.decode("ascii"))):
        return b"&#%d;" % codepoint
    return b"&amp;" + whole[1:]


def sanitize_xml(body: bytes, repairs: list[str] | None = None) -> bytes:
    """Remove the DTD (only where a DTD can be: before the root element) and repair entities so
    that recovery keeps the text instead of dropping it. What was changed is appended to
    `repairs`."""
    body, doctypes = _PROLOG_DOCTYPE.subn(rb"\1", body, count=1)
    repaired = _ENTITY_OR_VERBATIM.sub(_repair_entity, body)
    if b"&#" in repaired:
        repaired = _SURROGATE_REFERENCE.sub(_REPLACEMENT_REFERENCE, repaired)
    if repairs is not None:
        if doctypes:
            repairs.append(REPAIR_DTD_REMOVED)
        if repaired != body:
            repairs.append(REPAIR_ENTITIES)
    return repaired


def _as_utf8_if_wide(body: bytes, repairs: list[str]) -> bytes:
    """UTF-16/32 documents (byte order mark) as UTF-8 without their declaration, so that the
    byte-level repairs can read them; a UTF-16 label on ASCII-compatible bytes is a lie."""
    for bom, codec in ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
                       (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):  # fmt: skip
        if body.startswith(bom):
            text = body.decode(codec, errors="replace").lstrip("\ufeff")
            return _XML_DECLARATION.sub(b"", text.encode("utf-8"), count=1)
    declared = _XML_ENCODING_DECLARATION.match(body[:XML_DECLARATION_SNIFF_BYTES])
    if declared and declared.group(1).lower().startswith((b"utf-16", b"utf-32", b"ucs")):
        repairs.append(REPAIR_ENCODING)  # readable as ASCII, so not what it says
        return _XML_DECLARATION.sub(b"", body.lstrip(b"\xef\xbb\xbf"), count=1)
    return body


def _parse_xml(body: bytes, repairs: list[str]) -> etree._Element:
    body = sanitize_xml(_as_utf8_if_wide(body, repairs), repairs)
    declared = _XML_ENCODING_DECLARATION.match(body[:XML_DECLARATION_SNIFF_BYTES])
    encoding = declared.group(1).decode("ascii", "replace") if declared else "utf-8"
    try:
        body.decode(encoding)
        parser = etree.XMLParser(**_XML_PARSER_OPTIONS)
        payload = body
    except (LookupError, ValueError):  # undecodable, unknown or malformed (NUL) labels
        # The declaration lies (or names no known codec): decode as browsers would and let lxml
        # read UTF-8, instead of stopping at the first invalid byte.
        text = body.decode("cp1252", errors="replace")
        text = re.sub(r"^\s*<\?xml[^>]*\?>", "", text)
        parser = etree.XMLParser(encoding="utf-8", **_XML_PARSER_OPTIONS)
        payload = text.encode("utf-8")
        repairs.append(REPAIR_ENCODING)
    try:
        root = etree.fromstring(payload, parser=parser)
    except etree.XMLSyntaxError as error:
        raise FeedError("malformed_xml", str(error)) from error
    if root is None:
        raise FeedError("malformed_xml", "no root element")
    if any(entry.level >= etree.ErrorLevels.ERROR for entry in parser.error_log):
        repairs.append(REPAIR_MALFORMED)
    return root


# --- XML: tree to entries --------------------------------------------------------------------

# The part an entry's child element plays. An element plays one only when it comes in a
# namespace that defines it: the format's own (RSS or Atom) or a known module.
ROLE_LINK = "link"  # RSS <link>: the article URL as text
ROLE_ORIGINAL_LINK = "original_link"  # feedburner:origLink: the article behind a redirector
ROLE_ATOM_LINK = "atom_link"  # <atom:link rel=... href=...>
ROLE_TITLE = "title"
ROLE_DC_TITLE = "dc_title"
ROLE_MEDIA_TITLE = "media_title"  # a title of the item's media: the entry's only if it has none
ROLE_SUMMARY = "summary"
ROLE_CONTENT = "content"  # full content: read as the summary when there is no summary
ROLE_DC_DESCRIPTION = "dc_description"
ROLE_ITUNES_SUMMARY = "itunes_summary"
ROLE_ID = "id"
ROLE_PUBLISHED = "published"
ROLE_ISSUED = "issued"  # Atom 0.3's name: after Atom 1.0's `published` when both are there
ROLE_UPDATED = "updated"
ROLE_MODIFIED = "modified"  # Atom 0.3's name: after Atom 1.0's `updated` when both are there
ROLE_CREATED = "created"
ROLE_DC_DATE = "dc_date"
ROLE_AUTHOR = "author"  # a person as text: RSS <author>, dc:creator
ROLE_ATOM_AUTHOR = "atom_author"  # <author><name>...</name></author>
ROLE_ITUNES_AUTHOR = "itunes_author"
ROLE_CATEGORY = "category"  # RSS <category>, Atom <category term label>, dc:subject

_RSS_ROLES = {
    "title": ROLE_TITLE,
    "link": ROLE_LINK,
    "description": ROLE_SUMMARY,
    "abstract": ROLE_SUMMARY,  # CDF
    "body": ROLE_CONTENT,  # xhtml:body written without its namespace
    "fullitem": ROLE_CONTENT,  # an early RSS extension for the full text
    "guid": ROLE_ID,
    "pubdate": ROLE_PUBLISHED,
    "author": ROLE_AUTHOR,
    "category": ROLE_CATEGORY,
}
_ATOM_ROLES = {
    "title": ROLE_TITLE,
    "link": ROLE_ATOM_LINK,
    "summary": ROLE_SUMMARY,
    "content": ROLE_CONTENT,
    "id": ROLE_ID,
    "published": ROLE_PUBLISHED,
    "issued": ROLE_ISSUED,
    "updated": ROLE_UPDATED,
    "modified": ROLE_MODIFIED,
    "created": ROLE_CREATED,  # Atom 0.3
    "author": ROLE_ATOM_AUTHOR,
    "category": ROLE_CATEGORY,
}
_ATOM_IN_RSS_ROLES = {
    "link": ROLE_ATOM_LINK,
    "updated": ROLE_UPDATED,
    "published": ROLE_PUBLISHED,
    "author": ROLE_ATOM_AUTHOR,
    "category": ROLE_CATEGORY,
}
_MODULE_ROLES: dict[str, dict[str, str]] = {
    NS_DC: {
        "title": ROLE_DC_TITLE,
        "creator": ROLE_AUTHOR,
        "author": ROLE_AUTHOR,
        "date": ROLE_DC_DATE,
        "description": ROLE_DC_DESCRIPTION,
        "subject": ROLE_CATEGORY,
    },
    NS_DCTERMS: {"issued": ROLE_ISSUED, "created": ROLE_CREATED, "modified": ROLE_MODIFIED},
    NS_CONTENT: {"encoded": ROLE_CONTENT},
    NS_XHTML: {"body": ROLE_CONTENT},
    NS_FEEDBURNER: {"origlink": ROLE_ORIGINAL_LINK},
    NS_ITUNES: {"author": ROLE_ITUNES_AUTHOR, "summary": ROLE_ITUNES_SUMMARY},
    NS_MEDIA: {"title": ROLE_MEDIA_TITLE},
    NS_ATOM10: _ATOM_IN_RSS_ROLES,
    NS_ATOM03: _ATOM_IN_RSS_ROLES,
}

# Roles read in order of preference.
_TITLE_ROLES = (ROLE_TITLE, ROLE_DC_TITLE, ROLE_MEDIA_TITLE)
_SUMMARY_ROLES = (ROLE_SUMMARY, ROLE_CONTENT, ROLE_DC_DESCRIPTION, ROLE_ITUNES_SUMMARY)
_PUBLISHED_ROLES = (ROLE_PUBLISHED, ROLE_ISSUED, ROLE_DC_DATE, ROLE_CREATED)
_UPDATED_ROLES = (ROLE_UPDATED, ROLE_MODIFIED)

Fields = dict[str, list[etree._Element]]


@lru_cache(maxsize=64)
def _roles(core_namespaces: tuple[str, ...], atom: bool) -> dict[str, str]:
    """Lower-cased Clark-notation tag -> role, for a document whose own namespaces are
    `core_namespaces` ("" for none)."""
    roles: dict[str, str] = {}
    for namespace, names in _MODULE_ROLES.items():
        for name, role in names.items():
            roles[f"{{{namespace}}}{name}".lower()] = role
    for namespace in core_namespaces:
        prefix = f"{{{namespace}}}" if namespace else ""
        for name, role in (_ATOM_ROLES if atom else _RSS_ROLES).items():
            roles[f"{prefix}{name}".lower()] = role
    return roles


def _fields(element: etree._Element, roles: dict[str, str]) -> Fields:
    """The element's children by role, each in document order."""
    found: Fields = {}
    for child in element:
        tag = child.tag
        if type(tag) is not str:  # an entity reference or other non-element node
            continue
        role = roles.get(tag) or roles.get(tag.lower())
        if role is not None:
            found.setdefault(role, []).append(child)
    return found


def _first_of(element: etree._Element, roles: dict[str, str], wanted: str) -> etree._Element | None:
    for child in element:
        tag = child.tag
        if type(tag) is str and (roles.get(tag) or roles.get(tag.lower())) == wanted:
            return child
    return None


def _local(element: etree._Element) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def _namespace(element: etree._Element | None) -> str:
    tag = element.tag if element is not None else None
    return tag[1 : tag.index("}")] if isinstance(tag, str) and tag.startswith("{") else ""


def _child_named(element: etree._Element, name: str) -> etree._Element | None:
    """The first child of that local name, whatever its namespace (sitemaps, the RSS channel)."""
    for child in element:
        if _local(child) == name:
            return child
    return None


def _attribute(element: etree._Element, name: str) -> str | None:
    """An attribute in either case (CDF writes HREF and LASTMOD)."""
    return element.get(name) or element.get(name.upper())


def _parse_xml_feed(
    root: etree._Element, base: str, max_entries: int
) -> tuple[Feed, list[FeedEntry | None]]:
    kind = _local(root)
    if kind in ("rss", "rdf", "channel"):
        return _parse_rss(root, kind, base, max_entries)
    if kind == "feed":
        return _parse_atom(root, base, max_entries)
    if kind == "urlset":
        return _build(FORMAT_SITEMAP, None, _children_named(root, "url"), max_entries,
                      lambda url_element: _sitemap_entry(url_element, base))  # fmt: skip
    if kind == "sitemapindex":
        return _sitemap_index(root, base, max_entries), []
    if kind == "html":
        raise FeedError("html_not_feed", "an HTML page was served", _alternate_feeds(root, base))
    raise FeedError("unknown_format", f"root element <{kind}>")


def _children_named(element: etree._Element, name: str) -> Iterator[etree._Element]:
    return (child for child in element if _local(child) == name)


def _parse_rss(
    root: etree._Element, kind: str, base: str, max_entries: int
) -> tuple[Feed, list[FeedEntry | None]]:
    """RSS 0.9x/2.0 (<rss>), RSS 1.0 (<rdf:RDF>, items beside the channel) and CDF (<channel>).
    Items are read wherever they are: RSS 0.91 feeds in the wild put them outside <channel>."""
    channel = root if kind == "channel" else _child_named(root, "channel")
    own = [_namespace(root), _namespace(channel)]
    core = tuple(dict.fromkeys(ns for ns in (*own, "", *RSS_NAMESPACES) if ns != NS_RDF))
    roles = _roles(core, atom=False)
    if kind == "channel":
        feed_format, items = FORMAT_CDF, _elements_named(root, "item")
    else:
        version = (root.get("version") or "2.0").strip()
        feed_format = FORMAT_RSS1 if kind == "rdf" else (
            FORMAT_RSS2 if version.startswith("2") else FORMAT_RSS09X)  # fmt: skip
        items = root.iter(*(f"{{{ns}}}item" if ns else "item" for ns in core))
    head = channel if channel is not None else root
    title = _first_text(head, roles, (ROLE_TITLE, ROLE_DC_TITLE), GUESS)
    feed, parsed = _build(feed_format, title, items, max_entries,
                          lambda item: _rss_entry(item, _base_of(item, base), roles))  # fmt: skip
    feed.language = primary_subtag(_child_text(head, "language"))
    return feed, parsed


def _elements_named(root: etree._Element, name: str) -> Iterator[etree._Element]:
    """Descendants of that local name in any case (CDF is often upper-case)."""
    return (element for element in root.iter() if _local(element) == name)


def _parse_atom(
    root: etree._Element, base: str, max_entries: int
) -> tuple[Feed, list[FeedEntry | None]]:
    """Atom 1.0 and 0.3 (and their unnamespaced and pre-release variants)."""
    core = tuple(dict.fromkeys((_namespace(root), "", *ATOM_NAMESPACES)))
    roles = _roles(core, atom=True)
    entries = root.iter(*(f"{{{ns}}}entry" if ns else "entry" for ns in core))
    title = _first_text(root, roles, (ROLE_TITLE,), PLAIN)
    parse_entry = lambda entry: _atom_entry(entry, _base_of(entry, base), roles)  # noqa: E731
    feed, parsed = _build(FORMAT_ATOM, title, entries, max_entries, parse_entry)
    feed.language = primary_subtag(root.get(XML_LANG))
    return feed, parsed


EntryParser = Callable[[etree._Element], "FeedEntry | None"]


def _build(
    feed_format: str,
    title: str | None,
    items: Iterator[etree._Element],
    max_entries: int,
    parse_entry: EntryParser,
) -> tuple[Feed, list[FeedEntry | None]]:
    parsed: list[FeedEntry | None] = []
    total = 0
    for item in items:
        total += 1
        if total <= max_entries:  # the rest is only counted
            parsed.append(parse_entry(item))
    entries = [entry for entry in parsed if entry is not None and entry.link]
    feed = Feed(feed_format, title, entries, skipped=len(parsed) - len(entries),
                truncated=total > max_entries, total_entries=total)  # fmt: skip
    return feed, parsed


# --- base URLs -------------------------------------------------------------------------------


def _element_base(element: etree._Element | None, inherited: str) -> str:
    """The base URL inside `element`: its xml:base resolved against the inherited one. A base
    that is broken or not http(s) is ignored."""
    declared = element.get(XML_BASE) if element is not None else None
    if not declared:
        return inherited
    joined = _join(inherited, declared.strip())
    if joined is None or urlsplit(joined).scheme not in ("http", "https"):
        return inherited
    return joined


def _base_of(element: etree._Element, document_base: str) -> str:
    """The base URL inside `element`, from every xml:base on it and its ancestors."""
    base = document_base
    for ancestor in reversed([element, *element.iterancestors()]):
        base = _element_base(ancestor, base)
    return base


def http_link(base: str, link: str | None) -> str | None:
    """The absolute http(s) URL of a link, or None when it is not one a crawler can fetch."""
    if not link:
        return None
    absolute = _join(base, link.strip())
    if absolute is None:
        return None
    try:
        parts = urlsplit(absolute)
        _ = parts.port  # raises ValueError on a bad port
    except ValueError:  # broken IPv6 brackets, bad port
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        canonical_article_url(absolute)  # what the crawler will request must exist
    except ValueError:
        return None
    return absolute


def _identifier(base: str, value: str | None) -> str | None:
    """An id as published, except a relative reference ("/news/1", "../a"), resolved against
    the base as links are. Opaque ids ("dh-1001", "tag:...") are kept as they are."""
    if not value or _URI_SCHEME.match(value) or not value.startswith(("/", "./", "../")):
        return value
    return _join(base, value) or value


# --- entries ---------------------------------------------------------------------------------


def _rss_entry(item: etree._Element, base: str, roles: dict[str, str]) -> FeedEntry:
    """The item as an entry; its link is "" when it has no usable one (then it is skipped)."""
    found = _fields(item, roles)
    guid_element = _first(found, ROLE_ID)
    guid = _plain(guid_element)
    permalink = guid_element is not None and (
        (guid_element.get("isPermaLink") or "true").strip().lower() != "false")  # fmt: skip
    if permalink:
        guid = _identifier(_element_base(guid_element, base), guid)
    candidates = (
        *_link_texts(found, ROLE_ORIGINAL_LINK, base),
        *_link_texts(found, ROLE_LINK, base),
        *_atom_links(found.get(ROLE_ATOM_LINK, []), base),
        (base, guid if permalink and guid and _URI_SCHEME.match(guid) else None),
        (base, item.get(RDF_ABOUT)),  # RSS 1.0: the item's own URI
        (base, _attribute(item, "href")),  # CDF
    )
    link = next((url for url in (http_link(*c) for c in candidates) if url), "")
    lastmod = _date(_attribute(item, "lastmod"))  # CDF
    return _entry(found, link, guid, GUESS, atom=False, lastmod=lastmod)


def _atom_entry(entry: etree._Element, base: str, roles: dict[str, str]) -> FeedEntry:
    """The entry; its link is "" when it has no usable one (then it is skipped)."""
    found = _fields(entry, roles)
    id_element = _first(found, ROLE_ID)
    entry_id = _identifier(_element_base(id_element, base), _plain(id_element))
    candidates = (
        *_link_texts(found, ROLE_ORIGINAL_LINK, base),
        *_atom_links(found.get(ROLE_ATOM_LINK, []), base),
        (base, entry_id if entry_id and _URI_SCHEME.match(entry_id) else None),  # a URL id
    )
    link = next((url for url in (http_link(*c) for c in candidates) if url), "")
    parsed = _entry(found, link, entry_id, PLAIN, atom=True)
    parsed.language = primary_subtag(entry.get(XML_LANG))
    return parsed


def _entry(
    found: Fields,
    link: str,
    guid: str | None,
    kind: str,
    *,
    atom: bool,
    lastmod: datetime | None = None,
) -> FeedEntry:
    """The entry from its fields: `kind` reads the title and summary where the elements do not
    say; the format's own authors come before those of other vocabularies."""
    published = _first_date(found, _PUBLISHED_ROLES)
    updated = _first_date(found, _UPDATED_ROLES) or lastmod
    named = _names([_author_name(_text_field(e, GUESS)) for e in found.get(ROLE_AUTHOR, [])])
    structured = _atom_authors(found)
    return FeedEntry(
        link=link,
        title=_first_found_text(found, _TITLE_ROLES, kind),
        guid=guid or link or None,
        published=published or updated,
        updated=updated or published,
        authors=(structured or named if atom else named or structured) or _itunes_authors(found),
        summary=_first_found_text(found, _SUMMARY_ROLES, kind),
        # Atom's label (what a reader sees) before its term (an id); RSS's is its text.
        categories=_categories(
            e.get("label") or e.get("term") or _plain(e) for e in found.get(ROLE_CATEGORY, [])
        ),
    )


def _categories(values: Iterable[str | None]) -> list[str]:
    """The entry's tags, cleaned like other fields and kept by the page's keyword rule."""
    cleaned = (clip_text(value) if value else None for value in values)
    return unique_keywords([tag for tag in islice(cleaned, MAX_KEYWORDS) if tag])


def _first(found: Fields, role: str) -> etree._Element | None:
    elements = found.get(role)
    return elements[0] if elements else None


def _link_texts(found: Fields, role: str, base: str) -> list[tuple[str, str | None]]:
    """(base, link) of each element carrying a link as its text."""
    return [(_element_base(e, base), e.text) for e in found.get(role, [])]


def _atom_links(links: list[etree._Element], base: str) -> list[tuple[str, str | None]]:
    """(base, href) of the alternate links, HTML ones first: other relations (enclosure, self,
    related, replies) are never the article. An href-less link's text is its target."""
    html_links, other_links = [], []
    for link in links:
        if (link.get("rel") or "alternate").strip().lower() != "alternate":
            continue
        target = (_element_base(link, base), link.get("href") or link.text)
        media_type = (link.get("type") or "text/html").strip().lower()
        (html_links if media_type in _HTML_LINK_TYPES else other_links).append(target)
    return html_links + other_links


def _first_found_text(found: Fields, roles: tuple[str, ...], kind: str) -> str | None:
    for role in roles:
        for element in found.get(role, []):
            if text := _text_field(element, kind):
                return text
    return None


def _first_text(
    element: etree._Element, roles: dict[str, str], wanted: tuple[str, ...], kind: str
) -> str | None:
    """The text of the element's first child playing one of the `wanted` roles (feed titles:
    found without walking every item of the channel)."""
    for role in wanted:
        if text := _text_field(_first_of(element, roles, role), kind):
            return text
    return None


def _first_date(found: Fields, roles: tuple[str, ...]) -> datetime | None:
    for role in roles:
        for element in found.get(role, []):
            if when := _date(element.text):
                return when
    return None


def _date(value: str | None) -> datetime | None:
    """A timezone-aware date: RFC 822 (RSS) read by the standard library, the rest (ISO 8601,
    W3C-DTF, odd formats) by the shared date parser."""
    if not value:
        return None
    value = value.strip()
    if value[:1].isalpha() or value[2:3] == " " or value[1:2] == " ":  # "Mon, 02 Nov", "2 Nov"
        try:
            parsed = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:  # else a zone name it did not know
            return parsed if parsed.year >= EARLIEST_PUBLICATION_YEAR else None
    return parse_date(value)


def _plain(element: etree._Element | None) -> str | None:
    """An element's text as written (ids), whitespace trimmed, cut to MAX_FIELD_CHARS."""
    if element is None or not element.text:
        return None
    return element.text.strip()[:MAX_FIELD_CHARS] or None


def _author_name(text: str | None) -> str | None:
    """The person in "Name (email)", "email (Name)" or "Name <email>"; a lone email stays."""
    if not text:
        return None
    name = " ".join(_AUTHOR_EMAIL.sub(" ", text).split()).strip("()<>[]\"',;: ")
    return name or text


def _names(names: list[str | None]) -> list[str]:
    unique = dict.fromkeys(name for name in names if name)
    return list(unique)[:MAX_AUTHORS_PER_ENTRY]


def _atom_authors(found: Fields) -> list[str]:
    names = []
    for author in found.get(ROLE_ATOM_AUTHOR, []):
        prefix = author.tag[: author.tag.index("}") + 1] if author.tag.startswith("{") else ""
        names.append(_text_field(author.find(prefix + "name"), GUESS))
    return _names(names)


def _itunes_authors(found: Fields) -> list[str]:
    return _names([_text_field(e, GUESS) for e in found.get(ROLE_ITUNES_AUTHOR, [])])


# --- text ------------------------------------------------------------------------------------


def _text_field(element: etree._Element | None, kind: str) -> str | None:
    """An element's text as a reader sees it. `kind` says how to read it when the element does
    not say (Atom's `type`/`mode`): PLAIN as written, HTML as markup, GUESS as markup only if it
    contains a tag or a complete entity reference."""
    if element is None:
        return None
    kind, encoded = _declared_content(element, kind)
    if len(element):  # child elements: inline XHTML (or unescaped HTML), whatever `type` says
        return clip_text(_markup_text(element))
    text = element.text or ""
    return read_text(_base64_text(text) if encoded else text, kind)


def read_text(text: str, kind: str) -> str | None:
    """Text read as PLAIN, HTML or GUESS (see `_text_field`), collapsed and cut."""
    text = text[:MAX_MARKUP_CHARS]
    if kind == PLAIN or (kind == GUESS and not _LOOKS_LIKE_HTML.search(text)):
        return clip_text(text)
    return clip_text(html_to_text(text))


def _declared_content(element: etree._Element, default: str) -> tuple[str, bool]:
    """(text kind, base64-encoded?) from Atom's `type` and Atom 0.3's `mode`. Content of another
    media type is base64 (Atom 1.0); what was encoded without a declared text type is guessed."""
    media_type = (element.get("type") or "").strip().lower()
    encoded = (element.get("mode") or "").strip().lower() == "base64"
    if media_type in ("text", "text/plain"):
        return PLAIN, encoded
    if "html" in media_type or media_type.endswith("xml"):
        return HTML, encoded
    if "/" in media_type and not media_type.startswith("text/"):
        encoded = True
    return (GUESS if encoded else default), encoded


def _base64_text(text: str) -> str:
    try:
        return base64.b64decode(text.encode("ascii", "ignore")).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return text


def html_to_text(markup: str) -> str:
    """Text of an HTML fragment: tags and comments removed, script and style bodies dropped,
    complete entity references decoded once (a '&' that starts none stays an '&')."""
    markup = _LOOSE_AMPERSAND.sub("&amp;", _UNSAFE_CHARS.sub("", markup[:MAX_MARKUP_CHARS]))
    if "<" not in markup:
        return html_entities.unescape(markup)
    try:
        root = etree.HTML(markup, _HTML_PARSER)
    except (ValueError, etree.LxmlError):  # e.g. an XML declaration inside the markup
        root = None
    if root is None:  # nothing the HTML parser could read: keep the text between tags
        return html_entities.unescape(_COMPLETE_TAG.sub(" ", markup))
    return _markup_text(root)


def _markup_text(root: etree._Element) -> str:
    """Text of a (parsed) markup tree; modifies the tree, which is read once."""
    etree.strip_elements(root, *_HIDDEN_TAGS, with_tail=False)
    for element in root.iter(*_BLOCK_TAGS):  # recovery keeps what lxml will not store again
        element.text = " " + (storable_text(element.text) or "")
        element.tail = " " + (storable_text(element.tail) or "")
    return "".join(root.itertext())


def clip_text(text: str) -> str | None:
    """One line (extractors.safetext.single_line: whitespace collapsed, NBSP and other Unicode
    spaces too, and no bidirectional controls), cut to MAX_FIELD_CHARS; None when nothing is
    left."""
    text = single_line(_UNSAFE_CHARS.sub("", text[:MAX_MARKUP_CHARS]))[:MAX_FIELD_CHARS]
    return text or None


# --- sitemaps and HTML pages -----------------------------------------------------------------


def _child_text(element: etree._Element | None, name: str) -> str | None:
    child = _child_named(element, name) if element is not None else None
    return _text_field(child, GUESS)


def _sitemap_entry(url_element: etree._Element, base: str) -> FeedEntry | None:
    link = http_link(base, _plain(_child_named(url_element, "loc")))
    if not link:
        return None
    news = _child_named(url_element, "news")
    published = _date(_child_text(news, "publication_date"))
    lastmod = _date(_child_text(url_element, "lastmod"))
    publication = _child_named(news, "publication") if news is not None else None
    return FeedEntry(link=link, title=_child_text(news, "title"), guid=link,
                     published=published or lastmod, updated=lastmod or published,
                     language=primary_subtag(_child_text(publication, "language")),
                     categories=_categories((_child_text(news, "keywords") or "").split(",")),
                     )  # fmt: skip


def _sitemap_index(root: etree._Element, base: str, max_entries: int) -> Feed:
    sitemaps = list(_children_named(root, "sitemap"))
    links, dates = [], {}
    for sitemap in sitemaps[:max_entries]:
        link = http_link(base, _plain(_child_named(sitemap, "loc")))
        if link:
            links.append(link)
            if lastmod := _date(_child_text(sitemap, "lastmod")):
                dates[link] = lastmod
    return Feed(FORMAT_SITEMAP_INDEX, None, [], subfeeds=links, subfeed_dates=dates,
                truncated=len(sitemaps) > max_entries, total_entries=len(sitemaps))  # fmt: skip


def _alternate_feeds(root: etree._Element, url: str) -> list[str]:
    """Feed links advertised by an HTML page (<link rel="alternate" type="...rss+xml">)."""
    links = []
    for link in root.iter("{*}link", "link"):
        rel = (link.get("rel") or "").lower().split()
        is_feed = (link.get("type") or "").lower() in _ALTERNATE_FEED_TYPES
        if "alternate" in rel and is_feed and (absolute := http_link(url, link.get("href"))):
            links.append(absolute)
    return links


# --- JSON Feed -------------------------------------------------------------------------------


def _parse_json_feed(
    body: bytes, base: str, max_entries: int
) -> tuple[Feed, list[FeedEntry | None]]:
    try:
        # Lone surrogates ("\ud83d", or their bytes) become U+FFFD where JSON enters.
        data = scrub_json(json.loads(body), body)
    except (ValueError, RecursionError) as error:
        raise FeedError("malformed_json", str(error)[:200]) from error
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise FeedError("unknown_format", "JSON without an items list")
    items = data["items"]
    parsed = [_json_entry(item, base) if isinstance(item, dict) else None
              for item in items[:max_entries]]  # fmt: skip
    entries = [entry for entry in parsed if entry is not None and entry.link]
    feed = Feed(FORMAT_JSON_FEED, _json_text(data.get("title"), GUESS), entries,
                skipped=len(parsed) - len(entries), truncated=len(items) > max_entries,
                total_entries=len(items),
                language=primary_subtag(_json_link(data.get("language"))))  # fmt: skip
    return feed, parsed


def _json_text(value: Any, kind: str) -> str | None:
    """A JSON Feed string as text: PLAIN, HTML (content_html) or GUESS (titles)."""
    return read_text(value, kind) if isinstance(value, str) else None


def _json_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _json_link(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) else None


def _json_entry(item: dict[str, Any], base: str) -> FeedEntry:
    """The item as an entry; its link is "" when it has no usable one (then it is skipped)."""
    link = http_link(base, _json_link(item.get("url"))) or http_link(
        base, _json_link(item.get("external_url"))) or ""  # fmt: skip
    authors_value = item.get("authors") or ([item["author"]] if item.get("author") else [])
    authors = [
        _json_text(author.get("name"), GUESS)
        for author in (authors_value if isinstance(authors_value, list) else [])
        if isinstance(author, dict)
    ]
    published = _date(_json_link(item.get("date_published")))
    updated = _date(_json_link(item.get("date_modified")))
    guid = clip_text(str(item["id"])) if item.get("id") is not None else None
    return FeedEntry(
        link=link,
        title=_json_text(item.get("title"), GUESS),
        guid=guid or link or None,
        published=published or updated,
        updated=updated or published,
        authors=_names(authors),
        summary=_json_text(item.get("summary"), GUESS)
        or _json_text(item.get("content_text"), PLAIN)
        or _json_text(item.get("content_html"), HTML),
        categories=_categories(_json_text(tag, PLAIN) for tag in _json_list(item.get("tags"))),
    )
