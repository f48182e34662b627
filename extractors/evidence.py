"""Evidence that a page is not an article: the only grounds, besides finding no text at all, on
which the chain returns NULL for a page that has a body.

A body is never dropped because one heuristic found little (the cascade asks others first). It
is dropped when the page positively looks like something else:

* `listing` — an index, section, tag or search page: the body is a run of short texts, each
  set apart by a headline link of its own (teasers), or it spans several `<article>` cards;
* `listing` also — the body is one card of a list of teaser cards (a section front whose
  longest summary reads like a short article);
* `paywall` — a stub: the publisher says the page is not free (schema.org `isAccessibleForFree`
  false) or a paywall element sits by the body, and the body is one lede paragraph; or a paywall
  element sits right by a body no longer than a teaser of a few paragraphs (the wall cut it);
* `video` — a video page (OpenGraph `video.*`, a schema.org VideoObject and no article type, or
  a WordPress post whose format is video or audio) whose text is no longer than a description;
* `listing` also — the body is a list of priced items (a shop's product grid, classified ads),
  or is mostly a list of teaser cards of one template (notices, each a linked name and a line);
* `listing` also — a body too short for an article, set out as a post, whose container read
  whole is figures without prose: a data page's status line or note kept without its rows;
* `gallery` — a body that is mostly image captions, unless the page sets out prose longer than
  a teaser's summary above them as its post (a photo essay);
* `page_type` — the publisher declares a page type that is not an article (a collection,
  search results, a profile, a contact or checkout page, a home, a hotel, a vehicle, an event,
  a FAQ) and the body is not long;
* `listing`, `page_type` also — records of one template, an order form, a page its own footer
  bar links, an undated short page at a site page's address, linked entries, a notice and its
  buttons with no site around them (`extractors.page_kinds`).

Each rule reads signals a publisher writes for machines (schema.org, OpenGraph), or the shape of
the body (headline links, cards, captions), never its wording, so it holds in any language.
Pure functions over the shared parse; they never modify it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlsplit

from lxml import etree

from extractors.article import (
    CAPTION,
    LIST_ITEM,
    MIN_BODY_CHARS,
    QUOTE,
    TEXT_KINDS,
    Block,
    is_too_short,
    reading_length,
    running_text,
)
from extractors.blocks import (
    HEADING_TAGS,
    Classifier,
    TextBlock,
    clean_text_within,
    tag_kind,
    text_blocks,
    visible_chars,
)
from extractors.boilerplate import MAX_BLOCK_LINK_DENSITY, WEB_HOST_PREFIX
from extractors.jsonld import ARTICLE_TYPES, types_of
from extractors.page_kinds import (
    MAX_PRODUCT_BODY_CHARS,
    MAX_RECORDS_BODY_CHARS,
    MAX_UNDATED_PAGE_CHARS,
    asks_under_headline,
    body_chars,
    data_chars,
    first_of_each_tag,
    form_outweighs_body,
    has_order_form,
    in_video_section,
    is_data_body,
    is_figures_page,
    is_linked_entries,
    is_notice_with_choices,
    is_site_address,
    is_site_page,
    names_http_error,
    names_item,
    names_site_page,
    names_topic_page,
    names_weather_page,
    records_share,
    shows_none_of_address,
    shows_price,
    squeezed,
    teasers_beside,
)
from extractors.paragraphs import CP, ends_as_sentence, holds_sentences
from extractors.tree import (
    Element,
    children_tagged,
    document_title,
    first_child,
    itemprop_values,
    links_away,
    text_of,
)

NULL_LISTING = "listing"
NULL_PAYWALL = "paywall"
NULL_VIDEO = "video"
NULL_GALLERY = "gallery"
NULL_PAGE_TYPE = "page_type"
NON_ARTICLE_REASONS = (NULL_LISTING, NULL_PAYWALL, NULL_VIDEO, NULL_GALLERY, NULL_PAGE_TYPE)

# Schema.org types that declare a page which is not an article.
NON_ARTICLE_TYPES = frozenset(
    {
        "collectionpage", "searchresultspage", "profilepage", "contactpage", "checkoutpage",
        "itempage", "imagegallery", "mediagallery", "videogallery", "realestatelisting",
        "product", "productgroup", "jobposting", "itemlist",
        # A FAQ or Q&A page (help centres, forums); an explainer article that adds FAQ markup
        # declares its article type too.
        "faqpage", "qapage",
        # A forum thread (Discourse, XenForo and Google's forum markup): readers' posts.
        "discussionforumposting",
        # What is for sale or to let, by itself: an offer, a home, a room, a vehicle.
        "offer", "aggregateoffer", "offercatalog", "residence", "singlefamilyresidence",
        "apartmentcomplex", "gatedresidencecommunity", "accommodation", "apartment", "house",
        "room", "hotelroom", "suite", "campingpitch", "lodgingbusiness", "hotel", "hostel",
        "motel", "resort", "bedandbreakfast", "campground", "vacationrental", "vehicle", "car",
        "motorcycle", "busorcoach", "motorizedbicycle",
        # An app's or a show's own page: an app store landing, a podcast's or a programme's
        # page with its episodes (an episode's article, or a review, declares its article type).
        "softwareapplication", "mobileapplication", "webapplication", "videogame",
        "podcastseries", "radioseries", "tvseries",
        # A dataset's page: its figures and how to download them, however they are described.
        "dataset", "datacatalog",
    }
)  # fmt: skip
# Schema.org types of a media item: the page of a video, a recording, a podcast's episode.
MEDIA_ITEM_TYPES = frozenset({"videoobject", "audioobject", "podcastepisode"})
# Schema.org names every kind of event "...Event" (MusicEvent, SportsEvent, ScreeningEvent):
# an event's own page; an article about one declares its article type beside it.
NON_ARTICLE_TYPE_SUFFIXES = ("event",)
# OpenGraph types that declare a page which is not an article (a person's profile, a product).
NON_ARTICLE_OG_TYPES = frozenset({"profile", "product", "books.author"})
# OpenGraph type families that do: every `product.*` (product.group, product.item), whatever
# the shop system writes after the dot.
NON_ARTICLE_OG_FAMILIES = frozenset({"product"})
# Schema.org types that say "article" (WebPage and CreativeWork say nothing either way).
ARTICLE_ONLY_TYPES = ARTICLE_TYPES - {"webpage", "creativework"}
# The dates an article object declares of itself (an article type on an object with none, on a
# page nothing else dates, is a template's stamp: `page_signals`).
ARTICLE_DATE_KEYS = ("datePublished", "dateCreated", "dateModified")
# A headline link: a block that is (nearly) all link text with at least this many words.
HEADLINE_LINK_WORDS = 3
HEADLINE_LINK_DENSITY = 0.8
# A listing has at least this many headline links in its body region ...
MIN_TEASERS = 4
# A teaser's summary is cut short with an ellipsis ("...", "…", "[…]"); an article's paragraphs
# end their sentences. A body of at least MIN_TEASERS paragraphs so cut, this share of them or
# more, is a page of excerpts (an archive's page, its headline links the cleaning left out),
# in any language. Of the three benchmark sets' 2,183 articles, one has two such paragraphs in
# half (of four), none three.
CUT_SHARE = 0.5
ELLIPSES = ("...", "\u2026")
_AFTER_ELLIPSIS = " \t\n])}\u00bb"  # the bracket of "[…]", a closing guillemet
# ... and less than this share of its text in runs (between two headline links) longer than a
# teaser's summary: an article has long runs of prose, a listing a summary per teaser.
TEASER_SUMMARY_CHARS = 300
MAX_LONG_RUN_SHARE = 0.5
# ... and no run longer than two summaries (an article's text, even cut by comments, has one).
MAX_TEASER_RUN_CHARS = 2 * TEASER_SUMMARY_CHARS
# A body spanning this many <article> elements, that hold this share of its words together and
# none of them this share alone, is a list of cards.
MIN_CARDS = 3
MIN_CARDS_SHARE = 0.5
MAX_CARD_SHARE = 0.5
# On a paywalled page, a body of one paragraph (no longer than this) is the lede before the wall:
# a stub. Two paragraphs or more are what the publisher chose to show: an article, if a short one
# (the article-extraction benchmark scores such pages as articles) ...
PAYWALL_STUB_PARAGRAPHS = 1
PAYWALL_STUB_CHARS = 1200
# ... unless a paywall element stands right by them: then the wall cut the text after a lede of
# at most this many paragraphs. The page's not-free flag alone does not say that: publishers set
# it on pages whose whole text is in the HTML for crawlers.
WALLED_TEASER_PARAGRAPHS = 3
# Paragraphs are blocks of running text of at least Algorithm 2.1's CP characters: headings,
# kickers, bylines and dates around a lede are not paragraphs of it.
LEDE_KINDS = TEXT_KINDS | {QUOTE, LIST_ITEM}
# A card list: at least MIN_CARDS siblings of one template, each with a linked heading and no
# more text than this (a teaser and its summary; an article, even one of several appended by an
# endless page, is longer). The body's container and this many ancestors are tried.
MAX_CARD_CHARS = 1000
CARD_LEVELS = 3
# A list of priced items: at least MIN_TEASERS of the body's paragraphs show a price, they are
# at least this share of its paragraphs, and none is longer than MAX_ITEM_CHARS (a product tile
# or a classified ad is a line or two; an article about prices has paragraphs of prose).
PRICED_SHARE = 0.5
MAX_ITEM_CHARS = 4 * CP
# A body no longer than this is asked whether teaser cards of one template inside its container
# hold at least MIN_CARDS_SHARE of its text (a longer body is an article beside its cards).
MAX_CARD_LIST_BODY_CHARS = 2000
# A card is in the body when its first characters are (spaces aside: the methods join a card's
# lines differently).
CARD_LEAD_CHARS = 20
# On a video page, a body no longer than this is the video's description ...
VIDEO_STUB_CHARS = 1000
# ... unless it tells the news in this many paragraphs of prose (CP characters or more, ending as
# sentences end): a description is a blurb of a paragraph, its chapters or credits lines besides;
# a short report under the player is written as an article is.
REPORT_PARAGRAPHS = 2
# WordPress's post formats: a theme's `body_class()` names the post's format (since 3.1, 2011)
# "single-format-<format>"; a video or audio post is the player and its description, a gallery
# or image post the pictures and their line (WordPress's own definitions of the formats).
POST_FORMAT_CLASS = "single-format-"
MEDIA_POST_FORMATS = frozenset({"video", "audio"})
PICTURE_POST_FORMATS = frozenset({"gallery", "image"})
# A gallery as the page's schema.org type: what the picture post format says, in schema.org.
PICTURE_PAGE_TYPES = frozenset({"imagegallery", "mediagallery"})
# WordPress's `<body>` class for one of the site's static pages ("page page-id-2214"), where a
# post, an article, has "single-post postid-2214": the site's own pages (about, privacy, contact)
# are such pages, and its SEO plugins stamp them with an article type and a date like any post.
STATIC_PAGE_CLASS = "page-id-"
# A media page's player sits in the post's wrapper with the headline, this many elements above
# the text under it (a player wrapper, the post's header): a player further out is the site's.
MEDIA_REACH = 2
# The extensions of audio and video files a page links to for playing or downloading.
MEDIA_FILE_SUFFIXES = (
    ".mp3", ".m4a", ".aac", ".ogg", ".oga", ".opus", ".wav", ".mp4", ".m4v", ".webm"
)  # fmt: skip
# A notice in place of a story (removed, moved, blocked) is a paragraph or two: no longer than
# two teasers' summaries.
MAX_STORY_NOTICE_CHARS = 600
# A notice laid out alone with its buttons is a short page of the site: no longer than an
# undated site page's body (`page_kinds.MAX_UNDATED_PAGE_CHARS`); a consent text, an age check.
MAX_NOTICE_CHARS = MAX_UNDATED_PAGE_CHARS
# A declared non-article page keeps a body at least this long (an about page, a long profile).
DECLARED_TYPE_MAX_CHARS = 2000
# ... except a job advertisement's, at any length: its text is the employer's description of the
# post, as long as they write it (the role, the tasks, the benefits, an equal-opportunity note),
# and a story about jobs or an employer declares its article type. (A Product's long page is a
# review: the Dragnet set has three such, declaring Product alone.)
UNCAPPED_NON_ARTICLE_TYPES = frozenset({"jobposting"})
# Readers' posts, each a schema.org Comment item: at least this many in the body's container
# (three posts: a topic and two replies, by more than one author) ...
MIN_COMMENT_UNITS = 3
# ... holding at least this share of the body's text (a comment or two under an article do not).
COMMENT_SHARE = 0.5
# The items read, in document order (a hostile page may mark every element up).
MAX_COMMENT_ITEMS = 200
COMMENT_ITEM_TYPE = "schema.org/Comment"
# The `<pre>` blocks of a body read for text (a hostile page may hold thousands of empty ones).
MAX_CODE_BLOCKS = 20
_COMMENT_ITEMS = etree.XPath(
    f"descendant-or-self::*[@itemscope][contains(@itemtype, '{COMMENT_ITEM_TYPE}')]"
)
# A post's author: the first element its markup names so.
_AUTHORS = etree.XPath(".//*[@itemprop='author']")
# A body whose captions outweigh its running text this many times is a gallery.
CAPTION_RATIO = 2.0
# Class/id words that mark a paywall element (matched in C by XPath).
# The membership plugins thousands of sites run write their own names on the wall: Paid
# Memberships Pro, MemberPress, Restrict Content Pro, WooCommerce Memberships.
PAYWALL_NAMES = (
    "paywall", "regwall", "meter-wall", "subscriber-only", "premium-wall",
    "pmpro_content_message", "mepr-unauthorized", "rcp-restricted-content",
    "wc-memberships-content-restricted",
)  # fmt: skip

# The itemtype of microdata items not inside another item, found in C; a hostile page may list
# any number of types in one attribute: the first few are read.
MAX_ITEMTYPES = 4
# The class and id values under an element, found in C, as plain strings; each is then cut at
# MAX_PAYWALL_NAME_CHARS (a hostile page puts megabytes in one attribute).
_CLASS_VALUES = etree.XPath("descendant::*/@class", smart_strings=False)
_ID_VALUES = etree.XPath("descendant::*/@id", smart_strings=False)
# What joins the values searched at once: no paywall name holds it.
_VALUE_SEPARATOR = "\n"
MAX_PAYWALL_NAME_CHARS = 256
# A teaser's headline: a link in a heading or around one (`has_linked_heading`) ...
# ... or a link on a line of its own, perhaps in bold: old table layouts set the headline so,
# then a <br>, then the summary.
EMPHASIS_TAGS = frozenset({"b", "strong", "font", "span", "big"})
# The microdata property that marks a page not free, looked up among the page's itemprop values
# (`extractors.tree.itemprop_values`, one attribute step in C): a predicate asking every element
# of the page for it cost libxml2 a node set per element, 2 % of a median Dragnet page.
NOT_FREE_PROPERTY = "isaccessibleforfree"


@dataclass(slots=True)
class PageSignals:
    """What the publisher declares about the page."""

    types: frozenset[str]  # schema.org types of every JSON-LD object
    og_type: str | None  # OpenGraph og:type, lower case
    unindexed: bool = False  # the robots meta tag asks search engines not to index the page
    address: str | None = None  # the page's canonical address (else og:url, else its URL)
    dated: bool = False  # a publication date in the page's markup or in its address
    comments: bool = False  # microdata marks something up as a schema.org Comment
    post_format: str | None = None  # the blog engine's format of the post (`post_format`)
    static_page: bool = False  # the blog engine shows one of the site's static pages

    @property
    def names_article(self) -> bool:
        """An article type in the page's schema.org or OpenGraph metadata."""
        return bool(self.types & ARTICLE_ONLY_TYPES) or self.og_type == "article"

    @property
    def declares_article(self) -> bool:
        """An article type the non-article rules defer to: schema.org's, or OpenGraph's on a
        dated page. Sites stamp `og:type=article` on every page (an imprint, a cookie policy, a
        quote page): on an undated page it says nothing of the page's kind, though it still sets
        a short post out under its headline (`names_article`)."""
        return bool(self.types & ARTICLE_ONLY_TYPES) or (self.og_type == "article" and self.dated)

    @property
    def declares_video(self) -> bool:
        if self.og_type and self.og_type.startswith("video"):
            return True
        if self.post_format in MEDIA_POST_FORMATS:
            return True  # the author's own choice for this post, where SEO plugins stamp Article
        # A media item as the page's schema.org type, and no article type there, says more than
        # OpenGraph's "article", which sites stamp on every page (a news article about a video
        # or a podcast declares its own type).
        return bool(self.types & MEDIA_ITEM_TYPES) and not self.types & ARTICLE_ONLY_TYPES

    @property
    def declares_pictures(self) -> bool:
        """The author's own choice of a picture post (a gallery, an image) for this post, or a
        gallery as the page's schema.org type."""
        return self.post_format in PICTURE_POST_FORMATS or bool(self.types & PICTURE_PAGE_TYPES)

    @property
    def declares_non_article(self) -> bool:
        """A non-article type (schema.org or OpenGraph), or a page the publisher keeps out of
        search engines (results, error and sign-in pages), and no article type
        (`declares_article`: OpenGraph's, stamped on every page, counts on a dated page only;
        against `noindex`, which publishers also set on syndicated copies, it counts always)."""
        typed = (
            bool(self.types & NON_ARTICLE_TYPES)
            or any(name.endswith(NON_ARTICLE_TYPE_SUFFIXES) for name in self.types)
            or self.og_type in NON_ARTICLE_OG_TYPES
            or (self.og_type or "").split(".")[0] in NON_ARTICLE_OG_FAMILIES
        )
        if typed:
            return not self.declares_article
        return self.unindexed and not self.names_article

    @property
    def declares_uncapped_type(self) -> bool:
        """A non-article type that says so at any length (UNCAPPED_NON_ARTICLE_TYPES), and no
        article type."""
        return bool(self.types & UNCAPPED_NON_ARTICLE_TYPES) and not self.declares_article


