"""`newsharvest bench metadata`: article metadata against labelled truth, with peers side by side.

Fields: title (exact, whitespace and case folded), authors (the set of names, exact), published
and modified (the day, in the page's own time zone), section (exact, case folded), keywords (F1
of the sets) and paywalled (true/false). Each field is scored only on pages whose truth labels
it (a null label means "the page has none": a value found there is wrong).

Truth comes from:
- the labelled fixtures (tests/fixtures/metadata: NAME.html with NAME.json, every field);
- L3S-GN1 (Kohlschütter et al., WSDM 2010): the assessors' headline is the title; the day in
  the page's URL, where it has one, is the publication day;
- the Article Extraction Benchmark (Scrapinghub, 2020): the day in the URL, where it has one.
A URL day is what the publisher printed in its own link: a fair label of the publication day
(an extractor that reads the URL gets it right by design; the others must find it on the page).

The peers, trafilatura and newspaper4k, run on the same pages in the same run (the `peers`
extra of the bench distribution); a peer that is not installed is skipped with one line.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import re
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from statistics import median
from typing import Any

from crawler.cli.table import render_table

FIELDS = ("title", "authors", "published", "modified", "section", "keywords", "paywalled")
FIXTURES_RELATIVE = Path("tests/fixtures/metadata")
DATASETS_RELATIVE = Path("shared/datasets")
URL_DATED_SETS = ("l3s-gn1", "article-extraction-benchmark")
PLACEHOLDER_URL = "http://example.test/article"  # what a peer is given for a page without URL
# A day in a URL: /2024/03/05/, /2024-03-05, /20240305 (the label of URL-dated sets).
_URL_DAY = re.compile(
    r"(?<![0-9])((?:19|20)[0-9]{2})[/_-]?(0[1-9]|1[0-2])[/_-]?(0[1-9]|[12][0-9]|3[01])(?![0-9])"
)
NOT_OFFERED = "-"  # a peer that does not give a field


@dataclass
class Page:
    name: str
    url: str
    html: bytes
    truth: dict[str, Any]


# What an extractor says about a page: each field, or absent when it does not give that field.
Found = dict[str, Any]
MetadataFn = Callable[[bytes, str], Found]


@dataclass
class Scores:
    """Per field: the sum of page scores and the pages scored."""

    total: dict[str, float] = field(default_factory=dict)
    pages: dict[str, int] = field(default_factory=dict)
    millis: list[float] = field(default_factory=list)

    def add(self, name: str, score: float) -> None:
        self.total[name] = self.total.get(name, 0.0) + score
        self.pages[name] = self.pages.get(name, 0) + 1

    def mean(self, name: str) -> float | None:
        return self.total[name] / self.pages[name] if self.pages.get(name) else None


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "metadata", help="metadata accuracy (title, authors, dates, section, ...) with peers"
    )
    parser.add_argument(
        "--dataset",
        action="append",
        type=Path,
        help="a folder of NAME.html + NAME.json truth, or a shared set (html/ and "
        "ground-truth.json); repeatable. Default: the labelled fixtures and the shared sets",
    )
    parser.add_argument(
        "--compare", default="trafilatura,newspaper4k", help="peers: trafilatura, newspaper4k"
    )
    parser.add_argument("--misses", type=int, default=0, help="print our first N misses per set")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    sets = [(path.name, load(path)) for path in args.dataset] if args.dataset else default_sets()
    sets = [(name, pages) for name, pages in sets if pages]
    if not sets:
        print("bench metadata: no labelled pages found (tests/fixtures/metadata, shared/datasets)")
        return 2
    extractors = {"newsharvest": newsharvest_metadata, **load_peers(args.compare)}
    for name, pages in sets:
        results = {label: Scores() for label in extractors}
        misses: list[str] = []
        for page in pages:
            for label, extract in extractors.items():
                started = time.thread_time()
                found = _quietly(extract, page)
                results[label].millis.append((time.thread_time() - started) * 1000)
                for field_name, score in score_page(page.truth, found).items():
                    results[label].add(field_name, score)
                    if label == "newsharvest" and score < 1 and len(misses) < args.misses:
                        misses.append(_miss(page, field_name, found))
        print(f"\n== {name}: {len(pages)} pages")
        print(render_table(*table(results)))
        for line in misses:
            print(line)
    return 0


def table(results: dict[str, Scores]) -> tuple[list[str], list[list[object]]]:
    labels = list(results)
    rows: list[list[object]] = []
    for name in FIELDS:
        scored = [results[label].pages.get(name, 0) for label in labels]
        if not any(scored):
            continue
        row: list[object] = [name, max(scored)]
        for label in labels:
            mean = results[label].mean(name)
            row.append(NOT_OFFERED if mean is None else f"{mean:.3f}")
        rows.append(row)
    rows.append(["median ms", "", *(f"{median(results[label].millis):.2f}" for label in labels)])
    return ["field", "pages", *labels], rows


def score_page(truth: dict[str, Any], found: Found) -> dict[str, float]:
    """Each field the truth labels and the extractor gives: 1 right, 0 wrong (keywords: F1)."""
    scores: dict[str, float] = {}
    for name in FIELDS:
        if name not in truth or name not in found:
            continue
        expected, value = truth[name], found[name]
        if name in ("published", "modified"):
            scores[name] = float(_day(value) == _day(expected))
        elif name == "authors":
            scores[name] = float(_names(value) == _names(expected))
        elif name == "keywords":
            scores[name] = _set_f1(_names(value), _names(expected))
        elif name == "paywalled":
            scores[name] = float(value is expected)
        else:
            scores[name] = float(_folded(value) == _folded(expected))
    return scores


def _day(value: Any) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def _folded(value: Any) -> str | None:
    if not value:
        return None
    return " ".join(str(value).replace("\u2019", "'").split()).casefold()


def _names(values: Any) -> frozenset[str]:
    return frozenset(filter(None, (_folded(value) for value in values or [])))


def _set_f1(found: frozenset[str], expected: frozenset[str]) -> float:
    if not found and not expected:
        return 1.0
    common = len(found & expected)
    if not common:
        return 0.0
    precision, recall = common / len(found), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def _miss(page: Page, name: str, found: Found) -> str:
    return f"  miss {page.name} {name}: found {found.get(name)!r}, truth {page.truth.get(name)!r}"


def _quietly(extract: MetadataFn, page: Page) -> Found:
    """A peer's warnings and prints are not the benchmark's output; its exceptions cost the
    page (every field wrong), never the run."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            return extract(page.html, page.url)
        except Exception:  # a peer's bug on one page
            return {"title": None, "authors": [], "published": None}


