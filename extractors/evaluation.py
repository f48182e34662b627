"""Scoring extracted text against a gold body: the shingle metric of the article-extraction
benchmark, as its publishers compute it.

Tokens are the matches of `\\w+` (case kept, punctuation dropped). A text becomes the multiset of
its word 4-gram shingles (one shingle of all its tokens when it has fewer than four, none when it
has no token). Per page, tp/fp/fn are the multiset intersection and the two differences,
normalised by their sum so that long pages weigh no more than short ones. Precision is averaged
over pages with tp + fp > 0 (an empty prediction does not count towards it), recall over pages
with tp + fn > 0; a page with fp = fn = 0 scores 1 on both. F1 is the harmonic mean of the two
averages. Accuracy is the share of pages whose token sequences are identical.

Next to it, the papers' own metrics, on the same tokens and averaged the same way, so that one table
compares extractors by all of them (`score_metrics`): word-level P/R of CETR (Weninger et al., WWW
2010, Equation 5), character-level P/R of the HTML-tree filter paper (Viveros-Jiménez et al.,
Computación y Sistemas 2018), and the CleanEval text-only score Lejeune & Zhu use (Computación y
Sistemas 2018).

Pure functions, no I/O: the benchmark command and other evaluations reuse them.
"""

from __future__ import annotations

import difflib
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SHINGLE_SIZE = 4
_TOKEN = re.compile(r"\w+")
# What clings to a word and is never part of a token: ASCII punctuation but "_" (a word
# character), and typographic quotes ("word," "(word)" "“word”").
_CLINGING = string.punctuation.replace("_", "") + "\u2018\u2019\u201c\u201d\u00ab\u00bb"

Shingle = tuple[str, ...]


def tokenize(text: str | None) -> list[str]:
    """The `\\w+` tokens of `text`, case kept, punctuation dropped.

    Word by word: whitespace is never a word character, so no token spans two words, and a word
    of letters and digits alone (`isalnum`, the same characters `\\w` matches, but "_") is one
    token, told in C; so is one with punctuation around it only, stripped. Only the others
    (punctuation inside, "don't") go through the expression, which costs several times more per
    character than the split."""
    tokens: list[str] = []
    append, extend = tokens.append, tokens.extend
    for word in (text or "").split():
        if word.isalnum():
            append(word)
            continue
        core = word.strip(_CLINGING)  # no token loses or gains a character: none is one
        if core.isalnum():
            append(core)
        elif core:
            extend(_TOKEN.findall(core))
    return tokens


def has_tokens(text: str | None) -> bool:
    """Whether `text` holds a token, found without cutting all of it into tokens."""
    return _TOKEN.search(text or "") is not None


def shingles(tokens: Sequence[str], size: int = SHINGLE_SIZE) -> Counter[Shingle]:
    """The multiset of `size`-token shingles; one shingle of all tokens when there are fewer."""
    if not tokens:
        return Counter()
    if len(tokens) < size:
        return Counter([tuple(tokens)])
    return Counter(tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1))


def shingle_set(text: str | None, size: int = SHINGLE_SIZE) -> frozenset[Shingle]:
    """The distinct `size`-token shingles of `text` (one of all its tokens when there are fewer):
    what two bodies share, told by set, not by count."""
    tokens = tokenize(text)
    if len(tokens) < size:
        return frozenset([tuple(tokens)]) if tokens else frozenset()
    return frozenset(zip(*(tokens[i:] for i in range(size)), strict=False))


@dataclass(frozen=True, slots=True)
class PageScore:
    """One page's normalised tp/fp/fn (they sum to 1, or are all 0) and exact-match flag."""

    tp: float
    fp: float
    fn: float
    exact: bool

    @property
    def precision(self) -> float | None:
        """None when the prediction is empty (the page does not count towards precision)."""
        if self.tp + self.fp == 0:
            return None
        return 1.0 if self.fp == self.fn == 0 else self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        """None when the gold body is empty (the page does not count towards recall)."""
        if self.tp + self.fn == 0:
            return None
        return 1.0 if self.fp == self.fn == 0 else self.tp / (self.tp + self.fn)

    @property
    def f1(self) -> float:
        """The page's own F1 (0 when nothing matches): for ranking pages, not for the score."""
        precision, recall = self.precision or 0.0, self.recall or 0.0
        if self.fp == self.fn == 0:
            return 1.0
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def score_page(gold: str | None, predicted: str | None, size: int = SHINGLE_SIZE) -> PageScore:
    """Compare one page's predicted text with its gold body."""
    gold_tokens, predicted_tokens = tokenize(gold), tokenize(predicted)
    gold_shingles = shingles(gold_tokens, size)
    predicted_shingles = shingles(predicted_tokens, size)
    tp = sum((gold_shingles & predicted_shingles).values())
    fp = sum((predicted_shingles - gold_shingles).values())
    fn = sum((gold_shingles - predicted_shingles).values())
    return _normalised(tp, fp, fn, gold_tokens == predicted_tokens)


