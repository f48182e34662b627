"""Algorithm 2.1 of seed 002 (NewsFeed): content-bearing paragraphs, best container, div/td
fallback, otherwise NULL.

Expects a tree already cleaned by `extractors.preprocess.clean_tree`.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import html

from extractors.article import Block
from extractors.blocks import clean_text, iter_blocks

# The paper's constants (seed 002): starting points, to be tuned on evidence.
CP = 40  # a content-bearing paragraph has at least this many characters ...
CT = 30  # ... and at most one nested tag per this many characters
C_SIGMA = 350  # a body container's content-bearing paragraphs carry more than this many characters
# Our addition: a paragraph that is mostly link text is a teaser or a menu, not content.
MAX_LINK_DENSITY = 0.5
# Containers the div/td fallback considers.
FALLBACK_TAGS = ("div", "td")
# Our addition to the fallback: its text must be prose. Only lines of at least this many
# characters count towards C_SIGMA, so galleries and video pages (many short captions) fail.
FALLBACK_MIN_LINE_CHARS = 2 * CP
# Fallback candidates tried, most own text first (bounds the work on huge pages).
FALLBACK_CANDIDATES = 5
METHOD_DOM = "dom"
METHOD_DOM_FALLBACK = "dom_fallback"


@dataclass(slots=True)
class DomBody:
    blocks: list[Block]
    method: str
    container: html.HtmlElement


def _link_text_length(element: html.HtmlElement) -> int:
    return sum(len(clean_text(link.text_content())) for link in element.iter("a"))


def _is_content_bearing(paragraph: html.HtmlElement) -> tuple[bool, int]:
    text_length = len(clean_text(paragraph.text_content()))
    if text_length < CP:
        return False, text_length
    nested_tags = sum(1 for element in paragraph.iterdescendants() if isinstance(element.tag, str))
    if nested_tags * CT > text_length:
        return False, text_length
    if _link_text_length(paragraph) > MAX_LINK_DENSITY * text_length:
        return False, text_length
    return True, text_length


def content_bearing_paragraphs(tree: html.HtmlElement) -> dict[html.HtmlElement, int]:
    """Line 1-2 of Algorithm 2.1: CBP plus paragraphs sandwiched between two of them."""
    lengths: dict[html.HtmlElement, int] = {}
    bearing: dict[html.HtmlElement, int] = {}
    paragraphs = list(tree.iter("p"))
    for paragraph in paragraphs:
        is_bearing, length = _is_content_bearing(paragraph)
        lengths[paragraph] = length
        if is_bearing:
            bearing[paragraph] = length
    sandwiched = {
        paragraph: lengths[paragraph]
        for paragraph in paragraphs
        if paragraph not in bearing
        and lengths[paragraph] > 0
        and _sibling_p(paragraph.getprevious()) in bearing
        and _sibling_p(paragraph.getnext()) in bearing
    }
    bearing.update(sandwiched)
    return bearing


def _sibling_p(element: html.HtmlElement | None) -> html.HtmlElement | None:
    return element if element is not None and element.tag == "p" else None


def _container_of(paragraph: html.HtmlElement) -> html.HtmlElement | None:
    """The paragraph's parent, looking through wrappers that hold nothing but it.

    Component frameworks wrap each paragraph in its own <div>; such a wrapper is transparent,
    so the paragraphs still count as children of the element that holds all of them.
    """
    parent = paragraph.getparent()
    while parent is not None and len(parent) == 1 and parent.tag not in ("body", "html"):
        parent = parent.getparent()
    return parent


def best_container(bearing: dict[html.HtmlElement, int]) -> html.HtmlElement | None:
    """Lines 3-9: the first element whose CBP children carry > C_SIGMA and > 2x the best so far."""
    per_parent: dict[html.HtmlElement, int] = {}
    for paragraph, length in bearing.items():  # insertion order is document order
        parent = _container_of(paragraph)
        if parent is not None:
            per_parent[parent] = per_parent.get(parent, 0) + length
    best, best_length = None, 0
    for parent, length in per_parent.items():
        if length > C_SIGMA and length > 2 * best_length:
            best, best_length = parent, length
    return best


def _own_text_and_media(element: html.HtmlElement) -> tuple[int, int]:
    """Text length and <a>/<img> count of `element`, excluding nested block containers."""
    text_length = len(clean_text(element.text or ""))
    media = 0
    for child in element:
        if not isinstance(child.tag, str):
            continue
        if child.tag in ("div", "td", "table", "section", "article"):
            text_length += len(clean_text(child.tail or ""))
            continue
        text_length += len(clean_text(child.text_content())) + len(clean_text(child.tail or ""))
        media += sum(1 for _ in child.iter("a", "img"))
    return text_length, media


def fallback_body(tree: html.HtmlElement) -> DomBody | None:
    """Lines 10-17: the div/td with the most own text, > C_SIGMA and > CT per link or image,
    whose long lines alone also carry more than C_SIGMA characters."""
    candidates = []
    for element in tree.iter(*FALLBACK_TAGS):
        text_length, media = _own_text_and_media(element)
        if text_length > C_SIGMA and text_length > CT * media:
            candidates.append((text_length, element))
    candidates.sort(key=lambda candidate: candidate[0], reverse=True)
    for _, element in candidates[:FALLBACK_CANDIDATES]:
        blocks = list(iter_blocks(element))
        prose = sum(len(text) for _, text in blocks if len(text) >= FALLBACK_MIN_LINE_CHARS)
        if prose > C_SIGMA:
            return DomBody(blocks=blocks, method=METHOD_DOM_FALLBACK, container=element)
    return None


def extract_dom(tree: html.HtmlElement) -> DomBody | None:
    """The article body by Algorithm 2.1, or None (NULL) when nothing convincing is found."""
    container = best_container(content_bearing_paragraphs(tree))
    if container is None:
        return fallback_body(tree)
    blocks = list(iter_blocks(container))
    return DomBody(blocks=blocks, method=METHOD_DOM, container=container) if blocks else None
