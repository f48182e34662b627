"""`newsharvest bench extraction`: article extraction quality and speed on every benchmark set,
with peers measured in the same run.

A set is a folder laid out like the article-extraction benchmark: `html/<id>.html.gz` (the page)
and `ground-truth.json` (id -> {"url", "articleBody"}). With `--dataset` one set is measured;
without it, every such folder under `shared/datasets/` (found from the checkout or the working
directory upwards) is, one table per set, then one summary line per set and extractor.

Quality is the benchmark's own shingle metric (`extractors.evaluation`). Speed is the time of the
extraction call alone, from the page bytes to the body text (parsing included), for every
extractor on the same input; reading and decompressing the dataset is not timed. It is the CPU
time of the calling thread (no extractor measured uses threads): on a machine shared with other
jobs, elapsed time adds the waits for a core, a preemption costs a 3 ms call as much as a 30 ms
one, and the ratio between a fast extractor and a slow one moved from 0.16 to 0.22 between runs
of the same code. The ratio of elapsed times is printed beside it. The extractors take turns
every few pages, so that a machine whose load drifts during the run weighs on all of them alike.
`empty` counts the NULL pages whose truth has a body: the NULL rate on true articles is
empty / pages.

Each set also gets a line counting, per extractor, the pages in each failure class: empty output
on a true article, recall 0.5-0.9 (the right article, part of it missing), and F1 < 0.5 with
output (mostly the wrong text); a page is in at most one, the first that applies.

The pages are split into two fixed halves by the SHA-1 of their ids (A: even first byte, B: odd),
so that rules tuned while looking at one half's failures can be confirmed on the other.

`--non-articles DIR` also runs every extractor on the pages of DIR (`*.html`, `*.html.gz`), pages
that carry no article (index, video, gallery, paywall, search, login pages...), and prints the
share each extractor returns as NULL (the target is >= 95%). `--hard-articles DIR` runs them on
real articles that look like non-articles (`NAME.html` beside its expected body `NAME.txt`: a
three-paragraph brief, an article with a big gallery or a table, a listicle, an interview...)
and prints the share each returns as an article (the target is 100%) and its F1 there.

`--extractor all` (or a list of names) compares our extractors side by side instead: each page is
parsed once and every extractor runs on that parse; one table scores each by the shingle metric
and by the papers' own (word level, character level, CleanEval text-only), with the median time
per page (its parse included).
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
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crawler.cli.table import render_table

if TYPE_CHECKING:
    from extractors.evaluation import PageScore

# The folder that holds the benchmark sets, searched relative to the checkout and to the working
# directory and their parents.
DATASETS_RELATIVE = Path("shared") / "datasets"
TRUTH_FILE = "ground-truth.json"
OURS = "newsharvest"
# The peers, as one command in the checkout (editable, as `make install` left this package):
# the pip a venv starts with (23.x) cannot resolve them (lxml is asked for with the same extra
# by two peers: "Candidate is not for this requirement").
PEER_INSTALL_HINT = ".venv/bin/pip install -U pip && .venv/bin/pip install -e './bench[peers]'"
WARMUP_PAGES = 5  # run once, untimed, before timing: imports and caches are not page cost
TURN_PAGES = 10  # the extractors take turns, each on this many pages in a row
HALVES = ("A", "B")
# The failure classes counted per set and extractor (issue #31): a page is in at most one.
EMPTY_CLASS = "empty on a true article"  # NULL where the truth has a body
PARTIAL_CLASS = "recall 0.5-0.9"  # the right article, part of it missing
WRONG_CLASS = "F1 < 0.5 with output"  # a body, mostly not the article's
FAILURE_CLASSES = (EMPTY_CLASS, PARTIAL_CLASS, WRONG_CLASS)
PARTIAL_RECALL = (0.5, 0.9)  # [low, high)
WRONG_F1 = 0.5

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
    millis: dict[str, float] = field(default_factory=dict)  # CPU time of the call
    wall_millis: dict[str, float] = field(default_factory=dict)  # elapsed time of the call
    errors: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class SetSummary:
    """One extractor on one set: the figures of the summary line."""

    dataset: str
    extractor: str
    pages: int
    f1: float
    precision: float
    recall: float
    empty: int  # NULL pages whose truth has a body
    articles: int  # pages whose truth has a body
    median_ms: float
    failures: Counter[str] = field(default_factory=Counter)  # pages per failure class

    def line(self) -> str:
        rate = self.empty / self.articles if self.articles else 0.0
        return (
            f"{self.dataset}: {self.extractor} F1 {self.f1:.4f} P {self.precision:.4f} "
            f"R {self.recall:.4f} empty {self.empty} (NULL on true articles "
            f"{self.empty}/{self.articles} = {rate:.1%}) median {self.median_ms:.2f} ms"
        )


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "extraction", help="article extraction quality (shingle F1) and speed, with peers"
    )
    parser.add_argument(
        "--dataset",
        type=Path,
        help="one set's directory (html/ and ground-truth.json); default: every set under "
        "shared/datasets",
    )
    parser.add_argument(
        "--compare", default="", help="comma-separated peers: " + ", ".join(sorted(PEERS))
    )
    parser.add_argument("--half", choices=HALVES, help="score and list only this half's pages")
    parser.add_argument("--worst", type=int, default=0, help="list our N worst pages")
    parser.add_argument(
        "--output",
        type=Path,
        help="write per-page texts and scores as JSON (with several sets: one file per set, "
        "named NAME.SET.json)",
    )
    parser.add_argument(
        "--non-articles",
        type=Path,
        help="a directory of pages without an article: print each extractor's NULL rate on them",
    )
    parser.add_argument(
        "--hard-articles",
        type=Path,
        help="a directory of articles that look like non-articles (NAME.html and its expected "
        "body NAME.txt): print each extractor's article rate and F1 on them",
    )
    parser.add_argument(
        "--extractor",
        default="",
        help="compare extractors on one parse per page, by every metric: 'all' (every extractor "
        "and variant) or comma-separated names such as boilerpipe-tree:3,cetr,boilerpipe+justext",
    )
    parser.set_defaults(handler=run)


def datasets_folder() -> Path | None:
    """`shared/datasets` above the checkout or the working directory, if any."""
    checkout = Path(__file__).resolve().parents[2]
    for base in (checkout, Path.cwd()):
        for directory in (base, *base.parents):
            if (directory / DATASETS_RELATIVE).is_dir():
                return directory / DATASETS_RELATIVE
    return None


def dataset_roots(dataset: Path | None) -> list[Path]:
    """The sets to measure: the one given, or every set under shared/datasets, by name."""
    if dataset is not None:
        return [dataset] if (dataset / TRUTH_FILE).is_file() else []
    folder = datasets_folder()
    if folder is None:
        return []
    return sorted(child for child in folder.iterdir() if (child / TRUTH_FILE).is_file())


def load_dataset(root: Path) -> list[BenchPage]:
    truth = json.loads((root / TRUTH_FILE).read_text(encoding="utf-8"))
    pages = []
    for page_id, entry in sorted(truth.items()):
        with gzip.open(root / "html" / f"{page_id}.html.gz", "rb") as handle:
            data = handle.read()
        pages.append(
            BenchPage(page_id, entry.get("url") or "", entry.get("articleBody") or "", data)
        )
    return pages


def load_hard_articles(folder: Path) -> list[BenchPage]:
    """Articles that look like non-articles: every NAME.html of `folder` with its NAME.txt."""
    return [
        BenchPage(path.name, "", path.with_suffix(".txt").read_text(encoding="utf-8"),
                  path.read_bytes())
        for path in sorted(folder.glob("*.html"))
        if path.with_suffix(".txt").is_file()
    ]  # fmt: skip


def load_non_articles(folder: Path) -> list[BenchPage]:
    """Pages without an article: every *.html and *.html.gz file of `folder`, by name."""
    pages = []
    for path in sorted(folder.iterdir()):
        if path.name.endswith(".html.gz"):
            data = gzip.decompress(path.read_bytes())
        elif path.name.endswith(".html"):
            data = path.read_bytes()
        else:
            continue
        pages.append(BenchPage(path.name, "", "", data))
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


def _justext() -> ExtractorFn:
    import justext

    stoplist = justext.get_stoplist("English")

    def run(data: bytes, url: str) -> tuple[str, str | None]:
        paragraphs = justext.justext(data, stoplist)
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate), None

    return run


def _page_text(data: bytes) -> str:
    """The page decoded as the chain decodes it (BOM, <meta> charset, UTF-8 or windows-1252), for
    peers that take text: none of them is handed mojibake."""
    from extractors.document import decode_html

    return decode_html(data)[0]


def _boilerpy3() -> ExtractorFn:
    from boilerpy3 import extractors as boilerpy3

    extractor = boilerpy3.ArticleExtractor(raise_on_failure=False)

    def run(data: bytes, url: str) -> tuple[str, str | None]:
        return extractor.get_content(_page_text(data)) or "", None

    return run


def _resiliparse() -> ExtractorFn:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import detect_encoding
    from resiliparse.parse.html import HTMLTree

    def run(data: bytes, url: str) -> tuple[str, str | None]:
        tree = HTMLTree.parse_from_bytes(data, detect_encoding(data))
        return extract_plain_text(tree, main_content=True) or "", None

    return run


def _newspaper4k() -> ExtractorFn:
    import newspaper

    # Offline: by default newspaper4k fetches the page's images (to find the top image) and
    # follows meta refreshes, over the network.
    config = newspaper.Config()
    config.fetch_images = False
    config.follow_meta_refresh = False
    config.memoize_articles = False

    def run(data: bytes, url: str) -> tuple[str, str | None]:
        article = newspaper.Article(url or "https://example.invalid/", config=config)
        article.download(input_html=_page_text(data))  # the page is given: no download
        article.parse()
        return article.text or "", None

    return run


PEERS: dict[str, tuple[Callable[[], ExtractorFn], str]] = {
    "trafilatura": (_trafilatura, "trafilatura"),
    "readability": (_readability, "readability-lxml"),
    "justext": (_justext, "justext"),  # the original jusText (English stop list)
    "boilerpy3": (_boilerpy3, "boilerpy3"),  # Boilerpipe's ArticleExtractor, ported to Python
    "resiliparse": (_resiliparse, "resiliparse"),  # main-content extraction of the Lexbor parser
    "newspaper4k": (_newspaper4k, "newspaper4k"),
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
    return measure_together({name: extractor}, pages)[name]


def measure_together(
    extractors: dict[str, ExtractorFn], pages: list[BenchPage]
) -> dict[str, RunResult]:
    """Every extractor on every page, taking turns every TURN_PAGES pages: on a machine whose
    load drifts (other jobs come and go over the minutes a set takes), the extractors' times are
    taken within the same few seconds, so the ratios of the medians compare like with like. A
    turn of several pages keeps each extractor's caches as warm as a run of its own would."""
    results = {name: RunResult(name) for name in extractors}
    for page in pages[:WARMUP_PAGES]:
        for extractor in extractors.values():
            _call(extractor, page)
    for start in range(0, len(pages), TURN_PAGES):
        for name, extractor in extractors.items():
            result = results[name]
            for page in pages[start : start + TURN_PAGES]:
                started, started_cpu = time.perf_counter(), time.thread_time()
                outcome = _call(extractor, page)
                result.millis[page.page_id] = (time.thread_time() - started_cpu) * 1000
                result.wall_millis[page.page_id] = (time.perf_counter() - started) * 1000
                if isinstance(outcome, Exception):
                    result.errors[page.page_id] = f"{type(outcome).__name__}: {outcome}"
                    result.texts[page.page_id], result.methods[page.page_id] = "", None
                else:
                    result.texts[page.page_id], result.methods[page.page_id] = outcome
    return results


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


