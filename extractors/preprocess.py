"""The preprocessing of the NewsFeed cleartext heuristic (Trampuš & Novak): decide what is clearly
not the article body.

* **Junk** — scripts, styles, embedded objects, form controls: never text a reader sees.
* **Chrome** — `nav`, `aside`, `footer`, `header`, `form`; hidden elements (inline CSS,
  `hidden`, `aria-hidden`, hiding utility classes, collapsed panels); elements whose id or class
  names say they are navigation, sidebars, social buttons, comments, related links, promos,
  newsletters, cookie banners or ads. Names are only evidence, and layout wrappers often carry
  them ("container with-sidebar", "ad-off-canvas-pusher" around the whole page): a candidate that
  holds most of the page's content-bearing text *is* the page, so it is kept (`VETO_SHARE`) —
  unless it is consent UI (a cookie banner, a consent wall, a `<dialog>`), which a consent script
  lays over the page and which never wraps it: on a page without an article its notice is the
  only prose, and keeping it would make it the article. A comment thread (named so, holding no
  `<h1>`) is never kept either: it sits beside the article, and under a short post it holds most
  of the paragraph text.
* **Captions** — `figcaption` and caption-named elements become "caption" blocks; of a `figure`
  only its captions are kept.

The result is a `Cleaning`: a read-only view that answers "is this element chrome?" for the
stages that need it. The tree itself is never modified, so other extractors can share the parse.
It is also lazy: only the ancestors of paragraphs (to weigh containers) and the descendants of
the chosen body (to write it out) are ever classified, which is a fraction of a page's elements —
classifying every element from Python costs as much as parsing the page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from itertools import islice
from typing import TypeVar

from lxml import etree

from extractors.blocks import BLOCK_TAGS, SKIP_TAGS
from extractors.paragraphs import C_SIGMA, ParagraphStats, ends_as_sentence, paragraph_stats
from extractors.tree import CAPTION, CHROME, FIGURE, PLAIN, Element, TagIndex, text_of

# Junk: never article text (the block writer skips the same tags).
JUNK_TAGS = SKIP_TAGS
# Semantic elements that hold chrome unless they hold the page (see VETO_SHARE).
CHROME_TAGS = frozenset({"nav", "aside", "footer", "header", "form", "dialog", "menu"})
# The ARIA roles of those tags: an element that declares itself a landmark of navigation, the
# page's banner or footer, a side column, a search form or a dialog is what the tag would be.
CHROME_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alertdialog",
     "menu", "menubar"}
)  # fmt: skip
# Figures stay: the block writer keeps their captions (as "caption" blocks) and nothing else.
FIGURE_TAGS = frozenset({"figure"})
# What makes a `<figure>` a picture's (`sets_out_text`).
PICTURE_TAGS = ("img", "picture", "video", "audio", "svg", "canvas", "iframe", "object", "embed")
CAPTION_TAGS = frozenset({"figcaption"})
# A class/id part that ends with this word marks an image caption or credit (a "caption" block,
# not body text): "caption", "figcaption", and the word run into what it captions ("imgcaption",
# "photocaption", "bildcaption"), as a comment template's part ends with "comment".
CAPTION_WORD = "caption"
# A caption holds at most this many content-bearing paragraphs that end as a sentence: one
# element named a caption that holds more is prose set beside a picture.
CAPTION_MAX_PARAGRAPHS = 1
# Chrome tokens of consent UI: "cmp" (consent management platform, the industry's name for the
# scripts that draw cookie banners and consent walls), then the platforms publishers use most,
# whose class names carry their own name rather than the word "consent". Such an element is laid
# over the page and never wraps it: the veto never keeps it.
CMP_TOKEN = "cmp"
CONSENT_TOKENS = frozenset(
    {
        "cookie", "cookies", "consent", "gdpr", CMP_TOKEN, "onetrust", "didomi", "cookiebot",
        "usercentrics", "truste", "trustarc", "cmplz", "cmpbox", "iubenda", "axeptio", "osano",
        "sourcepoint", "quantcast",
    }
)  # fmt: skip
# "cmp-" also prefixes every component of Adobe Experience Manager's Core Components, the
# templates of many publishers ("cmp-text" holds the article, "cmp-title" its headline): there
# it is a namespace, not consent UI. A namespace names components of at least this many
# names, the headline's among them; a consent layer's parts ("cmp-layer", "cmp-btn") never
# hold the page's headline ...
MIN_NAMESPACE_COMPONENTS = 3
# ... read from the first elements named "cmp-..." in the page (a hostile page may name every
# element so; the question is asked once per page).
MAX_NAMESPACE_PROBES = 64
CONSENT_TOKENS_BUT_CMP = CONSENT_TOKENS - {CMP_TOKEN}
_CMP_ONLY = frozenset({CMP_TOKEN})
_CMP_NAMED = etree.XPath("//*[contains(@class, 'cmp-')]")
_CMP_COMPONENT = re.compile(r"(?:^|\s)cmp-([a-z0-9]+)")
# Class/id tokens of reader comments (Disqus, the comment service most blogs embed, names its
# thread after itself), and of trackbacks and pingbacks: other blogs' excerpts of their own posts
# that link here, listed under the post as its comments are. A thread is set beside the article:
# the veto never keeps it.
COMMENT_TOKENS = frozenset(
    {"comment", "comments", "disqus", "trackback", "trackbacks", "pingback", "pingbacks"}
)
# Class/id tokens (split on case changes, "-", "_" and spaces) that mark page chrome.
SUSPICIOUS_TOKENS = CONSENT_TOKENS | COMMENT_TOKENS | frozenset(
    {
        "nav", "navbar", "navigation", "menu", "sidebar", "social", "share", "sharing", "related",
        "promo", "promotion", "newsletter", "banner", "advert", "advertisement", "ad", "ads",
        "adslot", "sponsor", "sponsored", "breadcrumb", "breadcrumbs", "footer", "masthead",
        "subscribe", "subscription", "popup", "modal", "outbrain", "taboola", "recommended",
        "trending", "mostread", "teaser", "teasers", "signup", "paywall", "skip", "toolbar",
        "pagination", "pager", "tags", "byline", "footnote", "footnotes", "editsection",
        "reflist", "references", "postmetadata",
    }
)  # fmt: skip
# Tags of elements laid over the page, never around it; and the ARIA roles of the same (a
# script's dialog is a `<div role="dialog">`).
OVERLAY_TAGS = frozenset({"dialog"})
OVERLAY_ROLES = frozenset({"dialog", "alertdialog"})
# Distinct id/class strings whose verdict is remembered (a site repeats its class names).
NAME_CACHE_SIZE = 65536
MAX_CACHED_NAME_CHARS = 256
# Words of a class attribute looked at (a hostile attribute holds thousands).
MAX_NAME_WORDS = 64
# Whole class names that hide an element in every CSS framework we know.
HIDDEN_CLASSES = frozenset(
    {"hidden", "hide", "d-none", "is-hidden", "sr-only", "visually-hidden", "screen-reader-text",
     "visuallyhidden", "invisible", "u-hidden"}
)  # fmt: skip
# Paragraph-like elements besides <p>: <div>s that hold no block-level element, counted on pages
# that set their text without <p> (see `Cleaning`).
LEAF_PARAGRAPH_TAGS = ("div",)
# Never removed by name: the document frame.
PROTECTED_TAGS = frozenset({"html", "body"})
# A chrome candidate holding at least this share of the page's content-bearing text is a layout
# wrapper named after something it also holds ("main with-sidebar"): kept.
VETO_SHARE = 0.5
# The same for the text another extractor selected (`Cleaning.outside_chrome`).
WRAPPER_SHARE = 0.5

T = TypeVar("T")

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# A run of hexadecimal digits this long, mixing digits and letters, is an identifier (a hash, a
# database key: TypePad ids its posts "entry-6a00d8341c57a853ef017ee3ad947e970d"), not words: split
# into parts it would spell "ad" or "nav" by chance.
MIN_HASH_CHARS = 8
# So is a UUID (8-4-4-4-12 hexadecimal digits): Notion, headless CMSs and component frameworks id
# every block with one, and its four-digit groups spell "ad" by chance ("760b1946-1436-ad1a-...").
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_HEX_RUN = re.compile(rf"(?<![0-9A-Za-z])(?:{_UUID}|[0-9a-f]{{{MIN_HASH_CHARS},}})(?![0-9A-Za-z])")
# The class a styling framework gives every element of a component to scope its CSS: its name,
# then a hash of letters and digits (Svelte's "svelte-1k9x3ad", Astro's "astro-J7PV25F6",
# Emotion's "css-1q2w3e", styled-jsx's "jsx-2831840"). It names no role, and its hash spells
# "ad" or "nav" by chance, which made every element of a component chrome.
_SCOPE_CLASS = re.compile(
    r"(?<![0-9A-Za-z])(?:svelte|astro|css|jsx)-(?=[A-Za-z]*[0-9])[0-9A-Za-z]+(?![0-9A-Za-z])"
)
# Parts after which a class word names a taxonomy term of the content, not a role: blog engines
# label a post's element with each of its categories and tags ("category-social-media",
# "tag-cookie-recipes", "entry-category-advertising"). A post about cookies is not a cookie banner.
TAXONOMY_PARTS = frozenset({"tag", "category", "taxonomy"})
# Parts after which a class word names what the element sits beside, not what it is: a heading
# styled to clear a fixed bar ("anchorWithStickyNavbar"), a layout "with-sidebar". The element
# is what the parts before say.
BESIDE_PARTS = frozenset({"with", "has"})
# Either: the parts before the first of them say what the element is.
QUALIFIER_PARTS = TAXONOMY_PARTS | BESIDE_PARTS
# Comment templates run their words together ("commentbody", "commentlist", "postcomment"): a
# part that ends with one of COMMENT_WORDS, or starts with one and goes on with a layout word of
# COMPOUND_TAILS, is that word. Only a layout word: "commentary" is a genre of article.
COMMENT_WORDS = ("comments", "comment")
_COMMENT_STEM = "comment"  # every one of COMMENT_WORDS holds it
COMPOUND_TAILS = frozenset(
    {
        "body", "list", "text", "content", "area", "wrap", "wrapper", "box", "block", "container",
        "thread", "form", "holder", "item", "items", "entry", "section", "meta", "author",
        "count", "link", "links", "header", "footer", "title", "pane", "panel",
    }
)  # fmt: skip
# Bootstrap's collapsed panels are hidden until opened ("collapse show" / "collapse in").
COLLAPSED_CLASS = "collapse"
EXPANDED_CLASSES = frozenset({"show", "in"})


def classes_say_hidden(classes: str) -> bool:
    """A hiding utility class, or a collapsed Bootstrap panel ("collapse" without "show")."""
    return _hidden_by(classes.split())


def _hidden_by(classes: list[str]) -> bool:
    if not HIDDEN_CLASSES.isdisjoint(classes):
        return True
    return COLLAPSED_CLASS in classes and EXPANDED_CLASSES.isdisjoint(classes)


def kind_of_names(names: str, is_class: bool) -> int:
    """CHROME, CAPTION or PLAIN for an id or class attribute value: CHROME when a part of it
    ('related-box', 'relatedArticles', 'theiaStickySidebar') is one of SUSPICIOUS_TOKENS in any
    case, or a class hides the element. Cached: a site repeats its class names on every page;
    hostile multi-kilobyte values are not kept."""
    if len(names) > MAX_CACHED_NAME_CHARS:
        return _kind_of_names(names, is_class)
    known = _CLASS_KINDS if is_class else _ID_KINDS
    kind = known.get(names)
    if kind is None:
        if len(known) >= NAME_CACHE_SIZE:
            known.clear()  # bounded: a long crawl learns its sites' names anew
        kind = known[names] = _kind_of_names(names, is_class)
    return kind


# The verdicts of the class and id values read so far (`kind_of_names`): dicts, not lru_cache,
# asked for every element classified; a hit is one look-up of the value itself, without a key
# tuple or the bookkeeping of the least recently used order.
_CLASS_KINDS: dict[str, int] = {}
_ID_KINDS: dict[str, int] = {}


def _kind_of_names(names: str, is_class: bool) -> int:
    words = names.split()
    if is_class and _hidden_by(words):
        return CHROME
    kind = PLAIN
    # Word by word, each remembered on its own: whole class strings vary from page to page
    # ("post-740 post type-post"), the words in them repeat across sites.
    for word in words[:MAX_NAME_WORDS]:
        found = _kind_of_word(word)
        if found == CHROME:
            return CHROME
        kind = found or kind
    return kind


def _role_parts(word: str) -> set[str]:
    """The parts of one class or id word that may say what the element is: all of them, except
    those from a qualifier part on: the term after a taxonomy part ("entry-category-social" is an
    entry, whatever its topic), what the element sits beside ("anchorWithStickyNavbar")."""
    letters = word.replace("-", "").replace("_", "")
    if letters.isascii() and letters.isalpha() and letters.islower():
        # Lower-case words joined by "-" or "_" (most class words): their parts are the words,
        # as _NAME_PART finds them, and no hash is among them (it has digits). Telling so in C
        # costs a fraction of the two regular expressions (and filter() a fraction of a list
        # comprehension's frame: each word of a new site's names comes here once).
        parts = list(filter(None, word.replace("_", "-").split("-")))
        lowered = word
    else:
        # A word shorter than a hash holds none (the search costs more than the test).
        unhashed = _HEX_RUN.sub(_unless_hash, word) if len(word) >= MIN_HASH_CHARS else word
        unhashed = _SCOPE_CLASS.sub("-", unhashed)
        parts = list(map(str.lower, _NAME_PART.findall(unhashed)))
        lowered = word.lower()
    # Each part is letters of the word in a row: without the comment stem in the word, no part
    # is a run-together comment word (most words: no call per part).
    if _COMMENT_STEM in lowered:
        parts = [_compound_head(part) for part in parts]
    if not QUALIFIER_PARTS.isdisjoint(parts[:-1]):
        for index, part in enumerate(parts[:-1]):
            if part in QUALIFIER_PARTS:
                return set(parts[:index])
    return set(parts)


def _compound_head(part: str) -> str:
    """The comment word a run-together part stands for ("commentbody", "postcomment"), or the
    part itself."""
    if _COMMENT_STEM not in part:  # most parts: no comment word can start or end them
        return part
    for head in COMMENT_WORDS:
        if part != head and (part.endswith(head) or _tail_after(part, head) in COMPOUND_TAILS):
            return head
    return part


def _tail_after(part: str, head: str) -> str | None:
    return part[len(head) :] if part.startswith(head) else None


def _unless_hash(run: re.Match[str]) -> str:
    """A hexadecimal run with digits and letters is dropped (an identifier); a word of the
    letters a-f alone ("facade", "added") stays."""
    text = run.group()
    # The run is hexadecimal digits: it holds a digit exactly when it is not all letters.
    return "-" if not text.isalpha() and not text.isdigit() else text


@lru_cache(maxsize=NAME_CACHE_SIZE)
def _kind_of_word(word: str) -> int:
    if word.isalpha() and word.isascii() and word.islower() and _COMMENT_STEM not in word:
        # One lower-case word ("post", "container", "sidebar"): it is its only part, and no
        # qualifier can precede it; told without splitting it into a set of parts (a new
        # site's names are mostly such words, each asked here once).
        if word in SUSPICIOUS_TOKENS:
            return CHROME
        return CAPTION if word.endswith(CAPTION_WORD) else PLAIN
    parts = _role_parts(word)
    if not SUSPICIOUS_TOKENS.isdisjoint(parts):
        return CHROME
    # Every caption token ends with the caption word: parts are read only when the word holds it.
    if CAPTION_WORD in word.lower() and any(part.endswith(CAPTION_WORD) for part in parts):
        return CAPTION
    return PLAIN


@lru_cache(maxsize=NAME_CACHE_SIZE)
def _names_role(names: str, tokens: frozenset[str]) -> bool:
    return any(not tokens.isdisjoint(_role_parts(word)) for word in names.split()[:MAX_NAME_WORDS])


def _named(element: Element, tokens: frozenset[str]) -> bool:
    """The element's id or class has a part among `tokens`."""
    for name in ("class", "id"):
        value = element.get(name)
        if value and len(value) <= MAX_CACHED_NAME_CHARS and _names_role(value, tokens):
            return True
    return False


