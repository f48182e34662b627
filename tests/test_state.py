"""The harvest ledger and feed schedules: both backends (SQLite file, real Redis) obey one spec."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider
from scrapy import signals as scrapy_signals
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from crawler.core.items import ArticleItem
from crawler.core.keys import RedisKeys
from crawler.core.rejected import PIPELINE_REJECTED_FILE as REJECTED
from crawler.harvest import Harvest
from crawler.ledger import (
    Entry,
    FailOutcome,
    HarvestState,
    LedgerConfig,
    RedisHarvestState,
    SqliteHarvestState,
)
from crawler.ledger_guard import GuardedHarvestState
from crawler.polling import FeedState
from newsharvest_bench.tcpproxy import TcpProxy
from tests.support.redis_backends import redis_backend

CONFIG = LedgerConfig(
    seen_ttl=1000.0,
    max_versions=3,
    min_revision=60.0,
    max_attempts=2,
    retry_delay=50.0,
    claim_lease=300.0,
    feed_lease=30.0,
)
T0 = 1_000_000.0


class States:
    """Opens states on one store (two handles = two workers/processes); closes them after."""

    def __init__(self, make: Callable[[], HarvestState]) -> None:
        self.make = make
        self.opened: list[HarvestState] = []

    async def __call__(self) -> HarvestState:
        state = self.make()
        await state.open()
        self.opened.append(state)
        return state

    def run(self, scenario: Callable[[], Awaitable[None]]) -> None:
        async def main() -> None:
            try:
                await scenario()
            finally:
                for state in self.opened:
                    await state.close()

        asyncio.run(main())


@pytest.fixture(params=["sqlite", "redis", "redis-cluster"])
def make_state(request, tmp_path: Path) -> States:
    if request.param == "sqlite":
        return States(lambda: SqliteHarvestState(CONFIG, tmp_path / "harvest.sqlite3"))
    url, prefix = redis_backend(request, request.param)
    return States(lambda: RedisHarvestState(CONFIG, url, RedisKeys(prefix)))


def entry(key: str, updated: float | None = None) -> Entry:
    return Entry(key, updated, {"feed_url": "http://f.test/rss", "entry": {"link": key}})


def test_an_article_is_claimed_once_and_is_seen_only_when_done(make_state) -> None:
    async def scenario() -> None:
        state = await make_state()
        first = await state.claim_entries([entry("http://a/1", T0), entry("http://a/2")], T0)
        assert [(c.key, c.version) for c in first] == [("http://a/1", 1), ("http://a/2", 1)]
        assert first[0].payload["feed_url"] == "http://f.test/rss"
        # Listed again (same feed or another one) while pending or done: no second claim.
        assert await state.claim_entries([entry("http://a/1", T0)], T0 + 1) == []
        assert not await state.is_done("http://a/1", 1)
        assert await state.done("http://a/1", 1, T0 + 2)
        assert not await state.done("http://a/1", 1, T0 + 3)  # idempotent
        assert await state.is_done("http://a/1", 1)
        assert await state.claim_entries([entry("http://a/1", T0)], T0 + 4) == []
        assert await state.counts() == {"pending": 1, "seen": 1, "feeds": 0}

    make_state.run(scenario)


def test_a_later_updated_date_is_a_new_version_within_limits(make_state) -> None:
    async def scenario() -> None:
        state = await make_state()
        await state.claim_entries([entry("http://a/1", T0)], T0)
        # Revised while version 1 is still pending: the pending fetch sees the new page.
        assert await state.claim_entries([entry("http://a/1", T0 + 500)], T0 + 500) == []
        await state.done("http://a/1", 1, T0 + 501)
        # A bump smaller than min_revision is noise.
        assert await state.claim_entries([entry("http://a/1", T0 + 530)], T0 + 530) == []
        second = await state.claim_entries([entry("http://a/1", T0 + 900)], T0 + 900)
        assert [(c.version, c.updated) for c in second] == [(2, T0 + 900)]
        assert not await state.is_done("http://a/1", 2) and await state.is_done("http://a/1", 1)
        await state.done("http://a/1", 2, T0 + 901)
        third = await state.claim_entries([entry("http://a/1", T0 + 2000)], T0 + 2000)
        await state.done("http://a/1", third[0].version, T0 + 2001)
        # max_versions = 3: no fourth fetch however often the date moves.
        assert await state.claim_entries([entry("http://a/1", T0 + 9000)], T0 + 9000) == []

    make_state.run(scenario)


def test_an_undated_listing_sets_no_version_and_a_first_date_becomes_the_baseline(
    make_state,
) -> None:
    async def scenario() -> None:
        state = await make_state()
        await state.claim_entries([entry("http://a/1")], T0)  # e.g. an RSS 0.92 item
        await state.done("http://a/1", 1, T0)
        # The same article in a dated feed: a baseline, not a revision.
        assert await state.claim_entries([entry("http://a/1", T0 - 50)], T0 + 10) == []
        assert await state.claim_entries([entry("http://a/1", T0 - 50)], T0 + 20) == []
        revised = await state.claim_entries([entry("http://a/1", T0 + 400)], T0 + 400)
        assert [c.version for c in revised] == [2]

    make_state.run(scenario)


def test_two_handles_racing_for_the_same_entries_claim_each_once(make_state) -> None:
    # SQLite is single-process by design (its lock refuses a second process); Redis is shared.
    async def race() -> None:
        state = await make_state()
        if isinstance(state, SqliteHarvestState):
            with pytest.raises(RuntimeError, match="another crawl"):
                await make_state()
            return
        other = await make_state()
        entries = [entry(f"http://a/{i}", T0) for i in range(200)]
        a, b = await asyncio.gather(
            state.claim_entries(entries, T0), other.claim_entries(list(reversed(entries)), T0)
        )
        keys = [c.key for c in a] + [c.key for c in b]
        assert sorted(keys) == sorted(e.key for e in entries)  # every one, once

    make_state.run(race)


def test_failed_fetches_are_retried_after_a_delay_then_given_up(make_state) -> None:
    async def scenario() -> None:
        state = await make_state()
        await state.claim_entries([entry("http://a/1", T0)], T0)
        assert await state.recover(T0 + 10) == []  # in flight, lease running
        retry = await state.fail("http://a/1", 1, T0 + 10)  # attempt 1 of 2
        assert retry is FailOutcome.RETRY
        with pytest.raises(TypeError, match="compare it with `is`"):
            bool(retry)  # an outcome is compared, never read as a truth value
        assert await state.recover(T0 + 30) == []  # retry not due yet
        again = await state.recover(T0 + 61)
        assert [(c.key, c.attempts) for c in again] == [("http://a/1", 1)]
        given_up = await state.fail("http://a/1", 1, T0 + 70)  # attempt 2 of 2
        assert given_up is FailOutcome.GIVEN_UP
        assert await state.is_done("http://a/1", 1)
        # Only the call that made it final says GIVEN_UP (it reports the article, once).
        assert await state.fail("http://a/1", 1, T0 + 80) is FailOutcome.NOT_PENDING
        assert await state.recover(T0 + 10_000, everything=True) == []

    make_state.run(scenario)


def test_recovery_hands_back_expired_leases_or_everything_on_a_local_restart(make_state) -> None:
    async def scenario() -> None:
        state = await make_state()
        await state.claim_entries([entry(f"http://a/{i}", T0) for i in range(3)], T0)
        await state.done("http://a/0", 1, T0 + 1)
        assert await state.recover(T0 + 100) == []
        everything = await state.recover(T0 + 100, everything=True)
        assert sorted(c.key for c in everything) == ["http://a/1", "http://a/2"]
        assert everything[0].payload["entry"]["link"] == everything[0].key
        # Their lease restarted at T0 + 100: handed out again only when it runs out.
        assert await state.recover(T0 + 399) == []
        assert len(await state.recover(T0 + 401)) == 2

    make_state.run(scenario)


def test_seen_urls_expire_after_the_ttl_unless_a_feed_lists_them_again(make_state) -> None:
    async def scenario() -> None:
        state = await make_state()
        await state.claim_entries([entry("http://a/1", T0), entry("http://a/2", T0)], T0)
        await state.done("http://a/1", 1, T0)
        await state.done("http://a/2", 1, T0)
        await state.claim_entries([entry("http://a/2", T0)], T0 + 900)  # still listed: touched
        assert await state.purge(T0 + 1001) == 1
        assert [c.key for c in await state.claim_entries([entry("http://a/1", T0)], T0 + 1002)]
        assert await state.claim_entries([entry("http://a/2", T0)], T0 + 1002) == []

    make_state.run(scenario)


def test_due_feeds_are_handed_to_one_caller_and_rescheduled(make_state) -> None:
    async def scenario() -> None:
        state = await make_state()
        await state.register_feeds(["http://f/1", "http://f/2"])
        assert sorted(await state.claim_due_feeds(T0)) == ["http://f/1", "http://f/2"]
        assert await state.claim_due_feeds(T0 + 1) == []  # leased
        feed = await state.load_feed("http://f/1")
        feed.etag, feed.next_poll, feed.events = '"abc"', T0 + 100, [T0 - 5.0]
        await state.save_feed(feed)
        await state.register_feeds(["http://f/1"])  # known: keeps its schedule
        assert await state.claim_due_feeds(T0 + 31) == ["http://f/2"]  # f/2's lease ran out
        await state.save_feed(FeedState(url="http://f/2", next_poll=T0 + 500))  # answered
        assert await state.claim_due_feeds(T0 + 100) == ["http://f/1"]
        loaded = await state.load_feed("http://f/1")
        assert (loaded.etag, loaded.events) == ('"abc"', [T0 - 5.0])
        assert await state.load_feed("http://f/new") == FeedState(url="http://f/new")

    make_state.run(scenario)


# --- through Redis outages (crawler/ledger_guard.py) ----------------------------------------------


def test_a_claim_retried_with_its_token_hands_out_what_the_lost_reply_held(
    redis_url: str, redis_prefix: str
) -> None:
    """A claim whose reply was lost (Redis went away between running the script and answering)
    is retried with the same token: it gets its claims back instead of leaving them pending
    until their lease runs out. Another token (another poll, another worker) gets nothing."""

    async def scenario() -> None:
        state = RedisHarvestState(CONFIG, redis_url, RedisKeys(redis_prefix))
        await state.open()
        try:
            entries = [entry(f"http://a/{i}", T0) for i in range(5)]
            first = await state.claim_entries(entries, T0, token="t1")  # the reply "lost"
            retried = await state.claim_entries(entries, T0 + 1, token="t1")
            other = await state.claim_entries(entries, T0 + 2, token="t2")
            untokened = await state.claim_entries(entries, T0 + 3)
            assert [c.key for c in retried] == [c.key for c in first] == [e.key for e in entries]
            assert {c.version for c in retried} == {1}
            assert other == [] and untokened == []
            await state.done("http://a/0", 1, T0 + 4)  # done: the token is spent
            assert await state.claim_entries(entries[:1], T0 + 5, token="t1") == []
        finally:
            await state.close()

    asyncio.run(scenario())


def test_done_marks_kept_in_the_outbox_are_stored_at_the_next_start(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    from crawler.ledger_guard import MarkOutbox

    async def scenario() -> None:
        state = RedisHarvestState(CONFIG, redis_url, RedisKeys(redis_prefix))
        await state.open()
        try:
            claims = await state.claim_entries([entry(f"http://a/{i}", T0) for i in range(4)], T0)
            assert len(claims) == 4
            outbox = MarkOutbox(tmp_path / "journal")  # Redis "down": marks kept on disk
            await outbox.open()
            await outbox.add("http://a/0", 1, "d", T0 + 1)
            await outbox.add("http://a/1", 1, "d", T0 + 1)
            await outbox.add("http://a/2", 1, "f", T0 + 1)
            await outbox.close()
            assert not await state.is_done("http://a/0", 1)

            again = MarkOutbox(tmp_path / "journal")  # the next start
            await again.open()
            assert again.pending == 3
            assert await again.replay(state) == 3
            assert again.pending == 0
            await again.close()
            assert await state.is_done("http://a/0", 1) and await state.is_done("http://a/1", 1)
            assert not await state.is_done("http://a/3", 1)
            assert (await state.counts())["pending"] == 2  # a/2 will be retried, a/3 waits
            assert list((tmp_path / "journal").iterdir()) == []  # an empty outbox goes away
        finally:
            await state.close()

    asyncio.run(scenario())


def outage_harvest(redis_url: str, redis_prefix: str, state: Path, proxy: TcpProxy) -> Harvest:
    """A crawl's harvest, its Redis ledger guarded by the outage gate, reaching Redis through
    `proxy`; an article is given up on its second failed try."""
    settings = {
        "REDIS_URL": redis_url.replace(":6379/", f":{proxy.port}/"),
        "REDIS_KEY_PREFIX": redis_prefix,
        "REDIS_RETRY_SECONDS": 0.05,
        "STATE_DIR": str(state),
        "HARVEST_MAX_ATTEMPTS": 2,
        "EXTENSIONS_BASE": {},  # Scrapy's own close with a crawl: there is none here
    }
    return Harvest.of(get_crawler(Spider, settings))


def failed_item(key: str) -> tuple[ArticleItem, Failure]:
    """An article and the error a pipeline stage raised on it."""
    item = ArticleItem(entry_url=key, version=1, url=key, domain="a.test", title="A story")
    try:
        raise RuntimeError(f"a stage failed on {key}")
    except RuntimeError:
        return item, Failure()


async def closed(harvest: Harvest) -> None:
    """What the end of the crawl does: the ledger and the gate close."""
    signals_ = harvest.crawler.signals
    await signals_.send_catch_log_async(
        scrapy_signals.spider_closed, spider=Spider("probe"), reason="finished"
    )


async def until(condition: Callable[[], bool], what: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("back", ["mid_crawl", "at_the_next_start"])
def test_a_last_try_failing_during_an_outage_is_rejected_once_redis_is_back(
    back: str, tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """Redis cut (a TcpProxy in front of the real server) while a stage fails on two articles:
    `last` on its second and last try, `first` on its first. Their marks wait in the outbox,
    their outcome unknown (DEFERRED); once Redis answers (mid-crawl: the gate's recovery; or
    only at the next start), the replay gives `last` up, which reaches pipeline.rejected.jsonl
    with its error, counted once, and schedules `first`'s retry."""
    journal = tmp_path / "state" / "journal"

    async def scenario(proxy: TcpProxy) -> dict[str, Any]:
        harvest = outage_harvest(redis_url, redis_prefix, tmp_path / "state", proxy)
        state = await harvest.open()
        assert isinstance(state, GuardedHarvestState)
        now = harvest.clock.now()
        await state.claim_entries([entry("http://a/last", now), entry("http://a/first", now)], now)
        await harvest.item_error(*failed_item("http://a/last"))  # try 1 of 2: a retry
        proxy.stop()
        outcomes = [
            await state.fail(key, 1, now, rejected={"record": {"url": key}})
            for key in ("http://a/never-claimed",)
        ]
        assert outcomes == [FailOutcome.DEFERRED]  # Redis away: not known yet
        for key in ("http://a/last", "http://a/first"):
            await harvest.item_error(*failed_item(key))
        stats = harvest.crawler.stats
        assert stats.get_value("harvest/outbox/buffered") == 3
        assert stats.get_value("harvest/rejected") is None and not (journal / REJECTED).exists()
        if back == "mid_crawl":
            proxy.start()
            await until(lambda: state.gate.available and not state.outbox.pending, "recovery")
            await closed(harvest)
            return stats.get_stats()
        await closed(harvest)  # the crawl stopped during the outage: the marks stay on disk
        assert state.outbox.pending == 0  # closed; on disk: the next start reads them
        proxy.start()
        again = outage_harvest(redis_url, redis_prefix, tmp_path / "state", proxy)
        await again.open()  # the outbox is replayed before anything else
        await closed(again)
        return again.crawler.stats.get_stats()

    with TcpProxy(6379) as proxy:
        stats = asyncio.run(scenario(proxy))
    (rejected,) = [json.loads(line) for line in (journal / REJECTED).read_text().splitlines()]
    assert rejected["record"]["url"] == "http://a/last" and rejected["attempts"] == 2
    assert rejected["error"] == "RuntimeError: a stage failed on http://a/last"
    assert rejected["where"].startswith("tests/test_state.py:")
    assert stats["harvest/rejected"] == 1 and stats["domain/a.test/errors/rejected"] == 1
    # `first` scheduled again (mid-crawl, the same stats also hold `last`'s first try).
    assert stats["harvest/retry"] == (2 if back == "mid_crawl" else 1)
    assert stats["harvest/outbox/replayed"] == 3

    async def ledger() -> tuple[bool, bool, list[str]]:
        state = RedisHarvestState(CONFIG, redis_url, RedisKeys(redis_prefix))
        await state.open()
        try:
            retried = [c.key for c in await state.recover(time.time() + 10_000)]
            return (
                await state.is_done("http://a/last", 1),
                await state.is_done("http://a/first", 1),
                retried,
            )
        finally:
            await state.close()

    last_final, first_final, retried = asyncio.run(ledger())
    assert last_final and not first_final and retried == ["http://a/first"]