def _selected(pages: list[BenchPage], group: str) -> list[BenchPage]:
    return [page for page in pages if group == "all" or page.half == group]


def _is_empty(result: RunResult, page: BenchPage) -> bool:
    """NULL (or nothing) where the truth has a body."""
    return bool(page.gold.strip()) and not result.texts[page.page_id].strip()


def score_rows(result: RunResult, pages: list[BenchPage], groups: Iterable[str]) -> list[list]:
    from extractors.evaluation import aggregate, score_page

    rows = []
    for group in groups:
        selected = _selected(pages, group)
        if not selected:
            rows.append([result.name, group, 0, "-", "-", "-", "-", "-", "-", 0])
            continue
        scores = aggregate(score_page(page.gold, result.texts[page.page_id]) for page in selected)
        millis = [result.millis[page.page_id] for page in selected]
        empty = sum(1 for page in selected if _is_empty(result, page))
        rows.append([
            result.name, group, len(selected), round(scores.f1, 4), round(scores.precision, 4),
            round(scores.recall, 4), round(scores.accuracy, 4),
            round(statistics.median(millis), 2), round(percentile(millis, 0.95), 2), empty,
        ])  # fmt: skip
    return rows


def failure_class(page: BenchPage, text: str, score: PageScore) -> str | None:
    """The page's failure class, or None: empty output where the truth has a body; a body with
    F1 < WRONG_F1 (mostly not the article's); the article with its recall in PARTIAL_RECALL."""
    if not text.strip():
        return EMPTY_CLASS if page.gold.strip() else None
    if score.f1 < WRONG_F1:
        return WRONG_CLASS
    low, high = PARTIAL_RECALL
    if score.recall is not None and low <= score.recall < high:
        return PARTIAL_CLASS
    return None