# Chrome words that name a story's summary: a teaser card's, or, opening the story's own running
# text, its lead (newsroom jargon: Polopoly's `p_teaser`). See `extractors.dom.named_lead`.
SUMMARY_TOKENS = frozenset({"teaser", "teasers"})


def chrome_only_as_summary(element: Element) -> bool:
    """The element's id and class make it chrome by SUMMARY_TOKENS alone: no other chrome word,
    no hiding class (an "ad" or "sponsor" note, a paywall line stays chrome)."""
    found = False
    for name in ("class", "id"):
        value = element.get(name)
        if not value:
            continue
        if name == "class" and _hidden_by(value.split()):
            return False
        for word in value.split()[:MAX_NAME_WORDS]:
            chrome = SUSPICIOUS_TOKENS.intersection(_role_parts(word))
            if not chrome <= SUMMARY_TOKENS:
                return False
            found = found or bool(chrome)
    return found


def is_consent_ui(element: Element, cmp_namespace: Callable[[], bool] = lambda: False) -> bool:
    """A cookie banner, a consent wall or a dialog: named so by its id or class, a `<dialog>` or
    an element in a dialog's ARIA role.
    Such an element is laid over the page by a script and never wraps it. Named "cmp" alone, it
    is none on a page that uses "cmp-" as its components' namespace (`cmp_namespace()`, asked
    only then: `uses_cmp_namespace`)."""
    if element.tag in OVERLAY_TAGS or _named(element, CONSENT_TOKENS_BUT_CMP):
        return True
    if (element.get("role") or "").strip().lower() in OVERLAY_ROLES:
        return True
    return _named(element, _CMP_ONLY) and not cmp_namespace()


