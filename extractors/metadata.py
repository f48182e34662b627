"""Article metadata from JSON-LD, OpenGraph and meta tags: title, authors, dates (published
and modified), language, canonical URL, description, top image, section, keywords and whether
the article is behind a paywall. Reads the tree; never modifies it.

The meta tags are read in one pass (`_meta_index`) and the JSON-LD objects are parsed once by the
caller; each field then looks them up, and only a field that finds nothing there walks the tree,
by tag (`tree.iter("time")`) or by attribute values read in C (`//a/@rel`, the class names
around the headline), never by an XPath that tests every element per field.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, timezone
from itertools import islice
from typing import Any
from urllib.parse import urljoin, urlsplit

from dateutil import parser as date_parser
from lxml import etree

from extractors import safetext
from extractors.blocks import clean_text
from extractors.bylines import MAX_AUTHORS, author_names, byline_names, unique_names
from extractors.jsonld import article_objects, first_string, names_of, types_of
from extractors.tree import (
    Element,
    TagIndex,
    elements,
    first_child,
    first_element,
    first_indexed,
    heading_text,
    itemprops,
    text_of,
)
from extractors.wordsearch import AnyWord

# Title separators between headline and site name: "Headline | Site", "Site - Headline".
_TITLE_SEPARATORS = re.compile(r"\s+(?:\||-|\u2013|\u2014|::|\u00b7|\u2022|\u00bb|/)\s+")
# A title segment shorter than this is a site name or a section, never the headline.
MIN_HEADLINE_CHARS = 15
MAX_TITLE_CHARS = 500
MAX_DATE_CHARS = 100
_LANGUAGE = re.compile(r"^[a-zA-Z]{2,3}(?:[-_][a-zA-Z0-9]{2,8})*$")
# Timezone abbreviations seen in news dates; dateutil knows none of them without help.
# "ET"/"PT" are what US pages print; taken as standard time (an hour off in summer at worst,
# never a day off for a date printed with its time).
_TZ_HOURS = {"EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8,
             "PDT": -7, "ET": -5, "CT": -6, "PT": -8, "GMT": 0, "UTC": 0, "UT": 0, "Z": 0,
             "BST": 1, "CET": 1, "CEST": 2, "MEZ": 1, "MESZ": 2, "EET": 2, "EEST": 3,
             "MSK": 3, "IST": 5.5, "SGT": 8, "HKT": 8, "JST": 9, "KST": 9, "AEST": 10,
             "AEDT": 11, "NZST": 12, "NZDT": 13}  # fmt: skip
TZINFOS = {name: int(hours * 3600) for name, hours in _TZ_HOURS.items()}
_META_KEYS = ("property", "name", "itemprop", "http-equiv")
# Meta tags a page repeats, one value each (every `article:tag` is a keyword): kept as lists.
_REPEATED_META = frozenset({"article:tag", "og:article:tag"})
# A date in an article's URL: /2024/03/05/, /2024-03-05/, /20240305/ (year 1990-2099).
_URL_DATE = re.compile(
    r"(?<![0-9])((?:199|20[0-9])[0-9])[/_-]?(0[1-9]|1[0-2])[/_-]?(0[1-9]|[12][0-9]|3[01])(?![0-9])"
)
MAX_KEYWORDS = 50
MAX_KEYWORD_CHARS = 100
MAX_SECTION_CHARS = 100
# JSON-LD values of isAccessibleForFree and the meta tags' paywall words, as booleans.
_FALSE_WORDS = frozenset({"false", "no", "0"})
_TRUE_WORDS = frozenset({"true", "yes", "1"})
# Open Graph's `article:content_tier`: "locked" and "metered" pages are behind a paywall.
_PAYWALL_TIERS = {"locked": True, "metered": True, "free": False}
# Breadcrumb entries that name the site, not a section.
_HOME_CRUMBS = frozenset({"home", "start", "startseite", "accueil", "inicio", "portada"})
_NAME_PROPERTY = etree.XPath(".//*[@itemprop='name']")
# The rel attributes of the page's links, read in C (a page has hundreds of links, few with a rel).
_LINK_RELS = etree.XPath("//a/@rel")
# The class attributes of a part of the page, read in C: testing them in Python costs a fifth of
# an XPath that tests each element's class with contains().
_CLASS_VALUES = etree.XPath("descendant-or-self::*/@class")  # elements only, as tree.itemprops
# Class names that mark a byline or an author's name (asked only of pages whose metadata names
# no author, and around the headline when the page has one).
_BYLINE_CLASS = AnyWord("byline", "author", "autor", "firma", "signature")
# Byline elements looked at, siblings after the headline looked at for a "By ..." line, and the
# elements that hold a whole page, not one headline's header or article.
MAX_BYLINE_ELEMENTS = 5
HEADLINE_SIBLINGS = 3
_PAGE_LEVEL = frozenset({"body", "html", "main"})
# Two dates of a page this close are one moment (written with and without seconds).
SAME_MOMENT = timedelta(minutes=1)
ZERO_OFFSET = timedelta(0)
QUARTER_HOUR = timedelta(minutes=15)
MAX_UTC_OFFSET = timedelta(hours=14)
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
    # `published` is only the day in the URL: no evidence on the page that it is dated.
    dated_by_url: bool = False
    # `published` is only the first of a list of <time> elements (a teaser's date on an index
    # page): no evidence that the page itself is dated.
    dated_by_list_time: bool = False
    modified: datetime | None = None
    section: str | None = None
    keywords: list[str] = field(default_factory=list)
    paywalled: bool | None = None  # None: the page says nothing either way
    image_caption: str | None = None  # the lead image's caption and credit, when JSON-LD has them
    image_credit: str | None = None


@dataclass(slots=True)
class _Meta:
    """The page's meta tags: the first value of each key, and every value of repeated ones."""

    first: dict[str, str]
    repeated: dict[str, list[str]]

    def get(self, key: str) -> str | None:
        return self.first.get(key)


