"""Browser-like repairs of the tree libxml2 builds, where its HTML parser and a browser part ways
on broken pages.

libxml2 predates the HTML5 parsing algorithm that browsers share. On most pages the two build
the same tree; on two kinds of broken page they do not, and libxml2 hides the whole page from
every extractor (they read `<body>`, never `<head>`):

* **body content inside `<head>`.** In a browser the first element that may not appear in a
  head (anything but `<meta>`, `<title>`, `<link>`, `<script>`, `<style>`...) or the first
  non-blank text ends the head and starts the body (HTML5, the "in head" insertion mode).
  libxml2 keeps an unknown element there (`<mbox>` on a real page), with everything after it:
  the page has no body.
* **content after the document element.** A browser puts whatever follows `</html>` (a second
  page appended to the first, a tag after a mangled `<html ...>` start tag) into the body; libxml2
  leaves it beside the root, where a walk from the root never goes.

Each repair moves the misplaced elements to where a browser puts them, in order; nothing is
dropped. Both are decided from the head's children and the root's siblings alone, so a page
that needs neither costs a few element checks. What a browser does not show either (an article
inside a `<script>` that never closes) is not repaired: that text is not on the page.

Runs once, in `extractors.document`, on the tree it has just built; extractors never modify it.
Text it moves is stored again, so it loses what lxml refuses to store (`storable_text`).
"""

from __future__ import annotations

from itertools import pairwise

from lxml import etree

from extractors.safetext import storable_text
from extractors.tree import Element, first_child, holds_other_than

# Elements a browser leaves in <head> (HTML5 "in head" insertion mode); any other one starts
# the body.
HEAD_TAGS = frozenset(
    {"base", "basefont", "bgsound", "link", "meta", "title", "noscript", "noframes", "style",
     "script", "template"}
)  # fmt: skip


def repair_tree(root: Element) -> None:
    """Move body content out of `<head>` and content after the root into `<body>`, as a browser
    does. Modifies `root` (a freshly parsed page) in place."""
    _reopen_body(root)
    _adopt_trailing_content(root)


def _body_of(root: Element) -> Element:
    """The root's `<body>`, created after its `<head>` when the page has none."""
    body = root.find("body")
    if body is None:
        body = etree.Element("body")
        head = root.find("head")
        if head is not None:
            head.addnext(body)
        else:
            root.append(body)
    return body


def _reopen_body(root: Element) -> None:
    """Body content inside `<head>` (from the first child a head cannot hold) moves to the start
    of `<body>`."""
    head = first_child(root, "head")
    if head is None or not _holds_body(head):
        return
    children = [child for child in head if isinstance(child.tag, str)]
    loose_text = _text(head.text)
    start = 0 if loose_text else _first_body_child(children)
    if start is None:
        return
    misplaced = children[start:]
    tail = None
    if start > 0 and _text(children[start - 1].tail):
        tail = children[start - 1].tail  # text after the last head element starts the body
        children[start - 1].tail = None
    elif loose_text:
        tail, head.text = head.text, None
    if not misplaced and tail is None:
        return
    body = _body_of(root)
    _prepend(body, tail, misplaced)


def _holds_body(head: Element) -> bool:
    """Whether the head holds anything a browser would not keep there (one pass over its
    children decides the common page, which needs no repair; written out, without a call per
    child: a head holds dozens)."""
    return holds_other_than(head, HEAD_TAGS)


def _first_body_child(children: list[Element]) -> int | None:
    """Index of the first child that ends the head: an element a head cannot hold, or the one
    after a head element followed by text."""
    for index, child in enumerate(children):
        if child.tag not in HEAD_TAGS:
            return index
        if _text(child.tail):
            return index + 1
    return None


def _prepend(body: Element, text: str | None, elements: list[Element]) -> None:
    """`text` and `elements` (moved, tails included) at the start of `body`, before what it
    held."""
    if not elements:
        body.text = storable_text((text or "") + (body.text or ""))
        return
    if body.text:
        last = elements[-1]
        last.tail = storable_text((last.tail or "") + body.text)
    body.text = storable_text(text)
    # Each after the one before: inserting each at its index walked the body's children to it,
    # the square of the elements (240,000 in a <head>: 229 s).
    body.insert(0, elements[0])
    for before, element in pairwise(elements):
        before.addnext(element)


def _adopt_trailing_content(root: Element) -> None:
    """Elements after the root (a second `<html>`, or tags after `</html>`) move into `<body>`:
    a second page's `<head>` goes where the first page has none, everything else to the end of
    the body.

    The text the pages bring is gathered and set once before the body's next element (each
    page's text added to the tail in turn copied the whole tail again: 25,000 pages of one line,
    concatenated, took 25 s, 100,000 six minutes)."""
    following = [sibling for sibling in root.itersiblings() if isinstance(sibling.tag, str)]
    text = _TrailingText()
    for sibling in following:
        if sibling.tag != "html":
            text.append_to(_body_of(root), sibling)
            continue
        for part in [child for child in sibling if isinstance(child.tag, str)]:
            if part.tag == "head" and root.find("head") is None:
                root.insert(0, part)
            elif part.tag in ("head", "body"):
                _append_content(_body_of(root), part, text)
            else:
                text.append_to(_body_of(root), part)
    text.flush()


class _TrailingText:
    """Text for the end of a body, kept until the body's next element is appended (or the end)."""

    def __init__(self) -> None:
        self.target: Element | None = None
        self.parts: list[str] = []

    def add(self, target: Element, text: str) -> None:
        self.target = target
        self.parts.append(text)

    def append_to(self, target: Element, element: Element) -> None:
        self.flush()
        target.append(element)

    def flush(self) -> None:
        """The kept text at the end of the body: the tail of its last child, or its own text."""
        target = self.target
        if target is None or not self.parts:
            return
        joined = "".join(self.parts)
        self.parts = []
        last = target[-1] if len(target) else None
        if last is None:
            target.text = storable_text((target.text or "") + joined)
        else:
            last.tail = storable_text((last.tail or "") + joined)


def _append_content(target: Element, source: Element, text: _TrailingText) -> None:
    """The text and children of `source` at the end of `target`."""
    if source.text:
        text.add(target, source.text)
    for child in list(source):
        text.append_to(target, child)


def _text(value: str | None) -> bool:
    return bool(value) and not value.isspace()
