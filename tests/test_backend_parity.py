"""One rule, two backends: each store's embedded and Redis backends driven by the same random
operation sequences (Hypothesis, the real Redis under this test's key prefix), every answer and
the final state compared.

* the harvest ledger: `SqliteHarvestState` against `RedisHarvestState` (its Lua scripts);
* the notice store: `EmbeddedNoticeStore` against `notices_observe.lua`, and the whole notice
  rule (variants of established notice types included): a `NoticeLearner` on each, every verdict
  compared;
* the monitoring store: `MemoryStore` against `RedisStore` (its MULTI/EXEC and Lua scripts);
* the near-duplicate index: `EmbeddedNearDuplicateIndex` against `dedup_check_and_add.lua`,
  with order keys, so that a later-checked original supersedes its copies alike.

Each test runs PARITY_EXAMPLES sequences (60 by default, a few seconds); set the variable for a
longer search (docs/development.md). A failure prints the shortest sequence that tells the
backends apart.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from crawler.core.connection import async_redis
from crawler.core.keys import RedisKeys
from crawler.ledger import (
    Entry,
    HarvestState,
    LedgerConfig,
    RedisHarvestState,
    SqliteHarvestState,
)
from crawler.newsroom.textgen import TextGenerator
from crawler.polling import FeedState
from pipelines.dedup.embedded import EmbeddedNearDuplicateIndex
from pipelines.dedup.redis_index import RedisNearDuplicateIndex
from pipelines.fingerprints import LshParams, fingerprint
from pipelines.monitoring.alerts import NULL_RATE, YIELD_DROP, Alert, Outcome
from pipelines.monitoring.backends import (
    DomainBatch,
    MemoryStore,
    MonitorStore,
    RedisStore,
    StoreConfig,
)
from pipelines.notices.backends import EmbeddedNoticeStore, RedisNoticeStore
from pipelines.notices.learner import NoticeConfig, NoticeLearner, Observation

EXAMPLES = int(os.environ.get("PARITY_EXAMPLES", "60"))
PARITY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def prefixes(redis_prefix: str) -> Iterator[str]:
    """A fresh key prefix per example, under this test's (removed with it)."""
    return (f"{redis_prefix}:{n}" for n in itertools.count())


def read_redis(url: str, read: Callable[[redis.Redis, RedisKeys], Any], keys: RedisKeys) -> Any:
    """What `read` makes of a store's keys, with a client of its own."""
    client = redis.Redis.from_url(url)
    try:
        return read(client, keys)
    finally:
        client.close()


# --- the harvest ledger -----------------------------------------------------------------------

# Small numbers, so that short sequences reach every rule: revisions, retries, give-ups, expiry.
LEDGER = LedgerConfig(seen_ttl=900.0, max_versions=3, min_revision=45.0, max_attempts=2,
                      retry_delay=120.0, claim_lease=240.0, feed_lease=30.0)  # fmt: skip
T0 = 1_700_000_000.0
ARTICLES = ["http://a.test/1", "http://b.test/1"]
FEEDS = ["http://a.test/rss", "http://b.test/atom", "http://c.test/feed"]

article = st.sampled_from(ARTICLES)
version = st.integers(1, 2)
# Feed dates as they come: none, epoch 0 (a broken feed), a few around now (some a revision
# apart: min_revision 45 s), with or without a fraction of a second.
updated = st.sampled_from(
    [None, 0.0, T0, T0 + 30, T0 + 46, T0 + 130.5, T0 + 200.000001, T0 + 400.25]
)
CLAIM = st.tuples(st.just("claim"), st.lists(st.tuples(article, updated), min_size=1, max_size=3))
# done/fail of an article version handed out so far (the n-th, modulo), as a crawl does.
HANDED_OUT = st.tuples(st.sampled_from(["done", "fail"]), st.just(None), st.integers(0, 3))
READS_AND_UPKEEP = st.one_of(
    st.tuples(st.just("recover"), st.booleans()),
    st.tuples(st.just("is_done"), article, version),
    st.tuples(st.just("purge")),
    st.tuples(st.just("counts")),
)
FEED_SCHEDULE = st.one_of(
    st.tuples(st.just("register"), st.lists(st.sampled_from(FEEDS), max_size=3)),
    st.tuples(st.just("claim_feeds"), st.integers(1, 3)),
    st.tuples(st.just("save_feed"), st.sampled_from(FEEDS), st.sampled_from([0, 10, 40, 100])),
    st.tuples(st.just("load_feed"), st.sampled_from(FEEDS)),
    st.tuples(st.just("release_feeds")),
)
# One of these kinds, alike often (st.one_of would flatten the groups into their members).
LEDGER_OPERATIONS = st.sampled_from(
    [
        CLAIM,
        HANDED_OUT,
        HANDED_OUT,
        st.tuples(st.sampled_from(["done", "fail"]), article, version),  # any version, any state
        READS_AND_UPKEEP,
        FEED_SCHEDULE,
    ]
).flatmap(lambda kind: kind)
STEPS = st.sampled_from([0, 0, 0, 1, 29, 31, 119, 121, 239, 241, 901])  # seconds between operations


