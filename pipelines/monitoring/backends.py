"""Where the monitoring numbers live: Redis (shared by every worker) or memory.

Both stores take the same batches (what one worker saw since its last flush) and answer the same
questions, so the alert rules and the dashboard never care which one runs:

* totals per domain (every `inc_domain` counter, timings as sum/count/histogram buckets, and the
  times of the first and last new article),
* counters per time bucket for the charts and the time rules (`SERIES_COUNTERS` only, so the
  series stay small), dropped after MONITOR_RETENTION_SECONDS,
* the last `history_pages` page outcomes per domain for the page rules,
* the active alerts and a bounded log of alert events, and worker heartbeats.

Redis layout (key names in crawler.core.keys.RedisKeys): one hash of totals, one hash of series
("<bucket>:<counter>" fields, trimmed by a small Lua script) and one capped list of page outcomes
per domain, each with a TTL so a domain that goes quiet disappears. One flush is one MULTI/EXEC
round trip, whatever the number of events. A local crawl (no Redis) keeps the same structures in
memory and writes them atomically to `<state dir>/monitor.json`, which `newsharvest monitor`
reads.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
from collections import Counter, defaultdict, deque
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import redis.asyncio

from crawler.core.connection import async_redis, is_cluster_client
from crawler.core.domainstats import (
    ARTICLES,
    DUPLICATES,
    ERRORS,
    FEED_ERRORS,
    FEEDS_NOT_MODIFIED,
    FEEDS_POLLED,
    FETCHED,
    FILTERED,
    NULL,
)
from crawler.core.keys import RedisKeys
from crawler.core.lua import register_lua
from pipelines.monitoring.alerts import Alert, DomainView, Outcome, Thresholds
from settings import base as defaults

# Counters also kept per time bucket (charts, time rules). Breakdowns stay totals-only.
SERIES_COUNTERS = (
    FETCHED, ARTICLES, NULL, DUPLICATES, ERRORS, FEEDS_POLLED, FEEDS_NOT_MODIFIED, FEED_ERRORS,
    FILTERED,
)  # fmt: skip
# Fields the monitor keeps next to the counters in a domain's totals.
FIRST_SEEN_AT = "first_seen_at"
FIRST_ARTICLE_AT = "first_article_at"
LAST_ARTICLE_AT = "last_article_at"
POLLS_SINCE_ARTICLE = "polls_since_article"
STATE_FIELDS = (FIRST_SEEN_AT, FIRST_ARTICLE_AT, LAST_ARTICLE_AT, POLLS_SINCE_ARTICLE)
TIMING_PREFIX = "seconds/"  # seconds/<timing>/sum|count|le/<bound>

ALERT_LOG_LENGTH = 500  # alert events kept for the dashboard
SNAPSHOT_FILE = "monitor.json"
SNAPSHOT_VERSION = 1
WORKER_STALE_SECONDS = 60.0  # a worker silent for this long is shown as gone
WORKER_FORGET_SECONDS = 86400.0  # ...and after this long it leaves the workers hash
PRUNE_WORKERS_EVERY = 100  # heartbeats between two prunings of the workers hash
# Trim a domain's series at most once per this many buckets (a HKEYS walk in Lua).
TRIM_EVERY_BUCKETS = 32

# HINCRBYFLOAT of many fields of one hash in one command (ARGV: field, increment, ...). Integer
# counts stay integers ("3", not "3.0"), so one command serves counts and timing sums alike.
INCREMENT_FIELDS_LUA = (
    "monitoring_increment_fields"  # monitoring_increment_fields.lua beside this module
)
# Deletes the series fields of buckets older than ARGV[1]; HDEL in chunks (Lua's unpack limit).
TRIM_SERIES_LUA = "monitoring_trim_series"  # monitoring_trim_series.lua beside this module
# A domain's first and last article times and polls since its last article, merged as
# `apply_to_totals` does (atomic: workers flush concurrently).
ARTICLE_TIMES_LUA = "monitoring_article_times"  # monitoring_article_times.lua


@dataclass(frozen=True)
class StoreConfig:
    bucket_seconds: float = defaults.MONITOR_BUCKET_SECONDS
    retention_seconds: float = defaults.MONITOR_RETENTION_SECONDS
    counters_ttl_seconds: float = defaults.MONITOR_COUNTERS_TTL_SECONDS
    history_pages: int = Thresholds().history_pages

    def __post_init__(self) -> None:
        if self.bucket_seconds <= 0 or self.retention_seconds < self.bucket_seconds:
            raise ValueError(
                "MONITOR_BUCKET_SECONDS must be > 0 and <= MONITOR_RETENTION_SECONDS, not "
                f"{self.bucket_seconds} and {self.retention_seconds}"
            )

    @classmethod
    def from_settings(cls, settings: Any, history_pages: int) -> StoreConfig:
        return cls(
            bucket_seconds=settings.getfloat("MONITOR_BUCKET_SECONDS"),
            retention_seconds=settings.getfloat("MONITOR_RETENTION_SECONDS"),
            counters_ttl_seconds=settings.getfloat("MONITOR_COUNTERS_TTL_SECONDS"),
            history_pages=history_pages,
        )

    @property
    def retention_buckets(self) -> int:
        return max(1, math.ceil(self.retention_seconds / self.bucket_seconds))

    def bucket(self, when: float) -> int:
        return int(when // self.bucket_seconds)

    def oldest_bucket(self, now: float) -> int:
        """The first bucket still retained at `now`."""
        return self.bucket(now) - self.retention_buckets + 1

    def trim_period(self, now: float) -> int:
        """Both stores refresh a domain (trim its old buckets, and in Redis its TTLs and index
        entry) at its first flush in each period of TRIM_EVERY_BUCKETS buckets."""
        return self.bucket(now) // TRIM_EVERY_BUCKETS

    def as_dict(self) -> dict[str, float]:
        return {
            "bucket_seconds": self.bucket_seconds,
            "retention_seconds": self.retention_seconds,
            "counters_ttl_seconds": self.counters_ttl_seconds,
            "history_pages": self.history_pages,
        }


@dataclass
class DomainBatch:
    """What one worker saw of one domain since its last flush (deltas)."""

    counters: Counter[str] = field(default_factory=Counter)  # float values for timing sums
    series: defaultdict[int, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    outcomes: list[Outcome] = field(default_factory=list)
    first_article_at: float | None = None
    last_article_at: float | None = None
    polls_since_article: int = 0  # feed polls after the last article of the batch (or all)

    def absorb(self, newer: DomainBatch, history_pages: int) -> None:
        """Merge a newer batch into this (older) one: a flush that failed is retried."""
        self.counters.update(newer.counters)
        for bucket, counts in newer.series.items():
            self.series[bucket].update(counts)
        self.outcomes = (self.outcomes + newer.outcomes)[-history_pages:]
        self.first_article_at = self.first_article_at or newer.first_article_at
        if newer.last_article_at is not None:
            self.last_article_at = newer.last_article_at
            self.polls_since_article = newer.polls_since_article
        else:
            self.polls_since_article += newer.polls_since_article


Batch = dict[str, DomainBatch]


def _add(totals: dict[str, float], name: str, value: float) -> None:
    totals[name] = totals.get(name, 0) + value


def apply_to_totals(totals: dict[str, float], batch: DomainBatch, now: float) -> None:
    """The merge rules of both stores (monitoring_article_times.lua is the Redis side of the
    article times), for in-memory totals."""
    for name, value in batch.counters.items():
        _add(totals, name, value)
    totals.setdefault(FIRST_SEEN_AT, now)
    first, last = batch.first_article_at, batch.last_article_at
    if first is not None and first < totals.get(FIRST_ARTICLE_AT, math.inf):
        totals[FIRST_ARTICLE_AT] = first
    if last is not None:
        # Workers flush in any order: a batch whose last article is older than the one known
        # (another worker's) says nothing about the polls since that one.
        if last >= totals.get(LAST_ARTICLE_AT, -math.inf):
            totals[LAST_ARTICLE_AT] = last
            totals[POLLS_SINCE_ARTICLE] = batch.polls_since_article
    elif batch.polls_since_article:
        _add(totals, POLLS_SINCE_ARTICLE, batch.polls_since_article)


def recent_history(stored: list[Outcome], new: list[Outcome]) -> list[Outcome]:
    """A domain's recent page outcomes after a batch, oldest first: what the store holds (no
    URLs: only the worker that saw a page knows it), the batch's own, with URLs, at the end."""
    return stored[: len(stored) - len(new)] + new