def _normalised(tp: float, fp: float, fn: float, exact: bool) -> PageScore:
    total = tp + fp + fn
    if total == 0:
        return PageScore(0.0, 0.0, 0.0, exact)
    return PageScore(tp / total, fp / total, fn / total, exact)


@dataclass(frozen=True, slots=True)
class Scores:
    """Averages over pages: the benchmark's headline figures."""

    precision: float
    recall: float
    f1: float
    accuracy: float
    pages: int


def aggregate(pages: Iterable[PageScore]) -> Scores:
    pages = list(pages)
    precisions = [p for page in pages if (p := page.precision) is not None]
    recalls = [r for page in pages if (r := page.recall) is not None]
    precision = sum(precisions) / len(precisions) if precisions else 0.0
    recall = sum(recalls) / len(recalls) if recalls else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = sum(page.exact for page in pages) / len(pages) if pages else 0.0
    return Scores(precision, recall, f1, accuracy, len(pages))


# --- The papers' own metrics --------------------------------------------------------------------


def score_words(gold: str | None, predicted: str | None) -> PageScore:
    """CETR (Weninger et al., WWW 2010), Equation 5: P = |WP & WL| / |WP|, R = |WP & WL| / |WL|
    over the words of the extraction (WP) and of the gold text (WL), "every word considered
    distinct even if two words are lexically the same": multisets (each occurrence counts), not the
    sets of a bag of words."""
    gold_tokens, predicted_tokens = tokenize(gold), tokenize(predicted)
    matched = sum((Counter(gold_tokens) & Counter(predicted_tokens)).values())
    missing, extra = len(gold_tokens) - matched, len(predicted_tokens) - matched
    return _normalised(matched, extra, missing, gold_tokens == predicted_tokens)


def matching_blocks(
    gold_tokens: Sequence[str], predicted_tokens: Sequence[str]
) -> list[difflib.Match]:
    """CleanEval's alignment (Lejeune & Zhu): Ratcliff/Obershelp, the longest common run of tokens,
    then recursively the unmatched stretches on either side of it. difflib implements it; its
    `autojunk` heuristic, which ignores frequent tokens, is off."""
    matcher = difflib.SequenceMatcher(None, gold_tokens, predicted_tokens, autojunk=False)
    return [block for block in matcher.get_matching_blocks() if block.size]


def alignment_counts(
    gold_tokens: Sequence[str], predicted_tokens: Sequence[str]
) -> tuple[int, int, int]:
    """(true positives, false positives, false negatives) of the alignment: tokens matched,
    tokens only in the prediction (deletions), tokens only in the gold text (insertions)."""
    matched = sum(block.size for block in matching_blocks(gold_tokens, predicted_tokens))
    return matched, len(predicted_tokens) - matched, len(gold_tokens) - matched


@dataclass(frozen=True, slots=True)
class AlignedScores:
    """One page's CleanEval text-only score (tokens) and character-level score (Viveros-Jiménez et
    al.)."""

    cleaneval: PageScore
    characters: PageScore


def score_aligned(gold: str | None, predicted: str | None) -> AlignedScores:
    """The CleanEval text-only score (Lejeune & Zhu) and the character-level score (Viveros-Jiménez
    et al.), from one alignment of the page's tokens.

    Character level (Viveros-Jiménez et al.): "a positive value is any character that belongs to
    the gold standard content and a negative value is any character that should have been
    discarded". The characters are those of the aligned tokens (letters and digits; spaces and
    punctuation carry no content): a matched token's characters are true positives, an unmatched
    predicted token's false positives, an unmatched gold token's false negatives."""
    gold_tokens, predicted_tokens = tokenize(gold), tokenize(predicted)
    blocks = matching_blocks(gold_tokens, predicted_tokens)
    matched = sum(block.size for block in blocks)
    matched_chars = sum(
        len(token) for block in blocks for token in gold_tokens[block.a : block.a + block.size]
    )
    gold_chars = sum(map(len, gold_tokens))
    predicted_chars = sum(map(len, predicted_tokens))
    exact = gold_tokens == predicted_tokens
    extra, missing = len(predicted_tokens) - matched, len(gold_tokens) - matched
    return AlignedScores(
        cleaneval=_normalised(matched, extra, missing, exact),
        characters=_normalised(
            matched_chars, predicted_chars - matched_chars, gold_chars - matched_chars, exact
        ),
    )


SHINGLES, WORDS, CHARACTERS, CLEANEVAL = "shingles", "words", "characters", "cleaneval"
# Every metric, in the order comparison tables show them.
METRICS = (SHINGLES, WORDS, CHARACTERS, CLEANEVAL)


def score_metrics(gold: str | None, predicted: str | None) -> dict[str, PageScore]:
    """One page by every metric: the benchmark's shingles and the papers' own."""
    aligned = score_aligned(gold, predicted)
    return {
        SHINGLES: score_page(gold, predicted),
        WORDS: score_words(gold, predicted),
        CHARACTERS: aligned.characters,
        CLEANEVAL: aligned.cleaneval,
    }
