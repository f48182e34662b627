"""Content-bearing paragraphs: line 1 of Algorithm 2.1 (the NewsFeed cleartext heuristic), shared
by every stage.

A `<p>` bears content when it has at least CP characters of text and at most one nested tag per
CT characters; we add that it must not be mostly link text (a teaser or a menu set in `<p>`).
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from extractors.blocks import clean_text
from extractors.tree import Element, text_of

# The paper's constants (NewsFeed): starting points, tuned on evidence.
CP = 40  # a content-bearing paragraph has at least this many characters ...
CT = 30  # ... and at most one nested tag per this many characters
C_SIGMA = 350  # a body container's content-bearing paragraphs carry more than this many characters
# Our addition: a paragraph that is mostly link text is a teaser or a menu, not content.
MAX_LINK_DENSITY = 0.5
# How a sentence ends, in the scripts news is written in: the full stop, exclamation and question
# marks and the ellipsis; their full-width and half-width forms (Chinese, Japanese); the Arabic
# question mark and the Urdu full stop; the Devanagari danda and double danda; the Armenian full
# stop; the Ethiopic full stop and question mark; the Myanmar section marks; the Khmer khan; the
# double exclamation and interrobang. A short last line that ends so is the article's last
# sentence; a name or a credit line does not end so.
SENTENCE_ENDS = (
    ".", "!", "?", "\u2026",
    "\u3002", "\uff01", "\uff1f", "\uff0e", "\uff61",
    "\u061f", "\u06d4",
    "\u0964", "\u0965",
    "\u0589",
    "\u1362", "\u1367",
    "\u104a", "\u104b",
    "\u17d4",
    "\u203c", "\u203d",
)  # fmt: skip
# What may close a sentence after its mark: straight and curly quotation marks as each language
# sets them (English \u201d \u2019, German \u201c \u2018, French \u00bb \u203a, Danish and
# Swedish \u00ab \u2039 too), Japanese and Chinese corner and angle brackets, and brackets.
SENTENCE_CLOSERS = (
    "\"'\u201d\u2019\u201c\u2018\u00bb\u00ab\u203a\u2039\u300d\u300f\u3009\u300b\u3011\uff09)]"
)


# Not frozen: a frozen dataclass sets each field through `object.__setattr__`, four times the
# cost of building it, and every content-bearing paragraph of a page gets one. Shared instances
# (`_SHORT`) are never written to.
@dataclass(slots=True)
class ParagraphStats:
    length: int  # characters of text, whitespace collapsed
    tags: int  # nested elements
    link_length: int  # characters inside <a>
    bearing: bool  # content-bearing by line 1 of Algorithm 2.1


def text_length(element: Element) -> int:
    """Length of an element's text with runs of whitespace counted as one space."""
    return len(clean_text(text_of(element)))


# The statistics of every paragraph shorter than CP, shared (they are immutable): most pages have
# dozens of empty or one-line <p>s.
_SHORT = tuple(ParagraphStats(length, 0, 0, False) for length in range(CP))


def paragraph_stats(paragraph: Element) -> ParagraphStats:
    length = len(clean_text(text_of(paragraph)))  # text_length, without its call: every <p>
    if length < CP:
        return _SHORT[length]
    if not len(paragraph) and paragraph.tag != "a":  # text alone (counted in C): no tags, no links
        return ParagraphStats(length, 0, 0, True)
    # One walk over the nested elements counts them and finds the links among them: reading
    # each one's tag costs less than lxml's second walk for <a> (measured: 30% less for this
    # part of the statistics). A paragraph that is itself a link is link text throughout.
    links = length if paragraph.tag == "a" else 0
    nested = list(paragraph.iterdescendants(etree.Element))
    for element in nested:
        if element.tag == "a":
            links += text_length(element)
    tags = len(nested)
    bearing = tags * CT <= length and links <= MAX_LINK_DENSITY * length
    return ParagraphStats(length, tags, links, bearing)


def ends_as_sentence(text: str) -> bool:
    """Whether the text ends as a sentence ends (a name or a credit line does not)."""
    return text.rstrip().rstrip(SENTENCE_CLOSERS).endswith(SENTENCE_ENDS)


# Full stops written without a space after them (Chinese, Japanese): each ends a sentence.
_UNSPACED_SENTENCE_ENDS = ("\u3002", "\uff01", "\uff1f")
# A word ending in a full stop ends a sentence when it is longer than an initial ("J.", "M.").
_INITIAL_CHARS = 2


def holds_sentences(text: str) -> bool:
    """Whether the text holds more than one sentence: a word before its last ends as a sentence
    ends (an initial does not), or two of the full stops written without a space. A caption is
    one line; a paragraph of a story says more."""
    if sum(text.count(mark) for mark in _UNSPACED_SENTENCE_ENDS) >= 2:
        return True
    for word in text.split()[:-1]:
        word = word.rstrip(SENTENCE_CLOSERS)
        if len(word) > _INITIAL_CHARS and word.endswith(SENTENCE_ENDS):
            return True
    return False