def uses_cmp_namespace(tree: Element) -> bool:
    """The page names its components "cmp-NAME", of at least MIN_NAMESPACE_COMPONENTS names, its
    headline among them: a template's namespace (a consent layer's parts never hold the page's
    `<h1>`)."""
    names: set[str] = set()
    for element in islice(_CMP_NAMED(tree), MAX_NAMESPACE_PROBES):
        names.update(_CMP_COMPONENT.findall(element.get("class", "")))
    if len(names) < MIN_NAMESPACE_COMPONENTS:
        return False
    headline = next(tree.iter("h1"), None)
    if headline is None:
        return False
    chain = (headline, *islice(headline.iterancestors(), MAX_ANCESTORS))
    return any(_CMP_COMPONENT.search(node.get("class", "")) for node in chain)


def is_comment_thread(element: Element) -> bool:
    """Reader comments: an element named so by its id or class that holds no `<h1>`. A thread
    sits under the article, beside it, never around it; a layout wrapper that carries a comment
    word ("single comments-open") holds the page's headline, a thread heads itself lower ("12
    comments", "Leave a reply")."""
    return _named(element, COMMENT_TOKENS) and element.find(".//h1") is None


def never_wraps(element: Element, cmp_namespace: Callable[[], bool] = lambda: False) -> bool:
    """Chrome the veto never keeps, whatever share of the page's text it holds: it is laid over
    the page (consent UI) or set beside the article (a comment thread). On a page whose post is
    short or set between line breaks, a thread holds most of the `<p>` text."""
    return is_consent_ui(element, cmp_namespace) or is_comment_thread(element)


