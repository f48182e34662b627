"""Politeness across workers: one per-domain limit and delay for all the workers of a harvest.

Scrapy keeps CONCURRENT_REQUESTS_PER_DOMAIN and DOWNLOAD_DELAY per process, so N workers give a
publisher N times the advertised rate. With REDIS_URL set, every request also takes a slot of its
domain in Redis right before it is sent and frees it when its response (or error) arrives
(crawler/downloader.py): the limit holds at the publisher's server, whichever worker sends.

* One script call per attempt (`politeness_acquire.lua`, atomic): expired leases dropped, the
  domain's next start time and its slots checked, and, when the request may go, a slot leased
  and the next start moved on by the delay. Time is Redis's clock, so workers agree on it.
* The delay is the largest of DOWNLOAD_DELAY (or the domain's DOWNLOAD_SLOTS delay), robots.txt
  crawl-delay when the domain gives one, and the delay AutoThrottle last reached for the domain
  in any worker: each release publishes the worker's AutoThrottle delay, each acquire hands the
  shared one back, so one slow publisher slows every worker down (one AutoThrottle per domain).
* Requests are granted POLITENESS_DELAY_MARGIN_SECONDS more than DOWNLOAD_DELAY (or
  crawl-delay) apart: the time from the grant to the request's arrival at the server varies (a
  new connection, a busy process), and that delay must hold at the server. AutoThrottle's delay
  is a target, not a promise: it gets no margin.
* A request that may not go yet sleeps (asyncio: the reactor runs on) for the time the script
  returns (until the next start, or POLITENESS_POLL_SECONDS when every slot is taken).
* A worker that dies holding slots: a restarted worker (same WORKER_ID) takes back its last
  life's leases at once; when workers keep heartbeats (the Redis ledger), another worker's leases
  are taken back as soon as its heartbeat is gone (HEARTBEAT_TTL_SECONDS), so a restarted
  harvest does not wait for them; in any case each lease ends by itself after the request's
  download timeout plus POLITENESS_LEASE_MARGIN_SECONDS. The heartbeats live in the ledger's
  hash slot, not the domain's: the script names the owners of leases past the grace, this worker
  looks their heartbeats up when every slot is taken (at most every HEARTBEAT_RECHECK_SECONDS
  per owner) and passes the dead ones to the next call (Heartbeats), so every script touches one
  slot (Redis Cluster).
* Redis unreachable: acquiring goes through the crawl's outage gate (the crawl pauses, the
  request waits); a release that cannot be sent is kept and sent when Redis answers again. A
  crawl that is closed during an outage sends what its downloader still holds with Scrapy's
  per-process limits only (at most CONCURRENT_REQUESTS, once), as the gate promises for those
  requests (crawler/core/outage.py): failing them would count articles as failed fetches.

Stats: `politeness/acquired`, `politeness/waits` (answers "not yet"), `politeness/wait_seconds`,
`politeness/release_deferred` (releases sent after an outage), `politeness/unshared` (requests
sent without a shared slot: closing during an outage), `politeness/crawl_delay_errors` (a
robots.txt parser that raised on crawl-delay: logged with its traceback, no crawl-delay then).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
from typing import Any

from scrapy import Request, signals
from scrapy.core.downloader import Slot
from scrapy.crawler import Crawler
from scrapy.robotstxt import RobotParser
from scrapy.utils.httpobj import urlparse_cached

from crawler.core.connection import async_redis, redis_url
from crawler.core.failures import FailureLog
from crawler.core.keys import RedisKeys
from crawler.core.lua import register_lua
from crawler.core.outage import RedisGate, RedisUnavailable, attempt, is_connection_error
from crawler.core.worker import claim_owner, worker_identity

log = logging.getLogger(__name__)

MICROS = 1_000_000  # the scripts count time in microseconds (Redis TIME's resolution)
# A poll answer is stretched by up to this fraction at random, so that the workers waiting for
# one domain do not all ask again in the same millisecond.
POLL_SPREAD = 0.5
GRANTED, SLOTS_TAKEN = 1, -1  # the acquire script's answers (0: too soon after the last start)
# An owner found alive is looked up again after this long (a killed worker's leases are taken
# back at most this much later than its heartbeat ran out).
HEARTBEAT_RECHECK_SECONDS = 1.0
# Owners remembered as dead (an owner id names one life of a worker: it never comes back).
MAX_DEAD_OWNERS = 1024


class Heartbeats:
    """What one worker knows of the other workers' heartbeats, for the acquire script: the
    owners found dead, and when each owner found alive is due to be looked up again."""

    def __init__(self, alive_prefix: str) -> None:
        self.alive_prefix = alive_prefix  # "" when workers keep no heartbeats
        self.dead: dict[str, None] = {}  # insertion-ordered: the oldest is forgotten first
        self._alive_until: dict[str, float] = {}

    def to_look_up(self, suspects: list[Any], now: float) -> list[str]:
        """Of the owners the script named, those whose heartbeat is to be read now."""
        names = [s.decode() if isinstance(s, bytes) else str(s) for s in suspects]
        return [n for n in names if n not in self.dead and self._alive_until.get(n, 0.0) <= now]

    def record(self, owner: str, alive: bool, now: float) -> bool:
        """Note what `owner`'s heartbeat said; True when it was found dead."""
        if alive:
            self._alive_until[owner] = now + HEARTBEAT_RECHECK_SECONDS
            return False
        self._alive_until.pop(owner, None)
        self.dead[owner] = None
        while len(self.dead) > MAX_DEAD_OWNERS:
            del self.dead[next(iter(self.dead))]
        return True

    def key(self, owner: str) -> str:
        return f"{self.alive_prefix}{owner}"

    def arguments(self) -> list[str]:
        """The script's heartbeat flag; the dead owners follow the fixed arguments."""
        return ["1" if self.alive_prefix else ""]


