"""A jusText-style paragraph classifier (Pomikálek 2011), as Lejeune & Zhu describe it.

The page is cut into paragraphs at block-level tags and at <br><br>. A context-free pass labels
each paragraph from its length, link density and stop-word density:

    bad       link density > 0.2, a copyright sign, or short with a link
    short     fewer than 70 characters (too short to judge alone)
    good      at least 0.32 stop words and more than 200 characters
    near-good at least 0.30 stop words (or 0.32 and at most 200 characters)
    bad       otherwise

A context-sensitive pass then settles the uncertain ones from their neighbours: a short
paragraph between good ones is good, between bad ones bad, and between a good and a bad one good
only when a near-good paragraph separates it from the bad one; a near-good paragraph is
good unless both neighbours are bad; short or near-good headings shortly before good text are
good. The good paragraphs are the article.

Stop words come from `extractors.language` (the page's declared or guessed language). Without a
stop list for the language, jusText's language-independent mode applies (both stop-word
thresholds 0: long paragraphs are good, mid-length ones near-good): Lejeune & Zhu's "JTS".
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from extractors.article import HEADING
from extractors.language import normalize_word, page_language, stoplist
from extractors.segments import (
    BLOCK_LEVEL_TAGS,
    NEVER_TEXT_TAGS,
    Element,
    RunKey,
    Segment,
    Segmenter,
    Selection,
)

# Paragraphs end at block-level tags (jusText's list, plus the HTML5 sectioning elements).
SEGMENTER = Segmenter(boundary_tags=BLOCK_LEVEL_TAGS, skip_tags=NEVER_TEXT_TAGS, double_br=True)

# jusText's defaults.
MAX_LINK_DENSITY = 0.2
LENGTH_LOW = 70
LENGTH_HIGH = 200
STOPWORDS_LOW = 0.30
STOPWORDS_HIGH = 0.32
MAX_HEADING_DISTANCE = 200  # characters between a heading and the good text it introduces
COPYRIGHT_SIGNS = ("\xa9", "&copy")

BAD, GOOD, NEAR_GOOD, SHORT = "bad", "good", "neargood", "short"
METHOD = "justext"


@dataclass(frozen=True, slots=True)
class Thresholds:
    stopwords_low: float = STOPWORDS_LOW
    stopwords_high: float = STOPWORDS_HIGH


LANGUAGE_INDEPENDENT = Thresholds(0.0, 0.0)


def stopword_density(segment: Segment, stop_words: frozenset[str]) -> float:
    if not segment.tokens:
        return 0.0
    hits = sum(1 for token in segment.tokens if normalize_word(token) in stop_words)
    return hits / len(segment.tokens)


def context_free_class(segment: Segment, stop_words: frozenset[str], thresholds: Thresholds) -> str:
    if segment.link_density > MAX_LINK_DENSITY:
        return BAD
    if any(sign in segment.text for sign in COPYRIGHT_SIGNS):
        return BAD
    if segment.chars < LENGTH_LOW:
        return BAD if segment.link_chars > 0 else SHORT
    density = stopword_density(segment, stop_words)
    if density >= thresholds.stopwords_high:
        return GOOD if segment.chars > LENGTH_HIGH else NEAR_GOOD
    if density >= thresholds.stopwords_low:
        return NEAR_GOOD
    return BAD


_SETTLED = frozenset((GOOD, BAD))
_NOT_SHORT = frozenset((GOOD, BAD, NEAR_GOOD))


def _neighbours(classes: list[str], wanted: frozenset[str], step: int) -> list[str]:
    """For each paragraph, the class of the nearest one before it (step -1) or after it (+1)
    whose class is in `wanted`; 'bad' past the page's edge. jusText looks each one up by walking
    the run between them: one pass instead, or a page of many short paragraphs costs their
    square."""
    found = [BAD] * len(classes)
    last = BAD
    order = range(len(classes)) if step < 0 else range(len(classes) - 1, -1, -1)
    for i in order:
        found[i] = last
        if classes[i] in wanted:
            last = classes[i]
    return found


def _good_within_reach(segments: list[Segment], classes: list[str]) -> list[bool]:
    """For each paragraph: the first good one after it comes within MAX_HEADING_DISTANCE
    characters of text (jusText's walk from a heading, is_heading_before_good). One pass from
    the end: walking from every heading cost up to MAX_HEADING_DISTANCE steps each (a page of
    one-word headings: 200 per heading, 12 s for 240,000)."""
    found = [False] * len(classes)
    gap: int | None = None  # characters between this paragraph and the next good one
    for i in range(len(classes) - 1, -1, -1):
        found[i] = gap is not None and gap <= MAX_HEADING_DISTANCE
        if classes[i] == GOOD:
            gap = 0
        elif gap is not None:
            gap += segments[i].chars
    return found


def context_sensitive(segments: list[Segment], initial: list[str]) -> list[str]:
    """jusText's second pass: settle short and near-good paragraphs from their neighbours."""
    classes = list(initial)
    headings = [segment.kind == HEADING for segment in segments]
    # Short headings just before good text. Each lookup reads only the paragraphs after its
    # heading, which the loop has not changed yet: all are read from the classes before it.
    reach = _good_within_reach(segments, classes)
    for i, is_heading in enumerate(headings):
        if is_heading and classes[i] == SHORT and reach[i]:
            classes[i] = NEAR_GOOD
    settled = {}
    before, after = _neighbours(classes, _SETTLED, -1), _neighbours(classes, _SETTLED, 1)
    before_any = _neighbours(classes, _NOT_SHORT, -1)
    after_any = _neighbours(classes, _NOT_SHORT, 1)
    for i, found in enumerate(classes):  # short paragraphs
        if found != SHORT:
            continue
        if before[i] == after[i]:
            settled[i] = before[i]
        elif (before[i] == BAD and before_any[i] == NEAR_GOOD) or (
            after[i] == BAD and after_any[i] == NEAR_GOOD
        ):
            settled[i] = GOOD
        else:
            settled[i] = BAD
    for i, found in settled.items():
        classes[i] = found
    # Near-good paragraphs. jusText settles them in order, each seeing its settled predecessor;
    # a run between two settled paragraphs comes out the same either way (bad only between two
    # bad ones), so all are looked up in the classes as they stand.
    before, after = _neighbours(classes, _SETTLED, -1), _neighbours(classes, _SETTLED, 1)
    for i, found in enumerate(classes):
        if found == NEAR_GOOD:
            classes[i] = BAD if (before[i], after[i]) == (BAD, BAD) else GOOD
    reach = _good_within_reach(segments, classes)
    for i, is_heading in enumerate(headings):  # more headings just before good text
        if is_heading and classes[i] == BAD and initial[i] != BAD and reach[i]:
            classes[i] = GOOD
    return classes


def classify(segments: list[Segment], language: str | None, use_stoplist: bool = True) -> list[str]:
    """Final class of each segment. `language` None (or no stop list for it, or
    `use_stoplist` False): the language-independent mode."""
    stop_words = stoplist(language) if language and use_stoplist else frozenset()
    thresholds = Thresholds() if stop_words else LANGUAGE_INDEPENDENT
    initial = [context_free_class(segment, stop_words, thresholds) for segment in segments]
    return context_sensitive(segments, initial)


def select(
    tree: Element,
    allowed: Collection[RunKey] | None = None,
    *,
    language: str | None = None,
    use_stoplist: bool = True,
) -> Selection | None:
    """The good paragraphs of the page, or None when none is good. `language` is the page's
    declared language when the caller already knows it; otherwise it is read or guessed."""
    segments = SEGMENTER.segments(tree, allowed)
    if not segments:
        return None
    if use_stoplist:
        words = (token for segment in segments for token in segment.tokens)
        language = page_language(tree, words, declared=language)
    classes = classify(segments, language, use_stoplist)
    kept = [segment for segment, found in zip(segments, classes, strict=True) if found == GOOD]
    return Selection(kept) if kept else None