def is_hidden_style(style: str) -> bool:
    return ("none" in style or "hidden" in style) and _HIDDEN_STYLE.search(style) is not None


# The attributes that may hide an element (`_hides`), asked by name before their value is read.
HIDING_ATTRIBUTES = frozenset({"style", "hidden", "aria-hidden"})


def _hides(name: str, value: str) -> bool:
    """A hiding style, `hidden`, or `aria-hidden="true"` (`name` is one of HIDING_ATTRIBUTES)."""
    if name == "style":
        return is_hidden_style(value)
    return name == "hidden" or value.strip().lower() == "true"


def classify(element: Element) -> int:
    """CHROME (hidden, a chrome tag, or named like chrome), CAPTION, FIGURE, or PLAIN; not yet
    weighed against the page's text.

    This runs on many elements of every page, so it reads the attributes once, as a list.
    """
    return _classify(element, element.tag)


# The tags whose element is a CAPTION or FIGURE by its tag (`_classify`): one look-up tells the
# other tags (nearly every element classified) that their verdict is their names'.
_KINDED_TAGS = CAPTION_TAGS | FIGURE_TAGS
# The attributes `_classify` reads: every other one (links' targets, images' sources, scripts'
# data-*) is passed by one look-up rather than the five comparisons that tell it is none of them.
_TELLING_ATTRIBUTES = frozenset({"class", "id", "role", "itemprop", *HIDING_ATTRIBUTES})


