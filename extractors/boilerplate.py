"""Block-level rules inside a chosen body: drop what a reader would not call the article.

The container Algorithm 2.1 picks holds more than its content-bearing paragraphs: "Read more"
links, trailing "Related" headings, link lists. These rules decide block by block.
"""

from __future__ import annotations

from extractors.article import HEADING, Block
from extractors.blocks import TextBlock

# A block whose text is mostly link text is navigation ("Read more: ...", "Also on ...").
MAX_BLOCK_LINK_DENSITY = 0.5


def keep_body_blocks(blocks: list[TextBlock]) -> list[Block]:
    kept = [block for block in blocks if block.link_density <= MAX_BLOCK_LINK_DENSITY]
    while kept and kept[-1].kind == HEADING:  # a heading with nothing after it heads chrome
        kept.pop()
    return [block.block for block in kept]
