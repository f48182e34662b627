"""scrapy-redis adapted to Scrapy 2.19 and to a crawler that runs for months.

scrapy-redis 0.9.1 works with Scrapy 2.19 except for three things this module changes, minimally:

* its scheduler passes `spider=` to the stats collector on every request and logs through
  `Spider.log()`, both deprecated by Scrapy 2.19 (a warning per request); `RedisScheduler`
  counts and logs without them;
* it opens its own Redis connection from REDIS_* settings and names its own keys; ours come from
  the one connection factory and key registry (`crawler.core.connection`, `crawler.core.keys`);
* its dupefilter is a plain set that grows forever, and it fingerprints requests its own way;
  `TTLDupeFilter` keeps each fingerprint for DUPEFILTER_TTL_SECONDS seconds (a sorted set scored by
  expiry, checked and inserted in one atomic script that also trims what has expired) and uses
  the crawler's request fingerprinter, like Scrapy's own dupefilter.

The queue is scrapy-redis's (a Redis sorted set by priority), except that `RedisPriorityQueue`
pops with a script that also notes what it popped, so a pop whose reply is lost when Redis goes
away can be recovered.

Fair split and liveness: a worker pops only while fewer than SCHEDULER_PREFETCH of its requests
wait (in its downloader's per-domain queues or before its item pipeline), so it never hoards a
burst it cannot run now; an idle worker looks at the shared queue every
SCHEDULER_IDLE_POLL_SECONDS (Scrapy's engine would look only every 5 s), so every worker joins a
burst. A popped article request takes its claim over in the same step as the pop
(scheduler_pop.lua): the claim follows the request, and an older copy of a claim handed out again
is dropped there.

Articles do not rely on the dupefilter: the harvest ledger claims them (with versions and crash
recovery) and their requests bypass it; it filters every other request.

Redis going away (crawler/core/outage.py): the scheduler reports it to the crawler's `RedisGate`
(which pauses the crawl), holds the requests it cannot queue in memory, in order, says it has
pending requests (so a one-pass crawl does not end), and returns none. When Redis answers, before
the crawl resumes, it queues the held requests and puts back a pop whose reply was lost. A worker
stopped during an outage loses only its held requests, and those are all backed by the ledger:
their articles and feeds are handed out again when their lease runs out.
"""

from __future__ import annotations

import importlib
import itertools
import json
import logging
import os
import socket
import uuid
from collections import deque
from typing import Any

import redis
from scrapy.crawler import Crawler
from scrapy.http import Request
from scrapy.spiders import Spider
from scrapy.utils.misc import load_object
from scrapy_redis import defaults
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import PriorityQueue
from scrapy_redis.scheduler import Scheduler
from twisted.internet import task

from crawler.core.clock import Clock, clock_from_settings
from crawler.core.commit import ledger_of
from crawler.core.connection import redis_url, sync_redis
from crawler.core.keys import RedisKeys
from crawler.core.lua import register_lua
from crawler.core.outage import RedisGate, attempt_sync, is_connection_error
from crawler.core.scrapy_adapter import engine_of, wake
from crawler.core.worker import claim_owner
from crawler.ledger import RedisHarvestState

log = logging.getLogger(__name__)

# KEYS: the fingerprint set. ARGV: fingerprint, now, ttl. 1 = seen (and not expired), 0 = new.
_SEEN_LUA = "scheduler_seen"  # scheduler_seen.lua beside this module


# Pops the first request and notes "<token>|<request>", so that the request of a pop whose reply
# was lost can be found again (see RedisPriorityQueue.recover_pop); takes the claim a request
# carries over in the same step (see RedisPriorityQueue.take_claims). KEYS and ARGV: its header.
_POP_LUA = "scheduler_pop"  # scheduler_pop.lua beside this module
# Requests no longer to run that one pop may drop before it answers (the engine asks again).
MAX_DROPPED_PER_POP = 100
POP_NOTE_TTL_SECONDS = 7 * 86400  # a dead worker's last-pop note goes away by itself


