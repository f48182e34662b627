"""`newsharvest bench distributed`: what a crashed or restarted worker costs a distributed crawl.

Every figure comes from real `scrapy crawl feeds` processes against the news-site simulator,
sharing one Redis (each run under its own key prefix, deleted afterwards):

* restart: one worker (WORKER_ID set) is killed with SIGKILL mid-harvest and started again with
  the same command: seconds from the restart to a complete harvest, articles lost, output twice;
* feed lease (embedded SQLite state, continuous mode): a worker killed while its feed polls are
  under way, started again: seconds until every feed is polled again (the lease is 5 min);
* monitoring: 3 workers, one killed with SIGKILL: the monitoring store's article total against
  the articles in the workers' journals;
* split: 3 workers on a burst of articles: each worker's share;
* politeness: 3 workers with the default politeness: the most requests in flight to one
  publisher and the shortest gap between two, measured at the simulator's server
  (`newsharvest_bench/bench_politeness.py`, also `newsharvest bench politeness`).

`SECTIONS` lists the sections in the order they run: each is a function taking a `Context` and
returning its figures (name -> value), printed under the section's name.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.core.connection import sync_redis
from crawler.core.keys import RedisKeys
from crawler.newsroom import Newsroom, NewsroomServer
from newsharvest_bench.bench_politeness import measure_politeness
from newsharvest_bench.crawlrun import crawl_command, crawl_env, start_crawl, wait_for

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DISTRIBUTED_PROFILE = "settings.distributed"
LOCAL_PROFILE = "settings.fixture"
# What the fixture profile changes on top of the distributed profile: the simulator is ours.
FIXTURE_SETTINGS = (  # tests/test_distributed.py runs its workers with these too
    "DOWNLOAD_DELAY=0",
    "AUTOTHROTTLE_START_DELAY=0.05",
    "AUTOTHROTTLE_TARGET_CONCURRENCY=8",
    "CONCURRENT_REQUESTS_PER_DOMAIN=4",
    "RETRY_TIMES=0",
    "NETWORK_ALLOWLIST=.test",
    "MONITOR_FLUSH_SECONDS=0.5",
)
# Fast liveness, so a run lasts seconds: a killed worker is gone after 3 s.
LIVENESS_SETTINGS = ("HEARTBEAT_TTL_SECONDS=3", "HEARTBEAT_SECONDS=1")
SLOW_RESPONSE_SECONDS = 0.05  # work stays in flight long enough to be cut off by a kill
FEED_POLL_SECONDS = 1.5  # the feed-lease run: polls still under way when the kill comes
KILL_AFTER_SHARE = 0.2  # kill once this share of the articles is in the journals
WORKERS = 3
HARVEST_TIMEOUT_SECONDS = 120.0
STOP_TIMEOUT_SECONDS = 30.0
SETTLE_SECONDS = 1.5  # a live worker's last monitoring flush and done marks land
POLL_SECONDS = 0.1


@dataclass
class Context:
    """What every section gets: the Redis to share, a scratch directory, the fixture size."""

    redis_url: str
    workdir: Path
    domains: int = 6
    articles_per_domain: int = 50
    base_prefix: str = "nhbench"
    prefixes: list[str] = field(default_factory=list)  # key prefixes to delete afterwards

    def prefix(self, name: str) -> str:
        prefix = f"{self.base_prefix}:{name}:{uuid.uuid4().hex[:8]}"
        self.prefixes.append(prefix)
        return prefix

    def room(self, seed: int) -> Newsroom:
        return Newsroom(
            seed=seed, n_domains=self.domains, articles_per_domain=self.articles_per_domain
        )


Section = Callable[[Context], dict[str, Any]]


@dataclass
class Worker:
    """One `scrapy crawl feeds` process of a run (its command can be started again)."""

    name: str
    command: list[str]
    env: dict[str, str]
    journal: Path
    log: Path
    process: subprocess.Popen | None = None

    def start(self) -> Worker:
        self.process = start_crawl(self.command, self.env, self.log)
        return self

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=STOP_TIMEOUT_SECONDS)

    def stop(self) -> int:
        """Graceful stop (SIGTERM, as an operator would); SIGKILL if it hangs."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def items(self) -> list[dict[str, Any]]:
        """The journal's complete lines (a running worker may be writing the last one)."""
        try:
            data = self.journal.read_bytes()
        except FileNotFoundError:
            return []
        complete = data[: data.rfind(b"\n") + 1].decode("utf-8")
        return [json.loads(line) for line in complete.splitlines() if line.strip()]


