"""`newsharvest monitor`: the per-domain health dashboard (one HTML page + a JSON API).

Plain HTML, JavaScript and inline SVG served by the standard library: no build step, no CDN.
The page polls `/api/state`, which is computed from the shared monitoring state: Redis when the
crawlers use it, else the snapshot a local crawl writes to `<state dir>/monitor.json`.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from crawler.core.domainstats import DUPLICATES, FILTERED
from crawler.core.failures import FailureLog
from pipelines.monitoring.alerts import DomainView, Thresholds
from pipelines.monitoring.backends import (
    LAST_ARTICLE_AT,
    SNAPSHOT_FILE,
    MonitorState,
    StoreConfig,
    read_redis,
    read_snapshot,
)

log = logging.getLogger(__name__)

CHART_POINTS = 60  # about this many points per chart at most (adjacent buckets are merged)
ALERT_LOG_SHOWN = 50
STATE_CACHE_SECONDS = 1.0  # several tabs or a fast refresh never hammer Redis
TABLE_COUNTERS = ("fetched", "articles", "null", DUPLICATES, "errors", "feeds/polled", "feeds/304",
                  FILTERED)  # fmt: skip
# A yield per hour needs this much crawling of the domain within the window: from less, it is
# mostly the first polls' backlog fetched in a burst (a demo's 8 articles in 1 s made "28,800
# /h"). Below it the table shows the count and the span it was counted over instead.
RATE_MIN_SECONDS = 15 * 60.0


# --- The numbers the page shows ------------------------------------------------------------


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole > 0 else None


def _mean(view: DomainView, timing: str) -> float | None:
    counters = view.counters
    return _ratio(
        counters.get(f"seconds/{timing}/sum", 0), counters.get(f"seconds/{timing}/count", 0)
    )


# Chart steps a person reads at a glance. The step is the smallest of these (in whole time
# buckets) that fits the span shown in CHART_POINTS points: 5 s over 5 minutes, 1 min over an
# hour, 1 h over two days.
NICE_STEPS_SECONDS = (
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
    3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400,
)  # fmt: skip
# The spans the page offers (those within MONITOR_RETENTION_SECONDS), besides everything retained.
SPAN_CHOICES_SECONDS = (300, 900, 3600, 6 * 3600, 24 * 3600, 7 * 86400)


def chart_step(span_buckets: int, bucket_seconds: float) -> int:
    """Buckets per chart point: the smallest nice step that shows `span_buckets` in at most
    CHART_POINTS points (one more when the first point is moved back to a round time)."""
    for seconds in NICE_STEPS_SECONDS:
        step = max(1, math.ceil(seconds / bucket_seconds - 1e-9))  # whole buckets
        if math.ceil(span_buckets / step) <= CHART_POINTS:
            return step
    return max(1, math.ceil(span_buckets / CHART_POINTS))


def shown_buckets(
    state: MonitorState, now: float, span_seconds: float | None = None
) -> tuple[int, int] | None:
    """(first, last) bucket of the window shown: the last `span_seconds` (at most the
    retention), or with None everything retained from the first bucket with data (None when
    there is no data)."""
    config = state.config
    buckets = [b for view in state.domains.values() for b in view.series]
    last = config.bucket(now) if state.running or not buckets else max(buckets)
    oldest = last - config.retention_buckets + 1
    if span_seconds is not None:
        span = max(1, math.ceil(span_seconds / config.bucket_seconds - 1e-9))
        return max(oldest, last - span + 1), last
    if not buckets:
        return None
    return max(min(buckets), oldest), last


def chart_axis(
    state: MonitorState, now: float, span_seconds: float | None = None
) -> tuple[int, int, int]:
    """(first bucket, number of points, buckets per point), shared by every domain's chart:
    the window shown, its first point moved back to a round time (bars stay put on refresh)."""
    config = state.config
    shown = shown_buckets(state, now, span_seconds)
    if shown is None:
        return config.bucket(now), 0, 1
    first, last = shown
    step = chart_step(last - first + 1, config.bucket_seconds)
    first = max(last - config.retention_buckets + 1, first - first % step)
    return first, math.ceil((last - first + 1) / step), step


def domain_row(
    domain: str,
    view: DomainView,
    config: StoreConfig,
    axis: tuple[int, int, int],
    now: float,
    active_until: float,
    shown: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """One table row: counts and rates over the window shown (buckets `shown`, first and last),
    yield per hour of crawling within it (up to `active_until`: now while a crawl runs, else
    its last flush) when that crawling lasted RATE_MIN_SECONDS, else None (`yield_seconds`
    says how long it lasted); the chart over `axis`."""
    first, points, step = axis
    window_first, window_last = shown or (first, first + points * step - 1)
    window = dict.fromkeys(TABLE_COUNTERS, 0.0)
    chart = {name: [0] * points for name in ("articles", "null", "fetched")}
    for bucket, counts in view.series.items():
        if window_first <= bucket <= window_last:
            for name in TABLE_COUNTERS:
                window[name] += counts.get(name, 0)
        index = (bucket - first) // step
        if 0 <= index < points:
            for name, values in chart.items():
                values[index] += int(counts.get(name, 0))
    counters = view.counters
    seen_since = counters.get("first_seen_at", now)
    shown_seconds = (window_last - window_first + 1) * config.bucket_seconds
    crawled = max(config.bucket_seconds, min(shown_seconds, active_until - seen_since))
    last_article = counters.get(LAST_ARTICLE_AT)
    fetched, null = window["fetched"], window["null"]
    requests = fetched + window["feeds/polled"] + window["errors"]
    return {
        "domain": domain,
        **{name.replace("/", "_"): int(value) for name, value in window.items()},
        "yield_per_hour": window["articles"] * 3600 / crawled
        if crawled >= RATE_MIN_SECONDS
        else None,
        "yield_seconds": crawled,  # the crawling the yield is counted over
        "null_rate": _ratio(null, fetched),
        "duplicate_rate": _ratio(window[DUPLICATES], fetched - null),
        "error_rate": _ratio(window["errors"], requests),
        "staleness_seconds": now - last_article if last_article else None,
        "fetch_seconds_mean": _mean(view, "fetch"),
        "extraction_seconds_mean": _mean(view, "extraction"),
        "totals": {k: v for k, v in counters.items() if not k.startswith("seconds/")},
        "chart": chart,
        "alerts": [],
    }


def dashboard_state(
    state: MonitorState, now: float | None = None, span_seconds: float | None = None
) -> dict[str, Any]:
    """The JSON the page renders: the last `span_seconds`, or everything retained (None)."""
    now = time.time() if now is None else now
    config = state.config
    axis = chart_axis(state, now, span_seconds)
    shown = shown_buckets(state, now, span_seconds)
    until = now if state.running else (state.updated_at or now)
    rows = {
        domain: domain_row(domain, view, config, axis, now, until, shown)
        for domain, view in state.domains.items()
    }
    alerts = sorted(state.alerts, key=lambda a: (-a.fired_at, a.domain))
    for alert in alerts:
        if alert.domain in rows:
            rows[alert.domain]["alerts"].append(alert.kind)
    return {
        "generated_at": now,
        "source": state.source,
        "running": state.running,
        "updated_at": state.updated_at,
        "bucket_seconds": config.bucket_seconds,
        "retention_seconds": config.retention_seconds,
        "span_seconds": span_seconds,  # asked for; None = everything retained
        "rate_min_seconds": RATE_MIN_SECONDS,
        "spans": [span for span in SPAN_CHOICES_SECONDS if span < config.retention_seconds],
        # What every count and rate covers: the span asked for, or since the first data.
        "window_seconds": (shown[1] - shown[0] + 1) * config.bucket_seconds if shown else 0.0,
        "chart": {
            "start": axis[0] * config.bucket_seconds,
            "points": axis[1],
            "step_seconds": axis[2] * config.bucket_seconds,
        },
        "workers": workers_shown(state.workers),
        "alerts": [alert.__dict__ for alert in alerts],
        "alert_log": list(reversed(state.alert_log[-ALERT_LOG_SHOWN:])),
        "domains": sorted(rows.values(), key=lambda row: (-len(row["alerts"]), row["domain"])),
    }


def workers_shown(workers: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every worker by its name (WORKER_ID, else host:pid), running ones first."""
    shown = [{"id": worker, **info} for worker, info in workers.items()]
    return sorted(shown, key=lambda worker: (bool(worker.get("closed")), worker["id"]))