async def ledger_step(state: HarvestState, operation: tuple[Any, ...], now: float) -> Any:
    """One operation; its answer in a form both backends give alike."""
    name, *args = operation
    if name == "claim":
        entries = [Entry(key, when, {"n": n}) for n, (key, when) in enumerate(args[0])]
        return await state.claim_entries(entries, now)
    if name == "done":
        return await state.done(args[0], args[1], now)
    if name == "fail":
        return await state.fail(args[0], args[1], now)
    if name == "recover":
        return sorted(await state.recover(now, everything=args[0]), key=lambda c: c.key)
    if name == "is_done":
        return await state.is_done(args[0], args[1])
    if name == "purge":
        return await state.purge(now)
    if name == "counts":
        return await state.counts()
    if name == "register":
        return await state.register_feeds(args[0])
    if name == "claim_feeds":
        return await state.claim_due_feeds(now, args[0])
    if name == "release_feeds":
        return await state.release_feed_polls(now)
    if name == "save_feed":
        return await state.save_feed(FeedState(args[0], polls=3, next_poll=now + args[1]))
    return (await state.load_feed(args[0])).to_json()


def sqlite_ledger(state: SqliteHarvestState) -> dict[str, Any]:
    """Every record of the embedded ledger, as `redis_ledger` reads the Redis one."""
    db = state._db
    rows = db.execute("SELECT key, version, updated, status, attempts, payload, due, expires "
                      "FROM articles").fetchall()  # fmt: skip
    articles = {
        key: {"v": v, "u": u, "s": s, "a": a, "p": json.loads(p) if p else None,
              "due": due if s == "p" else None, "expires": expires}
        for key, v, u, s, a, p, due, expires in rows
    }  # fmt: skip
    feeds = dict(db.execute("SELECT url, next_poll FROM feeds").fetchall())
    states = {u: json.loads(s) for u, s in db.execute("SELECT url, state FROM feeds") if s}
    leases = {row[0] for row in db.execute("SELECT url FROM feed_leases")}
    return {"articles": articles, "feeds": feeds, "states": states, "leases": leases}


def redis_ledger(client: redis.Redis, keys: RedisKeys) -> dict[str, Any]:
    pending = dict(client.zrange(keys.harvest_pending(), 0, -1, withscores=True))
    expiry = dict(client.zrange(keys.harvest_expiry(), 0, -1, withscores=True))
    articles = {}
    for raw_key, raw in client.hgetall(keys.harvest_articles()).items():
        record = json.loads(raw)
        p = record.get("p")
        articles[raw_key.decode()] = {
            "v": record["v"], "u": record.get("u"), "s": record["s"], "a": record.get("a", 0),
            "p": json.loads(p) if p else None, "due": pending.get(raw_key),
            "expires": expiry.get(raw_key),
        }  # fmt: skip
    due = client.zrange(keys.harvest_due(), 0, -1, withscores=True)
    states = client.hgetall(keys.harvest_feeds())
    return {
        "articles": articles,
        "feeds": {url.decode(): score for url, score in due},
        "states": {url.decode(): json.loads(state) for url, state in states.items()},
        "leases": {url.decode() for url in client.hkeys(keys.harvest_feed_owners())},
    }