def redis_worker(
    name: str, room_feeds: Sequence[str], proxy: str, context: Context, prefix: str,
    continuous: bool, extra: Sequence[str] = (),
) -> Worker:  # fmt: skip
    """A worker of the distributed profile, named `name` (WORKER_ID), journal in workdir."""
    journal = context.workdir / f"{prefix.replace(':', '-')}-{name}.jsonl"
    settings = [
        f"REDIS_URL={context.redis_url}", f"REDIS_KEY_PREFIX={prefix}", f"WORKER_ID={name}",
        f"HARVEST_JOURNAL_PATH={journal}", *FIXTURE_SETTINGS, *LIVENESS_SETTINGS, *extra,
    ]  # fmt: skip
    args = ["continuous=1"] if continuous else []
    command = crawl_command(room_feeds, proxy, settings, args)
    state = context.workdir / f"state-{prefix.replace(':', '-')}-{name}"
    env = crawl_env(state, profile=DISTRIBUTED_PROFILE)
    return Worker(name, command, env, journal, journal.with_suffix(".log"))


def article_keys(items: Sequence[dict[str, Any]]) -> Counter[tuple[str, int]]:
    return Counter((item.get("entry_url") or item["url"], int(item["version"])) for item in items)


def lost_and_doubled(room: Newsroom, items: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """Articles of the room never output, and outputs beyond the first of one article."""
    keys = article_keys(items)
    expected = {page.url for page in room.articles()}
    output = {url for url, _ in keys} | {item["url"] for item in items}
    return len(expected - output), sum(n - 1 for n in keys.values())


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    wait_for(predicate, timeout, what)


def pending_claims(redis_url: str, prefix: str) -> int:
    client = sync_redis(redis_url)
    try:
        return int(client.zcard(RedisKeys(prefix).harvest_pending()))
    finally:
        client.close()


def monitored_articles(redis_url: str, prefix: str) -> int:
    """The monitoring store's article total over all domains (what the dashboard shows)."""
    keys = RedisKeys(prefix)
    client = sync_redis(redis_url)
    try:
        domains = [d.decode() for d in client.zrange(keys.monitor_domains(), 0, -1)]
        values = [client.hget(keys.monitor_counters(domain), "articles") for domain in domains]
    finally:
        client.close()
    return sum(int(float(value)) for value in values if value is not None)


def _stop_all(workers: Sequence[Worker]) -> None:
    for worker in workers:
        if worker.process is not None and worker.process.poll() is None:
            worker.stop()


# --- sections -----------------------------------------------------------------------------


def restart_section(context: Context) -> dict[str, Any]:
    """One worker, Redis state: SIGKILL mid-harvest, the same command again."""
    room = context.room(seed=21)
    prefix = context.prefix("restart")
    total = len(room.articles())
    with NewsroomServer(room, port=0, delay=SLOW_RESPONSE_SECONDS) as server:
        worker = redis_worker("w1", room.feed_urls, server.proxy_url, context, prefix, False)
        worker.start()
        try:
            wait_until(lambda: len(worker.items()) >= total * KILL_AFTER_SHARE,
                       HARVEST_TIMEOUT_SECONDS, "articles before the kill")  # fmt: skip
            worker.kill()
            before = len(worker.items())
            pending_at_kill = pending_claims(context.redis_url, prefix)
            restarted = time.monotonic()
            worker.log = worker.log.with_name(worker.log.stem + "-restart.log")
            worker.start()
            assert worker.process is not None
            status = worker.process.wait(timeout=HARVEST_TIMEOUT_SECONDS)
            seconds = time.monotonic() - restarted
        finally:
            _stop_all([worker])
    lost, doubled = lost_and_doubled(room, worker.items())
    return {
        "articles": total,
        "output before the kill": before,
        "pending at the kill": pending_at_kill,
        "restart to complete s": round(seconds, 1),
        "exit status": status,
        "lost": lost,
        "doubled": doubled,
        "pending after": pending_claims(context.redis_url, prefix),
    }


def feed_lease_section(context: Context) -> dict[str, Any]:
    """Embedded state, continuous mode: SIGKILL while the feed polls are under way."""
    room = Newsroom(seed=22, n_domains=3, articles_per_domain=3)
    state = context.workdir / "state-feed-lease"
    with NewsroomServer(room, port=0, delay=FEED_POLL_SECONDS) as server:
        command = crawl_command(room.feed_urls, server.proxy_url, args=["continuous=1"])
        out = context.workdir / "feed-lease"
        env = crawl_env(state, profile=LOCAL_PROFILE)
        worker = Worker("local", command, env, out.with_suffix(".jsonl"), out.with_suffix(".log"))
        worker.start()
        try:
            wait_until(lambda: _leased_feeds(state) > 0, HARVEST_TIMEOUT_SECONDS,
                       "feed polls under way")  # fmt: skip
            leased = _leased_feeds(state)
            worker.kill()
            time.sleep(FEED_POLL_SECONDS + POLL_SECONDS)  # the cut-off polls are answered
            polled = _feed_polls(server, room.feed_urls)
            restarted = time.monotonic()
            worker.log = context.workdir / "feed-lease-restart.log"
            worker.start()
            wait_until(
                lambda: all(_feed_polls(server, room.feed_urls)[u] > polled[u] for u in polled),
                HARVEST_TIMEOUT_SECONDS, "every feed polled again",
            )  # fmt: skip
            seconds = time.monotonic() - restarted
        finally:
            _stop_all([worker])
    return {
        "feeds": len(room.feed_urls),
        "leased at the kill": leased,
        "restart to every feed polled s": round(seconds, 1),
        "includes the simulator's answer delay s": FEED_POLL_SECONDS,
    }


def _leased_feeds(state: Path) -> int:
    path = state / "harvest.sqlite3"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
            return int(db.execute("SELECT COUNT(*) FROM feed_leases").fetchone()[0])
    except sqlite3.Error:
        return 0  # not created yet


def _feed_polls(server: NewsroomServer, feed_urls: Sequence[str]) -> dict[str, int]:
    from urllib.parse import urlsplit

    wanted = {(urlsplit(u).hostname, urlsplit(u).path): u for u in feed_urls}
    counts = dict.fromkeys(feed_urls, 0)
    for record in server.request_log:
        url = wanted.get((record.host, record.target.split("?", 1)[0]))
        if url is not None:
            counts[url] += 1
    return counts


@contextmanager
def _three_workers(
    context: Context, room: Newsroom, prefix: str
) -> Iterator[tuple[NewsroomServer, list[Worker]]]:
    with NewsroomServer(room, port=0, delay=SLOW_RESPONSE_SECONDS) as server:
        workers = [
            redis_worker(f"w{n}", room.feed_urls, server.proxy_url, context, prefix, True)
            for n in range(1, WORKERS + 1)
        ]
        for worker in workers:
            worker.start()
        try:
            yield server, workers
        finally:
            _stop_all(workers)


def _harvested(room: Newsroom, workers: Sequence[Worker]) -> Callable[[], bool]:
    expected = {page.url for page in room.articles()}

    def done() -> bool:
        output = {item["url"] for worker in workers for item in worker.items()}
        return expected <= output

    return done


def monitoring_section(context: Context) -> dict[str, Any]:
    """3 workers (continuous), one killed with SIGKILL: monitoring against the journals."""
    room = context.room(seed=23)
    prefix = context.prefix("monitoring")
    total = len(room.articles())
    with _three_workers(context, room, prefix) as (_, workers):
        output = lambda: sum(len(w.items()) for w in workers)  # noqa: E731
        wait_until(lambda: output() >= total * KILL_AFTER_SHARE, HARVEST_TIMEOUT_SECONDS,
                   "articles before the kill")  # fmt: skip
        # The one with most output: a worker the others left no work yet would prove nothing
        # (on a fast machine two workers can output the share before the third starts).
        killed = max(workers, key=lambda worker: len(worker.items()))
        killed.kill()
        killed_output = len(killed.items())
        wait_until(_harvested(room, workers), HARVEST_TIMEOUT_SECONDS, "the whole harvest")
        wait_until(lambda: pending_claims(context.redis_url, prefix) == 0,
                   HARVEST_TIMEOUT_SECONDS, "no claim pending")  # fmt: skip
        time.sleep(SETTLE_SECONDS)
        for worker in workers:
            if worker is not killed:
                worker.stop()  # graceful: the last monitoring flush
    items = [item for worker in workers for item in worker.items()]
    lost, doubled = lost_and_doubled(room, items)
    return {
        "articles": total,
        "killed worker's output": killed_output,
        "journals (distinct)": len(article_keys(items)),
        "journal lines": len(items),
        "monitoring total": monitored_articles(context.redis_url, prefix),
        "lost": lost,
        "doubled": doubled,
    }


def split_section(context: Context) -> dict[str, Any]:
    """3 workers (continuous) on one burst: each one's share of the articles."""
    room = context.room(seed=24)
    prefix = context.prefix("split")
    with _three_workers(context, room, prefix) as (_, workers):
        wait_until(_harvested(room, workers), HARVEST_TIMEOUT_SECONDS, "the whole burst")
    counts = [len(worker.items()) for worker in workers]
    total = sum(counts)
    lost, doubled = lost_and_doubled(room, [i for w in workers for i in w.items()])
    return {
        "articles": total,
        "per worker": counts,
        "shares %": [round(100 * n / total, 1) for n in counts] if total else [],
        "smallest share %": round(100 * min(counts) / total, 1) if total else 0.0,
        "lost": lost,
        "doubled": doubled,
    }


def politeness_section(context: Context) -> dict[str, Any]:
    """3 workers, default politeness: what one publisher's server sees."""
    scratch = context.workdir / "politeness"
    scratch.mkdir(exist_ok=True)
    figures = measure_politeness(3, redis_url=context.redis_url, scratch=scratch)
    gap = figures["min_gap"]
    return {
        "requests": figures["requests"],
        "max in flight to one publisher": figures["max_in_flight"],
        "limit (CONCURRENT_REQUESTS_PER_DOMAIN)": figures["limit"],
        "min gap between two requests to one publisher, s": None if gap is None else round(gap, 3),
        "delay (DOWNLOAD_DELAY), s": figures["delay"],
        "polite": figures["polite"],
        "articles": f"{figures['articles']} of {figures['articles_published']}",
    }


# The sections `newsharvest bench distributed` runs, in order (name, function).
SECTIONS: list[tuple[str, Section]] = [
    ("restart", restart_section),
    ("feed-lease", feed_lease_section),
    ("monitoring", monitoring_section),
    ("split", split_section),
    ("politeness", politeness_section),
]


def delete_prefixes(redis_url: str, prefixes: Sequence[str]) -> None:
    client = sync_redis(redis_url)
    try:
        for prefix in prefixes:
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            if keys:
                client.delete(*keys)
    finally:
        client.close()


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "distributed", help="restart, crash and work-split figures of N workers on one Redis"
    )
    parser.add_argument(
        "--redis-url", default=os.environ.get("NEWSHARVEST_REDIS_URL") or DEFAULT_REDIS_URL
    )
    parser.add_argument("--domains", type=int, default=6)
    parser.add_argument("--articles-per-domain", type=int, default=50)
    names = [name for name, _ in SECTIONS]
    parser.add_argument("--only", action="append", choices=names, help="run only this section")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="on a local 3-master Redis Cluster started from redis-server (not --redis-url)",
    )
    parser.set_defaults(handler=run)


def run(args: Any) -> int:
    if not args.cluster:
        return run_on(args)
    from newsharvest_bench.localcluster import LocalRedisCluster

    with LocalRedisCluster.started() as cluster:
        args.redis_url = cluster.url
        print(f"on a local Redis Cluster of {len(cluster.ports)} masters: {cluster.url}")
        return run_on(args)


def run_on(args: Any) -> int:
    wanted = set(args.only or ())
    figures: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="nh-bench-distributed-") as scratch:
        context = Context(args.redis_url, Path(scratch), args.domains, args.articles_per_domain)
        try:
            for name, section in SECTIONS:
                if wanted and name not in wanted:
                    continue
                started = time.monotonic()
                figures[name] = section(context)
                figures[name]["section s"] = round(time.monotonic() - started, 1)
                if not args.json:
                    _print_section(name, figures[name])
        finally:
            delete_prefixes(context.redis_url, context.prefixes)
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


def _print_section(name: str, values: dict[str, Any]) -> None:
    section = dict(SECTIONS)[name]
    print(f"{name}: {(section.__doc__ or '').strip().splitlines()[0]}")
    width = max(len(key) for key in values)
    for key, value in values.items():
        print(f"  {key:<{width}}  {value}")
