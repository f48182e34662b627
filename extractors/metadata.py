"""Article metadata from JSON-LD, OpenGraph and meta tags: title, authors, dates, language,
canonical URL, description and top image. Reads the tree; never modifies it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timezone
from typing import Any
from urllib.parse import urljoin, urlsplit

from dateutil import parser as date_parser
from lxml import etree

from extractors import safetext
from extractors.blocks import clean_text
from extractors.jsonld import article_objects, first_string, names_of
from extractors.tree import Element, itemprops, text_of

# Title separators between headline and site name: "Headline | Site", "Site - Headline".
_TITLE_SEPARATORS = re.compile(r"\s+(?:\||-|\u2013|\u2014|::|\u00b7|\u2022|\u00bb|/)\s+")
# A title segment shorter than this is a site name or a section, never the headline.
MIN_HEADLINE_CHARS = 15
MAX_TITLE_CHARS = 500
MAX_AUTHORS = 20
MAX_AUTHOR_CHARS = 120
MAX_DATE_CHARS = 100
_LANGUAGE = re.compile(r"^[a-zA-Z]{2,3}(?:[-_][a-zA-Z0-9]{2,8})*$")
# Timezone abbreviations seen in news dates; dateutil knows none of them without help.
_TZ_HOURS = {"EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8,
             "PDT": -7, "GMT": 0, "UTC": 0, "UT": 0, "Z": 0, "BST": 1, "CET": 1, "CEST": 2,
             "EET": 2, "EEST": 3, "IST": 5.5, "JST": 9, "AEST": 10, "AEDT": 11}  # fmt: skip
TZINFOS = {name: int(hours * 3600) for name, hours in _TZ_HOURS.items()}
_META_KEYS = ("property", "name", "itemprop", "http-equiv")
_NAME_PROPERTY = etree.XPath(".//*[@itemprop='name']")
# Dates before this are page furniture (copyright years, "founded in"), not publication dates.
EARLIEST_PUBLICATION_YEAR = 1990


@dataclass(slots=True)
class Metadata:
    title: str | None = None
    authors: list[str] = field(default_factory=list)
    published: datetime | None = None
    language: str | None = None
    canonical_url: str | None = None
    description: str | None = None
    image: str | None = None
    site_name: str | None = None
    page_type: str | None = None  # OpenGraph og:type, e.g. "article", "website", "video.other"
    robots: str | None = None  # the robots meta tag, e.g. "noindex, follow"


def _meta_index(tree: Element) -> dict[str, str]:
    """Meta tags keyed by lower-cased name/property/itemprop; the first occurrence wins.

    Metadata lives in <head>; microdata <meta> in the body only adds what the head lacks.
    """
    index: dict[str, str] = {}
    head = tree.find("head")
    scopes = [head] if head is not None else []
    body = tree.find("body")
    scopes.append(body if body is not None and head is not None else tree)
    for scope in scopes:
        for meta in scope.iter("meta"):
            content = meta.get("content")
            if content is None:
                continue
            content = content.strip()
            for attribute in _META_KEYS:
                key = meta.get(attribute)
                if key and (key := key.strip().lower()) not in index:
                    index[key] = content
    return index


def extract_metadata(
    tree: Element,
    url: str | None,
    jsonld: list[dict[str, Any]],
    properties: list[tuple[list[str], Element]] | None = None,
) -> Metadata:
    """The page's metadata. `properties` are its microdata properties (`tree.itemprops`), when
    the caller has them already."""
    meta = _meta_index(tree)
    articles = article_objects(jsonld)
    site_name = _site_name(meta, jsonld)
    metadata = Metadata(
        title=extract_title(tree, meta, articles, site_name),
        authors=_authors(tree, meta, articles, properties),
        published=_published(tree, meta, articles),
        language=_language(tree, meta, articles),
        canonical_url=_canonical(tree, meta, url),
        description=_first(meta.get("og:description"), meta.get("description"),
                           _jsonld_str(articles, "description")),
        image=_absolute(url, _first(meta.get("og:image"), meta.get("twitter:image"),
                                    _jsonld_str(articles, "image"))),
        site_name=site_name,
        page_type=meta.get("og:type"),
        robots=meta.get("robots"),
    )  # fmt: skip
    return _shown_as_one_line(metadata)


def _shown_as_one_line(metadata: Metadata) -> Metadata:
    """The texts of the metadata as one line each, without the bidirectional controls that
    would make them display as another text (extractors.safetext.single_line)."""
    return replace(
        metadata,
        title=_line(metadata.title),
        authors=[name for name in map(_line, metadata.authors) if name],
        description=_line(metadata.description),
        site_name=_line(metadata.site_name),
    )


def _line(text: str | None) -> str | None:
    return (safetext.single_line(text) or None) if text else None


def _first(*values: str | None) -> str | None:
    for value in values:
        if value and (cleaned := clean_text(value)):
            return cleaned[:MAX_TITLE_CHARS]
    return None


def _jsonld_str(articles: list[dict[str, Any]], key: str) -> str | None:
    for obj in articles:
        value = first_string(obj.get(key))
        if value:
            return value
    return None


def _absolute(base: str | None, link: str | None) -> str | None:
    if not link:
        return None
    try:
        absolute = urljoin(base, link) if base else link
        scheme = urlsplit(absolute).scheme
    except ValueError:  # "http://[broken" - a bad link in the metadata, not a bad article
        return None
    return absolute if scheme in ("http", "https") else None


def _site_name(meta: dict[str, str], jsonld: list[dict[str, Any]]) -> str | None:
    if meta.get("og:site_name"):
        return clean_text(meta["og:site_name"])
    for obj in jsonld:
        publisher = obj.get("publisher")
        names = names_of(publisher) if publisher else []
        if names:
            return clean_text(names[0])
    return None


def extract_title(
    tree: Element,
    meta: dict[str, str],
    articles: list[dict[str, Any]],
    site_name: str | None,
) -> str | None:
    """NewsFeed: a single <h1>, else a meta/OpenGraph title, else <title>; site name stripped."""
    headings = [clean_text(text_of(h1)) for h1 in tree.iter("h1")]
    headings = [heading for heading in headings if heading]
    if len(headings) == 1 and len(headings[0]) >= MIN_HEADLINE_CHARS:
        return headings[0][:MAX_TITLE_CHARS]
    title_element = next(tree.iter("title"), None)
    candidates = (
        _jsonld_str(articles, "headline"),
        meta.get("og:title"),
        meta.get("twitter:title"),
        meta.get("title"),
        text_of(title_element) if title_element is not None else None,
    )
    for candidate in candidates:
        if candidate and (title := strip_site_name(clean_text(candidate), site_name)):
            return title[:MAX_TITLE_CHARS]
    return headings[0][:MAX_TITLE_CHARS] if headings else None


def strip_site_name(title: str, site_name: str | None = None) -> str:
    """'First medal for Tanzania | BBC Sport' -> 'First medal for Tanzania'."""
    segments = [segment for segment in _TITLE_SEPARATORS.split(title) if segment]
    if len(segments) <= 1:
        return title
    if site_name:
        site = site_name.casefold()
        kept = [segment for segment in segments if segment.casefold() != site]
        if kept and len(kept) < len(segments):
            segments = kept
            if len(segments) == 1:
                return segments[0]
    # The headline is the longest segment; the site name and section are short.
    longest = max(segments, key=len)
    return longest if len(longest) >= MIN_HEADLINE_CHARS else title


def _authors(
    tree: Element,
    meta: dict[str, str],
    articles: list[dict[str, Any]],
    properties: list[tuple[list[str], Element]] | None = None,
) -> list[str]:
    names: list[str] = []
    for obj in articles:
        names.extend(names_of(obj.get("author")))
        if names:
            break
    if not names:
        for key in ("author", "article:author", "dc.creator", "byl", "parsely-author"):
            if meta.get(key):
                names.extend(re.split(r"\s*(?:,|\band\b|&)\s*", meta[key]))
                break
    if not names:
        names.extend(_microdata_authors(itemprops(tree) if properties is None else properties))
    if not names:
        names.extend(text_of(link) for link in tree.iter("a") if link.get("rel") == "author")
    return _unique_authors(names)


def _microdata_authors(properties: list[tuple[list[str], Element]]) -> list[str]:
    """Names of itemprop=author elements: their itemprop=name, content attribute, or text."""
    names = []
    authors = [element for kinds, element in properties if "author" in kinds]
    for element in authors[:MAX_AUTHORS]:
        named = _NAME_PROPERTY(element)
        source = named[0] if named else element
        names.append(source.get("content") or text_of(source))
    return names


def _unique_authors(names: list[str]) -> list[str]:
    seen: set[str] = set()
    authors: list[str] = []
    for name in names:
        name = re.sub(r"^\s*by\s+", "", clean_text(name), flags=re.I)
        key = name.casefold()
        if (
            name
            and len(name) <= MAX_AUTHOR_CHARS
            and not name.startswith("http")
            and key not in seen
        ):
            seen.add(key)
            authors.append(name)
    return authors[:MAX_AUTHORS]


def parse_date(value: str | None) -> datetime | None:
    """A timezone-aware datetime from a date string (naive values are taken as UTC)."""
    if not value or len(value) > MAX_DATE_CHARS:
        return None
    value = value.strip()
    try:
        # ISO 8601, what almost every page uses, parses fast; dateutil reads the rest.
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = date_parser.parse(value, tzinfos=TZINFOS)
        # ArithmeticError: OverflowError, and decimal's InvalidOperation on a field of 30 digits
        # and more ("21:666...6:00", dateutil reads minutes and seconds as a Decimal).
        except (ValueError, ArithmeticError, TypeError):
            return None
    if parsed.year < EARLIEST_PUBLICATION_YEAR:
        return None
    try:
        offset = parsed.utcoffset()
        # Plain fixed offsets pickle and compare cheaply; naive dates are taken as UTC.
        return parsed.replace(tzinfo=timezone(offset) if offset is not None else UTC)
    except ValueError:  # an offset of a day or more ("+7955"): no real date
        return None


def _time_datetime(tree: Element) -> str | None:
    """The datetime of the <time itemprop=datePublished>, else of the first <time>."""
    first = None
    for element in tree.iter("time"):
        value = element.get("datetime")
        if not value:
            continue
        if element.get("itemprop", "").lower() == "datepublished":
            return value
        first = first or value
    return first


def _published(
    tree: Element, meta: dict[str, str], articles: list[dict[str, Any]]
) -> datetime | None:
    candidates = [_jsonld_str(articles, "datePublished")]
    candidates += [meta.get(key) for key in (
        "article:published_time", "og:published_time", "datepublished", "pubdate",
        "publishdate", "date", "dc.date", "dc.date.issued", "sailthru.date", "parsely-pub-date",
    )]  # fmt: skip
    candidates.append(_time_datetime(tree))
    for candidate in candidates:
        if parsed := parse_date(candidate):
            return parsed
    return None


def _language(tree: Element, meta: dict[str, str], articles: list[dict[str, Any]]) -> str | None:
    candidates = (
        tree.get("lang"),
        tree.get("xml:lang"),
        _jsonld_str(articles, "inLanguage"),
        meta.get("og:locale"),
        meta.get("content-language"),
        meta.get("language"),
    )
    for candidate in candidates:
        if candidate and _LANGUAGE.match(candidate.strip()):
            return re.split(r"[-_]", candidate.strip())[0].lower()
    return None


def _canonical(tree: Element, meta: dict[str, str], url: str | None) -> str | None:
    head = tree.find("head")
    # The head first, where the link belongs: the body is looked through only when it is not.
    for scope in (head, tree) if head is not None else (tree,):
        for link in scope.iter("link"):
            is_canonical = "canonical" in link.get("rel", "").lower().split()
            if is_canonical and (absolute := _absolute(url, link.get("href", "").strip())):
                return absolute
    return _absolute(url, meta.get("og:url")) or url
