"""Where notice evidence lives: Redis (shared by every worker) or an embedded SQLite file.

Both backends implement the same `observe` (learner.NoticeStore) with the same semantics, and
tests run the same scenarios against both:

- Per domain, one bounded set of signatures, each with a decayed count of the distinct articles
  it occurred in. Decay is exponential with time constant tau: instead of rewriting every count
  as time passes, an article arriving at time t adds weight w = exp((t - t0) / tau) and a count
  reads as score / w. When w grows large the domain is rebased (scores scaled down, t0 = now).
- The article's identities (canonical URL, text hash) live in the same set: an identity already
  present means the article was counted before (KNOWN) and nothing is counted again.
- A near copy (COPY) is an article whose prose words were mostly seen before, in too few
  articles to be notices: it is not counted either, so copies cannot make a story a "notice".
- When the set exceeds `max_signatures` the lowest scores go first: stale and one-off
  signatures, never the domain's established notices. A domain silent for `idle_ttl` is
  forgotten. Memory per domain is therefore bounded (about 110 bytes per signature in Redis).

Redis does all of it in one Lua script: one round trip per article, atomic across workers.
The embedded store does it in one SQLite transaction on a dedicated thread, so the reactor never
waits on disk.
"""

from __future__ import annotations

import asyncio
import math
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import redis.asyncio

from crawler.core.keys import RedisKeys
from crawler.core.lua import register_batched_lua
from crawler.core.sqlite import open_sqlite
from pipelines.notices.learner import (
    COPY,
    COUNTED,
    DIGEST_BYTES,
    KNOWN,
    DomainEvidence,
    NoticeConfig,
    Observation,
)

# Rebase a domain when its weight exp(x) passes exp(REBASE_EXPONENT): doubles stay exact enough
# and it happens once every REBASE_EXPONENT time constants (years at the default half-life).
REBASE_EXPONENT = 20.0
LUA_ZADD_CHUNK = 500  # members per ZADD when rescaling (Lua's unpack() has a stack limit)

# KEYS: signatures zset, meta hash. ARGV: now, tau, cap, ttl, copy_overlap, notice_count,
# rebase, then three packed arguments (few arguments keep the client's encoding cheap): the
# identities and the signatures, each a concatenation of 8-byte digests (the set's members),
# and the near-copy evidence: space-separated integers, per prose block its words, n, then
# n signature indices (0-based).
# Returns {status, articles, counts}: counts space-separated, one per signature, as text (Lua
# numbers would be truncated to integers in the reply).
OBSERVE_LUA = "notices_observe"  # notices_observe.lua beside this module
# Constants the script is given as text (CHUNK, DIGEST in notices_observe.lua).
OBSERVE_CONSTANTS = {"CHUNK": str(LUA_ZADD_CHUNK), "DIGEST": str(DIGEST_BYTES)}

STATUSES = {COUNTED, KNOWN, COPY}


class NoticeStoreError(RuntimeError):
    """The store answered something it never answers (a foreign script, a corrupted key)."""


class RedisNoticeStore:
    """Notice evidence in Redis: shared by all workers, one atomic script call per article."""

    def __init__(
        self, client: redis.asyncio.Redis, keys: RedisKeys, config: NoticeConfig | None = None
    ) -> None:
        self.client = client
        self.keys = keys
        self.config = config or NoticeConfig()
        self._script = register_batched_lua(
            client, "pipelines.notices", OBSERVE_LUA, OBSERVE_CONSTANTS
        )

    async def observe(self, observation: Observation) -> DomainEvidence:
        config = self.config
        domain = observation.domain
        evidence = " ".join(
            f"{words} {len(indices)} {' '.join(map(str, indices))}"
            for words, indices in observation.evidence
        )
        args = (
            repr(observation.now),
            repr(config.decay_tau),
            config.max_signatures,
            max(1, math.ceil(config.idle_ttl_seconds)),
            repr(config.copy_overlap),
            repr(config.notice_count),
            repr(REBASE_EXPONENT),
            b"".join(dict.fromkeys(observation.identities)),  # each once, as the embedded store
            b"".join(observation.signatures),
            evidence,
        )
        keys = (self.keys.notice_signatures(domain), self.keys.notice_meta(domain))
        reply = await self._script(keys=keys, args=args)
        counts = reply[2].split() if len(reply) == 3 else ()
        status = _text(reply[0])
        if status not in STATUSES or len(counts) != len(observation.signatures):
            raise NoticeStoreError(f"unexpected notice store reply: {reply[:2]!r}")
        return DomainEvidence(
            status=status,
            articles=float(reply[1]),
            counts=tuple(map(float, counts)),
        )

    async def aclose(self) -> None:
        await self.client.aclose()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


# --- Embedded: SQLite --------------------------------------------------------------------------

SCHEMA = """
CREATE TABLE IF NOT EXISTS notice_domains (
    domain TEXT PRIMARY KEY,
    t0 REAL NOT NULL,          -- time base of the weights
    articles REAL NOT NULL,    -- distinct articles, in weight units
    size INTEGER NOT NULL,     -- signatures held
    last_seen REAL NOT NULL    -- wall-clock time of the last article (idle expiry)
);
CREATE TABLE IF NOT EXISTS notice_signatures (
    domain TEXT NOT NULL,
    signature INTEGER NOT NULL,
    score REAL NOT NULL,
    PRIMARY KEY (domain, signature)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS notice_signatures_by_score ON notice_signatures (domain, score);
"""
BUSY_TIMEOUT_MS = 10_000  # another process holding the file: wait this long, then error
# The embedded store forgets domains silent for idle_ttl at open and then this often (Redis
# forgets them by the keys' TTL), so a crawl that runs for months stays bounded too.
IDLE_CHECK_SECONDS = 3600.0
SQLITE_MAX_PARAMS = 900  # under SQLite's default limit of 999 bound parameters per statement


