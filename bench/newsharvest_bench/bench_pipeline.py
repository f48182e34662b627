"""`newsharvest bench pipeline`: the whole pipeline end to end, its throughput and its memory.

Crawls a pre-rendered Newsroom (default 50 domains x 100 articles = 5,000 articles; the feeds
list every page) with the real `feeds` spider in a `scrapy crawl` subprocess: extraction ->
notices -> near-duplicates -> SQLite index, plus the JSON Lines journal (HARVEST_JOURNAL_PATH: the
crash-safe output a production crawl writes, and how this bench counts articles while it runs).
Variants: "redis" (REDIS_URL set: ledger, notices, dedup and monitoring in Redis) and
"embedded" (REDIS_URL empty: the embedded SQLite stores), each with every `--workers` value
passed as EXTRACT_WORKERS (0 = extraction in the reactor thread, N = N worker processes, -1 =
one per core).

Per run: articles (items scraped) and NULLs (items dropped), articles/s from spider open to
close, CPU busy per core (/proc/stat, whole machine, over the crawl subprocess's life), the
crawler process tree's CPU seconds (every process's, sampled: the workers are not the crawler's
children), its peak memory (the sum of the PSS of the crawler and its descendants, sampled every
MEMORY_SAMPLE_SECONDS: pages the workers share with their fork server count once in all), the
memory when the article count first reached each of RSS_MARKS (and at the last sample), and the
seconds each stage recorded in its stats (every
global `<stage>/seconds`: extraction's CPU time; notices' and dedup's own work on the reactor
thread, store round trips excluded; a sink's batch writes, done on its own thread).
Linux only (/proc). `--memory-series` crawls 50 x 400 = 20,000 articles to show whether RSS
stays flat once caches are warm. `--profile DIR` runs each crawl under py-spy (the `bench`
extra) and prints where the reactor thread spends its time: the functions it is in (own time)
and the project's functions with what they call (inclusive), as shares of its samples."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from crawler.cli.table import render_table
from newsharvest_bench.bench_extraction import PEER_INSTALL_HINT
from newsharvest_bench.crawlbench import (
    CRAWL_TIMEOUT_SECONDS,
    ROOT,
    add_fixture_arguments,
    combined_stats,
    crawl_command,
    crawl_env,
    delete_prefix,
    prerender,
    redis_answers,
    run_settings,
)

DEFAULT_DOMAINS = 50
DEFAULT_ARTICLES_PER_DOMAIN = 100
MEMORY_SERIES_ARTICLES_PER_DOMAIN = 400  # x 50 domains = 20,000 articles
DEFAULT_WORKERS = "0,1,2,-1"
VARIANTS = ("redis", "embedded")
RSS_MARKS = (1_000, 5_000, 20_000)  # articles scraped at which the RSS is reported
SAMPLE_SECONDS = 0.2  # articles journalled, CPU seconds of each process
# PSS of the tree (and which processes are in it), and whenever the article count reaches one of
# RSS_MARKS: reading it walks every page of the tree (~10 ms of CPU on the bench's replay) and
# holds each process's memory map meanwhile, so sampling it every SAMPLE_SECONDS slowed the
# crawl it measured. Memory moves slowly: its peak is not missed.
MEMORY_SAMPLE_SECONDS = 1.0
TARGET_ARTICLES_PER_SECOND = 200.0  # with Redis dedup and the SQLite index (issue #11)
TARGET_PEAK_RSS_MB = 500.0  # at 20k articles, growing flat
MB = 1024 * 1024
KB = 1024  # /proc reports PSS and VmRSS in kB
UTIME_FIELD = 11  # /proc/<pid>/stat after the command name: utime, then stime (clock ticks)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
JOURNAL_FILE = "articles.jsonl"
# /proc/stat per-CPU fields: user nice system idle iowait irq softirq steal (guest is in user).
IDLE_FIELDS = (3, 4)
COUNTED_FIELDS = 8


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "pipeline", help="crawl a large fixture through the full pipeline; speed and memory"
    )
    add_fixture_arguments(parser, DEFAULT_DOMAINS, DEFAULT_ARTICLES_PER_DOMAIN)
    parser.add_argument(
        "--memory-series",
        action="store_true",
        help=f"{MEMORY_SERIES_ARTICLES_PER_DOMAIN} articles per domain (RSS at "
        f"{', '.join(map(str, RSS_MARKS))} articles)",
    )
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help="comma list of " + ", ".join(VARIANTS)
    )
    parser.add_argument(
        "--workers", default=DEFAULT_WORKERS, help="comma list of EXTRACT_WORKERS values"
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE",
        help="an extra Scrapy setting for every run (repeatable), e.g. CONCURRENT_ITEMS=8",
    )  # fmt: skip
    parser.add_argument(
        "--profile", type=Path, default=None, metavar="DIR",
        help="sample each crawl with py-spy into DIR and print the reactor thread's top entries",
    )  # fmt: skip
    parser.set_defaults(handler=run)


@dataclass
class Run:
    variant: str
    workers: int
    articles: int  # items scraped
    nulls: int  # items dropped (NULL pages; duplicates are kept, flagged)
    pages: int  # responses received
    elapsed: float  # spider open to close, seconds
    cpu_seconds: float  # the crawler process tree, user + system
    core_busy: list[float]  # per core, share of the crawl's wall time not idle (whole machine)
    peak_rss_mb: float
    rss_series: list[tuple[int, float]]  # (articles scraped, RSS MB)
    stages: dict[str, float] = field(default_factory=dict)  # `<stage>/seconds` stats

    @property
    def articles_per_second(self) -> float:
        return self.articles / self.elapsed if self.elapsed else 0.0


def run(args: argparse.Namespace) -> int:
    from crawler.newsroom import Newsroom, NewsroomServer

    variants = [name.strip() for name in args.variants.split(",") if name.strip()]
    if unknown := set(variants) - set(VARIANTS):
        raise SystemExit(f"unknown variant(s): {', '.join(sorted(unknown))}")
    if "redis" in variants and not (args.redis_url and redis_answers(args.redis_url)):
        print(f"(no Redis answers at {args.redis_url!r}: embedded only)", file=sys.stderr)
        variants = [name for name in variants if name != "redis"]
    workers = [int(value) for value in args.workers.split(",") if value.strip()]
    per_domain = (
        MEMORY_SERIES_ARTICLES_PER_DOMAIN if args.memory_series else args.articles_per_domain
    )
    room = Newsroom(seed=1, n_domains=args.domains, articles_per_domain=per_domain,
                    render_cache_size=None)  # fmt: skip
    prerender(room)
    print(f"fixture: {len(room.domains)} domains, {len(room.articles())} articles, "
          f"{len(room.pages)} pages; runs: {variants} x workers {workers}",
          file=sys.stderr)  # fmt: skip
    runs: list[Run] = []
    with NewsroomServer(room, port=0) as server, tempfile.TemporaryDirectory() as scratch:
        for variant in variants:
            for count in workers:
                url = args.redis_url if variant == "redis" else ""
                prefix = f"nhbench:{uuid.uuid4().hex[:8]}"
                workdir = Path(scratch) / f"run-{len(runs)}"
                try:
                    runs.append(crawl_once(room.feed_urls, server.proxy_url, variant, count,
                                           url, prefix, workdir, args.set,
                                           profile_path(args.profile, variant, count)))  # fmt: skip
                finally:
                    if url:
                        delete_prefix(url, prefix)
                print(f"  {variant} workers={count}: {runs[-1].articles} articles, "
                      f"{runs[-1].articles_per_second:.0f}/s", file=sys.stderr)  # fmt: skip
    figures = {"expected_articles": len(room.articles()), "cores": os.cpu_count(),
               "runs": [figures_of(r) for r in runs]}  # fmt: skip
    print(json.dumps(figures, indent=2) if args.json else report(figures))
    return 0


def crawl_once(feed_urls: list[str], proxy: str, variant: str, workers: int, redis_url: str,
               prefix: str, workdir: Path, extra: list[str],
               profile: Path | None = None) -> Run:  # fmt: skip
    """One crawl in a subprocess, watched from here: RSS of its tree, articles journalled."""
    journal = workdir / JOURNAL_FILE
    settings = [*run_settings(proxy, redis_url, prefix, workdir), f"EXTRACT_WORKERS={workers}",
                f"HARVEST_JOURNAL_PATH={journal}", *extra]  # fmt: skip
    command = crawl_command(feed_urls, settings)
    return measure(command, variant, workers, workdir, profile)


def measure(command: list[str], variant: str, workers: int, workdir: Path,
            profile: Path | None = None, journals: list[Path] | None = None) -> Run:  # fmt: skip
    """Run a `scrapy crawl` command (its journal at workdir/JOURNAL_FILE, or `journals` when it
    runs several crawlers) in a subprocess, watched from here: RSS of its tree, articles
    journalled, CPU, and its final stats (added up over its crawlers)."""
    journals = journals or [workdir / JOURNAL_FILE]
    workdir.mkdir(parents=True)
    log_path = workdir / "crawl.log"
    before_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    before_cores = core_jiffies()
    with log_path.open("w") as log:
        if profile is not None:
            command = profiled(command, profile)
        process = subprocess.Popen(command, cwd=workdir, env=crawl_env(),
                                   stdout=subprocess.DEVNULL, stderr=log)  # fmt: skip
        watcher = Watcher(process.pid, journals)
        thread = threading.Thread(target=watcher.watch, args=(process,), daemon=True)
        thread.start()
        try:
            process.wait(timeout=CRAWL_TIMEOUT_SECONDS)
        finally:
            if process.poll() is None:
                process.kill()
            thread.join()
    after_cores = core_jiffies()
    after_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = log_path.read_text(errors="replace")
    stats = combined_stats(text)
    if process.returncode != 0 or "elapsed_time_seconds" not in stats:
        raise SystemExit(f"{variant}: the crawl failed:\n{text[-3000:]}")
    if profile is not None:
        print(f"\nprofile of {variant} workers={workers} ({profile}):", file=sys.stderr)
        print(profile_report(profile), file=sys.stderr)
    return Run(
        variant=variant,
        workers=workers,
        articles=int(stats.get("item_scraped_count", 0)),
        nulls=int(stats.get("item_dropped_count", 0)),
        pages=int(stats.get("response_received_count", 0)),
        elapsed=stats["elapsed_time_seconds"],
        cpu_seconds=tree_cpu_seconds(watcher, before_cpu, after_cpu),
        core_busy=busy_shares(before_cores, after_cores),
        peak_rss_mb=watcher.peak_rss / MB,
        rss_series=[(articles, rss / MB) for articles, rss in watcher.series],
        stages={key: value for key, value in stats.items() if key.endswith("/seconds")},
    )


def tree_cpu_seconds(
    watcher: Watcher, before: resource.struct_rusage, after: resource.struct_rusage
) -> float:
    """CPU seconds of the crawler's tree: the crawler's own from its rusage (complete: it was
    waited for), every other process's as last sampled (the time after its last sample, at
    most SAMPLE_SECONDS of its exit, is missed)."""
    crawler = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    others = (seconds for pid, seconds in watcher.cpu_seconds.items() if pid != watcher.pid)
    return crawler + sum(others)


class Watcher:
    """Samples the crawler tree's RSS and the journal's line count until the crawl exits."""

    def __init__(self, pid: int, journals: list[Path]) -> None:
        self.pid = pid
        self.journals = journals
        self.peak_rss = 0
        self.series: list[tuple[int, int]] = []  # (articles, RSS bytes) at each mark, then last
        self._articles = 0
        self._read_to = dict.fromkeys(journals, 0)
        # Own CPU seconds of every process of the tree, as last seen. The extraction workers
        # are not the crawler's children (the fork server's), so their time never reaches
        # the crawler's rusage: only sampling counts it.
        self.cpu_seconds: dict[int, float] = {}

    def watch(self, process: subprocess.Popen[bytes]) -> None:
        marks = list(RSS_MARKS)
        last: tuple[int, int] | None = None
        pids: list[int] = []
        memory_due = 0.0
        while process.poll() is None:
            articles = self._count_articles()
            if time.monotonic() >= memory_due or (marks and articles >= marks[0]):
                memory_due = time.monotonic() + MEMORY_SAMPLE_SECONDS
                pids = tree_pids(self.pid)
                rss = sum(process_memory(pid) for pid in pids)
                if rss:  # zero once the process is gone (between poll and sample)
                    self.peak_rss = max(self.peak_rss, rss)
                    last = (articles, rss)
                    while marks and articles >= marks[0]:
                        self.series.append(last)
                        marks.pop(0)
            self._sample_cpu(pids)
            time.sleep(SAMPLE_SECONDS)
        if last is not None and (not self.series or last[0] > self.series[-1][0]):
            self.series.append(last)  # the crawl ended between marks: its last figure too

    def _sample_cpu(self, pids: list[int]) -> None:
        for pid in pids:
            if (seconds := process_cpu_seconds(pid)) is not None:
                self.cpu_seconds[pid] = seconds

    def _count_articles(self) -> int:
        """Lines journalled so far, reading only what was appended since the last sample."""
        for journal in self.journals:
            try:
                with journal.open("rb") as handle:
                    handle.seek(self._read_to[journal])
                    chunk = handle.read()
            except FileNotFoundError:
                continue
            complete = chunk.rfind(b"\n") + 1
            self._articles += chunk.count(b"\n", 0, complete)
            self._read_to[journal] += complete
        return self._articles


def tree_memory(root: int) -> int:
    """Bytes: the proportional set size (PSS) of `root` plus that of every descendant (/proc,
    Linux). PSS splits each shared page among the processes mapping it, so the sum is what the
    tree really occupies; summed RSS would count the fork server's pages (lxml, numpy, the
    extractors) once in every worker forked from it."""
    return sum(process_memory(pid) for pid in tree_pids(root))


def tree_pids(root: int) -> list[int]:
    """`root` and every live descendant (/proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # exited meanwhile
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def process_cpu_seconds(pid: int) -> float | None:
    """The process's own CPU time so far (user + system, /proc/<pid>/stat); None once gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[UTIME_FIELD]) + int(fields[UTIME_FIELD + 1])) / CLOCK_TICKS


def process_memory(pid: int) -> int:
    """Bytes: the process's PSS (/proc/<pid>/smaps_rollup), or its VmRSS on kernels without it;
    0 once it has exited."""
    for path, field_name in (
        (f"/proc/{pid}/smaps_rollup", "Pss:"),
        (f"/proc/{pid}/status", "VmRSS:"),
    ):
        try:
            for line in Path(path).read_text().splitlines():
                if line.startswith(field_name):
                    return int(line.split()[1]) * KB
        except OSError:
            continue  # no such file on this kernel, or the process exited meanwhile
    return 0


def core_jiffies() -> list[tuple[int, int]]:
    """(busy, total) jiffies per core since boot, from /proc/stat."""
    cores = []
    for line in Path("/proc/stat").read_text().splitlines():
        name, *values = line.split()
        if name.startswith("cpu") and name != "cpu":
            counted = [int(value) for value in values[:COUNTED_FIELDS]]
            idle = sum(counted[i] for i in IDLE_FIELDS)
            cores.append((sum(counted) - idle, sum(counted)))
    return cores


def busy_shares(before: list[tuple[int, int]], after: list[tuple[int, int]]) -> list[float]:
    return [
        (busy1 - busy0) / (total1 - total0) if total1 > total0 else 0.0
        for (busy0, total0), (busy1, total1) in zip(before, after, strict=True)
    ]


def figures_of(run: Run) -> dict[str, Any]:
    figures = asdict(run)
    figures["articles_per_second"] = run.articles_per_second
    figures["cpu_per_article_ms"] = 1000 * run.cpu_seconds / run.articles if run.articles else 0.0
    return figures


def report(figures: dict[str, Any]) -> str:
    runs = figures["runs"]
    header = ["variant", "workers", "articles", "NULLs", "articles/s", "wall s", "CPU s",
              "CPU ms/article", "busy per core", "peak MB (PSS)", "MB at articles"]  # fmt: skip
    rows = [
        [r["variant"], r["workers"], r["articles"], r["nulls"],
         round(r["articles_per_second"], 1), round(r["elapsed"], 1), round(r["cpu_seconds"], 1),
         round(r["cpu_per_article_ms"], 2), " ".join(f"{100 * b:.0f}%" for b in r["core_busy"]),
         round(r["peak_rss_mb"]), " ".join(f"{a}:{mb:.0f}" for a, mb in r["rss_series"])]
        for r in runs
    ]  # fmt: skip
    stage_names = sorted({name for r in runs for name in r["stages"]})  # `<stage>/seconds`
    stage_rows = [
        [f"{r['variant']} w={r['workers']}",
         *(_ms_per_article(r["stages"].get(name), r["articles"]) for name in stage_names)]
        for r in runs
    ]  # fmt: skip
    lines = [
        render_table(header, rows),
        "\ntime per stage, ms per article (extract: CPU; notices, dedup: own work on the reactor"
        " thread, store waits excluded; sink: batch writes on its thread)",
        render_table(["run", *(name.removesuffix("/seconds") for name in stage_names)], stage_rows),
        f"\nexpected articles: {figures['expected_articles']}; {figures['cores']} cores "
        "(busy per core is the whole machine, other work included)",
    ]
    redis_runs = [r for r in runs if r["variant"] == "redis"]
    if redis_runs:
        best = max(r["articles_per_second"] for r in redis_runs)
        verdict = "met" if best >= TARGET_ARTICLES_PER_SECOND else "NOT met"
        lines.append(f"target >= {TARGET_ARTICLES_PER_SECOND:.0f} articles/s with Redis and "
                     f"SQLite: {verdict} (best {best:.0f}/s)")  # fmt: skip
    peak = max((r["peak_rss_mb"] for r in runs), default=0.0)
    lines.append(
        f"peak memory (PSS of the crawler tree) {peak:.0f} MB "
        f"(target <= {TARGET_PEAK_RSS_MB:.0f} MB at 20k articles)"
    )
    return "\n".join(lines)


def _ms_per_article(seconds: float | None, articles: int) -> float | str:
    return "-" if seconds is None or not articles else round(1000 * seconds / articles, 2)


# --- profiles ------------------------------------------------------------------------------------

PROFILE_RATE = 100  # py-spy samples per second
PROFILE_TOP = 15  # entries per profile table
REACTOR_MARK = "Handle._run"  # a stack through asyncio's callback runner is the reactor thread
PROJECT_DIRS = ("crawler/", "pipelines/", "extractors/")


def profile_path(directory: Path | None, variant: str, workers: int) -> Path | None:
    if directory is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    return directory / f"{variant}-workers{workers}.txt"


def profiled(command: list[str], output: Path) -> list[str]:
    """`command` under py-spy, writing raw collapsed stacks to `output`."""
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(py_spy).exists():
        raise SystemExit(f"--profile needs py-spy: {PEER_INSTALL_HINT}")
    return [py_spy, "record", "--rate", str(PROFILE_RATE), "--format", "raw",
            "--output", str(output), "--", *command]  # fmt: skip


def frame_name(frame: str) -> str:
    """'function (path/to/file.py:12)' -> 'function (file path from the package)'."""
    name, _, where = frame.partition(" (")
    path = where.rsplit(":", 1)[0]
    path = path.split("site-packages/")[-1].removeprefix(str(ROOT) + "/")
    return f"{name} ({path})"


def profile_report(path: Path) -> str:
    """The reactor thread's top functions by own time and the project's by inclusive time."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not count.isdigit() or not any(REACTOR_MARK in frame for frame in frames):
            continue
        samples = int(count)
        total += samples
        names = [frame_name(frame) for frame in frames]
        own[names[-1]] += samples
        for name in set(names):
            if any(f"({directory}" in name for directory in PROJECT_DIRS):
                inclusive[name] += samples
    if not total:
        return "(no reactor samples)"
    tables = []
    for title, counter in (("own time", own), ("project code, inclusive", inclusive)):
        rows = [(f"{n / total:.1%}", name[:110]) for name, n in counter.most_common(PROFILE_TOP)]
        tables.append(render_table([f"{title}", "reactor thread function"], rows))
    return f"{total} reactor samples at {PROFILE_RATE}/s\n" + "\n\n".join(tables)