def _redis_for(crawler: Crawler) -> Any:
    url = redis_url(crawler.settings)
    if not url:
        raise ValueError("the distributed profile needs REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
    return sync_redis(url)


class TTLDupeFilter(RFPDupeFilter):
    """Request fingerprints shared by all workers, each forgotten DUPEFILTER_TTL_SECONDS s after
    use."""

    def __init__(
        self, server: Any, key: str, ttl: float, crawler: Crawler, clock: Clock, debug: bool
    ) -> None:
        super().__init__(server, key, debug)
        self.ttl = ttl
        self.clock = clock
        self.fingerprinter = crawler.request_fingerprinter
        self._seen = register_lua(server, "crawler", _SEEN_LUA)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TTLDupeFilter:
        settings = crawler.settings
        spider_name = crawler.spidercls.name if crawler.spidercls else "spider"
        return cls(
            _redis_for(crawler),
            RedisKeys.from_settings(settings).scheduler_dupefilter(spider_name),
            settings.getfloat("DUPEFILTER_TTL_SECONDS"),
            crawler,
            clock_from_settings(settings),
            settings.getbool("DUPEFILTER_DEBUG"),
        )

    @classmethod
    def from_spider(cls, spider: Spider) -> TTLDupeFilter:
        return cls.from_crawler(spider.crawler)

    def request_fingerprint(self, request: Request) -> str:
        return self.fingerprinter.fingerprint(request).hex()

    def request_seen(self, request: Request) -> bool:
        fingerprint = self.request_fingerprint(request)
        return self._seen(keys=[self.key], args=[fingerprint, self.clock.now(), self.ttl]) == 1

    def close(self, reason: str = "") -> None:
        """Keep the fingerprints: other workers share them, and the TTL bounds them."""


def _serializer(name: str | None) -> Any:
    """A module with loads/dumps, or None for scrapy-redis's default (pickle)."""
    return importlib.import_module(name) if name else None


class RedisPriorityQueue(PriorityQueue):
    """scrapy-redis's priority queue whose pop survives a lost reply: each pop notes what it
    took under this worker's key, and `recover_pop` reads the note back after a failed pop.

    A harvested article's request carries its claim in front of the serialized request
    (`H[key, version, generation]\n`, a feed poll `F[url]\n`), so that the pop script can take
    the claim over in the same step (`take_claims`) and drop a copy no longer to run."""

    def __init__(
        self, server: Any, spider: Spider, key: str, serializer: Any = None, note_key: str = ""
    ) -> None:
        super().__init__(server, spider, key, serializer)
        self.note_key = note_key or f"{self.key}:popped:{uuid.uuid4().hex}"
        self._pop = register_lua(server, "crawler", _POP_LUA)
        self._tokens = itertools.count()
        self.unconfirmed: bytes | None = None  # token of a pop that failed (its reply lost?)
        self._claim_keys: list[str] = []
        self._claim_args: list[str] = ["", ""]  # owner ('' = take nothing), held-set prefix
        self.dropped = 0  # requests dropped by pops, for the scheduler's stats

    def take_claims(self, keys: RedisKeys, owner: str) -> None:
        """Pops take over the claims (and feed leases) of the requests they pop, for `owner`."""
        self._claim_keys = [keys.harvest_articles(), keys.harvest_owners(),
                            keys.harvest_feed_owners()]  # fmt: skip
        self._claim_args = [owner, keys.harvest_held_prefix()]

    def _encode_request(self, request: Request) -> bytes:
        data = super()._encode_request(request)
        data = data.encode() if isinstance(data, str) else data
        claim, feed = request.meta.get("harvest"), request.meta.get("feed_url")
        if claim:
            header = [claim["key"], int(claim["version"]), int(claim.get("g") or 0)]
            return b"H" + json.dumps(header).encode() + b"\n" + data
        if feed:
            return b"F" + json.dumps([feed]).encode() + b"\n" + data
        return data

    def _decode_request(self, encoded_request: bytes) -> Request:
        if encoded_request[:1] in (b"H", b"F"):  # a serialized request never starts so
            encoded_request = encoded_request.partition(b"\n")[2]
        return super()._decode_request(encoded_request)

    def pop(self, timeout: int = 0) -> Request | None:
        try:
            return self._pop_once()
        except redis.RedisError as error:
            if not is_connection_error(error):
                raise
        # A pooled connection that died in an earlier outage (the pop never ran), or Redis going
        # away now (it may have run): ask which, then pop again if it did not.
        return self.recover_pop() or self._pop_once()

    def _pop_once(self) -> Request | None:
        token = str(next(self._tokens)).encode()
        self.unconfirmed = token
        data, dropped = self._pop(
            keys=[self.key, self.note_key, *self._claim_keys],
            args=[token, POP_NOTE_TTL_SECONDS, *self._claim_args, MAX_DROPPED_PER_POP],
        )
        self.unconfirmed = None
        self.dropped += int(dropped)
        return self._decode_request(data) if data else None

    def recover_pop(self) -> Request | None:
        """After a failed pop: the request it took, if Redis ran it (else None)."""
        if self.unconfirmed is None:
            return None
        # May fail (Redis still down): the token stays, and it is asked again later.
        note = attempt_sync(lambda: self.server.get(self.note_key)) or b""
        token, self.unconfirmed = self.unconfirmed, None
        noted, _, data = note.partition(b"|")
        return self._decode_request(data) if data and noted == token else None


class RedisScheduler(Scheduler):
    """scrapy-redis's scheduler on our Redis factory, key names and TTL dupefilter, through
    Redis outages (see the module docstring)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisScheduler:
        settings = crawler.settings
        server = _redis_for(crawler)
        keys = RedisKeys.from_settings(settings)
        scheduler = cls(
            server=server,
            persist=settings.getbool("SCHEDULER_PERSIST"),
            flush_on_start=settings.getbool("SCHEDULER_FLUSH_ON_START"),
            queue_key=keys.scheduler_queue("%(spider)s"),
            queue_cls=settings.get("SCHEDULER_QUEUE_CLASS") or defaults.SCHEDULER_QUEUE_CLASS,
            dupefilter=TTLDupeFilter.from_crawler(crawler),
            idle_before_close=settings.getint("SCHEDULER_IDLE_BEFORE_CLOSE"),
            serializer=_serializer(settings.get("SCHEDULER_SERIALIZER")),
        )
        scheduler.stats = crawler.stats
        scheduler.crawler = crawler
        scheduler.keys = keys
        scheduler.prefetch = settings.getint("SCHEDULER_PREFETCH")
        scheduler.idle_poll = settings.getfloat("SCHEDULER_IDLE_POLL_SECONDS")
        scheduler.idle = False
        scheduler.poller = None
        scheduler.gate = gate = RedisGate.of(crawler)
        # Requests not queued because Redis was down, in order, each with whether the
        # dupefilter has yet to see it.
        scheduler.held = deque()
        gate.on_recovery(scheduler._release_held)
        return scheduler

    def open(self, spider: Spider) -> None:
        # Upstream's open() also logs through Spider.log(), deprecated in Scrapy 2.19.
        self.spider = spider
        queue_class = load_object(self.queue_cls)
        options = {}
        if issubclass(queue_class, RedisPriorityQueue):
            worker = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            options["note_key"] = self.keys.scheduler_popped(spider.name, worker)
        self.queue = queue_class(
            server=self.server,
            spider=spider,
            key=self.queue_key % {"spider": spider.name},
            serializer=self.serializer,
            **options,
        )
        try:
            if self.flush_on_start:
                self.flush()
            queued = len(self.queue)  # the first command: Redis answers, or the crawl stops
        except redis.RedisError as error:
            if not is_connection_error(error):
                raise
            # One clear line; the gate closes the crawl once it is open (a scheduler that raises
            # here would leave Scrapy's scraper unopened, and its close would fail).
            self.gate.start_failure(error)
            return
        if queued:
            log.info("joining a crawl in progress: %d request(s) queued", queued)
        self._start_liveness()

    def _start_liveness(self) -> None:
        """Claim taking (with a shared ledger) and the idle poll."""
        if _shared_ledger(self.crawler) and isinstance(self.queue, RedisPriorityQueue):
            self.queue.take_claims(self.keys, claim_owner(self.crawler.settings))
        if self.idle_poll > 0:
            self.poller = task.LoopingCall(self._wake_if_idle)
            self.poller.start(self.idle_poll, now=False)

    def _wake_if_idle(self) -> None:
        """The last pop found the shared queue empty: have the engine look again (its own
        heartbeat is every 5 s, long enough for a busy worker to take a whole burst)."""
        if self.idle:
            wake(engine_of(self.crawler))

    def close(self, reason: str) -> None:
        if self.poller is not None and self.poller.running:
            self.poller.stop()
        if self.held and self.gate.available:
            try:
                self._queue_held()
            except redis.RedisError as error:
                log.debug("cannot queue held requests at close: %r", error)
        if self.held:
            log.warning("%d request(s) were not queued (Redis unreachable); their articles "
                        "and feeds are handed out again when their leases run out",
                        len(self.held))  # fmt: skip
        try:
            super().close(reason)
        except redis.RedisError as error:
            if not is_connection_error(error):
                raise

    def __len__(self) -> int:
        if not self.gate.available:
            return len(self.held)
        try:
            return len(self.held) + attempt_sync(lambda: len(self.queue))
        except redis.RedisError as error:
            self._failed(error)
            return len(self.held)

    def has_pending_requests(self) -> bool:
        # While Redis is down the queue is unknown: say yes, so a one-pass crawl does not end.
        return bool(self.held) or not self.gate.available or len(self) > 0

    def enqueue_request(self, request: Request) -> bool:
        check = not request.dont_filter
        if not self.held and self.gate.available:
            try:
                if check and attempt_sync(lambda: self.df.request_seen(request)):
                    self.df.log(request, self.spider)
                    return False
                check = False
                attempt_sync(lambda: self.queue.push(request))
            except redis.RedisError as error:
                self._failed(error)
            else:
                self._inc("scheduler/enqueued/redis")
                return True
        self.held.append((request, check))
        self._inc("scheduler/held/redis")
        return True

    def next_request(self) -> Request | None:
        if not self.gate.available:
            return None
        if self._waiting() >= self.prefetch > 0:
            self._inc("scheduler/prefetch_full")
            return None  # a download or an item finishing has the engine ask again
        try:
            request = self.queue.pop(self.idle_before_close)
        except redis.RedisError as error:
            self._failed(error)
            return None
        dropped, self.queue.dropped = getattr(self.queue, "dropped", 0), 0
        self._inc("scheduler/dropped/stale", dropped)
        self.idle = request is None
        if request is not None:
            self._inc("scheduler/dequeued/redis")
        return request

    def _waiting(self) -> int:
        """This worker's requests not running yet: queued in its downloader's slots (per-domain
        concurrency and delay hold them) or downloaded and waiting for the spider."""
        engine = getattr(self.crawler, "_engine", None)  # None: not crawling (a tool, a test)
        if engine is None:
            return 0
        waiting = sum(len(slot.queue) for slot in engine.downloader.slots.values())
        scraper_slot = engine.scraper.slot
        return waiting + (len(scraper_slot.queue) if scraper_slot is not None else 0)

    def _failed(self, error: redis.RedisError) -> None:
        if not is_connection_error(error):
            raise error
        self.gate.report(error)

    async def _release_held(self) -> str | None:
        """Redis answers again: put back a pop whose reply was lost, queue the held requests."""
        recover = getattr(self.queue, "recover_pop", None)
        lost = recover() if recover is not None else None
        if lost is not None:
            self.held.appendleft((lost, False))
            self._inc("scheduler/recovered_pop/redis")
        queued = self._queue_held()
        return f"{queued} request(s) queued again" if queued else None

    def _queue_held(self) -> int:
        queued = 0
        while self.held:
            request, check = self.held[0]
            if check and attempt_sync(lambda r=request: self.df.request_seen(r)):
                self.df.log(request, self.spider)
            else:
                attempt_sync(lambda r=request: self.queue.push(r))
                queued += 1
            self.held.popleft()
        self._inc("scheduler/requeued/redis", queued)
        return queued

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats and count:
            self.stats.inc_value(key, count)


def _shared_ledger(crawler: Crawler) -> bool:
    """Whether the crawl's harvest ledger is the Redis one (claims to take over on pop)."""
    harvest = ledger_of(crawler)
    state = getattr(harvest, "state", None)
    inner = getattr(state, "inner", state)  # the guarded ledger wraps the Redis one
    return isinstance(inner, RedisHarvestState)