def page_signals(
    jsonld: list[dict[str, Any]],
    og_type: str | None,
    robots: str | None = None,
    item_types: list[tuple[str, Element]] | None = None,
    address: str | None = None,
    dated: bool = False,
    tree: Element | None = None,
    url: str | None = None,
) -> PageSignals:
    """The declarations of the page: JSON-LD types, and the types of its top-level microdata
    items (`item_types`: the page's itemtype values with their elements, `tree.microdata`; a
    shop writes `itemtype=Product` on the page's main item). `address` is the page's canonical
    address, `url` the one it was fetched from."""
    types = {name for obj in jsonld for name in types_of(obj)}
    if not dated:
        types -= _undated_article_types(jsonld)
    if item_types:
        declared = microdata_types(item_types)
        # Undated, a microdata item's article type says no more than JSON-LD's (a blog's static
        # page is a BlogPosting in its template).
        types.update(declared if dated else declared - ARTICLE_ONLY_TYPES)
    # A copy that names another address as the page to index (a story's print or AMP view, a
    # syndicated copy) keeps itself out of search engines for the original's sake: its `noindex`
    # says nothing of what it is.
    unindexed = "noindex" in (robots or "").lower() and not _names_another_page(address, url)
    # Some sites write the OpenGraph namespace into the value ("og:product").
    og = (og_type or "").strip().lower().removeprefix("og:") or None
    comments = any(COMMENT_ITEM_TYPE in value for value, _ in item_types or ())
    classes = _body_classes(tree) if tree is not None else []
    return PageSignals(
        frozenset(types),
        og,
        unindexed,
        url if _names_section_above(address, url) else address,
        dated,
        comments,
        post_format(classes),
        is_static_page(classes),
    )