def failures_line(dataset: str, summaries: list[SetSummary]) -> str:
    """One line per set: the pages in each failure class, per extractor."""
    parts = [
        f"{summary.extractor} "
        + ", ".join(f"{name} {summary.failures[name]}" for name in FAILURE_CLASSES)
        for summary in summaries
    ]
    return f"{dataset}: failure classes (pages): " + "; ".join(parts)


def summarise(dataset: str, result: RunResult, pages: list[BenchPage]) -> SetSummary:
    from extractors.evaluation import aggregate, score_page

    page_scores = [score_page(page.gold, result.texts[page.page_id]) for page in pages]
    scores = aggregate(page_scores)
    classes = (
        failure_class(page, result.texts[page.page_id], score)
        for page, score in zip(pages, page_scores, strict=True)
    )
    return SetSummary(
        dataset=dataset,
        extractor=result.name,
        pages=len(pages),
        f1=scores.f1,
        precision=scores.precision,
        recall=scores.recall,
        empty=sum(1 for page in pages if _is_empty(result, page)),
        articles=sum(1 for page in pages if page.gold.strip()),
        median_ms=statistics.median(result.millis[page.page_id] for page in pages),
        failures=Counter(name for name in classes if name is not None),
    )


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
    roots = dataset_roots(args.dataset)
    if not roots:
        print(
            "dataset not found: pass --dataset PATH (a directory with ground-truth.json and "
            "html/), or run from a checkout with shared/datasets/ above it",
            file=sys.stderr,
        )
        return 2
    if args.extractor:
        names = comparison_names(args.extractor)
        peers = {k: v for k, v in load_extractors(args.compare).items() if k != OURS}
        for root in roots:
            run_comparison(names, peers, load_dataset(root), root, args)
        return 0
    extractors = load_extractors(args.compare)
    summaries: list[SetSummary] = []
    for root in roots:
        output = _output_path(args.output, root, several=len(roots) > 1)
        summaries += run_dataset(root, extractors, args, output)
    if args.non_articles:
        run_non_articles(args.non_articles, extractors)
    if args.hard_articles:
        run_hard_articles(args.hard_articles, extractors)
    print("\nsummary, one line per set and extractor:")
    for summary in summaries:
        print(summary.line())
    for dataset in dict.fromkeys(summary.dataset for summary in summaries):
        print(failures_line(dataset, [s for s in summaries if s.dataset == dataset]))
    return 0


