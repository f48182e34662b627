"""`newsharvest bench extraction`: article extraction quality and speed on the 181-page
article-extraction benchmark, with peers measured in the same run.

Quality is the benchmark's own shingle metric (`extractors.evaluation`). Speed is the time of the
extraction call alone, from the page bytes to the body text (parsing included), for every
extractor on the same input; reading and decompressing the dataset is not timed.

The pages are split into two fixed halves by the SHA-1 of their ids (A: even first byte, B: odd),
so that rules tuned while looking at one half's failures can be confirmed on the other.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from crawler.cli.table import render_table

DATASET_NAME = "article-extraction-benchmark"
# Searched, relative to the checkout and to the working directory and their parents.
DATASET_RELATIVE = Path("shared") / "datasets" / DATASET_NAME
OURS = "newsharvest"
PEER_INSTALL_HINT = ".venv/bin/pip install -U pip && .venv/bin/pip install -e '.[bench]'"
WARMUP_PAGES = 5  # run once, untimed, before timing: imports and caches are not page cost
HALVES = ("A", "B")

# (page bytes, url) -> (body text or "" for NULL, method name or None)
ExtractorFn = Callable[[bytes, str], tuple[str, str | None]]


@dataclass(slots=True)
class BenchPage:
    page_id: str
    url: str
    gold: str
    html: bytes

    @property
    def half(self) -> str:
        return HALVES[hashlib.sha1(self.page_id.encode()).digest()[0] % 2]


@dataclass(slots=True)
class RunResult:
    name: str
    texts: dict[str, str] = field(default_factory=dict)
    methods: dict[str, str | None] = field(default_factory=dict)
    millis: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "extraction", help="article extraction quality (shingle F1) and speed, with peers"
    )
    parser.add_argument("--dataset", type=Path, help=f"the {DATASET_NAME} directory")
    parser.add_argument(
        "--compare", default="", help="comma-separated peers: " + ", ".join(sorted(PEERS))
    )
    parser.add_argument("--half", choices=HALVES, help="score and list only this half's pages")
    parser.add_argument("--worst", type=int, default=0, help="list our N worst pages")
    parser.add_argument("--output", type=Path, help="write per-page texts and scores as JSON")
    parser.set_defaults(handler=run)


def default_dataset() -> Path | None:
    checkout = Path(__file__).resolve().parents[2]
    for base in (checkout, Path.cwd()):
        for directory in (base, *base.parents):
            if (directory / DATASET_RELATIVE / "ground-truth.json").is_file():
                return directory / DATASET_RELATIVE
    return None


def load_dataset(root: Path) -> list[BenchPage]:
    truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for page_id, entry in sorted(truth.items()):
        with gzip.open(root / "html" / f"{page_id}.html.gz", "rb") as handle:
            data = handle.read()
        pages.append(
            BenchPage(page_id, entry.get("url") or "", entry.get("articleBody") or "", data)
        )
    return pages


# --- the extractors measured ---


def _ours() -> ExtractorFn:
    from extractors import extract

    def run(data: bytes, url: str) -> tuple[str, str | None]:
        article = extract(data, url)
        return (article.text, article.method) if article else ("", None)

    return run


def _trafilatura() -> ExtractorFn:
    import trafilatura

    def run(data: bytes, url: str) -> tuple[str, str | None]:
        return trafilatura.extract(data, url=url) or "", None

    return run


def _readability() -> ExtractorFn:
    from lxml import html
    from readability import Document

    from extractors.blocks import iter_blocks

    def run(data: bytes, url: str) -> tuple[str, str | None]:
        summary = Document(data, url=url).summary(html_partial=True)
        if not summary.strip():
            return "", None
        return "\n".join(text for _, text in iter_blocks(html.fromstring(summary))), None

    return run


PEERS: dict[str, tuple[Callable[[], ExtractorFn], str]] = {
    "trafilatura": (_trafilatura, "trafilatura"),
    "readability": (_readability, "readability"),
}


def load_extractors(compare: str) -> dict[str, ExtractorFn]:
    """Our chain plus the requested peers; raises SystemExit with install advice if missing."""
    extractors = {OURS: _ours()}
    for name in (peer.strip() for peer in compare.split(",") if peer.strip()):
        if name not in PEERS:
            raise SystemExit(f"unknown peer {name!r}; known: {', '.join(sorted(PEERS))}")
        factory, module = PEERS[name]
        try:
            extractors[name] = factory()
        except ImportError as error:
            raise SystemExit(
                f"peer {name!r} needs the {module} package ({error}); install with:\n"
                f"  {PEER_INSTALL_HINT}"
            ) from error
    return extractors


def measure(name: str, extractor: ExtractorFn, pages: list[BenchPage]) -> RunResult:
    result = RunResult(name)
    for page in pages[:WARMUP_PAGES]:
        _call(extractor, page)
    for page in pages:
        started = time.perf_counter()
        outcome = _call(extractor, page)
        result.millis[page.page_id] = (time.perf_counter() - started) * 1000
        if isinstance(outcome, Exception):
            result.errors[page.page_id] = f"{type(outcome).__name__}: {outcome}"
            result.texts[page.page_id], result.methods[page.page_id] = "", None
        else:
            result.texts[page.page_id], result.methods[page.page_id] = outcome
    return result


def _call(extractor: ExtractorFn, page: BenchPage) -> tuple[str, str | None] | Exception:
    try:
        return extractor(page.html, page.url)
    except Exception as error:  # a peer's crash is a failed page, not a failed benchmark
        return error


# --- reporting ---


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def score_rows(result: RunResult, pages: list[BenchPage], groups: Iterable[str]) -> list[list]:
    from extractors.evaluation import aggregate, score_page

    rows = []
    for group in groups:
        selected = [page for page in pages if group == "all" or page.half == group]
        if not selected:
            rows.append([result.name, group, 0, "-", "-", "-", "-", "-", "-", 0])
            continue
        scores = aggregate(score_page(page.gold, result.texts[page.page_id]) for page in selected)
        millis = [result.millis[page.page_id] for page in selected]
        empty = sum(1 for page in selected if not result.texts[page.page_id].strip())
        rows.append([
            result.name, group, len(selected), round(scores.f1, 4), round(scores.precision, 4),
            round(scores.recall, 4), round(scores.accuracy, 4),
            round(statistics.median(millis), 2), round(percentile(millis, 0.95), 2), empty,
        ])  # fmt: skip
    return rows


def worst_pages(result: RunResult, pages: list[BenchPage], count: int) -> str:
    from extractors.evaluation import score_page

    scored = [(score_page(page.gold, result.texts[page.page_id]), page) for page in pages]
    scored.sort(key=lambda pair: pair[0].f1)
    rows = [
        [
            page.page_id[:12], page.half, urlsplit(page.url).hostname or "",
            round(score.f1, 3), round(score.precision or 0.0, 3), round(score.recall or 0.0, 3),
            result.methods[page.page_id] or "NULL",
        ]
        for score, page in scored[:count]
    ]  # fmt: skip
    headers = ["page", "half", "host", "F1", "precision", "recall", "method"]
    return render_table(headers, rows)


def run(args: argparse.Namespace) -> int:
    root = args.dataset or default_dataset()
    if root is None or not (root / "ground-truth.json").is_file():
        print(
            f"dataset not found: pass --dataset PATH (the {DATASET_NAME} directory with "
            "ground-truth.json and html/)",
            file=sys.stderr,
        )
        return 2
    extractors = load_extractors(args.compare)
    pages = load_dataset(root)
    halves = Counter(page.half for page in pages)
    print(f"{DATASET_NAME}: {len(pages)} pages in {root}")
    print(f"halves by sha1(id): A {halves['A']} pages, B {halves['B']} pages\n")

    results = {name: measure(name, extractor, pages) for name, extractor in extractors.items()}
    groups = [args.half] if args.half else ["all", *HALVES]
    scored_pages = [page for page in pages if not args.half or page.half == args.half]
    headers = ["extractor", "pages", "n", "F1", "precision", "recall", "accuracy",
               "median ms", "p95 ms", "empty"]  # fmt: skip
    rows = [row for result in results.values() for row in score_rows(result, pages, groups)]
    print(render_table(headers, rows))
    print()
    _print_speed_ratios(results)
    ours = results[OURS]
    methods = Counter(ours.methods[page.page_id] or "NULL" for page in scored_pages)
    print(f"{OURS} methods: " + ", ".join(f"{m} {n}" for m, n in methods.most_common()))
    for name, result in results.items():
        if result.errors:
            example = next(iter(result.errors.values()))
            print(f"{name}: {len(result.errors)} pages raised, e.g. {example}")
    if args.worst:
        print(f"\n{OURS}: {args.worst} worst pages by page F1")
        print(worst_pages(ours, scored_pages, args.worst))
    if args.output:
        _write_output(args.output, results, scored_pages)
        print(f"\nper-page results -> {args.output}")
    return 0


def _print_speed_ratios(results: dict[str, RunResult]) -> None:
    ours = statistics.median(results[OURS].millis.values())
    for name, result in results.items():
        if name != OURS:
            ratio = ours / statistics.median(result.millis.values())
            print(f"median time {OURS} / {name}: {ratio:.3f}")


def _write_output(path: Path, results: dict[str, RunResult], pages: list[BenchPage]) -> None:
    from extractors.evaluation import score_page

    report = {}
    for name, result in results.items():
        report[name] = {}
        for page in pages:
            score = score_page(page.gold, result.texts[page.page_id])
            report[name][page.page_id] = {
                "url": page.url, "half": page.half, "method": result.methods[page.page_id],
                "f1": score.f1, "precision": score.precision, "recall": score.recall,
                "ms": result.millis[page.page_id], "text": result.texts[page.page_id],
            }  # fmt: skip
    path.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
