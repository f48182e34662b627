"""`newsharvest extract FILE_OR_URL`: run the extraction chain on one page and print the article.

A URL is fetched as the crawler fetches (crawler/cli/fetchpage.py): its network policy, size
limit and robots.txt, and a time limit on the whole fetch. Exit status: 0 an article, 1 NULL (no
article on the page), 2 the page could not be read or fetched, 3 the network policy refused the
URL or a redirect (nothing was sent there); each failure is one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

STDIN_MAX_BYTES = 16 * 1024 * 1024  # what is read of a page piped in
FORMATS = ("text", "markdown", "json")
EXIT_NULL, EXIT_UNREADABLE, EXIT_REFUSED = 1, 2, 3


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("extract", help="extract the article from a file or URL")
    parser.add_argument("source", help="an HTML file, '-' for stdin, or an http(s) URL")
    parser.add_argument("--url", help="the page's URL, when SOURCE is a file (resolves links)")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="text (default: the metadata, then the blocks), markdown, or json",
    )
    parser.add_argument("--json", action="store_true", help="the same as --format json")
    parser.add_argument(
        "--timeout",
        type=float,
        help="give up fetching a URL after this many seconds, redirects and retries included "
        "(default: the profile's DOWNLOAD_TIMEOUT)",
    )
    parser.add_argument(
        "--extractor",
        default="default",
        help="the extractor: default (the production chain), boilerpipe, boilerpipe-tree, "
        "justext, cetr, cetr-km, cetr-tm[:LAMBDA], or a combination such as boilerpipe+justext",
    )
    parser.set_defaults(handler=run)


def read_source(
    source: str, timeout: float | None = None, settings: Any = None
) -> tuple[bytes, str | None, str | None]:
    """The page bytes, its URL (if known) and its declared charset (if fetched over HTTP, with
    `settings`, the profile's). Raises OSError for a file, FetchFailed for a URL."""
    if source == "-":
        return sys.stdin.buffer.read(STDIN_MAX_BYTES), None, None
    if source.startswith(("http://", "https://")):
        from crawler.cli.fetchpage import fetch_page

        page = fetch_page(source, timeout, settings)
        return page.body, page.url, page.charset
    return Path(source).read_bytes(), None, None


def run(args: argparse.Namespace) -> int:
    from crawler.cli.fetchpage import FetchFailed
    from extractors import UnknownExtractorError, extract_verbose

    try:
        page, fetched_url, charset = read_source(args.source, args.timeout, args.settings)
    except OSError as error:
        print(f"cannot read {args.source}: {error}", file=sys.stderr)
        return EXIT_UNREADABLE
    except FetchFailed as failed:
        print(f"{'refused' if failed.refused else 'fetch failed'}: {failed}", file=sys.stderr)
        return EXIT_REFUSED if failed.refused else EXIT_UNREADABLE
    url = args.url or fetched_url
    try:
        result = extract_verbose(page, url, encoding=charset, extractor=args.extractor)
    except UnknownExtractorError as error:
        print(error, file=sys.stderr)
        return EXIT_UNREADABLE
    if result.article is None:
        print(f"NULL: no article on this page ({result.reason})", file=sys.stderr)
        return EXIT_NULL
    article = result.article
    output = "json" if args.json else args.format or "text"
    if output == "json":
        print(json.dumps(article_as_dict(article), ensure_ascii=False, indent=2))
        return 0
    if output == "markdown":
        from extractors.markdown import to_markdown

        print(to_markdown(article.blocks, article.title), end="")
        return 0
    print(f"# {article.title or '(no title)'}")
    details = {
        "method": article.method,
        "authors": ", ".join(article.authors) or None,
        "published": article.published.isoformat() if article.published else None,
        "modified": article.modified.isoformat() if article.modified else None,
        "section": article.section,
        "keywords": ", ".join(article.keywords) or None,
        "paywalled": {True: "yes", False: "no"}.get(article.paywalled),
        "language": article.language,
        "canonical": article.canonical_url,
        "words": article.word_count,
    }
    for key, value in details.items():
        if value:
            print(f"{key}: {value}")
    print()
    for kind, text in article.blocks:
        prefix = {"heading": "## ", "list_item": "- ", "quote": "> ", "caption": "[caption] "}
        print(prefix.get(kind, "") + text + "\n")
    return 0


def article_as_dict(article: Any) -> dict[str, Any]:
    return {
        "title": article.title,
        "authors": article.authors,
        "published": article.published.isoformat() if article.published else None,
        "language": article.language,
        "canonical_url": article.canonical_url,
        "description": article.description,
        "image": article.image,
        "modified": article.modified.isoformat() if article.modified else None,
        "section": article.section,
        "keywords": article.keywords,
        "paywalled": article.paywalled,
        "images": [image.as_dict() for image in article.images],
        "word_count": article.word_count,
        "method": article.method,
        "text": article.text,
        "blocks": [{"kind": kind, "text": text} for kind, text in article.blocks],
    }
