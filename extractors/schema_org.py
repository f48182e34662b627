"""The schema.org stage: the body the publisher itself marked up.

Microdata `itemprop="articleBody"` (any case) is read as the element's text with tags removed,
as seed 002 does; JSON-LD `articleBody` (any Article type, inside `@graph` and arrays) is a plain
string that may still carry HTML or entities.
"""

from __future__ import annotations

import html as html_entities
import re
from dataclasses import dataclass
from typing import Any

from lxml import html

from extractors.article import PARAGRAPH, Block
from extractors.blocks import clean_text, iter_blocks
from extractors.jsonld import article_objects

METHOD_SCHEMA_ORG = "schema_org"
_TAG = re.compile(r"<[^>]{0,2000}>")
_PARAGRAPH_BREAK = re.compile(r"\s*(?:<\s*/?\s*(?:p|br|div|h[1-6]|li)\b[^>]*>\s*)+|\n", re.I)


@dataclass(slots=True)
class SchemaBody:
    blocks: list[Block]
    source: str  # "microdata" or "json_ld"
    element: html.HtmlElement | None = None  # the microdata container, when there is one


def microdata_body(tree: html.HtmlElement) -> SchemaBody | None:
    """The longest element marked itemprop=articleBody, as blocks."""
    best: tuple[int, html.HtmlElement, list[Block]] | None = None
    for element in tree.xpath("//*[@itemprop]"):
        tokens = (element.get("itemprop") or "").lower().split()
        if "articlebody" not in tokens:
            continue
        blocks = list(iter_blocks(element))
        length = sum(len(text) for _, text in blocks)
        if length and (best is None or length > best[0]):
            best = (length, element, blocks)
    if best is None:
        return None
    return SchemaBody(blocks=best[2], source="microdata", element=best[1])


def jsonld_body(objects: list[dict[str, Any]]) -> SchemaBody | None:
    """The longest JSON-LD articleBody of an Article-like object, split into paragraphs."""
    bodies = [obj.get("articleBody") for obj in article_objects(objects)]
    texts = [body for body in bodies if isinstance(body, str) and body.strip()]
    if not texts:
        return None
    blocks = blocks_from_text(max(texts, key=len))
    return SchemaBody(blocks=blocks, source="json_ld") if blocks else None


def blocks_from_text(body: str) -> list[Block]:
    """Paragraph blocks from a text body that may contain HTML tags or entities."""
    pieces = _PARAGRAPH_BREAK.split(body)
    texts = (clean_text(html_entities.unescape(_TAG.sub(" ", piece))) for piece in pieces)
    return [(PARAGRAPH, text) for text in texts if text]