def _int64(signature: bytes) -> int:
    return int.from_bytes(signature, "big", signed=True)


class EmbeddedNoticeStore:
    """Notice evidence in one SQLite file (the local profile), persisted between runs.

    Every call runs on one dedicated thread that owns the connection: the event loop only
    awaits a future. `observe_sync` is the same operation for tools that have no loop.
    """

    def __init__(self, path: Path | str, config: NoticeConfig | None = None) -> None:
        self.path = Path(path)
        self.config = config or NoticeConfig()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="notice-store")
        self._db: sqlite3.Connection | None = None
        self._closed = False
        self._next_idle_check = 0.0  # wall clock (the idle TTL is wall-clock time, as Redis's)

    async def observe(self, observation: Observation) -> DomainEvidence:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._observe, observation)

    def observe_sync(self, observation: Observation) -> DomainEvidence:
        return self._executor.submit(self._observe, observation).result()

    async def aclose(self) -> None:
        """Close the file (idempotent); the journal is checkpointed into it."""
        if not self._closed:
            self._closed = True
            await asyncio.get_running_loop().run_in_executor(self._executor, self._close)
            self._executor.shutdown(wait=True)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._executor.submit(self._close).result()
            self._executor.shutdown(wait=True)

    # -- on the store thread ------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = open_sqlite(self.path, timeout_seconds=BUSY_TIMEOUT_MS / 1000, schema=SCHEMA)
        now = time.time()
        if now >= self._next_idle_check:
            self._expire_idle(self._db, now)
            self._next_idle_check = now + IDLE_CHECK_SECONDS
        return self._db

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _expire_idle(self, db: sqlite3.Connection, now: float) -> None:
        cutoff = now - self.config.idle_ttl_seconds
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "DELETE FROM notice_signatures WHERE domain IN "
                "(SELECT domain FROM notice_domains WHERE last_seen < ?)",
                (cutoff,),
            )
            db.execute("DELETE FROM notice_domains WHERE last_seen < ?", (cutoff,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _observe(self, observation: Observation) -> DomainEvidence:
        db = self._connect()
        db.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlocks
        try:
            evidence = self._observe_in_transaction(db, observation)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return evidence

    def _observe_in_transaction(
        self, db: sqlite3.Connection, observation: Observation
    ) -> DomainEvidence:
        config = self.config
        domain, now = observation.domain, observation.now
        row = db.execute(
            "SELECT t0, articles, size FROM notice_domains WHERE domain = ?", (domain,)
        ).fetchone()
        t0, articles, size = row if row else (now, 0.0, 0)
        x = (now - t0) / config.decay_tau
        if x > REBASE_EXPONENT:
            factor = math.exp(-x)
            db.execute(
                "UPDATE notice_signatures SET score = score * ? WHERE domain = ?", (factor, domain)
            )
            articles, t0, x = articles * factor, now, 0.0
        weight = math.exp(x)

        identities = [_int64(i) for i in observation.identities]
        signatures = [_int64(s) for s in observation.signatures]
        scores = self._scores(db, domain, identities + signatures)
        known = any(i in scores for i in identities)
        counts = [scores.get(s, 0.0) / weight for s in signatures]
        total = shared = 0
        for words, indices in observation.evidence:
            total += words
            if any(0 < counts[i] < config.notice_count for i in indices):
                shared += words
        status = COUNTED
        if known:
            status = KNOWN
        elif total > 0 and shared >= config.copy_overlap * total:
            status = COPY

        incremented = list(dict.fromkeys(identities))
        if status == COUNTED:
            incremented += signatures
            counts = [count + 1 for count in counts]
            articles += weight
        db.executemany(
            "INSERT INTO notice_signatures (domain, signature, score) VALUES (?, ?, ?) "
            "ON CONFLICT (domain, signature) DO UPDATE SET score = score + excluded.score",
            [(domain, s, weight) for s in incremented],
        )
        size += sum(1 for s in dict.fromkeys(incremented) if s not in scores)
        if size > config.max_signatures:
            # Lowest scores first, ties in Redis's order (ZREMRANGEBYRANK: by the digest's
            # bytes, which as a signed integer puts the negative ones after the rest).
            db.execute(
                "DELETE FROM notice_signatures WHERE domain = ? AND signature IN "
                "(SELECT signature FROM notice_signatures WHERE domain = ? "
                "ORDER BY score, signature < 0, signature LIMIT ?)",
                (domain, domain, size - config.max_signatures),
            )
            size = config.max_signatures
        db.execute(
            "INSERT INTO notice_domains (domain, t0, articles, size, last_seen) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (domain) DO UPDATE SET "
            "t0 = excluded.t0, articles = excluded.articles, size = excluded.size, "
            "last_seen = excluded.last_seen",
            (domain, t0, articles, size, time.time()),
        )
        return DomainEvidence(status=status, articles=articles / weight, counts=tuple(counts))

    @staticmethod
    def _scores(db: sqlite3.Connection, domain: str, signatures: list[int]) -> dict[int, float]:
        scores: dict[int, float] = {}
        unique = list(dict.fromkeys(signatures))
        for start in range(0, len(unique), SQLITE_MAX_PARAMS):
            chunk = unique[start : start + SQLITE_MAX_PARAMS]
            marks = ",".join("?" * len(chunk))
            rows = db.execute(
                "SELECT signature, score FROM notice_signatures "
                f"WHERE domain = ? AND signature IN ({marks})",
                (domain, *chunk),
            )
            scores.update(rows)
        return scores