def _names_another_page(canonical: str | None, url: str | None) -> bool:
    """The canonical address is another page's than the address fetched: another host, path or
    query (a "www." prefix, a trailing slash, the scheme and a fragment aside)."""
    pages = _pages_of(canonical, url)
    return pages is not None and pages[0] != pages[1]


def _names_section_above(canonical: str | None, url: str | None) -> bool:
    """The canonical address is the section the fetched address is an item of: the same host,
    and the fetched address adds to its path a query that names an item by its number
    (`?storyid=96954`), or segments below it that name one (`names_item`). A template writes its
    section's address on every page under it; a view of the page itself (its `/amp/`, `/print/`)
    adds a segment of one word, and a feed's tracking query (`?utm_source=rss`) no number."""
    pages = _pages_of(canonical, url)
    if pages is None:
        return False
    (host, path, query), (fetched_host, fetched_path, fetched_query) = pages
    if host != fetched_host or query:
        return False
    if path == fetched_path:
        return _numbers_item(fetched_query)
    below = fetched_path.removeprefix(path + "/")
    return below != fetched_path and (_numbers_item(fetched_query) or names_item(below))


def _numbers_item(query: str) -> bool:
    """A parameter of the query is a number: an item's id (`idx=7821934`, `meldung=3117`)."""
    return any(value.isdigit() for _, value in parse_qsl(query))