def _output_path(output: Path | None, root: Path, several: bool) -> Path | None:
    if output is None or not several:
        return output
    return output.with_name(f"{output.stem}.{root.name}{output.suffix or '.json'}")


def run_dataset(
    root: Path, extractors: dict[str, ExtractorFn], args: argparse.Namespace, output: Path | None
) -> list[SetSummary]:
    """One set: its table, speed ratios, methods and worst pages; returns its summary lines."""
    pages = load_dataset(root)
    halves = Counter(page.half for page in pages)
    print(f"== {root.name}: {len(pages)} pages in {root}")
    print(f"halves by sha1(id): A {halves['A']} pages, B {halves['B']} pages\n")
    results = measure_together(extractors, pages)
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
    if output:
        _write_output(output, results, scored_pages)
        print(f"\nper-page results -> {output}")
    summaries = [summarise(root.name, result, scored_pages) for result in results.values()]
    print(failures_line(root.name, summaries))
    print()
    return summaries


def run_non_articles(folder: Path, extractors: dict[str, ExtractorFn]) -> None:
    """Each extractor's NULL rate on pages that carry no article."""
    pages = load_non_articles(folder)
    print(f"== non-articles: {len(pages)} pages in {folder}")
    if not pages:
        return
    for name, extractor in extractors.items():
        result = measure(name, extractor, pages)
        kept = [page.page_id for page in pages if result.texts[page.page_id].strip()]
        rate = 1 - len(kept) / len(pages)
        print(f"{name}: NULL on {len(pages) - len(kept)}/{len(pages)} non-articles = {rate:.1%}")
        if name == OURS and kept:
            print(f"  {OURS} returned an article on: " + ", ".join(kept))
    print()