def micros(seconds: float) -> int:
    return max(0, round(seconds * MICROS))


class DomainPoliteness:
    """The shared per-domain slots of one crawler (None without REDIS_URL: see `from_crawler`)."""

    def __init__(self, crawler: Crawler, url: str) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.keys = RedisKeys.from_settings(settings)
        self.gate = RedisGate.of(crawler)
        self.client = async_redis(url)
        self._acquire = register_lua(self.client, "crawler", "politeness_acquire")
        self._release = register_lua(self.client, "crawler", "politeness_release")
        self.download_delay = settings.getfloat("DOWNLOAD_DELAY")
        self.download_timeout = settings.getfloat("DOWNLOAD_TIMEOUT")
        self.per_slot = settings.getdict("DOWNLOAD_SLOTS")
        self.lease_margin = settings.getfloat("POLITENESS_LEASE_MARGIN_SECONDS")
        self.poll = settings.getfloat("POLITENESS_POLL_SECONDS")
        self.delay_margin = settings.getfloat("POLITENESS_DELAY_MARGIN_SECONDS")
        self.state_ttl_ms = max(1, round(settings.getfloat("POLITENESS_STATE_TTL_SECONDS") * 1000))
        self.autothrottle = settings.getbool("AUTOTHROTTLE_ENABLED")
        self.robots_agent = settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT")
        # Tokens name the owner (worker and this process's life, as on the ledger's claims): an
        # operator reading the slots sees who holds them, and the script finds the heartbeat.
        self.owner = claim_owner(settings)
        self.worker = worker_identity(settings)
        self._token_prefix = f"{self.owner}#"
        # Heartbeats exist when the ledger is in Redis (crawler/ledger.py); else leases only expire.
        keeps_heartbeats = (settings.get("HARVEST_STATE") or "").strip().lower() != "memory"
        self.heartbeats = Heartbeats(self.keys.harvest_alive_prefix() if keeps_heartbeats else "")
        self.heartbeat_grace_us = micros(settings.getfloat("HEARTBEAT_TTL_SECONDS"))
        self._serial = itertools.count(1)
        self._unreleased: list[tuple[str, str]] = []
        # robots.txt crawl-delay by host (signals.robots_parsed; none until the host's is read).
        self._crawl_delays: dict[str, float | None] = {}
        self._crawl_delay_failures = FailureLog(log, "politeness/crawl_delay_errors",
                                                "robots.txt crawl-delay unreadable",
                                                level=logging.WARNING)  # fmt: skip
        crawler.signals.connect(self._robots_parsed, signal=signals.robots_parsed)
        if self.gate is not None:
            self.gate.on_recovery(self._release_deferred)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DomainPoliteness | None:
        """Shared slots when REDIS_URL is set and POLITENESS_SHARED_ENABLED; None otherwise
        (Scrapy's per-process slots alone, as before)."""
        url = redis_url(crawler.settings)
        if url is None or not crawler.settings.getbool("POLITENESS_SHARED_ENABLED"):
            return None
        return cls(crawler, url)

    # --- the two calls the downloader makes --------------------------------------------------

    async def acquire(self, domain: str, slot: Slot, request: Request) -> str | None:
        """Wait (without blocking the reactor) until `request` may be sent to `domain`; return
        the lease token to release when its answer arrives (None: sent without a shared slot,
        the crawl closing while Redis is unreachable)."""
        token = f"{self._token_prefix}{next(self._serial)}"
        floor = self.floor_delay(domain, request)
        timeout = float(request.meta.get("download_timeout") or self.download_timeout)
        args = [
            token,
            max(1, slot.concurrency),
            # The margin keeps a hard delay at the server; AutoThrottle's own is a soft target.
            micros(floor + self.delay_margin if floor > 0 else 0.0),
            micros(timeout + self.lease_margin),
            micros(self.poll),
            self.state_ttl_ms,
            *self.heartbeats.arguments(),
            self.heartbeat_grace_us,
            self.worker,
            self.owner,
        ]
        keys = self._domain_keys(domain)
        stats = self.crawler.stats
        while True:
            call = [*args, *self.heartbeats.dead]
            try:
                answer, wait_us, shared_us, suspects = await self._call(
                    lambda call=call: self._acquire(keys, call)
                )
                # Only a full domain waits on leases: then whether their workers live matters.
                if int(answer) == SLOTS_TAKEN and await self._call(
                    lambda found=suspects: self._look_up(found)
                ):
                    continue  # their leases go at the next call, now
            except RedisUnavailable:
                stats.inc_value("politeness/unshared")
                return None
            if self.autothrottle and int(shared_us) > 0:
                # Adopt the domain's shared AutoThrottle delay: this worker's AutoThrottle
                # adjusts it from there, and the release publishes the result.
                slot.delay = max(floor, int(shared_us) / MICROS)
            if int(answer) == GRANTED:
                stats.inc_value("politeness/acquired")
                return token
            wait = int(wait_us) / MICROS
            if int(answer) == SLOTS_TAKEN:  # spread the next polls
                wait *= 1 + POLL_SPREAD * random.random()
            stats.inc_value("politeness/waits")
            stats.inc_value("politeness/wait_seconds", wait)
            await asyncio.sleep(wait)

    async def release(self, domain: str, token: str | None, slot: Slot) -> None:
        """Free the slot `token` holds; publish this worker's AutoThrottle delay for the domain.
        Never raises for an outage: the release is kept and sent when Redis answers again."""
        if token is None:
            return
        delay = str(micros(slot.delay)) if self.autothrottle else ""
        keys = self._domain_keys(domain)
        try:
            await attempt(lambda: self._release(keys, [token, delay, self.state_ttl_ms]))
        except Exception as error:
            if not is_connection_error(error):
                raise
            self._unreleased.append((domain, token))
            if self.gate is not None:
                self.gate.report(error)

    # --- helpers -----------------------------------------------------------------------------

    async def _look_up(self, suspects: list[Any]) -> bool:
        """Read the heartbeats of the owners the script named (one round trip, in the ledger's
        slot); True when one of them is dead."""
        now = asyncio.get_running_loop().time()
        owners = self.heartbeats.to_look_up(suspects, now)
        if not owners:
            return False
        async with self.client.pipeline(transaction=False) as pipe:
            for owner in owners:
                pipe.exists(self.heartbeats.key(owner))
            found = await pipe.execute()
        dead = [self.heartbeats.record(o, bool(a), now) for o, a in zip(owners, found, strict=True)]
        return any(dead)

    def _domain_keys(self, domain: str) -> list[str]:
        """The two keys both scripts take: the domain's slots and its shared state."""
        return [self.keys.politeness_slots(domain), self.keys.politeness_state(domain)]

    def floor_delay(self, domain: str, request: Request) -> float:
        """The least delay between two requests to `domain`: DOWNLOAD_DELAY (or the domain's
        DOWNLOAD_SLOTS delay), raised to robots.txt crawl-delay when the domain gives one."""
        delay = float(self.per_slot.get(domain, {}).get("delay", self.download_delay))
        return max(delay, self.crawl_delay(request) or 0.0)

    def crawl_delay(self, request: Request) -> float | None:
        """robots.txt crawl-delay for our agent, once the domain's robots.txt was read (Scrapy
        itself never applies it)."""
        return self._crawl_delays.get(urlparse_cached(request).netloc)

    def _robots_parsed(self, robotparser: RobotParser, request: Request) -> None:
        """Scrapy's RobotsTxtMiddleware read a host's robots.txt: keep its crawl-delay."""
        try:
            delay = robotparser.crawl_delay(self.robots_agent)
        except Exception as error:  # a parser's bug must not stop the crawl: no crawl-delay then
            self._crawl_delay_failures.report(self.crawler.stats, error, request.url)
            delay = None
        self._crawl_delays[urlparse_cached(request).netloc] = delay

    async def _call(self, operation: Any) -> Any:
        if self.gate is None:
            return await attempt(operation)
        return await self.gate.call(operation)

    async def _release_deferred(self) -> str | None:
        """Recovery hook: the releases an outage kept back (their leases would run out anyway,
        but only after the download timeout)."""
        released = 0
        while self._unreleased:  # one at a time: a failure keeps the rest for the next hook run
            domain, token = self._unreleased[0]
            keys = self._domain_keys(domain)
            await self._release(keys, [token, "", self.state_ttl_ms])
            self._unreleased.pop(0)
            released += 1
        if not released:
            return None
        self.crawler.stats.inc_value("politeness/release_deferred", released)
        return f"{released} politeness slots released"

    async def _spider_closed(self) -> None:
        try:
            await self.client.aclose()
        except Exception:  # closing a client of a loop that is gone: nothing to free
            log.debug("politeness client close failed", exc_info=True)
