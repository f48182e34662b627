"""Choosing between the publisher's schema.org body and the DOM heuristics' body.

The publisher's markup is the better evidence of *what* the body is; the DOM is the better
source of its *structure*, and JSON-LD bodies have known traps: a teaser (the first paragraph
only), HTML or entities still inside, paragraphs run together. So the two are compared by the
benchmark's own unit, word 4-gram shingles:

* the schema body is mostly inside the DOM's, which holds much more: the schema body is a
  teaser, the DOM's is the article;
* a microdata body is DOM structure already: it is taken as the publisher marked it;
* a JSON-LD body the DOM's contains is confirmed by it: the DOM's blocks keep the structure;
* a JSON-LD body the DOM's misses is the publisher's word against a heuristic: it wins.
"""

from __future__ import annotations

from extractors.article import Block
from extractors.dom import DomBody
from extractors.evaluation import has_tokens, shingle_set
from extractors.schema_org import METHOD_SCHEMA_ORG, MICRODATA, SchemaBody

# The DOM body contains the schema body when it holds this share of the schema body's shingles.
SCHEMA_COVERED_BY_DOM = 0.9
# The schema body is complete (not a teaser) when it holds this share of the DOM body's.
DOM_COVERED_BY_SCHEMA = 0.8


def choose_body(schema: SchemaBody | None, dom: DomBody | None) -> tuple[list[Block], str] | None:
    """The body blocks and the method that produced them, or None when neither stage found one."""
    if schema is None:
        return (dom.blocks, dom.method) if dom else None
    blocks = schema.text_blocks
    if dom is None:
        return blocks, METHOD_SCHEMA_ORG
    if schema.element is not None and schema.element is dom.container and dom.container_only:
        # The publisher marked the very element Algorithm 2.1 chose: one body, taken as marked.
        return blocks, METHOD_SCHEMA_ORG
    schema_in_dom, dom_in_schema = coverage(blocks, dom.blocks)
    dom_contains_schema = schema_in_dom >= SCHEMA_COVERED_BY_DOM
    if dom_contains_schema and dom_in_schema < DOM_COVERED_BY_SCHEMA:
        return dom.blocks, dom.method  # the schema body is a teaser of the DOM's
    if schema.source == MICRODATA or not dom_contains_schema:
        return blocks, METHOD_SCHEMA_ORG
    return dom.blocks, dom.method  # they agree: the DOM's blocks keep the structure


def coverage(schema_blocks: list[Block], dom_blocks: list[Block]) -> tuple[float, float]:
    """Shares of the schema body's distinct shingles found in the DOM body, and of the DOM's in
    the schema body's."""
    schema_text, dom_text = _text_of(schema_blocks), _text_of(dom_blocks)
    if schema_text == dom_text:
        # One text (a publisher's body often is the DOM's, word for word): each holds all the
        # other's shingles, if it has any, told without cutting it into words.
        return (1.0, 1.0) if has_tokens(schema_text) else (0.0, 0.0)
    schema_shingles, dom_shingles = shingle_set(schema_text), shingle_set(dom_text)
    shared = len(schema_shingles & dom_shingles)
    return shared / max(1, len(schema_shingles)), shared / max(1, len(dom_shingles))


def _text_of(blocks: list[Block]) -> str:
    return " ".join(text for _, text in blocks)