def _meta_index(tree: Element, index: TagIndex | None = None) -> _Meta:
    """Meta tags keyed by lower-cased name/property/itemprop; the first occurrence wins, and
    the tags a page repeats (`article:tag`) keep every value.

    Metadata lives in <head>; microdata <meta> in the body only adds what the head lacks.
    """
    first: dict[str, str] = {}
    repeated: dict[str, list[str]] = {}
    head = first_child(tree, "head")
    scopes = [head] if head is not None else []
    body = first_child(tree, "body")
    scopes.append(body if body is not None and head is not None else tree)
    for meta in _metas_in(tree, scopes, index):
        # All its attributes read at once (a <meta> has two or three), then looked up in a dict:
        # each `get` from the element searched its attributes again.
        attributes = dict(meta.items())
        content = attributes.get("content")
        if content is None:
            continue
        content = content.strip()
        for attribute in _META_KEYS:
            key = attributes.get(attribute)
            if not key:
                continue
            key = key.strip().lower()
            if key not in first:
                first[key] = content
            if key in _REPEATED_META:
                repeated.setdefault(key, []).append(content)
    return _Meta(first, repeated)


def _metas_in(tree: Element, scopes: list[Element], index: TagIndex | None) -> Iterator[Element]:
    """The <meta> elements of each scope in turn (`index`: the page's elements by tag)."""
    if index is None:
        for scope in scopes:
            yield from scope.iter("meta")
        return
    # One walk up from each indexed <meta> sorts it into its scope (the scopes below the root are
    # the head and the body, never nested in each other), where asking each scope in turn walked
    # up from every <meta> once per scope.
    below: dict[Element, list[Element]] = {scope: [] for scope in scopes if scope is not tree}
    if below:
        for meta in index.get("meta"):
            # Most <meta>s are children of <head>: sorted without a walk up.
            found = below.get(meta.getparent())  # type: ignore[arg-type]
            if found is not None:
                found.append(meta)
                continue
            for node in meta.iterancestors():
                found = below.get(node)
                if found is not None:
                    found.append(meta)
                    break
    for scope in scopes:
        yield from index.get("meta") if scope is tree else below[scope]