# --- worker liveness (Redis) ----------------------------------------------------------------


def redis_states(redis_url: str, redis_prefix: str, ttl: float = 15.0) -> Callable[..., States]:
    """States for named owners ("<worker>/<life>") on one Redis."""
    config = LedgerConfig(**{**CONFIG.__dict__, "heartbeat_ttl": ttl})
    keys = RedisKeys(redis_prefix)

    def make(owners: list[str]) -> States:
        queue = iter(owners)
        return States(lambda: RedisHarvestState(config, redis_url, keys, next(queue)))

    return make


def test_what_a_worker_without_a_heartbeat_held_is_taken_over_at_once(
    redis_url: str, redis_prefix: str
) -> None:
    states = redis_states(redis_url, redis_prefix)(["w1/a", "w2/b", "w3/c"])

    async def scenario() -> None:
        dead, alive, taker = await states(), await states(), await states()
        for state in (alive, taker):
            assert not await state.heartbeat()  # first beat: not known alive before
            assert await state.heartbeat()
        # `dead` claims and leases a feed poll but never beats (killed at once).
        await dead.register_feeds(["http://f.test/rss", "http://g.test/rss"])
        assert await dead.claim_due_feeds(T0, limit=1) == ["http://f.test/rss"]
        claims = await dead.claim_entries([entry("http://a/1"), entry("http://a/2")], T0)
        await alive.claim_entries([entry("http://a/3")], T0)
        assert [c.generation for c in claims] == [1, 1]
        assert await dead.done("http://a/2", 1, T0 + 1)  # done work is not handed back
        orphans = await taker.recover_orphans(T0 + 2)
        assert [(c.key, c.generation) for c in orphans.claims] == [("http://a/1", 2)]
        assert orphans.feeds == 1 and orphans.gone == ["w1/a"]
        # The feed is due at once (not after its 30 s lease); the live worker keeps its claim.
        assert "http://f.test/rss" in await taker.claim_due_feeds(T0 + 2)
        assert (await taker.recover_orphans(T0 + 3)).claims == []  # taken over once
        assert (await alive.recover_orphans(T0 + 4)).claims == []  # the taker beats: its own

    states.run(scenario)


