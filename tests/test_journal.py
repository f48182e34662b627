"""The crash-safe journal: a write the crash cut off is reconciled on the next open."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from scrapy.utils.test import get_crawler

from crawler.core.items import ArticleItem
from crawler.harvest import Harvest
from crawler.ledger import Entry
from crawler.spiders.feeds import FeedsSpider
from pipelines.journal import JournalPipeline

T0 = 1_800_000_000.0


def journal_crawler(tmp_path: Path) -> object:
    from settings import base

    values = {name: getattr(base, name) for name in dir(base) if name.isupper()}
    values.update(STATE_DIR=str(tmp_path / "state"), REDIS_URL="",
                  HARVEST_JOURNAL_PATH=str(tmp_path / "articles.jsonl"))  # fmt: skip
    return get_crawler(FeedsSpider, values)


def test_a_line_written_before_a_crash_is_marked_done_and_a_torn_line_is_cut(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "articles.jsonl"

    async def scenario() -> None:
        crawler = journal_crawler(tmp_path)
        state = await Harvest.of(crawler).open()
        entries = [Entry(f"http://a.test/{i}", T0, {"feed_url": "f"}) for i in range(3)]
        await state.claim_entries(entries, T0)
        # The previous run wrote article 0 and was killed before marking it done, in the
        # middle of writing article 1.
        journal.write_bytes(
            json.dumps({"url": "http://a.test/0", "entry_url": "http://a.test/0", "version": 1})
            .encode() + b"\n" + b'{"url": "http://a.test/1", "entry_u'
        )  # fmt: skip
        pipeline = JournalPipeline.from_crawler(crawler)
        await pipeline.open_spider()
        assert await state.is_done("http://a.test/0", 1)  # not fetched and output again
        assert not await state.is_done("http://a.test/1", 1)  # fetched again after restart
        assert [c.key for c in await state.recover(T0 + 1, everything=True)] == [
            "http://a.test/1", "http://a.test/2",
        ]  # fmt: skip
        assert journal.read_bytes().count(b"\n") == 1 and journal.read_bytes().endswith(b"\n")
        # Writing goes on after the cut; the done mark follows item_scraped.
        item = ArticleItem(url="http://a.test/1", entry_url="http://a.test/1", version=1,
                           html=b"<html>", title="One")  # fmt: skip
        pipeline.process_item(item)
        await Harvest.of(crawler).item_scraped(item)
        pipeline.close_spider()
        lines = [json.loads(line) for line in journal.read_text().splitlines()]
        assert [line["url"] for line in lines] == ["http://a.test/0", "http://a.test/1"]
        assert "html" not in lines[1]  # transient fields never reach the output
        assert await state.is_done("http://a.test/1", 1)
        checkpoint = json.loads((tmp_path / "articles.jsonl.checkpoint").read_text())
        assert checkpoint["offset"] == journal.stat().st_size
        await state.close()

    asyncio.run(scenario())


def test_with_a_shared_ledger_the_line_is_written_after_the_output_mark(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """Other workers take over a killed worker's claims: the ledger knows the article is in
    this journal before its line is (crawler/ledger.py, output_started)."""
    crawler = journal_crawler(tmp_path)
    crawler.settings.frozen = False
    crawler.settings.set("REDIS_URL", redis_url)
    crawler.settings.set("REDIS_KEY_PREFIX", redis_prefix)
    crawler.settings.set("HARVEST_STATE", "redis")
    journal = tmp_path / "articles.jsonl"

    async def scenario() -> None:
        state = await Harvest.of(crawler).open()
        await state.claim_entries([Entry("http://a.test/1", T0, {"feed_url": "f"})], T0)
        pipeline = JournalPipeline.from_crawler(crawler)
        await pipeline.open_spider()
        marked_before_the_line: list[bool] = []
        mark = state.output_started

        async def watched(*args: object) -> bool:
            marked_before_the_line.append(not journal.read_bytes())
            return await mark(*args)

        state.output_started = watched
        item = ArticleItem(url="http://a.test/1", entry_url="http://a.test/1", version=1)
        await pipeline.process_item(item)
        shared = state.inner  # the Redis ledger behind the outage guard
        record = json.loads(await shared.client.hget(shared.keys.harvest_articles(), item["url"]))
        assert marked_before_the_line == [True] and "j" in record
        assert journal.read_bytes().count(b"\n") == 1
        pipeline.close_spider()
        await state.close()

    asyncio.run(scenario())


def test_a_line_not_yet_marked_done_holds_the_checkpoint_whatever_the_ids_of_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Article 0 is written and its done mark not yet stored when article 1's is: the
    checkpoint must stay before article 0's line, or a kill then leaves it neither reconciled
    nor done, and the restart outputs it again. The journal once kept its lines by id(item),
    which CPython hands to the next item once one is freed: every item gets the same id here,
    as when each is freed before the next is made."""
    import pipelines.journal as journal_module

    journal = tmp_path / "articles.jsonl"
    monkeypatch.setattr(journal_module, "CHECKPOINT_EVERY", 1)
    monkeypatch.setattr(journal_module, "id", lambda _item: 1, raising=False)

    async def scenario() -> None:
        crawler = journal_crawler(tmp_path)
        harvest = Harvest.of(crawler)
        state = await harvest.open()
        entries = [Entry(f"http://a.test/{i}", T0, {"feed_url": "f"}) for i in range(2)]
        await state.claim_entries(entries, T0)
        pipeline = JournalPipeline.from_crawler(crawler)
        await pipeline.open_spider()
        items = [ArticleItem(url=e.key, entry_url=e.key, version=1) for e in entries]
        for item in items:
            pipeline.process_item(item)
        first_line_end = journal.read_bytes().index(b"\n") + 1
        await harvest.item_scraped(items[1])  # article 0's done mark is still on its way
        checkpoint = json.loads((tmp_path / "articles.jsonl.checkpoint").read_text())
        assert checkpoint["offset"] < first_line_end, "the checkpoint passed an unmarked line"
        # Killed here; the restart reconciles article 0's line instead of fetching it again.
        pipeline.file.close()
        await state.close()
        crawler = journal_crawler(tmp_path)
        state = await Harvest.of(crawler).open()
        again = JournalPipeline.from_crawler(crawler)
        await again.open_spider()
        assert await state.recover(T0 + 1, everything=True) == []
        assert await state.is_done("http://a.test/0", 1)
        again.close_spider()
        await state.close()

    asyncio.run(scenario())
