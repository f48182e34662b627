"""Articles no retry will deliver: kept, one JSON line each, in `.rejected.jsonl` files.

An index sink puts a record its backend refuses for its content in `<sink>.rejected.jsonl`
(pipelines/sinks/base.py); the harvest (crawler/harvest.py) puts an article that a pipeline
stage raised on, on its last allowed try, in `pipeline.rejected.jsonl`, with the error, where it
was raised and the article as that stage had it, and counts it as `errors/rejected` of its
publisher domain. Both are in the journal directory (SINK_JOURNAL_DIR, else <STATE_DIR>/journal).

Writing a line never fails on what the record holds: a string that is no valid UTF-8 (a lone
surrogate) is written as its JSON escape, an object JSON does not know as its str(). A line is
written whole or not at all (crawler/core/lines.py): a file that cannot be written is left as it
was and raises OSError.

The ledger has given an article up before its record is written (it alone knows which try is the
last), so a record that cannot be written (disk full) is not lost either: it goes whole into the
log instead, with `harvest/rejected_unwritten` counted.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from scrapy.statscollectors import StatsCollector
from twisted.python.failure import Failure

from crawler.core.domainstats import ERRORS, inc_domain
from crawler.core.failures import one_line
from crawler.core.lines import append_line_to
from crawler.core.paths import journal_dir
from crawler.core.spill import REJECTED_SUFFIX

log = logging.getLogger(__name__)

PIPELINE_REJECTED_FILE = f"pipeline{REJECTED_SUFFIX}"
REJECTED = "rejected"  # errors/rejected: articles given up after a stage failed on every try
# Item fields not kept: large, binary, or work made from the page (given back by the URL).
LEFT_OUT = ("html", "fingerprint", "prepared")
MAX_ERROR_CHARS = 500


def append_rejected(path: Path, record: dict[str, Any]) -> None:
    """Append `record` as one JSON line to `path`, created (with its directory) on first use."""
    append_line_to(path, rejected_line(record))


def rejected_line(record: dict[str, Any]) -> bytes:
    """`record` as one JSON line (UTF-8, newline included)."""
    text = json.dumps(record, ensure_ascii=False, default=str, separators=(",", ":"))
    return text.encode("utf-8", "backslashreplace") + b"\n"


async def reject_item(
    settings: Any, stats: StatsCollector, item: Any, failure: Failure, attempts: int, at: str
) -> Path:
    """Keep an article a stage failed on for the last time (`at`: ISO 8601): write it (in a
    thread), count it and log it (here, on the reactor thread). Returns the rejected file."""
    return await keep_rejected(settings, stats, rejected_record(item, failure, attempts, at))


async def keep_rejected(settings: Any, stats: StatsCollector, record: dict[str, Any]) -> Path:
    """`reject_item` for a record made earlier (`rejected_record`): one whose last try failed
    while its outcome could not be known yet (Redis away; crawler/ledger_guard.py)."""
    path = journal_dir(settings) / PIPELINE_REJECTED_FILE
    stats.inc_value("harvest/rejected")
    domain = record["record"].get("domain") or "unknown"
    inc_domain(stats, domain, ERRORS)
    inc_domain(stats, domain, f"{ERRORS}/{REJECTED}")
    try:
        await asyncio.to_thread(append_rejected, path, record)
    except OSError as error:
        # Given up in the ledger already: the record goes whole to the log, not to nowhere.
        stats.inc_value("harvest/rejected_unwritten")
        line = rejected_line(record).decode("utf-8", "replace").rstrip("\n")
        log.critical("rejected: %s (%s, in %s) on the last of %d tries; NOT kept in %s (%s, "
                     "counted in harvest/rejected_unwritten): its record, to keep by hand: %s",
                     record["record"].get("url"), record["error"], record["where"],
                     record["attempts"], path, one_line(error), line)  # fmt: skip
        return path
    log.error("rejected: %s (%s, in %s) on the last of %d tries; kept in %s",
              record["record"].get("url"), record["error"], record["where"], record["attempts"],
              path)  # fmt: skip
    return path


def rejected_record(item: Any, failure: Failure, attempts: int, at: str) -> dict[str, Any]:
    """One line of the pipeline's rejected file: when, after how many tries, the error, where it
    was raised, and the article as the failing stage had it (`record`)."""
    error = failure.value
    message = " ".join(str(error).split())[:MAX_ERROR_CHARS]
    return {
        "rejected_at": at,
        "attempts": attempts,
        "error": f"{type(error).__name__}: {message}" if message else type(error).__name__,
        "where": raised_where(failure),
        "record": {k: v for k, v in dict(item).items() if k not in LEFT_OUT},
    }


def raised_where(failure: Failure) -> str | None:
    """`dir/file.py:line` of the stage whose process_item raised: its innermost process_item
    frame (the innermost frame when there is none)."""
    frames = failure.frames
    if not frames:
        return None
    stage = next((frame for frame in reversed(frames) if frame[0] == "process_item"), frames[-1])
    path, line = stage[1], stage[2]
    return f"{'/'.join(Path(path).parts[-2:])}:{line}"
