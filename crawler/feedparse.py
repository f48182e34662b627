"""Feed parsing: RSS 0.9x/1.0/2.0, Atom, JSON Feed and news sitemaps, into one entry shape.

Hostile feeds are the norm, so the parser recovers what it can (bare `&`, undeclared entities,
a wrong encoding declaration), never resolves entities or fetches anything (no XXE, no entity
bombs), and reads at most `max_entries` entries. `Feed.repairs` says what had to be repaired, so
that a publisher's broken feed is visible even though its entries were recovered.
"""

from __future__ import annotations

import html as html_entities
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from html.entities import name2codepoint
from typing import Any
from urllib.parse import urljoin, urlsplit

from lxml import etree

from crawler.core.urls import canonical_article_url
from extractors.blocks import clean_text
from extractors.metadata import parse_date

DEFAULT_MAX_ENTRIES = 1_000
MAX_FIELD_CHARS = 2_000  # titles, summaries and names are cut to this length
MAX_AUTHORS_PER_ENTRY = 10
XML_DECLARATION_SNIFF_BYTES = 200

FORMAT_RSS2 = "rss2"
FORMAT_RSS09X = "rss09x"
FORMAT_RSS1 = "rss1"
FORMAT_ATOM = "atom"
FORMAT_JSON_FEED = "jsonfeed"
FORMAT_SITEMAP = "sitemap"
FORMAT_SITEMAP_INDEX = "sitemapindex"

_XML_PARSER_OPTIONS = {
    "recover": True,  # keep what is parseable in broken feeds
    "resolve_entities": False,  # no entity expansion: no billion laughs, no XXE
    "no_network": True,  # never fetch a DTD or an external entity
    "load_dtd": False,
    "huge_tree": False,  # libxml2's own depth and size limits stay on
    "remove_comments": True,
    "remove_pis": True,
}
_XML_ENCODING_DECLARATION = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']+)["']""")
_TAG = re.compile(r"<[^>]{0,2000}>")
# Feeds never need a DTD; dropping it neutralises entity bombs and external entities alike.
_DOCTYPE = re.compile(rb"<!DOCTYPE[^\[>]*(?:\[.*?\]\s*)?>", re.DOTALL | re.IGNORECASE)
_ENTITY_OR_AMPERSAND = re.compile(
    rb"&(?:(#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8})|([A-Za-z][A-Za-z0-9]{0,31}))?;?"
)
_XML_ENTITIES = frozenset({b"amp", b"lt", b"gt", b"quot", b"apos"})
_ALTERNATE_FEED_TYPES = ("application/rss+xml", "application/atom+xml", "application/feed+json")

# What `Feed.repairs` may name.
REPAIR_DTD_REMOVED = "dtd_removed"  # a DOCTYPE (entity definitions, external DTD) was dropped
REPAIR_ENTITIES = "entities_repaired"  # bare '&' escaped, HTML named entities made numeric
REPAIR_ENCODING = "encoding_mislabelled"  # the declared encoding did not decode the bytes
REPAIR_MALFORMED = "malformed_xml"  # the XML parser had to recover from syntax errors


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


class FeedError(ValueError):
    """Not a feed. `reason` names why; `alternates` are feed links found on an HTML page."""

    def __init__(self, reason: str, detail: str = "", alternates: list[str] | None = None):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.alternates = alternates or []


def parse_feed(body: bytes, url: str, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> Feed:
    """Parse any supported feed format; raises FeedError when `body` is not a feed."""
    stripped = body.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise FeedError("empty_feed")
    if stripped[:1] in (b"{", b"["):
        return _parse_json_feed(stripped, url, max_entries)
    repairs: list[str] = []
    root = _parse_xml(body, repairs)
    feed = _parse_xml_feed(root, url, max_entries)
    feed.repairs = repairs
    return feed


# --- XML -----------------------------------------------------------------------------------


def _repair_entity(match: re.Match[bytes]) -> bytes:
    """Keep XML's own references, turn HTML named entities into numeric ones, escape bare '&'."""
    numeric, name = match.group(1), match.group(2)
    complete = match.group(0).endswith(b";")
    if complete and (numeric or name in _XML_ENTITIES):
        return match.group(0)
    if complete and name and (codepoint := name2codepoint.get(name.decode("ascii"))):
        return b"&#%d;" % codepoint
    return b"&amp;" + match.group(0)[1:]


def sanitize_xml(body: bytes, repairs: list[str] | None = None) -> bytes:
    """Remove the DTD and repair entities so that recovery keeps the text instead of dropping it.
    What was changed is appended to `repairs`."""
    body, doctypes = _DOCTYPE.subn(b"", body, count=1)
    repaired = _ENTITY_OR_AMPERSAND.sub(_repair_entity, body)
    if repairs is not None:
        if doctypes:
            repairs.append(REPAIR_DTD_REMOVED)
        if repaired != body:
            repairs.append(REPAIR_ENTITIES)
    return repaired


