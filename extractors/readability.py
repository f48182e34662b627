"""A readability-style content scorer: Arc90's Readability (2009), as readability-lxml and
Mozilla's Readability.js carry it on, on our shared parse.

Every run of paragraph text scores its parent and, half as much, its grandparent: one point,
one per comma-separated part, and one per 100 characters (at most 3). Containers start from
their tag (a `div` is likely a body, a list or a heading is not) and their class/id names
(`article`, `story`, `content` count for; `comment`, `footer`, `sidebar` against). Each score is
then scaled by the share of the container's text that is not link text. The best container,
with those of its siblings that score close to it or read like prose, is the article.

Unlike Algorithm 2.1 (which counts `<p>` elements only), paragraph text is found wherever a
reader sees it: in `<p>`, `<pre>`, cells and block-less `<div>`s, and as loose text between
`<br>`s or empty `<p/>` separators inside any container (Readability rewrites such runs into
paragraphs; we score them in place, as paragraphs of the element that holds them). That is why
the chain asks this scorer when Algorithm 2.1 finds nothing convincing.

Chrome (navigation, footers, comments, hidden elements...) is what `extractors.preprocess`
says, except that an element holding most of the page's paragraph text is the page (a layout
wrapper named like chrome, or an ASP.NET `<form>` around everything) and is kept — consent UI
(a cookie banner, a consent wall) excepted: it never wraps a page.

Reads the tree, never modifies it. Returns None when no paragraph text is found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from extractors.article import Block
from extractors.blocks import BLOCK_TAGS, SKIP_TAGS, TextBlock, clean_text, text_blocks
from extractors.boilerplate import keep_body_blocks
from extractors.preprocess import MAX_CACHED_NAME_CHARS, NAME_CACHE_SIZE, Cleaning
from extractors.tree import Element, holds_other_than, text_of
from extractors.wordsearch import AnyWord

METHOD = "readability"

# A run of text shorter than this is a label, not a paragraph (Readability's 25).
MIN_PARAGRAPH_CHARS = 25
# Points per 100 characters of a paragraph, and their cap (Readability).
CHARS_PER_POINT = 100
MAX_LENGTH_POINTS = 3
# Class/id names weigh this much for or against a container (Readability).
NAME_WEIGHT = 25
# Siblings of the best container join it when they score this share of its score (at least
# MIN_SIBLING_SCORE points), or read like prose: long enough with few links, or short with no
# link and a sentence end (Readability's rules).
SIBLING_SHARE = 0.2
MIN_SIBLING_SCORE = 10
SIBLING_PROSE_CHARS = 80
SIBLING_MAX_LINK_DENSITY = 0.25
# The key of the page's runs of text in `Cleaning.memo`.
_PARAGRAPHS_MEMO = "readability.paragraphs"
# Containers whose loose text (between <br>s and empty <p/>s) is read as paragraphs.
LOOSE_TEXT_TAGS = ("div", "td", "article", "section", "main", "body", "center", "font", "span")
PARAGRAPH_TAGS = ("p", "pre", "td", "div", "blockquote", "dd", "li")

_POSITIVE = AnyWord("article", "body", "content", "entry", "hentry", "h-entry", "main", "page",
                    "post", "text", "blog", "story")  # fmt: skip
_NEGATIVE = AnyWord("combx", "comment", "com-", "contact", "foot", "footer", "footnote", "masthead",
                    "media", "meta", "outbrain", "promo", "related", "scroll", "shoutbox",
                    "sidebar", "skyscraper", "sponsor", "shopping", "tags", "tool", "widget", "nav",
                    "menu")  # fmt: skip
_TAG_SCORES = {
    "div": 5, "article": 5, "main": 5, "section": 3, "pre": 3, "td": 3, "blockquote": 3,
    "address": -3, "ol": -3, "ul": -3, "dl": -3, "dd": -3, "dt": -3, "li": -3, "form": -3,
    "h1": -5, "h2": -5, "h3": -5, "h4": -5, "h5": -5, "h6": -5, "th": -5,
}  # fmt: skip
_SENTENCE_END = re.compile(r"\.( |$)")


@dataclass(slots=True)
class ReadabilityBody:
    blocks: list[Block]
    container: Element
    score: float
    parts: list[TextBlock]  # the blocks as written, link-dense ones included


@dataclass(slots=True)
class _Paragraph:
    parent: Element  # the element whose text this is (a <p>) or that holds it (loose text)
    text: str
    whole: bool  # the parent is a block-less paragraph element (not a container's loose run)


def name_weight(element: Element) -> int:
    """Readability's class/id weight: +25 per name that says body, -25 per name that says
    chrome."""
    weight = 0
    for name in (element.get("class"), element.get("id")):
        if name:
            weight += _weight_of(name) if len(name) > MAX_CACHED_NAME_CHARS else _known(name)
    return weight


def _weight_of(name: str) -> int:
    """One class or id value's weight: -NAME_WEIGHT when it says chrome, +NAME_WEIGHT when it
    says body, both when it says both."""
    return (NAME_WEIGHT if _POSITIVE.search(name) else 0) - (
        NAME_WEIGHT if _NEGATIVE.search(name) else 0
    )


# Each value's weight, remembered: a site repeats its class names on every page, and every
# container scored is weighed (hostile multi-kilobyte values are not kept).
_known = lru_cache(maxsize=NAME_CACHE_SIZE)(_weight_of)


def paragraphs(tree: Element) -> list[_Paragraph]:
    """Every run of paragraph text, in document order: block-less paragraph elements whole,
    and the loose text runs of containers that also hold blocks."""
    # The elements with a block child, from one pass over the block elements (asking each
    # candidate for its children made a Python object of every child of every candidate).
    holding_blocks = {block.getparent() for block in tree.iter(*BLOCK_TAGS)}
    found: list[_Paragraph] = []
    for element in tree.iter(*PARAGRAPH_TAGS, *LOOSE_TEXT_TAGS):
        if element not in holding_blocks:
            if element.tag in PARAGRAPH_TAGS:
                text = text_of(element)
                # Collapsing spaces never lengthens a text: most elements (empty, a menu's
                # item, a cell's figure) are told too short before it.
                if len(text) >= MIN_PARAGRAPH_CHARS:
                    text = clean_text(text)
                    if len(text) >= MIN_PARAGRAPH_CHARS:
                        found.append(_Paragraph(element, text, whole=True))
            continue
        if element.tag in LOOSE_TEXT_TAGS and _has_loose_text(element):
            found.extend(_Paragraph(element, text, whole=False) for text in loose_runs(element))
    return found


def _has_loose_text(container: Element) -> bool:
    """Whether any text sits directly in the container (most hold only whitespace between their
    blocks: the common case is decided without building runs)."""
    return holds_other_than(container, BLOCK_TAGS)


def loose_runs(container: Element) -> list[str]:
    """The runs of text directly inside `container` (with its inline children), cut at block
    children, at empty `<p/>` separators and at two `<br>`s in a row."""
    runs: list[str] = []
    parts: list[str] = [container.text or ""]
    previous_br = False
    for child in container:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in BLOCK_TAGS or (tag == "br" and previous_br):
            _flush(parts, runs)
        elif tag and tag not in SKIP_TAGS and tag != "br":
            parts.append(text_of(child))
        previous_br = tag == "br"
        parts.append(child.tail or "")
    _flush(parts, runs)
    return runs


def _flush(parts: list[str], runs: list[str]) -> None:
    text = clean_text(" ".join(parts))
    if len(text) >= MIN_PARAGRAPH_CHARS:
        runs.append(text)
    parts.clear()


def _content_score(text: str) -> float:
    return 1 + len(text.split(",")) + min(len(text) / CHARS_PER_POINT, MAX_LENGTH_POINTS)


def score_candidates(kept: list[_Paragraph]) -> dict[Element, float]:
    """Readability's scores: each paragraph feeds its parent fully and its grandparent half."""
    scores: dict[Element, float] = {}
    for paragraph in kept:
        parent = paragraph.parent
        # A block-less paragraph element scores the element around it; loose text scores the
        # container it sits in (Readability wraps it in a <p> there).
        holder = parent.getparent() if paragraph.whole else parent
        if holder is None:
            continue
        points = _content_score(paragraph.text)
        for node, share in ((holder, 1.0), (holder.getparent(), 0.5)):
            if node is None or not isinstance(node.tag, str):
                continue
            if node not in scores:
                scores[node] = _TAG_SCORES.get(node.tag, 0) + name_weight(node)
            scores[node] += points * share
    return scores


