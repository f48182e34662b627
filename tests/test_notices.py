"""Per-domain notice suppression: the learner, both stores (real Redis, SQLite), the pipeline."""

from __future__ import annotations

import asyncio
import json
import pickle
import re
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import redis
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.test import get_crawler

from crawler.core.connection import async_redis, sync_redis
from crawler.core.keys import RedisKeys
from crawler.newsroom import Newsroom, textgen
from extractors import Article
from extractors.article import running_text, running_texts, word_count
from extractors.markdown import to_markdown
from pipelines.extraction.workers import run_preparations
from pipelines.fingerprints import LshParams, content_hash, fingerprint, fingerprint_blocks
from pipelines.notices import (
    NULL_ONLY_NOTICES,
    EmbeddedNoticeStore,
    NoticeConfig,
    NoticeLearner,
    RedisNoticeStore,
    Verdict,
    normalized_tokens,
)
from pipelines.notices.learner import (
    COPY,
    COUNTED,
    DAY_SECONDS,
    KNOWN,
    PRIOR_APPEAL,
    PRIOR_CALL,
    PRIOR_CREDIT,
    PRIOR_FOLLOW,
    PRIOR_LICENSE,
    PRIOR_PRINT,
    PRIOR_RELATED,
    PRIOR_RIGHTS,
    REASON_VARIANT,
    UNAVAILABLE,
    is_editorial_note,
    prepare,
    prepare_extracted,
    prior_kind,
    split_slot,
)
from pipelines.notices.pipeline import NoticePipeline
from settings import base
from tests.support.redis_backends import redis_backend

T0 = 1_790_000_000.0  # a fixed clock: every test passes `now` explicitly
HOUR = 3600.0
DOMAIN = "example.test"
COPYRIGHT = (
    "\u00a9 2026 Example Media Group. All rights reserved. This material may not be published, "
    "broadcast, rewritten or redistributed without permission."
)
# Not matched by any lexical prior: only learning can remove it.
SOCIAL = "Follow Example Daily on social media for the latest updates from our newsroom team."
# Learning alone (no priors), three distinct articles make a notice.
LEARN_ONLY = NoticeConfig(min_articles=3, min_share=0.1, prior_articles=0)
HOSTILE_BUDGET_SECONDS = 5.0

Blocks = list[tuple[str, str]]


# --- Stories --------------------------------------------------------------------------------


class Stories:
    """Distinct, realistic story bodies from the fixture's text generator."""

    def __init__(self, seed: str = "notices") -> None:
        self.tg = textgen.TextGenerator(seed)

    def body(self, n_paragraphs: int = 5) -> Blocks:
        topic = textgen.TOPICS[0]
        return [("paragraph", p) for p in self.tg.story(topic, n_paragraphs)]


# --- Store fixtures: every behaviour runs on both backends -----------------------------------

StoreFactory = Callable[[NoticeConfig], Any]


@pytest.fixture(params=["redis", "redis-cluster", "embedded"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """A factory of stores of one backend (call it inside the event loop that uses the store)."""
    if request.param != "embedded":
        url, prefix = redis_backend(request, request.param)
        return lambda config: RedisNoticeStore(async_redis(url), RedisKeys(prefix), config)
    return lambda config: EmbeddedNoticeStore(tmp_path / "notices.sqlite3", config)


def run(
    make_store: StoreFactory,
    scenario: Callable[[NoticeLearner], Awaitable[Any]],
    config: NoticeConfig = LEARN_ONLY,
) -> Any:
    """Run `scenario` with a fresh learner on one event loop, closing its store after."""

    async def main() -> Any:
        learner = NoticeLearner(make_store(config), config)
        try:
            return await scenario(learner)
        finally:
            await learner.store.aclose()

    return asyncio.run(main())


async def feed(
    learner: NoticeLearner,
    articles: Sequence[Blocks],
    *,
    start: float = T0,
    step: float = HOUR,
    domain: str = DOMAIN,
    ids: Sequence[str] | None = None,
    language: str | None = None,
) -> list[Verdict]:
    verdicts = []
    for i, blocks in enumerate(articles):
        identity = ids[i] if ids else f"https://{domain}/story/{start + i * step}"
        now = start + i * step
        verdict = await learner.process(
            domain, blocks, identities=(identity,), now=now, language=language
        )
        verdicts.append(verdict)
    return verdicts


def texts(verdict: Verdict) -> list[str]:
    return [text for _, text in verdict.blocks]


def removed(verdict: Verdict) -> list[str]:
    return [r.block[1] for r in verdict.removed]


# --- Normalisation and priors (pure) ---------------------------------------------------------


def test_normalisation_ignores_case_spacing_punctuation_years_dates_and_section_letters() -> None:
    same = [
        "\u00a9 2025 Example Media. All rights reserved.",
        "\u00a9  2026 EXAMPLE MEDIA -- all rights reserved",
        "(c) 1999 Example\u00a0Media: All Rights Reserved!",
    ]
    assert len({" ".join(normalized_tokens(t)) for t in same}) == 1
    print_lines = [
        "A version of this article appears in print on November 3, 2026, Section A, Page 12.",
        "A version of this article appears in print on Oct. 14, 2016, Section D, Page 3.",
    ]
    assert normalized_tokens(print_lines[0]) == normalized_tokens(print_lines[1])
    assert normalized_tokens("Published Monday") == normalized_tokens("published FRIDAY")
    assert normalized_tokens("The council voted") != normalized_tokens("The council objected")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (COPYRIGHT, PRIOR_RIGHTS),
        ("Copyright 2026 Example Corp.", PRIOR_RIGHTS),
        ("A version of this article appears in print on May 2, Section B.", PRIOR_PRINT),
        ("Get our morning briefing in your inbox. Sign up for our free newsletter.", PRIOR_CALL),
        ("Have a news tip? Email tips@example.test.", PRIOR_CALL),
        ("Subscribe today to support local journalism.", PRIOR_CALL),
        ("Send corrections to corrections@example.test.", PRIOR_APPEAL),
        ("Scam emails keep landing in your inbox, police warned.", PRIOR_APPEAL),  # tail only
        ("The band said the print edition of its memoir sold out.", None),
        ("The studio sued, alleging copyright infringement on a large scale.", None),
        ("Printing costs rose sharply, the newspaper's publisher said on Tuesday.", None),
        ("She offered a tip to younger players: practise every single day.", None),
    ],
)
def test_lexical_priors(text: str, kind: str | None) -> None:
    assert prior_kind(text) == kind


# --- Learning (both backends) ----------------------------------------------------------------


def test_a_block_in_k_distinct_articles_becomes_a_notice(make_store: StoreFactory) -> None:
    stories = Stories()
    articles = [[*stories.body(), ("paragraph", SOCIAL)] for _ in range(8)]
    verdicts = run(make_store, lambda learner: feed(learner, articles))
    assert [SOCIAL in texts(v) for v in verdicts] == [True, True] + [False] * 6  # K = 3
    assert all(v.status == COUNTED for v in verdicts)
    for article, verdict in zip(articles[2:], verdicts[2:], strict=True):
        assert texts(verdict) == [t for _, t in article if t != SOCIAL]  # the story stays whole
    assert removed(verdicts[2]) == [SOCIAL] and verdicts[2].removed[0].reason == "learned"


