"""Backends going away: what a crawl does when Redis or PostgreSQL cannot be reached.

**At start-up** a configured backend that does not answer stops the crawl before anything is
fetched: one log line names the backend, its address, what it said and the setting to check; the
crawl closes with finish_reason `backend_unavailable` and `scrapy crawl` exits with status 69
(EX_UNAVAILABLE from sysexits.h: "try again later", not a crash). Index sinks may instead start
into their spill journal (SINK_START_POLICY = "journal").

**Redis mid-crawl** (`RedisGate`, one per crawler). Redis holds the harvest ledger (what was
fetched and output), the feed schedule, the shared request queue of a distributed crawl and the
notice and near-duplicate state: no next step of the crawl is right without it. So the first
command that cannot reach Redis *pauses* the crawl instead of letting each stage improvise:

* the engine is paused (`engine.pause()`): it takes no request from the scheduler, and a
  one-pass crawl cannot end as idle; the requests the downloader already had (at most
  CONCURRENT_REQUESTS) are fetched, and their responses wait for Redis in their callbacks;
* what was already under way finishes: stages that need Redis (the ledger's reads and claims,
  notice evidence, the near-duplicate check) wait for it and then carry on exactly as without
  the outage, so no article is output unchecked;
* done marks of articles that were output meanwhile go to a local, fsynced outbox
  (`crawler/ledger_guard.py`) and the scheduler holds requests it cannot queue in memory;
* a probe pings Redis with backoff (REDIS_RETRY_SECONDS doubling to REDIS_RETRY_MAX_SECONDS);
  when it answers, the recovery hooks run (outbox replayed, held requests queued) and only then
  the engine resumes. REDIS_OUTAGE_MAX_SECONDS > 0 gives up instead: the crawl closes with
  `backend_unavailable`.

A crawl that is stopped during an outage does not hang: waiting stages give up (notices fall
back to lexical priors, near-duplicates pass unflagged, counted), and the outbox is replayed on
the next start, before pending claims are recovered.

**PostgreSQL mid-crawl**: only the sink uses it; it retries, then journals and replays
(pipelines/sinks/base.py). The crawl goes on: the journal is durable, and nothing else waits.

Stats: `backend/redis/unavailable` (outages), `backend/redis/paused_seconds`,
`backend/redis/errors` (commands that failed), `backend/<backend>/unavailable_at_start`; sinks
add `backend/postgres/unavailable` and `.../unavailable_seconds`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

import redis.exceptions
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider
from scrapy.statscollectors import StatsCollector

from crawler.core.connection import (
    REDIS_CONNECT_TIMEOUT_SECONDS,
    async_redis,
    drop_idle_connections,
    redis_url,
)
from crawler.core.failures import FailureLog, one_line
from crawler.core.scrapy_adapter import engine_of, is_closing, wake

log = logging.getLogger(__name__)

T = TypeVar("T")

BACKEND_UNAVAILABLE = "backend_unavailable"  # finish_reason of a crawl a backend stopped
EXIT_BACKEND_UNAVAILABLE = getattr(os, "EX_UNAVAILABLE", 69)  # `scrapy crawl` exit status then
# An item stage gives up on a Redis command after this many connection failures in a row
# (each followed by the gate's probe getting an answer): that is a broken command, not an outage.
REDIS_CALL_FAILURES = 3
CLOSING_POLL_SECONDS = 0.25  # how often a stage waiting for Redis checks if the crawl closes
_ATTRIBUTE = "_newsharvest_redis_gate"
_start_failures: WeakKeyDictionary[StatsCollector, set[str]] = WeakKeyDictionary()


def is_connection_error(error: BaseException) -> bool:
    """True if the error says Redis cannot be reached right now (refused, lost, timed out,
    loading its data, a replica during failover), False if it refused the command itself."""
    return isinstance(
        error,
        redis.exceptions.ConnectionError
        | redis.exceptions.TimeoutError
        | redis.exceptions.ReadOnlyError
        | OSError,  # includes TimeoutError (asyncio.timeout) and socket errors
    )


def start_failure(stats: StatsCollector, backend: str, message: str) -> CloseSpider:
    """Log why the crawl cannot start (once per backend and crawl) and return the CloseSpider
    to raise: Scrapy then closes the crawl quietly with finish_reason `backend_unavailable`."""
    reported = _start_failures.setdefault(stats, set())
    if backend not in reported:
        reported.add(backend)
        stats.set_value(f"backend/{backend}/unavailable_at_start", 1)
        log.error("cannot start the crawl: %s", message)
    return RedisUnavailable() if backend == "redis" else CloseSpider(BACKEND_UNAVAILABLE)


def where(url: str) -> str:
    """host:port/db of a URL, never its password."""
    return url.split("://", 1)[-1].rpartition("@")[2]


class RedisUnavailable(CloseSpider):
    """Redis cannot be reached and the crawl cannot wait for it (it is starting or closing).

    A CloseSpider, so that Scrapy closes the crawl quietly wherever it is raised (spider
    callbacks, start(), open_spider); item stages catch it and fall back."""

    def __init__(self) -> None:
        super().__init__(BACKEND_UNAVAILABLE)


RecoveryHook = Callable[[], Awaitable[str | None]]


async def attempt(operation: Callable[[], Awaitable[T]]) -> T:
    """Run a Redis operation; after a connection error, once more at once. A client's pool
    keeps connections that died in an earlier outage, and redis-py finds out only by using
    them (it then drops them): one failure is not an outage, two in a row are."""
    try:
        return await operation()
    except Exception as error:
        if not is_connection_error(error):
            raise
    return await operation()


def attempt_sync(operation: Callable[[], T]) -> T:
    """`attempt` for the blocking client (the distributed scheduler)."""
    try:
        return operation()
    except Exception as error:
        if not is_connection_error(error):
            raise
    return operation()


class RedisGate:
    """Whether Redis answers, for every stage of one crawler; pauses the crawl while it does not.

    `report(error)` after a command failed, `await call(operation)` to run an operation that
    must not fail for an outage (it waits and retries), `on_recovery(hook)` for what must happen
    before the crawl resumes. Costs nothing while Redis answers: no probe, no extra round trip.
    """

    def __init__(self, crawler: Crawler, url: str) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.url = url
        self.retry_seconds = max(0.01, settings.getfloat("REDIS_RETRY_SECONDS"))
        self.retry_max_seconds = max(
            self.retry_seconds, settings.getfloat("REDIS_RETRY_MAX_SECONDS")
        )
        self.log_seconds = settings.getfloat("REDIS_OUTAGE_LOG_SECONDS")
        self.max_seconds = settings.getfloat("REDIS_OUTAGE_MAX_SECONDS")
        self._up = asyncio.Event()
        self._up.set()
        self._down_since: float | None = None
        self._probe: asyncio.Task[None] | None = None
        self._hooks: list[RecoveryHook] = []
        self._start_check: asyncio.Future[BaseException | None] | None = None
        self._client: Any = None
        self.failed_at_start = False
        # A recovery hook that raises (a bug, not an outage) keeps the crawl paused; the probe
        # retries it with backoff: counted, and logged whole the first time.
        self._recovery_failures = FailureLog(
            log, "backend/redis/recovery_errors", "Redis recovery failed; the crawl stays paused"
        )
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def of(cls, crawler: Crawler) -> RedisGate | None:
        """The crawler's gate, None without REDIS_URL (embedded stores have no outages)."""
        url = redis_url(crawler.settings)
        if url is None:
            return None
        gate = getattr(crawler, _ATTRIBUTE, None)
        if gate is None:
            gate = cls(crawler, url)
            setattr(crawler, _ATTRIBUTE, gate)
        return gate

    @property
    def stats(self) -> StatsCollector:
        return self.crawler.stats  # set once the crawl starts; spiders may build a gate before

    @property
    def available(self) -> bool:
        return self._down_since is None

    @property
    def reachable(self) -> bool:
        """As far as the gate knows: not down now, and not found unreachable at start."""
        return self.available and not self.failed_at_start

    def on_recovery(self, hook: RecoveryHook) -> None:
        """Run `hook` when Redis answers again, before the crawl resumes; it returns a short
        summary for the log line (or None). A hook that fails keeps the crawl paused."""
        self._hooks.append(hook)

    # --- start-up ---------------------------------------------------------------------------

    async def check_at_start(self) -> None:
        """One PING for every component that needs Redis to open; RedisUnavailable (after one
        clear log line) if it does not answer."""
        if self._start_check is None:
            self._start_check = asyncio.ensure_future(self._ping_at_start())
        error = await asyncio.shield(self._start_check)
        if error is not None:
            raise self.start_failure(error)

    async def _ping_at_start(self) -> BaseException | None:
        try:
            await self._ping()
        except Exception as error:
            if not is_connection_error(error):
                raise
            return error
        return None

    @contextlib.asynccontextmanager
    async def starting(self) -> AsyncIterator[None]:
        """Around a component's opening I/O: Redis going away right after the start check is
        still a clear start failure, not a traceback."""
        try:
            yield
        except Exception as error:
            if is_connection_error(error):
                raise self.start_failure(error) from None
            raise

    def start_failure(self, error: BaseException) -> CloseSpider:
        self.failed_at_start = True
        return start_failure(
            self.stats,
            "redis",
            f"Redis at {where(self.url)} is unreachable ({one_line(error)}); "
            "check REDIS_URL, or start Redis",
        )

    # --- mid-crawl --------------------------------------------------------------------------

    def report(self, error: BaseException) -> None:
        """A command could not reach Redis: pause the crawl and probe until Redis answers."""
        self.stats.inc_value("backend/redis/errors")
        if self._down_since is not None or self.failed_at_start:
            return
        self._down_since = time.monotonic()
        self._up.clear()
        self.stats.inc_value("backend/redis/unavailable")
        log.error(
            "Redis at %s is unreachable (%s): crawl paused, retrying every %g-%g s",
            where(self.url),
            one_line(error),
            self.retry_seconds,
            self.retry_max_seconds,
        )
        engine = engine_of(self.crawler)
        if engine is not None:
            engine.pause()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not inside a crawl (a tool, a test): nothing to resume
            return
        self._probe = loop.create_task(self._probe_until_up())

    async def wait(self) -> None:
        """Return once Redis answers; RedisUnavailable if the crawl closes first."""
        while not self._up.is_set():
            if self._closing():
                raise RedisUnavailable()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._up.wait(), CLOSING_POLL_SECONDS)

    async def call(
        self,
        operation: Callable[[], Awaitable[T]],
        max_failures: int = 0,
        on_wait: Callable[[], None] | None = None,
    ) -> T:
        """Run `operation` (a fresh awaitable each time: it must be safe to retry), waiting
        out outages; `on_wait()` is called once if it has to wait. With max_failures > 0, that
        many connection failures re-raise the last (a command that keeps failing while PING
        answers is not an outage)."""
        failures = 0
        while True:
            if on_wait is not None and not self._up.is_set():
                on_wait()
                on_wait = None
            await self.wait()
            try:
                return await attempt(operation)
            except Exception as error:
                if not is_connection_error(error):
                    raise
                failures += 1
                self.report(error)
                if max_failures and failures >= max_failures:
                    raise

    def _closing(self) -> bool:
        return is_closing(engine_of(self.crawler))

    async def _ping(self) -> None:
        if self._client is None:
            self._client = async_redis(self.url)
        await asyncio.wait_for(self._client.ping(), REDIS_CONNECT_TIMEOUT_SECONDS)

    async def _probe_until_up(self) -> None:
        assert self._down_since is not None
        delay = self.retry_seconds
        next_log = self._down_since + self.log_seconds
        while True:
            await asyncio.sleep(delay)
            try:
                await self._ping()
                await drop_idle_connections(self.url)  # they died with the outage
                summaries = [summary for hook in self._hooks if (summary := await hook())]
            except Exception as error:
                if not is_connection_error(error):
                    self._recovery_failures.report(self.stats, error)
                now = time.monotonic()
                down = now - self._down_since
                if self.max_seconds and down >= self.max_seconds:
                    log.error("Redis at %s unreachable for %.0f s (REDIS_OUTAGE_MAX_SECONDS): "
                              "closing the crawl", where(self.url), down)  # fmt: skip
                    # Its own task: closing runs spider_closed, which waits for this probe.
                    self._probe = None
                    asyncio.get_running_loop().create_task(self._close_crawl())
                    return
                if now >= next_log:
                    next_log = now + self.log_seconds
                    log.error("Redis at %s still unreachable after %.0f s (%s): crawl paused",
                              where(self.url), down, one_line(error))  # fmt: skip
                delay = min(self.retry_max_seconds, delay * 2)
                continue
            self._mark_up(summaries)
            return

    def _mark_up(self, summaries: list[str]) -> None:
        assert self._down_since is not None
        paused = time.monotonic() - self._down_since
        self._down_since = None
        self.stats.inc_value("backend/redis/paused_seconds", paused)
        self._up.set()
        engine = engine_of(self.crawler)
        if engine is not None:
            engine.unpause()
            wake(engine)  # resume now, not at the engine's next 5 s heartbeat
        done = "; ".join(["crawl resumed", *summaries])
        log.warning("Redis at %s is back after %.1f s: %s", where(self.url), paused, done)

    async def _close_crawl(self) -> None:
        engine = engine_of(self.crawler)
        if engine is not None and self.crawler.spider is not None:
            await engine.close_spider_async(reason=BACKEND_UNAVAILABLE)

    def _spider_opened(self) -> None:
        if self.failed_at_start:  # a component that may not raise found Redis down at start
            raise RedisUnavailable()

    async def _spider_closed(self) -> None:
        probe, self._probe = self._probe, None
        if probe is not None and not probe.done():
            probe.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await probe
        if self._down_since is not None:  # closed during an outage: count the pause so far
            self.stats.inc_value("backend/redis/paused_seconds",
                                 time.monotonic() - self._down_since)  # fmt: skip
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()
            self._client = None