_Page = tuple[str, str, str]  # host without "www.", path without its trailing slash, query


def _pages_of(canonical: str | None, url: str | None) -> tuple[_Page, _Page] | None:
    """The pages the canonical and the fetched address name; None without both, or for a broken
    address (a broken host, "http://[oops/", names no page)."""
    if not canonical or not url:
        return None
    try:
        first, second = urlsplit(canonical.strip()), urlsplit(url.strip())
    except ValueError:
        return None
    return _page_of(first), _page_of(second)


def _page_of(parts: SplitResult) -> _Page:
    host = parts.netloc.lower().removeprefix(WEB_HOST_PREFIX)
    return host, parts.path.rstrip("/"), parts.query


def _body_classes(tree: Element) -> list[str]:
    body = first_child(tree, "body")
    return (body.get("class") or "").split() if body is not None else []


def post_format(classes: list[str]) -> str | None:
    """The format WordPress gives the post a page shows, from the `<body>` classes its themes
    write ("single-format-video"; a standard post has none), or None."""
    for name in classes:
        if name.startswith(POST_FORMAT_CLASS):
            return name[len(POST_FORMAT_CLASS) :]
    return None


def is_static_page(classes: list[str]) -> bool:
    """WordPress shows one of the site's static pages, not a post: a `<body>` class
    "page-id-<number>" (STATIC_PAGE_CLASS)."""
    return any(
        name.startswith(STATIC_PAGE_CLASS) and name[len(STATIC_PAGE_CLASS) :].isdigit()
        for name in classes
    )


def _undated_article_types(jsonld: list[dict[str, Any]]) -> set[str]:
    """The article types declared only on JSON-LD objects that carry no date of their own
    (ARTICLE_DATE_KEYS). On a page nothing else dates, they declare nothing: listing templates
    stamp an article type on every page, a section front or a topic hub named as its headline."""
    dated: set[str] = set()
    undated: set[str] = set()
    for obj in jsonld:
        names = types_of(obj) & ARTICLE_ONLY_TYPES
        if names:
            (dated if any(obj.get(key) for key in ARTICLE_DATE_KEYS) else undated).update(names)
    return undated - dated


def microdata_types(item_types: list[tuple[str, Element]]) -> set[str]:
    """The lower-cased schema.org types of the page's top-level microdata items (an item nested
    in another is a part of it: the product a review article is about)."""
    return {
        name.rstrip("/").rsplit("/", 1)[-1].lower()
        for value, element in item_types
        if _is_top_level_item(element)
        for name in value.split()[:MAX_ITEMTYPES]
    }


def _is_top_level_item(element: Element) -> bool:
    return element.get("itemscope") is not None and not any(
        node.get("itemscope") is not None for node in element.iterancestors()
    )


def _not_free(jsonld: list[dict[str, Any]], tree: Element) -> bool:
    for obj in jsonld:
        value = obj.get("isAccessibleForFree")
        if value is False or (isinstance(value, str) and value.strip().lower() == "false"):
            return True
    return any(
        _ascii_lower(value) == NOT_FREE_PROPERTY
        and _ascii_lower(value.getparent().get("content")) == "false"
        for value in itemprop_values(tree)
    )


def _ascii_lower(value: str | None) -> str | None:
    """`value` in lower case when it is ASCII (compared with ASCII words: no other matches)."""
    return value.lower() if value is not None and value.isascii() else None


def wall_by(near: Element | None) -> bool:
    """A paywall element by the body: inside the body container's parent (a site-wide
    "paywall-header" in the masthead says nothing), or right after the body's parent (the text
    stops, the wall begins)."""
    scope = near.getparent() if near is not None else None
    if scope is None:
        return False
    after = scope.getnext()
    return _holds_wall(scope) or (after is not None and _holds_wall(after))


