"""The sinks' spill journal and the rejected files under a real write failure (tests/test_sinks.py).

`python -m tests.support.spill SCENARIO DIR TEXT_BYTES` runs SCENARIO in a process of its own,
with the file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored: tests/support/journal.py) set around
one write only: the kernel writes part of it, then refuses the rest with EFBIG, as a full disk
does with ENOSPC. What the process saw goes to stdout as one JSON object.

* `spill`: an SQLite sink whose index cannot be opened (SINK_START_POLICY=journal) journals
  batch A, fails to journal batch B under the limit, journals batch C after it.
* `rejected`: the harvest gives an article up (its last try) and its rejected record cannot be
  written under the limit; the next one is written after it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from scrapy.utils.test import get_crawler

from crawler.core.rejected import PIPELINE_REJECTED_FILE, keep_rejected
from crawler.core.spill import JOURNAL_SUFFIX
from pipelines.sinks.sqlite import SQLiteSink
from tests.support.journal import PARTIAL_BYTES, file_size_limit_in_this_process

BATCH = 3  # articles a batch (SINK_BATCH_SIZE)


def sink_settings(tmp_path: Path, index: Path, **overrides: Any) -> dict[str, Any]:
    from settings import base
    from settings.env import values_of

    values = values_of(base)
    values.update(STATE_DIR=str(tmp_path / "state"), SINK_SQLITE_ENABLED=True,
                  SINK_SQLITE_PATH=str(index), SINK_BATCH_SIZE=BATCH, SINK_BATCH_SECONDS=60.0,
                  SINK_RETRY_TIMES=0, SINK_RECONNECT_SECONDS=60.0, SINK_JOURNAL_FSYNC=False,
                  **overrides)  # fmt: skip
    return values


def sqlite_sink(tmp_path: Path, index: Path, **overrides: Any) -> tuple[Any, Any]:
    crawler = get_crawler(settings_dict=sink_settings(tmp_path, index, **overrides))
    return SQLiteSink.from_crawler(crawler), crawler


def article(index: int, text_bytes: int) -> dict[str, Any]:
    sentence = f"The text of article {index}. "
    return {"url": f"http://a.test/{index}", "domain": "a.test", "title": f"Article {index}",
            "text": sentence * (text_bytes // len(sentence) + 1),
            "fetched_at": "2026-11-29T10:00:00+00:00"}  # fmt: skip


async def under_the_limit(path: Path, action: Callable[[], Awaitable[Any]]) -> Any:
    """Run `action` with files held to the size of `path` plus PARTIAL_BYTES."""
    with file_size_limit_in_this_process(path.stat().st_size + PARTIAL_BYTES):
        return await action()


def outcome(result: Any) -> str:
    return type(result).__name__ if isinstance(result, BaseException) else "passed"


async def spill(tmp_path: Path, text_bytes: int) -> dict[str, Any]:
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the index directory should be")
    sink, crawler = sqlite_sink(tmp_path, blocker / "index.sqlite3", SINK_START_POLICY="journal")
    journal = tmp_path / "state" / "journal" / f"sqlite{JOURNAL_SUFFIX}"
    await sink.open_spider()

    async def batch(first: int) -> list[str]:
        items = [article(i, text_bytes) for i in range(first, first + BATCH)]
        done = await asyncio.gather(*map(sink.process_item, items), return_exceptions=True)
        return [outcome(result) for result in done]

    seen: dict[str, Any] = {"A": await batch(0)}
    before = journal.read_bytes()
    seen["B"] = await under_the_limit(journal, lambda: batch(BATCH))
    seen["unchanged_by_the_failure"] = journal.read_bytes() == before
    seen["C"] = await batch(2 * BATCH)
    await sink.close_spider()
    for stat in ("spilled", "spill_errors", "undelivered", "journal_pending"):
        seen[stat] = crawler.stats.get_value(f"sink/sqlite/{stat}")
    return seen


async def rejected(tmp_path: Path, text_bytes: int) -> dict[str, Any]:
    crawler = get_crawler(settings_dict=sink_settings(tmp_path, tmp_path / "index.sqlite3"))
    path = tmp_path / "state" / "journal" / PIPELINE_REJECTED_FILE

    def record(index: int) -> dict[str, Any]:
        item = article(index, text_bytes)
        return {"rejected_at": item["fetched_at"], "attempts": 3, "error": "RuntimeError: x",
                "where": "pipelines/x.py:1", "record": item}  # fmt: skip

    await keep_rejected(crawler.settings, crawler.stats, record(0))
    before = path.read_bytes()
    await under_the_limit(path, lambda: keep_rejected(crawler.settings, crawler.stats, record(1)))
    unchanged = path.read_bytes() == before
    await keep_rejected(crawler.settings, crawler.stats, record(2))
    return {
        "unchanged_by_the_failure": unchanged,
        "rejected": crawler.stats.get_value("harvest/rejected"),
        "rejected_unwritten": crawler.stats.get_value("harvest/rejected_unwritten"),
    }


SCENARIOS = {"spill": spill, "rejected": rejected}

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    scenario = SCENARIOS[sys.argv[1]]
    print(json.dumps(asyncio.run(scenario(Path(sys.argv[2]), int(sys.argv[3])))))
