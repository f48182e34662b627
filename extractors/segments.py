"""Segments: the text blocks the block classifiers (Boilerpipe, jusText) label, and the *runs*
that let one extractor's selection become the next one's input ("a then b", Lejeune & Zhu).

A run is one text node of the tree: an element's `.text` or its `.tail`. A segment is a maximal
sequence of runs that no boundary tag separates; which tags are boundaries is each classifier's
choice (`Segmenter`). Every extractor of this family reports the runs it keeps, so a combination
`a+b` runs b on the page as a left it: b segments only the runs a kept.

Reads the tree, never modifies it: every extractor of a page shares one parsed tree.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from lxml import etree

from extractors.article import CAPTION, HEADING, LIST_ITEM, PARAGRAPH, QUOTE, TABLE, Block
from extractors.tree import Element, first_element

RunKey = tuple[Element, bool]  # (element, True for its tail / False for its text)

HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# The kind a block takes from the element it sits in (Lejeune & Zhu's "structuring" vocabulary).
_KIND_OF_TAG = {
    **dict.fromkeys(HEADING_TAGS, HEADING),
    **dict.fromkeys(("li", "dt", "dd"), LIST_ITEM),
    "blockquote": QUOTE,
    **dict.fromkeys(("figcaption", "caption"), CAPTION),
    **dict.fromkeys(("td", "th"), TABLE),
}
# Text that is never rendered as page text, whatever the algorithm.
NEVER_TEXT_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
        "applet", "param", "canvas", "video", "audio", "map", "select", "option", "button",
        "input", "textarea", "head", "title", "meta", "link",
    }
)  # fmt: skip
# Block-level tags: text on either side of one never belongs to the same paragraph (jusText's
# list plus the HTML5 sectioning elements, which post-date it).
BLOCK_LEVEL_TAGS = frozenset(
    {
        "body", "blockquote", "caption", "center", "col", "colgroup", "dd", "div", "dl", "dt",
        "fieldset", "legend", "optgroup", "p", "pre", "table", "td", "tfoot", "th", "thead",
        "tr", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "article", "section",
        "header", "footer", "nav", "aside", "main", "figure", "figcaption", "address",
        "details", "summary", "hr", "hgroup", "menu",
    }
)  # fmt: skip
# Void elements: a start tag and no end tag.
VOID_TAGS = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr",
    }
)  # fmt: skip
_WHITESPACE = re.compile(r"\s+")
# A word has a letter or a digit (Boilerpipe's definition; punctuation-only tokens are not).
_WORDLIKE = re.compile(r"[^\W_]")


def normalize_space(text: str) -> str:
    """Collapse runs of whitespace (NBSP included) to one space and trim."""
    return _WHITESPACE.sub(" ", text.replace("\xa0", " ")).strip()


def is_word(token: str) -> bool:
    return token.isalnum() or _WORDLIKE.search(token) is not None


def tag_name(element: Element) -> str:
    """Lower-case tag name; '' for comments, processing instructions and entities."""
    tag = element.tag
    return tag.lower() if isinstance(tag, str) else ""


def kind_of_tag(tag: str, enclosing: str) -> str:
    """The block kind of text inside a `tag` element, given the kind around it."""
    return _KIND_OF_TAG.get(tag, enclosing)


def document_root(tree: Element) -> Element:
    """The <body> when there is one (the text a reader sees), else the tree itself."""
    if tag_name(tree) == "body":
        return tree
    body = first_element(tree, "body")
    return body if body is not None else tree


@dataclass(slots=True)
class Segment:
    """One text block: its text, where it sits, and the counts the classifiers need."""

    index: int  # position among the page's segments
    text: str  # whitespace-normalised
    element: Element  # the innermost boundary element the text sits in
    kind: str
    runs: list[RunKey]
    link_chars: int  # characters of text inside <a>
    tokens: list[str] = field(default_factory=list)
    link_tokens: int = 0

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def link_density(self) -> float:
        """Share of characters inside links (jusText's definition)."""
        return self.link_chars / len(self.text) if self.text else 0.0

    @property
    def block(self) -> Block:
        return self.kind, self.text


@dataclass(frozen=True, slots=True)
class Segmenter:
    """Which tags split the text into segments.

    `boundary_tags` lists the tags that split (jusText); when it is None every tag not in
    `inline_tags` splits (Boilerpipe). `double_br`: only two consecutive <br> split, one is a
    space (jusText); otherwise <br> follows the boundary rule.
    """

    boundary_tags: frozenset[str] | None = None
    inline_tags: frozenset[str] = frozenset()
    skip_tags: frozenset[str] = NEVER_TEXT_TAGS
    double_br: bool = False

    def is_boundary(self, tag: str) -> bool:
        if self.boundary_tags is not None:
            return tag in self.boundary_tags
        return tag not in self.inline_tags

    def segments(self, tree: Element, allowed: Collection[RunKey] | None = None) -> list[Segment]:
        """The page's segments in document order. With `allowed`, only those runs count: the
        page as a previous extractor left it."""
        root = document_root(tree)
        writer = _SegmentWriter(allowed)
        skip_tags, double_br, is_boundary = self.skip_tags, self.double_br, self.is_boundary
        # (kind, boundary owner, inside a link) of the open elements; lxml's iterwalk walks the
        # tree without recursion, so hostile nesting costs no stack.
        context: list[tuple[str, Element, bool]] = [(PARAGRAPH, root, False)]
        # What each tag is, worked out once per tag of the page (tag, skipped, opened, boundary),
        # and the same for each started element until its end event: reading an element's tag
        # builds a new string each time.
        tags: dict[object, tuple[str, bool, bool, bool]] = {}
        started: list[tuple[str, bool, bool, bool]] = []
        walker = etree.iterwalk(root, events=("start", "end"))
        for event, element in walker:
            if event == "start":
                raw = element.tag
                if (info := tags.get(raw)) is None:
                    tag = tag_name(element)
                    skipped = not tag or tag in skip_tags
                    opened = not (skipped or tag in VOID_TAGS or (tag == "br" and double_br))
                    info = tags[raw] = (tag, skipped, opened, is_boundary(tag))
                started.append(info)
                tag, skipped, opened, boundary = info
                kind, owner, in_link = context[-1]
                if skipped:
                    walker.skip_subtree()
                elif tag == "br" and double_br:
                    writer.line_break(element)
                elif boundary:
                    writer.flush()
                    owner = element
                if opened:
                    kind = _KIND_OF_TAG.get(tag, kind)
                    in_link = in_link or tag == "a"
                    context.append((kind, owner, in_link))
                    writer.add(element, False, kind, owner, in_link)
                continue
            _, _, opened, boundary = started.pop()
            if opened:
                context.pop()
                if boundary:
                    writer.flush()
            if element is not root:
                writer.add(element, True, *context[-1])
        writer.flush()
        return writer.segments


class _SegmentWriter:
    """Accumulates runs and emits a segment at every boundary."""

    def __init__(self, allowed: Collection[RunKey] | None) -> None:
        self.allowed = allowed
        self.segments: list[Segment] = []
        self.parts: list[str] = []
        self.runs: list[RunKey] = []
        self.link_parts: list[str] = []
        self.kind = PARAGRAPH
        self.owner: Element | None = None

    def add(self, element: Element, tail: bool, kind: str, owner: Element, in_link: bool) -> None:
        text = element.tail if tail else element.text
        if not text:
            return
        key = (element, tail)
        if self.allowed is not None and key not in self.allowed:
            return
        if not self.parts:
            self.kind, self.owner = kind, owner
        self.parts.append(text)
        self.runs.append(key)
        if in_link:
            self.link_parts.append(text)

    def line_break(self, element: Element) -> None:
        # <br><br> (only whitespace between) ends a paragraph; a single <br> is a space.
        following = element.getnext()
        if (
            following is not None
            and tag_name(following) == "br"
            and not (element.tail or "").strip()
        ):
            self.flush()
        elif self.parts:
            self.parts.append(" ")

    def flush(self) -> None:
        if not self.parts:
            return
        tokens = "".join(self.parts).split()  # str.split() splits at NBSP and all whitespace
        if tokens and self.owner is not None:
            link_tokens = " ".join(self.link_parts).split()
            text = " ".join(tokens)
            self.segments.append(
                Segment(
                    index=len(self.segments),
                    text=text,
                    element=self.owner,
                    kind=self.kind,
                    runs=self.runs,
                    link_chars=min(len(" ".join(link_tokens)), len(text)),
                    tokens=tokens,
                    link_tokens=sum(map(is_word, link_tokens)),
                )
            )
        self.parts, self.runs, self.link_parts = [], [], []


@dataclass(slots=True)
class Selection:
    """What an extractor of this family keeps: segments in document order. Their blocks are the
    article; their runs are what the next extractor of a combination may look at."""

    segments: list[Segment]

    @property
    def blocks(self) -> list[Block]:
        return [segment.block for segment in self.segments]

    @property
    def runs(self) -> frozenset[RunKey]:
        return frozenset(run for segment in self.segments for run in segment.runs)
