"""Continuous-harvesting state that survives restarts: feed schedules and the article ledger.

Two backends behind one interface: Redis when REDIS_URL is set (shared by every worker; each
operation is one atomic Lua script, so two workers can never claim the same article), SQLite
under `state_dir(settings)` otherwise (WAL mode: a committed transaction survives SIGKILL).

The article ledger is what makes a crash lose nothing and repeat nothing:

* `claim_entries` runs when a feed poll is parsed, before the feed's new validators are saved:
  every entry that is new (or whose `updated` date moved on: a new version) is recorded as
  *pending*, with what is needed to request it again. A crash before this point leaves the old
  validators, so the feed is fetched and parsed again; a crash after it leaves pending claims.
* `done` runs once the article has left the item pipeline (every sink has written it, or a stage
  dropped it on purpose). Only then is the URL *seen*; it stays seen for HARVEST_SEEN_TTL_SECONDS
  after the last feed that listed it.
* `recover` hands back pending claims to request again: on a local start all of them and the
  feed polls under way (nothing else can be working on them), in a distributed crawl those whose
  lease ran out (a worker alive but stuck) or whose failed fetch is due for a retry.

Worker liveness (Redis): every claim and feed lease names its owner (`claim_owner`: the worker
and this life of it), and every worker keeps a heartbeat key with a short TTL
(HEARTBEAT_TTL_SECONDS). `recover_orphans` takes over, at once, what owners without a heartbeat
held, and what an earlier life of the same worker held (a restart under the same WORKER_ID);
the long HARVEST_CLAIM_LEASE_SECONDS remains only for a worker that is alive but stuck. A claim
handed out again gets a new generation, so an older copy of its request still in the shared
queue is dropped when a worker pops it (crawler/scheduler_pop.lua takes the claim over in the
same step as the pop): one fetch per hand-out.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import redis

from crawler.core.batching import GroupCommit
from crawler.core.connection import async_redis, is_cluster_client, redis_url
from crawler.core.journal_files import versions_written
from crawler.core.keys import RedisKeys
from crawler.core.lua import register_lua
from crawler.core.paths import state_dir
from crawler.core.sqlite import open_sqlite
from crawler.core.worker import claim_owner, worker_of
from crawler.polling import FeedState
from settings import base as defaults

log = logging.getLogger(__name__)

SQLITE_FILE = "harvest.sqlite3"
LOCK_FILE = "harvest.lock"
RECOVER_BATCH = 1_000  # claims one Redis script call hands back (a call pages through all)
PURGE_BATCH = 5_000  # expired records dropped per purge() call

PENDING, DONE, FAILED = "p", "d", "f"
DATE_DIGITS = 3  # an entry's `updated` date is kept to the millisecond
BUSY_TIMEOUT_SECONDS = 5.0  # the embedded ledger: wait this long for another writer's lock


@dataclass(frozen=True)
class LedgerConfig:
    seen_ttl: float = (
        defaults.HARVEST_SEEN_TTL_SECONDS
    )  # seconds a URL stays seen after the last feed listed it
    max_versions: int = (
        defaults.HARVEST_MAX_VERSIONS
    )  # an article is fetched at most this many times (1 + revisions)
    min_revision: float = (
        defaults.HARVEST_MIN_REVISION_SECONDS
    )  # an `updated` date must move on this much to be a new version
    max_attempts: int = (
        defaults.HARVEST_MAX_ATTEMPTS
    )  # failed fetches before an article is given up
    retry_delay: float = (
        defaults.HARVEST_RETRY_DELAY_SECONDS
    )  # seconds before a failed fetch is tried again
    claim_lease: float = (
        defaults.HARVEST_CLAIM_LEASE_SECONDS
    )  # a claim pending this long is handed out again (worker died)
    feed_lease: float = (
        defaults.HARVEST_FEED_LEASE_SECONDS
    )  # a feed poll not answered within this is handed out again
    heartbeat_ttl: float = (
        defaults.HEARTBEAT_TTL_SECONDS
    )  # a worker whose heartbeat is this old is gone: what it held is taken over

    @classmethod
    def from_settings(cls, settings: Any) -> LedgerConfig:
        return cls(
            seen_ttl=settings.getfloat("HARVEST_SEEN_TTL_SECONDS"),
            max_versions=settings.getint("HARVEST_MAX_VERSIONS"),
            min_revision=settings.getfloat("HARVEST_MIN_REVISION_SECONDS"),
            max_attempts=settings.getint("HARVEST_MAX_ATTEMPTS"),
            retry_delay=settings.getfloat("HARVEST_RETRY_DELAY_SECONDS"),
            claim_lease=settings.getfloat("HARVEST_CLAIM_LEASE_SECONDS"),
            feed_lease=settings.getfloat("HARVEST_FEED_LEASE_SECONDS"),
            heartbeat_ttl=settings.getfloat("HEARTBEAT_TTL_SECONDS"),
        )


@dataclass(frozen=True)
class Entry:
    """A feed entry offered for claiming: its canonical URL, its `updated` date (epoch seconds
    or None) and the request payload kept while it is pending. `filtered` names why a harvest
    filter ruled it out (crawler/core/filters.py): claimed so, it is recorded done at once,
    never pending, so it is never fetched (across runs too) and never output."""

    key: str
    updated: float | None
    payload: dict[str, Any] = field(default_factory=dict)
    filtered: str | None = None

    def __post_init__(self) -> None:
        if self.updated is not None:
            # Whole milliseconds, which both backends store exactly (the Redis scripts' cjson
            # keeps 14 significant digits): a date compares the same in either.
            object.__setattr__(self, "updated", round(self.updated, DATE_DIGITS))


@dataclass(frozen=True)
class Claim:
    """An article to fetch: version 1 is the first fetch, 2... are revisions. `generation`
    counts the hand-outs of the version (Redis ledger; 0 = not tracked)."""

    key: str
    version: int
    updated: float | None
    payload: dict[str, Any]
    attempts: int = 0
    generation: int = field(default=0, compare=False)
    # Why a filter ruled the entry out: then the version is done already, nothing to fetch.
    filtered: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Orphans:
    """What `recover_orphans` took over: claims to request again, feed polls made due now, and
    the owners found gone."""

    claims: list[Claim] = field(default_factory=list)
    feeds: int = 0
    gone: list[str] = field(default_factory=list)
    output: int = 0  # claims found in a gone worker's journal (output marks): marked done
    # Claims a gone worker had marked as being output whose journal could not be read from
    # here (another host): handed out again, so an article may be in two journals, never none.
    unverified: int = 0


@dataclass(frozen=True)
class ForeignClaims:
    """What other owners of a shared ledger hold that is not done yet (pending article claims,
    feed polls under way): `live` of owners with a heartbeat, `gone` of owners without one
    (taken over at this worker's next heartbeat). `partial`: only part of the held entries
    was looked at, the counts are lower bounds."""

    live: int = 0
    live_owners: int = 0
    gone: int = 0
    gone_owners: int = 0
    partial: bool = False

    def __bool__(self) -> bool:
        return self.live + self.gone > 0


# A hash field to add 1 to, in the same step as a done mark (key, field): see `done`.
Count = tuple[str, str]


def distinct_entries(entries: Sequence[Entry]) -> list[Entry]:
    """One entry per key, in the order the keys first appear: of a key listed twice (a feed
    that repeats an item), the one with the latest `updated` date (undated counts as oldest;
    the first of equals). Both backends claim what this returns."""
    chosen: dict[str, Entry] = {}
    for entry in entries:
        kept = chosen.get(entry.key)
        if kept is None or (
            entry.updated is not None and (kept.updated is None or entry.updated > kept.updated)
        ):
            chosen[entry.key] = entry
    return list(chosen.values())


def decide(
    record: dict[str, Any] | None, updated: float | None, config: LedgerConfig
) -> tuple[bool, dict[str, Any] | None]:
    """The claim rule (ledger_claim.lua implements the same for Redis, atomically; the
    differential test tests/test_backend_parity.py keeps the two alike): (claim?, new record or
    None when unchanged). A URL is new once; a later `updated` date is a new version, unless the
    previous version is still pending (its fetch will see the latest page anyway)."""
    if record is None:
        return True, {"v": 1, "u": updated, "s": PENDING, "a": 0}
    if updated is None:
        return False, None
    if record.get("u") is None:
        return False, {**record, "u": updated}  # the first date seen becomes the baseline
    if updated <= record["u"] + config.min_revision:
        return False, None
    if record["s"] == PENDING:
        return False, {**record, "u": updated}
    if record["v"] >= config.max_versions:
        return False, None
    return True, {"v": record["v"] + 1, "u": updated, "s": PENDING, "a": 0}


class FailOutcome(Enum):
    """What a failed try of an article version led to (`HarvestState.fail`): it is tried again
    later (RETRY), it was given up by this very call (GIVEN_UP: the caller reports it, once),
    nothing happened (NOT_PENDING: done, superseded or given up already, e.g. by another
    worker), or it is not known yet (DEFERRED: the guarded ledger kept the mark while Redis is
    away; the outcome is acted on when the mark is stored, crawler/ledger_guard.py).

    Compare with `is`: an outcome has no truth value (`if outcome:` raises TypeError), so no
    caller can read DEFERRED or GIVEN_UP as "will be retried" by accident."""

    RETRY = "retry"
    GIVEN_UP = "given_up"
    NOT_PENDING = "not_pending"
    DEFERRED = "deferred"

    def __bool__(self) -> bool:
        raise TypeError(f"{self} has no truth value: compare it with `is`")


# A rejected article's record (crawler/core/rejected.py), kept with a failed mark that waits.
Rejected = dict[str, Any]

# What the Redis ledger's fail script answers (ledger_fail.lua): 1, 0, or -1 (not pending).
_FAIL_OUTCOMES = {1: FailOutcome.RETRY, 0: FailOutcome.GIVEN_UP}


class HarvestState(ABC):
    """Feed schedules, feed states and the article ledger (see the module docstring)."""

    def __init__(self, config: LedgerConfig, owner: str = "") -> None:
        self.config = config
        self.owner = owner  # what this process writes on its claims and leases

    async def open(self) -> None:  # noqa: B027  (optional hook)
        """Connect or create storage."""

    @abstractmethod
    async def close(self) -> None: ...

    # --- feeds ----------------------------------------------------------------------------

    @abstractmethod
    async def register_feeds(self, urls: Sequence[str]) -> None:
        """Make feeds known (due at once); feeds already known keep their schedule."""

    @abstractmethod
    async def load_feed(self, url: str) -> FeedState: ...

    @abstractmethod
    async def save_feed(self, state: FeedState) -> None:
        """Store the state and schedule the feed's next poll at state.next_poll."""

    @abstractmethod
    async def claim_due_feeds(self, now: float, limit: int = 100) -> list[str]:
        """Feeds due by `now`, each handed to one caller: its due time moves to now + lease;
        the earliest due first, ties by URL."""

    @abstractmethod
    async def release_feed_polls(self, now: float) -> int:
        """Every feed poll under way was cut off (a single local process starting): make those
        feeds due at `now`. Returns how many."""

    # --- articles -------------------------------------------------------------------------

    @abstractmethod
    async def claim_entries(self, entries: Sequence[Entry], now: float) -> list[Claim]:
        """Atomically claim the entries that are new or revised; touch the others' expiry."""

    @abstractmethod
    async def done(self, key: str, version: int, now: float, counts: Sequence[Count] = ()) -> bool:
        """The article version left the pipeline: seen from now on. False if it was not the
        pending version (already done, or superseded). `counts`: hash fields (Redis) to add 1
        to in the same atomic step, only if the mark is made (monitoring's article counts: a
        crash can then neither lose nor double one)."""

    @abstractmethod
    async def fail(
        self, key: str, version: int, now: float, rejected: Rejected | None = None
    ) -> FailOutcome:
        """A try failed (the fetch, or a pipeline stage): RETRY (after retry_delay), GIVEN_UP
        (the max_attempts-th failure: the version is final, never handed out again) or
        NOT_PENDING. Attempts are counted in the store, so the bound holds across restarts and
        workers. `rejected`: what to keep (`pipeline.rejected.jsonl`) if this try turns out to
        be the last when its outcome can only be known later (DEFERRED, the guarded ledger);
        a store that answers at once leaves GIVEN_UP to the caller."""

    @abstractmethod
    async def recover(self, now: float, everything: bool = False) -> list[Claim]:
        """Pending claims to request again: all those due by `now` (lease run out, retry due),
        or (`everything`: a single local process starting) all those due before one more
        claim lease, which is every claim but a retry set further out (handed back when due).
        Their lease restarts. A claim another worker marked as being output (shared store,
        `output_started`) stays with that worker on a lease recovery; with `everything` (its
        writer was killed: a replay starting) it is settled by the writer's journal like a
        take-over's: done if its line is there, else handed out again."""

    async def heartbeat(self) -> bool:
        """Tell the other workers this one is alive (shared store); True if it was known
        alive already."""
        return True

    async def recover_orphans(self, now: float) -> Orphans:
        """Take over what workers without a heartbeat held (shared store; nothing locally)."""
        return Orphans()

    async def foreign_claims(self) -> ForeignClaims:
        """What other owners hold that is not done yet (shared store; nothing locally: a local
        store belongs to this process alone)."""
        return ForeignClaims()

    async def register_journal(self, location: str) -> None:
        """Where this worker's journal is (crawler/core/journal_files.py), for a take-over of
        its claims (shared store; nothing locally)."""
        return None

    async def output_started(self, key: str, version: int, counts: Sequence[Count] = ()) -> bool:
        """The journal is about to write this article version: a take-over by another worker
        then marks it done (with `counts`) instead of handing it out again (shared store;
        nothing locally: no other process takes this one's claims over)."""
        return True

    @abstractmethod
    async def is_done(self, key: str, version: int) -> bool: ...

    @abstractmethod
    async def purge(self, now: float) -> int:
        """Forget URLs whose seen-TTL has run out; returns how many."""

    @abstractmethod
    async def counts(self) -> dict[str, int]:
        """Ledger sizes: {"pending": claims in flight, "seen": URLs done or given up,
        "feeds": feeds known}."""


# --- SQLite ---------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS articles (
    key TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    updated REAL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    payload TEXT,
    due REAL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS articles_due ON articles (due) WHERE status = 'p';
CREATE INDEX IF NOT EXISTS articles_expires ON articles (expires);
CREATE TABLE IF NOT EXISTS feeds (
    url TEXT PRIMARY KEY,
    state TEXT,
    next_poll REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS feeds_next_poll ON feeds (next_poll);
CREATE TABLE IF NOT EXISTS feed_leases (url TEXT PRIMARY KEY);
"""


class SqliteHarvestState(HarvestState):
    """The embedded backend: one SQLite file, one process (a lock file enforces it).

    Calls are synchronous on the reactor thread: each is one small local transaction (tens of
    microseconds in WAL mode), cheaper than a hop to a thread pool would be.
    """

    def __init__(self, config: LedgerConfig, path: Path | str, owner: str = "") -> None:
        super().__init__(config, owner)
        self.path = str(path)
        self.db: sqlite3.Connection | None = None
        self._lock_file: Any = None

    async def open(self) -> None:
        if self.db is not None:
            return
        if self.path != ":memory:":
            self._lock(Path(self.path).with_name(LOCK_FILE))
        self.db = open_sqlite(self.path, timeout_seconds=BUSY_TIMEOUT_SECONDS, schema=_SCHEMA)

    def _lock(self, path: Path) -> None:
        handle = path.open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise RuntimeError(
                f"another crawl is using the state in {path.parent}; set STATE_DIR "
                "(env NEWSHARVEST_STATE_DIR) to another directory, or REDIS_URL to share state "
                "between workers"
            ) from None
        self._lock_file = handle

    async def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    @property
    def _db(self) -> sqlite3.Connection:
        if self.db is None:
            raise RuntimeError("harvest state is not open")
        return self.db

    async def register_feeds(self, urls: Sequence[str]) -> None:
        with self._db:
            self._db.executemany(
                "INSERT OR IGNORE INTO feeds (url, state, next_poll) VALUES (?, NULL, 0)",
                [(url,) for url in urls],
            )

    async def load_feed(self, url: str) -> FeedState:
        row = self._db.execute("SELECT state FROM feeds WHERE url = ?", (url,)).fetchone()
        if row is None or row[0] is None:
            return FeedState(url=url)
        return FeedState.from_json(json.loads(row[0]))

    async def save_feed(self, state: FeedState) -> None:
        with self._db:
            self._db.execute(
                "INSERT INTO feeds (url, state, next_poll) VALUES (?, ?, ?) ON CONFLICT (url) "
                "DO UPDATE SET state = excluded.state, next_poll = excluded.next_poll",
                (state.url, json.dumps(state.to_json()), state.next_poll),
            )
            self._db.execute("DELETE FROM feed_leases WHERE url = ?", (state.url,))

    async def claim_due_feeds(self, now: float, limit: int = 100) -> list[str]:
        with self._db:
            rows = self._db.execute(
                "SELECT url FROM feeds WHERE next_poll <= ? ORDER BY next_poll, url LIMIT ?",
                (now, limit),
            ).fetchall()
            urls = [row[0] for row in rows]
            self._db.executemany(
                "UPDATE feeds SET next_poll = ? WHERE url = ?",
                [(now + self.config.feed_lease, url) for url in urls],
            )
            self._db.executemany(
                "INSERT OR IGNORE INTO feed_leases (url) VALUES (?)", [(url,) for url in urls]
            )
        return urls

    async def release_feed_polls(self, now: float) -> int:
        with self._db:
            self._db.execute(
                "UPDATE feeds SET next_poll = ? WHERE url IN (SELECT url FROM feed_leases)", (now,)
            )
            return self._db.execute("DELETE FROM feed_leases").rowcount

    async def claim_entries(self, entries: Sequence[Entry], now: float) -> list[Claim]:
        claims = []
        expires = now + self.config.seen_ttl
        with self._db:
            for entry in distinct_entries(entries):
                row = self._db.execute(
                    "SELECT version, updated, status, attempts FROM articles WHERE key = ?",
                    (entry.key,),
                ).fetchone()
                record = dict(zip("vusa", row, strict=True)) if row else None
                take, new = decide(record, entry.updated, self.config)
                if take and new is not None and entry.filtered:
                    self._db.execute(
                        "INSERT OR REPLACE INTO articles VALUES (?, ?, ?, ?, 0, NULL, NULL, ?)",
                        (entry.key, new["v"], new["u"], DONE, expires),
                    )
                    claims.append(Claim(entry.key, new["v"], new["u"], {},
                                        filtered=entry.filtered))  # fmt: skip
                elif take and new is not None:
                    self._db.execute(
                        "INSERT OR REPLACE INTO articles VALUES (?, ?, ?, ?, 0, ?, ?, ?)",
                        (entry.key, new["v"], new["u"], PENDING, json.dumps(entry.payload),
                         now + self.config.claim_lease, expires),
                    )  # fmt: skip
                    claims.append(Claim(entry.key, new["v"], new["u"], entry.payload))
                elif new is not None:
                    self._db.execute(
                        "UPDATE articles SET updated = ?, expires = ? WHERE key = ?",
                        (new["u"], expires, entry.key),
                    )
                elif record is not None:
                    self._db.execute(
                        "UPDATE articles SET expires = ? WHERE key = ?", (expires, entry.key)
                    )
        return claims

    async def done(self, key: str, version: int, now: float, counts: Sequence[Count] = ()) -> bool:
        with self._db:
            cursor = self._db.execute(
                "UPDATE articles SET status = ?, attempts = 0, payload = NULL, due = NULL, "
                "expires = ? WHERE key = ? AND version = ? AND status = ?",
                (DONE, now + self.config.seen_ttl, key, version, PENDING),
            )
        return cursor.rowcount == 1

    async def fail(
        self, key: str, version: int, now: float, rejected: Rejected | None = None
    ) -> FailOutcome:
        with self._db:
            row = self._db.execute(
                "SELECT attempts FROM articles WHERE key = ? AND version = ? AND status = ?",
                (key, version, PENDING),
            ).fetchone()
            if row is None:
                return FailOutcome.NOT_PENDING
            attempts = row[0] + 1
            if attempts >= self.config.max_attempts:
                self._db.execute(
                    "UPDATE articles SET status = ?, attempts = ?, payload = NULL, due = NULL "
                    "WHERE key = ?",
                    (FAILED, attempts, key),
                )
                return FailOutcome.GIVEN_UP
            self._db.execute(
                "UPDATE articles SET attempts = ?, due = ? WHERE key = ?",
                (attempts, now + self.config.retry_delay, key),
            )
        return FailOutcome.RETRY

    async def recover(self, now: float, everything: bool = False) -> list[Claim]:
        lease = self.config.claim_lease
        due = "due < ?" if everything else "due <= ?"  # the Redis script's windows
        with self._db:
            rows = self._db.execute(
                "SELECT key, version, updated, payload, attempts FROM articles "
                f"WHERE status = ? AND {due} ORDER BY due",
                (PENDING, now + lease if everything else now),
            ).fetchall()
            self._db.executemany(
                "UPDATE articles SET due = ? WHERE key = ?",
                [(now + lease, row[0]) for row in rows],
            )
        return [Claim(k, v, u, json.loads(p or "{}"), a) for k, v, u, p, a in rows]

    async def is_done(self, key: str, version: int) -> bool:
        row = self._db.execute(
            "SELECT version, status FROM articles WHERE key = ?", (key,)
        ).fetchone()
        return row is not None and (row[0] > version or (row[0] == version and row[1] != PENDING))

    async def purge(self, now: float) -> int:
        with self._db:
            cursor = self._db.execute(
                "DELETE FROM articles WHERE key IN "
                "(SELECT key FROM articles WHERE expires <= ? LIMIT ?)",
                (now, PURGE_BATCH),
            )
        return cursor.rowcount

    async def counts(self) -> dict[str, int]:
        rows = self._db.execute("SELECT status, COUNT(*) FROM articles GROUP BY status")
        by_status = dict(rows.fetchall())
        feeds = self._db.execute("SELECT COUNT(*) FROM feeds").fetchone()[0]
        pending = by_status.pop(PENDING, 0)
        return {"pending": pending, "seen": sum(by_status.values()), "feeds": feeds}


# --- Redis ---------------------------------------------------------------------------------

# Each operation is one Lua script (one round trip, atomic), a .lua file beside this module;
# its first lines say its KEYS and ARGV.
_SCRIPTS = {
    "claim": "ledger_claim",  # claim rule of `decide`, plus owner, generation, claim token
    "done": "ledger_done",  # a batch of done marks (GroupCommit): 1, 0 (not pending), -1 each
    "fail": "ledger_fail",  # 1 (will retry), 0 (given up), -1 (not the pending version)
    "recover": "ledger_recover",
    "recover_owners": "ledger_recover_owners",
    "foreign": "ledger_foreign",  # read only: what other owners hold (ForeignClaims)
    "purge": "ledger_purge",
    "claim_feeds": "ledger_claim_feeds",
    "release_feeds": "ledger_release_feeds",
    "save_feed": "ledger_save_feed",
    # Redis Cluster: the counts of done marks, sent on to their hashes (_send_counts).
    "outbox_take": "ledger_outbox_take",
    "outbox_apply": "ledger_outbox_apply",
    "outbox_clear": "ledger_outbox_clear",
    "output": "ledger_output",  # output marks (GroupCommit): 1, 0 (not the pending version)
}
# How long a hash remembers the last batch of counts applied to it (a batch is applied again
# only when its sender died; the next sender comes within seconds).
COUNT_MARKER_TTL_SECONDS = 24 * 3600
# Batches one send goes through at most: one a dead sender left, the new one, one more made
# meanwhile (the rest goes with the next done mark: a send never loops on a busy outbox).
COUNT_BATCHES_PER_SEND = 3
_MILLISECONDS = 1000


def _decode_json(raw: Any) -> Any:
    """A script's JSON answer; Lua's cjson writes an empty array as {}."""
    data = json.loads(raw)
    return [] if data == {} else data


def _claims_from(records: Any) -> list[Claim]:
    if not isinstance(records, list):
        return []  # cjson's empty array
    return [
        Claim(r["k"], r["v"], r.get("u"), json.loads(r.get("p") or "{}"), r.get("a", 0),
              r.get("g", 0))
        for r in records
    ]  # fmt: skip


# Done marks one script call makes at most. A sink releases its articles a batch at a time
# (SINK_BATCH_SIZE), so their marks come in bursts: 200 outstanding at once in a replay.
DONE_MARKS_PER_CALL = 256
DoneMark = tuple[str, int, float, tuple[Count, ...]]  # key, version, now, counts


class RedisHarvestState(HarvestState):
    """The shared backend: every worker of a distributed crawl sees the same ledger."""

    def __init__(self, config: LedgerConfig, url: str, keys: RedisKeys, owner: str = "") -> None:
        super().__init__(config, owner)
        self.url = url
        self.keys = keys
        self.client: Any = None
        self._scripts: dict[str, Any] = {}
        self._done_marks = GroupCommit(self._mark_done, DONE_MARKS_PER_CALL)
        self._output_marks = GroupCommit(self._mark_output, DONE_MARKS_PER_CALL)

    async def open(self) -> None:
        if self.client is not None:
            return
        self.client = async_redis(self.url)
        self._scripts = {
            name: register_lua(self.client, "crawler", src) for name, src in _SCRIPTS.items()
        }
        await self.client.ping()

    async def close(self) -> None:
        if self.client is not None:
            if self.owner:
                # Gone from now on: what this worker still holds (claims whose requests wait in
                # the shared queue) is taken over at once, not after the heartbeat's TTL.
                with contextlib.suppress(redis.RedisError, OSError):
                    await self.client.delete(self.keys.harvest_alive(self.owner))
            await self.client.aclose()
            self.client = None

    @property
    def _article_keys(self) -> list[str]:
        k = self.keys
        return [k.harvest_articles(), k.harvest_expiry(), k.harvest_pending()]

    @property
    def _held(self) -> str:
        return self.keys.harvest_held(self.owner)

    async def register_feeds(self, urls: Sequence[str]) -> None:
        if urls:
            await self.client.zadd(self.keys.harvest_due(), dict.fromkeys(urls, 0), nx=True)

    async def load_feed(self, url: str) -> FeedState:
        raw = await self.client.hget(self.keys.harvest_feeds(), url)
        return FeedState.from_json(json.loads(raw)) if raw else FeedState(url=url)

    async def save_feed(self, state: FeedState) -> None:
        k = self.keys
        await self._scripts["save_feed"](
            keys=[k.harvest_feeds(), k.harvest_due(), k.harvest_feed_owners()],
            args=[state.url, json.dumps(state.to_json()), state.next_poll,
                  k.harvest_held_prefix()],
        )  # fmt: skip

    async def claim_due_feeds(self, now: float, limit: int = 100) -> list[str]:
        k = self.keys
        urls = await self._scripts["claim_feeds"](
            keys=[k.harvest_due(), k.harvest_feed_owners(), k.harvest_owners()],
            args=[now, self.config.feed_lease, limit, self.owner, self._held],
        )
        return [url.decode() if isinstance(url, bytes) else url for url in urls]

    async def release_feed_polls(self, now: float) -> int:
        k = self.keys
        return int(
            await self._scripts["release_feeds"](
                keys=[k.harvest_due(), k.harvest_feed_owners()],
                args=[now, k.harvest_held_prefix()],
            )
        )

    async def claim_entries(
        self, entries: Sequence[Entry], now: float, token: str = ""
    ) -> list[Claim]:
        """`token`: calling again with the same token hands out what the first call claimed
        (for retrying a call whose reply was lost)."""
        if not entries:
            return []
        by_key = {entry.key: entry for entry in distinct_entries(entries)}
        payload = [
            {
                "k": e.key,
                "p": json.dumps(e.payload),
                **({} if e.updated is None else {"u": e.updated}),
                **({"f": 1} if e.filtered else {}),
            }
            for e in by_key.values()
        ]
        c = self.config
        raw = await self._scripts["claim"](
            keys=[*self._article_keys, self.keys.harvest_owners()],
            args=[now, c.seen_ttl, c.min_revision, c.max_versions, c.claim_lease,
                  json.dumps(payload), token, self.owner, self._held],
        )  # fmt: skip
        claims = []
        for k, v, g, *done in _decode_json(raw):
            entry = by_key[k]
            if done:  # filtered: recorded done, no payload kept
                claims.append(Claim(k, v, entry.updated, {}, 0, g, filtered=entry.filtered))
            else:
                claims.append(Claim(k, v, entry.updated, entry.payload, 0, g))
        return claims

    async def done(self, key: str, version: int, now: float, counts: Sequence[Count] = ()) -> bool:
        return await self._done_marks.submit((key, version, now, tuple(counts)))

    async def _mark_done(self, marks: list[DoneMark]) -> list[bool | Exception]:
        """One script call for a batch of done marks (their count hashes listed once). On a
        Redis Cluster the count hashes live in other slots: the script counts in the ledger's
        outbox instead, in the same step, and _send_counts takes them on."""
        clustered = is_cluster_client(self.client)
        hashes = list(dict.fromkeys(hash_key for *_, counts in marks for hash_key, _ in counts))
        if clustered and hashes:
            hashes = [self.keys.harvest_count_outbox()]
        first_hash = len(self._article_keys) + 1  # KEYS index (Lua counts from 1)
        where = {hash_key: first_hash + i for i, hash_key in enumerate(hashes)}
        args: list[Any] = [self.config.seen_ttl, self.keys.harvest_held_prefix()]
        for key, version, now, counts in marks:
            args += [key, version, now, len(counts)]
            for hash_key, name in counts:
                if clustered:
                    args += [first_hash, f"{hash_key}\n{name}"]
                else:
                    args += [where[hash_key], name]
        results = await self._scripts["done"](keys=[*self._article_keys, *hashes], args=args)
        if clustered and hashes:
            try:
                await self._send_counts()
            except redis.RedisError:  # the marks are made; the next sender takes the counts on
                log.warning("counts of done marks not sent yet", exc_info=True)
        return [
            redis.ResponseError(f"unreadable ledger record for {mark[0]!r}")
            if result == -1
            else result == 1
            for mark, result in zip(marks, results, strict=True)
        ]

    async def output_started(self, key: str, version: int, counts: Sequence[Count] = ()) -> bool:
        return await self._output_marks.submit((key, version, 0.0, tuple(counts)))

    async def _mark_output(self, marks: list[DoneMark]) -> list[bool | Exception]:
        """One script call for a batch of output marks, each with its done mark's counts."""
        args: list[Any] = []
        for key, version, _, counts in marks:
            args += [key, version, json.dumps([list(count) for count in counts])]
        results = await self._scripts["output"](keys=[self.keys.harvest_articles()], args=args)
        return [result == 1 for result in results]

    async def _send_counts(self) -> None:
        """Redis Cluster: apply the outbox's counts to their hashes, each hash once per batch
        (by the batch id) whoever sends it, then clear the batch. A worker killed on the way
        leaves the batch for the next sender: no count is lost or made twice."""
        for _ in range(COUNT_BATCHES_PER_SEND):
            if not await self._send_count_batch():
                return

    async def _send_count_batch(self) -> bool:
        """Send one batch of counts; False when there was none."""
        k = self.keys
        pairs = await self._scripts["outbox_take"](
            keys=[k.harvest_count_outbox(), k.harvest_count_sending(), k.harvest_count_sequence()]
        )
        batch = dict(zip(pairs[::2], pairs[1::2], strict=True))
        batch_id = batch.pop(b"", None)
        if batch_id is None:
            return False
        by_hash: dict[str, list[Any]] = {}
        for target, count in batch.items():
            hash_key, _, name = target.decode().partition("\n")
            by_hash.setdefault(hash_key, []).extend((name, int(count)))
        for hash_key, counts in by_hash.items():
            await self._scripts["outbox_apply"](
                keys=[hash_key, k.count_applied(hash_key)],
                args=[batch_id, COUNT_MARKER_TTL_SECONDS, *counts],
            )
        await self._scripts["outbox_clear"](keys=[k.harvest_count_sending()], args=[batch_id])
        return True

    async def fail(
        self, key: str, version: int, now: float, rejected: Rejected | None = None
    ) -> FailOutcome:
        keys = [self.keys.harvest_articles(), self.keys.harvest_pending()]
        c = self.config
        result = await self._scripts["fail"](
            keys=keys,
            args=[key, version, now, c.max_attempts, c.retry_delay,
                  self.keys.harvest_held_prefix()],
        )  # fmt: skip
        return _FAIL_OUTCOMES.get(result, FailOutcome.NOT_PENDING)

    async def recover(self, now: float, everything: bool = False) -> list[Claim]:
        k = self.keys
        keys = [k.harvest_articles(), k.harvest_pending(), k.harvest_owners()]
        lease = self.config.claim_lease
        # Recovered claims get the score now + lease, which puts them out of the window below
        # (exclusive bound), so repeated calls page through the rest.
        window = f"({now + lease!r}" if everything else repr(now)
        # Everything: what a killed worker had marked as being output comes back too, settled by
        # its journal (done if its line is there), not left pending for ever in no journal.
        settle = "1" if everything else ""
        claims: list[Claim] = []
        output = unverified = 0
        while True:
            raw = await self._scripts["recover"](
                keys=keys,
                args=[window, now, lease, RECOVER_BATCH, self.owner, k.harvest_held_prefix(),
                      settle],
            )  # fmt: skip
            records = _decode_json(raw)
            batch, written, unread = await self._settle_marked(records, now)
            claims += batch
            output, unverified = output + written, unverified + unread
            if len(records) < RECOVER_BATCH:
                if output or unverified:
                    log.info("recovered claims a killed worker had marked as being output: "
                             "%d in its journal (marked done), %d handed out again although "
                             "its journal could not be read", output, unverified)  # fmt: skip
                return claims

    async def heartbeat(self) -> bool:
        ttl = max(1, int(self.config.heartbeat_ttl * _MILLISECONDS))
        previous = await self.client.set(
            self.keys.harvest_alive(self.owner), worker_of(self.owner), px=ttl, get=True
        )
        return previous is not None

    async def register_journal(self, location: str) -> None:
        await self.client.set(self.keys.harvest_journal(self.owner), location)

    async def recover_orphans(self, now: float) -> Orphans:
        k = self.keys
        keys = [k.harvest_articles(), k.harvest_pending(), k.harvest_owners(), k.harvest_due(),
                k.harvest_feed_owners()]  # fmt: skip
        found = Orphans()
        while True:
            raw = await self._scripts["recover_owners"](
                keys=keys,
                args=[k.harvest_alive_prefix(), k.harvest_held_prefix(), now,
                      self.config.claim_lease, self.owner, worker_of(self.owner),
                      RECOVER_BATCH],
            )  # fmt: skip
            data = json.loads(raw)
            gone = data.get("gone") or []
            gone = gone if isinstance(gone, list) else []
            claims, output, unverified = await self._settle_marked(data.get("claims"), now)
            found = Orphans(
                found.claims + claims,
                found.feeds + int(data.get("feeds") or 0),
                found.gone + gone,
                found.output + output,
                found.unverified + unverified,
            )
            if gone:
                await self.client.delete(*(k.harvest_journal(owner) for owner in gone))
            if not data.get("more"):
                return found

    async def foreign_claims(self) -> ForeignClaims:
        k = self.keys
        raw = await self._scripts["foreign"](
            keys=[k.harvest_articles(), k.harvest_owners(), k.harvest_feed_owners()],
            args=[k.harvest_alive_prefix(), k.harvest_held_prefix(), self.owner,
                  worker_of(self.owner), RECOVER_BATCH],
        )  # fmt: skip
        data = json.loads(raw)
        return ForeignClaims(
            live=int(data.get("live") or 0),
            live_owners=int(data.get("live_owners") or 0),
            gone=int(data.get("gone") or 0),
            gone_owners=int(data.get("gone_owners") or 0),
            partial=bool(data.get("more")),
        )

    async def _settle_marked(self, records: Any, now: float) -> tuple[list[Claim], int, int]:
        """The claims taken over, less those a gone worker had marked as being output (`w`: its
        owner name, `j`: the done mark's counts) whose line its journal holds: those are marked
        done, with their counts. Not in the journal (killed between the mark and the write):
        handed out again. Journal unreadable from here: handed out again, and counted."""
        claims = _claims_from(records)
        listed = records if isinstance(records, list) else []  # cjson's empty array: a dict
        marked = {(r["k"], r["v"]): r for r in listed if r.get("w")}
        if not marked:
            return claims, 0, 0
        written: dict[str, set[tuple[str, int]] | None] = {}
        for owner in {r["w"] for r in marked.values()}:
            location = await self.client.get(self.keys.harvest_journal(owner))
            written[owner] = None
            if location is not None:  # a file read (bounded): off the reactor's thread
                written[owner] = await asyncio.to_thread(versions_written, location.decode())
        output = unverified = 0
        kept = []
        for claim in claims:
            record = marked.get((claim.key, claim.version))
            if record is None:
                kept.append(claim)
                continue
            lines = written[record["w"]]
            counts = [tuple(count) for count in record.get("j") or []]
            if lines is not None and (claim.key, claim.version) in lines:
                await self.done(claim.key, claim.version, now, counts)
                output += 1
                continue
            unverified += lines is None
            kept.append(claim)
        return kept, output, unverified

    async def is_done(self, key: str, version: int) -> bool:
        raw = await self.client.hget(self.keys.harvest_articles(), key)
        if raw is None:
            return False
        record = json.loads(raw)
        return record["v"] > version or (record["v"] == version and record["s"] != PENDING)

    async def purge(self, now: float) -> int:
        return int(await self._scripts["purge"](keys=self._article_keys, args=[now, PURGE_BATCH]))

    async def counts(self) -> dict[str, int]:
        k = self.keys
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hlen(k.harvest_articles())
            pipe.zcard(k.harvest_pending())
            pipe.zcard(k.harvest_due())
            total, pending, feeds = await pipe.execute()
        return {"pending": pending, "seen": total - pending, "feeds": feeds}


def open_harvest_state(settings: Any) -> HarvestState:
    """Redis when REDIS_URL is set, else SQLite in the state directory; HARVEST_STATE=memory
    keeps nothing (every run starts afresh, as the demo does)."""
    config = LedgerConfig.from_settings(settings)
    owner = claim_owner(settings)
    if (settings.get("HARVEST_STATE") or "").strip().lower() == "memory":
        return SqliteHarvestState(config, ":memory:", owner)
    url = redis_url(settings)
    if url:
        return RedisHarvestState(config, url, RedisKeys.from_settings(settings), owner)
    return SqliteHarvestState(config, state_dir(settings) / SQLITE_FILE, owner)
