"""The extraction result types shared by every extractor."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

# Block kinds, in the vocabulary of Lejeune & Zhu's "structuring" step.
HEADING = "heading"
PARAGRAPH = "paragraph"
LIST_ITEM = "list_item"
QUOTE = "quote"
CAPTION = "caption"
TABLE = "table"
# Text set out in `<pre>` (code, a wire release wrapped at 72 columns): its lines are its content.
PREFORMATTED = "preformatted"
BLOCK_KINDS = (HEADING, PARAGRAPH, LIST_ITEM, QUOTE, CAPTION, TABLE, PREFORMATTED)
# The blocks of running text a rule weighs as the body's paragraphs: those and the text set out in
# `<pre>` (read as paragraphs before it was a kind of its own).
TEXT_KINDS = frozenset({PARAGRAPH, PREFORMATTED})

Block = tuple[str, str]  # (kind, text)


@dataclass(slots=True)
class ArticleImage:
    """One of the article's own images (`extractors.images`)."""

    url: str
    caption: str | None = None
    credit: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"url": self.url, "caption": self.caption, "credit": self.credit}


@dataclass(slots=True)
class Article:
    """A clean article: the body as ordered blocks plus the metadata users index on."""

    blocks: list[Block]
    method: str  # which stage produced the body: "schema_org", "dom", "dom_fallback", ...
    title: str | None = None
    authors: list[str] = field(default_factory=list)
    published: datetime | None = None  # timezone-aware
    language: str | None = None
    canonical_url: str | None = None
    description: str | None = None
    image: str | None = None
    modified: datetime | None = None  # timezone-aware
    section: str | None = None
    keywords: list[str] = field(default_factory=list)
    paywalled: bool | None = None  # None: the page says nothing either way
    images: list[ArticleImage] = field(default_factory=list)  # the lead image first

    @property
    def word_count(self) -> int:
        """Words of the running text (`word_count`)."""
        return word_count(self.text)

    @property
    def text(self) -> str:
        """The running text: the blocks joined by newlines, without image captions.

        Captions describe a picture and stay in `blocks` (kind "caption"), as Lejeune & Zhu tag such
        borderline segments; schema.org's articleBody, and readers, leave them out of the text.
        """
        return running_text(self.blocks)


@dataclass(slots=True)
class Extraction:
    """What `extract_verbose` returns: the article, or NULL (None) with the reason why."""

    article: Article | None
    reason: str | None = None  # set when article is None, e.g. "no_content", "not_html"

    @property
    def is_null(self) -> bool:
        return self.article is None


# Chinese and Japanese write without spaces: each of their characters counts as one word, as
# word counters for them do; everything else is words between spaces ("3.2", "don't" are one).
_LOGOGRAPHIC_CHAR = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD_CHAR = re.compile(r"\w")


def word_count(text: str) -> int:
    """The number of words in `text`: the space-separated tokens holding a letter or digit (a
    lone dash is none), each Chinese or Japanese character one."""
    characters = len(_LOGOGRAPHIC_CHAR.findall(text)) if not text.isascii() else 0
    if characters:
        text = _LOGOGRAPHIC_CHAR.sub(" ", text)
    return characters + sum(1 for token in text.split() if _WORD_CHAR.search(token))


def running_text(blocks: list[Block]) -> str:
    """An article's text from its blocks: every block but image captions, joined by newlines.

    Captions describe a picture (schema.org's articleBody and readers leave them out); every
    stage that rebuilds `text` from `blocks` uses this, so the two never disagree.
    """
    return "\n".join(running_texts(blocks))


def running_texts(blocks: list[Block]) -> list[str]:
    """The blocks the running text is made of (all but captions), in order."""
    return [text for kind, text in blocks if kind != CAPTION]


# Control characters (and the noncharacters U+FFFE, U+FFFF) a browser does not show: the parser
# keeps them in the tree, so they are taken out of every text an Article carries.
_INVISIBLE_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


# Format characters a browser draws as nothing: a text of these alone is an empty line (an
# editor's spacer paragraph, `<p>&#8203;</p>`), though inside a word they stay (Persian's
# zero-width non-joiner, a zero-width space that allows a line break).
_INVISIBLE_FORMAT = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
_SHOWS_NOTHING = _INVISIBLE_FORMAT + " "  # what a one-line text of nothing visible holds


def visible(text: str) -> str:
    """A one-line text without invisible control characters, its spaces collapsed again; empty
    when nothing in it shows. Almost every text has none of them: `isprintable` decides that in
    C, and the pattern runs on the others."""
    if text.isprintable():
        return text
    shown = " ".join(_INVISIBLE_CONTROLS.sub("", text).split())
    return shown if shown.strip(_SHOWS_NOTHING) else ""


def visible_block(kind: str, text: str) -> str:
    """A block's text without invisible control characters: a preformatted block keeps its line
    breaks and indentation (tabs and line feeds are no such characters), every other block is one
    line (`visible`)."""
    if kind != PREFORMATTED:
        return visible(text)
    shown = _INVISIBLE_CONTROLS.sub("", text)
    if shown == text:
        return shown.strip("\n") if shown.strip() else ""
    # A line that held only control characters is blank now, and one that ended in them may end
    # in spaces: the lines are trimmed again as `blocks.preformatted_text` trims them (no
    # trailing space, one blank line for a run, none at either end).
    lines: list[str] = []
    for line in shown.split("\n"):
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


# Scripts that write a word in one or two characters: a text in them is measured in the
# characters an alphabetic script would need for the same words (a Chinese or Japanese text runs
# to about a third of the characters of its English translation, a Korean one to about half).
_LOGOGRAPHIC = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_HANGUL = re.compile("[\uac00-\ud7af]")
LOGOGRAPHIC_WEIGHT = 3
HANGUL_WEIGHT = 2


# A body shorter than this (in alphabetic-script characters, `reading_length`) is a teaser, a
# caption or a paywall stub: NULL, not an article — unless the page declares it a short one
# (`extractors.short_article`).
MIN_BODY_CHARS = 250


def is_too_short(text: str) -> bool:
    """Shorter than MIN_BODY_CHARS, in alphabetic-script characters (`reading_length` is only
    computed for texts that are short in raw characters)."""
    return len(text) < MIN_BODY_CHARS and reading_length(text) < MIN_BODY_CHARS


def reading_length(text: str) -> int:
    """The length of `text` in alphabetic-script characters: each Chinese or Japanese character
    counts LOGOGRAPHIC_WEIGHT, each Hangul syllable HANGUL_WEIGHT. Length thresholds written for
    alphabetic text ("a body of fewer than 250 characters is a caption") then hold for them too."""
    if text.isascii():
        return len(text)
    extra = (LOGOGRAPHIC_WEIGHT - 1) * len(_LOGOGRAPHIC.findall(text))
    return len(text) + extra + (HANGUL_WEIGHT - 1) * len(_HANGUL.findall(text))
