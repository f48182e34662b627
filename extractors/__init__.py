"""newsharvest's article extractors: a pure library (lxml + numpy, no Scrapy).

from extractors import extract
article = extract(html_bytes_or_str, url)   # Article, or None when the page has no article
article = extract(html, url, extractor="boilerpipe-tree")   # any name in EXTRACTORS, or "a+b"
"""

from __future__ import annotations

from extractors.article import BLOCK_KINDS, Article, Block, Extraction
from extractors.registry import DEFAULT, EXTRACTORS, UnknownExtractorError, extract_verbose


def extract(
    html: str | bytes,
    url: str | None = None,
    *,
    encoding: str | None = None,
    extractor: str = DEFAULT,
) -> Article | None:
    """The article of a page, or None (NULL) when no convincing article is found.

    `encoding` is the transport's declared charset (HTTP Content-Type), used when the bytes carry
    no byte-order mark. `extractor` picks the algorithm (`extractors.EXTRACTORS`; the default is
    the production chain); an unknown name raises UnknownExtractorError.
    """
    return extract_verbose(html, url, encoding=encoding, extractor=extractor).article


__all__ = [
    "BLOCK_KINDS",
    "EXTRACTORS",
    "Article",
    "Block",
    "Extraction",
    "UnknownExtractorError",
    "extract",
    "extract_verbose",
]
