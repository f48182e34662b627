"""The crash-safe journal under a real write failure (tests/test_journal.py).

`python -m tests.support.journal DIR TEXT_BYTES` runs, in a process of its own, a journal whose
second article's write goes past the file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored): the kernel
writes part of the line, then refuses the rest with EFBIG, as a full disk does with ENOSPC. The
limit is set only around that write (the ledger's SQLite file is not held to it) and in this
process only (a limit in the test process would also hold pytest's capture files). The third
article is written after the limit is lifted and the process stops before its done mark, as if
killed: the restart has to reconcile it from its line. What the process saw goes to stdout as
one JSON object.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from crawler.core.items import ArticleItem
from crawler.harvest import Harvest
from crawler.ledger import Entry
from crawler.spiders.feeds import FeedsSpider
from pipelines.journal import JournalPipeline

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_800_000_000.0
ARTICLES = 3
# Bytes of the second article's line that fit under the limit: a partial line, no newline.
PARTIAL_BYTES = 20
SCENARIO_TIMEOUT_SECONDS = 120


def run_scenario(module: str, *args: str) -> tuple[dict[str, Any], str]:
    """`python -m MODULE ARGS` in a process of its own (a file-size limit holds a whole
    process: in the test's it would also hold pytest's capture files): the JSON object on its
    last line of stdout, and its stderr (the log)."""
    result = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT, capture_output=True, text=True, timeout=SCENARIO_TIMEOUT_SECONDS, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.splitlines()[-1]), result.stderr


@contextlib.contextmanager
def file_size_limit_in_this_process(limit: int) -> Iterator[None]:
    """No file of this process grows past `limit` bytes (EFBIG) inside the block."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG from write(), not a killed process
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def file_size_limit(limit: int) -> Callable[[], None]:
    """A `preexec_fn`: the child process may grow no file past `limit` bytes (writes past it
    raise EFBIG; SIGXFSZ, which would kill it, is ignored, and stays so across exec)."""

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))

    return limited


def journal_crawler(tmp_path: Path) -> Any:
    from settings import base

    values = {name: getattr(base, name) for name in dir(base) if name.isupper()}
    values.update(STATE_DIR=str(tmp_path / "state"), REDIS_URL="",
                  HARVEST_JOURNAL_PATH=str(tmp_path / "articles.jsonl"))  # fmt: skip
    return get_crawler(FeedsSpider, values)


def article(index: int, text_bytes: int = 100) -> ArticleItem:
    url = f"http://a.test/{index}"
    sentence = f"The text of article {index}. "
    text = sentence * (text_bytes // len(sentence) + 1)
    return ArticleItem(url=url, entry_url=url, version=1, title=f"Article {index}", text=text)


async def claimed_articles(tmp_path: Path) -> tuple[Any, Any]:
    """A crawler whose ledger holds the claims of ARTICLES articles, and that ledger."""
    crawler = journal_crawler(tmp_path)
    state = await Harvest.of(crawler).open()
    entries = [Entry(f"http://a.test/{i}", T0, {"feed_url": "f"}) for i in range(ARTICLES)]
    await state.claim_entries(entries, T0)
    return crawler, state


async def write_past_the_file_size_limit(tmp_path: Path, text_bytes: int) -> dict[str, Any]:
    crawler, state = await claimed_articles(tmp_path)
    harvest = Harvest.of(crawler)
    journal = tmp_path / "articles.jsonl"
    pipeline = JournalPipeline.from_crawler(crawler)
    await pipeline.open_spider()
    first, second, third = (article(i, text_bytes) for i in range(ARTICLES))
    pipeline.process_item(first)
    await harvest.item_scraped(first)
    before = journal.read_bytes()
    raised: OSError | None = None
    with file_size_limit_in_this_process(len(before) + PARTIAL_BYTES):
        try:
            pipeline.process_item(second)
        except OSError as error:
            raised = error
    after_failure = journal.read_bytes()
    if raised is not None:
        await harvest.item_error(second, Failure(raised))
    pipeline.process_item(third)  # then killed: no done mark, no close
    await state.close()
    return {
        "raised": None if raised is None else [type(raised).__name__, raised.errno],
        "unchanged_by_the_failure": after_failure == before,
        "write_errors": crawler.stats.get_value("journal/write_errors"),
        "written": crawler.stats.get_value("journal/written"),
    }


if __name__ == "__main__":
    seen = asyncio.run(write_past_the_file_size_limit(Path(sys.argv[1]), int(sys.argv[2])))
    print(json.dumps(seen))