def test_what_other_workers_hold_not_done_is_counted_by_whether_they_beat(
    any_redis: tuple[str, str],
) -> None:
    """What a one-pass worker waits for before closing (crawler/spiders/feeds.py, _idle)."""
    states = redis_states(*any_redis)(["w1/a", "w2/b", "w3/c", "w3/d"])

    async def scenario() -> None:
        live, dead, earlier, me = await states(), await states(), await states(), await states()
        assert not await me.foreign_claims()  # nothing held by anyone
        await live.heartbeat()
        await earlier.heartbeat()  # an earlier life of this worker: gone although it beats
        await live.claim_entries([entry("http://a/1"), entry("http://a/2")], T0)
        await dead.claim_entries([entry("http://a/3")], T0)
        await dead.register_feeds(["http://f.test/rss"])
        assert await dead.claim_due_feeds(T0) == ["http://f.test/rss"]
        await earlier.claim_entries([entry("http://a/4")], T0)
        await me.claim_entries([entry("http://a/5")], T0)  # its own: not waited for
        assert await live.done("http://a/2", 1, T0 + 1)  # done: not counted
        found = await me.foreign_claims()
        assert (found.live, found.live_owners, found.gone, found.gone_owners) == (1, 1, 3, 2)
        assert found and not found.partial
        await me.recover_orphans(T0 + 2)  # takes over the gone ones' work
        assert await live.done("http://a/1", 1, T0 + 3)
        assert not await me.foreign_claims()
        found = await live.foreign_claims()  # a/3, a/4 and a/5 are me's now
        assert (found.live, found.gone, found.gone_owners) == (0, 3, 1)  # me has not beaten
        await me.heartbeat()
        found = await live.foreign_claims()
        assert (found.live, found.live_owners, found.gone) == (3, 1, 0)

    states.run(scenario)