def _holds_wall(scope: Element) -> bool:
    """A class or id value of `scope` or of an element under it holds a paywall name: the
    values are joined and searched once, where each was searched for every name (a scope of
    hundreds of named elements cost 1 % of a median Dragnet page)."""
    values = [scope.get("class"), scope.get("id"), *_CLASS_VALUES(scope), *_ID_VALUES(scope)]
    names = _VALUE_SEPARATOR.join(value[:MAX_PAYWALL_NAME_CHARS] for value in values if value)
    names = names.lower()
    return any(name in names for name in PAYWALL_NAMES)


def is_headline_link(block: TextBlock) -> bool:
    return (
        block.link_density >= HEADLINE_LINK_DENSITY
        and len(block.text.split()) >= HEADLINE_LINK_WORDS
    )


def is_teaser_list(parts: list[TextBlock], summarised: bool = False) -> bool:
    """Short texts, each set apart by a headline link of its own: at least MIN_TEASERS headline
    links, and most of the text in runs no longer than a teaser's summary. An article with links
    between its sections (a list of deals, "Read more" lines) has long runs of prose.

    `summarised`: only headline links with text of their own after them (a summary, a date
    line) count as teasers; links one after another are a list of related stories."""
    runs, current, headlines = [], 0, 0
    for block in parts:
        density = block.link_density  # `is_headline_link`, with the density computed once
        if density >= HEADLINE_LINK_DENSITY and len(block.text.split()) >= HEADLINE_LINK_WORDS:
            headlines += 1
            runs.append(current)
            current = 0
        elif density < HEADLINE_LINK_DENSITY and block.kind != CAPTION:
            current += block.chars
            if current > MAX_TEASER_RUN_CHARS:
                # A run longer than any teaser's: no list, whatever follows (an article's
                # first paragraphs end the walk of its blocks).
                return False
    runs.append(current)
    if summarised:
        headlines = sum(1 for run in runs[1:] if run)  # runs[0] comes before any headline
    total = sum(runs)
    in_long_runs = sum(run for run in runs if run > TEASER_SUMMARY_CHARS)
    return (
        headlines >= MIN_TEASERS
        and max(runs) <= MAX_TEASER_RUN_CHARS
        and in_long_runs < MAX_LONG_RUN_SHARE * max(total, 1)
    )


def is_one_teaser_of_list(body: BodyShape, classify: Classifier) -> bool:
    """A body no longer than one teaser, in a region (its container's parent) that reads as a
    teaser list: the longest summary of a section front, taken for a short article."""
    text = running_text(body.blocks)
    # reading_length is never below the raw length: most bodies are decided without it.
    if body.container is None or len(text) > MAX_TEASER_RUN_CHARS:
        return False
    if reading_length(text) > MAX_TEASER_RUN_CHARS:
        return False
    region = body.container.getparent()
    return region is not None and is_teaser_list(text_blocks(region, classify))


def spans_cards(container: Element | None) -> bool:
    """The body spans MIN_CARDS `<article>` elements and none of them holds most of its text: a
    list of cards, not an article with a few related-story cards."""
    if container is None:
        return False
    cards = [card for card in container.iter("article") if card.find(".//article") is None]
    return _spans(container, cards)


def spans_teaser_cards(container: Element | None) -> bool:
    """The same for the container's children when they are MIN_CARDS teasers or more (see
    `sits_in_card_list`): a list of cards in any markup."""
    if container is None or len(container) < MIN_CARDS:  # counted in C: most bodies end here
        return False
    children: list[Element] = []
    # Child by child, stopping at the first that is no card: an article's first paragraph ends
    # it without a proxy for every other child.
    for child in container.iterchildren(etree.Element):
        if not _is_card(child):
            return False
        children.append(child)
    return len(children) >= MIN_CARDS and _spans(container, children)


def _spans(container: Element, cards: list[Element]) -> bool:
    if len(cards) < MIN_CARDS:
        return False
    words = max(1, len(text_of(container).split()))
    lengths = [len(text_of(card).split()) for card in cards]
    return sum(lengths) >= MIN_CARDS_SHARE * words and max(lengths) < MAX_CARD_SHARE * words


def lede_paragraphs(blocks: list[Block]) -> list[str]:
    """The running text's paragraphs: blocks of at least CP characters that are not headings or
    captions."""
    return [text for kind, text in blocks if kind in LEDE_KINDS and len(text) >= CP]


def is_stub(blocks: list[Block], most: int = PAYWALL_STUB_PARAGRAPHS) -> bool:
    """A lede alone: at most `most` paragraphs, and short."""
    paragraphs = lede_paragraphs(blocks)
    return len(paragraphs) <= most and len(running_text(blocks)) <= PAYWALL_STUB_CHARS


def is_walled_teaser(
    blocks: list[Block], tree: Element, jsonld: list[dict[str, Any]], container: Element | None
) -> bool:
    """A lede before a paywall: one paragraph on a page marked not free or with a paywall
    element by the body, or a few paragraphs with a paywall element by them."""
    if len(running_text(blocks)) > PAYWALL_STUB_CHARS:
        return False  # most bodies: longer than any teaser
    if not is_stub(blocks, WALLED_TEASER_PARAGRAPHS):
        return False
    walled = wall_by(container)
    return walled or (is_stub(blocks) and _not_free(jsonld, tree))


def sits_in_card_list(container: Element | None) -> bool:
    """The body is one card of a list of teaser cards: the container or a near ancestor is one
    of MIN_CARDS siblings of its template, each a linked heading with a teaser's text."""
    node = container
    for _ in range(CARD_LEVELS + 1):
        if node is None or node.tag in ("body", "html"):
            return False
        parent = node.getparent()
        # A parent of fewer children has fewer siblings of one template (counted in C: most
        # elements around a body are wrappers of one or two).
        if parent is not None and len(parent) >= MIN_CARDS:
            template = same_template(node)
            if len(template) >= MIN_CARDS and all(map(_is_card, template)):
                return True
        node = parent
    return False


def same_template(element: Element) -> list[Element]:
    """`element` and its siblings of one template: the same tag and a class name that most of
    them carry (templates add per-item names beside it: "post-740 post", "card card--lead"), or
    no class at all (the rows of a table). For many elements of one page, `SameTemplate`."""
    return SameTemplate()(element)