@PARITY
@given(steps=st.lists(st.tuples(STEPS, LEDGER_OPERATIONS), min_size=10, max_size=40))
def test_the_ledger_answers_alike_on_both_backends(
    steps: list[tuple[int, tuple[Any, ...]]], prefixes: Iterator[str], redis_url: str
) -> None:
    keys = RedisKeys(next(prefixes))
    embedded = SqliteHarvestState(LEDGER, ":memory:", owner="w1/a")
    shared = RedisHarvestState(LEDGER, redis_url, keys, owner="w1/a")

    async def run() -> None:
        now, handed_out = T0, []
        for number, (step, operation) in enumerate(steps):
            now += step
            if len(operation) == 3 and operation[1] is None:  # ("done" | "fail", None, n)
                if not handed_out:
                    continue
                operation = (operation[0], *handed_out[operation[2] % len(handed_out)])
            answers = [await ledger_step(state, operation, now) for state in (embedded, shared)]
            assert answers[0] == answers[1], (number, operation, answers)
            if operation[0] in ("claim", "recover"):
                handed_out += [(claim.key, claim.version) for claim in answers[0]]
            if operation[0] in ("claim", "done", "fail"):  # what the sequences reach
                event(f"{operation[0]}: {ledger_event(answers[0])}")

    async def opened() -> None:
        await embedded.open()
        await shared.open()
        try:
            await run()
        finally:
            await shared.close()

    asyncio.run(opened())
    try:
        assert sqlite_ledger(embedded) == read_redis(redis_url, redis_ledger, keys)
    finally:
        asyncio.run(embedded.close())


def ledger_event(answer: Any) -> str:
    if isinstance(answer, list):
        return f"versions {sorted({claim.version for claim in answer})}"
    return str(answer)


# --- the notice store -------------------------------------------------------------------------

# Small, so that sequences reach eviction (max_signatures), near copies and a rebase of the
# decay (20 time constants: some steps are that long).
NOTICES = NoticeConfig(min_articles=2, half_life_seconds=3600.0, max_signatures=5,
                       idle_ttl_seconds=1e9)  # fmt: skip
REBASE_STEP = 150_000.0  # > 20 decay time constants (3600 s / ln 2 each)
DOMAINS = ["a.test", "b.test"]
# Digests on both sides of the sign bit: SQLite keeps them as signed integers, Redis as bytes.
DIGESTS = [bytes([b]) * 8 for b in (0x01, 0x02, 0x03, 0x7F, 0x80, 0x81, 0xFE, 0xFF)]
IDENTITIES = [bytes([b]) * 8 for b in (0x10, 0x11, 0x90)]  # never a block's signature

digests = st.lists(st.sampled_from(DIGESTS), unique=True)


@st.composite
def observations(draw: st.DrawFn) -> tuple[float, str, tuple[bytes, ...], tuple[bytes, ...], Any]:
    """(seconds since the last, domain, identities, signatures, near-copy evidence)."""
    signatures = tuple(draw(digests.filter(bool)))
    indices = st.lists(st.integers(0, len(signatures) - 1), min_size=1, max_size=3, unique=True)
    evidence = draw(st.lists(st.tuples(st.integers(1, 40), indices.map(tuple)), max_size=3))
    identities = tuple(draw(st.lists(st.sampled_from(IDENTITIES), min_size=1, max_size=2)))
    step = draw(st.sampled_from([0.0, 1.0, 600.0, 7200.0, REBASE_STEP]))
    return step, draw(st.sampled_from(DOMAINS)), identities, signatures, tuple(evidence)


def sqlite_notices(path: Path) -> dict[str, Any]:
    """Every domain's signatures, scores and meta, as `redis_notices` reads Redis."""
    db = sqlite3.connect(path)
    try:
        state: dict[str, Any] = {}
        for domain, t0, articles, size in db.execute(
            "SELECT domain, t0, articles, size FROM notice_domains"
        ):
            rows = db.execute(
                "SELECT signature, score FROM notice_signatures WHERE domain = ?", (domain,)
            )
            scores = {s.to_bytes(8, "big", signed=True): score for s, score in rows}
            state[domain] = {"t0": t0, "articles": articles, "size": size, "scores": scores}
        return state
    finally:
        db.close()


def redis_notices(client: redis.Redis, keys: RedisKeys) -> dict[str, Any]:
    state: dict[str, Any] = {}
    for domain in DOMAINS:
        meta = client.hgetall(keys.notice_meta(domain))
        if not meta:
            continue
        scores = dict(client.zrange(keys.notice_signatures(domain), 0, -1, withscores=True))
        state[domain] = {"t0": float(meta[b"t0"]), "articles": float(meta[b"articles"]),
                         "size": len(scores), "scores": scores}  # fmt: skip
    return state


