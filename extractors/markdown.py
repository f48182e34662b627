"""An article's blocks as Markdown (CommonMark): headings, paragraphs, lists, quotes, tables,
image captions and preformatted text, each kind written as a reader of Markdown expects it.

Pure: blocks in, text out. Text is escaped so that it never turns into markup it was not
(a paragraph starting "1." is not a list, "*" is not emphasis, a "|" in a cell is not a column).
"""

from __future__ import annotations

import re

from extractors.article import CAPTION, HEADING, LIST_ITEM, PREFORMATTED, QUOTE, TABLE, Block

# Characters that are markup anywhere in a line.
_INLINE = re.compile(r"([\\`*_\[\]<>])")
# What makes the start of a line a block of another kind: a heading, quote, list or rule.
_LEADING_MARKUP = re.compile(r"^(#{1,6}(?=\s|$)|>|[-+*](?=\s)|=+\s*$)")
# "1. " or "1) " at the start is an ordered list item: its punctuation is escaped ("1\.").
_LEADING_NUMBER = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")
TABLE_CELL_SEPARATOR = " | "  # how extractors.blocks joins a table row's cells
_BACKTICK_RUN = re.compile("`+")
MIN_FENCE = 3  # CommonMark's shortest code fence


def escape(text: str) -> str:
    """`text` as literal Markdown text."""
    escaped = _INLINE.sub(r"\\\1", text)
    escaped = _LEADING_NUMBER.sub(r"\1\\\2", escaped, count=1)
    return _LEADING_MARKUP.sub(lambda match: "\\" + match.group(1), escaped, count=1)


def to_markdown(blocks: list[Block], title: str | None = None) -> str:
    """The article as Markdown: the title as a level-one heading, then its blocks in order."""
    parts: list[str] = [f"# {escape(title)}"] if title else []
    index = 0
    while index < len(blocks):
        kind, text = blocks[index]
        if kind in (LIST_ITEM, TABLE):
            # A run of list items is one list; a run of table rows is one table.
            end = index
            while end < len(blocks) and blocks[end][0] == kind:
                end += 1
            rows = [text for _, text in blocks[index:end]]
            parts.append(_list(rows) if kind == LIST_ITEM else _table(rows))
            index = end
            continue
        parts.append(_block(kind, text))
        index += 1
    return "\n\n".join(part for part in parts if part) + ("\n" if parts else "")


def _block(kind: str, text: str) -> str:
    if kind == HEADING:
        return f"## {escape(text)}"
    if kind == QUOTE:
        return "\n".join(f"> {escape(line)}" for line in text.splitlines() or [text])
    if kind == CAPTION:
        return f"*{escape(text)}*"
    if kind == PREFORMATTED:
        return _fenced(text)
    return escape(text)


def _fenced(text: str) -> str:
    """Preformatted text as a fenced code block, as it is (no escaping inside a fence): the fence
    is longer than any run of backticks in the text, so that no line of it closes the block."""
    longest = max(map(len, _BACKTICK_RUN.findall(text)), default=0)
    fence = "`" * max(MIN_FENCE, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _list(items: list[str]) -> str:
    return "\n".join(f"- {escape(item)}" for item in items)


def _table(rows: list[str]) -> str:
    """Rows of cells joined by " | " as a pipe table, the first row as its header."""
    cells = [[_cell(cell) for cell in row.split(TABLE_CELL_SEPARATOR)] for row in rows]
    width = max(len(row) for row in cells)
    cells = [row + [""] * (width - len(row)) for row in cells]
    lines = ["| " + " | ".join(row) + " |" for row in cells]
    lines.insert(1, "|" + " --- |" * width)
    return "\n".join(lines)


def _cell(text: str) -> str:
    return escape(text.strip()).replace("|", "\\|")