class SameTemplate:
    """`same_template`, each parent's siblings of a tag read once for all of them: the records
    and teasers of a list ask it of every child, and each asking alone read all the siblings (a
    region of 5,000 children each named apart took 8.7 s, 20,000 three minutes). For one page:
    the tree must not change while it is used."""

    def __init__(self) -> None:
        # (parent, tag) -> (the siblings carrying each class name, the siblings without a class)
        self._tables: dict[tuple[Element, str], tuple[dict[str, list[Element]], list[Element]]] = {}

    def __call__(self, element: Element) -> list[Element]:
        parent, tag = element.getparent(), element.tag
        if parent is None or not isinstance(tag, str):
            return [element]
        table = self._tables.get((parent, tag))
        if table is None:
            table = self._tables[parent, tag] = _carriers(parent, tag)
        carrying, unnamed = table
        classes = (element.get("class") or "").split()
        if not classes:
            return list(unnamed)
        return list(max((carrying[name] for name in classes), key=len))


def _carriers(parent: Element, tag: str) -> tuple[dict[str, list[Element]], list[Element]]:
    """The children of `parent` with `tag` carrying each class name, and those without a class,
    in document order."""
    carrying: dict[str, list[Element]] = {}
    unnamed: list[Element] = []
    for sibling in children_tagged(parent, tag):
        words = (sibling.get("class") or "").split()
        if not words:
            unnamed.append(sibling)
        for name in dict.fromkeys(words):
            carrying.setdefault(name, []).append(sibling)
    return carrying, unnamed


def _is_card(element: Element) -> bool:
    # A card is led by a link: an element without one (an article's paragraph, a wrapper of
    # prose) is told apart in C, before its text is read.
    if next(element.iter("a"), None) is None:
        return False
    if clean_text_within(text_of(element), MAX_CARD_CHARS) is None:
        return False  # longer than a card (a whole article is not split into all its words)
    return has_linked_heading(element) or any(map(_on_own_line, element.iter("a")))


def has_linked_heading(element: Element) -> bool:
    """A link under `element` in a heading (the heading under `element` or around it) or around
    one.

    Asked from the headings, found in C: an XPath asking every link for a heading among all its
    ancestors cost 0.1 ms on a body whose paragraphs hold links, each asked as a card."""
    if element.tag in HEADING_TAGS or next(element.iterancestors(*HEADING_TAGS), None) is not None:
        return links_away(element)  # every link is in it
    for heading in element.iterdescendants(*HEADING_TAGS):
        if links_away(heading):
            return True
        for node in heading.iterancestors():
            if node is element:
                break
            if node.tag == "a":
                return True
    return False


def _on_own_line(link: Element) -> bool:
    """A link that, alone in its emphasis, is followed by a line break."""
    node = link
    while (parent := node.getparent()) is not None and parent.tag in EMPHASIS_TAGS:
        if len(parent) > 1 or (parent.text or "").strip() or (node.tail or "").strip():
            break
        node = parent
    following = node.getnext()
    return following is not None and following.tag == "br" and not (node.tail or "").strip()


def is_priced_list(blocks: list[Block]) -> bool:
    """Items with a price each, and no prose: see PRICED_SHARE."""
    items = lede_paragraphs(blocks)
    if any(len(text) > MAX_ITEM_CHARS for text in items):
        return False  # prose (asked first: it settles an article without reading its prices)
    priced = sum(1 for text in items if shows_price(text))
    return priced >= MIN_TEASERS and priced >= PRICED_SHARE * len(items)


def is_cut_summaries(blocks: list[Block]) -> bool:
    """Paragraphs most of which stop on an ellipsis: summaries cut short (see CUT_SHARE)."""
    paragraphs = lede_paragraphs(blocks)
    cut = sum(1 for text in paragraphs if text.rstrip(_AFTER_ELLIPSIS).endswith(ELLIPSES))
    return cut >= MIN_TEASERS and cut >= CUT_SHARE * len(paragraphs)


def is_mostly_cards(body: BodyShape, chars: int | None = None) -> bool:
    """A short body whose text is mostly in MIN_CARDS teaser cards (`sits_in_card_list`) of one
    template inside its container: a list of notices under the page's heading and intro. An
    article's related-story cards are links, left out of its body. `chars`: the body's
    `body_chars`, when the caller counted them."""
    if body.container is None:
        return False
    if (body_chars(body.blocks) if chars is None else chars) > MAX_CARD_LIST_BODY_CHARS:
        return False
    text = body.squeezed_text()
    for first in first_of_each_tag(body.container, MIN_CARDS):
        cards = same_template(first)
        if len(cards) >= MIN_CARDS and all(map(_is_card, cards)):
            shown = [squeezed(text_of(card)) for card in cards]
            inside = [card for card in shown if card[:CARD_LEAD_CHARS] in text]
            if sum(map(len, inside)) >= MIN_CARDS_SHARE * len(text):
                return True
    return False


def is_gallery(blocks: list[Block]) -> bool:
    captions = sum(len(text) for kind, text in blocks if kind == CAPTION)
    return captions > CAPTION_RATIO * max(1, len(running_text(blocks)))


def is_photo_essay(blocks: list[Block], set_out: Callable[[], bool]) -> bool:
    """Captions under prose longer than a teaser's summary, which the page sets out as its post
    (under its headline, dated): a story told in photos. A gallery's text is one line."""
    return len(running_text(blocks)) > TEASER_SUMMARY_CHARS and set_out()


@dataclass(slots=True)
class BodyShape:
    """What the evidence needs of a body: its blocks, and where it came from when known."""

    blocks: list[Block]
    parts: list[TextBlock] | None = None  # the written blocks before link-dense ones were dropped
    container: Element | None = None
    # The running text without its whitespace (`squeezed_text`), built once for the checks of a
    # short body that compare it with the page's elements.
    _squeezed: str | None = field(default=None, init=False, repr=False, compare=False)

    def squeezed_text(self) -> str:
        if self._squeezed is None:
            self._squeezed = squeezed(running_text(self.blocks))
        return self._squeezed


def is_comment_thread_body(blocks: list[Block], container: Element | None) -> bool:
    """The body is readers' posts: its text lies mostly in MIN_COMMENT_UNITS or more schema.org
    Comment items (forum software and comment templates mark each post up so) of more than one
    author, none of which holds half of their text. An article posted as a thread's first
    post (a column on a forum template) holds most of it; its replies are not its body."""
    if container is None:
        return False
    items = _outermost_items(_COMMENT_ITEMS(container)[:MAX_COMMENT_ITEMS])
    if len(items) < MIN_COMMENT_UNITS:
        return False
    lengths = [visible_chars(text_of(item)) for item in items]
    total = sum(lengths)
    if total < COMMENT_SHARE * visible_chars(running_text(blocks)) or max(lengths) >= total / 2:
        return False
    authors = {" ".join(text_of(name).split()) for item in items for name in _AUTHORS(item)[:1]}
    return len(authors) > 1