def _parse_xml(body: bytes, repairs: list[str]) -> etree._Element:
    body = sanitize_xml(body, repairs)
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


def _local(element: etree._Element) -> str:
    tag = element.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def _children(element: etree._Element, name: str) -> list[etree._Element]:
    return [child for child in element if _local(child) == name]


def _child(element: etree._Element, *names: str) -> etree._Element | None:
    for name in names:
        for child in element:
            if _local(child) == name:
                return child
    return None


def _text(element: etree._Element | None) -> str | None:
    """Element text with markup and entities removed (feeds often double-escape HTML)."""
    if element is None:
        return None
    raw = "".join(element.itertext())
    if "<" in raw or "&" in raw:
        raw = html_entities.unescape(_TAG.sub(" ", raw))
    text = clean_text(raw)
    return text[:MAX_FIELD_CHARS] if text else None


def _child_text(element: etree._Element, *names: str) -> str | None:
    for name in names:
        if text := _text(_child(element, name)):
            return text
    return None


def _http_link(base: str, link: str | None) -> str | None:
    """The absolute http(s) URL of a link, or None when it is not one a crawler can fetch."""
    if not link:
        return None
    try:
        absolute = urljoin(base, link.strip())
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


def _parse_xml_feed(root: etree._Element, url: str, max_entries: int) -> Feed:
    kind = _local(root)
    if kind == "rss":
        version = (root.get("version") or "2.0").strip()
        channel = _child(root, "channel")
        items = _children(channel, "item") if channel is not None else []
        feed_format = FORMAT_RSS2 if version.startswith("2") else FORMAT_RSS09X
        return _build(feed_format, _child_text(channel, "title") if channel is not None else None,
                      items, url, max_entries, _rss_entry)  # fmt: skip
    if kind == "rdf":
        channel = _child(root, "channel")
        return _build(FORMAT_RSS1, _child_text(channel, "title") if channel is not None else None,
                      _children(root, "item"), url, max_entries, _rss_entry)  # fmt: skip
    if kind == "feed":
        base = _xml_base(root, url)
        return _build(FORMAT_ATOM, _child_text(root, "title"), _children(root, "entry"), base,
                      max_entries, _atom_entry)  # fmt: skip
    if kind == "urlset":
        return _build(FORMAT_SITEMAP, None, _children(root, "url"), url, max_entries,
                      _sitemap_entry)  # fmt: skip
    if kind == "sitemapindex":
        sitemaps = [_child_text(sitemap, "loc") for sitemap in _children(root, "sitemap")]
        links = [link for link in (_http_link(url, s) for s in sitemaps[:max_entries]) if link]
        return Feed(FORMAT_SITEMAP_INDEX, None, [], subfeeds=links,
                    truncated=len(sitemaps) > max_entries, total_entries=len(sitemaps))  # fmt: skip
    if kind == "html":
        raise FeedError("html_not_feed", "an HTML page was served", _alternate_feeds(root, url))
    raise FeedError("unknown_format", f"root element <{kind}>")


EntryParser = Callable[[etree._Element, str], "FeedEntry | None"]


def _build(
    feed_format: str,
    title: str | None,
    items: list[etree._Element],
    base: str,
    max_entries: int,
    parse_entry: EntryParser,
) -> Feed:
    entries: list[FeedEntry] = []
    skipped = 0
    for item in items[:max_entries]:
        entry = parse_entry(item, base)
        if entry is None:
            skipped += 1
        else:
            entries.append(entry)
    return Feed(feed_format, title, entries, skipped=skipped, truncated=len(items) > max_entries,
                total_entries=len(items))  # fmt: skip


def _xml_base(element: etree._Element, url: str) -> str:
    base = element.get("{http://www.w3.org/XML/1998/namespace}base")
    try:
        return urljoin(url, base) if base else url
    except ValueError:  # a broken xml:base ("http://[oops") is ignored, not fatal
        return url


def _rss_entry(item: etree._Element, base: str) -> FeedEntry | None:
    guid_element = _child(item, "guid")
    guid = _text(guid_element)
    link = _child_text(item, "origlink", "link")  # feedburner's origLink is the real article
    if not link:
        atom_link = _child(item, "link")
        link = atom_link.get("href") if atom_link is not None else None
    if not link and guid and (guid_element.get("isPermaLink") or "true").lower() != "false":
        link = guid
    link = _http_link(base, link or item.get("{http://www.w3.org/1999/02/22-rdf-syntax-ns#}about"))
    if not link:
        return None
    published = parse_date(_child_text(item, "pubdate", "date", "published", "issued"))
    return FeedEntry(
        link=link,
        title=_child_text(item, "title"),
        guid=guid or link,
        published=published,
        updated=parse_date(_child_text(item, "updated", "modified")) or published,
        authors=_rss_authors(item),
        summary=_child_text(item, "description", "summary"),
    )