def _classify(element: Element, tag: object) -> int:
    """`classify`, given the element's tag when the caller has read it already (each read of
    `tag` builds a new string)."""
    if tag in CHROME_TAGS:
        return CHROME
    kind = PLAIN
    for name, value in element.items():
        if name not in _TELLING_ATTRIBUTES:
            continue  # one look-up passes an href, a src, a data-* attribute
        if name == "class" or name == "id":
            # The verdict remembered for the value, looked up here without a call: every class
            # and id of the elements classified is asked, and nearly all were seen before.
            is_class = name == "class"
            found = (_CLASS_KINDS if is_class else _ID_KINDS).get(value)
            if found is None:
                found = kind_of_names(value, is_class)
            if found == CHROME:
                if (
                    len(element) <= MAX_QUOTATION_FRAME_CHILDREN
                    and wraps_quotation(element)
                    and not is_hidden(element)
                ):
                    return PLAIN
                kind = CHROME
                break
            kind = found or kind
        elif (name in HIDING_ATTRIBUTES and _hides(name, value)) or (
            name == "role" and value.strip().lower() in CHROME_ROLES
        ):
            kind = CHROME
            break
        elif name == "itemprop" and "articlebody" in value.lower():
            return PLAIN  # the publisher's own body is never chrome
    if kind == PLAIN:
        if tag not in _KINDED_TAGS:
            return PLAIN
        if tag in CAPTION_TAGS:
            return CAPTION
        return PLAIN if sets_out_text(element) else FIGURE
    return PLAIN if tag in PROTECTED_TAGS else kind