def extract_metadata(
    tree: Element,
    url: str | None,
    jsonld: list[dict[str, Any]],
    properties: list[tuple[list[str], Element]] | None = None,
    index: TagIndex | None = None,
) -> Metadata:
    """The page's metadata. `properties` are its microdata properties (`tree.itemprops`) and
    `index` its elements by tag (`extractors.tree.TagIndex`), when the caller has them already."""
    meta = _meta_index(tree, index)
    articles = article_objects(jsonld)
    site_name = _site_name(meta, jsonld)
    times = _time_values(tree, index)
    lead = _lead_image(articles)
    marked = _microdata_published(itemprops(tree) if properties is None else properties)
    published = _published(meta, articles, times, marked)
    metadata = Metadata(
        title=extract_title(tree, meta, articles, site_name, index),
        authors=_authors(tree, meta, articles, jsonld, properties, index),
        published=published or url_date(url),
        language=_language(tree, meta, articles),
        canonical_url=_canonical(tree, meta, url, index),
        description=_first(meta.get("og:description"), meta.get("description"),
                           _jsonld_str(articles, "description")),
        image=_absolute(url, _first(meta.get("og:image"), meta.get("twitter:image"),
                                    first_string(lead))),
        site_name=site_name,
        page_type=meta.get("og:type"),
        robots=meta.get("robots"),
        dated_by_url=published is None,
        dated_by_list_time=published is not None
        and _dated_by_list_time(meta, articles, times, marked),
        modified=_modified(meta, articles, times),
        section=_section(meta, articles, jsonld, site_name),
        keywords=_keywords(meta, articles),
        paywalled=_paywalled(meta, articles),
        image_caption=_line(_jsonld_text(lead, "caption")),
        image_credit=_line(_image_credit(lead)),
    )  # fmt: skip
    return _shown_as_one_line(metadata)


def _shown_as_one_line(metadata: Metadata) -> Metadata:
    """The texts of the metadata as one line each, without the bidirectional controls that
    would make them display as another text (extractors.safetext.single_line)."""
    title, description = _line(metadata.title), _line(metadata.description)
    site_name, section = _line(metadata.site_name), _line(metadata.section)
    authors = [name for name in map(_line, metadata.authors) if name]
    keywords = [word for word in map(_line, metadata.keywords) if word]
    if (
        title == metadata.title
        and description == metadata.description
        and site_name == metadata.site_name
        and section == metadata.section
        and authors == metadata.authors
        and keywords == metadata.keywords
    ):
        return metadata  # the common page: nothing to change, and no copy (`replace` is slow)
    return replace(
        metadata,
        title=title,
        authors=authors,
        description=description,
        site_name=site_name,
        section=section,
        keywords=keywords,
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


# An absolute http(s) URL that `urljoin` gives back as it is, whatever the base: a lower-case
# scheme, a host of the ASCII characters RFC 3986 allows there (no brackets: `urlsplit` checks the
# IPv6 form, and non-ASCII hosts), and no part that parsing and writing out again would change
# (whitespace or control characters, which `urlsplit` strips; a `;` in the path, split off as
# parameters; an empty query or fragment, dropped).
_PLAIN_ABSOLUTE = re.compile(
    r"https?://[A-Za-z0-9._~%!$&'()*+,=:@-]+(?:/[^?#;\s\x00-\x1f]*)?"
    r"(?:\?[^#\s\x00-\x1f]+)?(?:#[^\s\x00-\x1f]+)?"
)


def _absolute(base: str | None, link: str | None) -> str | None:
    if not link:
        return None
    if _PLAIN_ABSOLUTE.fullmatch(link) and (not base or _PLAIN_ABSOLUTE.fullmatch(base)):
        # urljoin returns such a link unchanged, or parsed and written out again, which gives it
        # back as it is; a base of the same form cannot make it raise (most metadata links and
        # page addresses: urljoin costs ten times the match).
        return link
    try:
        absolute = urljoin(base, link) if base else link
        scheme = urlsplit(absolute).scheme
    except ValueError:  # "http://[broken" - a bad link in the metadata, not a bad article
        return None
    return absolute if scheme in ("http", "https") else None


def _site_name(meta: _Meta, jsonld: list[dict[str, Any]]) -> str | None:
    if site_name := meta.get("og:site_name"):
        return clean_text(site_name)
    for obj in jsonld:
        publisher = obj.get("publisher")
        names = names_of(publisher) if publisher else []
        if names:
            return clean_text(names[0])
    return None


def extract_title(
    tree: Element,
    meta: _Meta,
    articles: list[dict[str, Any]],
    site_name: str | None,
    index: TagIndex | None = None,
) -> str | None:
    """NewsFeed: a single <h1>, else a meta/OpenGraph title, else <title>; site name stripped."""
    headings = [clean_text(heading_text(h1)) for h1 in elements(tree, "h1", index)]
    headings = [heading for heading in headings if heading]
    if len(headings) == 1 and len(headings[0]) >= MIN_HEADLINE_CHARS:
        return headings[0][:MAX_TITLE_CHARS]
    title_element = first_element(tree, "title")
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
    meta: _Meta,
    articles: list[dict[str, Any]],
    jsonld: list[dict[str, Any]],
    properties: list[tuple[list[str], Element]] | None = None,
    index: TagIndex | None = None,
) -> list[str]:
    """Authors from the most explicit source that names any: JSON-LD `author` (objects, arrays,
    references to a Person elsewhere in the @graph), meta tags, microdata, rel=author links.
    Every value is read as a byline (`extractors.bylines`): roles, "By" and places go, and
    "A and B" is two names."""
    for obj in articles:
        names = _byline_names(names_of(_resolved(obj.get("author"), jsonld)))
        if names:
            return names
    for key in ("author", "article:author", "dc.creator", "dcterms.creator", "byl",
                "parsely-author", "sailthru.author", "citation_author"):  # fmt: skip
        value = meta.get(key)
        if value and not value.startswith("http") and (names := _byline_names([value])):
            return names
    names = _byline_names(_microdata_authors(itemprops(tree) if properties is None else properties))
    if names:
        return names
    links = [rel.getparent() for rel in _LINK_RELS(tree) if "author" in rel.lower().split()]
    names = _byline_names([text_of(link) for link in links])
    return names or _visible_byline(tree, index)


