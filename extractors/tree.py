"""The parsed-tree vocabulary every extractor shares.

Pages are parsed into plain `lxml.etree` elements, not `lxml.html.HtmlElement`s: the HTML
element classes are looked up by a Python callback each time lxml hands an element to Python,
which made walking a tree several times slower than parsing it.
"""

from __future__ import annotations

from collections.abc import Iterator

from lxml import etree

Element = etree._Element

# What preprocessing makes of an element (see extractors.preprocess).
PLAIN, CHROME, CAPTION, FIGURE = 0, 1, 2, 3


def text_of(element: Element) -> str:
    """All the text inside `element` (not its tail), as a browser's textContent."""
    if type(element) is Element and not len(element):
        # No child (an element, a comment or a processing instruction): its text is all of it,
        # read for a fifth of the serialiser's cost (most elements asked are leaves: links,
        # headings, plain paragraphs). A comment's text is no textContent: only elements go here.
        return element.text or ""
    return etree.tostring(element, method="text", encoding=str, with_tail=False)


def first_child(element: Element, tag: str) -> Element | None:
    """The first child of `element` with `tag` (`element.find(tag)`, without lxml's path
    parser, which costs more than the look-up: the page's head and body are asked of every
    page)."""
    return next(element.iterchildren(tag), None)


def children_tagged(parent: Element, tag: str) -> Iterator[Element]:
    """The children of `parent` with `tag`, a tag read from the page.

    lxml refuses to match on a name holding a control character, which libxml2 gives a broken
    page's element as written (`<div\x01 class=story>`): such a name is compared in Python."""
    try:
        return parent.iterchildren(tag)
    except ValueError:
        return (child for child in parent.iterchildren() if child.tag == tag)


def siblings_tagged(element: Element, *, preceding: bool = False) -> Iterator[Element]:
    """The siblings of `element` with its tag (`children_tagged`'s care for a broken name)."""
    try:
        return element.itersiblings(element.tag, preceding=preceding)
    except ValueError:
        siblings = element.itersiblings(preceding=preceding)
        return (sibling for sibling in siblings if sibling.tag == element.tag)


def holds_other_than(parent: Element, tags: frozenset[str]) -> bool:
    """Whether `parent` holds text of its own (not whitespace: its text or a child's tail) or a
    child that is not one of `tags`. One loop over the children, without a call per child (asked
    of many elements a page: a `<head>`, every container of blocks)."""
    text = parent.text
    if text and not text.isspace():
        return True
    for child in parent:
        if child.tag not in tags:
            return True
        tail = child.tail
        if tail and not tail.isspace():
            return True
    return False


# A permalink's target holds the link: the link itself, the heading it is written in
# (`<h2 id="x"><a href="#x">`, MDN, Antora, Hugo, Docusaurus) or the section around that heading
# (Sphinx's `<section id="x"><h2>... <a href="#x">`).
PERMALINK_LEVELS = 3


def links_to_itself(link: Element) -> bool:
    """Whether `link` points at a fragment of the page that holds it: a heading's permalink,
    not a link to other content (a table of contents points at other sections)."""
    href = link.get("href")
    if not href or href[0] != "#":
        return False
    target, node = href[1:], link
    for _ in range(PERMALINK_LEVELS):
        if node is None:
            return False
        if node.get("id") == target:
            return True
        node = node.getparent()
    return False


def is_permalink_mark(link: Element) -> bool:
    """A permalink (`links_to_itself`) shown as a mark, not words: "¶" (Sphinx, MkDocs), "§"
    (rustdoc), "#", an icon, a zero-width space (Docusaurus). It is the heading's anchor for
    readers who copy a link, none of its text."""
    if not links_to_itself(link):
        return False
    return not any(character.isalnum() for character in text_of(link))


def heading_text(heading: Element) -> str:
    """`text_of(heading)` without its permalink marks (`is_permalink_mark`): the headline a
    reader reads, "Delta sync protocol", not "Delta sync protocol¶"."""
    if not any(is_permalink_mark(link) for link in heading.iter("a")):
        return text_of(heading)  # most headings: the serialiser, in C
    parts: list[str] = []
    events = etree.iterwalk(heading, events=("start", "end"))
    for event, element in events:
        if element is heading:
            parts.append((element.text or "") if event == "start" else "")
        elif event == "end":
            parts.append(element.tail or "")
        elif element.tag == "a" and is_permalink_mark(element):
            events.skip_subtree()  # its end still comes: the tail is the heading's
        else:
            parts.append(element.text or "")
    return "".join(parts)


def links_away(element: Element) -> bool:
    """A link under `element` other than a permalink (`links_to_itself`): a heading that links
    away is a teaser's headline, not a section's sub-heading."""
    return any(not links_to_itself(link) for link in element.iterdescendants("a"))


def first_element(tree: Element, tag: str) -> Element | None:
    """The first `tag` element of `tree` (itself included), in document order.

    `next(tree.iter(tag))` costs a walk of the whole tree: lxml's iterator looks for the match
    after the one it returns. `iterwalk` stops at the first (a <title> is found in the head)."""
    for _, element in etree.iterwalk(tree, events=("start",), tag=tag):
        return element
    return None


def document_title(tree: Element) -> str | None:
    """The text of the page's `<title>`, or None when it has none."""
    element = first_element(tree, "title")
    return text_of(element) if element is not None else None


