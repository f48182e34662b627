"""Running what users run, from tests: the `newsharvest` command and `scrapy crawl feeds` against
the news-site simulator."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from crawler.newsroom import Newsroom, NewsroomServer, Redesign, RequestRecord
from newsharvest_bench.crawlrun import CRAWL_TIMEOUT_SECONDS, crawl_command, crawl_env

ROOT = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT_SECONDS = 120


def newsharvest(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`newsharvest ARGS` in a subprocess (this test's STATE_DIR/OUTPUT_DIR in its environment)."""
    return subprocess.run(
        [sys.executable, "-m", "crawler.cli", *args],
        cwd=cwd, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS, check=False,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def run_crawl(
    room: Newsroom,
    output: Path,
    *settings: str,
    feeds: list[str] | None = None,
    redesigns: Sequence[Redesign] = (),
) -> tuple[subprocess.CompletedProcess[str], list[RequestRecord]]:
    """Run `scrapy crawl feeds` as a user would, against the simulator (all its feeds, or
    `feeds`; `redesigns` switch templates mid-run), writing JSON Lines. Returns the process
    result and every request the simulator served."""
    with NewsroomServer(room, port=0, redesigns=redesigns) as server:
        command = crawl_command(feeds or room.feed_urls, server.proxy_url, settings)
        # The local profile's embedded index goes beside the output, not the repo.
        command += ["-O", f"{output}:jsonlines"]
        command += ["-s", f"SINK_SQLITE_PATH={output.parent / 'index.sqlite3'}"]
        result = subprocess.run(
            command, cwd=output.parent, env=crawl_env(output.parent / "state"), capture_output=True,
            text=True, timeout=CRAWL_TIMEOUT_SECONDS, check=False,
        )  # fmt: skip
    return result, server.request_log
