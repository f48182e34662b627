"""Block-level rules inside a chosen body: drop what a reader would not call the article.

The container Algorithm 2.1 picks holds more than its content-bearing paragraphs: "Read more"
links, trailing "Related" headings, link lists. These rules decide block by block.
"""

from __future__ import annotations

from extractors.article import HEADING, LIST_ITEM, PARAGRAPH, QUOTE, Block
from extractors.blocks import TextBlock
from extractors.paragraphs import CP

# A block whose text is mostly link text is navigation ("Read more: ...", "Also on ...").
MAX_BLOCK_LINK_DENSITY = 0.5
# ... unless it is a passage of prose with links in it: it opens with at least a content-bearing
# paragraph's worth of text before its first link (Algorithm 2.1's CP) ...
PROSE_LEAD_CHARS = CP
# ... and sits between two paragraphs of the body that are not mostly links (a blog's closing
# "More on X: link link link" comes after the last of them).
PROSE_KINDS = frozenset({PARAGRAPH, LIST_ITEM, QUOTE})


def keep_body_blocks(blocks: list[TextBlock]) -> list[Block]:
    plain = [block.link_density <= MAX_BLOCK_LINK_DENSITY for block in blocks]
    prose = [
        index
        for index, block in enumerate(blocks)
        if plain[index] and block.kind == PARAGRAPH and block.chars >= PROSE_LEAD_CHARS
    ]
    first, last = (prose[0], prose[-1]) if prose else (0, 0)
    kept = [
        block
        for index, block in enumerate(blocks)
        if plain[index] or (first < index < last and _prose_with_links(block))
    ]
    while kept and kept[-1].kind == HEADING:  # a heading with nothing after it heads chrome
        kept.pop()
    return [block.block for block in kept]


def _prose_with_links(block: TextBlock) -> bool:
    """A sentence that links its sources as it goes ("As we reported when the verdict came in,
    <a>the jury awarded</a> <a>three hundred million</a> ..."): mostly link text, yet opened by a
    run of its own words. A list of headlines opens with a link, a site map or a share bar with
    a word or two."""
    return block.kind in PROSE_KINDS and block.lead_chars >= PROSE_LEAD_CHARS
