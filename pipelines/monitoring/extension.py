"""The monitoring extension: per-domain counters, timings and alerts, cheap enough to leave on.

Hot path: every `inc_domain`/`observe_domain` call and the item/response signals only add to an
in-memory batch (a few dict operations). Every MONITOR_FLUSH_SECONDS the batch goes to the store
in one round trip (Redis MULTI/EXEC, or memory), the page rules run on the domains that got
new pages, and every MONITOR_EVALUATE_SECONDS the time rules run on a slice of all domains.
A store that fails (Redis down) never stops the crawl: the batch is kept and retried (the item
stages and the harvest ledger tell the Redis gate of crawler/core/outage.py, which pauses the
crawl).
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import os
import socket
import statistics
import threading
import time
from collections import Counter, deque
from collections.abc import Sequence
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Request, Response
from scrapy.utils.defer import deferred_from_coro
from twisted.internet import task

from crawler.core.connection import redis_url
from crawler.core.domainstats import (
    ARTICLES,
    DOMAIN_PREFIX,
    FETCH_TIME,
    MONITOR_TICKET,
    NULL,
    observe_domain,
    watch_domains,
)
from crawler.core.failures import FailureLog
from crawler.core.keys import RedisKeys
from crawler.core.outage import RedisGate, is_connection_error
from crawler.core.paths import state_dir
from crawler.core.urls import publisher_domain
from crawler.core.worker import worker_identity
from pipelines.monitoring.alerts import (
    PAGE_KINDS,
    POLL_COUNTERS,
    Alert,
    DomainView,
    Outcome,
    Thresholds,
    alert_key,
    scan_pages,
    scan_time,
)
from pipelines.monitoring.backends import (
    SERIES_COUNTERS,
    SNAPSHOT_FILE,
    TIMING_PREFIX,
    Batch,
    DomainBatch,
    MemoryStore,
    MonitorStore,
    StoreConfig,
    apply_to_totals,
    open_store,
    write_snapshot,
)
from pipelines.monitoring.order import PageOrder
from pipelines.monitoring.prometheus import serve_metrics

log = logging.getLogger(__name__)

_SERIES = frozenset(SERIES_COUNTERS)
_POLLS = frozenset(POLL_COUNTERS)
INF_LABEL = "+Inf"
RECENT_LENGTHS = 64  # article lengths per domain kept locally to spot thin pages cheaply


class TimingBuckets:
    """Histogram bucket bounds of one timing and the counter names of its buckets."""

    def __init__(self, timing: str, bounds: Sequence[float]) -> None:
        self.bounds = sorted(float(b) for b in bounds)
        prefix = f"{TIMING_PREFIX}{timing}/"
        self.sum_name, self.count_name = prefix + "sum", prefix + "count"
        self.bucket_names = [f"{prefix}le/{bound:g}" for bound in self.bounds]
        self.bucket_names.append(f"{prefix}le/{INF_LABEL}")

    def bucket_name(self, seconds: float) -> str:
        return self.bucket_names[bisect.bisect_left(self.bounds, seconds)]


class MonitoringExtension:
    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        self.thresholds = Thresholds.from_settings(settings)
        self.config = StoreConfig.from_settings(settings, self.thresholds.history_pages)
        self.flush_seconds = settings.getfloat("MONITOR_FLUSH_SECONDS")
        self.evaluate_seconds = settings.getfloat("MONITOR_EVALUATE_SECONDS")
        self.evaluate_batch = settings.getint("MONITOR_EVALUATE_BATCH")
        self.snapshot_seconds = settings.getfloat("MONITOR_SNAPSHOT_SECONDS")
        self.prometheus_port = (
            settings.getint("MONITOR_PROMETHEUS_PORT")
            if settings.getbool("MONITOR_PROMETHEUS_ENABLED")
            else None
        )
        self.prometheus_address = settings.get("MONITOR_PROMETHEUS_ADDRESS")
        self.default_buckets = settings.getlist("MONITOR_TIMING_BUCKETS_SECONDS")
        self.timing_buckets: dict[str, TimingBuckets] = {
            timing: TimingBuckets(timing, bounds)
            for timing, bounds in settings.getdict("MONITOR_TIMING_BUCKETS").items()
        }
        self.redis_url = redis_url(settings)
        self.gate = RedisGate.of(crawler)
        self.keys = RedisKeys.from_settings(settings)
        self.snapshot_path = None if self.redis_url else state_dir(settings) / SNAPSHOT_FILE
        self.worker = worker_identity(settings)

        self.store: MonitorStore | None = None
        self.batch: Batch = {}
        self.retry: Batch = {}  # a batch the store refused, sent again with the next one
        self.pending_null: Counter[str] = Counter()
        # Outcomes back in fetch order (pipelines/monitoring/order.py); on when MonitoringPipeline
        # is, since it takes the tickets out of the items before the sinks and exporters.
        self.order = PageOrder(settings.getfloat("MONITOR_ORDER_MAX_WAIT_SECONDS"))
        self.ordering = False
        # True: the harvest ledger stores the article counts with each done mark (done_counts);
        # the batch then keeps them for this worker's own totals only.
        self.ledger_counts = False
        self.recent_chars: dict[str, deque[int]] = {}  # article lengths this worker saw
        # Process-local totals and alert counts: what this worker's /metrics exposes.
        self.lock = threading.Lock()
        self.totals: dict[str, dict[str, float]] = {}
        self.fired: Counter[tuple[str, str]] = Counter()
        self.active: dict[str, Alert] = {}
        self.flushes = 0
        # Counted in monitor/flush_errors; the first of each kind logged with its traceback (an
        # alert rule's bug must not read as "Redis is down"; Redis down is one line), then one
        # line per 30.
        self.flush_failures = FailureLog(log, "monitor/flush_errors",
                                         "monitoring flush failed (kept for retry)",
                                         level=logging.WARNING,
                                         plain=is_connection_error)  # fmt: skip
        self.flush_seconds_total = 0.0
        self.metrics_url: str | None = None
        self._prometheus: Any = None
        self._loop: task.LoopingCall | None = None
        self._next_evaluation = 0.0
        self._next_snapshot = 0.0
        self._evaluation_cursor = 0
        self._flushing = asyncio.Lock()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MonitoringExtension:
        if not crawler.settings.getbool("MONITOR_ENABLED"):
            raise NotConfigured("MONITOR_ENABLED is off")
        extension = cls(crawler)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(extension.item_error, signal=signals.item_error)
        crawler.signals.connect(extension.response_received, signal=signals.response_received)
        watch_domains(crawler.stats, extension)
        return extension

    # --- hot path: events into the batch -----------------------------------------------------

    def _domain(self, domain: str) -> DomainBatch:
        batch = self.batch.get(domain)
        if batch is None:
            batch = self.batch[domain] = DomainBatch()
        return batch

    def domain_inc(self, domain: str, counter: str, count: int) -> None:
        batch = self._domain(domain)
        batch.counters[counter] += count
        if counter in _SERIES:
            batch.series[int(time.time() // self.config.bucket_seconds)][counter] += count
            if counter in _POLLS:
                batch.polls_since_article += count
            elif counter == NULL:
                self.pending_null[domain] += count  # its item_dropped names the page

    def domain_observe(self, domain: str, timing: str, seconds: float) -> None:
        buckets = self.timing_buckets.get(timing)
        if buckets is None:
            buckets = self.timing_buckets[timing] = TimingBuckets(timing, self.default_buckets)
        counters = self._domain(domain).counters
        counters[buckets.sum_name] += float(seconds)
        counters[buckets.count_name] += 1
        counters[buckets.bucket_name(seconds)] += 1

    def done_counts(self, item: Any) -> list[tuple[str, str]]:
        """The store fields an output article adds 1 to (its domain's total and time bucket),
        made by the ledger with the article's done mark."""
        domain = item.get("domain") if hasattr(item, "get") else None
        if not domain:
            return []
        bucket = self.config.bucket(time.time())
        return [
            (self.keys.monitor_counters(domain), ARTICLES),
            (self.keys.monitor_series(domain), f"{bucket}:{ARTICLES}"),
        ]

    def page_ticket(self, domain: str) -> int | None:
        """A page entering the item pipeline: its place in the domain's order (see order.py)."""
        return self.order.ticket(domain) if self.ordering else None

    def article_done(self, item: Any) -> None:
        """An article whose content is final (see MonitoringPipeline)."""
        domain = item.get("domain") if hasattr(item, "get") else None
        if not domain:
            return
        now = time.time()
        batch = self._domain(domain)
        self._settle(item, domain, Outcome(False, len(item.get("text") or ""), item.get("url")))
        if batch.first_article_at is None:
            batch.first_article_at = now
        batch.last_article_at = now
        batch.polls_since_article = 0

    def item_dropped(self, item: Any, exception: BaseException) -> None:
        domain = item.get("domain") if hasattr(item, "get") else None
        if not domain:
            return
        outcome = None  # a duplicate, say: not a page outcome, but it settles its ticket
        if self.pending_null[domain] > 0:
            self.pending_null[domain] -= 1
            outcome = Outcome(True, 0, item.get("url"))
        self._settle(item, domain, outcome)

    def item_error(self, item: Any) -> None:
        domain = item.get("domain") if hasattr(item, "get") else None
        if domain:
            self._settle(item, domain, None)

    def _settle(self, item: Any, domain: str, outcome: Outcome | None) -> None:
        ticket = item.pop(MONITOR_TICKET, None)
        if ticket is None:  # no ordering (MonitoringPipeline off): judged as it comes
            released = [] if outcome is None else [outcome]
        else:
            released = self.order.settle(domain, ticket, outcome, time.time())
        self._release({domain: released})

    def _release(self, released: dict[str, list[Outcome]]) -> None:
        for domain, outcomes in released.items():
            for outcome in outcomes:
                self._record(self._domain(domain), outcome)

    @staticmethod
    def _record(batch: DomainBatch, outcome: Outcome) -> None:
        """A page for the page rules, in the order they judge pages: the order the pages entered
        the item pipeline (logged at DEBUG; Scrapy's own item log lines follow the order the
        stages finish them)."""
        batch.outcomes.append(outcome)
        log.debug("page outcome %s: %s", "NULL" if outcome.null else "article", outcome.url)

    def response_received(self, response: Response, request: Request) -> None:
        latency = request.meta.get("download_latency")
        if latency is not None:
            observe_domain(self.stats, publisher_domain(response.url), FETCH_TIME, latency)

    # --- lifecycle -----------------------------------------------------------------------------

    async def spider_opened(self) -> None:
        self.store = open_store(self.redis_url, self.keys, self.config)
        if self.prometheus_port is not None:
            self._start_prometheus()
        self._loop = task.LoopingCall(lambda: deferred_from_coro(self.flush()))
        self._loop.start(self.flush_seconds, now=False)
        where = (self.redis_url and f"Redis ({self.keys.prefix}:mon:*)") or self.snapshot_path
        log.info("monitoring per-domain health -> %s", where)

    def _start_prometheus(self) -> None:
        try:
            self._prometheus, port = serve_metrics(self, self.prometheus_address,
                                                   self.prometheus_port)  # fmt: skip
        except OSError as error:
            log.warning("Prometheus endpoint not started on %s:%s: %s",
                        self.prometheus_address, self.prometheus_port, error)  # fmt: skip
            return
        self.metrics_url = f"http://{self.prometheus_address}:{port}/metrics"
        self.stats.set_value("monitor/prometheus_port", port)
        log.info("Prometheus metrics at %s", self.metrics_url)

    async def spider_closed(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self.store is not None:
            if self.gate is not None and not self.gate.reachable:
                if unsent := len(self.batch) + len(self.retry):
                    log.warning("monitoring: the last counts of %d domain(s) are not stored "
                                "(Redis unreachable)", unsent)  # fmt: skip
            else:
                await self.flush(final=True)
            await self.store.close()
        if self._prometheus is not None:
            self._prometheus.shutdown()
            self._prometheus.server_close()
        watch_domains(self.stats, None)

    # --- flush: batch -> store -> alert rules --------------------------------------------------

    async def flush(self, final: bool = False) -> None:
        # The final flush at close may start while a timed one awaits Redis: one at a time.
        async with self._flushing:
            await self._flush(final)

    async def _flush(self, final: bool) -> None:
        started = time.perf_counter()
        now = time.time()
        self._release(self.order.drain() if final else self.order.overdue(now))
        fresh, self.batch = self.batch, {}
        with self.lock:
            for domain, delta in fresh.items():
                apply_to_totals(self.totals.setdefault(domain, {}), delta, now)
        self._timings_to_stats(fresh)
        if self.ledger_counts:
            _strip_articles(fresh)
        outgoing, self.retry = self.retry, {}
        for domain, delta in fresh.items():
            if domain in outgoing:
                outgoing[domain].absorb(delta, self.config.history_pages)
            else:
                outgoing[domain] = delta
        assert self.store is not None
        try:
            suspects = {d for d, delta in outgoing.items() if self._suspicious(d, delta.outcomes)}
            histories = await self.store.apply(outgoing, now, want=suspects)
            self.active = await self.store.active_alerts()
            for domain, history in histories.items():
                await self._judge_pages(domain, history, len(outgoing[domain].outcomes), now)
            if final or now >= self._next_evaluation:
                self._next_evaluation = now + self.evaluate_seconds
                await self._judge_time(now)
            await self.store.heartbeat(self.worker, self._heartbeat(now, final))
        except Exception as error:  # monitoring must never stop the harvest
            self.retry = outgoing
            self.flush_failures.report(self.stats, error)
        if isinstance(self.store, MemoryStore) and (final or now >= self._next_snapshot):
            self._next_snapshot = now + self.snapshot_seconds
            await self._write_snapshot(now, running=not final)
        elapsed = time.perf_counter() - started
        self.flushes += 1
        self.flush_seconds_total += elapsed
        self.stats.inc_value("monitor/flushes")
        self.stats.inc_value("monitor/flush_seconds", elapsed)

    def _timings_to_stats(self, fresh: Batch) -> None:
        """Timing sums and counts into Scrapy stats, as observe_domain would have written them."""
        for domain, delta in fresh.items():
            totals = self.totals[domain]
            for name in delta.counters:
                if name.startswith(TIMING_PREFIX) and name.endswith(("/sum", "/count")):
                    self.stats.set_value(f"{DOMAIN_PREFIX}{domain}/{name}", totals[name])

    def _suspicious(self, domain: str, outcomes: list[Outcome]) -> bool:
        """Whether the page rules must look at the domain now: a new NULL or thin page, or an
        active page alert to resolve. Most flushes of a healthy domain skip the rules (and, with
        Redis, reading the shared history). A jump is first judged at a bad page, which is where
        a break shows."""
        if not outcomes:
            return False
        if any(self.active.get(alert_key(domain, kind)) for kind in PAGE_KINDS):
            return True
        lengths = self.recent_chars.get(domain)
        if lengths is None:
            lengths = self.recent_chars[domain] = deque(maxlen=RECENT_LENGTHS)
        thin_below = self.thresholds.thin_ratio * statistics.median_low(lengths) if lengths else 0
        suspicious = any(o.null or o.chars < thin_below for o in outcomes)
        lengths.extend(o.chars for o in outcomes if not o.null)
        return suspicious

    async def _judge_pages(
        self, domain: str, history: list[Outcome], n_new: int, now: float
    ) -> None:
        active = self._active_for(domain)
        fired, resolved = scan_pages(domain, history, n_new, active, self.thresholds, now)
        await self._apply_verdicts(fired, resolved, now)

    async def _judge_time(self, now: float) -> None:
        assert self.store is not None
        if not await self.store.try_lead(self.evaluate_seconds):
            return  # another worker runs the time rules this round
        domains = await self.store.domains()
        if not domains:
            return
        start = self._evaluation_cursor % len(domains)
        chunk = (domains[start:] + domains[:start])[: self.evaluate_batch]
        self._evaluation_cursor = start + len(chunk)
        views: dict[str, DomainView] = await self.store.domain_views(chunk)
        for domain, view in views.items():
            fired, resolved = scan_time(domain, view, self._active_for(domain), self.thresholds,
                                        now, self.config.bucket_seconds)  # fmt: skip
            await self._apply_verdicts(fired, resolved, now)

    def _active_for(self, domain: str) -> dict[str, Alert]:
        return {a.kind: a for a in self.active.values() if a.domain == domain}

    async def _apply_verdicts(self, fired: list[Alert], resolved: list[Alert], now: float) -> None:
        assert self.store is not None
        for alert in fired:
            self.active[alert.key] = alert
            if await self.store.fire(alert):
                with self.lock:
                    self.fired[(alert.domain, alert.kind)] += 1
                self.stats.inc_value(f"monitor/alerts/{alert.kind}")
                where = f" (first at {alert.url})" if alert.url else ""
                log.warning("ALERT %s %s: %s%s", alert.kind, alert.domain, alert.message, where)
        for alert in resolved:
            self.active.pop(alert.key, None)
            if await self.store.resolve(alert, now):
                log.warning("RESOLVED %s %s (fired %s)", alert.kind, alert.domain,
                            time.strftime("%H:%M:%S", time.localtime(alert.fired_at)))  # fmt: skip

    def _heartbeat(self, now: float, final: bool) -> dict[str, Any]:
        return {
            "flushed_at": now,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "metrics_url": self.metrics_url,
            "closed": final,
            "items": self.stats.get_value("item_scraped_count", 0),
        }

    async def _write_snapshot(self, now: float, running: bool) -> None:
        assert isinstance(self.store, MemoryStore) and self.snapshot_path is not None
        snapshot = self.store.snapshot(now, running)  # copied here, serialised off the reactor
        try:
            await asyncio.to_thread(write_snapshot, self.snapshot_path, snapshot)
        except OSError as error:
            log.warning("cannot write the monitoring snapshot %s: %s", self.snapshot_path, error)

    # --- for the Prometheus collector (another thread) ---------------------------------------

    def metrics_view(self) -> tuple[dict[str, dict[str, float]], dict[tuple[str, str], int],
                                    list[Alert], dict[str, float]]:  # fmt: skip
        with self.lock:
            totals = {domain: dict(values) for domain, values in self.totals.items()}
            fired = dict(self.fired)
        monitor = {
            "flushes": self.flushes,
            "flush_errors": self.flush_failures.count,
            "flush_seconds": self.flush_seconds_total,
        }
        return totals, fired, list(self.active.values()), monitor


def _strip_articles(batch: Batch) -> None:
    """Take the article counts out of a batch bound for the store (the ledger stored them)."""
    for delta in batch.values():
        delta.counters.pop(ARTICLES, None)
        for counts in delta.series.values():
            counts.pop(ARTICLES, None)
