"""A Boilerpipe-style block classifier (Kohlschütter et al., WSDM 2010), as Viveros-Jiménez et al.
and Lejeune & Zhu describe it: the page is cut into text blocks at every non-inline tag, each block
gets shallow text features, and a decision tree learnt on them labels each block content or
boilerplate, looking at the previous and next block too (blocks of one class tend to be
consecutive).

Features (`BlockFeatures`): number of words, average word length, average sentence length, link
density (share of words inside <a>), text density (words per line when the block is wrapped at
80 columns — the "optimal width" of a line for a human reader), and relative position. The
classifier is the published C4.8 tree over text density and link density of the previous,
current and next block (Boilerpipe's `DensityRulesClassifier`, the core of its
`DefaultExtractor`), after fusing neighbouring blocks of equal text density.

Recall-oriented by design (Viveros-Jiménez et al.: P 0.76, R 0.92 on English news);
`extractors.treefilter` adds the HTML-tree filter of Viveros-Jiménez et al. on top for precision.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from extractors.segments import Element, RunKey, Segment, Segmenter, Selection, is_word

# Boilerpipe's inline tags: they never split a block (TA_INLINE_NO_WHITESPACE and <a>).
INLINE_TAGS = frozenset(
    {
        "a", "strike", "s", "u", "b", "i", "em", "strong", "span", "sup", "sub", "code", "tt",
        "var", "abbr", "acronym", "font", "small", "big", "mark", "q", "cite", "time", "label",
        "ins", "del", "kbd", "samp", "dfn", "bdi", "bdo", "nobr",
    }
)  # fmt: skip
SEGMENTER = Segmenter(inline_tags=INLINE_TAGS)
# Lines are wrapped at this many characters to measure text density (Lejeune & Zhu: "columns of
# length 80, considered as the optimal length for a human reader").
LINE_WIDTH = 80
# The published decision tree (DensityRulesClassifier), thresholds as learnt by C4.8.
MAX_LINK_DENSITY = 0.333333
MAX_PREVIOUS_LINK_DENSITY = 0.555556
SHORT_TEXT_DENSITY = 9
NEXT_SHORT_TEXT_DENSITY = 10
PREVIOUS_SHORT_TEXT_DENSITY = 4
NEXT_TEXT_DENSITY_AFTER_LINKS = 11
_NON_LETTERS = re.compile(r"[\W_]+")
_SENTENCE_END = (".", "!", "?", "\u3002", "\uff01", "\uff1f")  # and the CJK full stops

METHOD = "boilerpipe"


@dataclass(slots=True)
class BlockFeatures:
    """The shallow text features of one (possibly fused) block."""

    words: int = 0
    link_words: int = 0
    words_in_wrapped_lines: int = 0
    wrapped_lines: int = 0
    word_chars: int = 0
    sentences: int = 0
    position: float = 0.0  # relative position of the block in the page, 0..1
    segments: list[Segment] = field(default_factory=list)

    @property
    def text_density(self) -> float:
        """Words per wrapped line, the last (partial) line left out unless it is the only one."""
        if self.wrapped_lines == 0:
            return float(self.words)
        return self.words_in_wrapped_lines / self.wrapped_lines

    @property
    def link_density(self) -> float:
        return self.link_words / self.words if self.words else 0.0

    @property
    def average_word_length(self) -> float:
        return self.word_chars / self.words if self.words else 0.0

    @property
    def average_sentence_length(self) -> float:
        return self.words / max(1, self.sentences)

    def merge(self, other: BlockFeatures) -> None:
        self.words += other.words
        self.link_words += other.link_words
        self.words_in_wrapped_lines += other.words_in_wrapped_lines
        self.wrapped_lines += other.wrapped_lines
        self.word_chars += other.word_chars
        self.sentences += other.sentences
        self.segments.extend(other.segments)


def features(segment: Segment, position: float = 0.0) -> BlockFeatures:
    """Boilerpipe's per-block counts, wrapping the words at LINE_WIDTH columns."""
    words = wrapped_lines = words_on_line = sentences = 0
    line_length = -1  # the first word needs no leading space
    for token in segment.tokens:
        if not is_word(token):
            continue
        words += 1
        words_on_line += 1
        if token.endswith(_SENTENCE_END):
            sentences += 1
        line_length += len(token) + 1
        if line_length > LINE_WIDTH:
            wrapped_lines += 1
            line_length = len(token)
            words_on_line = 1
    link_words = min(segment.link_tokens, words)
    word_chars = len(_NON_LETTERS.sub("", segment.text))  # punctuation and spaces are no letters
    if wrapped_lines == 0:
        in_wrapped, wrapped_lines = words, 1
    else:
        in_wrapped = words - words_on_line
    return BlockFeatures(
        words=words,
        link_words=link_words,
        words_in_wrapped_lines=in_wrapped,
        wrapped_lines=wrapped_lines,
        word_chars=word_chars,
        sentences=sentences,
        position=position,
        segments=[segment],
    )


_EMPTY = BlockFeatures()


def fuse_equal_density(blocks: list[BlockFeatures]) -> list[BlockFeatures]:
    """Merge each block into its predecessor when both have the same text density
    (Boilerpipe's SimpleBlockFusionProcessor)."""
    fused: list[BlockFeatures] = []
    for block in blocks:
        if fused and fused[-1].text_density == block.text_density:
            fused[-1].merge(block)
        else:
            fused.append(block)
    return fused


def is_content(previous: BlockFeatures, current: BlockFeatures, following: BlockFeatures) -> bool:
    """The C4.8 decision tree over text and link density, with the neighbours as context."""
    if current.link_density > MAX_LINK_DENSITY:
        return False
    if previous.link_density > MAX_PREVIOUS_LINK_DENSITY:
        return following.text_density > NEXT_TEXT_DENSITY_AFTER_LINKS
    if current.text_density <= SHORT_TEXT_DENSITY:
        if following.text_density <= NEXT_SHORT_TEXT_DENSITY:
            return previous.text_density > PREVIOUS_SHORT_TEXT_DENSITY
        return True
    return following.text_density != 0


def classify(segments: list[Segment]) -> list[BlockFeatures]:
    """The content blocks among `segments` (fused blocks, in document order)."""
    count = max(1, len(segments) - 1)
    blocks = fuse_equal_density([features(segment, segment.index / count) for segment in segments])
    content = []
    for i, block in enumerate(blocks):
        previous = blocks[i - 1] if i > 0 else _EMPTY
        following = blocks[i + 1] if i + 1 < len(blocks) else _EMPTY
        if is_content(previous, block, following):
            content.append(block)
    return content


def select(tree: Element, allowed: Collection[RunKey] | None = None) -> Selection | None:
    """Boilerpipe's content segments of the page, or None when no block is content."""
    segments = SEGMENTER.segments(tree, allowed)
    kept = [segment for block in classify(segments) for segment in block.segments]
    return Selection(kept) if kept else None
