"""The schema.org stage: the body the publisher itself marked up.

Microdata `itemprop="articleBody"` (any case) is read as the element's text with tags removed,
as NewsFeed does — from the cleaned tree, so the ads and share bars publishers put inside it are
gone. JSON-LD `articleBody` (any Article type, inside `@graph` and arrays) is a string that may
still carry HTML, entity-escaped HTML, or entities escaped twice.
"""

from __future__ import annotations

import html as html_entities
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from extractors.article import HEADING, LIST_ITEM, PARAGRAPH, QUOTE, Block
from extractors.blocks import Classifier, TextBlock, clean_text, text_blocks
from extractors.boilerplate import MAX_BLOCK_LINK_DENSITY
from extractors.jsonld import article_objects
from extractors.preprocess import Cleaning
from extractors.tree import Element, itemprops

METHOD_SCHEMA_ORG = "schema_org"
MICRODATA = "microdata"
JSON_LD = "json_ld"
# Entity-escaped HTML is sometimes escaped again ("&amp;lt;p&amp;gt;"): unescape this many times.
MAX_UNESCAPE_ROUNDS = 3
# Bodies longer than this are cut: no article is this long, and regexes stay bounded.
MAX_JSONLD_BODY_CHARS = 500_000

# Elements whose content is never body text, removed with their content: from this start to
# the next ">", then to the first end tag of the same name (`_without_dead_elements`).
_DEAD_NAMES = ("script", "style", "iframe", "figcaption", "noscript", "svg", "button")
_DEAD_START = re.compile(rf"<\s*({'|'.join(_DEAD_NAMES)})\b", re.IGNORECASE)
_DEAD_END = {name: re.compile(rf"<\s*/\s*{name}\s*>", re.IGNORECASE) for name in _DEAD_NAMES}
_BLOCK_START = re.compile(r"<\s*(h[1-6]|li|blockquote)\b[^>]*>", re.IGNORECASE)
# A block break: a line break, or a tag of a block from this start to the next ">"
# (`_block_breaks`).
_BLOCK_BREAK_START = re.compile(
    r"<\s*/?\s*(?:p|br|div|h[1-6]|li|ul|ol|blockquote|figure|table|tr|section)\b|\n",
    re.IGNORECASE,
)
_TAG = re.compile(r"<\s*/?\s*[a-zA-Z][^<>]{0,2000}>")
_KIND_OF_TAG = {"li": LIST_ITEM, "blockquote": QUOTE}


@dataclass(slots=True)
class SchemaBody:
    blocks: list[TextBlock] | list[Block]
    source: str  # MICRODATA or JSON_LD
    element: Element | None = None  # the marked element (microdata)

    @property
    def text_blocks(self) -> list[Block]:
        return [block.block if isinstance(block, TextBlock) else block for block in self.blocks]


def microdata_body(
    tree: Element,
    cleaning: Cleaning,
    properties: list[tuple[list[str], Element]] | None = None,
    classify: Classifier | None = None,
    written: Mapping[Element, list[TextBlock]] | None = None,
) -> SchemaBody | None:
    """The longest element marked itemprop=articleBody (any case) outside chrome, as blocks.
    `classify` says what preprocessing made of each element inside it (default: the Cleaning's
    verdicts; the chain passes Algorithm 2.1's, `extractors.dom.body_kind`). `written` holds the
    blocks of some elements written with `classify` already (Algorithm 2.1's body, which is often
    the marked element): they are not written again."""
    classify = classify or cleaning.kind
    written = written or {}
    best: tuple[int, list[TextBlock], Element] | None = None
    marked = [
        element
        for names, element in (itemprops(tree) if properties is None else properties)
        if "articlebody" in names
    ]
    # The elements inside the bodies measured, when another marked body follows: a body inside
    # one measured is part of its text, which is as long or longer and, first in the page, wins
    # a tie. Measuring each again read a page of 240 nested bodies 240 times (4.9 s).
    inside_measured: set[Element] = set()
    for position, element in enumerate(marked):
        if element in inside_measured or cleaning.is_inside_removed(element):
            continue
        if position + 1 < len(marked):
            inside_measured.update(element.iterdescendants())
        # The publisher's word is taken for its prose; a list of links inside it (the story's
        # tags, "related" lists) is navigation all the same.
        blocks = [
            block
            for block in (written.get(element) or text_blocks(element, classify))
            if not (block.kind == LIST_ITEM and block.link_density > MAX_BLOCK_LINK_DENSITY)
        ]
        length = sum(len(block.text) for block in blocks)
        if length and (best is None or length > best[0]):
            best = (length, blocks, element)
    return SchemaBody(blocks=best[1], source=MICRODATA, element=best[2]) if best else None