def _visible_byline(tree: Element, index: TagIndex | None = None) -> list[str]:
    """The names in the byline the reader sees, looked for around the headline (in the element
    that holds it, its header or article): an element the page names a byline or author (not a
    comment's), else a "By ..." line among the first siblings after the headline."""
    headline = first_indexed(tree, "h1", index)
    if headline is None:  # no headline to find the byline by: not worth a walk of the page
        return []
    scope = headline.getparent()
    # The headline's own header or article, not the whole page (a headline right in <body>).
    if scope is None or scope.tag in _PAGE_LEVEL:
        marked = []
    else:
        marked = [
            value.getparent()
            for value in _CLASS_VALUES(scope)
            if _BYLINE_CLASS.search(value) and "comment" not in value.lower()
        ]
    for element in marked[:MAX_BYLINE_ELEMENTS]:
        if names := byline_names(text_of(element), marked=True):
            return unique_names(names)
    for sibling in islice(headline.itersiblings(), HEADLINE_SIBLINGS):
        if isinstance(sibling.tag, str) and (names := byline_names(text_of(sibling), marked=False)):
            return unique_names(names)
    return []


def _byline_names(values: list[str]) -> list[str]:
    return unique_names([name for value in values[:MAX_AUTHORS] for name in author_names(value)])


def _resolved(value: Any, jsonld: list[dict[str, Any]]) -> Any:
    """An author given as {"@id": ...} only, replaced by the object of that @id in the page's
    JSON-LD (a Person listed once in the @graph and referred to by the article)."""
    if isinstance(value, list):
        return [_resolved(item, jsonld) for item in value[:MAX_AUTHORS]]
    if isinstance(value, dict) and "name" not in value and isinstance(value.get("@id"), str):
        for obj in jsonld:
            if obj is not value and obj.get("@id") == value["@id"] and "name" in obj:
                return obj
    return value


def _microdata_authors(properties: list[tuple[list[str], Element]]) -> list[str]:
    """Names of itemprop=author elements: their itemprop=name, content attribute, or text."""
    names = []
    authors = [element for kinds, element in properties if "author" in kinds]
    for element in authors[:MAX_AUTHORS]:
        named = _NAME_PROPERTY(element)
        source = named[0] if named else element
        names.append(source.get("content") or text_of(source))
    return names


def parse_date(value: str | None) -> datetime | None:
    """A timezone-aware datetime from a date string (naive values are taken as UTC)."""
    parsed = _parsed(value)
    if parsed is None:
        return None
    try:
        offset = parsed.utcoffset()
        # Plain fixed offsets pickle and compare cheaply; naive dates are taken as UTC.
        return parsed.replace(tzinfo=timezone(offset) if offset is not None else UTC)
    except ValueError:  # an offset of a day or more ("+7955"): no real date
        return None