# Every itemprop attribute of the page, asked in C (a page marks a few dozen elements at most;
# testing every element for one named property costs five times more). The attributes of the
# elements: `//@itemprop` would first gather every node of the page, its text nodes too, and ask
# each (libxml2 reads `//*` as one walk of the elements).
_ITEMPROP_VALUES = etree.XPath("//*/@itemprop")


def itemprop_values(tree: Element) -> list[str]:
    """Every itemprop attribute value of the page as written, in document order (each value's
    element is its `getparent()`)."""
    return _ITEMPROP_VALUES(tree)


def itemprops(tree: Element) -> list[tuple[list[str], Element]]:
    """The schema.org microdata properties of the page: each marked element with the lower-case
    property names of its itemprop, in document order. Computed once per page by the chain and
    shared by the stages that read microdata."""
    return [(value.lower().split(), value.getparent()) for value in itemprop_values(tree)]


# Both microdata attributes in one query. On a page of up to MICRODATA_UNION_MAX_BYTES, the
# union `//*/@itemprop|//*/@itemtype`: the fastest form (a predicate costs libxml2 a node set per
# element of the page: 0.1 ms more on a median page, 4 % of its extraction). libxml2 merges a
# union's two node sets by comparing every node of one with every node of the other, the square
# of the page's microdata: on a page this small at most ~9,000 items of both, 0.07 s. A larger page
# is read with the predicate, in one linear walk (40,000 items: 3.3 s by the union, 0.06 s).
MICRODATA_UNION_MAX_BYTES = 256 * 1024
_MICRODATA_VALUES = etree.XPath("//*/@itemprop|//*/@itemtype")
_MICRODATA_ELEMENTS = etree.XPath("//*[@itemprop or @itemtype]")


def microdata(
    tree: Element, page_bytes: int = 0
) -> tuple[list[tuple[list[str], Element]], list[tuple[str, Element]]]:
    """`itemprops(tree)`, and each itemtype value of the page with its element (document order).
    `page_bytes`: the size of the page parsed (0: unknown, read as large)."""
    properties: list[tuple[list[str], Element]] = []
    item_types: list[tuple[str, Element]] = []
    if 0 < page_bytes <= MICRODATA_UNION_MAX_BYTES:
        for value in _MICRODATA_VALUES(tree):
            if value.attrname == "itemprop":
                properties.append((value.lower().split(), value.getparent()))
            else:
                item_types.append((str(value), value.getparent()))
        return properties, item_types
    for element in _MICRODATA_ELEMENTS(tree):
        names = element.get("itemprop")
        if names is not None:
            properties.append((names.lower().split(), element))
        item_type = element.get("itemtype")
        if item_type is not None:
            item_types.append((item_type, element))
    return properties, item_types


# The tags the chain looks up across the whole page. lxml's iterator costs about as much for
# one tag as for several (the walk is the cost, 0.1 ms on a median page): one walk collects them
# all, where each stage walked the page for its own tag.
INDEXED_TAGS = ("p", "br", "script", "meta", "h1", "time", "link", "abbr")


class TagIndex:
    """The page's elements of INDEXED_TAGS by tag, each list in document order, from one walk.
    The tree must not change afterwards (no extractor modifies it)."""

    __slots__ = ("_by_tag",)

    def __init__(self, tree: Element) -> None:
        self._by_tag: dict[str, list[Element]] = {tag: [] for tag in INDEXED_TAGS}
        # Each tag's list's append, found once: a page has hundreds of these elements.
        append = {tag: found.append for tag, found in self._by_tag.items()}
        for element in tree.iter(*INDEXED_TAGS):
            append[element.tag](element)

    def get(self, tag: str) -> list[Element]:
        """The elements of `tag` (one of INDEXED_TAGS), in document order."""
        return self._by_tag[tag]


def first_indexed(tree: Element, tag: str, index: TagIndex | None) -> Element | None:
    """`first_element(tree, tag)`, read from the index when there is one (`tree` must be its
    root): the walk it saves goes down to a headline set deep in the body, or through the whole
    of a page without one."""
    if index is None:
        return first_element(tree, tag)
    found = index.get(tag)
    return found[0] if found else None


def elements(tree: Element, tag: str, index: TagIndex | None) -> list[Element]:
    """The elements of `tag` under `tree`, from the index when there is one (the index covers the
    whole page: `tree` must be its root)."""
    return index.get(tag) if index is not None else list(tree.iter(tag))


# Every element of the page, counted in C (a walk in Python costs 30 times more per element).
_ELEMENT_COUNT = etree.XPath("count(//*)")


def more_elements_than(tree: Element, limit: int) -> bool:
    """Whether the page of `tree` holds more than `limit` elements."""
    return int(_ELEMENT_COUNT(tree)) > limit


def common_ancestor(elements: list[Element]) -> Element | None:
    """The nearest element holding all of `elements` (one of them, when it holds the others)."""
    if not elements:
        return None
    common = [elements[0], *elements[0].iterancestors()]
    for element in elements[1:]:
        lineage = {id(node) for node in (element, *element.iterancestors())}
        common = [node for node in common if id(node) in lineage]
    return common[0] if common else None


def document_order(tree: Element) -> dict[Element, int]:
    """Each element of the tree (comments included) by its position in document order."""
    return {element: index for index, element in enumerate(tree.iter())}
