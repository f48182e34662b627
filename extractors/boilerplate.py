"""Block-level rules inside a chosen body: drop what a reader would not call the article.

The container Algorithm 2.1 picks holds more than its content-bearing paragraphs: "Read more"
links, trailing "Related" headings, link lists. These rules decide block by block.
"""

from __future__ import annotations

from extractors.article import HEADING, LIST_ITEM, PARAGRAPH, QUOTE, TEXT_KINDS, Block
from extractors.blocks import TextBlock
from extractors.paragraphs import CP, ends_as_sentence
from extractors.tree import Element, text_of

# A block whose text is mostly link text is navigation ("Read more: ...", "Also on ...").
MAX_BLOCK_LINK_DENSITY = 0.5
# ... unless it is a passage of prose with links in it: it opens with at least a content-bearing
# paragraph's worth of text before its first link (Algorithm 2.1's CP) ...
PROSE_LEAD_CHARS = CP
# ... and sits between two paragraphs of the body that are not mostly links (a blog's closing
# "More on X: link link link" comes after the last of them).
PROSE_KINDS = frozenset({PARAGRAPH, LIST_ITEM, QUOTE})
# ... or when it is an item of a list more than this share of whose items are not mostly link
# text, and adds a sentence of its own (PROSE_LEAD_CHARS of text outside its links) to its link:
# the list is the article's (a roundup of linked headlines, each told in a sentence); a list of
# related headlines is link text item by item ...
PLAIN_LIST_SHARE = 0.5
# ... or when every link's text is the address it points to, written out (a cited source); the
# marks a publishing tool cuts a long address with, and the schemes a written address may drop.
TRUNCATION_MARKS = ".\u2026"
SCHEMES = ("https://", "http://")
WEB_HOST_PREFIX = "www."
# ... or when the body's own prose announces it: a paragraph ending with this mark, followed by
# at least this many items (one line after a colon is a link; two or more are a list).
ANNOUNCING_MARK = ":"
ANNOUNCED_ITEMS_MIN = 2


def keep_body_blocks(blocks: list[TextBlock]) -> list[Block]:
    # `link_density <= MAX_BLOCK_LINK_DENSITY` written out (the same division): a property call
    # per block cost more than the test.
    plain = [
        not block.chars or block.link_chars / block.chars <= MAX_BLOCK_LINK_DENSITY
        for block in blocks
    ]
    prose = [
        index
        for index, block in enumerate(blocks)
        if plain[index] and block.kind in TEXT_KINDS and block.chars >= PROSE_LEAD_CHARS
    ]
    first, last = (prose[0], prose[-1]) if prose else (0, 0)
    lists = _plain_lists(blocks, plain) if _linked_items(blocks, plain) else set()
    announced = set() if all(plain) else _announced_items(blocks, plain, prose)
    kept = [
        block
        for index, block in enumerate(blocks)
        if plain[index]
        or (
            first < index < last
            and (
                _prose_with_links(block)
                or _written_addresses(block)
                or _item_of_plain_list(block, lists)
            )
        )
        or index in announced
    ]
    while kept and kept[-1].kind == HEADING:  # a heading with nothing after it heads chrome
        kept.pop()
    return [(block.kind, block.text) for block in kept]


def _linked_items(blocks: list[TextBlock], plain: list[bool]) -> bool:
    """Whether some list item of the body is mostly link text (most bodies have none)."""
    for block, is_plain in zip(blocks, plain, strict=True):
        # A loop, not any() over a generator: most bodies are read to their end.
        if not is_plain and block.kind == LIST_ITEM:
            return True
    return False


def _plain_lists(blocks: list[TextBlock], plain: list[bool]) -> set[Element]:
    """The lists (the parents of the body's list items) more than PLAIN_LIST_SHARE of whose items
    in the body are not mostly link text."""
    counts: dict[Element, list[int]] = {}
    for block, is_plain in zip(blocks, plain, strict=True):
        if block.kind == LIST_ITEM and (parent := block.element.getparent()) is not None:
            count = counts.setdefault(parent, [0, 0])
            count[0] += 1
            count[1] += is_plain
    return {parent for parent, (items, kept) in counts.items() if kept > PLAIN_LIST_SHARE * items}


def _announced_items(blocks: list[TextBlock], plain: list[bool], prose: list[int]) -> set[int]:
    """The indexes of the blocks of every list the body's own prose announces: a paragraph of
    prose of the body (`prose`: plain, a content-bearing paragraph's length) that ends with a
    colon ("Here are the places we will visit this year:"), then at least ANNOUNCED_ITEMS_MIN
    items of one list (or paragraphs beside it, a list set out line by line), up to the first
    sentence of prose. The sentence tells the reader that what follows belongs to it, however
    much of it is links (places, tracks, the sources it cites); a "Read more:" above a related
    box is too short to be such a sentence, and a lone line after a colon is a link, not a list."""
    announced: set[int] = set()
    for index in prose:
        block = blocks[index]
        if block.kind != PARAGRAPH or not block.text.rstrip().endswith(ANNOUNCING_MARK):
            continue
        run = _announced_run(blocks, plain, index + 1)
        if len(run) >= ANNOUNCED_ITEMS_MIN:
            announced.update(run)
    return announced


def _announced_run(blocks: list[TextBlock], plain: list[bool], start: int) -> list[int]:
    """The blocks from `start` on that go on what the paragraph before it announced: items of
    the list that follows it, or paragraphs beside it, up to the first sentence of prose."""
    if start >= len(blocks):
        return []
    kind = blocks[start].kind
    if kind == LIST_ITEM:
        owner = blocks[start].element.getparent()
    elif kind == PARAGRAPH:
        owner = blocks[start - 1].element.getparent()
    else:
        return []
    run = []
    for index in range(start, len(blocks)):
        item = blocks[index]
        if item.kind != kind or item.element.getparent() is not owner:
            break
        if plain[index] and item.chars >= PROSE_LEAD_CHARS and ends_as_sentence(item.text):
            break  # the prose goes on: the list has ended
        run.append(index)
    return run


def _item_of_plain_list(block: TextBlock, lists: set[Element]) -> bool:
    """An item of a list most of whose items are prose (`_plain_lists`) that adds a sentence of
    its own to its link (a roundup: "<a>A long linked headline</a>. What happened, told in a
    sentence.")."""
    if block.kind != LIST_ITEM or block.element.getparent() not in lists:
        return False
    own = block.chars - block.link_chars
    return own >= PROSE_LEAD_CHARS and ends_as_sentence(block.text)


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
    text's source is, and the reader reads it as part of the text.

    The first link whose text is no address answers: a block's element may be the whole
    container (its loose text), whose every link was read for each such block (dragnet pages
    of hundreds of links read 450 link texts per block)."""
    found = False
    for link in block.element.iter("a"):
        written = text_of(link).strip()
        if not written:
            continue
        if not _is_own_address(link, written):
            return False
        found = True
    return found


def _is_own_address(link: Element, written: str) -> bool:
    """The link's text (`written`, stripped, not empty), without spaces, is a web address
    written out in full (with its scheme, or starting "www.") that the link's own target starts
    with or holds. A host name alone is a name ("example.com" on a company's card, "del.icio.us"
    in a share bar), and an e-mail address is a credit."""
    if any(character.isspace() for character in written):
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