def run_hard_articles(folder: Path, extractors: dict[str, ExtractorFn]) -> None:
    """Each extractor's article rate and F1 on articles that look like non-articles."""
    from extractors.evaluation import aggregate, score_page

    pages = load_hard_articles(folder)
    print(f"== hard articles: {len(pages)} pages in {folder}")
    if not pages:
        return
    for name, extractor in extractors.items():
        result = measure(name, extractor, pages)
        nulls = [page.page_id for page in pages if _is_empty(result, page)]
        scores = aggregate(score_page(page.gold, result.texts[page.page_id]) for page in pages)
        print(
            f"{name}: article on {len(pages) - len(nulls)}/{len(pages)} hard articles = "
            f"{1 - len(nulls) / len(pages):.1%}, F1 {scores.f1:.4f} P {scores.precision:.4f} "
            f"R {scores.recall:.4f}"
        )
        if name == OURS and nulls:
            print(f"  {OURS} returned NULL on: " + ", ".join(nulls))
    print()


def _print_speed_ratios(results: dict[str, RunResult]) -> None:
    ours = results[OURS]
    for name, result in results.items():
        if name != OURS:
            cpu = _median_ratio(ours.millis, result.millis)
            wall = _median_ratio(ours.wall_millis, result.wall_millis)
            print(f"median time {OURS} / {name}: {cpu:.3f} (elapsed: {wall:.3f})")


def _median_ratio(ours: dict[str, float], theirs: dict[str, float]) -> float:
    return statistics.median(ours.values()) / statistics.median(theirs.values())


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


# --- `--extractor`: our extractors side by side, by every metric ---

COMPARISON_HEADERS = [
    "extractor", "F1", "P", "R", "word F1", "word P", "word R", "char F1", "char P", "char R",
    "CleanEval F1", "CE P", "CE R", "NULL", "median ms",
]  # fmt: skip
# A combination replaces the default chain when it beats its F1 at no more than this many times
# its median time per page (the rule).
MAX_TIME_RATIO = 2.0


def comparison_names(value: str) -> list[str]:
    """The extractors to compare: 'all' is every extractor and variant; otherwise the names."""
    from extractors.registry import VARIANTS, UnknownExtractorError, validate

    if value.strip() == "all":
        return list(VARIANTS)
    names = [name.strip() for name in value.split(",") if name.strip()]
    try:
        return [validate(name) for name in dict.fromkeys(names)]
    except UnknownExtractorError as error:
        raise SystemExit(str(error)) from error


def measure_shared(names: list[str], pages: list[BenchPage]) -> dict[str, RunResult]:
    """Every extractor on one parse of each page. A page's time for an extractor is the parse
    plus the extractor's own time (CPU time, as in `measure_together`). The order of the
    extractors rotates from page to page, so that none always meets a cold tree."""
    from extractors.document import DocumentError, parse_document
    from extractors.registry import extract_document

    results = {name: RunResult(name) for name in names}
    warmup = pages[:WARMUP_PAGES]
    for number, page in enumerate([*warmup, *pages]):
        timed = number >= len(warmup)
        started = time.thread_time()
        try:
            document = parse_document(page.html, page.url)
        except DocumentError:
            document = None
        parse_millis = (time.thread_time() - started) * 1000
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.thread_time()
            article = extract_document(document, name).article if document else None
            millis = parse_millis + (time.thread_time() - started) * 1000
            if timed:
                result = results[name]
                result.millis[page.page_id] = millis
                result.texts[page.page_id] = article.text if article else ""
                result.methods[page.page_id] = article.method if article else None
    return results