def test_a_restarted_worker_takes_back_what_its_last_life_held_although_it_beat(
    redis_url: str, redis_prefix: str
) -> None:
    states = redis_states(redis_url, redis_prefix)(["w1/life1", "w1/life2", "w2/x"])

    async def scenario() -> None:
        first, second, other = await states(), await states(), await states()
        await first.heartbeat()  # still alive as far as its TTL goes
        await first.claim_entries([entry("http://a/1")], T0)
        assert (await other.recover_orphans(T0 + 1)).claims == []  # w1 has a heartbeat
        orphans = await second.recover_orphans(T0 + 1)
        assert [c.key for c in orphans.claims] == ["http://a/1"]

    states.run(scenario)


def test_a_done_mark_makes_its_counts_in_the_same_step(any_redis: tuple[str, str]) -> None:
    """On a Redis Cluster, in the same step in the ledger's outbox, sent on at once."""
    from crawler.core.connection import sync_redis

    redis_url, redis_prefix = any_redis
    states = redis_states(redis_url, redis_prefix)(["w1/a"])
    counter = f"{redis_prefix}:{{a.test}}:counted"

    async def scenario() -> None:
        state = await states()
        await state.claim_entries([entry("http://a/1")], T0)
        assert await state.done("http://a/1", 1, T0, [(counter, "articles"), (counter, "7:a")])
        assert not await state.done("http://a/1", 1, T0, [(counter, "articles")])  # not twice

    states.run(scenario)
    client = sync_redis(redis_url)
    try:
        assert client.hgetall(counter) == {b"articles": b"1", b"7:a": b"1"}
    finally:
        client.close()


