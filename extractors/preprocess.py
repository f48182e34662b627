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

from lxml import etree, html

from extractors.blocks import BLOCK_TAGS
from extractors.paragraphs import (
    ParagraphStats,
    paragraph_stats,
    primary_paragraphs,
    text_length,
)

# Removed wholesale, with their text: never article text.
JUNK_TAGS = (
    "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
    "canvas", "button", "select", "textarea", "input", "video", "audio", "map", "link", "meta",
    "picture", "source", "head", "label", "option",
)  # fmt: skip
# Semantic elements that hold chrome unless they hold the page (see VETO_SHARE).
CHROME_TAGS = frozenset({"nav", "aside", "footer", "header", "figure", "form", "dialog", "menu"})
# Class/id tokens (split on case changes, "-", "_" and spaces) that mark page chrome.
SUSPICIOUS_TOKENS = frozenset(
    {
        "nav", "navbar", "navigation", "menu", "sidebar", "social", "share", "sharing", "comment",
        "comments", "related", "promo", "promotion", "newsletter", "cookie", "cookies", "consent",
        "banner", "advert", "advertisement", "ad", "ads", "adslot", "sponsor", "sponsored",
        "breadcrumb", "breadcrumbs", "footer", "masthead", "subscribe", "subscription", "popup",
        "modal", "outbrain", "taboola", "recommended", "trending", "mostread", "teaser",
        "teasers", "signup", "paywall", "gdpr", "skip", "toolbar", "pagination", "pager", "tags",
        "caption", "figcaption", "byline", "disqus",
    }
)  # fmt: skip
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

_NAME_TOKENS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def name_tokens(element: html.HtmlElement) -> set[str]:
    """Lower-cased tokens of an element's id and class: 'relatedArticles' -> related, articles."""
    names = f"{element.get('id') or ''} {element.get('class') or ''}"
    tokens = {token.lower() for token in _NAME_TOKENS.findall(names)}
    tokens.update(part for part in re.split(r"[\s_\-]+", names.lower()) if part)
    return tokens


def is_hidden(element: html.HtmlElement) -> bool:
    attributes = element.attrib
    if "hidden" in attributes:
        return True
    if attributes.get("aria-hidden", "").strip().lower() == "true":
        return True
    style = attributes.get("style")
    if style and _HIDDEN_STYLE.search(style):
        return True
    classes = attributes.get("class")
    return bool(classes and not HIDDEN_CLASSES.isdisjoint(classes.split()))


def is_chrome_candidate(element: html.HtmlElement) -> bool:
    """Hidden, a chrome tag, or named like chrome; not yet weighed against the page's text."""
    tag = element.tag
    if tag in PROTECTED_TAGS or _is_article_body(element):
        return False
    if tag in CHROME_TAGS:
        return True
    attributes = element.attrib
    if not attributes:
        return False
    if is_hidden(element):
        return True
    if "class" not in attributes and "id" not in attributes:
        return False
    return not SUSPICIOUS_TOKENS.isdisjoint(name_tokens(element))


def _is_article_body(element: html.HtmlElement) -> bool:
    return "articlebody" in element.get("itemprop", "").lower()


@dataclass(slots=True)
class CleanTree:
    """What cleaning left: the tree (mutated) and the statistics of its surviving paragraphs."""

    tree: html.HtmlElement
    paragraphs: dict[html.HtmlElement, ParagraphStats] = field(default_factory=dict)
    removed: int = 0


def clean_tree(tree: html.HtmlElement) -> CleanTree:
    """Remove junk and chrome from `tree` in place (tails are preserved)."""
    etree.strip_elements(tree, *JUNK_TAGS, with_tail=False)
    candidates: list[html.HtmlElement] = []
    paragraphs: list[html.HtmlElement] = []
    not_leaf: set[html.HtmlElement] = set()
    for element in tree.iter(etree.Element):
        tag = element.tag
        if tag in PARAGRAPH_TAGS:
            paragraphs.append(element)
        if tag in BLOCK_TAGS:
            not_leaf.add(element.getparent())
        if is_chrome_candidate(element):
            candidates.append(element)
    # A <div> holding only inline content is a paragraph too (pages without <p>).
    paragraphs = [p for p in paragraphs if p.tag == "p" or p not in not_leaf]
    stats = {paragraph: paragraph_stats(paragraph) for paragraph in paragraphs}
    doomed = _doomed(tree, candidates, stats)
    surviving = {
        paragraph: stat
        for paragraph, stat in stats.items()
        if paragraph not in doomed and not _inside(paragraph, doomed)
    }
    for element in doomed:
        element.drop_tree()
    return CleanTree(tree=tree, paragraphs=surviving, removed=len(doomed))


def _doomed(
    tree: html.HtmlElement,
    candidates: list[html.HtmlElement],
    stats: dict[html.HtmlElement, ParagraphStats],
) -> set[html.HtmlElement]:
    """The chrome candidates to remove: those not holding VETO_SHARE of the bearing text."""
    if not candidates:
        return set()
    candidate_set = set(candidates)
    held: dict[html.HtmlElement, int] = dict.fromkeys(candidates, 0)
    total = 0
    for paragraph, stat in primary_paragraphs(stats).items():
        total += stat.length
        if paragraph in candidate_set:
            held[paragraph] += stat.length
        for ancestor in paragraph.iterancestors():
            if ancestor in candidate_set:
                held[ancestor] += stat.length
    page_text = text_length(tree)
    doomed = {
        element
        for element in candidates
        if held[element] < VETO_SHARE * total and not _is_wrapper(element, page_text)
    }
    # Only the outermost doomed elements need removing.
    return {element for element in doomed if not _inside(element, doomed)}


def _is_wrapper(element: html.HtmlElement, page_text: int) -> bool:
    """A layout wrapper: it holds most of the page's text (a real sidebar or banner does not)."""
    return page_text > 0 and text_length(element) >= VETO_SHARE * page_text


def _inside(element: html.HtmlElement, removed: set[html.HtmlElement]) -> bool:
    return any(ancestor in removed for ancestor in element.iterancestors())