# --- The extractors ---------------------------------------------------------------------------


def newsharvest_metadata(html: bytes, url: str) -> Found:
    """Ours: the metadata stage of the extraction chain on one parse of the page."""
    from extractors.document import DocumentError, parse_document
    from extractors.jsonld import jsonld_objects
    from extractors.metadata import extract_metadata

    try:
        document = parse_document(html, url or None)
    except DocumentError:
        return {name: None for name in FIELDS}
    found = extract_metadata(document.tree, url or None, jsonld_objects(document.tree))
    # A field this version of the extractor does not have is "not offered" (an older checkout
    # measured with this bench: `PYTHONPATH=OLD_CHECKOUT newsharvest bench metadata`).
    return {name: getattr(found, name) for name in FIELDS if hasattr(found, name)}


def trafilatura_metadata(html: bytes, url: str) -> Found:
    from trafilatura import extract_metadata

    document = extract_metadata(html.decode("utf-8", "replace"), default_url=url or None)
    if document is None:
        return {"title": None, "authors": [], "published": None, "section": None, "keywords": []}
    return {
        "title": document.title,
        "authors": [name.strip() for name in (document.author or "").split(";") if name.strip()],
        "published": document.date,
        "section": (document.categories or [None])[0],
        "keywords": list(document.tags or []),
    }


def newspaper_metadata(html: bytes, url: str) -> Found:
    from newspaper import Article
    from newspaper.configuration import Configuration

    config = Configuration()
    # Fetching images sizes the top image over the network: a benchmark never leaves loopback.
    config.fetch_images = False
    config.memorize_articles = False
    article = Article(url or PLACEHOLDER_URL, config=config)
    article.download(input_html=html.decode("utf-8", "replace"))
    article.parse()
    keywords = list(article.tags or []) or [word for word in article.meta_keywords or [] if word]
    return {
        "title": article.title or None,
        "authors": list(article.authors or []),
        "published": article.publish_date,
        "keywords": keywords,
    }


PEERS: dict[str, tuple[MetadataFn, str]] = {
    "trafilatura": (trafilatura_metadata, "trafilatura"),
    "newspaper4k": (newspaper_metadata, "newspaper"),
}


def load_peers(compare: str) -> dict[str, MetadataFn]:
    """The peers asked for that are installed; one line for each that is not."""
    import importlib

    loaded = {}
    for name in filter(None, (part.strip() for part in compare.split(","))):
        if name not in PEERS:
            raise SystemExit(f"unknown peer {name!r}; known: {', '.join(sorted(PEERS))}")
        function, module = PEERS[name]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                importlib.import_module(module)
        except ImportError as error:
            print(f"bench metadata: {name} skipped, not installed ({error}); "
                  "pip install 'newsharvest-bench[peers]'")  # fmt: skip
            continue
        loaded[name] = function
    return loaded


# --- The labelled pages -----------------------------------------------------------------------


def default_sets() -> list[tuple[str, list[Page]]]:
    sets = []
    checkout = Path(__file__).resolve().parents[2]
    fixtures = checkout / FIXTURES_RELATIVE
    if fixtures.is_dir():
        sets.append(("labelled fixtures", load(fixtures)))
    for base in (checkout, *checkout.parents):
        if (base / DATASETS_RELATIVE).is_dir():
            for name in URL_DATED_SETS:
                root = base / DATASETS_RELATIVE / name
                if (root / "ground-truth.json").is_file():
                    sets.append((name, load(root)))
            break
    return sets


def load(root: Path) -> list[Page]:
    """A folder of labelled fixtures (NAME.html, NAME.json) or a shared set."""
    if (root / "ground-truth.json").is_file():
        return _shared_set(root)
    pages = []
    for truth_path in sorted(root.glob("*.json")):
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        html = truth_path.with_suffix(".html").read_bytes()
        pages.append(Page(truth_path.stem, truth.get("url") or "", html, truth))
    return pages


def _shared_set(root: Path) -> list[Page]:
    """The shared set's pages with the labels it carries: the headline as title (L3S-GN1), the
    URL's day as the publication day. Pages with neither are left out."""
    gold = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for page_id, entry in sorted(gold.items()):
        url = entry.get("url") or ""
        truth: dict[str, Any] = {}
        headline = " ".join((entry.get("headline") or "").split())
        if headline and "?" not in headline:  # "?" stands for a character the copy lost
            truth["title"] = headline
        if day := url_day(url):
            truth["published"] = day
        if not truth:
            continue
        with gzip.open(root / "html" / f"{page_id}.html.gz", "rb") as handle:
            pages.append(Page(page_id, url, handle.read(), truth))
    return pages


def url_day(url: str) -> str | None:
    match = _URL_DAY.search(url.split("?")[0])
    if match is None:
        return None
    try:
        return date(*(int(part) for part in match.groups())).isoformat()
    except ValueError:
        return None
