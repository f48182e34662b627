"""Seed 002's preprocessing: remove what is clearly not the article body.

Two kinds of removal:

* **Junk** — scripts, styles, embedded objects, form controls: never text a reader sees. Removed
  by tag in one C-level call.
* **Chrome** — `nav`, `aside`, `footer`, `header`, `figure`, `form`; hidden elements (inline CSS,
  `hidden`, `aria-hidden`, hidden utility classes); elements whose id or class names say they are
  navigation, sidebars, social buttons, comments, related links, promos, newsletters, cookie
  banners or ads. Names are only evidence, and layout wrappers often carry them
  ("container with-sidebar", "ad-off-canvas-pusher" around the whole page): a chrome candidate
  that holds most of the page's content-bearing text *is* the page, so it is kept (`VETO_SHARE`).

`clean_tree` mutates the tree: removal is the cheapest way to make every later stage blind to
chrome (a deep copy costs half a parse). Callers that run other extractors on the same parse run
them first, or hand this stage `copy.deepcopy(tree)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lxml import etree

from extractors.blocks import BLOCK_TAGS
from extractors.paragraphs import (
    ParagraphStats,
    paragraph_stats,
    primary_paragraphs,
)
from extractors.tree import Element, remove_element

# Removed wholesale, with their text: never article text.
JUNK_TAGS = (
    "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
    "canvas", "button", "select", "textarea", "input", "video", "audio", "map", "link", "meta",
    "picture", "source", "head", "label", "option",
)  # fmt: skip
# Semantic elements that hold chrome unless they hold the page (see VETO_SHARE).
CHROME_TAGS = frozenset({"nav", "aside", "footer", "header", "form", "dialog", "menu"})
# Figures stay: the block writer keeps their captions (as "caption" blocks) and nothing else.
FIGURE_TAGS = frozenset({"figure"})
CAPTION_TAGS = frozenset({"figcaption"})
# Class/id tokens that mark an image caption or credit (a "caption" block, not body text).
CAPTION_TOKENS = frozenset({"caption", "figcaption"})
# Class/id tokens (split on case changes, "-", "_" and spaces) that mark page chrome.
SUSPICIOUS_TOKENS = frozenset(
    {
        "nav", "navbar", "navigation", "menu", "sidebar", "social", "share", "sharing", "comment",
        "comments", "related", "promo", "promotion", "newsletter", "cookie", "cookies", "consent",
        "banner", "advert", "advertisement", "ad", "ads", "adslot", "sponsor", "sponsored",
        "breadcrumb", "breadcrumbs", "footer", "masthead", "subscribe", "subscription", "popup",
        "modal", "outbrain", "taboola", "recommended", "trending", "mostread", "teaser",
        "teasers", "signup", "paywall", "gdpr", "skip", "toolbar", "pagination", "pager", "tags",
        "byline", "disqus",
    }
)  # fmt: skip
# Distinct id/class strings whose verdict is remembered (a site repeats its class names).
NAME_CACHE_SIZE = 65536
# Whole class names that hide an element in every CSS framework we know.
HIDDEN_CLASSES = frozenset(
    {"hidden", "hide", "d-none", "is-hidden", "sr-only", "visually-hidden", "screen-reader-text",
     "visuallyhidden", "invisible", "u-hidden"}
)  # fmt: skip
# Paragraph-like elements: <p>, and <div>s that hold no block-level element.
PARAGRAPH_TAGS = frozenset({"p", "div"})
# Never removed by name: the document frame.
PROTECTED_TAGS = frozenset({"html", "body"})
# A chrome candidate holding at least this share of the page's content-bearing text is a layout
# wrapper named after something it also holds ("main with-sidebar"): kept.
VETO_SHARE = 0.5

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_HIDDEN_CLASS = re.compile(
    r"(?:^|\s)(?:" + "|".join(re.escape(name) for name in sorted(HIDDEN_CLASSES)) + r")(?=\s|$)"
)
# Bootstrap's collapsed panels are hidden until opened ("collapse show" / "collapse in").
_COLLAPSED = re.compile(r"(?:^|\s)collapse(?=\s|$)")
_EXPANDED = re.compile(r"(?:^|\s)(?:show|in)(?=\s|$)")


@lru_cache(maxsize=NAME_CACHE_SIZE)
def names_say_chrome(names: str) -> bool:
    """Whether id/class names mark chrome: a part of them ('related-box', 'relatedArticles',
    'theiaStickySidebar') is one of SUSPICIOUS_TOKENS, in any case."""
    return not SUSPICIOUS_TOKENS.isdisjoint(part.lower() for part in _NAME_PART.findall(names))


@lru_cache(maxsize=NAME_CACHE_SIZE)
def names_say_caption(names: str) -> bool:
    return not CAPTION_TOKENS.isdisjoint(part.lower() for part in _NAME_PART.findall(names))


@lru_cache(maxsize=NAME_CACHE_SIZE)
def classes_say_hidden(classes: str) -> bool:
    if _HIDDEN_CLASS.search(classes):
        return True
    return _COLLAPSED.search(classes) is not None and _EXPANDED.search(classes) is None


def is_hidden(attributes: Any) -> bool:
    """Hidden by the `hidden` attribute, aria-hidden, inline CSS or a hiding utility class."""
    if "hidden" in attributes:
        return True
    aria_hidden = attributes.get("aria-hidden")
    if aria_hidden is not None and aria_hidden.strip().lower() == "true":
        return True
    style = attributes.get("style")
    if style and _HIDDEN_STYLE.search(style):
        return True
    classes = attributes.get("class")
    return bool(classes) and classes_say_hidden(classes)


# What the classification pass makes of an element.
PLAIN, CHROME, CAPTION, FIGURE = 0, 1, 2, 3


def classify(element: Element) -> int:
    """CHROME (hidden, a chrome tag, or named like chrome), CAPTION, FIGURE, or PLAIN; not yet
    weighed against the page's text."""
    tag = element.tag
    if tag in PROTECTED_TAGS:
        return PLAIN
    if tag in CHROME_TAGS:
        return CHROME
    attributes = element.attrib
    if attributes:
        if _is_article_body(attributes):
            return PLAIN
        if is_hidden(attributes):
            return CHROME
        classes, identifier = attributes.get("class"), attributes.get("id")
        if (classes and names_say_chrome(classes)) or (identifier and names_say_chrome(identifier)):
            return CHROME
        if (classes and names_say_caption(classes)) or (
            identifier and names_say_caption(identifier)
        ):
            return CAPTION
    if tag in CAPTION_TAGS:
        return CAPTION
    if tag in FIGURE_TAGS:
        return FIGURE
    return PLAIN