def link_density(element: Element) -> float:
    text = len(clean_text(text_of(element)))
    if not text:
        return 0.0
    links = sum(len(clean_text(text_of(link))) for link in element.iter("a"))
    return min(1.0, links / text)


# What `clean_text` makes of a text, in parts that add up: the characters of its words, how
# many words, whether it starts and whether it ends inside a word (put together, two texts
# then join a word). None is the empty text.
_Span = tuple[int, int, bool, bool] | None


def _span(text: str | None) -> _Span:
    if not text:
        return None
    words = text.split()
    return sum(map(len, words)), len(words), not text[0].isspace(), not text[-1].isspace()


def _joined(first: _Span, second: _Span) -> _Span:
    if first is None or second is None:
        return first if second is None else second
    joins = first[3] and second[2]
    return first[0] + second[0], first[1] + second[1] - joins, first[2], second[3]


def _clean_length(span: _Span) -> int:
    """`len(clean_text(text))` from the text's span."""
    return 0 if span is None else span[0] + max(span[1] - 1, 0)


class LinkDensities:
    """`link_density` of elements of one tree, each element's text read once however many of
    the elements asked hold it: the candidates of a page are often nested (a container, its
    parent, its grandparent...), and asking each for its text and its links' afresh read a
    page of 240 nested containers 240 times (16 s). The first element asked is read as
    `link_density` reads it, in C (most pages ask one or two; a page of 130,000 links in one
    paragraph costs a third as much so), the others in one walk of what they hold that no
    element asked before held (the first one's text is not walked again by its parent)."""

    def __init__(self) -> None:
        # Each element measured: its text's span and the clean length of its links' text.
        self._measured: dict[Element, tuple[_Span, int]] = {}

    def __call__(self, element: Element) -> float:
        if not self._measured:  # the first asked: its text and its links' read in C
            links = sum(len(clean_text(text_of(link))) for link in element.iter("a"))
            self._measured[element] = (_span(text_of(element)), links)
        span, links = self._measure(element)
        text = _clean_length(span)
        return min(1.0, links / text) if text else 0.0

    def _measure(self, element: Element) -> tuple[_Span, int]:
        measured = self._measured
        pending: list[tuple[Element, bool]] = [(element, False)]
        while pending:  # children before their parent, without recursion
            node, children_done = pending.pop()
            if node in measured:
                continue
            if not children_done:
                pending.append((node, True))
                for child in node:
                    if not isinstance(child.tag, str) or child in measured:
                        continue
                    if len(child):
                        pending.append((child, False))
                    else:  # a leaf (most are): its text is all of it
                        leaf = _span(child.text)
                        measured[child] = (leaf, _clean_length(leaf) if child.tag == "a" else 0)
                continue
            span, links = _span(node.text), 0
            for child in node:
                if isinstance(child.tag, str):
                    child_span, child_links = measured[child]
                    span, links = _joined(span, child_span), links + child_links
                span = _joined(span, _span(child.tail))
            if node.tag == "a":
                links += _clean_length(span)
            measured[node] = (span, links)
        return measured[element]


