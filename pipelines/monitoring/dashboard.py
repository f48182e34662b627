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

from crawler.core.domainstats import DUPLICATES
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

CHART_POINTS = 60  # at most this many points per chart (adjacent buckets are merged)
ALERT_LOG_SHOWN = 50
STATE_CACHE_SECONDS = 1.0  # several tabs or a fast refresh never hammer Redis
TABLE_COUNTERS = ("fetched", "articles", "null", DUPLICATES, "errors", "feeds/polled", "feeds/304")


# --- The numbers the page shows ------------------------------------------------------------


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole > 0 else None


def _mean(view: DomainView, timing: str) -> float | None:
    counters = view.counters
    return _ratio(
        counters.get(f"seconds/{timing}/sum", 0), counters.get(f"seconds/{timing}/count", 0)
    )


def chart_axis(state: MonitorState, now: float) -> tuple[int, int, int]:
    """(first bucket, number of points, buckets per point), shared by every domain's chart."""
    config = state.config
    buckets = [b for view in state.domains.values() for b in view.series]
    if not buckets:
        return config.bucket(now), 0, 1
    last = config.bucket(now) if state.running else max(buckets)
    first = max(min(buckets), last - config.retention_buckets + 1)
    span = last - first + 1
    step = max(1, math.ceil(span / CHART_POINTS))
    return first, math.ceil(span / step), step


def domain_row(
    domain: str,
    view: DomainView,
    config: StoreConfig,
    axis: tuple[int, int, int],
    now: float,
    active_until: float,
) -> dict[str, Any]:
    """One table row; rates over the retained window, yield per hour of crawling (up to
    `active_until`: now while a crawl runs, else its last flush)."""
    first, points, step = axis
    window = dict.fromkeys(TABLE_COUNTERS, 0.0)
    chart = {name: [0] * points for name in ("articles", "null", "fetched")}
    for bucket, counts in view.series.items():
        for name in TABLE_COUNTERS:
            window[name] += counts.get(name, 0)
        index = (bucket - first) // step
        if 0 <= index < points:
            for name, values in chart.items():
                values[index] += int(counts.get(name, 0))
    counters = view.counters
    seen_since = counters.get("first_seen_at", now)
    crawled = min(config.retention_seconds, active_until - seen_since)
    hours = max(config.bucket_seconds, crawled) / 3600
    last_article = counters.get(LAST_ARTICLE_AT)
    fetched, null = window["fetched"], window["null"]
    requests = fetched + window["feeds/polled"] + window["errors"]
    return {
        "domain": domain,
        **{name.replace("/", "_"): int(value) for name, value in window.items()},
        "yield_per_hour": window["articles"] / hours,
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


def dashboard_state(state: MonitorState, now: float | None = None) -> dict[str, Any]:
    """The JSON the page renders."""
    now = time.time() if now is None else now
    config = state.config
    axis = chart_axis(state, now)
    until = now if state.running else (state.updated_at or now)
    rows = {
        domain: domain_row(domain, view, config, axis, now, until)
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
        "window_seconds": config.retention_seconds,
        "chart": {
            "start": axis[0] * config.bucket_seconds,
            "points": axis[1],
            "step_seconds": axis[2] * config.bucket_seconds,
        },
        "workers": [{"id": worker, **info} for worker, info in sorted(state.workers.items())],
        "alerts": [alert.__dict__ for alert in alerts],
        "alert_log": list(reversed(state.alert_log[-ALERT_LOG_SHOWN:])),
        "domains": sorted(rows.values(), key=lambda row: (-len(row["alerts"]), row["domain"])),
    }


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

    def __init__(self, address: tuple[str, int], read_state: Callable[[], dict[str, Any]]) -> None:
        super().__init__(address, DashboardHandler)
        self.read_state = read_state
        self.page = page_html()
        self._lock = threading.Lock()
        self._cached: tuple[float, bytes] | None = None

    def state_json(self) -> bytes:
        with self._lock:
            now = time.monotonic()
            if self._cached is None or now - self._cached[0] > STATE_CACHE_SECONDS:
                body = json.dumps(self.read_state(), separators=(",", ":")).encode()
                self._cached = (now, body)
            return self._cached[1]


class DashboardHandler(BaseHTTPRequestHandler):
    server: DashboardServer
    server_version = "newsharvest-monitor"

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            self._send(200, "text/html; charset=utf-8", self.server.page)
        elif path == "/api/state":
            try:
                body = self.server.state_json()
            except Exception as error:  # the page shows it; the server keeps serving
                log.warning("cannot read the monitoring state: %r", error)
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
