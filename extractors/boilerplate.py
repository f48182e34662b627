"""Block-level rules inside a chosen body: drop what a reader would not call the article.

The container Algorithm 2.1 picks holds more than its content-bearing paragraphs: "Read more"
links, trailing "Related" headings, link lists. These rules decide block by block.
"""

from __future__ import annotations

from extractors.article import HEADING, LIST_ITEM, PARAGRAPH, QUOTE, Block
from extractors.blocks import TextBlock
from extractors.paragraphs import CP
from extractors.tree import Element, text_of

# A block whose text is mostly link text is navigation ("Read more: ...", "Also on ...").
MAX_BLOCK_LINK_DENSITY = 0.5
# ... unless it is a passage of prose with links in it: it opens with at least a content-bearing
# paragraph's worth of text before its first link (Algorithm 2.1's CP) ...
PROSE_LEAD_CHARS = CP
# ... and sits between two paragraphs of the body that are not mostly links (a blog's closing
# "More on X: link link link" comes after the last of them).
PROSE_KINDS = frozenset({PARAGRAPH, LIST_ITEM, QUOTE})
# ... or when every link's text is the address it points to, written out (a cited source); the
# marks a publishing tool cuts a long address with, and the schemes a written address may drop.
TRUNCATION_MARKS = ".\u2026"
SCHEMES = ("https://", "http://")
WEB_HOST_PREFIX = "www."


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
        if plain[index]
        or (first < index < last and (_prose_with_links(block) or _written_addresses(block)))
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


def _written_addresses(block: TextBlock) -> bool:
    """A line that cites its sources by their addresses: every link's text is the address it
    points to, written out ("http://example.org/report", "More: https://example.org"). A
    headline or a menu item names the page it links; a written-out address only shows where the
    text's source is, and the reader reads it as part of the text."""
    links = [link for link in block.element.iter("a") if text_of(link).strip()]
    return bool(links) and all(_is_own_address(link) for link in links)


def _is_own_address(link: Element) -> bool:
    """The link's text, without spaces, is a web address written out in full (with its scheme,
    or starting "www.") that the link's own target starts with or holds. A host name alone is a
    name ("example.com" on a company's card, "del.icio.us" in a share bar), and an e-mail
    address is a credit."""
    written = text_of(link).strip()
    if not written or any(character.isspace() for character in written):
        return False
    address = written.rstrip(TRUNCATION_MARKS).lower()
    text = _without_scheme(address)
    if text == address and not text.startswith(WEB_HOST_PREFIX):
        return False  # no scheme, no "www.": a name, not an address
    text = text.rstrip("/")
    target = _without_scheme((link.get("href") or "").strip())
    return "." in text and bool(target) and (target.startswith(text) or text in target)


def _without_scheme(address: str) -> str:
    lowered = address.lower()
    for scheme in SCHEMES:
        if lowered.startswith(scheme):
            return lowered[len(scheme) :]
    return lowered