def _rss_authors(item: etree._Element) -> list[str]:
    names: list[str] = []
    for child in item:
        if _local(child) in ("creator", "author") and (text := _text(child)):
            # RSS 2.0 <author> is "email (Name)": keep the name.
            match = re.match(r"^\S+@\S+\s*\((.+)\)$", text)
            names.append(match.group(1) if match else text)
    return names[:MAX_AUTHORS_PER_ENTRY]


def _atom_entry(entry: etree._Element, base: str) -> FeedEntry | None:
    base = _xml_base(entry, base)
    link = _http_link(base, _atom_link(entry))
    if not link:
        return None
    authors = [_child_text(author, "name") for author in _children(entry, "author")]
    published = parse_date(_child_text(entry, "published", "issued", "created"))
    updated = parse_date(_child_text(entry, "updated", "modified"))
    return FeedEntry(
        link=link,
        title=_child_text(entry, "title"),
        guid=_child_text(entry, "id") or link,
        published=published or updated,
        updated=updated or published,
        authors=[name for name in authors if name][:MAX_AUTHORS_PER_ENTRY],
        summary=_child_text(entry, "summary", "content"),
    )


def _atom_link(entry: etree._Element) -> str | None:
    fallback = None
    for link in _children(entry, "link"):
        rel = (link.get("rel") or "alternate").lower()
        if rel == "alternate":
            if (link.get("type") or "text/html").lower() in ("text/html", "application/xhtml+xml"):
                return link.get("href")
            fallback = fallback or link.get("href")
    return fallback


def _sitemap_entry(url_element: etree._Element, base: str) -> FeedEntry | None:
    link = _http_link(base, _child_text(url_element, "loc"))
    if not link:
        return None
    news = _child(url_element, "news")
    title = _child_text(news, "title") if news is not None else None
    published = parse_date(_child_text(news, "publication_date")) if news is not None else None
    lastmod = parse_date(_child_text(url_element, "lastmod"))
    return FeedEntry(link=link, title=title, guid=link, published=published or lastmod,
                     updated=lastmod or published)  # fmt: skip


def _alternate_feeds(root: etree._Element, url: str) -> list[str]:
    """Feed links advertised by an HTML page (<link rel="alternate" type="...rss+xml">)."""
    links = []
    for link in root.iter("{*}link", "link"):
        rel = (link.get("rel") or "").lower().split()
        is_feed = (link.get("type") or "").lower() in _ALTERNATE_FEED_TYPES
        if "alternate" in rel and is_feed and (absolute := _http_link(url, link.get("href"))):
            links.append(absolute)
    return links


# --- JSON Feed -----------------------------------------------------------------------------


def _parse_json_feed(body: bytes, url: str, max_entries: int) -> Feed:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as error:
        raise FeedError("malformed_json", str(error)[:200]) from error
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise FeedError("unknown_format", "JSON without an items list")
    items = data["items"]
    entries: list[FeedEntry] = []
    skipped = 0
    for item in items[:max_entries]:
        entry = _json_entry(item, url) if isinstance(item, dict) else None
        if entry is None:
            skipped += 1
        else:
            entries.append(entry)
    title = _json_str(data.get("title"))
    return Feed(FORMAT_JSON_FEED, title, entries, skipped=skipped,
                truncated=len(items) > max_entries, total_entries=len(items))  # fmt: skip


def _json_str(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = clean_text(html_entities.unescape(_TAG.sub(" ", value)))
    return text[:MAX_FIELD_CHARS] if text else None


def _json_entry(item: dict[str, Any], base: str) -> FeedEntry | None:
    link = _http_link(base, _json_str(item.get("url")) or _json_str(item.get("external_url")))
    if not link:
        return None
    authors_value = item.get("authors") or ([item["author"]] if item.get("author") else [])
    authors = [
        name
        for author in (authors_value if isinstance(authors_value, list) else [])
        if isinstance(author, dict) and (name := _json_str(author.get("name")))
    ]
    published = parse_date(_json_str(item.get("date_published")))
    updated = parse_date(_json_str(item.get("date_modified")))
    return FeedEntry(
        link=link,
        title=_json_str(item.get("title")),
        guid=_json_str(str(item["id"])) if item.get("id") is not None else link,
        published=published or updated,
        updated=updated or published,
        authors=authors[:MAX_AUTHORS_PER_ENTRY],
        summary=_json_str(item.get("summary")) or _json_str(item.get("content_text")),
    )
