"""The fallback cascade: what the chain does when Algorithm 2.1 finds nothing convincing.

Algorithm 2.1 (the NewsFeed cleartext heuristic) only counts text set in `<p>` elements. When it
finds no body, a body too short to be an article, or a body inside an element named like chrome
(a footer, a comment list) that it kept only because nothing else on the page was in `<p>`s, the
page is asked again, in this order:

1. the readability-style scorer (`extractors.readability`), which finds paragraph text wherever
   a reader sees it (loose text between `<br>`s, `<p/>` separators, table cells);
2. two *witnesses* from different families: Boilerpipe with the HTML-tree filter (Kohlschuetter
   et al., WSDM 2010; Viveros-Jimenez et al., Computacion y Sistemas 2018), which classifies
   text blocks by text and link density, and jusText (Pomikalek 2011), which classifies
   paragraphs by length, link and stop-word density.

Answers are reconciled by agreement, measured in the benchmark's own unit (word 4-gram
shingles): a candidate's *support* is the largest share of its shingles that another,
independent method also returned. Two methods that look at different evidence and return the
same text are strong evidence that the text is the article; a candidate nobody confirms is the
weakest. Candidates that contain one another agree on their common part, and the part only one of
them adds is unconfirmed: the smaller one is taken when it holds at least half of the other.

Every extractor here reads the shared parse; none modifies it. The witnesses run only on the
pages that reach the cascade, so the cost of a page Algorithm 2.1 handles is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from extractors import boilerpipe, justext, treefilter
from extractors.article import TEXT_KINDS, Block, is_too_short, running_text
from extractors.blocks import TextBlock
from extractors.dom import FALLBACK_MIN_LINE_CHARS
from extractors.evaluation import Shingle, shingle_set
from extractors.evidence import BodyShape
from extractors.preprocess import Cleaning
from extractors.readability import METHOD as METHOD_READABILITY
from extractors.readability import (
    ReadabilityBody,
    choose_article,
    extract_readability,
    write_article,
)
from extractors.segments import Segment, Selection
from extractors.tree import Element, common_ancestor, more_elements_than

# Two bodies agree when this share of one's shingles is in the other.
AGREEMENT = 0.9
# A candidate is confirmed when another method returned at least this share of its shingles.
CONFIRMED = 0.5
# A body inside another is taken instead of it only when it holds at least this share of the
# other's text: a single paragraph both share is not the article.
MIN_CONTAINED_SHARE = 0.5
# Two bodies disagree when neither holds this share of the other's shingles.
DISAGREEMENT = 0.5
# A page of more elements than this is not asked the witnesses: they walk and classify every
# text block twice (three quarters of the time on a page of 195,000 tiny paragraphs: 5.7 s of
# which 4.5 s), and the rest of the cascade stands unconfirmed, as when neither finds a body.
# The largest page of the three benchmark sets has 10,534 elements; this is five times that.
MAX_WITNESSED_ELEMENTS = 50_000
# The witnesses' methods: a body one of them returned was found by density and words alone.
WITNESS_METHODS = frozenset({treefilter.METHOD, justext.METHOD})


@dataclass
class Candidate:
    """One method's body (no slots: its text and shingles are computed once, on demand)."""

    method: str
    blocks: list[Block]
    parts: list[TextBlock] | None = None  # as written, link-dense blocks included, when known
    container: Element | None = None

    @property
    def shape(self) -> BodyShape:
        return BodyShape(self.blocks, self.parts, self.container)

    @cached_property
    def text(self) -> str:
        return running_text(self.blocks)

    @cached_property
    def shingles(self) -> frozenset[Shingle]:
        return shingle_set(self.text)


def share_in(candidate: Candidate, other: Candidate) -> float:
    """The share of `candidate`'s distinct shingles that `other` also has."""
    if not candidate.shingles:
        return 0.0
    return len(candidate.shingles & other.shingles) / len(candidate.shingles)


def _readable(scored: ReadabilityBody) -> Candidate:
    return Candidate(METHOD_READABILITY, scored.blocks, scored.parts, scored.container)


def witnesses(cleaning: Cleaning, language: str | None) -> list[Candidate]:
    """The two witnesses' bodies (those that found one), without the text inside chrome.

    Both judge text by its density and words alone, so a cookie banner or a footer reads as
    prose to them; the chrome preprocessing found is left out of what they may vote for (before
    the tree filter picks its branch, so that a chrome branch cannot win it). None on a page of
    more than MAX_WITNESSED_ELEMENTS elements.
    """
    tree = cleaning.tree
    if more_elements_than(tree, MAX_WITNESSED_ELEMENTS):
        return []

    def outside_chrome(selection: Selection | None) -> list[Segment]:
        if selection is None:
            return []
        return cleaning.outside_chrome(selection.segments, lambda s: s.element, lambda s: s.chars)

    found = []
    for method, segments in (
        (treefilter.METHOD, treefilter.filter_segments(outside_chrome(boilerpipe.select(tree)))),
        (justext.METHOD, outside_chrome(justext.select(tree, language=language))),
    ):
        if segments:
            # Where a witness's body sits, for the evidence that reads the page around it.
            container = common_ancestor([segment.element for segment in segments])
            found.append(Candidate(method, Selection(segments).blocks, container=container))
    return found


def disagree(first: Candidate, second: Candidate) -> bool:
    """The two bodies share little text: at most one of them is the article."""
    return share_in(first, second) < DISAGREEMENT and share_in(second, first) < DISAGREEMENT