def _parsed(value: str | None) -> datetime | None:
    """The datetime a date string says, naive when it gives no zone."""
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
    return parsed if parsed.year >= EARLIEST_PUBLICATION_YEAR else None


@dataclass(slots=True)
class _Times:
    """The datetimes of the page's <time> elements: the one marked as the publication date,
    the one marked as the modification date, and the first one."""

    published: str | None = None
    modified: str | None = None
    first: str | None = None
    count: int = 0  # the <time> elements with a datetime


def _time_values(tree: Element, index: TagIndex | None = None) -> _Times:
    """The <time> elements' values (found by tag, in C)."""
    times = _Times()
    for element in elements(tree, "time", index):
        value = element.get("datetime")
        if not value:
            continue
        marks = f"{element.get('itemprop', '')} {element.get('class', '')}".lower()
        if times.published is None and (
            "datepublished" in marks or "publish" in marks or element.get("pubdate") is not None
        ):
            times.published = value
        elif times.modified is None and ("datemodified" in marks or "updated" in marks):
            times.modified = value
        times.first = times.first or value
        times.count += 1
    if times.published is None:
        times.published = _hatom_published(tree, index)
    return times


def _hatom_published(tree: Element, index: TagIndex | None) -> str | None:
    """The publication date of the hAtom microformat: an `<abbr class="published">` whose title
    is the machine-readable date (blog engines wrote it before `<time>` existed)."""
    for element in elements(tree, "abbr", index):
        if "published" in (element.get("class") or "").split() and element.get("title"):
            return element.get("title")
    return None


# Meta tags of the publication date, the most specific first.
_PUBLISHED_META = (
    "article:published_time", "og:published_time", "og:article:published_time",
    "datepublished", "article.published", "pubdate", "publishdate", "publish-date",
    "dcterms.created", "dcterms.issued", "dc.date.issued", "dc.date.created", "dc.date", "date",
    "sailthru.date", "parsely-pub-date", "citation_publication_date", "article:published",
)  # fmt: skip
_MODIFIED_META = (
    "article:modified_time", "og:updated_time", "og:article:modified_time", "datemodified",
    "article.updated", "dcterms.modified", "dc.date.modified", "last-modified", "lastmod",
)  # fmt: skip


def _microdata_published(properties: list[tuple[list[str], Element]]) -> str | None:
    """The machine-readable value (`content`) of the first microdata `datePublished` set on an
    element that is neither a `<meta>` nor a `<time>` (those are read as such): schema.org's own
    examples write `<span itemprop="datePublished" content="2011-11-14">14 novembre 2011</span>`."""
    for names, element in properties:
        if "datepublished" in names and element.tag not in ("meta", "time"):
            value = element.get("content")
            if value:
                return value
    return None


def _published(
    meta: _Meta, articles: list[dict[str, Any]], times: _Times, marked: str | None = None
) -> datetime | None:
    """The publication date: JSON-LD's, the meta tags', a `<time>` marked as published, a
    microdata `datePublished` (`marked`), the first `<time>`, JSON-LD's creation date."""
    candidates = [_jsonld_str(articles, "datePublished")]
    candidates += [meta.get(key) for key in _PUBLISHED_META]
    candidates += [times.published, marked, times.first, _jsonld_str(articles, "dateCreated")]
    for index, candidate in enumerate(candidates):
        if parsed := parse_date(candidate):
            if parsed.utcoffset() == ZERO_OFFSET:
                return _in_local_time(parsed, candidates[index + 1 :])
            return parsed
    return None


# A page with this many <time> elements, none of them marked as the publication date, lists
# dated items (teasers, notices, posts): its first <time> is the first item's, not the page's.
MIN_LISTED_TIMES = 4


def _dated_by_list_time(
    meta: _Meta, articles: list[dict[str, Any]], times: _Times, marked: str | None = None
) -> bool:
    """Whether the publication date was read only from the first of MIN_LISTED_TIMES or more
    unmarked <time> elements: no JSON-LD, meta or microdata date and no <time> marked as
    published."""
    if times.count < MIN_LISTED_TIMES or parse_date(times.published) or parse_date(marked):
        return False
    declared = [_jsonld_str(articles, "datePublished")] + [meta.get(key) for key in _PUBLISHED_META]
    return not any(map(parse_date, declared))