# --- Memory ----------------------------------------------------------------------------------


class MonitorStore(Protocol):
    """Where one crawler's monitoring numbers go: `MemoryStore` (one process, snapshot file for
    `newsharvest monitor`) or `RedisStore` (shared by every worker); chosen by `open_store`."""

    async def apply(
        self, batch: Batch, now: float, want: Collection[str] = ()
    ) -> dict[str, list[Outcome]]: ...
    async def heartbeat(self, worker: str, info: dict[str, Any]) -> None: ...
    async def active_alerts(self) -> dict[str, Alert]: ...
    async def fire(self, alert: Alert) -> bool: ...
    async def resolve(self, alert: Alert, now: float) -> bool: ...
    async def domains(self) -> list[str]: ...
    async def domain_views(self, domains: Iterable[str]) -> dict[str, DomainView]: ...
    async def try_lead(self, seconds: float) -> bool: ...
    async def close(self) -> None: ...


def open_store(redis_url: str | None, keys: RedisKeys, config: StoreConfig) -> MonitorStore:
    """Redis when REDIS_URL is set (it connects lazily: Redis down now only delays the first
    flush), else memory."""
    if redis_url:
        return RedisStore(async_redis(redis_url), keys, config)
    return MemoryStore(config)


class MemoryStore:
    """One process's monitoring state; `snapshot()` is what `newsharvest monitor` reads."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self.totals: dict[str, dict[str, float]] = {}
        self.series: dict[str, dict[int, Counter[str]]] = {}
        self.pages: dict[str, deque[Outcome]] = {}
        self.last_seen: dict[str, float] = {}
        self.alerts: dict[str, Alert] = {}
        self.alert_log: deque[dict[str, Any]] = deque(maxlen=ALERT_LOG_LENGTH)
        self.workers: dict[str, dict[str, Any]] = {}
        self._refreshed: dict[str, int] = {}  # domain -> trim period of its last refresh

    async def apply(
        self, batch: Batch, now: float, want: Collection[str] = ()
    ) -> dict[str, list[Outcome]]:
        """Merge one batch; return the recent page outcomes of the `want` domains."""
        oldest, period = self.config.oldest_bucket(now), self.config.trim_period(now)
        histories: dict[str, list[Outcome]] = {}
        for domain, delta in batch.items():
            apply_to_totals(self.totals.setdefault(domain, {}), delta, now)
            series = self.series.setdefault(domain, {})
            for bucket, counts in delta.series.items():
                series.setdefault(bucket, Counter()).update(counts)
            self.last_seen[domain] = now
            if delta.outcomes:
                pages = self.pages.setdefault(domain, deque(maxlen=self.config.history_pages))
                stored = [Outcome(o.null, o.chars) for o in delta.outcomes]  # as Redis keeps them
                pages.extend(stored)
                if domain in want:
                    histories[domain] = recent_history(list(pages), delta.outcomes)
            if self._refreshed.get(domain) != period:  # as RedisStore does
                self._refreshed[domain] = period
                for bucket in [b for b in series if b < oldest]:
                    del series[bucket]
        return histories

    async def heartbeat(self, worker: str, info: dict[str, Any]) -> None:
        self.workers[worker] = info

    async def active_alerts(self) -> dict[str, Alert]:
        return dict(self.alerts)

    async def fire(self, alert: Alert) -> bool:
        if alert.key in self.alerts:
            return False
        self.alerts[alert.key] = alert
        self.alert_log.append(alert_event("fired", alert, alert.fired_at))
        return True

    async def resolve(self, alert: Alert, now: float) -> bool:
        if self.alerts.pop(alert.key, None) is None:
            return False
        self.alert_log.append(alert_event("resolved", alert, now))
        return True

    async def domains(self) -> list[str]:
        return sorted(self.totals)

    async def domain_views(self, domains: Iterable[str]) -> dict[str, DomainView]:
        return {
            domain: DomainView(self.totals.get(domain, {}), self.series.get(domain, {}))
            for domain in domains
        }

    async def try_lead(self, seconds: float) -> bool:
        return True  # one process: always the one that evaluates

    async def close(self) -> None:
        return None

    def snapshot(self, now: float, running: bool) -> dict[str, Any]:
        """A JSON-ready copy (taken on the reactor thread; serialised elsewhere)."""
        return {
            "version": SNAPSHOT_VERSION,
            "written_at": now,
            "running": running,
            "config": self.config.as_dict(),
            "domains": {
                domain: {
                    "counters": dict(totals),
                    "series": {str(b): dict(c) for b, c in self.series.get(domain, {}).items()},
                }
                for domain, totals in self.totals.items()
            },
            "alerts": [alert.__dict__.copy() for alert in self.alerts.values()],
            "alert_log": list(self.alert_log),
            "workers": dict(self.workers),
        }


def alert_event(event: str, alert: Alert, at: float) -> dict[str, Any]:
    return {"event": event, "at": at, **alert.__dict__}


def write_snapshot(path: Path, snapshot: dict[str, Any]) -> None:
    """Atomically replace `path` (readers never see a half-written file)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(snapshot, separators=(",", ":")), encoding="utf-8")
    os.replace(temporary, path)