def _outermost_items(items: list[Element]) -> list[Element]:
    """The items not nested in another of them (a reply marked up inside its parent post)."""
    inside = set(items)
    return [item for item in items if inside.isdisjoint(item.iterancestors())]


def plays_media_by(container: Element | None) -> bool:
    """A `<video>` or `<audio>` player in the body's container or in one of the MEDIA_REACH
    elements around it (the post's wrapper, which sets the player above the text), or a link to
    an audio or video file there: the player of a page made before `<audio>` (a radio show's
    parts to play or download, a script's playlist of MP3s)."""
    if container is None:
        return False
    around = list(islice(container.iterancestors(), MEDIA_REACH))
    scope = around[-1] if around else container
    if next(scope.iter("video", "audio"), None) is not None:
        return True
    return any(_names_media_file(link.get("href")) for link in scope.iter("a"))


def _names_media_file(address: str | None) -> bool:
    """The address is an audio or video file's, by its extension (query and fragment aside)."""
    if not address:
        return False
    path = address.split("#", 1)[0].split("?", 1)[0]
    return path.lower().endswith(MEDIA_FILE_SUFFIXES)


def is_line_beside_data(container: Element | None, classify: Classifier = tag_kind) -> bool:
    """The body's container, read whole, is a page of figures (`is_data_body`): the body, too
    short for an article, is its status line or note, the methods having left its rows out (a
    closings list, a tracker's table). A brief's own table is in its body."""
    return container is not None and is_data_body(_read_whole(container, classify))


def _read_whole(container: Element, classify: Classifier) -> list[Block]:
    """The container's blocks but those that are mostly link text, left out as the methods
    leave them out of a body: a list of linked headlines with their dates is a listing's, not a
    page of figures."""
    return [
        (block.kind, block.text)
        for block in text_blocks(container, classify)
        if block.link_density <= MAX_BLOCK_LINK_DENSITY
    ]


def is_note_beside_data(
    blocks: list[Block], container: Element | None, classify: Classifier
) -> bool:
    """The body's container, read whole, holds data (`page_kinds.is_datum`: short rows and items
    with figures) that outweigh the body's text, and the body is no report (`is_report`): the note
    of a page of figures (a departure board's disruption notice, a schedule's tip of the day) whose
    rows the methods left out. An article beside its table tells its story in paragraphs."""
    if container is None or is_report(blocks):
        return False
    return data_chars(_read_whole(container, classify)) > body_chars(blocks)


def is_report(blocks: list[Block]) -> bool:
    """The body holds REPORT_PARAGRAPHS paragraphs of prose: at least CP characters each, ending
    as sentences end."""
    return _prose_paragraphs(blocks, told=False)


def is_told(blocks: list[Block]) -> bool:
    """A report whose paragraphs say more than a line each: REPORT_PARAGRAPHS paragraphs of prose
    holding more than one sentence (`is_report` counts a gallery's one-sentence captions)."""
    return _prose_paragraphs(blocks, told=True)


def _prose_paragraphs(blocks: list[Block], told: bool) -> bool:
    """REPORT_PARAGRAPHS paragraphs of prose, each of more than one sentence when `told`."""
    written = 0
    for kind, text in blocks:
        if (
            kind in TEXT_KINDS
            and len(text) >= CP
            and ends_as_sentence(text)
            and (not told or holds_sentences(text))
        ):
            written += 1
            if written >= REPORT_PARAGRAPHS:
                return True
    return False


def is_page_of_figures(blocks: list[Block], signals: PageSignals) -> bool:
    """The body is a page's figures, not an article: figures with a line or two of text, though
    the page declare an article (a CMS declares every page so) unless it tells them in
    paragraphs of prose (`is_data_body`, `is_report`); or figures that outweigh the rest of the
    body beside less prose than an article's, whatever the page declares (`is_figures_page`)."""
    if is_data_body(blocks) and not (signals.declares_article and is_report(blocks)):
        return True
    return is_figures_page(blocks)