def _iso_datetime(value: str | None) -> datetime | None:
    """An ISO 8601 date and time, naive when it gives no zone (no dateutil: the other dates of
    a page are only compared, and those worth comparing are written in ISO 8601)."""
    if not value or len(value) > MAX_DATE_CHARS:
        return None
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None


def _in_local_time(moment: datetime, others: list[str | None]) -> datetime:
    """A UTC publication time, in the publisher's own zone when another date on the page gives
    the same moment in it: with its offset ("2019-11-20T01:07:00-05:00" for 06:07Z), or as a
    local time without one, the same minutes and seconds a whole number of quarter hours away
    ("2019-11-19 20:59:46" for 02:59:46Z is UTC-6). The publication day readers see is the
    local one; the moment stays the same."""
    for value in others:
        other = _iso_datetime(value)
        if other is None:
            continue
        offset = other.utcoffset() if other.tzinfo is not None else None
        if offset is not None:
            if offset != ZERO_OFFSET and abs(other - moment) <= SAME_MOMENT:
                return moment.astimezone(timezone(offset))
            continue
        shift = other.replace(tzinfo=UTC) - moment
        if (
            shift
            and abs(shift) <= MAX_UTC_OFFSET
            and shift % QUARTER_HOUR == ZERO_OFFSET
            and other.second == moment.second
        ):
            return moment.astimezone(timezone(shift))
    return moment


def _modified(meta: _Meta, articles: list[dict[str, Any]], times: _Times) -> datetime | None:
    candidates = [_jsonld_str(articles, "dateModified"), times.modified]
    candidates += [meta.get(key) for key in _MODIFIED_META]
    for candidate in candidates:
        if parsed := parse_date(candidate):
            return parsed
    return None


def url_date(url: str | None) -> datetime | None:
    """The day in an article's URL (/2024/03/05/, /2024-03-05-, /20240305/), midnight UTC: a
    last resort, as precise as the URL."""
    if not url:
        return None
    try:
        path = urlsplit(url).path
    except ValueError:
        return None
    match = _URL_DATE.search(path)
    if match is None:
        return None
    year, month, day = (int(part) for part in match.groups())
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # 2023/02/30
        return None


def _section(
    meta: _Meta, articles: list[dict[str, Any]], jsonld: list[dict[str, Any]], site: str | None
) -> str | None:
    """articleSection, else the article:section meta tag, else the breadcrumb's deepest entry
    above the article itself."""
    for candidate in (_jsonld_str(articles, "articleSection"), meta.get("article:section"),
                      meta.get("parsely-section"), _breadcrumb_section(jsonld, site)):  # fmt: skip
        if candidate and (section := clean_text(candidate)) and len(section) <= MAX_SECTION_CHARS:
            return section
    return None


def _breadcrumb_section(jsonld: list[dict[str, Any]], site: str | None) -> str | None:
    for obj in jsonld:
        if "breadcrumblist" not in types_of(obj):
            continue
        items = obj.get("itemListElement")
        if not isinstance(items, list):
            continue
        crumbs = [_crumb_name(item) for item in items if isinstance(item, dict)]
        crumbs = [name for name in crumbs if name and not _is_home(name, site)]
        # The last crumb is the article itself when the list has more than one section.
        if len(crumbs) >= 2:
            return crumbs[-2]
        return crumbs[0] if crumbs and _has_item_link(items) else None
    return None


def _crumb_name(item: dict[str, Any]) -> str | None:
    name = item.get("name")
    if not isinstance(name, str):
        inner = item.get("item")
        name = inner.get("name") if isinstance(inner, dict) else None
    return clean_text(name) if isinstance(name, str) else None


def _has_item_link(items: list[Any]) -> bool:
    """Whether every crumb links somewhere (then a single crumb is a section, not the page)."""
    return all(isinstance(item, dict) and item.get("item") for item in items)


def _is_home(name: str, site: str | None) -> bool:
    key = name.casefold()
    return key in _HOME_CRUMBS or (site is not None and key == site.casefold())


def _keywords(meta: _Meta, articles: list[dict[str, Any]]) -> list[str]:
    """JSON-LD keywords, else news_keywords, else every article:tag, else the keywords meta."""
    for obj in articles:
        value = obj.get("keywords")
        if isinstance(value, list):
            words = [word for item in value[:MAX_KEYWORDS] for word in _split_keywords(item)]
        else:
            words = _split_keywords(value)
        if words:
            return unique_keywords(words)
    for values in _meta_keywords(meta):
        if values:
            return unique_keywords(values)
    return []


