"""The parsed-tree vocabulary every extractor shares.

Pages are parsed into plain `lxml.etree` elements, not `lxml.html.HtmlElement`s: the HTML
element classes are looked up by a Python callback each time lxml hands an element to Python,
which made walking a tree several times slower than parsing it.
"""

from __future__ import annotations

from lxml import etree

Element = etree._Element

# What preprocessing makes of an element (see extractors.preprocess).
PLAIN, CHROME, CAPTION, FIGURE = 0, 1, 2, 3


def text_of(element: Element) -> str:
    """All the text inside `element` (not its tail), as a browser's textContent."""
    return etree.tostring(element, method="text", encoding=str, with_tail=False)


# Every itemprop attribute of the page, asked in C (a page marks a few dozen elements at most;
# testing every element for one named property costs five times more).
_ITEMPROP_VALUES = etree.XPath("//@itemprop")


def itemprops(tree: Element) -> list[tuple[list[str], Element]]:
    """The schema.org microdata properties of the page: each marked element with the lower-case
    property names of its itemprop, in document order. Computed once per page by the chain and
    shared by the stages that read microdata."""
    return [(value.lower().split(), value.getparent()) for value in _ITEMPROP_VALUES(tree)]
