"""Running the real `scrapy crawl feeds` in a subprocess against the news-site fixture."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CRAWL_TIMEOUT_SECONDS = 180
POLL_SECONDS = 0.05
_ERROR_LINE = re.compile(r"\b(ERROR|CRITICAL|Traceback|exited with)\b|Error:")


def crawl_command(
    feed_urls: Sequence[str], proxy_url: str, settings: Sequence[str] = (), args: Sequence[str] = ()
) -> list[str]:
    command = [
        sys.executable, "-m", "scrapy", "crawl", "feeds",
        "-a", "feeds=" + ",".join(feed_urls),
        "-s", f"PROXY_URL={proxy_url}",
        "-s", "LOG_LEVEL=INFO",
    ]  # fmt: skip
    for arg in args:
        command += ["-a", arg]
    for setting in settings:
        command += ["-s", setting]
    return command


def crawl_env(state_dir: Path, profile: str = "settings.fixture", **extra: str) -> dict[str, str]:
    """A clean environment: the fixture profile, no stray NEWSHARVEST_REDIS_URL, and the state,
    embedded index and output files of this crawl beside its state directory, not in the
    repository. PYTHONPATH is kept: run from another checkout (a worktree, whose PYTHONPATH puts
    it first), the crawler is that checkout's, not the installed one's."""
    env = {
        "SCRAPY_SETTINGS_MODULE": profile,
        "PATH": "/usr/bin:/bin",
        "NEWSHARVEST_STATE_DIR": str(state_dir),
        "NEWSHARVEST_SINK_SQLITE_PATH": str(state_dir.parent / f"{state_dir.name}-index.sqlite3"),
        "NEWSHARVEST_OUTPUT_DIR": str(state_dir.parent / f"{state_dir.name}-output"),
        "NEWSHARVEST_REDIS_URL": "",
    }
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env.update(extra)
    return env


def start_crawl(command: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen:
    """Start a crawler whose log goes to a file (a pipe nobody reads would block it)."""
    log = log_path.open("w")
    return subprocess.Popen(
        command, cwd=log_path.parent, env=env, stdout=log, stderr=subprocess.STDOUT
    )


def kill_when(command: list[str], env: dict[str, str], log_path: Path, ready: Callable[[], bool],
              timeout: float, what: str) -> None:  # fmt: skip
    """Start a crawler, wait until `ready()` holds (at most `timeout` s, else AssertionError
    naming `what`), then kill -9 it and reap it: a crash at that moment."""
    process = start_crawl(command, env, log_path)
    try:
        wait_for(ready, timeout, what)
    except AssertionError as error:  # say what the crawler was doing, or why it stopped
        code = process.poll()
        status = "still running" if code is None else f"exited with code {code}"
        raise AssertionError(f"{error}; the crawler {status}; log tail:\n"
                             f"{log_path.read_text()[-3000:]}") from None  # fmt: skip
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()


def run_to_end(command: list[str], env: dict[str, str], log_path: Path) -> str:
    process = start_crawl(command, env, log_path)
    try:
        process.wait(timeout=CRAWL_TIMEOUT_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
    text = log_path.read_text()
    if process.returncode != 0:  # the errors first: several processes may share one log
        errors = [line for line in text.splitlines() if _ERROR_LINE.search(line)]
        raise AssertionError(
            f"exit code {process.returncode}; error lines:\n"
            + "\n".join(errors[-40:])
            + f"\n--- log tail:\n{text[-3000:]}"
        )
    return text


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(POLL_SECONDS)


def stats_from_log(text: str) -> dict[str, Any]:
    """The final 'Dumping Scrapy stats' dict of a crawl log."""
    import ast

    marker = "Dumping Scrapy stats:"
    start = text.rfind(marker)
    if start < 0:
        return {}
    body = text[start + len(marker) :]
    end = body.find("}")
    literal = body[: end + 1].strip()
    literal = literal.replace("datetime.datetime", "").replace("tzinfo=datetime.timezone.utc", "")
    stats: dict[str, Any] = {}
    for line in literal.strip("{}").splitlines():
        key, _, value = line.strip().rstrip(",").partition(": ")
        if key.startswith("'") and value:
            try:
                stats[ast.literal_eval(key)] = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                continue
    return stats


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


@dataclass
class CrawlRun:
    returncode: int
    log: str
    stats: dict[str, Any]  # the final stats dump
    items: list[dict[str, Any]]  # the JSON Lines output
    max_rss_bytes: int  # peak resident memory of the crawl process


def run_measured(
    feed_urls: Sequence[str],
    output: Path,
    settings: Sequence[str] = (),
    proxy_url: str = "",
    profile: str = "settings.fixture",
    on_start: Callable[[int], None] | None = None,
) -> CrawlRun:
    """Crawl to the end into `output` (JSON Lines; state and log beside it) and measure the
    crawl process's peak memory. An empty `proxy_url` connects directly; `on_start` gets the
    crawl process's pid as soon as it runs (to watch it from another thread)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    command = [*crawl_command(feed_urls, proxy_url, settings), "-O", f"{output}:jsonlines"]
    env = crawl_env(output.parent / "state", profile)
    log_path = output.with_suffix(".log")
    process = start_crawl(command, env, log_path)
    if on_start is not None:
        on_start(process.pid)
    killer = threading.Timer(CRAWL_TIMEOUT_SECONDS, process.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)  # this process's own rusage
    finally:
        killer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    log = log_path.read_text(errors="replace")
    return CrawlRun(
        process.returncode, log, stats_from_log(log), read_jsonl(output), usage.ru_maxrss * 1024
    )
