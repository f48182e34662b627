"""newsharvest's article extractors: a pure library (lxml + numpy, no Scrapy).

from extractors import extract
article = extract(html_bytes_or_str, url)   # Article, or None when the page has no article
"""

from __future__ import annotations

from extractors.article import BLOCK_KINDS, Article, Block, Extraction
from extractors.chain import extract_verbose


def extract(
    html: str | bytes, url: str | None = None, *, encoding: str | None = None
) -> Article | None:
    """The article of a page, or None (NULL) when no convincing article is found.

    `encoding` is the transport's declared charset (HTTP Content-Type), used when the bytes carry
    no byte-order mark.
    """
    return extract_verbose(html, url, encoding=encoding).article


__all__ = ["BLOCK_KINDS", "Article", "Block", "Extraction", "extract", "extract_verbose"]