@PARITY
@given(sequence=st.lists(observations(), min_size=1, max_size=25))
def test_the_notice_store_answers_alike_on_both_backends(
    sequence: list[Any], prefixes: Iterator[str], redis_url: str, tmp_path_factory: Any
) -> None:
    keys = RedisKeys(next(prefixes))
    path = tmp_path_factory.mktemp("notices") / "notices.sqlite3"

    async def run() -> None:
        embedded = EmbeddedNoticeStore(path, NOTICES)
        shared = RedisNoticeStore(async_redis(redis_url), keys, NOTICES)
        try:
            now = T0
            for number, (step, domain, identities, signatures, evidence) in enumerate(sequence):
                now += step
                observation = Observation(domain, now, identities, signatures, evidence)
                answers = [await store.observe(observation) for store in (embedded, shared)]
                assert answers[0] == answers[1], (number, observation, answers)
                event(f"status: {answers[0].status}")
        finally:
            await embedded.aclose()
            await shared.aclose()

    asyncio.run(run())
    assert sqlite_notices(path) == read_redis(redis_url, redis_notices, keys)


# The whole rule, variants included: articles made of notices (their usual wordings and
# variants in other languages), traps (an editorial note, a story sentence quoting a follow-us
# line) and story paragraphs, judged by a learner on each backend; every verdict compared.
# Small thresholds, so that short sequences establish types, end the cold start and evict.
LEARNER = NoticeConfig(min_articles=2, min_share=0.1, half_life_seconds=3600.0,
                       max_signatures=40, idle_ttl_seconds=1e9, prior_articles=3,
                       min_body_chars=120)  # fmt: skip
NOTICE_LINES = [
    "\u00a9 2026 Rundschau Verlag GmbH. Alle Rechte vorbehalten.",
    "Folgen Sie uns auf Instagram, Facebook und WhatsApp.",
    "Suivez-nous sur Facebook, Instagram et X.",
    "Follow us on WhatsApp for breaking news alerts.",
    "Abonnieren Sie jetzt unseren Newsletter Der Morgen.",
    "Meld je aan voor onze nieuwsbrief De Ochtend.",
    "Lesen Sie auch: Neue Pläne für den Bahnhof",
    "Dieser Artikel erschien in der gedruckten Ausgabe vom 3. Mai 2026.",
]
TRAPS = [
    "Berichtigung: In einer früheren Version dieses Artikels hieß es, der Rat tage am Montag.",
    "Plakate mit der Aufschrift \u201eSuivez-nous sur Instagram\u201c hingen in ganz Bremen.",
    "Mit Material von dpa und Reuters.",
]
STORY = [
    "Der Stadtrat hat am Dienstag einen neuen Haushalt für Schulen und Parks beschlossen.",
    "Anwohner sagten, die Entscheidung komme für viele Familien zu spät, die bereits weggezogen "
    "seien, und forderten schnellere Hilfe.",
    "Die Bauarbeiten sollen im Frühjahr beginnen, wenn das Wetter mitspielt, sagte die "
    "Bürgermeisterin bei der Vorstellung der Pläne.",
    "Kritiker bemängeln, dass die Kosten seit der ersten Schätzung um ein Drittel gestiegen sind.",
]
article_blocks = st.lists(
    st.one_of(st.sampled_from(NOTICE_LINES), st.sampled_from(TRAPS), st.sampled_from(STORY)).map(
        lambda text: ("paragraph", text)
    ),
    min_size=1,
    max_size=8,
)
articles = st.tuples(
    st.sampled_from([0.0, 60.0, 3600.0, REBASE_STEP]),  # seconds since the last
    st.sampled_from(DOMAINS),
    st.integers(0, 5),  # identity: re-crawls of one URL come back
    st.sampled_from(["de", "fr", None]),  # the detected language (None: unknown)
    article_blocks,
)


@PARITY
@given(sequence=st.lists(articles, min_size=1, max_size=20))
def test_the_notice_rule_judges_alike_on_both_backends(
    sequence: list[Any], prefixes: Iterator[str], redis_url: str, tmp_path_factory: Any
) -> None:
    keys = RedisKeys(next(prefixes))
    path = tmp_path_factory.mktemp("notices") / "notices.sqlite3"

    async def run() -> None:
        learners = [
            NoticeLearner(EmbeddedNoticeStore(path, LEARNER), LEARNER),
            NoticeLearner(RedisNoticeStore(async_redis(redis_url), keys, LEARNER), LEARNER),
        ]
        try:
            now = T0
            for number, (step, domain, identity, language, blocks) in enumerate(sequence):
                now += step
                verdicts = [
                    await learner.process(
                        domain, blocks, identities=(f"{domain}/{identity}",), now=now,
                        language=language,
                    )
                    for learner in learners
                ]  # fmt: skip
                assert verdicts[0] == verdicts[1], (number, blocks, verdicts)
                event(f"removed by: {sorted({r.reason for r in verdicts[0].removed})}")
        finally:
            for learner in learners:
                await learner.store.aclose()

    asyncio.run(run())