@pytest.mark.parametrize(("kind", "kept"), [("preformatted", True), ("paragraph", False)])
def test_text_set_out_in_pre_is_never_a_notice(
    make_store: StoreFactory, kind: str, kept: bool
) -> None:
    # A project's posts repeat its install lines and a license header in their code: the posts'
    # text, as a recurring table row is data. The same lines as paragraphs are learned.
    stories = Stories()
    install = "pip install ledgerly\nledgerly init --data /var/lib/ledgerly"
    header = "# Copyright 2026 Example Ltd. All rights reserved.\nimport ledgerly"
    articles = [[*stories.body(), (kind, install), (kind, header)] for _ in range(8)]
    verdicts = run(make_store, lambda learner: feed(learner, articles))
    assert all(install in texts(v) and header in texts(v) for v in verdicts) is kept


def test_notices_varying_in_year_date_codes_and_headline_are_one_notice(
    make_store: StoreFactory,
) -> None:
    stories = Stories()
    articles = []
    for i in range(6):
        line = (
            f"A version of this article appears in print on {['May', 'June'][i % 2]} {i + 2}, "
            f"{2025 + i % 2}, Section {'ABCD'[i % 4]}, Page {i * 3 + 1} of the Example Daily "
            f"with the headline: {stories.tg.headline(textgen.TOPICS[1])}."
        )
        articles.append([*stories.body(), ("paragraph", line)])
    verdicts = run(make_store, lambda learner: feed(learner, articles))
    assert [len(v.removed) for v in verdicts] == [0, 0, 1, 1, 1, 1]
    assert all(r.block[1].startswith("A version of") for v in verdicts for r in v.removed)


def test_recrawls_and_copies_of_one_story_never_make_its_paragraphs_notices(
    make_store: StoreFactory,
) -> None:
    story = Stories().body(6)
    url = f"https://{DOMAIN}/story/1"
    copies = []
    for i in range(5):  # edited copies under other URLs (AMP, print, a syndication partner)
        copy = list(story)
        copy[0] = ("paragraph", f"WASHINGTON (AP) \u2014 {story[0][1]}")
        del copy[1 + i % 4]
        copy[-1] = ("paragraph", copy[-1][1].replace(" the ", " a ", 1))
        copies.append(copy)

    async def scenario(learner: NoticeLearner) -> list[Verdict]:
        same_page = await feed(learner, [story] * 5, ids=[url] * 5)  # fetched five times
        later = T0 + 10 * HOUR
        ids = [f"{url}?v={i}" for i in range(5)]
        return same_page + await feed(learner, copies, start=later, ids=ids)

    verdicts = run(make_store, scenario)
    assert [v.status for v in verdicts] == [COUNTED] + [KNOWN] * 4 + [COPY] * 5
    assert not [v for v in verdicts if v.removed]


def test_story_text_that_repeats_is_not_a_notice(make_store: StoreFactory) -> None:
    stories = Stories()
    quote = ("quote", '"We will not stop until the water is safe," the mayor said on Monday.')
    lead = [("paragraph", "WASHINGTON (AP) \u2014"), ("paragraph", "By Ana Ruiz and Li Wei")]
    credit = ("paragraph", "This story was originally published by the Valley Times.")
    articles = []
    for i in range(12):
        body = stories.body()
        if i < 2:
            body.insert(2, quote)  # a quote shared by two stories
        if i == 5:
            body += [body[1], body[1], body[1]]  # a block repeated within one article
        articles.append([*lead, *body, credit])  # datelines, bylines, credits in every one
    verdicts = run(make_store, lambda learner: feed(learner, articles))
    assert [removed(v) for v in verdicts if v.removed] == []


def test_share_threshold_ignores_blocks_rare_in_a_busy_domain(make_store: StoreFactory) -> None:
    stories = Stories()
    rare = ("paragraph", "Correction: an earlier version of this story misstated a date.")
    articles = [stories.body() + ([rare] if i % 10 == 9 else []) for i in range(40)]
    config = NoticeConfig(min_articles=3, min_share=0.2, prior_articles=0)
    verdicts = run(make_store, lambda learner: feed(learner, articles), config)
    assert not [v for v in verdicts if v.removed]  # in 4 of 40 articles: 10% < 20%


def test_stale_notices_fade_and_time_rebasing_keeps_counts(make_store: StoreFactory) -> None:
    config = NoticeConfig(
        min_articles=3, min_share=0.0, prior_articles=0, half_life_seconds=DAY_SECONDS
    )
    stories = Stories()
    batches = [[[*stories.body(), ("paragraph", SOCIAL)] for _ in range(3)] for _ in range(2)]
    probe = [*stories.body(), ("paragraph", SOCIAL)]
    later = T0 + 30 * DAY_SECONDS  # 30 half-lives: past the rebase point

    async def scenario(learner: NoticeLearner) -> tuple[list[Verdict], list[Verdict], Any, int]:
        first = await feed(learner, batches[0])
        second = await feed(learner, batches[1], start=later)
        article = learner.prepare(DOMAIN, probe, ("probe",), later + 4 * HOUR)
        evidence = await learner.store.observe(article.observation)
        return first, second, evidence, article.facts[-1].full

    first, second, evidence, social = run(make_store, scenario, config)
    assert [len(v.removed) for v in first] == [0, 0, 1]
    assert [len(v.removed) for v in second] == [0, 0, 1]  # faded, then learned afresh
    assert 3.5 < evidence.counts[social] <= 4.0  # four fresh sightings, barely decayed
    assert 3.5 < evidence.articles <= 4.0 + 1e-9  # the three old articles weigh nothing


def test_memory_per_domain_is_bounded_and_notices_survive_eviction(
    make_store: StoreFactory,
) -> None:
    config = NoticeConfig(min_articles=3, min_share=0.1, prior_articles=0, max_signatures=60)
    stories = Stories()
    articles = [[*stories.body(6), ("paragraph", SOCIAL)] for _ in range(60)]

    async def scenario(learner: NoticeLearner) -> tuple[list[Verdict], int]:
        verdicts = await feed(learner, articles)
        return verdicts, await stored_signatures(learner.store, DOMAIN)

    verdicts, stored = run(make_store, scenario, config)
    assert all(removed(v) == [SOCIAL] for v in verdicts[2:])
    assert stored <= 60


def test_domains_learn_separately(make_store: StoreFactory) -> None:
    stories = Stories()
    articles = [[*stories.body(), ("paragraph", SOCIAL)] for _ in range(5)]

    async def scenario(learner: NoticeLearner) -> list[Verdict]:
        await feed(learner, articles[:4])
        return await feed(learner, articles[4:], domain="other.test")

    (other,) = run(make_store, scenario)
    assert SOCIAL in texts(other)


