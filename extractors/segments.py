"""Segments: the text blocks the block classifiers (Boilerpipe, jusText) label, and the *runs*
that let one extractor's selection become the next one's input ("a then b", seed 001).

A run is one text node of the tree: an element's `.text` or its `.tail`. A segment is a maximal
sequence of runs that no boundary tag separates; which tags are boundaries is each classifier's
choice (`Segmenter`). Every extractor of this family reports the runs it keeps, so a combination
`a+b` runs b on the page as a left it: b segments only the runs a kept.

Reads the tree, never modifies it: every extractor of a page shares one parsed tree.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from extractors.article import CAPTION, HEADING, LIST_ITEM, PARAGRAPH, QUOTE, TABLE, Block
from extractors.tree import Element

RunKey = tuple[Element, bool]  # (element, True for its tail / False for its text)

HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# The kind a block takes from the element it sits in (seed 001's "structuring" vocabulary).
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
    return _WORDLIKE.search(token) is not None


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
    body = next(tree.iter("body"), None)
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
        return list(_SegmentWalker(self, allowed).walk(document_root(tree)))


class _SegmentWalker:
    def __init__(self, segmenter: Segmenter, allowed: Collection[RunKey] | None) -> None:
        self.segmenter = segmenter
        self.allowed = allowed
        self.parts: list[str] = []
        self.runs: list[RunKey] = []
        self.link_parts: list[str] = []
        self.kind = PARAGRAPH
        self.owner: Element | None = None
        self.count = 0

    def walk(self, root: Element) -> Iterator[Segment]:
        segmenter = self.segmenter
        # Iterative traversal: hostile pages nest thousands of levels deep. A stack entry is
        # (element, closing, kind of the enclosing block, boundary owner, inside a link).
        stack: list[tuple[Element, bool, str, Element, bool]] = [
            (root, False, PARAGRAPH, root, False)
        ]
        while stack:
            element, closing, kind, owner, in_link = stack.pop()
            tag = tag_name(element)
            if closing:
                if segmenter.is_boundary(tag):
                    yield from self.flush()
                if element is not root:
                    self.add(element, True, kind, owner, in_link)
                continue
            if element is not root and (not tag or tag in segmenter.skip_tags):
                self.add(element, True, kind, owner, in_link)
                continue
            if tag == "br" and segmenter.double_br:
                yield from self.line_break(element)
                self.add(element, True, kind, owner, in_link)
                continue
            own_kind = kind_of_tag(tag, kind)
            own_owner = owner
            if segmenter.is_boundary(tag):
                yield from self.flush()
                own_owner = element
            own_link = in_link or tag == "a"
            if tag in VOID_TAGS:
                self.add(element, True, kind, owner, in_link)
                continue
            self.add(element, False, own_kind, own_owner, own_link)
            stack.append((element, True, kind, owner, in_link))
            stack.extend(
                (child, False, own_kind, own_owner, own_link) for child in reversed(element)
            )
        yield from self.flush()

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

    def line_break(self, element: Element) -> Iterator[Segment]:
        # <br><br> (only whitespace between) ends a paragraph; a single <br> is a space.
        following = element.getnext()
        if (
            following is not None
            and tag_name(following) == "br"
            and not (element.tail or "").strip()
        ):
            yield from self.flush()
        elif self.parts:
            self.parts.append(" ")

    def flush(self) -> Iterator[Segment]:
        if not self.parts:
            return
        text = normalize_space("".join(self.parts))
        if text and self.owner is not None:
            link_text = normalize_space(" ".join(self.link_parts))
            yield Segment(
                index=self.count,
                text=text,
                element=self.owner,
                kind=self.kind,
                runs=self.runs,
                link_chars=min(len(link_text), len(text)),
                tokens=text.split(),
                link_tokens=sum(1 for token in link_text.split() if is_word(token)),
            )
            self.count += 1
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