def support(candidate: Candidate, others: list[Candidate]) -> float:
    """The largest share of the candidate's shingles that one other method confirms."""
    return max(
        (share_in(candidate, other) for other in others if other is not candidate), default=0.0
    )


def _nested_choice(first: Candidate, second: Candidate) -> Candidate | None:
    """When one body contains the other: the smaller, if it holds enough of the larger; the first
    when they are the same text; None when neither contains the other."""
    first_in_second, second_in_first = share_in(first, second), share_in(second, first)
    if first_in_second >= AGREEMENT and second_in_first >= AGREEMENT:
        return first
    if first_in_second < AGREEMENT and second_in_first < AGREEMENT:
        return None
    inner, outer = (first, second) if first_in_second >= AGREEMENT else (second, first)
    return inner if len(inner.text) >= MIN_CONTAINED_SHARE * len(outer.text) else outer


def recheck(
    primary: Candidate,
    cleaning: Cleaning,
    language: str | None,
    placed: Callable[[Candidate, Candidate], Candidate | None] = lambda first, second: None,
) -> Candidate:
    """A body Algorithm 2.1 found inside chrome, checked against the readability scorer: kept when
    they agree; otherwise the one the page places as its article (`placed`), or the better
    confirmed of the two."""
    choice = choose_article(cleaning)
    if choice is None:
        return primary
    if len(choice.elements) == 1 and choice.elements[0] is primary.container:
        # Both methods chose the same element: they agree on where the article is, and
        # Algorithm 2.1 writes it with the lead paragraph and twins it found around it.
        return primary
    scored = write_article(choice, cleaning)
    if scored is None:
        return primary
    other = _readable(scored)
    nested = _nested_choice(primary, other)
    if nested is not None:
        return nested
    if (chosen := placed(primary, other)) is not None:
        return chosen
    others = witnesses(cleaning, language)
    return other if support(other, others) > support(primary, others) else primary


def rescue(
    cleaning: Cleaning,
    language: str | None,
    placed: Callable[[Candidate, Candidate], Candidate | None] = lambda first, second: None,
) -> Candidate | None:
    """A body for a page where Algorithm 2.1 found none, or one too short to be an article: the
    readability scorer's when a witness confirms it; else a witness the other one confirms (see
    `_confirmed_or_readable`); else the readability scorer's unconfirmed (the evidence then
    decides), or None."""
    scored = extract_readability(cleaning)
    readable = _readable(scored) if scored is not None else None
    others = witnesses(cleaning, language)
    if readable is not None and support(readable, others) >= CONFIRMED:
        return readable
    everyone = [*others, *([readable] if readable is not None else [])]
    ranked = [(support(witness, everyone), witness) for witness in others]
    best = max(ranked, key=lambda pair: pair[0], default=None)
    if best is not None and best[0] >= CONFIRMED:
        if readable is not None and _extends(readable, best[1]):
            return readable
        return _confirmed_or_readable(best[1], readable, placed)
    return readable


def _extends(readable: Candidate, witness: Candidate) -> bool:
    """The readability scorer's body holds the confirmed witness and goes on with prose around
    it: the witness is the part of the article both density methods agree on, and the rest of
    the article is written in paragraphs beside it.

    Boilerpipe's tree filter and jusText keep the densest stretch of a page whose text is set
    between line breaks or in table cells: on a short article, the lead and a paragraph or two.
    They confirm each other, the scorer's body holds what they hold (half of the witness's
    shingles at least) and more, and so is unconfirmed as a whole. What it adds is the article's
    when it is prose: paragraphs of two content-bearing lines (FALLBACK_MIN_LINE_CHARS) or more
    carry at least half of the added text. A table beside a notice (a jobs board, a league
    table), a credits line beside a podcast's summary, are not prose; a body too short to be an
    article is left to the witness, as before (a short post is judged by where the page sets it).
    """
    if share_in(witness, readable) < CONFIRMED or is_too_short(readable.text):
        return False
    added = prose = 0
    for kind, text in readable.blocks:
        own = shingle_set(text)
        if own and len(own & witness.shingles) * 2 >= len(own):
            continue  # the witness holds this block
        added += len(text)
        if kind in TEXT_KINDS and len(text) >= FALLBACK_MIN_LINE_CHARS:
            prose += len(text)
    return added > 0 and 2 * prose >= added


def _confirmed_or_readable(
    witness: Candidate,
    readable: Candidate | None,
    placed: Callable[[Candidate, Candidate], Candidate | None],
) -> Candidate:
    """The confirmed witness, or the readability scorer's body, unconfirmed, that the page's
    headline places as its article (`placed`: the body that starts nearer after it).

    Two witnesses agree as readily on a box beside the article (a disclaimer, the publisher's
    footer, both prose) as on the article: their agreement says the text is prose, not where the
    article is. The headline is asked only when the two bodies share little text and sit in
    unrelated regions of the page: a witness that the scorer's body holds, or that sits in its
    region, is a part of the one answer both gave."""
    if readable is None or not disagree(witness, readable):
        return witness
    first, second = readable.container, witness.container
    if _holds(first, second) or _holds(second, first):
        return witness
    return placed(readable, witness) or witness


def _holds(outer: Element | None, inner: Element | None) -> bool:
    """`outer` is `inner` or one of its ancestors (False when either is unknown)."""
    if outer is None or inner is None:
        return False
    return outer is inner or any(node is outer for node in inner.iterancestors())
