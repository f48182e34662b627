"""The crash-safe journal: a write the crash cut off is reconciled on the next open."""

from __future__ import annotations

import asyncio
import errno
import json
from pathlib import Path

import pytest

from crawler.core.items import ArticleItem
from crawler.harvest import Harvest
from crawler.ledger import Entry
from pipelines.journal import JournalPipeline
from tests.support.journal import T0, journal_crawler, run_scenario

# Article text sizes: a line shorter than a buffered file's buffer (io.DEFAULT_BUFFER_SIZE, 8 KiB)
# and one longer. A buffered journal failed differently with each: it kept the short line's
# unwritten rest in its buffer and wrote it before the next line (the article, failed and
# pending, reached the journal anyway: output twice once retried; marked done by a restart); it
# left the long line's first part in the file, and the next line was glued to it (unparseable).
LINE_SIZES = pytest.mark.parametrize("text_bytes", [100, 3 * 8192], ids=["short", "long"])


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


def write_past_the_file_size_limit(tmp_path: Path, text_bytes: int) -> tuple[dict, str]:
    """The scenario of tests/support/journal.py in a process of its own: article 0 written and
    done, article 1's write cut off by the file-size limit (EFBIG) part way through its line,
    article 2 written after it and the process killed before its done mark."""
    return run_scenario("tests.support.journal", str(tmp_path), str(text_bytes))


@LINE_SIZES
def test_a_write_that_fails_part_way_leaves_the_journal_as_it_was(
    tmp_path: Path, text_bytes: int
) -> None:
    """A full disk (ENOSPC), the file-size limit (EFBIG) or an I/O error can stop a write after
    part of the line: the journal once kept those bytes, and the next article's line followed
    them, glued into one unparseable line (lost to readers and to reconciling, though done);
    or its buffer wrote the rest later, though the item had failed."""
    seen, log = write_past_the_file_size_limit(tmp_path, text_bytes)
    assert seen["raised"] is not None and seen["raised"][1] == errno.EFBIG  # the item errors
    raw = (tmp_path / "articles.jsonl").read_bytes()
    lines = [json.loads(line) for line in raw.splitlines()]  # each one parses
    assert [line["url"] for line in lines] == ["http://a.test/0", "http://a.test/2"]
    assert raw.endswith(b"\n")
    assert seen["unchanged_by_the_failure"], "the failed write left its partial line"
    assert seen["raised"][0] == "JournalWriteError"  # says which journal
    assert seen["write_errors"] == 1 and seen["written"] == 2
    assert "journal/write_errors" in log and "http://a.test/1" in log


@LINE_SIZES
def test_after_a_failed_write_a_restart_reconciles_the_next_article(
    tmp_path: Path, text_bytes: int
) -> None:
    """Article 2, written on a clean line after article 1's failed write and not yet marked done
    when the process was killed, is marked done from its line; article 1 stays pending and is
    written on the next try."""
    write_past_the_file_size_limit(tmp_path, text_bytes)
    journal = tmp_path / "articles.jsonl"

    async def restart() -> None:
        crawler = journal_crawler(tmp_path)
        harvest = Harvest.of(crawler)
        state = await harvest.open()
        pipeline = JournalPipeline.from_crawler(crawler)
        await pipeline.open_spider()
        assert crawler.stats.get_value("journal/reconciled") == 1
        assert await state.is_done("http://a.test/2", 1)  # not fetched and output again
        assert not await state.is_done("http://a.test/1", 1)
        pending = await state.recover(T0 + 1, everything=True)
        assert [claim.key for claim in pending] == ["http://a.test/1"]
        again = ArticleItem(url="http://a.test/1", entry_url="http://a.test/1", version=1)
        pipeline.process_item(again)
        await harvest.item_scraped(again)
        pipeline.close_spider()
        await state.close()

    asyncio.run(restart())
    lines = [json.loads(line) for line in journal.read_bytes().splitlines()]
    assert [line["url"] for line in lines] == [f"http://a.test/{i}" for i in (0, 2, 1)]