def comparison_row(result: RunResult, pages: list[BenchPage]) -> tuple[list, dict[str, Any]]:
    """The table row of one extractor, and its aggregated scores by metric."""
    from extractors.evaluation import METRICS, aggregate, score_metrics

    per_page = [score_metrics(page.gold, result.texts[page.page_id]) for page in pages]
    scores = {metric: aggregate(page[metric] for page in per_page) for metric in METRICS}
    row: list = [result.name]
    for metric in METRICS:
        row += [round(scores[metric].f1, 4), round(scores[metric].precision, 4)]
        row.append(round(scores[metric].recall, 4))
    nulls = sum(1 for page in pages if not result.texts[page.page_id].strip())
    median = statistics.median(result.millis[page.page_id] for page in pages)
    return [*row, nulls, round(median, 2)], {**scores, "median": median}


def run_comparison(
    names: list[str],
    peers: dict[str, ExtractorFn],
    pages: list[BenchPage],
    root: Path,
    args: argparse.Namespace,
) -> int:
    from extractors.registry import COMBINE, DEFAULT

    scored = [page for page in pages if not args.half or page.half == args.half]
    print(
        f"== {root.name}: {len(scored)} pages in {root}"
        + (f" (half {args.half})" if args.half else "")
    )
    print("one parse per page shared by every extractor; times include the parse\n")
    results = measure_shared(names, pages)
    results.update({name: measure(name, peer, pages) for name, peer in peers.items()})
    rows, summaries = [], {}
    for name, result in results.items():
        row, summaries[name] = comparison_row(result, scored)
        rows.append(row)
    print(render_table(COMPARISON_HEADERS, rows))
    print(
        "\nF1/P/R: the benchmark's shingle metric; word: Weninger et al., CETR, WWW 2010 "
        "(Equation 5); char: Viveros-Jiménez et al., Computación y Sistemas 2018; "
        "CleanEval (CE): the text-only score Lejeune & Zhu use (Computación y Sistemas 2018). "
        "NULL: pages with no article."
    )
    _print_findings(summaries, DEFAULT, COMBINE)
    if args.output:
        _write_output(args.output, results, scored)
        print(f"\nper-page results -> {args.output}")
    return 0


def _print_findings(summaries: dict[str, dict[str, Any]], default: str, combine: str) -> None:
    from extractors.evaluation import SHINGLES

    if "boilerpipe" in summaries and "boilerpipe-tree:2" in summaries:
        plain = summaries["boilerpipe"][SHINGLES].precision
        tree = summaries["boilerpipe-tree:2"][SHINGLES].precision
        verdict = "higher" if tree > plain else "NOT higher"
        print(
            f"HTML-tree filter (Viveros-Jiménez et al.): depth 2 has {verdict} precision than "
            f"plain Boilerpipe ({tree:.4f} vs {plain:.4f})"
        )
    if default not in summaries:
        return
    chain = summaries[default]
    combinations = {name: s for name, s in summaries.items() if combine in name}
    if not combinations:
        return

    def describe(name: str) -> str:
        summary = summaries[name]
        ratio = summary["median"] / chain["median"] if chain["median"] else float("inf")
        return f"{name} (F1 {summary[SHINGLES].f1:.4f} at {ratio:.2f}x its time)"

    winners = [
        name
        for name, summary in combinations.items()
        if summary[SHINGLES].f1 > chain[SHINGLES].f1
        and summary["median"] <= MAX_TIME_RATIO * chain["median"]
    ]
    baseline = f"the default chain (F1 {chain[SHINGLES].f1:.4f})"
    if winners:
        print(f"combinations that beat {baseline}: " + ", ".join(map(describe, winners)))
        return
    best = max(combinations, key=lambda name: combinations[name][SHINGLES].f1)
    print(
        f"no combination beats {baseline} at <= {MAX_TIME_RATIO:g}x its time; "
        f"best: {describe(best)}"
    )
