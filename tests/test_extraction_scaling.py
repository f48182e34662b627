"""Extraction's cost on hostile pages grows with the page, not with its square.

The pipeline kills a page after EXTRACT_TIMEOUT_SECONDS and the input is capped at 4 MiB, so any
step whose work grows faster than the number of elements loses long real pages (a live blog, a
forum thread, a long list). These tests count work, never time: the queries the library sends to
libxml2, and the operations of the walks, at N and 4N."""

from __future__ import annotations

import random

from lxml import etree

from extractors.tree import microdata


def _union_microdata(tree: etree._Element) -> tuple[list, list]:
    """The page's microdata as the union query read it (quadratic, fine on a small page)."""
    properties, item_types = [], []
    for value in tree.xpath("//*/@itemprop|//*/@itemtype"):
        if value.attrname == "itemprop":
            properties.append((value.lower().split(), value.getparent()))
        else:
            item_types.append((str(value), value.getparent()))
    return properties, item_types


def test_microdata_in_one_walk_reads_what_the_union_read() -> None:
    rng = random.Random(3)
    attributes = ("", " itemprop='Headline articleBody'", " itemprop=''", " itemscope",
                  " itemtype='http://schema.org/NewsArticle'",
                  " itemtype='https://schema.org/Person' itemprop='author'")  # fmt: skip
    for _ in range(300):
        parts = [f"<div{rng.choice(attributes)}>x" for _ in range(rng.randint(0, 12))]
        html = "<html><body>" + "".join(parts) + "</div>" * len(parts) + "</body></html>"
        tree = etree.fromstring(html, etree.HTMLParser())
        assert microdata(tree) == _union_microdata(tree), html