def non_article_reason(
    body: BodyShape,
    signals: PageSignals,
    tree: Element,
    jsonld: list[dict[str, Any]],
    classify: Classifier = tag_kind,
    set_out: Callable[[], bool] = lambda: False,
) -> str | None:
    """The NULL reason when the page positively looks like a non-article, else None. `classify`
    says what preprocessing made of an element (chrome is left out of the region around a
    body); `set_out()`: the page sets the body out as its post, under its headline and dated
    (`extractors.short_article`), which a listing's teaser never is."""
    length = len(running_text(body.blocks))
    # Checks that only a short body can pass are gated on its length, measured once here (each
    # would measure it again): their own first test, asked in the same order.
    # The publisher's own word first: a video's description sits among teasers of other videos.
    if signals.declares_video and length <= VIDEO_STUB_CHARS and not is_report(body.blocks):
        return NULL_VIDEO
    # ... and a gallery's, as short, is its line under the pictures (a photo story is a report).
    if signals.declares_pictures and length <= VIDEO_STUB_CHARS and not is_report(body.blocks):
        return NULL_GALLERY
    # The address says as much: a page of the site's video section is the video's.
    if (
        length <= VIDEO_STUB_CHARS
        and in_video_section(signals.address)
        and not is_report(body.blocks)
    ):
        return NULL_VIDEO
    # ... and a page of its weather section, a place's forecast: its outlook, an alert and a
    # source line are lines, where a weather story tells in paragraphs (`is_told`).
    if (
        length <= VIDEO_STUB_CHARS
        and names_weather_page(signals.address)
        and not is_told(body.blocks)
    ):
        return NULL_LISTING
    # A body longer than one teaser ends, when it is an article, in its own related stories: a
    # list of bare links. A shorter one beside such a list is a teaser of it.
    if body.parts is not None and is_teaser_list(body.parts, length > MAX_TEASER_RUN_CHARS):
        return NULL_LISTING
    if spans_cards(body.container):
        return NULL_LISTING
    if is_priced_list(body.blocks) or is_cut_summaries(body.blocks):
        return NULL_LISTING
    chars = body_chars(body.blocks) if body.container is not None else None
    if chars is not None and chars <= MAX_CARD_LIST_BODY_CHARS and is_mostly_cards(body, chars):
        return NULL_LISTING
    if (
        chars is not None
        and chars <= MAX_RECORDS_BODY_CHARS
        and records_share(body.blocks, body.container, SameTemplate(), chars, body.squeezed_text())
    ):
        return NULL_LISTING
    if (
        chars is not None
        and chars <= MAX_RECORDS_BODY_CHARS
        and is_linked_entries(body.blocks, body.container, body.squeezed_text())
        and not set_out()  # a short post's own list of linked lines
    ):
        return NULL_LISTING
    if is_page_of_figures(body.blocks, signals):
        return NULL_LISTING
    # A line too short for an article, which the page sets out under its headline as a short post
    # would be, is the status line or note of the figures around it (a shorter body not set out
    # is too short already).
    # (Measured as `too_short` measures: a Chinese or Japanese body's characters weigh more.)
    if (
        length < MIN_BODY_CHARS
        and reading_length(running_text(body.blocks)) < MIN_BODY_CHARS
        and is_line_beside_data(body.container, classify)
        and set_out()
    ):
        return NULL_LISTING
    # A longer note (or a short one set out so) that is no report, beside figures that outweigh
    # it: a data page's notice or tip (a shorter body not set out is too short already).
    if (not is_too_short(running_text(body.blocks)) or set_out()) and is_note_beside_data(
        body.blocks, body.container, classify
    ):
        return NULL_LISTING
    if length <= MAX_PRODUCT_BODY_CHARS and has_order_form(body.blocks, body.container):
        return NULL_PAGE_TYPE
    if is_gallery(body.blocks) and not is_photo_essay(body.blocks, set_out):
        return NULL_GALLERY
    # A short body among teasers: a listing (the chain then looks for another body).
    if (
        (length <= MAX_TEASER_RUN_CHARS and is_one_teaser_of_list(body, classify) and not set_out())
        or (
            length <= MAX_TEASER_RUN_CHARS
            and body.container is not None
            and not (signals.declares_article or signals.dated)
            and teasers_beside(body.container, SameTemplate())
            and not set_out()
        )
        or sits_in_card_list(body.container)
        or spans_teaser_cards(body.container)
    ):
        return NULL_LISTING
    # A player by the body says what the video rule reads in declarations, whatever type the
    # page declares (a podcast platform stamps NewsArticle on every episode's page).
    if length <= VIDEO_STUB_CHARS and plays_media_by(body.container) and not is_report(body.blocks):
        return NULL_VIDEO
    if length <= PAYWALL_STUB_CHARS and is_walled_teaser(body.blocks, tree, jsonld, body.container):
        return NULL_PAYWALL
    if (
        signals.declares_non_article
        and length < DECLARED_TYPE_MAX_CHARS
        and not (signals.declares_pictures and is_told(body.blocks))
    ):
        return NULL_PAGE_TYPE
    if signals.declares_uncapped_type:
        return NULL_PAGE_TYPE
    if signals.comments and is_comment_thread_body(body.blocks, body.container):
        return NULL_PAGE_TYPE
    # The site links the page as one of its own (a footer's bar, a menu's current page): so it
    # is, unless it declares an article; a blog engine's static page declares one whatever it is.
    if (not signals.declares_article or signals.static_page) and is_site_page(
        tree, signals.address, body.container
    ):
        return NULL_PAGE_TYPE
    if names_site_page(signals.address):
        return NULL_PAGE_TYPE
    # A tag's or a topic's page, whatever it declares: its intro is no article.
    if length <= MAX_UNDATED_PAGE_CHARS and names_topic_page(signals.address):
        return NULL_LISTING
    if is_undated_site_page(signals, tree, length, set_out) and not sets_out_code(body.container):
        return NULL_PAGE_TYPE
    # A short, undated body under a headline that names an HTTP error: an error page.
    if (
        length <= MAX_UNDATED_PAGE_CHARS
        and not (signals.declares_article or signals.dated)
        and names_http_error(tree)
        and not set_out()
    ):
        return NULL_PAGE_TYPE
    # A short body that shows none of the words its address names the story by: a notice in
    # the story's place (removed, moved, blocked), dated and declared as the story was.
    if length <= MAX_STORY_NOTICE_CHARS and shows_none_of_address(
        signals.address, f"{document_title(tree) or ''} {running_text(body.blocks)}"
    ):
        return NULL_PAGE_TYPE
    # A short, undated body around a form that says more than it: a sign-up page.
    if (
        length <= MAX_UNDATED_PAGE_CHARS
        and not (signals.declares_article or signals.dated)
        and form_outweighs_body(body.blocks, body.container)
        and not set_out()
    ):
        return NULL_PAGE_TYPE
    # A short notice and the buttons that answer it, with no site around them: a consent wall.
    # A short article on a bare page is set out under its headline, dated.
    if (
        length <= MAX_NOTICE_CHARS
        and not signals.declares_article
        and is_notice_with_choices(tree, body.blocks)
        and not set_out()
    ):
        return NULL_PAGE_TYPE
    # A body too short for an article under a question the reader answers: a poll, a quiz,
    # whatever the page declares (poll and quiz software stamps NewsArticle on each).
    if length < MIN_BODY_CHARS and asks_under_headline(tree):
        return NULL_PAGE_TYPE
    return None


def sets_out_code(container: Element | None) -> bool:
    """The body's container sets out code in a `<pre>` block with text: documentation, a
    tutorial, written to be read through; a page about the site (its legal notice, its contact
    page, its apps) never shows code."""
    if container is None:
        return False
    return any(text_of(block).strip() for block in islice(container.iter("pre"), MAX_CODE_BLOCKS))


def is_undated_site_page(
    signals: PageSignals, tree: Element, length: int, set_out: Callable[[], bool]
) -> bool:
    """A short body on a page that nothing dates, not the markup, nor its address, nor a line by
    its headline (`set_out`), which is one of the site's own pages by its address.
    A news article is dated; a short undated post of a blog is not at such an address. The cheap
    signals are read first, the headline's lines last."""
    if signals.declares_article or signals.dated or length > MAX_UNDATED_PAGE_CHARS:
        return False
    return is_site_address(tree, signals.address) and not set_out()