def test_counts_a_killed_worker_left_on_the_way_on_a_cluster_are_sent_once(
    redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    """A worker killed after applying a batch of counts but before clearing it: the next
    worker's done mark sends the batch again (each hash skips it: already applied), then its
    own. Every count arrives once."""
    import redis

    from crawler.core.connection import sync_redis

    states = redis_states(redis_cluster_url, redis_cluster_prefix)(["w1/a", "w2/a"])
    counter = f"{redis_cluster_prefix}:{{a.test}}:counted"

    async def killed_before_clearing(**kwargs: object) -> object:
        raise redis.ResponseError("killed")  # the batch stays: as if the worker died here

    async def scenario() -> None:
        first = await states()
        await first.claim_entries([entry("http://a/1"), entry("http://a/2")], T0)
        first._scripts["outbox_clear"] = killed_before_clearing
        assert await first.done("http://a/1", 1, T0, [(counter, "articles")])
        second = await states()
        assert await second.done("http://a/2", 1, T0, [(counter, "articles")])

    states.run(scenario)
    client = sync_redis(redis_cluster_url)
    try:
        assert client.hgetall(counter) == {b"articles": b"2"}
        keys = RedisKeys(redis_cluster_prefix)
        assert not client.exists(keys.harvest_count_outbox())
        assert not client.exists(keys.harvest_count_sending())
    finally:
        client.close()


def test_the_embedded_store_releases_feed_polls_cut_off_by_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "harvest.sqlite3"
    states = States(lambda: SqliteHarvestState(CONFIG, path))

    async def scenario() -> None:
        crashed = await states()
        await crashed.register_feeds(["http://f.test/rss", "http://g.test/rss"])
        assert len(await crashed.claim_due_feeds(T0)) == 2
        await crashed.save_feed(FeedState(url="http://g.test/rss", next_poll=T0 + 600))
        await crashed.close()  # the lock goes with the process
        restarted = await states()
        assert await restarted.claim_due_feeds(T0 + 1) == []  # leased for 30 s
        assert await restarted.release_feed_polls(T0 + 1) == 1  # what a local start does
        assert await restarted.claim_due_feeds(T0 + 1) == ["http://f.test/rss"]

    states.run(scenario)


def test_done_marks_made_together_go_in_few_script_calls_each_with_its_answer(
    redis_url: str, redis_prefix: str
) -> None:
    """A sink releases its articles a batch at a time: their done marks share script calls
    (group commit), and each caller still gets its own answer, an unreadable record included."""
    import redis

    states = redis_states(redis_url, redis_prefix)(["w1/a"])
    counter = f"{redis_prefix}:counted"
    keys = [f"http://a/{n}" for n in range(60)]

    answers: list[object] = []

    async def scenario() -> None:
        state = await states()
        await state.claim_entries([entry(key) for key in keys], T0)
        await state.client.hset(state.keys.harvest_articles(), keys[7], "not json")
        sent = 0
        call = state._scripts["done"]

        async def counted(**kwargs: object) -> object:
            nonlocal sent
            sent += 1
            return await call(**kwargs)

        state._scripts["done"] = counted
        marks = [state.done(key, 1, T0, [(counter, "articles")]) for key in keys]
        marks.append(state.done(keys[0], 1, T0, [(counter, "articles")]))  # a second time
        answers.extend(await asyncio.gather(*marks, return_exceptions=True))
        assert sent <= 3  # 61 marks
        assert all([await state.is_done(key, 1) for key in keys if key != keys[7]])

    states.run(scenario)
    assert answers[:7] == [True] * 7 and answers[8:60] == [True] * 52
    assert isinstance(answers[7], redis.ResponseError) and "http://a/7" in str(answers[7])
    assert answers[60] is False  # already done by the first mark of the batch
    client = redis.Redis.from_url(redis_url)
    try:
        assert client.hget(counter, "articles") == b"59"  # counted once each, not the bad one
    finally:
        client.close()


def test_a_claim_whose_lease_ran_out_while_its_worker_wrote_it_out_is_not_handed_out_again(
    any_redis: tuple[str, str],
) -> None:
    """A slow worker (alive) whose lease runs out between its journal line and its done mark:
    the article is in its journal, so the lease recovery of another worker renews the lease
    instead of fetching it into a second journal; the slow worker's done mark settles it. A claim
    without an output mark, or one a former life of the recovering worker wrote, is recovered."""
    redis_url, redis_prefix = any_redis
    states = redis_states(redis_url, redis_prefix)(["w1/a", "w2/a", "w2/b"])
    lease = CONFIG.claim_lease

    async def scenario() -> None:
        slow, other = await states(), await states()
        await slow.heartbeat()
        keys = ["http://a/1", "http://a/2", "http://a/3"]
        await slow.claim_entries([entry(key) for key in keys], T0)
        assert await slow.output_started("http://a/1", 1)
        recovered = await other.recover(T0 + lease + 1)
        assert sorted(c.key for c in recovered) == ["http://a/2", "http://a/3"]
        again = await other.recover(T0 + 2 * lease + 2)  # every lease ran out again
        assert sorted(c.key for c in again) == ["http://a/2", "http://a/3"]
        assert await slow.done("http://a/1", 1, T0 + 2 * lease + 3)
        assert await other.is_done("http://a/1", 1)
        # The recovering worker's own former life wrote a/2 out: its journal reconciles it.
        assert await other.output_started("http://a/2", 1)
        later_life = await states()
        recovered = await later_life.recover(T0 + 4 * lease)
        assert sorted(c.key for c in recovered) == ["http://a/2", "http://a/3"]

    states.run(scenario)


def test_a_claim_a_gone_worker_was_writing_out_is_done_if_its_journal_holds_it(
    any_redis: tuple[str, str], tmp_path: Path
) -> None:
    """Killed between its journal line and its done mark, never restarted: the article is in
    its journal, so the worker taking its claims over reads the journal's tail and marks it
    done, with its counts, instead of fetching it into a second journal. Killed between the mark
    and the line, the article is in no journal: it is handed out again (before, it was marked
    done and lost). A journal on another host cannot be read: handed out again, and counted. A
    restart of the same worker gets its claims back (its own journal reconciles them)."""
    from crawler.core.connection import sync_redis
    from crawler.core.journal_files import journal_location

    redis_url, redis_prefix = any_redis
    states = redis_states(redis_url, redis_prefix)(["w1/a", "w2/a", "w3/a", "w3/b", "w4/a"])
    counter = f"{redis_prefix}:{{a.test}}:counted"
    journal = tmp_path / "w1.jsonl"
    line = {"entry_url": "http://a/1", "version": 1, "url": "http://a/1"}
    journal.write_text(json.dumps(line) + "\n" + '{"entry_url": "http://a/4", "ver')  # torn

    async def scenario() -> None:
        gone, taker = await states(), await states()
        await taker.heartbeat()
        await gone.register_journal(journal_location(journal))
        keys = ["http://a/1", "http://a/2", "http://a/4"]
        await gone.claim_entries([entry(key) for key in keys], T0)
        assert await gone.output_started("http://a/1", 1, [(counter, "articles")])
        assert await gone.output_started("http://a/4", 1, [(counter, "articles")])
        orphans = await taker.recover_orphans(T0 + 2)
        # a/2: never marked; a/4: marked, its line torn by the kill: both fetched again.
        assert sorted(c.key for c in orphans.claims) == ["http://a/2", "http://a/4"]
        assert (orphans.output, orphans.unverified) == (1, 0)
        assert await taker.is_done("http://a/1", 1)
        assert not await taker.is_done("http://a/4", 1)
        # A worker restarted under its name: what its last life was writing comes back to it.
        first_life, restarted = await states(), await states()
        await first_life.heartbeat()
        await first_life.claim_entries([entry("http://a/3")], T0)
        assert await first_life.output_started("http://a/3", 1, [(counter, "articles")])
        assert [c.key for c in (await restarted.recover_orphans(T0 + 3)).claims] == ["http://a/3"]
        await restarted.heartbeat()
        # A journal another host writes: it cannot be read here, so nothing is lost.
        elsewhere = await states()
        await elsewhere.register_journal("another-host\n/srv/journal.jsonl")
        await elsewhere.claim_entries([entry("http://a/5")], T0)
        assert await elsewhere.output_started("http://a/5", 1, [(counter, "articles")])
        orphans = await taker.recover_orphans(T0 + 4)
        assert [c.key for c in orphans.claims] == ["http://a/5"]
        assert (orphans.output, orphans.unverified) == (0, 1)

    states.run(scenario)
    client = sync_redis(redis_url)
    try:
        assert client.hgetall(counter) == {b"articles": b"1"}  # a/1's count, once
    finally:
        client.close()


def test_a_replay_restarted_after_a_kill_gets_back_what_it_had_marked_but_not_written(
    any_redis: tuple[str, str], tmp_path: Path
) -> None:
    """A replay (a new worker name: host:pid) takes back everything a killed one left pending
    (`recover(everything=True)`). A claim the killed replay had marked as being output is settled
    by its journal: the line is there, so the article is done (with its counts), or it is not
    (killed between the mark and the line), so it comes back to be replayed. Before, such a
    claim had its lease renewed for the dead writer and the restarted replay skipped its page
    as done: lost. A claim a sibling's start took meanwhile still names the dead writer, whose
    journal settles it for whoever takes it next; a plain lease recovery still keeps off a
    marked claim of a live worker."""
    from crawler.core.connection import sync_redis
    from crawler.core.journal_files import journal_location

    redis_url, redis_prefix = any_redis
    owners = ["host:1/a", "host:2/b", "host:3/c", "host:4/d", "elsewhere:5/e", "host:6/f"]
    states = redis_states(redis_url, redis_prefix)(owners)
    counter = f"{redis_prefix}:{{a.test}}:counted"
    journal = tmp_path / "replay.jsonl"
    journal.write_text(json.dumps({"replay_key": "warc:1", "url": "http://a/1"}) + "\n")

    async def scenario() -> None:
        killed = await states()
        await killed.heartbeat()  # killed a moment ago: its heartbeat has not run out yet
        await killed.register_journal(journal_location(journal))
        keys = ["warc:1", "warc:2", "warc:3", "warc:4"]
        await killed.claim_entries([entry(key) for key in keys], T0)
        for key in ("warc:1", "warc:2", "warc:4"):  # warc:3 was still in the pipeline
            assert await killed.output_started(key, 1, [(counter, "articles")])
        sibling, restarted, later = await states(), await states(), await states()
        # A lease recovery (a crawl) keeps off marked claims of another worker, as before.
        assert [c.key for c in await sibling.recover(T0 + 1)] == []
        # warc:4: a sibling replay process starting takes it first (not its page: it never
        # replays it, and it is killed too before it settles anything).
        taken = await sibling.recover(T0 + 1, everything=True)
        assert sorted(c.key for c in taken) == ["warc:2", "warc:3", "warc:4"]
        assert await sibling.is_done("warc:1", 1)  # its line is in the killed replay's journal
        back = await restarted.recover(T0 + 2, everything=True)
        assert sorted(c.key for c in back) == ["warc:2", "warc:3", "warc:4"]
        assert not any([await restarted.is_done(k, 1) for k in ("warc:2", "warc:3", "warc:4")])
        # The claims are the restarted replay's now: a later replay gets back what it left.
        assert sorted(c.key for c in await later.recover(T0 + 3, everything=True)) == [
            "warc:2", "warc:3", "warc:4"
        ]  # fmt: skip
        # A journal on another host cannot be read: handed out again.
        remote = await states()
        await remote.register_journal("another-host\n/srv/replay.jsonl")
        await remote.claim_entries([entry("warc:5")], T0)
        assert await remote.output_started("warc:5", 1)
        last = await (await states()).recover(T0 + 4, everything=True)
        assert sorted(c.key for c in last) == ["warc:2", "warc:3", "warc:4", "warc:5"]

    states.run(scenario)
    client = sync_redis(redis_url)
    try:
        assert client.hgetall(counter) == {b"articles": b"1"}  # warc:1's count, once
    finally:
        client.close()