def test_a_page_that_is_only_notices_is_null(make_store: StoreFactory) -> None:
    stories = Stories()
    trained = [[*stories.body(), ("paragraph", COPYRIGHT)] for _ in range(3)]
    video = [
        ("paragraph", "1:24"),
        ("paragraph", "Watch the mayor speak."),
        ("paragraph", COPYRIGHT),
    ]
    teasers = [("heading", "Up next")] + [("list_item", stories.tg.headline("sport"))] * 3
    brief = [("paragraph", "The bridge reopens on Monday after repairs."), ("paragraph", COPYRIGHT)]
    article = [*stories.body(), ("paragraph", COPYRIGHT)]

    async def scenario(learner: NoticeLearner) -> list[Verdict]:
        await feed(learner, trained)
        return await feed(learner, [video + teasers, brief, article], start=T0 + 10 * HOUR)

    verdicts = run(make_store, scenario)
    assert [v.null_reason for v in verdicts] == [NULL_ONLY_NOTICES, NULL_ONLY_NOTICES, None]
    assert removed(verdicts[2]) == [COPYRIGHT]  # a real article with the notice stays an article


def test_cold_start_priors_remove_obvious_notices_from_the_first_article(
    make_store: StoreFactory,
) -> None:
    config = NoticeConfig(min_articles=3, min_share=0.1, prior_articles=5)
    stories = Stories()
    body = stories.body(6)
    newsletter = "Get the Example morning briefing in your inbox. Sign up for our free newsletter."
    story_rights = "The label said every photo is \u00a9 its owner and may not be reproduced."
    story_inbox = "Police said scam emails keep landing in your inbox at this time of year."
    first = [*body[:3], ("paragraph", newsletter), ("paragraph", story_rights), *body[3:]]
    first.insert(2, ("paragraph", story_inbox))
    first.append(("paragraph", COPYRIGHT))
    once = "Copyright 2026 Example. Reprints: call the syndication desk on weekdays."

    async def scenario(learner: NoticeLearner) -> tuple[Verdict, Verdict]:
        (cold,) = await feed(learner, [first])
        await feed(learner, [stories.body() for _ in range(5)], start=T0 + HOUR)
        (warm,) = await feed(learner, [[*stories.body(), ("paragraph", once)]], start=T0 + 9 * HOUR)
        return cold, warm

    cold, warm = run(make_store, scenario, config)
    # Calls to action go wherever they are; rights lines only at the end of the body.
    assert removed(cold) == [newsletter, COPYRIGHT]
    assert {r.reason for r in cold.removed} == {"prior"}
    assert not warm.removed  # once a domain has evidence (prior_articles), only evidence removes


def test_hostile_articles_cost_bounded_time(make_store: StoreFactory) -> None:
    huge = [("paragraph", "word " * 200_000)]  # one 1 MB block
    many = [
        ("paragraph", f"Block number {i} of a page with far too many blocks.")
        for i in range(20_000)
    ]
    # Near the per-block size limit, text that makes unbounded patterns backtrack.
    tricky = [("paragraph", "a" * 3990 + "@"), ("paragraph", "a." * 1995 + "@")] * 100
    tricky += [("paragraph", ": " * 1990), ("paragraph", "Aa. " * 990)] * 100
    started = time.perf_counter()
    articles = [huge, many, tricky, [], [("paragraph", "")]]
    verdicts = run(make_store, lambda learner: feed(learner, articles))
    assert time.perf_counter() - started < HOSTILE_BUDGET_SECONDS
    assert [len(v.blocks) for v in verdicts] == [1, 20_000, 400, 0, 1]