# --- the monitoring store ---------------------------------------------------------------------

# A short retention (10 buckets) and long steps, so that series are trimmed; the counters live
# longer than any sequence (Redis forgets a silent domain by key TTLs, in real time).
MONITOR = StoreConfig(bucket_seconds=60.0, retention_seconds=600.0, counters_ttl_seconds=1e7,
                      history_pages=4)  # fmt: skip
MONITOR_DOMAINS = ["a.test", "b.test"]
COUNTED = ["fetched", "articles", "null", "null/no_content", "errors", "feeds/polled"]
TIMING = "seconds/extract/sum"


@st.composite
def domain_batches(draw: st.DrawFn) -> dict[str, Any]:
    """What DomainBatch holds, times as seconds before the flush (built at the flush's time)."""
    last = draw(st.one_of(st.none(), st.integers(0, 500)))
    return {
        "counters": draw(st.dictionaries(st.sampled_from(COUNTED), st.integers(1, 5))),
        "seconds": draw(st.lists(st.floats(0.0, 10.0, allow_nan=False), max_size=3)),
        "series": draw(st.dictionaries(st.sampled_from([0, 1, 15]), st.integers(1, 5))),
        "outcomes": draw(st.lists(st.tuples(st.booleans(), st.integers(1, 9000)), max_size=3)),
        "first": None if last is None else last + draw(st.integers(0, 100)),
        "last": last,
        "polls": draw(st.integers(0, 3)),
    }


def domain_batch(spec: dict[str, Any], domain: str, now: float) -> DomainBatch:
    batch = DomainBatch(counters=Counter(spec["counters"]))
    for seconds in spec["seconds"]:
        batch.counters[TIMING] += seconds
        batch.counters["seconds/extract/count"] += 1
    for back, count in spec["series"].items():
        batch.series[MONITOR.bucket(now) - back]["fetched"] += count
    batch.outcomes = [Outcome(null, 0 if null else chars, f"http://{domain}/{n}")
                      for n, (null, chars) in enumerate(spec["outcomes"])]  # fmt: skip
    batch.first_article_at = None if spec["first"] is None else now - spec["first"]
    batch.last_article_at = None if spec["last"] is None else now - spec["last"]
    batch.polls_since_article = spec["polls"]
    return batch


alert = st.tuples(st.sampled_from(MONITOR_DOMAINS), st.sampled_from([NULL_RATE, YIELD_DROP]))
MONITOR_OPERATIONS = st.one_of(
    st.tuples(st.just("apply"), st.dictionaries(st.sampled_from(MONITOR_DOMAINS),
              domain_batches(), min_size=1), st.sets(st.sampled_from(MONITOR_DOMAINS))),
    st.tuples(st.just("fire"), alert),
    st.tuples(st.just("resolve"), alert),
    st.tuples(st.just("read")),
)  # fmt: skip


async def monitor_step(store: MonitorStore, operation: tuple[Any, ...], now: float) -> Any:
    name, *args = operation
    if name == "apply":
        batch = {domain: domain_batch(spec, domain, now) for domain, spec in args[0].items()}
        return await store.apply(batch, now, want=args[1])
    if name in ("fire", "resolve"):
        domain, kind = args[0]
        fired = Alert(domain, kind, f"{kind} on {domain}", now, 0.5, 0.1)
        done = await (store.fire(fired) if name == "fire" else store.resolve(fired, now))
        return done, await store.active_alerts()
    return await monitor_views(store)


async def monitor_views(store: MonitorStore) -> tuple[list[str], dict[str, Any]]:
    """The domains and what a reader sees of each: series, and counters (timing sums rounded:
    Redis adds them in long double)."""
    domains = await store.domains()
    views = await store.domain_views(domains)
    return domains, {
        domain: (
            {name: round(value, 9) for name, value in view.counters.items()},
            {bucket: dict(counts) for bucket, counts in view.series.items()},
        )
        for domain, view in views.items()
    }


