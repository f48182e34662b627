"""Linearise a body container into ordered (kind, text) blocks, keeping the article's structure.

Headings, list items, quotes, captions and table rows stay distinct from paragraphs (seed 001's
"structuring" step); inline markup is flattened; `<br><br>` separates paragraphs, as on old
table layouts that never use `<p>`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from lxml import html

from extractors.article import CAPTION, HEADING, LIST_ITEM, PARAGRAPH, QUOTE, TABLE, Block

HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
LIST_ITEM_TAGS = frozenset({"li", "dt", "dd"})
QUOTE_TAGS = frozenset({"blockquote"})
CAPTION_TAGS = frozenset({"figcaption", "caption"})
# Elements that end the current block: their text never runs into a neighbour's.
BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dialog",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header",
        "hgroup", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
        "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "caption",
    }
    | HEADING_TAGS
)  # fmt: skip
# Elements whose content is never article text.
SKIP_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
        "canvas", "video", "audio", "map", "select", "option", "button", "input", "textarea",
        "head", "title", "meta", "link",
    }
)  # fmt: skip
_WHITESPACE = re.compile(r"\s+")

ElementFilter = Callable[[html.HtmlElement], bool]


def clean_text(text: str) -> str:
    """Collapse runs of whitespace (including NBSP) to one space and trim."""
    return _WHITESPACE.sub(" ", text.replace("\xa0", " ")).strip()


def _kind_of(tag: str, current: str) -> str:
    if tag in HEADING_TAGS:
        return HEADING
    if tag in LIST_ITEM_TAGS:
        return LIST_ITEM
    if tag in QUOTE_TAGS:
        return QUOTE
    if tag in CAPTION_TAGS:
        return CAPTION
    return current


class _BlockWriter:
    """Accumulates inline text and emits a block at every block boundary."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._parts: list[str] = []
        self._kind = PARAGRAPH

    def text(self, text: str | None, kind: str) -> None:
        if text:
            if not self._parts:
                self._kind = kind
            self._parts.append(text)

    def space(self) -> None:
        if self._parts:
            self._parts.append(" ")

    def flush(self) -> None:
        if self._parts:
            text = clean_text("".join(self._parts))
            if text:
                self.blocks.append((self._kind, text))
            self._parts = []


def iter_blocks(container: html.HtmlElement, skip: ElementFilter | None = None) -> Iterator[Block]:
    """Yield the blocks of `container` in document order; `skip` prunes whole subtrees."""
    writer = _BlockWriter()
    _walk(container, writer, PARAGRAPH, skip)
    writer.flush()
    yield from writer.blocks


def _walk(
    root: html.HtmlElement, writer: _BlockWriter, root_kind: str, skip: ElementFilter | None
) -> None:
    # Iterative traversal: hostile pages nest thousands of levels deep. Each entry carries the
    # block kind of its parent, which is also the kind of the element's tail text.
    stack: list[tuple[html.HtmlElement, str, bool]] = [(root, root_kind, False)]
    while stack:
        element, parent_kind, closing = stack.pop()
        tag = element.tag if isinstance(element.tag, str) else ""
        tail = element.tail if element is not root else None
        if closing:
            if tag in BLOCK_TAGS:
                writer.flush()
            writer.text(tail, parent_kind)
            continue
        if element is not root and (not tag or tag in SKIP_TAGS or (skip and skip(element))):
            writer.text(tail, parent_kind)
        elif tag == "br":
            _line_break(element, writer)
            writer.text(tail, parent_kind)
        elif tag == "table" and element is not root:
            writer.flush()
            _table_rows(element, writer)
            writer.text(tail, parent_kind)
        else:
            own_kind = _kind_of(tag, parent_kind)
            if tag in BLOCK_TAGS:
                writer.flush()
            writer.text(element.text, own_kind)
            stack.append((element, parent_kind, True))
            stack.extend((child, own_kind, False) for child in reversed(element))


def _line_break(element: html.HtmlElement, writer: _BlockWriter) -> None:
    # Two consecutive <br> (only whitespace between) separate paragraphs; one is a line break.
    following = element.getnext()
    if following is not None and following.tag == "br" and not (element.tail or "").strip():
        writer.flush()
    else:
        writer.space()


def _table_rows(table: html.HtmlElement, writer: _BlockWriter) -> None:
    """Data tables become one block per row; layout tables (a cell holding the body) recurse."""
    rows = [row for row in table.iter("tr") if _owning_table(row) is table]
    if _is_layout_table(table, rows):
        for cell in table.iter("td", "th"):
            if _owning_table(cell) is table:
                _walk(cell, writer, PARAGRAPH, None)
                writer.flush()
        return
    for row in rows:
        cells = [clean_text(cell.text_content()) for cell in row if cell.tag in ("td", "th")]
        line = " | ".join(cell for cell in cells if cell)
        if line:
            writer.blocks.append((TABLE, line))


def _owning_table(element: html.HtmlElement) -> html.HtmlElement | None:
    for ancestor in element.iterancestors("table"):
        return ancestor
    return None


# A table is layout, not data, when one of its cells carries paragraphs or long prose.
LAYOUT_CELL_MIN_CHARS = 400


def _is_layout_table(table: html.HtmlElement, rows: list[html.HtmlElement]) -> bool:
    for cell in table.iter("td", "th"):
        if _owning_table(cell) is not table:
            continue
        if any(child.tag in ("p", "div", "table", "br") for child in cell):
            return True
        if len(cell.text_content()) > LAYOUT_CELL_MIN_CHARS:
            return True
    return not rows
