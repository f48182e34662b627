"""`newsharvest bench notices`: per-domain notice suppression on the news-site fixture.

Every fixture page goes through the real extraction chain once; the extracted articles then
reach the notice stage in publication order (as a continuous crawl delivers them, the fixture's
clock driving the decay), plus revisits: a share of articles comes back hours later with one
block dropped, half under the same URL (a re-crawl of an update) and half under another one
(an AMP or print URL). Scored against the fixture's ground truth (`Page.notices`, `Page.blocks`):

- notices leaked from each domain's 4th article on (target 0), and in its first 3 articles;
- real paragraphs wrongly removed, over all articles (target <= 0.1%);
- notice-only pages (ground truth NULL) that end NULL (target: all);
- cost of the stage per article: prepare + one store round trip + decision (target <= 1 ms),
  wall clock (mean, p99) and this process's CPU time (steadier on a busy machine).

Then the per-class part (newsharvest_bench/bench_notice_classes.py): fourteen multilingual
publishers with labelled notices and traps, figures per class (leaks, traps removed, story
blocks removed).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from crawler.cli.table import render_table
from newsharvest_bench.bench_notice_classes import ORDINALS, VerdictDigest, ordinal_name

BACKENDS = ("redis", "embedded")
COLD_ARTICLES = 3  # "from each domain's 4th article on"
MAX_WRONG_SHARE = 0.001  # target: wrongly removed real paragraphs <= 0.1%
MAX_COST_MS = 1.0  # target: per-article cost with Redis
REVISIT_SHARE = 0.1
REVISIT_DELAY = timedelta(hours=6)
REVISIT_URL_SUFFIX = "?output=amp"
BENCH_KEY_PREFIX = "nhbench:notices"  # + a random part: a throw-away Redis namespace per run
RUNS = 2  # each backend runs the same input this many times, each on a fresh store


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("notices", help="per-domain notice suppression on the fixture")
    parser.add_argument("--backend", choices=(*BACKENDS, "both"), default="both")
    parser.add_argument("--domains", type=int, default=50, help="fixture domains")
    parser.add_argument("--articles-per-domain", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1, help="fixture seed")
    parser.add_argument(
        "--revisit-share", type=float, default=REVISIT_SHARE, help="articles fetched again"
    )
    parser.add_argument("--redis-url", help="default: REDIS_URL, else redis://127.0.0.1:6379/0")
    parser.add_argument(
        "--prior-articles",
        type=int,
        help="override NOTICES_PRIOR_ARTICLES (0: no lexical priors, learning alone)",
    )
    parser.add_argument("--per-style", action="store_true", help="also break leaks down by style")
    parser.add_argument(
        "--publisher-articles",
        type=int,
        default=40,
        help="articles per multilingual publisher in the per-class part (0: skip it)",
    )
    parser.add_argument(
        "--runs", type=int, default=RUNS, help="runs per backend (verdicts must be identical)"
    )
    parser.add_argument(
        "--jitter-hours",
        type=float,
        default=0.0,
        help="arrive up to this late after publication (seeded by --order-seed): a crawl's order",
    )
    parser.add_argument("--order-seed", type=int, default=1, help="seed of the arrival jitter")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.set_defaults(handler=run)


@dataclass(slots=True)
class Event:
    """One extracted page reaching the notice stage."""

    page: Any  # crawler.newsroom.Page
    url: str
    when: float
    blocks: list[tuple[str, str]]
    content_hash: str
    revisit: bool = False
    language: str | None = None


@dataclass(slots=True)
class Score:
    articles: int = 0
    notices_in_input: int = 0  # ground-truth notices the extractor let through
    leaked_cold: int = 0  # in a domain's first COLD_ARTICLES
    leaked_warm: int = 0  # from its (COLD_ARTICLES + 1)th on
    leaked_cold_pages: int = 0
    notice_instances_cold: int = 0
    notice_instances_warm: int = 0
    real_blocks: int = 0  # true article blocks in the extractor output
    wrongly_removed: int = 0
    removed: int = 0
    removed_other: int = 0  # neither a notice nor the story: chrome the extractor kept
    notice_only_pages: int = 0
    notice_only_null: int = 0
    articles_null: int = 0  # real articles the stage made NULL
    statuses: Counter[str] = field(default_factory=Counter)
    costs: list[float] = field(default_factory=list)  # wall-clock seconds per item
    cpu: float = 0.0  # this process's CPU seconds, all items (the Redis server's not included)
    leaks_by_style: Counter[tuple[str, str]] = field(default_factory=Counter)
    wrong_examples: list[str] = field(default_factory=list)
    leaked_at: Counter[int] = field(default_factory=Counter)  # by ordinal (4: 4th and later)
    present_at: Counter[int] = field(default_factory=Counter)
    digest: VerdictDigest = field(default_factory=VerdictDigest)


def run(args: argparse.Namespace) -> int:
    from crawler.newsroom import Newsroom

    room = Newsroom(
        seed=args.seed, n_domains=args.domains, articles_per_domain=args.articles_per_domain
    )
    started = time.perf_counter()
    events, nulls = extract_all(room)
    extraction_s = time.perf_counter() - started
    events += revisits(events, args.revisit_share, random.Random(f"{args.seed}|revisits"))
    arrive(events, args.jitter_hours, args.order_seed)
    print(
        f"fixture: {len(room.domains)} domains, {len(room.pages)} pages "
        f"({len(room.articles())} articles); extraction chain: {len(events)} items "
        f"(incl. revisits), {nulls} NULL, {extraction_s:.1f} s"
    )
    backends = BACKENDS if args.backend == "both" else (args.backend,)
    rows, scores, digests = [], {}, {}
    for backend in backends:
        for number in range(1, max(1, args.runs) + 1):
            score, memory = asyncio.run(run_backend(backend, room, events, args))
            digests[(backend, number)] = score.digest
            if number == 1:  # the later runs' figures are the first's when their digests are
                scores[backend] = score
                rows.append(result_row(backend, score, memory))
    print()
    print(render_table(RESULT_HEADERS, rows))
    same = print_digests("news sites", digests)
    if args.per_style:
        for backend, score in scores.items():
            print(f"\nleaks by fixture style ({backend}): cold = first {COLD_ARTICLES} articles")
            print(style_table(room, score))
    checks: dict[str, list[tuple[str, bool]]] = {backend: [] for backend in backends}
    if args.publisher_articles > 0:
        checks = run_publishers(backends, args)
    for backend in backends:
        checks[backend].insert(0, (f"news sites: {identical_verdicts(digests)}", same))
    print()
    missed = print_targets(scores, checks)
    return 1 if args.check and missed else 0


def arrive(events: list[Any], jitter_hours: float, seed: int) -> None:
    """The order articles reach the stage: by publication, or (jitter) each up to
    `jitter_hours` later, as a crawl fetches them; their clock is their arrival."""
    if jitter_hours > 0:
        rng = random.Random(f"{seed}|arrival")
        for event in sorted(events, key=lambda e: (e.when, e.url)):
            event.when += rng.uniform(0.0, jitter_hours * 3600.0)
    events.sort(key=lambda e: (e.when, e.url))


def identical_verdicts(digests: dict[tuple[str, int], VerdictDigest]) -> str:
    runs = max(number for _, number in digests)
    backends = len({backend for backend, _ in digests})
    where = " and ".join(
        part
        for part, many in ((f"{runs} runs", runs > 1), (f"{backends} backends", backends > 1))
        if many
    )
    return f"verdicts identical over {where or 'one run'}"


def print_digests(part: str, digests: dict[tuple[str, int], VerdictDigest]) -> bool:
    """One line per backend and run: the digest of its per-article verdicts. True when every
    run of every backend gave the same verdict on every article."""
    print(f"\nverdict digests ({part}; sha256 of every article's verdict, in arrival order)")
    for (backend, number), digest in digests.items():
        print(f"{backend:<9} run {number}: {digest.hexdigest()} ({digest.articles} articles)")
    return len({digest.hexdigest() for digest in digests.values()}) == 1


def run_publishers(
    backends: Sequence[str], args: argparse.Namespace
) -> dict[str, list[tuple[str, bool]]]:
    """The per-class part: multilingual publishers, labelled notices and traps."""
    from newsharvest_bench.bench_notice_classes import (
        build_events,
        class_checks,
        class_table,
        ordinal_line,
    )

    events, nulls, seconds = build_events(args.seed, args.publisher_articles)
    arrive(events, args.jitter_hours, args.order_seed)
    languages = Counter(event.language for event in events)
    print(
        f"\npublishers: {len({e.domain for e in events})} domains, {len(events)} articles "
        f"(languages detected: {dict(sorted(languages.items(), key=str))}), {nulls} NULL, "
        f"{seconds:.1f} s"
    )
    checks: dict[str, list[tuple[str, bool]]] = {}
    digests = {}
    for backend in backends:
        for number in range(1, max(1, args.runs) + 1):
            result = asyncio.run(run_publisher_backend(backend, events, args))
            digests[(backend, number)] = result.digest
            if number > 1:
                continue
            costs_us = sorted(c * 1e6 for c in result.costs)
            mean = statistics.fmean(costs_us) if costs_us else 0.0
            print(f"\nper class ({backend}; mean {mean:.0f} us per article)")
            print(class_table(result))
            print(ordinal_line(result))
            for example in result.examples:
                print(f"{backend:<9} removed: {example}")
            checks[backend] = class_checks(backend, result)
    same = print_digests("publishers", digests)
    for backend in backends:
        checks[backend].append((f"publishers: {identical_verdicts(digests)}", same))
    return checks


async def run_publisher_backend(backend: str, events: list[Any], args: argparse.Namespace) -> Any:
    from newsharvest_bench.bench_notice_classes import run_classes
    from pipelines.notices import NoticeLearner

    config = bench_config(args)
    store, _, cleanup = await open_store(backend, args, config)
    try:
        return await run_classes(NoticeLearner(store, config), events)
    finally:
        await store.aclose()
        await cleanup()


# --- Input: the real extraction chain on every fixture page ---------------------------------


def extract_all(room: Any) -> tuple[list[Event], int]:
    from extractors import extract_verbose
    from pipelines.dedup import content_hash

    events, nulls = [], 0
    for url, page in room.pages.items():
        host = page.domain
        _, headers, body = room.render(host, url[len(f"http://{host}") :])
        charset = headers["Content-Type"].partition("charset=")[2] or None
        result = extract_verbose(body, url, encoding=charset)
        if result.article is None:
            nulls += 1
            continue
        events.append(
            Event(
                page=page,
                url=url,
                when=page.published.timestamp(),
                blocks=list(result.article.blocks),
                content_hash=content_hash(result.article.text),
                language=result.article.language,
            )
        )
    return events, nulls


def revisits(events: list[Event], share: float, rng: random.Random) -> list[Event]:
    """Articles fetched again later with one block dropped; half under another URL."""
    from pipelines.dedup import content_hash

    out = []
    for event in events:
        if event.page.kind != "article" or len(event.blocks) < 3 or rng.random() >= share:
            continue
        blocks = list(event.blocks)
        del blocks[rng.randrange(1, len(blocks) - 1)]
        url = event.url + (REVISIT_URL_SUFFIX if rng.random() < 0.5 else "")
        text = "\n".join(text for _, text in blocks)
        when = event.when + REVISIT_DELAY.total_seconds()
        out.append(Event(event.page, url, when, blocks, content_hash(text), True, event.language))
    return out


# --- Running one backend ---------------------------------------------------------------------


async def run_backend(
    backend: str, room: Any, events: list[Event], args: argparse.Namespace
) -> tuple[Score, float]:
    from pipelines.notices import NoticeLearner

    config = bench_config(args)
    store, memory, cleanup = await open_store(backend, args, config)
    learner = NoticeLearner(store, config)
    score = Score()
    position: Counter[str] = Counter()
    try:
        for event in events:
            domain = event.page.domain
            position[domain] += 1
            started, cpu_started = time.perf_counter(), time.process_time()
            verdict = await learner.process(
                domain,
                event.blocks,
                identities=(event.url, event.content_hash),
                now=event.when,
                language=event.language,
            )
            score.costs.append(time.perf_counter() - started)
            score.cpu += time.process_time() - cpu_started
            score_event(room, score, event, verdict, position[domain])
            score.digest.add(event.url, verdict)
        await store.aclose()  # the embedded store checkpoints its journal into the file
        used = await memory()
    finally:
        await store.aclose()
        await cleanup()
    return score, used / max(1, len(room.domains))


def bench_config(args: argparse.Namespace) -> Any:
    """The shipping defaults (settings.base), as the crawler would use them."""
    from scrapy.settings import Settings

    from pipelines.notices.pipeline import notice_config

    settings = Settings()
    settings.setmodule("settings.base")
    if args.prior_articles is not None:
        settings.set("NOTICES_PRIOR_ARTICLES", args.prior_articles)
    return notice_config(settings)


async def open_store(backend: str, args: argparse.Namespace, config: Any) -> tuple[Any, Any, Any]:
    """The store, a coroutine measuring its memory (bytes), and one cleaning up after it."""
    from crawler.core.connection import async_redis
    from crawler.core.keys import RedisKeys
    from pipelines.notices import EmbeddedNoticeStore, RedisNoticeStore

    if backend == "redis":
        import os

        url = (
            args.redis_url or os.environ.get("NEWSHARVEST_REDIS_URL") or "redis://127.0.0.1:6379/0"
        )
        prefix = f"{BENCH_KEY_PREFIX}:{uuid.uuid4().hex[:12]}"
        admin = async_redis(url)
        store = RedisNoticeStore(async_redis(url), RedisKeys(prefix), config)

        async def redis_keys() -> list[bytes]:
            return [key async for key in admin.scan_iter(match=f"{prefix}:*", count=1000)]

        async def redis_memory() -> float:
            return float(sum([await admin.memory_usage(k) or 0 for k in await redis_keys()]))

        async def redis_cleanup() -> None:
            keys = await redis_keys()
            if keys:
                await admin.delete(*keys)
            await admin.aclose()

        return store, redis_memory, redis_cleanup
    directory = tempfile.TemporaryDirectory(prefix="nh-notices-")
    path = Path(directory.name) / "notices.sqlite3"
    embedded = EmbeddedNoticeStore(path, config)

    async def file_size() -> float:
        return float(sum(p.stat().st_size for p in Path(directory.name).iterdir()))

    async def remove_directory() -> None:
        directory.cleanup()

    return embedded, file_size, remove_directory


# --- Scoring against the ground truth --------------------------------------------------------


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def score_event(room: Any, score: Score, event: Event, verdict: Any, position: int) -> None:
    page = event.page
    notices = [norm(n) for n in page.notices]
    truth = norm(page.text)
    output = "" if verdict.is_null else norm("\n".join(text for _, text in verdict.blocks))
    if page.kind != "article":
        if notices:
            score.notice_only_pages += 1
            score.notice_only_null += verdict.is_null
        return
    score.articles += 1
    score.statuses[verdict.status] += 1
    score.articles_null += verdict.is_null
    extracted = norm("\n".join(text for _, text in event.blocks))
    score.real_blocks += sum(1 for _, text in event.blocks if is_real(norm(text), truth, notices))
    present = [n for n in notices if n in extracted]
    leaked = [n for n in present if n in output]
    cold = position <= COLD_ARTICLES
    ordinal = min(position, COLD_ARTICLES + 1)
    score.present_at[ordinal] += len(present)
    score.leaked_at[ordinal] += len(leaked)
    score.notices_in_input += len(present)
    if cold:
        score.notice_instances_cold += len(present)
        score.leaked_cold += len(leaked)
        score.leaked_cold_pages += bool(leaked)
    else:
        score.notice_instances_warm += len(present)
        score.leaked_warm += len(leaked)
    style = room.sites[page.domain].style
    score.leaks_by_style[(style, "cold" if cold else "warm")] += len(leaked)
    score.leaks_by_style[(style, "cold_in" if cold else "warm_in")] += len(present)
    for removal in verdict.removed:
        text = norm(removal.block[1])
        score.removed += 1
        if any(text in n or n in text for n in notices):
            continue
        if is_real(text, truth, notices):
            score.wrongly_removed += 1
            if len(score.wrong_examples) < 5:
                score.wrong_examples.append(f"{page.url}: {removal.block[1][:100]}")
        else:
            score.removed_other += 1


def is_real(text: str, truth: str, notices: Sequence[str]) -> bool:
    """A block of the true article (not a notice, not chrome the extractor kept)."""
    return bool(text) and text in truth and not any(text in n for n in notices)


# --- Output ----------------------------------------------------------------------------------


RESULT_HEADERS = (
    "backend",
    "articles",
    "notices in",
    *(f"leaked {ordinal_name(n)}" for n in ORDINALS),
    f"leaked {COLD_ARTICLES + 1}+",
    "wrongly removed",
    "notice-only NULL",
    "articles NULL",
    "other removed",
    "copies/known",
    "mean us",
    "p99 us",
    "cpu us",
    "KB/domain",
)


def result_row(backend: str, score: Score, memory: float) -> list[object]:
    costs_us = sorted(c * 1e6 for c in score.costs)
    p99 = costs_us[min(len(costs_us) - 1, int(0.99 * len(costs_us)))] if costs_us else 0.0
    wrong = score.wrongly_removed / max(1, score.real_blocks)
    return [
        backend,
        score.articles,
        score.notices_in_input,
        *(f"{score.leaked_at[n]}/{score.present_at[n]}" for n in ORDINALS),
        f"{score.leaked_warm}/{score.notice_instances_warm}",
        f"{score.wrongly_removed}/{score.real_blocks} ({100 * wrong:.3f}%)",
        f"{score.notice_only_null}/{score.notice_only_pages}",
        score.articles_null,
        score.removed_other,
        f"{score.statuses['copy']}/{score.statuses['known']}",
        round(statistics.fmean(costs_us), 1) if costs_us else 0.0,
        round(p99, 1),
        round(score.cpu * 1e6 / max(1, len(score.costs)), 1),
        round(memory / 1024, 1),
    ]


def style_table(room: Any, score: Score) -> str:
    styles = sorted({site.style for site in room.sites.values()})
    rows = []
    for style in styles:
        leaks = score.leaks_by_style
        rows.append(
            [
                style,
                f"{leaks[(style, 'cold')]}/{leaks[(style, 'cold_in')]}",
                f"{leaks[(style, 'warm')]}/{leaks[(style, 'warm_in')]}",
            ]
        )
    return render_table(
        ["style", f"leaked 1-{COLD_ARTICLES}", f"leaked {COLD_ARTICLES + 1}+"], rows
    )


def print_targets(
    scores: dict[str, Score], more: dict[str, list[tuple[str, bool]]] | None = None
) -> bool:
    missed = False
    for backend, score in scores.items():
        costs_ms = statistics.fmean(score.costs) * 1e3 if score.costs else 0.0
        wrong = score.wrongly_removed / max(1, score.real_blocks)
        checks = [
            (f"0 notices leak from article {COLD_ARTICLES + 1} on", score.leaked_warm == 0),
            (f"wrongly removed <= {100 * MAX_WRONG_SHARE:.1f}%", wrong <= MAX_WRONG_SHARE),
            ("notice-only pages NULL", score.notice_only_null == score.notice_only_pages),
        ]
        if backend == "redis":
            checks.append((f"mean cost <= {MAX_COST_MS:g} ms ({costs_ms:.3f})", costs_ms <= 1.0))
        checks += (more or {}).get(backend, [])
        for name, ok in checks:
            print(f"{backend:<9} {'PASS' if ok else 'FAIL'}  {name}")
            missed |= not ok
        for example in score.wrong_examples:
            print(f"{backend:<9} wrongly removed: {example}")
    return missed