@PARITY
@given(steps=st.lists(st.tuples(st.sampled_from([0, 1, 59, 61, 600, 1900, 2000]),
                                MONITOR_OPERATIONS), min_size=1, max_size=20))  # fmt: skip
def test_the_monitoring_store_answers_alike_on_both_backends(
    steps: list[tuple[int, tuple[Any, ...]]], prefixes: Iterator[str], redis_url: str
) -> None:
    async def run() -> None:
        memory = MemoryStore(MONITOR)
        shared = RedisStore(async_redis(redis_url), RedisKeys(next(prefixes)), MONITOR)
        try:
            now = T0
            for number, (step, operation) in enumerate(steps):
                now += step
                answers = [await monitor_step(store, operation, now) for store in (memory, shared)]
                assert answers[0] == answers[1], (number, operation, answers)
            assert await monitor_views(memory) == await monitor_views(shared)
        finally:
            await shared.close()

    asyncio.run(run())


# --- the near-duplicate index -----------------------------------------------------------------

DEDUP = LshParams.for_threshold(0.8)
DEDUP_TTL = 3600


def _story_variants() -> list[Any]:
    """Fingerprints of two stories, each as printed, as syndicated (own dateline and credit
    line: a near copy) and as reprinted with one word changed (another near copy)."""
    texts = []
    for seed in (11, 12):
        story = TextGenerator(seed).story("politics", 8)
        texts.append("\n".join(story))
        texts.append("WIRE (Agency) - " + "\n".join(story) + "\nDistributed by the Agency.")
        texts.append("\n".join(story).replace(" the ", " a ", 1))
    return [fingerprint(text, DEDUP) for text in texts]


DEDUP_TEXTS = _story_variants()
DEDUP_IDS = [f"http://{site}.test/story" for site in "abcde"]
DEDUP_KEYS = ["", "c|2026-01-01", "c|2026-01-02", "r|000000|000000000000100", "~r|0|5"]
DEDUP_OPERATIONS = st.tuples(
    st.sampled_from(DEDUP_IDS),
    st.integers(0, len(DEDUP_TEXTS) - 1),
    st.sampled_from(DEDUP_KEYS),
    st.booleans(),  # add (False: only look)
)


def embedded_dedup_records(index: EmbeddedNearDuplicateIndex) -> dict[int, tuple[str, str]]:
    rows = index.db.execute("SELECT docnum, doc_id, order_key FROM records").fetchall()
    return {docnum: (doc_id, key) for docnum, doc_id, key in rows}


def redis_dedup_records(client: redis.Redis, keys: RedisKeys) -> dict[int, tuple[str, str]]:
    records = {}
    prefix = keys.dedup_record_prefix()
    for key in client.scan_iter(match=f"{prefix}*", count=1000):
        value = client.get(key)
        assert value is not None
        owner, _, order_key = value[len(DEDUP_TEXTS[0].sketch) :].decode().partition("\0")
        records[int(key.decode()[len(prefix) :])] = (owner, order_key)
    return records


@PARITY
@given(sequence=st.lists(DEDUP_OPERATIONS, min_size=1, max_size=12))
def test_the_near_duplicate_index_answers_alike_on_both_backends(
    sequence: list[Any], prefixes: Iterator[str], redis_url: str, tmp_path_factory: Any
) -> None:
    keys = RedisKeys(next(prefixes))
    path = tmp_path_factory.mktemp("dedup") / "dedup.sqlite3"
    embedded = EmbeddedNearDuplicateIndex(path, DEDUP, DEDUP_TTL)
    shared = RedisNearDuplicateIndex(redis.Redis.from_url(redis_url), DEDUP, keys, DEDUP_TTL)
    try:
        for number, (doc_id, text, order_key, add) in enumerate(sequence):
            found = DEDUP_TEXTS[text]
            answers = [
                index.check_fingerprint(doc_id, found, add=add, order_key=order_key)
                for index in (embedded, shared)
            ]
            assert answers[0] == answers[1], (number, sequence[: number + 1], answers)
            event(f"verdict: {answers[0].kind}{' superseding' if answers[0].superseded else ''}")
        assert embedded_dedup_records(embedded) == read_redis(redis_url, redis_dedup_records, keys)
    finally:
        embedded.close()
        shared.close()