# --- Where the state comes from ------------------------------------------------------------


class StateSource:
    """Reads the monitoring state from Redis or from a local crawl's snapshot."""

    def __init__(
        self, redis_url: str | None, prefix: str, state_dir: Path, config: StoreConfig
    ) -> None:
        self.redis_url = redis_url
        self.config = config  # what a crawl that left no snapshot yet would use
        self.prefix = prefix
        self.snapshot = state_dir / SNAPSHOT_FILE
        self._client: Any = None

    @classmethod
    def from_settings(cls, settings: Any) -> StateSource:
        from crawler.core.connection import redis_url

        directory = Path(settings.get("STATE_DIR"))
        config = StoreConfig.from_settings(
            settings, Thresholds.from_settings(settings).history_pages
        )
        return cls(redis_url(settings), settings.get("REDIS_KEY_PREFIX"), directory, config)

    @property
    def description(self) -> str:
        return f"{self.redis_url} (prefix {self.prefix})" if self.redis_url else str(self.snapshot)

    def read(self) -> MonitorState:
        if self.redis_url:
            from crawler.core.connection import sync_redis
            from crawler.core.keys import RedisKeys

            if self._client is None:
                self._client = sync_redis(self.redis_url)
            return read_redis(self._client, RedisKeys(self.prefix), self.description)
        if not self.snapshot.exists():
            return MonitorState(self.description, self.config, {}, [], [], {}, None, False)
        return read_snapshot(self.snapshot)