def _meta_keywords(meta: _Meta) -> Iterator[list[str]]:
    """The keywords of news_keywords, of every article:tag, of the keywords meta, in turn: each
    split only when the ones before it hold none."""
    yield _split_keywords(meta.get("news_keywords"))
    yield [word for tag in meta.repeated.get("article:tag", []) for word in _split_keywords(tag)]
    yield _split_keywords(meta.get("keywords"))


def _split_keywords(value: Any) -> list[str]:
    """The keywords of a list in one string, set apart by commas, semicolons or bars ("budget,
    parliament; taxes | EU")."""
    if isinstance(value, dict):
        value = value.get("name")
    if not isinstance(value, str):
        return []
    # Split in C, each separator read as a comma: the text is clean (single spaces, none at its
    # ends), so a space left by a separator is at a word's end. (A pattern opening with the
    # spaces around a separator was tried at each character.)
    text = clean_text(value).replace(";", ",").replace("|", ",")
    return [word for part in text.split(",") if (word := part.strip())]


def unique_keywords(words: list[str]) -> list[str]:
    """Distinct keywords in order (case-insensitively), none too long, at most MAX_KEYWORDS."""
    seen: set[str] = set()
    kept = []
    for word in words:
        key = word.casefold()
        if key not in seen and len(word) <= MAX_KEYWORD_CHARS:
            seen.add(key)
            kept.append(word)
    return kept[:MAX_KEYWORDS]


def _paywalled(meta: _Meta, articles: list[dict[str, Any]]) -> bool | None:
    """True when the page marks its content as not free (schema.org isAccessibleForFree false,
    on the article or on a part of it: Google's paywalled-content markup; Open Graph's
    content_tier locked or metered), False when it marks it free, None when it says nothing."""
    for obj in articles:
        found = _free_flag(obj.get("isAccessibleForFree"))
        parts = obj.get("hasPart")
        for part in parts if isinstance(parts, list) else [parts]:
            if isinstance(part, dict) and _free_flag(part.get("isAccessibleForFree")) is False:
                found = False
        if found is not None:
            return not found
    found = _free_flag(meta.get("isaccessibleforfree"))
    if found is not None:
        return not found
    return _PAYWALL_TIERS.get((meta.get("article:content_tier") or "").strip().lower())


def _free_flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower().rsplit("/", 1)[-1]  # "https://schema.org/False"
        if word in _FALSE_WORDS:
            return False
        if word in _TRUE_WORDS:
            return True
    return None


def _lead_image(articles: list[dict[str, Any]]) -> Any:
    """The article's JSON-LD `image` (a URL, an ImageObject, or a list of them: the first)."""
    for obj in articles:
        image = obj.get("image")
        if isinstance(image, list):
            image = image[0] if image else None
        if image:
            return image
    return None


def _jsonld_text(value: Any, key: str) -> str | None:
    text = value.get(key) if isinstance(value, dict) else None
    return clean_text(text) if isinstance(text, str) and text.strip() else None


def _image_credit(image: Any) -> str | None:
    return (
        _jsonld_text(image, "creditText")
        or _jsonld_names(image, "copyrightHolder")
        or _jsonld_names(image, "author")
    )


def _jsonld_names(value: Any, key: str) -> str | None:
    names = names_of(value.get(key)) if isinstance(value, dict) else []
    return ", ".join(clean_text(name) for name in names) or None


def _language(tree: Element, meta: _Meta, articles: list[dict[str, Any]]) -> str | None:
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


def _canonical(
    tree: Element, meta: _Meta, url: str | None, index: TagIndex | None = None
) -> str | None:
    head = first_child(tree, "head")
    # The head first, where the link belongs: the body is looked through only when it is not.
    for scope in (head, tree) if head is not None else (tree,):
        links = scope.iter("link") if index is None or scope is head else index.get("link")
        for link in links:
            is_canonical = "canonical" in link.get("rel", "").lower().split()
            if is_canonical and (absolute := _absolute(url, link.get("href", "").strip())):
                return absolute
    return _absolute(url, meta.get("og:url")) or url