# --- Redis -----------------------------------------------------------------------------------


class RedisStore:
    """Monitoring state shared by every worker; all I/O is asyncio (never blocks the reactor)."""

    def __init__(self, client: redis.asyncio.Redis, keys: RedisKeys, config: StoreConfig) -> None:
        self.client = client
        self.keys = keys
        self.config = config
        self._trim = register_lua(client, "pipelines.monitoring", TRIM_SERIES_LUA)
        self._incr = register_lua(client, "pipelines.monitoring", INCREMENT_FIELDS_LUA)
        self._article_times = register_lua(client, "pipelines.monitoring", ARTICLE_TIMES_LUA)
        self._refreshed: dict[str, int] = {}  # domain -> trim period of its last TTL refresh
        self._refreshed_global: int | None = None
        self._touched: list[str] = []  # domains refreshed this flush, for the domain index
        self._scripts_loaded = False
        self._heartbeats = 0

    async def apply(
        self, batch: Batch, now: float, want: Collection[str] = ()
    ) -> dict[str, list[Outcome]]:
        """Write one worker's batch; return the shared recent page outcomes of the `want`
        domains, oldest first, the batch's own (with URLs) at the end. On one Redis server the
        batch is one MULTI/EXEC round trip; on a Redis Cluster each domain's writes are one
        MULTI/EXEC on the node of its hash slot ({domain}), all sent at once."""
        plan = _FlushPlan.of(self.config, now)
        if not is_cluster_client(self.client):
            # As a context: a pipeline that fails while loading its scripts still gives its
            # connection back (else redis-py logs "Unclosed Pipeline client").
            async with self.client.pipeline(transaction=True) as pipe:
                reads = [await self._queue_domain(pipe, plan, d, batch[d], want) for d in batch]
                self._queue_global(pipe, plan)
                replies = await pipe.execute()
            return self._histories(batch, [(replies, read) for read in reads])
        await self._load_scripts_on_every_node()
        flushes = [self._flush_domain(plan, domain, batch[domain], want) for domain in batch]
        try:
            results = await asyncio.gather(*flushes)
        except redis.exceptions.NoScriptError:
            self._scripts_loaded = False  # a master restarted or failed over: load them again
            raise
        await self._flush_global(plan)  # after the domains: their refreshes name the domains
        return self._histories(batch, results)

    async def _flush_domain(
        self, plan: _FlushPlan, domain: str, delta: DomainBatch, want: Collection[str]
    ) -> tuple[list[Any], tuple[int, str] | None]:
        async with self.client.pipeline(transaction=True) as pipe:
            read = await self._queue_domain(pipe, plan, domain, delta, want)
            return await pipe.execute(), read

    async def _flush_global(self, plan: _FlushPlan) -> None:
        async with self.client.pipeline(transaction=False) as pipe:
            if self._queue_global(pipe, plan):
                await pipe.execute()

    async def _load_scripts_on_every_node(self) -> None:
        """A cluster pipeline sends EVALSHA only (no load-on-NOSCRIPT): load the scripts on
        every master first (SCRIPT LOAD goes to all of them), once per store."""
        if not self._scripts_loaded:
            for script in (self._incr, self._article_times, self._trim):
                await self.client.script_load(script.script)
            self._scripts_loaded = True

    async def _script(self, pipe: Any, script: Any, keys: list[str], args: list[Any]) -> None:
        """Queue one script call in `pipe`."""
        if is_cluster_client(self.client):
            pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
        else:
            await script(keys=keys, args=args, client=pipe)  # queued; loaded if missing

    async def _queue_domain(
        self,
        pipe: Any,
        plan: _FlushPlan,
        domain: str,
        delta: DomainBatch,
        want: Collection[str],
    ) -> tuple[int, str] | None:
        """Queue one domain's writes (keys of its hash slot only); (index of the LRANGE reply,
        domain) when its shared page history is wanted back."""
        keys, config = self.keys, self.config
        totals, series = keys.monitor_counters(domain), keys.monitor_series(domain)
        increments = [part for item in delta.counters.items() for part in item]
        if increments:
            await self._script(pipe, self._incr, [totals], increments)
        if times := _article_times(delta):
            await self._script(pipe, self._article_times, [totals], times)
        bucketed = [
            part
            for bucket, counts in delta.series.items()
            for name, value in counts.items()
            for part in (f"{bucket}:{name}", value)
        ]
        if bucketed:
            await self._script(pipe, self._incr, [series], bucketed)
        pages = keys.monitor_pages(domain)
        if delta.outcomes:
            pipe.rpush(pages, *(outcome.encode() for outcome in delta.outcomes))
            pipe.ltrim(pages, -config.history_pages, -1)
        if self._refreshed.get(domain) != plan.period:
            # Once per trim period, not every flush: TTLs, the domain index, old buckets.
            self._refreshed[domain] = plan.period
            pipe.hsetnx(totals, FIRST_SEEN_AT, plan.now)
            pipe.expire(totals, plan.totals_ttl)
            pipe.expire(series, plan.series_ttl)
            pipe.expire(pages, plan.totals_ttl)
            self._touched.append(domain)  # the domain index (another slot): _queue_global
            await self._script(pipe, self._trim, [series], [plan.oldest])
        if delta.outcomes and domain in want:
            read = (len(pipe), domain)
            pipe.lrange(pages, 0, -1)
            return read
        return None

    def _queue_global(self, pipe: Any, plan: _FlushPlan) -> bool:
        """Queue the writes to the keys all domains share; False when there are none."""
        queued = bool(self._touched)
        if self._touched:
            pipe.zadd(self.keys.monitor_domains(), dict.fromkeys(self._touched, plan.now))
            self._touched = []
        if self._refreshed_global != plan.period:
            self._refreshed_global = plan.period
            # Domains silent for longer than the totals live are forgotten.
            pipe.zremrangebyscore(self.keys.monitor_domains(), "-inf", plan.now - plan.totals_ttl)
            pipe.hset(self.keys.monitor_meta(), mapping=self.config.as_dict())  # bucket layout
            queued = True
        return queued

    def _histories(
        self, batch: Batch, results: list[tuple[list[Any], tuple[int, str] | None]]
    ) -> dict[str, list[Outcome]]:
        histories: dict[str, list[Outcome]] = {}
        for replies, read in results:
            if read is None:
                continue
            index, domain = read
            stored = [Outcome.decode(item) for item in replies[index]]
            # Our pushes are the tail (MULTI/EXEC): keep their URLs for the alert message.
            histories[domain] = recent_history(stored, batch[domain].outcomes[-len(stored) :])
        return histories

    async def heartbeat(self, worker: str, info: dict[str, Any]) -> None:
        key = self.keys.monitor_workers()
        await self.client.hset(key, worker, json.dumps(info))
        self._heartbeats += 1
        if self._heartbeats % PRUNE_WORKERS_EVERY == 1:  # bounded: finished workers age out
            gone = [
                name
                for name, value in (await self.client.hgetall(key)).items()
                if info["flushed_at"] - json.loads(value).get("flushed_at", 0)
                > WORKER_FORGET_SECONDS
            ]
            if gone:
                await self.client.hdel(key, *gone)

    async def active_alerts(self) -> dict[str, Alert]:
        raw = await self.client.hgetall(self.keys.monitor_alerts())
        return {key.decode(): Alert.from_json(value) for key, value in raw.items()}

    async def fire(self, alert: Alert) -> bool:
        """True for the one worker that made the alert active (it logs it)."""
        created = await self.client.hsetnx(self.keys.monitor_alerts(), alert.key, alert.to_json())
        if created:
            await self._log_event(alert_event("fired", alert, alert.fired_at))
        return bool(created)

    async def resolve(self, alert: Alert, now: float) -> bool:
        removed = await self.client.hdel(self.keys.monitor_alerts(), alert.key)
        if removed:
            await self._log_event(alert_event("resolved", alert, now))
        return bool(removed)

    async def _log_event(self, event: dict[str, Any]) -> None:
        log_key = self.keys.monitor_alert_log()
        pipe = self.client.pipeline(transaction=False)
        pipe.rpush(log_key, json.dumps(event))
        pipe.ltrim(log_key, -ALERT_LOG_LENGTH, -1)
        await pipe.execute()

    async def domains(self) -> list[str]:
        return sorted(
            d.decode() for d in await self.client.zrange(self.keys.monitor_domains(), 0, -1)
        )

    async def domain_views(self, domains: Iterable[str]) -> dict[str, DomainView]:
        domains = list(domains)
        pipe = self.client.pipeline(transaction=False)
        for domain in domains:
            pipe.hgetall(self.keys.monitor_counters(domain))
            pipe.hgetall(self.keys.monitor_series(domain))
        replies = await pipe.execute()
        return {
            domain: domain_view(replies[2 * i], replies[2 * i + 1])
            for i, domain in enumerate(domains)
        }

    async def try_lead(self, seconds: float) -> bool:
        """Whether this worker runs the time rules this round (one worker per round)."""
        lock = self.keys.monitor_evaluation_lock()
        return bool(await self.client.set(lock, os.getpid(), nx=True, px=int(seconds * 1000)))

    async def close(self) -> None:
        await self.client.aclose()