# --- The web server ------------------------------------------------------------------------


def page_html() -> bytes:
    return resources.files("pipelines.monitoring").joinpath("dashboard.html").read_bytes()


class DashboardServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, address: tuple[str, int], read_state: Callable[[float | None], dict[str, Any]]
    ) -> None:
        """`read_state(span_seconds)`: the page's JSON for the last span (None: all retained)."""
        super().__init__(address, DashboardHandler)
        # Every page refresh asks again: the first failure of a kind is logged with its
        # traceback, then one line per 30.
        self.read_failures = FailureLog(log, "dashboard/read_errors",
                                        "cannot read the monitoring state",
                                        level=logging.WARNING)  # fmt: skip
        self.read_state = read_state
        self.page = page_html()
        self._lock = threading.Lock()
        self._cached: dict[float | None, tuple[float, bytes]] = {}

    def state_json(self, span_seconds: float | None = None) -> bytes:
        with self._lock:
            now = time.monotonic()
            cached = self._cached.get(span_seconds)
            if cached is None or now - cached[0] > STATE_CACHE_SECONDS:
                body = json.dumps(self.read_state(span_seconds), separators=(",", ":")).encode()
                if len(self._cached) >= len(SPAN_CHOICES_SECONDS) + 1:
                    self._cached.clear()  # bounded: odd spans in URLs do not pile up
                cached = self._cached[span_seconds] = (now, body)
            return cached[1]


def span_from_query(query: str) -> float | None:
    """`span=SECONDS` of an /api/state query; None (everything retained) when absent or not a
    positive number: a bad link shows the whole window, not an error."""
    values = parse_qs(query).get("span", [])
    try:
        span = float(values[0]) if values else math.nan
    except ValueError:
        return None
    return span if math.isfinite(span) and span > 0 else None


class DashboardHandler(BaseHTTPRequestHandler):
    server: DashboardServer
    server_version = "newsharvest-monitor"

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        if path in ("/", "/index.html"):
            self._send(200, "text/html; charset=utf-8", self.server.page)
        elif path == "/api/state":
            try:
                body = self.server.state_json(span_from_query(query))
            except Exception as error:  # the page shows it; the server keeps serving
                self.server.read_failures.report(None, error)
                body = json.dumps({"error": f"cannot read the monitoring state: {error}"}).encode()
                self._send(503, "application/json", body)
                return
            self._send(200, "application/json", body)
        elif path == "/healthz":
            self._send(200, "text/plain; charset=utf-8", b"ok\n")
        else:
            self._send(404, "text/plain; charset=utf-8", b"not found\n")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        # Everything the page needs is inline; nothing may load from elsewhere.
        self.send_header(
            "Content-Security-Policy",
            "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
            "img-src 'self' data:",
        )
        self.end_headers()
        self.wfile.write(body)
