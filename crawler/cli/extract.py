"""`newsharvest extract FILE_OR_URL`: run the extraction chain on one page and print the article."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FETCH_TIMEOUT_SECONDS = 20
FETCH_MAX_BYTES = 16 * 1024 * 1024
USER_AGENT = "newsharvest/0.1 (extract command)"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("extract", help="extract the article from a file or URL")
    parser.add_argument("source", help="an HTML file, '-' for stdin, or an http(s) URL")
    parser.add_argument("--url", help="the page's URL, when SOURCE is a file (resolves links)")
    parser.add_argument("--json", action="store_true", help="print the article as JSON")
    parser.add_argument(
        "--extractor",
        default="default",
        help="the extractor: default (the production chain), boilerpipe, boilerpipe-tree, "
        "justext, cetr, cetr-km, cetr-tm[:LAMBDA], or a combination such as boilerpipe+justext",
    )
    parser.set_defaults(handler=run)


def read_source(source: str) -> tuple[bytes, str | None, str | None]:
    """The page bytes, its URL (if known) and its declared charset (if fetched over HTTP)."""
    if source == "-":
        return sys.stdin.buffer.read(FETCH_MAX_BYTES), None, None
    if source.startswith(("http://", "https://")):
        from urllib.request import Request, urlopen

        request = Request(source, headers={"User-Agent": USER_AGENT})
        with urlopen(request, timeout=FETCH_TIMEOUT_SECONDS) as response:
            charset = response.headers.get_content_charset()
            return response.read(FETCH_MAX_BYTES), response.geturl(), charset
    return Path(source).read_bytes(), None, None


def run(args: argparse.Namespace) -> int:
    from extractors import UnknownExtractorError, extract_verbose

    try:
        page, fetched_url, charset = read_source(args.source)
    except OSError as error:
        print(f"cannot read {args.source}: {error}", file=sys.stderr)
        return 2
    url = args.url or fetched_url
    try:
        result = extract_verbose(page, url, encoding=charset, extractor=args.extractor)
    except UnknownExtractorError as error:
        print(error, file=sys.stderr)
        return 2
    if result.article is None:
        print(f"NULL: no article on this page ({result.reason})", file=sys.stderr)
        return 1
    article = result.article
    if args.json:
        print(json.dumps(article_as_dict(article), ensure_ascii=False, indent=2))
        return 0
    print(f"# {article.title or '(no title)'}")
    details = {
        "method": article.method,
        "authors": ", ".join(article.authors) or None,
        "published": article.published.isoformat() if article.published else None,
        "language": article.language,
        "canonical": article.canonical_url,
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
        "method": article.method,
        "text": article.text,
        "blocks": [{"kind": kind, "text": text} for kind, text in article.blocks],
    }