def best_candidate(scores: dict[Element, float]) -> tuple[Element, float] | None:
    """The container with the best score scaled by its share of non-link text; the first in the
    page among equals."""
    # The link density only scales a score down, so candidates are weighed from the highest raw
    # score and the search stops at a raw score below the best scaled one: the link text of a few
    # candidates is counted instead of every candidate's.
    ranked = sorted(enumerate(scores.items()), key=lambda item: -item[1][1])
    best: tuple[int, Element, float] | None = None
    densities = LinkDensities()
    for order, (element, score) in ranked:
        if best is not None and score < best[2]:
            break
        scaled = score * (1 - densities(element))
        if best is None or scaled > best[2] or (scaled == best[2] and order < best[0]):
            best = (order, element, scaled)
    return (best[1], best[2]) if best is not None else None


def _joins(sibling: Element, threshold: float, scores: dict[Element, float], before: bool) -> bool:
    if sibling in scores and scores[sibling] * (1 - link_density(sibling)) >= threshold:
        return True
    if sibling.tag != "p" and not (before and _paragraph_div(sibling)):
        return False
    text = clean_text(text_of(sibling))
    density = link_density(sibling)
    if len(text) > SIBLING_PROSE_CHARS:
        return density < SIBLING_MAX_LINK_DENSITY
    return density == 0 and _SENTENCE_END.search(text) is not None