def sets_out_text(figure: Element) -> bool:
    """A `<figure>` that sets out text, not an image: a code listing or a table, and no picture
    (Jekyll's and Hexo's highlighted code, WordPress's table block: `figure.wp-block-table`).
    Its text is the article's; of an image's figure only the caption is."""
    return (
        next(figure.iter("pre", "table"), None) is not None
        and next(figure.iter(*PICTURE_TAGS), None) is None
    )


# A quoted post's frame holds the quotation, the script that renders it and perhaps a comment:
# chrome with more children is asked nothing more (most of it: bars, menus, lists).
MAX_QUOTATION_FRAME_CHILDREN = 3


def wraps_quotation(element: Element) -> bool:
    """The element holds a `<blockquote>` and nothing else (scripts aside): the frame of a post
    the article quotes (an embedded social post), named after its source, not chrome."""
    if next(element.iterchildren("blockquote"), None) is None or (element.text or "").strip():
        return False  # most chrome: no quotation among its children, told in C
    quotes = 0
    for child in element:
        if child.tag in ("script", "style") or not isinstance(child.tag, str):
            if (child.tail or "").strip():
                return False
            continue
        if child.tag != "blockquote" or (child.tail or "").strip():
            return False
        quotes += 1
    return quotes == 1


def is_hidden(element: Element) -> bool:
    """Hidden by one of its attributes or class words, whatever its names say besides."""
    return _hidden_by((element.get("class") or "").split()) or any(
        name in HIDING_ATTRIBUTES and _hides(name, value) for name, value in element.items()
    )


# Ancestors further up than this are not examined (hostile pages nest thousands deep).
MAX_ANCESTORS = 200