def jsonld_body(objects: list[dict[str, Any]]) -> SchemaBody | None:
    """The longest JSON-LD articleBody of an Article-like object, as blocks."""
    bodies = [obj.get("articleBody") for obj in article_objects(objects)]
    texts = [body for body in bodies if isinstance(body, str) and body.strip()]
    if not texts:
        return None
    blocks = blocks_from_text(max(texts, key=len))
    return SchemaBody(blocks=blocks, source=JSON_LD) if blocks else None


def unescape_fully(text: str) -> str:
    """Undo entity escaping, including double escaping, a bounded number of times."""
    for _ in range(MAX_UNESCAPE_ROUNDS):
        if "&" not in text:
            break
        unescaped = html_entities.unescape(text)
        if unescaped == text:
            break
        text = unescaped
    return text


def blocks_from_text(body: str) -> list[Block]:
    """Blocks from a text body that may contain (escaped) HTML: tags become block breaks."""
    body = unescape_fully(body[:MAX_JSONLD_BODY_CHARS])
    if "<" in body:
        body = _without_dead_elements(body)
    blocks: list[Block] = []
    position = 0
    kind = PARAGRAPH
    for start, end in _block_breaks(body):
        _append(blocks, kind, body[position:start])
        tag = _BLOCK_START.match(body[start:end])
        kind = _block_kind(tag.group(1).lower()) if tag else PARAGRAPH
        position = end
    _append(blocks, kind, body[position:])
    return blocks


# The two readers below find what the patterns `<\s*(script|...)\b[^>]*>.*?<\s*/\s*\1\s*>`
# and `<\s*/?\s*(?:p|br|...)\b[^>]*>|\n` found, in one pass: tried at every start of a tag
# that no ">" (or no end tag) follows, the patterns read the rest of the body from each (a
# JSON-LD body of 100,000 "<p " took 67 s, of unclosed "<script>"s minutes). A start that no
# ">" follows has none after it either; an end tag missing after one start of a name is missing
# after every later one.


def _without_dead_elements(body: str) -> str:
    """The body with each dead element, its start tag to its first end tag, as a space."""
    parts: list[str] = []
    kept_from = search_from = 0
    unclosed: set[str] = set()  # the names no end tag follows from here on
    while (start := _DEAD_START.search(body, search_from)) is not None:
        name = start.group(1).lower()
        tag_end = -1 if name in unclosed else body.find(">", start.end())
        if name not in unclosed and tag_end == -1:
            break  # no start tag ends from here on
        end = _DEAD_END[name].search(body, tag_end + 1) if tag_end != -1 else None
        if end is None:
            unclosed.add(name)
            search_from = start.start() + 1
            continue
        parts.extend((body[kept_from : start.start()], " "))
        kept_from = search_from = end.end()
    parts.append(body[kept_from:])
    return "".join(parts)


def _block_breaks(body: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each block break of the body, in order."""
    position = 0
    while (start := _BLOCK_BREAK_START.search(body, position)) is not None:
        if start.group() == "\n":
            yield start.start(), start.end()
            position = start.end()
            continue
        tag_end = body.find(">", start.end())
        if tag_end == -1:  # no tag ends from here on: only the line breaks are left
            line = body.find("\n", start.start())
            while line != -1:
                yield line, line + 1
                line = body.find("\n", line + 1)
            return
        yield start.start(), tag_end + 1
        position = tag_end + 1


def _block_kind(tag: str) -> str:
    return HEADING if tag.startswith("h") else _KIND_OF_TAG.get(tag, PARAGRAPH)


def _append(blocks: list[Block], kind: str, piece: str) -> None:
    text = clean_text(_TAG.sub(" ", piece))
    if text:
        blocks.append((kind, text))