def _is_article_body(attributes: Any) -> bool:
    itemprop = attributes.get("itemprop")
    return itemprop is not None and "articlebody" in itemprop.lower()


@dataclass(slots=True)
class CleanTree:
    """What cleaning left: the tree (mutated), the statistics of its surviving paragraphs, and
    the image captions the block writer keeps apart from the body text."""

    tree: Element
    paragraphs: dict[Element, ParagraphStats] = field(default_factory=dict)
    captions: frozenset[Element] = frozenset()
    removed: int = 0


def clean_tree(tree: Element) -> CleanTree:
    """Remove junk and chrome from `tree` in place (tails are preserved)."""
    etree.strip_elements(tree, *JUNK_TAGS, with_tail=False)
    paragraphs: list[Element] = []
    not_leaf: set[Element] = set()
    candidates: dict[Element, int] = {}
    # One pass in Python over the whole tree: it costs about as much as parsing, so it does
    # everything that needs to see every element.
    for element in tree.iter(etree.Element):
        tag = element.tag
        if tag in PARAGRAPH_TAGS:
            paragraphs.append(element)
        if tag in BLOCK_TAGS:
            not_leaf.add(element.getparent())
        kind = classify(element)
        if kind != PLAIN:
            candidates[element] = kind
    # A <div> holding only inline content is a paragraph too (pages without <p>).
    paragraphs = [p for p in paragraphs if p.tag == "p" or p not in not_leaf]
    stats = {paragraph: paragraph_stats(paragraph) for paragraph in paragraphs}
    # A candidate holding most of the page's content-bearing text is the page: not chrome.
    kept = _weigh(candidates, stats)
    doomed = {element for element in kept if kept[element] == CHROME}
    doomed = {element for element in doomed if not _inside(element, doomed)}
    captions = frozenset(element for element in kept if kept[element] == CAPTION)
    set_apart = doomed | {element for element in kept if kept[element] != CHROME}
    surviving = {
        paragraph: stat
        for paragraph, stat in stats.items()
        if paragraph not in set_apart and not _inside(paragraph, set_apart)
    }
    for element in doomed:
        remove_element(element)
    return CleanTree(tree=tree, paragraphs=surviving, captions=captions, removed=len(doomed))


def _weigh(
    candidates: dict[Element, int], stats: dict[Element, ParagraphStats]
) -> dict[Element, int]:
    """The candidates that do not hold VETO_SHARE of the bearing text, with their kind."""
    if not candidates:
        return {}
    held: dict[Element, int] = dict.fromkeys(candidates, 0)
    total = 0
    for paragraph, stat in primary_paragraphs(stats).items():
        total += stat.length
        if paragraph in held:
            held[paragraph] += stat.length
        for ancestor in paragraph.iterancestors():
            if ancestor in held:
                held[ancestor] += stat.length
    return {
        element: kind
        for element, kind in candidates.items()
        if held[element] < VETO_SHARE * total or total == 0
    }


def _inside(element: Element, removed: set[Element]) -> bool:
    return any(ancestor in removed for ancestor in element.iterancestors())