class Cleaning:
    """What preprocessing decided about a tree, without modifying it.

    `paragraphs` maps the content-bearing candidates outside chrome, captions and figures to
    their statistics (document order); `line_breaks` counts the page's `<br>` elements;
    `kind(element)` says whether any element is PLAIN, CHROME, CAPTION or FIGURE after the veto;
    `is_removed(element)` whether it is junk or chrome.
    """

    def __init__(
        self,
        tree: Element,
        refused: frozenset[Element] = frozenset(),
        index: TagIndex | None = None,
        *,
        shared: Cleaning | None = None,
        kept: frozenset[Element] = frozenset(),
    ) -> None:
        self.tree = tree
        # The page's elements by tag, when the caller collected them (`extractors.tree.TagIndex`):
        # a Cleaning asked again with other chrome refused reads the same paragraphs.
        self.index = index
        # Chrome the veto may not keep, whatever text it holds: the chain asks what the page
        # holds outside it (`extractors.arbiter.outside_kept_chrome`).
        self.refused = refused
        # Chrome the veto keeps, whatever share of the text it holds: the element around the
        # headline that holds the article (`extractors.arbiter.headline_in_chrome`).
        self.kept = kept
        # What does not depend on the veto (each element's own verdict, the chains of marked
        # ancestors, the paragraphs' statistics) is shared with a Cleaning of the same tree.
        self._raw: dict[Element, int] = shared._raw if shared is not None else {}
        self._vetoed: set[Element] = set()
        self._chains: dict[Element, tuple[Element, ...]] = (
            shared._chains if shared is not None else {}
        )
        self._stats: dict[Element, ParagraphStats] = shared._stats if shared is not None else {}
        # What another stage reads from the tree alone, once per page (the readability scorer's
        # runs of text: `extractors.readability`), shared the same way.
        self.memo: dict[str, object] = shared.memo if shared is not None else {}
        # Whether the page names its components "cmp-..." (`uses_cmp_namespace`), read once and
        # only when an element so named is weighed.
        self._cmp_namespace: bool | None = shared._cmp_namespace if shared is not None else None
        # One walk finds the paragraphs and counts the line breaks (text set between `<br>`s is
        # what Algorithm 2.1 cannot see; the chain asks another method where there is some).
        if index is not None:
            paragraphs, self.line_breaks = list(index.get("p")), len(index.get("br"))
        else:
            paragraphs, self.line_breaks = [], 0
            for element in tree.iter("p", "br"):
                if element.tag == "p":
                    paragraphs.append(element)
                else:
                    self.line_breaks += 1
        self.paragraphs = self._weigh(paragraphs)
        if _bearing_length(self.paragraphs) <= C_SIGMA:
            # Pages that set their text without <p>: leaf <div>s are paragraphs too. They are
            # noisier (teaser cards, menus with summaries), so they only count when needed.
            # One walk finds the leaves among the page's <p>s, in document order.
            merged = [
                element
                for element in tree.iter("p", *LEAF_PARAGRAPH_TAGS)
                if element.tag == "p" or is_leaf(element)
            ]
            if len(merged) > len(paragraphs):  # some leaf <div>s
                self._vetoed = set()
                self.paragraphs = self._weigh(merged)

    def refusing(self, refused: frozenset[Element]) -> Cleaning:
        """The same page, with `refused` chrome the veto may not keep."""
        return Cleaning(self.tree, refused, self.index, shared=self)

    def keeping(self, kept: frozenset[Element]) -> Cleaning:
        """The same page, with `kept` chrome kept by the veto whatever text it holds."""
        return Cleaning(self.tree, self.refused, self.index, shared=self, kept=kept)

    def stats(self, paragraph: Element) -> ParagraphStats:
        """The statistics of a `<p>` (read once per page)."""
        stat = self._stats.get(paragraph)
        if stat is None:
            stat = self._stats[paragraph] = paragraph_stats(paragraph)
        return stat

    def raw_kind(self, element: Element) -> int:
        kind = self._raw.get(element)
        if kind is None:
            kind = self._raw[element] = classify(element)
        return kind

    def cmp_namespace(self) -> bool:
        """Whether the page uses "cmp-" as its components' namespace (`uses_cmp_namespace`)."""
        if self._cmp_namespace is None:
            self._cmp_namespace = uses_cmp_namespace(self.tree)
        return self._cmp_namespace

    def kind(self, element: Element) -> int:
        """PLAIN, CHROME, CAPTION or FIGURE, with the veto applied."""
        # The verdict is the element's own unless the veto kept it: told by the set and the
        # element's remembered verdict, without a third dict of verdicts after the veto (each
        # element of a body written out is asked, most once: their look-up and store there cost
        # more than the set's test).
        if element in self._vetoed:
            return PLAIN
        kind = self._raw.get(element)
        if kind is None:
            kind = self._raw[element] = _classify(element, element.tag)
        return kind

    @property
    def kept_chrome(self) -> list[Element]:
        """The elements named or tagged like chrome that the veto kept."""
        return [node for node in self._vetoed if self.raw_kind(node) == CHROME]

    def is_vetoed_chrome(self, element: Element) -> bool:
        """Named or tagged like chrome, and kept by the veto."""
        return element in self._vetoed and self.raw_kind(element) == CHROME

    def is_removed(self, element: Element) -> bool:
        if element.tag in JUNK_TAGS:
            return True
        # `kind(element) == CHROME`, without its call: asked of the siblings and children of
        # every paragraph weighed as a container.
        if element in self._vetoed:
            return False
        kind = self._raw.get(element)
        if kind is None:
            kind = self._raw[element] = _classify(element, element.tag)
        return kind == CHROME

    def is_inside_removed(self, element: Element) -> bool:
        """The element or one of its ancestors is junk or chrome."""
        return any(self.is_removed(node) for node in self._marked_chain(element))

    def _weigh(self, paragraphs: list[Element]) -> dict[Element, ParagraphStats]:
        """Statistics of the paragraphs outside chrome, captions and figures, after vetoing the
        candidates that hold VETO_SHARE of the content-bearing text."""
        known = self._stats  # a page weighed again with its leaf <div>s reads its <p>s once
        stats: dict[Element, ParagraphStats] = {}
        chains: list[tuple[Element, ...]] = []  # of the paragraphs, in order (each is there once)
        held: dict[Element, int] = {}
        written: dict[Element, int] = {}  # sentences in paragraphs per marked ancestor
        total = 0
        marked_chain = self._marked_chain
        # One loop reads each paragraph's statistics and chain (every paragraph of the page).
        for paragraph in paragraphs:
            stat = known.get(paragraph)
            if stat is None:
                stat = known[paragraph] = paragraph_stats(paragraph)
            stats[paragraph] = stat
            chain = marked_chain(paragraph)
            chains.append(chain)
            if stat.bearing:
                total += stat.length
                for node in chain:
                    held[node] = held.get(node, 0) + stat.length
                if chain and ends_as_sentence(text_of(paragraph)):
                    for node in chain:
                        written[node] = written.get(node, 0) + 1
        self._vetoed = vetoed = {
            node
            for node, length in held.items()
            if length >= VETO_SHARE * total
            and not never_wraps(node, self.cmp_namespace)
            and node not in self.refused
        }
        vetoed.update(node for node in self.kept if node.tag not in JUNK_TAGS)
        # A caption is a line under its picture: one named so that holds two paragraphs of
        # prose, each ending as a sentence ends, is the text the page sets beside its pictures
        # (a post told photo by photo); a caption and its credit line ("Photo: ...") are not.
        vetoed.update(
            node
            for node, count in written.items()
            if count > CAPTION_MAX_PARAGRAPHS
            and node.tag not in JUNK_TAGS
            and self._raw.get(node) == CAPTION
        )
        # Most paragraphs have no marked ancestor at all (an empty chain), and the others share
        # a few chains (the paragraphs of one box): each chain is judged once.
        kept_chains: dict[tuple[Element, ...], bool] = {(): True}
        kept = {}
        for (paragraph, stat), chain in zip(stats.items(), chains, strict=True):
            outside = kept_chains.get(chain)
            if outside is None:
                outside = kept_chains[chain] = all(
                    node in vetoed and node.tag not in JUNK_TAGS for node in chain
                )
            if outside:
                kept[paragraph] = stat
        return kept

    def outside_chrome(
        self, items: list[T], element_of: Callable[[T], Element], length_of: Callable[[T], int]
    ) -> list[T]:
        """The items (another extractor's runs of text) outside junk and chrome, by the same veto
        over their own text: an element holding WRAPPER_SHARE of it is the page, not chrome —
        consent UI excepted. Other extractors find text outside `<p>` elements, so the veto
        Algorithm 2.1 computed over `<p>` text does not tell them what wraps their text."""
        total = sum(map(length_of, items)) or 1
        held: dict[Element, int] = {}
        chains = []
        # Items of one element (the runs of a paragraph, a box's lines) share its chain of
        # marked ancestors: each chain is filtered, and then judged, once.
        filtered: dict[tuple[Element, ...], list[Element]] = {}
        for item in items:
            marked = self._marked_chain(element_of(item))
            chain = filtered.get(marked)
            if chain is None:
                chain = filtered[marked] = [
                    node
                    for node in marked
                    if node.tag in JUNK_TAGS or self.raw_kind(node) == CHROME
                ]
            chains.append(chain)
            for node in chain:
                held[node] = held.get(node, 0) + length_of(item)
        verdicts: dict[int, bool] = {}  # by the id of a filtered chain (all held in `filtered`)
        kept = []
        for item, chain in zip(items, chains, strict=True):
            outside = verdicts.get(id(chain))
            if outside is None:
                outside = verdicts[id(chain)] = all(
                    node.tag not in JUNK_TAGS
                    and held[node] >= WRAPPER_SHARE * total
                    and not never_wraps(node, self.cmp_namespace)
                    and node not in self.refused
                    for node in chain
                )
            if outside:
                kept.append(item)
        return kept

    def _marked_chain(self, element: Element) -> tuple[Element, ...]:
        """The element and its ancestors that are junk or not PLAIN, nearest first; memoised per
        element, so paragraphs sharing ancestors share the work."""
        chains, raw = self._chains, self._raw
        pending: list[Element] = []
        node: Element | None = element
        while node is not None and node not in chains and len(pending) <= MAX_ANCESTORS:
            pending.append(node)
            node = node.getparent()
        chain = chains.get(node, ()) if node is not None else ()
        for node in reversed(pending):
            tag = node.tag  # read once: junk is told by it, and so is the element's own verdict
            if tag in JUNK_TAGS:
                chain = (node, *chain)
            else:
                kind = raw.get(node)
                if kind is None:
                    kind = raw[node] = _classify(node, tag)
                if kind != PLAIN:
                    chain = (node, *chain)
            chains[node] = chain
        return chain


def is_leaf(element: Element) -> bool:
    # A loop, not any() over a generator: asked of every <div> of a page without <p> prose.
    for child in element:  # noqa: SIM110
        if child.tag in BLOCK_TAGS:
            return False
    return True


def _bearing_length(stats: dict[Element, ParagraphStats]) -> int:
    total = 0  # a loop, not sum() over a generator: every paragraph of the page is asked
    for stat in stats.values():
        if stat.bearing:
            total += stat.length
    return total