def test_backends_agree_and_clean_the_fixture(
    redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    """Ground-truth blocks plus in-container notices, in publication order: both backends give
    the same verdicts, every notice goes (priors first, then evidence) and nothing else does."""
    room = Newsroom(seed=3, n_domains=10, articles_per_domain=12)
    pages = sorted(room.articles(), key=lambda p: p.published)
    inputs = [
        [(b.kind, b.text) for b in p.blocks] + [("paragraph", n) for n in p.notices] for p in pages
    ]
    config = NoticeConfig()
    stores = {
        "redis": lambda _: RedisNoticeStore(
            async_redis(redis_url), RedisKeys(redis_prefix), config
        ),
        "embedded": lambda _: EmbeddedNoticeStore(tmp_path / "n.sqlite3", config),
    }

    async def scenario(learner: NoticeLearner) -> list[Verdict]:
        return [
            await learner.process(
                p.domain, blocks, identities=(p.url,), now=p.published.timestamp()
            )
            for blocks, p in zip(inputs, pages, strict=True)
        ]

    results = {
        name: [(v.status, removed(v), v.null_reason) for v in run(factory, scenario, config)]
        for name, factory in stores.items()
    }
    assert results["redis"] == results["embedded"]
    gone = [verdict[1] for verdict in results["redis"]]
    assert [n for p, g in zip(pages, gone, strict=True) for n in p.notices if n not in g] == []
    assert [t for p, g in zip(pages, gone, strict=True) for t in g if t not in p.notices] == []


# --- Concurrency, persistence, expiry -----------------------------------------------------------


def test_concurrent_workers_on_redis_lose_no_update(redis_url: str, redis_prefix: str) -> None:
    stories = Stories()
    articles = [[*stories.body(3), ("paragraph", SOCIAL)] for _ in range(40)]

    async def scenario() -> tuple[Any, int]:
        workers = [
            NoticeLearner(
                RedisNoticeStore(async_redis(redis_url), RedisKeys(redis_prefix), LEARN_ONLY),
                LEARN_ONLY,
            )
            for _ in range(4)
        ]
        await asyncio.gather(
            *(
                workers[i % 4].process(DOMAIN, blocks, identities=(f"u{i}",), now=T0)
                for i, blocks in enumerate(articles)
            )
        )
        probe = workers[0].prepare(DOMAIN, [("paragraph", SOCIAL)], ("probe",), T0)
        evidence = await workers[0].store.observe(probe.observation)
        for worker in workers:
            await worker.store.aclose()
        return evidence, probe.facts[0].full

    evidence, social = asyncio.run(scenario())
    assert evidence.articles == pytest.approx(41.0)  # 40 concurrent articles + the probe
    assert evidence.counts[social] == pytest.approx(41.0)
    ttl = sync_redis(redis_url).ttl(RedisKeys(redis_prefix).notice_signatures(DOMAIN))
    assert 0 < ttl <= NoticeConfig().idle_ttl_seconds


def test_embedded_store_persists_between_runs_and_is_shared_by_processes(tmp_path: Path) -> None:
    path = tmp_path / "state" / "notices.sqlite3"
    stories = Stories()

    async def run(n: int, start: float) -> list[Verdict]:
        store = EmbeddedNoticeStore(path, LEARN_ONLY)
        try:
            return await feed(
                NoticeLearner(store, LEARN_ONLY),
                [[*stories.body(), ("paragraph", SOCIAL)] for _ in range(n)],
                start=start,
            )
        finally:
            await store.aclose()

    first = asyncio.run(run(2, T0))
    assert not [v for v in first if v.removed]
    second = asyncio.run(run(1, T0 + 10 * HOUR))  # a new run remembers the first two articles
    assert removed(second[0]) == [SOCIAL]

    # Two stores on one file (two crawler processes) interleave without losing counts.
    async def both() -> float:
        a, b = EmbeddedNoticeStore(path, LEARN_ONLY), EmbeddedNoticeStore(path, LEARN_ONLY)
        la, lb = NoticeLearner(a, LEARN_ONLY), NoticeLearner(b, LEARN_ONLY)
        await asyncio.gather(
            *(
                (la if i % 2 else lb).process(
                    DOMAIN, stories.body(3), identities=(f"p{i}",), now=T0 + 20 * HOUR
                )
                for i in range(20)
            )
        )
        probe = la.prepare(DOMAIN, [("paragraph", "probe")], ("probe",), T0 + 20 * HOUR)
        evidence = await a.observe(probe.observation)
        await a.aclose()
        await b.aclose()
        return evidence.articles

    articles = asyncio.run(both())
    assert 3 + 20 + 1 - 0.1 < articles <= 24.0


def test_embedded_store_forgets_idle_domains(tmp_path: Path) -> None:
    path = tmp_path / "notices.sqlite3"
    config = NoticeConfig(prior_articles=0, idle_ttl_seconds=DAY_SECONDS)

    async def observe() -> None:
        store = EmbeddedNoticeStore(path, config)
        await feed(NoticeLearner(store, config), [Stories().body()])
        await store.aclose()

    asyncio.run(observe())
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM notice_domains").fetchone() == (1,)
        db.execute("UPDATE notice_domains SET last_seen = ?", (time.time() - 2 * DAY_SECONDS,))
    store = EmbeddedNoticeStore(path, config)
    store.observe_sync(
        NoticeLearner(store, config).prepare("other.test", Stories("o").body(), ("o",)).observation
    )
    store.close()
    with sqlite3.connect(path) as db:
        domains = db.execute("SELECT domain FROM notice_domains").fetchall()
        orphans = db.execute(
            "SELECT count(*) FROM notice_signatures WHERE domain = ?", (DOMAIN,)
        ).fetchone()
    assert domains == [("other.test",)] and orphans == (0,)


def test_a_running_embedded_store_forgets_idle_domains_within_the_hour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Redis's key TTLs do, without waiting for the next start."""
    from pipelines.notices import backends

    path = tmp_path / "notices.sqlite3"
    config = NoticeConfig(prior_articles=0, idle_ttl_seconds=DAY_SECONDS)
    store = EmbeddedNoticeStore(path, config)
    learner = NoticeLearner(store, config)
    store.observe_sync(learner.prepare(DOMAIN, Stories().body(), ("a",)).observation)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE notice_domains SET last_seen = ?", (time.time() - 2 * DAY_SECONDS,))
    store.observe_sync(learner.prepare("other.test", Stories("o").body(), ("o",)).observation)
    assert len(sqlite3.connect(path).execute("SELECT * FROM notice_domains").fetchall()) == 2
    later = time.time() + backends.IDLE_CHECK_SECONDS + 1
    monkeypatch.setattr(backends, "time", SimpleNamespace(time=lambda: later))
    store.observe_sync(learner.prepare("other.test", Stories("p").body(), ("p",)).observation)
    store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT domain FROM notice_domains").fetchall() == [("other.test",)]


# --- The Scrapy pipeline ---------------------------------------------------------------------


def article_item(blocks: Blocks, n: int, domain: str = DOMAIN) -> dict[str, Any]:
    text = "\n".join(t for _, t in blocks)
    return {
        "url": f"https://{domain}/story/{n}",
        "canonical_url": f"https://{domain}/story/{n}",
        "domain": domain,
        "text": text,
        "blocks": [{"kind": k, "text": t} for k, t in blocks],
        "content_hash": content_hash(text),
    }


def crawler_with(**overrides: Any) -> Any:
    """A crawler with the project's defaults (settings.base) plus `overrides`."""
    settings = {name: getattr(base, name) for name in dir(base) if name.isupper()}
    return get_crawler(settings_dict={**settings, **overrides})


def test_pipeline_removes_notices_and_nulls_notice_only_items(tmp_path: Path) -> None:
    crawler = crawler_with(STATE_DIR=str(tmp_path), REDIS_URL="")
    pipeline = NoticePipeline.from_crawler(crawler)
    stories = Stories()

    async def run() -> tuple[list[Any], list[str]]:
        out, dropped = [], []
        items = [article_item([*stories.body(), ("paragraph", COPYRIGHT)], n) for n in range(4)]
        items.append(article_item([("paragraph", "Watch the video."), ("paragraph", COPYRIGHT)], 9))
        items.append({"url": "https://example.test/no-blocks", "domain": DOMAIN})
        for item in items:
            try:
                out.append(await pipeline.process_item(item))
            except DropItem as error:
                dropped.append(str(error))
        await pipeline.close_spider()
        return out, dropped

    out, dropped = asyncio.run(run())
    assert len(out) == 5 and dropped == ["NULL (only_notices): https://example.test/story/9"]
    for item in out[:4]:
        assert item["notices_removed"] == 1
        assert COPYRIGHT not in item["text"] and COPYRIGHT not in json.dumps(item["blocks"])
        assert item["text"] == "\n".join(b["text"] for b in item["blocks"])
    assert "notices_removed" not in out[4]  # an item without blocks passes untouched
    stats = crawler.stats.get_stats()
    assert stats["notices/removed"] == 5 and stats["notices/null/only_notices"] == 1
    assert stats["extract/null/only_notices"] == 1
    assert stats[f"domain/{DOMAIN}/notices/removed"] == 5
    assert stats[f"domain/{DOMAIN}/null/only_notices"] == 1
    assert (Path(crawler.settings["STATE_DIR"]) / "notices.sqlite3").exists()


def test_pipeline_judges_with_the_items_language(tmp_path: Path) -> None:
    """A German rights line is a prior in a German article: the item's language is used."""
    crawler = crawler_with(STATE_DIR=str(tmp_path), REDIS_URL="")
    pipeline = NoticePipeline.from_crawler(crawler)
    rights = "Vervielfältigung nur mit schriftlicher Genehmigung des Verlags untersagt."
    item = article_item([*Stories().body(), ("paragraph", rights)], 1)

    async def run(language: str | None) -> Any:
        return await pipeline.process_item({**item, "language": language})

    async def both() -> tuple[Any, Any]:
        english, german = await run("en"), await run("de")
        await pipeline.close_spider()
        return english, german

    english, german = asyncio.run(both())
    assert english["notices_removed"] == 0 and german["notices_removed"] == 1


def test_pipeline_survives_a_redis_outage_with_priors_only(tmp_path: Path) -> None:
    crawler = crawler_with(REDIS_URL="redis://127.0.0.1:1/0")
    pipeline = NoticePipeline.from_crawler(crawler)
    item = article_item([*Stories().body(), ("paragraph", COPYRIGHT)], 1)

    async def run() -> Any:
        result = await pipeline.process_item(item)
        await pipeline.close_spider()
        return result

    result = asyncio.run(run())
    assert result["notices_removed"] == 1  # the copyright prior still applies
    assert crawler.stats.get_value("notices/errors") == 1
    assert crawler.stats.get_value(f"notices/status/{UNAVAILABLE}") == 1


def test_pipeline_can_be_switched_off() -> None:
    crawler = crawler_with(NOTICES_ENABLED=False)
    with pytest.raises(NotConfigured):
        NoticePipeline.from_crawler(crawler)
    assert NoticePipeline.worker_preparation(crawler.settings) is None  # nothing to take out


def test_the_stage_takes_the_workers_preparation_and_judges_as_if_it_prepared_itself(
    tmp_path: Path,
) -> None:
    """The extraction worker prepares the article (`prepare_extracted`, pickled across): the
    stage takes it out of the item, and the verdicts are those of preparing in the stage; a
    preparation made for other blocks (a stage between changed them) is not used."""
    path = NoticePipeline.worker_preparation(crawler_with().settings)
    stories = Stories()
    bodies = [[*stories.body(), ("paragraph", COPYRIGHT), ("paragraph", SOCIAL)] for _ in range(6)]

    def with_preparation(item: dict[str, Any], blocks: Blocks) -> dict[str, Any]:
        article = Article(blocks=blocks, method="dom", language=item.get("language"))
        prepared, _ = run_preparations(article, (path,))
        return {**item, "prepared": pickle.loads(pickle.dumps(prepared))}

    async def run(prepare: str) -> tuple[list[Any], dict[str, Any]]:
        crawler = crawler_with(STATE_DIR=str(tmp_path / prepare), REDIS_URL="")
        pipeline = NoticePipeline.from_crawler(crawler)
        out = []
        for n, blocks in enumerate(bodies):
            item = article_item(blocks, n)
            if prepare == "worker":
                item = with_preparation(item, blocks)
            elif prepare == "stale":
                item = with_preparation(item, [*blocks, ("paragraph", "An update.")])
            out.append(await pipeline.process_item(item))
        await pipeline.close_spider()
        return out, crawler.stats.get_stats()

    here, here_stats = asyncio.run(run("stage"))
    worker, worker_stats = asyncio.run(run("worker"))
    stale, stale_stats = asyncio.run(run("stale"))
    assert [i["text"] for i in worker] == [i["text"] for i in here] == [i["text"] for i in stale]
    assert sum(i["notices_removed"] for i in here) >= 6  # the rights line at least, every time
    assert all("prepared" not in i for i in worker + stale)
    assert "notices/prepared_here" not in worker_stats
    assert here_stats["notices/prepared_here"] == stale_stats["notices/prepared_here"] == 6
    assert worker_stats["notices/status/counted"] == here_stats["notices/status/counted"] == 6


def test_the_dedup_fingerprint_is_made_again_for_the_text_without_its_notices(
    tmp_path: Path,
) -> None:
    params = LshParams.for_threshold(base.DEDUP_THRESHOLD)
    pipeline = NoticePipeline.from_crawler(crawler_with(STATE_DIR=str(tmp_path), REDIS_URL=""))
    blocks = [*Stories().body(), ("caption", "A photo."), ("paragraph", COPYRIGHT)]
    item = article_item(blocks, 1)
    item["fingerprint"] = fingerprint_blocks(running_texts(blocks), params)

    async def run() -> Any:
        result = await pipeline.process_item(item)
        await pipeline.close_spider()
        return result

    result = asyncio.run(run())
    assert result["notices_removed"] == 1 and COPYRIGHT not in result["text"]
    assert result["fingerprint"] == fingerprint(result["text"], params)
    assert result["content_hash"] == content_hash(result["text"])


def test_the_word_count_and_markdown_are_written_again_without_the_notices(
    tmp_path: Path,
) -> None:
    pipeline = NoticePipeline.from_crawler(crawler_with(STATE_DIR=str(tmp_path), REDIS_URL=""))
    blocks = [*Stories().body(), ("paragraph", COPYRIGHT)]
    item = article_item(blocks, 1)
    item["title"] = "A story"
    item["word_count"] = word_count(running_text(blocks))
    item["markdown"] = to_markdown(blocks, "A story")

    async def run() -> Any:
        result = await pipeline.process_item(item)
        await pipeline.close_spider()
        return result

    result = asyncio.run(run())
    kept = [(block["kind"], block["text"]) for block in result["blocks"]]
    assert result["notices_removed"] == 1
    assert result["word_count"] == word_count(result["text"]) < word_count(running_text(blocks))
    assert result["markdown"] == to_markdown(kept, "A story")
    assert COPYRIGHT not in result["markdown"]


def test_a_prepared_article_pickles_to_its_equal_and_placed_matches_prepare() -> None:
    blocks = [*Stories().body(), ("paragraph", COPYRIGHT)]
    article = Article(blocks=blocks, method="dom", language="en")
    identities = ("https://example.test/story/1", "hash")
    made_here = prepare(DOMAIN, blocks, identities, T0, "en")
    placed = pickle.loads(pickle.dumps(prepare_extracted(article))).placed(DOMAIN, identities, T0)
    assert placed == made_here


# --- Helpers ---------------------------------------------------------------------------------


async def stored_signatures(store: Any, domain: str) -> int:
    if isinstance(store, RedisNoticeStore):
        return int(await store.client.zcard(store.keys.notice_signatures(domain)))
    with sqlite3.connect(store.path) as db:
        (count,) = db.execute(
            "SELECT count(*) FROM notice_signatures WHERE domain = ?", (domain,)
        ).fetchone()
    return int(count)


def test_redis_keys_of_a_domain_share_a_cluster_slot() -> None:
    keys = RedisKeys("nh")
    assert keys.notice_signatures("a.test") == "nh:notices:{a.test}:signatures"
    assert keys.notice_meta("a.test") == "nh:notices:{a.test}:meta"


def test_redis_errors_are_store_errors() -> None:
    from pipelines.notices.pipeline import STORE_ERRORS

    assert issubclass(redis.exceptions.ConnectionError, STORE_ERRORS)


def test_a_crawl_with_redis_shares_notice_state_in_redis(
    redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    """The real spider through the pipeline with REDIS_URL set: state lives in Redis."""
    from tests.support.commands import run_crawl

    room = Newsroom(seed=2)
    output = tmp_path / "articles.jsonl"
    result, _ = run_crawl(
        room, output, f"REDIS_URL={redis_url}", f"REDIS_KEY_PREFIX={redis_prefix}"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    items = [json.loads(line) for line in output.read_text().splitlines()]
    assert items and not (tmp_path / "state" / "notices.sqlite3").exists()
    for item in items:
        assert not [n for n in room.pages[item["url"]].notices if n in item["text"]]
    client = sync_redis(redis_url)
    keys = RedisKeys(redis_prefix)
    for domain in room.domains:
        articles = float(client.hget(keys.notice_meta(domain), "articles") or 0)
        assert articles > 0 and client.zcard(keys.notice_signatures(domain)) > 0, domain
    client.close()


def test_bench_notices_prints_the_figures_for_both_backends(redis_url: str) -> None:
    from newsharvest_bench.bench_notices import BENCH_KEY_PREFIX
    from tests.support.commands import newsharvest

    args = ("bench", "notices", "--domains", "10", "--articles-per-domain", "10")
    result = newsharvest(*args, env={"NEWSHARVEST_REDIS_URL": redis_url})
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("backend "))
    rows = {line.split()[0]: line.split() for line in lines[header + 2 : header + 4]}
    assert set(rows) == {"redis", "embedded"}
    for backend in rows:
        assert f"{backend:<9} PASS  0 notices leak from article 4 on" in result.stdout
        assert f"{backend:<9} PASS  notice-only pages NULL" in result.stdout
        assert f"{backend:<9} PASS  wrongly removed <= 0.1%" in result.stdout
        # The per-class part: multilingual publishers, every class with its own row.
        assert f"per class ({backend};" in result.stdout
        identical = "verdicts identical over 2 runs and 2 backends"
        for check in ("0 leaks once a class appeared 3 times", "traps removed 0", identical):
            assert f"{backend:<9} PASS  publishers: {check}" in result.stdout
        assert f"{backend:<9} PASS  news sites: {identical}" in result.stdout
        # One verdict digest per backend and run, for each part: the same four times.
        digests = re.findall(rf"^{backend} +run [12]: ([0-9a-f]{{16}}) ", result.stdout, re.M)
        assert len(digests) == 4, digests
    for name in ("print_dated", "variant_family", "editorial_note", "column_intro", "story"):
        assert re.search(rf"^{name} ", result.stdout, re.MULTILINE), name
    assert not sync_redis(redis_url).keys(f"{BENCH_KEY_PREFIX}:*")  # the bench cleaned up


def test_only_the_first_short_blocks_are_protected_as_bylines(make_store: StoreFactory) -> None:
    notices = [("paragraph", "Have a news tip? Email tips@example.test."), ("paragraph", COPYRIGHT)]
    short_lines = [("list_item", f"Item {i}: {w} stays open late.") for i, w in enumerate("abcdef")]
    stories = Stories()
    trained = [[*stories.body(), *notices] for _ in range(3)]

    async def scenario(learner: NoticeLearner) -> list[Verdict]:
        await feed(learner, trained)
        return await feed(learner, [[*short_lines, *notices]], start=T0 + 10 * HOUR)

    (verdict,) = run(make_store, scenario)
    assert removed(verdict) == [text for _, text in notices]


def test_pipeline_does_not_wait_long_on_a_locked_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the embedded file's write lock: the article goes on, priors only."""
    from pipelines.notices import pipeline as notice_pipeline

    monkeypatch.setattr(notice_pipeline, "STORE_TIMEOUT_SECONDS", 0.3)
    crawler = crawler_with(STATE_DIR=str(tmp_path), REDIS_URL="")
    pipeline = NoticePipeline.from_crawler(crawler)
    item = article_item([*Stories().body(), ("paragraph", COPYRIGHT)], 1)
    warm = article_item(Stories("warm").body(), 2)

    async def scenario() -> tuple[Any, float]:
        await pipeline.process_item(warm)  # creates the file
        holder = sqlite3.connect(tmp_path / "notices.sqlite3", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        started = time.perf_counter()
        result = await pipeline.process_item(item)
        elapsed = time.perf_counter() - started
        holder.execute("ROLLBACK")
        holder.close()
        await pipeline.close_spider()
        return result, elapsed

    result, elapsed = asyncio.run(scenario())
    assert elapsed < 2.0 and result["notices_removed"] == 1
    assert crawler.stats.get_value("notices/errors") == 1


# --- Second round: templated lines, seven languages, families, editorial notes -------------


@pytest.mark.parametrize(
    ("first", "second", "language"),
    [
        ("Cet article a été publié dans l'édition imprimée du 10 mai 2025.",
         "Cet article a été publié dans l'édition imprimée du 3 juin 2026.", "fr"),
        ("Dieser Artikel erschien in der gedruckten Ausgabe vom 10. Mai 2025.",
         "Dieser Artikel erschien in der gedruckten Ausgabe vom 1. März 2026.", "de"),
        ("Este artículo se publicó en la edición impresa del 10 de mayo de 2025.",
         "Este artículo se publicó en la edición impresa del 2 de enero de 2026.", "es"),
        ("Pubblicato nell'edizione cartacea di lunedì 10 maggio 2025.",
         "Pubblicato nell'edizione cartacea di venerdì 3 ottobre 2026.", "it"),
        ("Publicado na edição impressa de 10 de maio de 2025.",
         "Publicado na edição impressa de 21 de setembro de 2026.", "pt"),
        ("Dit artikel verscheen in de krant van zaterdag 10 mei 2025.",
         "Dit artikel verscheen in de krant van dinsdag 4 maart 2026.", "nl"),
        ("Published in print on the 3rd of May, 2025.",
         "Published in print on the 21st of June, 2026.", "en"),
    ],
)  # fmt: skip
def test_dates_fold_in_seven_languages_whatever_the_detected_language(
    first: str, second: str, language: str
) -> None:
    assert normalized_tokens(first, language=language) == normalized_tokens(
        second, language=language
    )
    # An unambiguous date folds even when the page declares another language.
    assert normalized_tokens(first, language="en") == normalized_tokens(second, language="en")


def test_ambiguous_date_words_fold_only_in_their_language_or_in_a_date() -> None:
    # "may" is a month in English only; in a French article it is kept unless it dates something.
    assert "may" not in normalized_tokens("The council may vote", language="en")
    assert "mai" in normalized_tokens("Le mai est un arbre", language="es")
    assert "mai" not in normalized_tokens("le 10 mai 2025", language="es")


@pytest.mark.parametrize(
    ("text", "language", "kind"),
    [
        ("© 2026 Rundschau Verlag GmbH. Alle Rechte vorbehalten.", "de", PRIOR_RIGHTS),
        ("Tous droits réservés. Reproduction interdite sans autorisation.", "fr", PRIOR_RIGHTS),
        ("Riproduzione riservata", "it", PRIOR_RIGHTS),
        ("Todos los derechos reservados.", "es", PRIOR_RIGHTS),
        ("Dit artikel verscheen in de papieren krant van 10 mei.", "nl", PRIOR_PRINT),
        ("Esta notícia saiu na edição impressa de hoje.", "pt", PRIOR_PRINT),
        ("Inscrivez-vous à notre newsletter Le Brief.", "fr", PRIOR_CALL),
        ("Abonnieren Sie jetzt unseren Newsletter Der Morgen.", "de", PRIOR_CALL),
        ("Folgen Sie uns auf Instagram und Facebook.", "de", PRIOR_FOLLOW),
        ("Síguenos en Facebook, X e Instagram.", "es", PRIOR_FOLLOW),
        ("This article is republished under a Creative Commons license.", "en", PRIOR_LICENSE),
        ("Lire aussi : Le conseil adopte le budget", "fr", PRIOR_RELATED),
        ("Lesen Sie auch: Streit um die neue Brücke", "de", PRIOR_RELATED),
        ("Foto: dpa/Max Mustermann", "de", PRIOR_CREDIT),
        # Real sentences that open with the same words are no matches.
        ("Lire le rapport prend des heures, reconnaît l'élu.", "fr", None),
        ("Photo radar units will be installed on the main road in May.", "en", None),
        ("Related costs rose by 4 percent, the auditors found.", "en", None),
        ("Folgen Sie dem Geld, sagte der Ermittler vor Gericht.", "de", None),
    ],
)
def test_lexical_priors_in_seven_languages(text: str, language: str, kind: str | None) -> None:
    assert prior_kind(text, language=language) == kind


@pytest.mark.parametrize(
    "text",
    [
        "Correction: An earlier version of this article misstated the age of the mayor.",
        "Clarification: This article has been updated to make clear that the vote was close.",
        "Editor's note: The names of two witnesses were withheld at their request.",
        "Update: Since this article was published, the council has postponed the vote.",
        "Berichtigung: In einer früheren Version dieses Artikels hieß es, die Brücke sei gesperrt.",
        "Rectificatif : une version précédente de cet article disait que le maire a démissionné.",
        "Fe de erratas: una versión anterior de este artículo afirmaba que el pleno votó el lunes.",
        "Rettifica: in una precedente versione di questo articolo si diceva che il sindaco è via.",
        "Correção: uma versão anterior deste artigo referia que a câmara tinha aprovado o plano.",
        "Rectificatie: in een eerdere versie van dit artikel stond dat de raad had ingestemd.",
        "An earlier version of this story gave the wrong date for the hearing.",
    ],
)
def test_editorial_notes_are_recognised_in_seven_languages(text: str) -> None:
    assert is_editorial_note(text)


def test_a_bare_update_time_stamp_is_not_an_editorial_note() -> None:
    assert not is_editorial_note("Updated: 3 May 2025 14:30")
    assert not is_editorial_note("Corrections officers said the prison was full.")


def test_templated_lines_split_into_fixed_part_and_slot() -> None:
    assert split_slot("Related: Council approves new budget for schools") == (
        "Related",
        "Council approves new budget for schools",
    )
    assert split_slot("Photo: Jane Doe/Reuters") == ("Photo", "Jane Doe/Reuters")
    assert split_slot("Lesen Sie auch: Hamburg: Streit um die Brücke")[0] == "Lesen Sie auch"
    assert split_slot("Why it matters: Costs would fall by a fifth next year.") is None
    assert split_slot('She said: "We will not back down."') is None
    assert split_slot("Q: Why now?") is None


def test_corrections_sharing_their_opening_are_never_removed(make_store: StoreFactory) -> None:
    """Three corrections share their first words (the old prefix rule removed them); each is
    unique and the most important sentence of its article."""
    stories = Stories()
    articles = []
    for _ in range(8):
        correction = (
            "Correction: An earlier version of this article misstated "
            f"{stories.tg.sentence('local').rstrip('.').lower()}."
        )
        articles.append([*stories.body(), ("paragraph", correction)])
    verdicts = run(make_store, lambda learner: feed(learner, articles))
    assert [removed(v) for v in verdicts if v.removed] == []


def test_a_templated_intro_continued_with_the_articles_own_words_stays(
    make_store: StoreFactory,
) -> None:
    stories = Stories()
    articles = []
    for _ in range(10):
        intro = (
            "In this week's Money Matters column, our personal finance editor looks at why "
            f"{stories.tg.sentence('economy').rstrip('.').lower()}."
        )
        articles.append([("paragraph", intro), *stories.body()])
    verdicts = run(make_store, lambda learner: feed(learner, articles))
    assert [removed(v) for v in verdicts if v.removed] == []


def test_short_templated_lines_are_learned_by_their_fixed_part(make_store: StoreFactory) -> None:
    stories = Stories()
    articles = []
    for i in range(6):
        related = f"Also in the Example Daily: {stories.tg.headline('sport')}"
        credit = f"Photo: {stories.tg.person_name()}/{['Reuters', 'AFP'][i % 2]}"
        articles.append([("paragraph", credit), *stories.body(), ("paragraph", related)])
    verdicts = run(make_store, lambda learner: feed(learner, articles))
    assert [len(v.removed) for v in verdicts] == [0, 0, 2, 2, 2, 2]


def test_a_new_wording_of_a_family_goes_at_first_sight(make_store: StoreFactory) -> None:
    """Promos sharing their closing sentence are one family: a lead never seen before goes."""
    stories = Stories()
    leads = ["Want more stories like this?", "Start your day informed.", "Busy day ahead?"]
    cta = "Sign up for The Example Briefing, our free daily newsletter."
    articles = [[*stories.body(), ("paragraph", f"{leads[i % 3]} {cta}")] for i in range(6)]
    new = f"The news you need before breakfast, five days a week. {cta}"
    probe = [*stories.body(), ("paragraph", new)]

    async def scenario(learner: NoticeLearner) -> Verdict:
        await feed(learner, articles)
        (verdict,) = await feed(learner, [probe], start=T0 + 10 * HOUR)
        return verdict

    assert removed(run(make_store, scenario)) == [new]


def test_priors_after_the_cold_start_need_the_domains_evidence(make_store: StoreFactory) -> None:
    """After the cold start a new rights wording goes (two cues), and an unknown follow-us line
    after it does not end the tail; a newsletter line with no evidence stays."""
    config = NoticeConfig(min_articles=3, min_share=0.1, prior_articles=4)
    stories = Stories()
    old = "Copyright 2026 Example Media Group. Reproduction prohibited."
    trained = [[*stories.body(), ("paragraph", old)] for _ in range(6)]
    new_rights = "\u00a9 Example Media Group 2026 | All rights reserved | Terms apply."
    follow = "Follow us on WhatsApp for breaking news."
    stray = "Sign up for our newsletter to get the day's news."
    probe = [*stories.body(3), ("paragraph", stray), *stories.body(2)]
    probe += [("paragraph", new_rights), ("paragraph", follow)]

    async def scenario(learner: NoticeLearner) -> Verdict:
        await feed(learner, trained)
        (verdict,) = await feed(learner, [probe], start=T0 + 10 * HOUR)
        return verdict

    assert removed(run(make_store, scenario, config)) == [new_rights, follow]


def test_learner_uses_the_articles_language_for_its_priors(make_store: StoreFactory) -> None:
    config = NoticeConfig(prior_articles=5)
    body = [("paragraph", p) for p in Stories().body()[0][1].split(". ")]
    rights = ("paragraph", "Tous droits réservés. Reproduction interdite sans autorisation.")

    async def scenario(learner: NoticeLearner) -> Verdict:
        return await learner.process(
            DOMAIN, [*body, rights], identities=("fr",), now=T0, language="fr-FR"
        )

    assert removed(run(make_store, scenario, config)) == [rights[1]]


def test_publisher_corpus_is_deterministic_labelled_and_multilingual() -> None:
    from extractors.language import guess_language
    from newsharvest_bench.publishers import NOTICE_CLASSES, TRAP_CLASSES, build_publishers, render

    first, again = build_publishers(5, 12), build_publishers(5, 12)
    assert [render(a) for a in first] == [render(a) for a in again]
    labels = {block.label for article in first for block in article.blocks}
    assert set(NOTICE_CLASSES) <= labels and set(TRAP_CLASSES) <= labels
    for article in first[::12]:  # the prose reads as its language to a stop-word count
        story = " ".join(b.text for b in article.blocks if b.label == "story")
        assert guess_language(story.split()) == article.language


def test_a_recurring_label_with_the_articles_own_question_stays(make_store: StoreFactory) -> None:
    """A column's label recurs, the short question after it is the article's: not a family."""
    stories = Stories()
    articles = []
    for _ in range(10):
        question = stories.tg.headline("economy").rstrip(".") + "?"
        intro = f"Money Matters, the column that answers your questions. This week: {question}"
        articles.append([("paragraph", intro), *stories.body()])
    verdicts = run(make_store, lambda learner: feed(learner, articles))
    assert [removed(v) for v in verdicts if v.removed] == []


def test_related_and_credit_labels_need_a_slot_after_them(make_store: StoreFactory) -> None:
    config = NoticeConfig(prior_articles=5)
    sentence = "Su questo punto: il sindaco ha detto che la giunta deciderà entro l'estate."
    line = "Leggi anche: Nuovi piani per la stazione"
    article = [*Stories().body(), ("paragraph", sentence), ("paragraph", line)]

    async def scenario(learner: NoticeLearner) -> Verdict:
        return await learner.process(DOMAIN, article, identities=("it",), now=T0, language="it")

    assert removed(run(make_store, scenario, config)) == [line]


# --- Variants of a notice type the domain has --------------------------------------------------

GERMAN_FOLLOW = "Folgen Sie uns auf Instagram, Facebook und WhatsApp."
FRENCH_FOLLOW = "Suivez-nous sur Facebook, Instagram et X."
GERMAN_PROMO = "Abonnieren Sie jetzt unseren Newsletter Der Morgen."
DUTCH_PROMO = "Meld je aan voor onze nieuwsbrief De Ochtend."
GERMAN_RIGHTS = "\u00a9 2026 Rundschau Verlag GmbH. Alle Rechte vorbehalten."


def german_article(writer: Any, promo: str | None, tail: Sequence[str]) -> Blocks:
    """A German story, a promo after its second paragraph, the notices of its tail."""
    blocks: Blocks = [("paragraph", p) for p in writer.story(5)]
    if promo is not None:
        blocks.insert(2, ("paragraph", promo))
    return blocks + [("paragraph", line) for line in tail]


def test_a_new_wording_of_a_notice_type_goes_at_first_sight_in_any_language(
    make_store: StoreFactory,
) -> None:
    """After three articles with a German promo and follow-us line, a Dutch promo at the same
    place and a French follow-us line after the copyright line go the first time they appear,
    in the cold start already (no prior of the article's language reads them)."""
    from newsharvest_bench.polyglot import Polyglot

    config = NoticeConfig(min_articles=3, min_share=0.1, prior_articles=20)
    writer = Polyglot("de", "variants")
    trained = [
        german_article(writer, GERMAN_PROMO, [GERMAN_RIGHTS, GERMAN_FOLLOW]) for _ in range(3)
    ]
    probe = german_article(writer, DUTCH_PROMO, [GERMAN_RIGHTS, FRENCH_FOLLOW])

    async def scenario(learner: NoticeLearner) -> Verdict:
        await feed(learner, trained, language="de")
        (verdict,) = await feed(learner, [probe], start=T0 + 10 * HOUR, language="de")
        return verdict

    verdict = run(make_store, scenario, config)
    assert removed(verdict) == [DUTCH_PROMO, GERMAN_RIGHTS, FRENCH_FOLLOW]
    reasons = {r.block[1]: r.reason for r in verdict.removed}
    assert reasons[DUTCH_PROMO] == reasons[FRENCH_FOLLOW] == REASON_VARIANT


@pytest.mark.parametrize(
    ("first", "then"), [(GERMAN_FOLLOW, FRENCH_FOLLOW), (FRENCH_FOLLOW, GERMAN_FOLLOW)]
)
def test_which_wording_of_a_type_came_first_does_not_matter(
    make_store: StoreFactory, first: str, then: str
) -> None:
    """Every wording counts for its type, in whichever language: the other one goes at first
    sight whichever came first (past the cold start, with no other notice beside it)."""
    from newsharvest_bench.polyglot import Polyglot

    config = NoticeConfig(min_articles=3, min_share=0.1, prior_articles=2)
    writer = Polyglot("de", "order")
    trained = [german_article(writer, None, [first]) for _ in range(3)]
    probe = german_article(writer, None, [then])

    async def scenario(learner: NoticeLearner) -> Verdict:
        await feed(learner, trained, language="de")
        (verdict,) = await feed(learner, [probe], start=T0 + 10 * HOUR, language="de")
        return verdict

    assert removed(run(make_store, scenario, config)) == [then]


def test_variants_spare_story_paragraphs_and_editorial_notes(make_store: StoreFactory) -> None:
    """Once the domain's follow-us type is established, a story paragraph quoting another
    language's follow-us line mid-article stays (not where the type stands), and so do an
    editorial note in another language in the tail and a long closing paragraph."""
    from newsharvest_bench.polyglot import Polyglot

    config = NoticeConfig(min_articles=3, min_share=0.1, prior_articles=20)
    writer = Polyglot("de", "traps")
    trained = [
        german_article(writer, GERMAN_PROMO, [GERMAN_RIGHTS, GERMAN_FOLLOW]) for _ in range(4)
    ]
    quoted = (
        "Plakate mit der Aufschrift \u201eSuivez-nous sur Instagram\u201c hingen über Nacht "
        "in ganz Bremen, sagte Anna Weber."
    )
    note = "Rectificatif : une version précédente de cet article indiquait que le vote avait lieu."
    closing = " ".join(writer.story(2)) + " Am Ende rief sie: Suivez-nous sur Facebook !"
    probe = german_article(writer, None, [])
    probe.insert(3, ("paragraph", quoted))
    probe += [("paragraph", closing), ("paragraph", note), ("paragraph", GERMAN_RIGHTS)]

    async def scenario(learner: NoticeLearner) -> Verdict:
        await feed(learner, trained, language="de")
        (verdict,) = await feed(learner, [probe], start=T0 + 10 * HOUR, language="de")
        return verdict

    assert removed(run(make_store, scenario, config)) == [GERMAN_RIGHTS]
