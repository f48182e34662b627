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

from collections import Counter
from collections.abc import Callable
from functools import cache
from itertools import islice

from lxml import etree

from extractors.blocks import TextBlock, clean_text_within
from extractors.paragraphs import CP
from extractors.preprocess import Cleaning
from extractors.short_article import SHORT_LINE_CHARS, shows_date, without_dates
from extractors.tree import Element, text_of

# The post's footer and at least two more: one comment under a post could be a dated caption.
MIN_FOOTERS = 3
# A comment's signature is among its last elements (the name, the date, a reply or report link);
# no more are read, however deep a hostile unit nests.
SIGNATURE_REACH = 8
# The class attributes of an element's element children, as plain strings.
_CHILD_CLASSES = etree.XPath("*/@class", smart_strings=False)


def thread_start(container: Element, cleaning: Cleaning) -> Element | None:
    """The first child of `container` after the post's own footer, when the children after it
    are a thread of dated units (see the module's docstring), or the first comment of a run
    of comments each signed inside (`_signed_run_start`); else None."""
    if not _names_enough_children(container):
        return None  # most containers: paragraphs without a class, never read one by one
    children = [
        child
        for child in container
        if isinstance(child.tag, str)
        and child.tag not in ("script", "style")
        and not cleaning.is_removed(child)
    ]
    # Each child's text, serialised once and only when a rule asks.
    text: Callable[[int], str] = cache(lambda index: text_of(children[index]).strip())
    templates = [_template(child) for child in children]
    # A template of fewer than MIN_FOOTERS children can be no series nor run: its children's
    # text is not read for it (most are the post's own wrappers, the post's whole text).
    counts = Counter(templates)
    series: dict[tuple[str, str], list[int]] = {}
    for index, template in enumerate(templates):
        if not template[1] or counts[template] < MIN_FOOTERS:
            continue  # a bare element is no template; a rare one no series
        # A long child (the post itself) is told from a short line without all its words.
        line = clean_text_within(text(index), SHORT_LINE_CHARS)
        if line is not None and shows_date(line):
            series.setdefault(template, []).append(index)
    for positions in series.values():
        if len(positions) < MIN_FOOTERS or positions[0] + 1 >= len(children):
            continue
        if any(len(text(later)) >= CP for later in range(positions[-1] + 1, len(children))):
            continue  # text after the last one: the dates head their units, they do not close them
        return children[positions[0] + 1]
    return _signed_run_start(children, templates, text, counts)


def _names_enough_children(container: Element) -> bool:
    """MIN_FOOTERS element children of `container` or more share a class attribute (its names
    as `_template` writes them): the most a template of its kept children may count, read in C.
    A series and a run are each of one such template; with none, `thread_start` has no answer
    and no child's text or kind is read."""
    counts = Counter(" ".join(value.split()) for value in _CHILD_CLASSES(container))
    return any(count >= MIN_FOOTERS for name, count in counts.items() if name)


def _template(element: Element) -> tuple[str, str]:
    return element.tag, " ".join((element.get("class") or "").split())


def _signed_run_start(
    children: list[Element],
    templates: list[tuple[str, str]],
    text: Callable[[int], str],
    counts: Counter[tuple[str, str]],
) -> Element | None:
    """The first of a run of units each closed by its own dated signature ("... Posted by
    <reader> on <date> <time>"): comments written as one element each, footer inside.

    The run holds MIN_FOOTERS units of one template (short lines between them allowed: a reply
    link), signed by more than one name (recipes or notes the author embeds are signed alike),
    and follows text of the post; no unit of its template with text comes after it (a paragraph
    of the post after such a run says the dates close paragraphs of the post, not comments).
    `counts`: the children of each template.

    A run starting at a child of a template of fewer than MIN_FOOTERS children signs fewer than
    MIN_FOOTERS units, and every child it passes is short or of that template: starting at the
    next child instead finds the same runs, without reading the rare template's signatures."""
    if sum(1 for template in templates if template[1]) < MIN_FOOTERS:
        return None  # too few units with a template (most containers: paragraphs without class)
    signature = cache(lambda index: _signature(children[index], text(index)))
    index = 0
    while index < len(children):
        template = templates[index]
        if not template[1] or counts[template] < MIN_FOOTERS or signature(index) is None:
            index += 1
            continue
        start, end, names = index, index, []
        while end < len(children):
            if len(text(end)) >= CP:
                if templates[end] != templates[start] or signature(end) is None:
                    break
                names.append(signature(end))
            end += 1
        if (
            len(names) >= MIN_FOOTERS
            and len(set(names)) > 1
            and any(len(text(before)) >= CP for before in range(start))
            and not any(
                templates[later] == templates[start] and len(text(later)) >= CP
                for later in range(end, len(children))
            )
        ):
            return children[start]
        index = end
    return None


def is_signed_posts(container: Element) -> bool:
    """The container holds readers' posts and nothing else: MIN_FOOTERS or more children, each
    closed by its own dated signature (`_signature`: "-- <reader> (<date>)"), signed by more than
    one name, and no child with text (CP characters or more) that is not such a post. A guest
    book or a page of condolences; a post above its comments is text of its own before them
    (`_signed_run_start` cuts those)."""
    names = []
    for child in container:
        if not isinstance(child.tag, str) or child.tag in ("script", "style"):
            continue
        text = text_of(child).strip()
        if len(text) < CP:
            continue
        name = _signature(child, text)
        if name is None:
            return False
        names.append(name)
    return len(names) >= MIN_FOOTERS and len(set(names)) > 1


def _signature(unit: Element, text: str) -> str | None:
    """What the dated signature closing `unit` (whose text is `text`) says besides its date: the
    last short element inside it that shows a date, when a date is in reach of the unit's end
    (SHORT_LINE_CHARS); None for a unit not so closed or too short to be a comment."""
    if len(text) < CP or not shows_date(text[-SHORT_LINE_CHARS:]):
        return None
    for element in islice(reversed(list(unit.iterdescendants("*"))), SIGNATURE_REACH):
        line = clean_text_within(text_of(element), SHORT_LINE_CHARS)
        if line is not None and shows_date(line):
            return " ".join(without_dates(line).split())
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