@dataclass(frozen=True)
class _FlushPlan:
    """The times and TTLs one flush writes with."""

    now: float
    oldest: int
    period: int
    series_ttl: int
    totals_ttl: int

    @classmethod
    def of(cls, config: StoreConfig, now: float) -> _FlushPlan:
        # TTLs are set at a domain's refresh, once per trim period: a key must outlive the
        # period, or an active domain with a short retention would lose its series.
        refresh_seconds = (TRIM_EVERY_BUCKETS + 1) * config.bucket_seconds
        return cls(
            now=now,
            oldest=config.oldest_bucket(now),
            period=config.trim_period(now),
            series_ttl=math.ceil(config.retention_seconds + refresh_seconds),
            totals_ttl=math.ceil(max(config.counters_ttl_seconds, refresh_seconds)),
        )


def _article_times(delta: DomainBatch) -> list[Any]:
    """ARGV of monitoring_article_times.lua ("" for a time the batch has not); [] when the
    batch has nothing for it."""
    first, last = delta.first_article_at, delta.last_article_at
    if first is None and last is None and not delta.polls_since_article:
        return []
    return [
        "" if first is None else repr(first),
        "" if last is None else repr(last),
        delta.polls_since_article,
        FIRST_ARTICLE_AT,
        LAST_ARTICLE_AT,
        POLLS_SINCE_ARTICLE,
    ]


