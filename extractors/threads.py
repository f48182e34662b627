"""Where a post ends inside a flat container: the dated footer that closes it and its thread.

Old blog templates (Movable Type, TypePad, early Blogger) write a post, its trackbacks and its
comments as siblings in one container: the post's paragraphs, the post's footer ("Posted by
<author> at <month> <day>, <year> <time>"), a "Comments" heading, then each comment's paragraphs
closed by a footer of the same template ("Posted by: <reader> at <date> <time>").
Algorithm 2.1 keeps the container, and the thread, often ten times the post, with it.

The footers are what the page's structure shows: three or more short children of the container
written in one template (the same tag and class), each showing a calendar date. A footer closes
the unit above it; a date header of the same form (a timeline in an article) opens the unit
below it. So the series is a thread only when nothing content-bearing follows its last member:
the last comment's footer ends the container (a comment form, chrome, may follow). The post is
everything up to the first footer, which is the post's own. Pure functions: nothing is modified.
"""

from __future__ import annotations

from extractors.blocks import TextBlock, clean_text_within
from extractors.paragraphs import CP
from extractors.preprocess import Cleaning
from extractors.short_article import SHORT_LINE_CHARS, shows_date
from extractors.tree import Element, text_of

# The post's footer and at least two more: one comment under a post could be a dated caption.
MIN_FOOTERS = 3


def thread_start(container: Element, cleaning: Cleaning) -> Element | None:
    """The first child of `container` after the post's own footer, when the children after it
    are a thread of dated units (see the module's docstring); else None."""
    children = [
        child
        for child in container
        if isinstance(child.tag, str)
        and child.tag not in ("script", "style")
        and not cleaning.is_removed(child)
    ]
    series: dict[tuple[str, str], list[int]] = {}
    for index, child in enumerate(children):
        classes = " ".join((child.get("class") or "").split())
        if not classes:
            continue  # a bare element is no template
        # A long child (the post itself) is told from a short line without all its words.
        text = clean_text_within(text_of(child), SHORT_LINE_CHARS)
        if text is not None and shows_date(text):
            series.setdefault((child.tag, classes), []).append(index)
    for positions in series.values():
        if len(positions) < MIN_FOOTERS or positions[0] + 1 >= len(children):
            continue
        after_last = children[positions[-1] + 1 :]
        if any(len(text_of(child).strip()) >= CP for child in after_last):
            continue  # text after the last one: the dates head their units, they do not close them
        return children[positions[0] + 1]
    return None


def cut_thread(written: list[TextBlock], container: Element, cleaning: Cleaning) -> None:
    """Drop, in place, the blocks from the thread after the post's footer on (see
    `thread_start`); blocks after the container come after the thread and go too."""
    start = thread_start(container, cleaning)
    if start is None:
        return
    thread = set(start.itersiblings())
    thread.add(start)
    for index, block in enumerate(written):
        node: Element | None = block.element
        while node is not None and node is not container:
            if node in thread:
                del written[index:]
                return
            node = node.getparent()