def _paragraph_div(element: Element) -> bool:
    """A `<div>` holding no block: a paragraph to the reader, as Readability.js rewrites it into
    a `<p>` before scoring. Asked of the siblings before the body only: a lead set in a `div` of
    its own above it. After the body, such prose is the house's ("Don't forget to check out our
    library"), a word count, a promotion."""
    return element.tag == "div" and next(element.iterdescendants(*BLOCK_TAGS), None) is None


def article_elements(best: Element, score: float, scores: dict[Element, float]) -> list[Element]:
    """The best container and the siblings that belong with it, in document order."""
    parent = best.getparent()
    if parent is None:
        return [best]
    threshold = max(MIN_SIBLING_SCORE, score * SIBLING_SHARE)
    threshold += name_weight(best) * SIBLING_SHARE if name_weight(best) > 0 else 0
    siblings = [sibling for sibling in parent if isinstance(sibling.tag, str)]
    position = next(index for index, sibling in enumerate(siblings) if sibling is best)
    return [
        sibling
        for index, sibling in enumerate(siblings)
        if sibling is best or _joins(sibling, threshold, scores, before=index < position)
    ]


@dataclass(slots=True)
class ReadabilityChoice:
    """Where the scorer sees the article, before its text is written out."""

    container: Element  # the best-scoring container
    score: float
    elements: list[Element]  # the container and the siblings that join it, chrome left out


def choose_article(
    cleaning: Cleaning, apart_from: Element | None = None
) -> ReadabilityChoice | None:
    """The best container and its joining siblings, or None when the page has no paragraph
    text. `apart_from`: a region of the page set aside, its paragraphs not scored and no
    element around it or in it chosen (the article elsewhere than a body found there)."""
    kept = cleaning.outside_chrome(
        _page_paragraphs(cleaning), lambda found: found.parent, lambda found: len(found.text)
    )
    if apart_from is not None:
        kept = [found for found in kept if not _within(found.parent, apart_from)]
    if not kept:
        return None
    scores = score_candidates(kept)
    found = best_candidate(scores)
    if found is None:
        return None
    best, score = found
    if apart_from is not None and apart_from in best.iterancestors():
        return None  # the best container holds the region set aside: no region of its own
    elements = [
        element
        for element in article_elements(best, score, scores)
        if (element is best or not cleaning.is_removed(element))
        and (apart_from is None or not _within(element, apart_from))
    ]
    return ReadabilityChoice(best, score, elements)


def _page_paragraphs(cleaning: Cleaning) -> list[_Paragraph]:
    """`paragraphs` of the cleaning's page, found once per page (the chain may ask the scorer
    twice: beside loose text, and apart from a body without a date)."""
    found = cleaning.memo.get(_PARAGRAPHS_MEMO)
    if found is None:
        found = cleaning.memo[_PARAGRAPHS_MEMO] = paragraphs(cleaning.tree)
    return cast(list[_Paragraph], found)


def _within(element: Element, region: Element) -> bool:
    """`element` is `region` or inside it (`in` walks the ancestors in C)."""
    return element is region or region in element.iterancestors()


def write_article(choice: ReadabilityChoice, cleaning: Cleaning) -> ReadabilityBody | None:
    """The chosen elements as blocks; None when they hold no block worth keeping."""
    written = [
        block for element in choice.elements for block in text_blocks(element, cleaning.kind)
    ]
    blocks = keep_body_blocks(written)
    return ReadabilityBody(blocks, choice.container, choice.score, written) if blocks else None


def extract_readability(cleaning: Cleaning) -> ReadabilityBody | None:
    """The article by Readability's scoring, or None when the page has no paragraph text."""
    choice = choose_article(cleaning)
    return write_article(choice, cleaning) if choice is not None else None