def _number(raw: bytes | str) -> float:
    value = float(raw)
    return int(value) if value.is_integer() else value


def domain_view(counters: Mapping[Any, Any], series: Mapping[Any, Any]) -> DomainView:
    """A DomainView from the raw replies of HGETALL counters / series."""
    totals = {_text(name): _number(value) for name, value in counters.items()}
    buckets: dict[int, dict[str, float]] = {}
    for name, value in series.items():
        bucket, _, counter = _text(name).partition(":")
        if bucket.isdigit():
            buckets.setdefault(int(bucket), {})[counter] = _number(value)
    return DomainView(totals, buckets)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


# --- Reading (the `newsharvest monitor` side) --------------------------------------------


@dataclass
class MonitorState:
    """Everything the dashboard shows, from either store."""

    source: str  # "redis://..." or the snapshot path
    config: StoreConfig
    domains: dict[str, DomainView]
    alerts: list[Alert]
    alert_log: list[dict[str, Any]]
    workers: dict[str, dict[str, Any]]
    updated_at: float | None  # last flush any worker made
    running: bool


def read_redis(client: Any, keys: RedisKeys, source: str) -> MonitorState:
    """Read the shared state with a blocking client (the monitor command is not a reactor)."""
    meta = {_text(k): _number(v) for k, v in client.hgetall(keys.monitor_meta()).items()}
    config = StoreConfig(**{k: v for k, v in meta.items() if k in StoreConfig.__dataclass_fields__})
    domains = [_text(d) for d in client.zrange(keys.monitor_domains(), 0, -1)]
    pipe = client.pipeline(transaction=False)
    for domain in domains:
        pipe.hgetall(keys.monitor_counters(domain))
        pipe.hgetall(keys.monitor_series(domain))
    pipe.hgetall(keys.monitor_alerts())
    pipe.lrange(keys.monitor_alert_log(), 0, -1)
    pipe.hgetall(keys.monitor_workers())
    replies = pipe.execute()
    views = {d: domain_view(replies[2 * i], replies[2 * i + 1]) for i, d in enumerate(domains)}
    alerts_raw, log_raw, workers_raw = replies[-3:]
    workers = {_text(k): json.loads(v) for k, v in workers_raw.items()}
    now = time.time()
    flushed = [w.get("flushed_at", 0) for w in workers.values()]
    return MonitorState(
        source=source,
        config=config,
        domains=views,
        alerts=[Alert.from_json(v) for v in alerts_raw.values()],
        alert_log=[json.loads(item) for item in log_raw],
        workers=workers,
        updated_at=max(flushed, default=None),
        running=any(now - at < WORKER_STALE_SECONDS and not w.get("closed")
                    for w, at in zip(workers.values(), flushed, strict=True)),
    )  # fmt: skip


def read_snapshot(path: Path) -> MonitorState:
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("version") != SNAPSHOT_VERSION:
        raise ValueError(f"{path}: unknown monitor snapshot version {data.get('version')!r}")
    config = StoreConfig(**data["config"])
    domains = {
        domain: DomainView(
            value["counters"], {int(b): counts for b, counts in value["series"].items()}
        )
        for domain, value in data["domains"].items()
    }
    return MonitorState(
        source=str(path),
        config=config,
        domains=domains,
        alerts=[Alert(**alert) for alert in data["alerts"]],
        alert_log=data["alert_log"],
        workers=data["workers"],
        updated_at=data["written_at"],
        # A crawl that died without closing stops refreshing its snapshot.
        running=data["running"] and time.time() - data["written_at"] < WORKER_STALE_SECONDS,
    )
