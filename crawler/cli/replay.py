"""`newsharvest replay FILE_OR_GLOB_OR_URL_OR_LISTING ...`: run the item pipeline over WARC files.

The `replay` spider (crawler/spiders/replay.py) in this process, with the command's profile
(crawler/cli/profile.py: SCRAPY_SETTINGS_MODULE, a scrapy.cfg, else settings.local) and `--set`
on top, checked before it starts, and the same outputs as a crawl: the sinks,
HARVEST_JOURNAL_PATH (`--journal`), monitoring. Progress goes to stderr; Ctrl-C stops cleanly and
a later run with the same arguments and state continues where it stopped (docs/archives.md).
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from crawler.core.process import die_with_parent


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay", help="run the pipeline over WARC files (own captures, CC-NEWS), resumable"
    )
    parser.add_argument(
        "warcs", nargs="+", metavar="WARC",
        help="a .warc/.warc.gz path, a glob, an http(s) URL (streamed), or a listing file "
        "(*.paths[.gz], *.txt: one path or URL a line, e.g. CC-NEWS warc.paths.gz)",
    )  # fmt: skip
    parser.add_argument("--domain", help="only this publisher domain (and its subdomains)")
    parser.add_argument("--since", help="only records fetched at or after (ISO 8601 date)")
    parser.add_argument("--until", help="only records fetched before (ISO 8601 date)")
    parser.add_argument("--limit", type=int, help="stop after this many pages sent on")
    parser.add_argument("--journal", help="crash-safe JSON Lines output (HARVEST_JOURNAL_PATH)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE",
        help="a Scrapy setting (repeatable), e.g. STATE_DIR=replay-state",
    )  # fmt: skip
    parser.add_argument(
        "--processes", type=int, default=1, metavar="N",
        help="replay in N processes, publisher domains split among them (needs REDIS_URL: they "
        "share the ledger, notices and near-duplicate index); each writes its own journal, "
        "NAME-<i>of<N>.jsonl",
    )  # fmt: skip
    parser.add_argument("--shard", help=argparse.SUPPRESS)  # I/N: one of --processes' children
    parser.add_argument("--log-level", default="WARNING")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from scrapy.crawler import CrawlerProcess

    from crawler.spiders.replay import ReplaySpider
    from crawler.warc.records import check_reader
    from crawler.warc.replay import expand_sources, parse_shard

    try:
        sources = expand_sources(args.warcs)
        refuse_filters(args)
    except ValueError as error:
        print(f"newsharvest replay: {error}", file=sys.stderr)
        return 2
    settings = args.settings  # --set applied and checked
    settings.set("LOG_LEVEL", args.log_level.upper(), priority="cmdline")
    if args.journal:
        settings.set("HARVEST_JOURNAL_PATH", args.journal, priority="cmdline")
    try:
        check_reader(settings.get("REPLAY_READER"))
        shard = parse_shard(args.shard) if args.shard else None
        refuse_processes(args, settings)
    except ValueError as error:
        print(f"newsharvest replay: {error}", file=sys.stderr)
        return 2
    if args.processes > 1:
        return run_shards(args)
    if shard is not None:
        settings.set("WORKER_ID", shard_worker(settings, shard), priority="cmdline")
        if journal := settings.get("HARVEST_JOURNAL_PATH"):
            settings.set("HARVEST_JOURNAL_PATH", shard_journal(journal, shard), priority="cmdline")
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(ReplaySpider)
    process.crawl(crawler, warcs=sources, domain=args.domain, since=args.since,
                  until=args.until, limit=str(args.limit) if args.limit else None,
                  shard=args.shard)  # fmt: skip
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    if process.bootstrap_failed or stats.get("finish_reason") not in ("finished", "shutdown"):
        return 1
    return 0


def refuse_filters(args: argparse.Namespace) -> None:
    """ValueError when the filters cannot be read or cannot select anything: a replay that
    runs and outputs nothing would hide the mistake."""
    from crawler.spiders.replay import parse_when

    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be 1 or more, not {args.limit}")
    bounds = {}
    for name in ("since", "until"):
        try:
            bounds[name] = parse_when(getattr(args, name))
        except ValueError as error:
            raise ValueError(f"--{name}: {error}") from error
    if bounds["since"] and bounds["until"] and bounds["until"] <= bounds["since"]:
        raise ValueError(f"--until ({args.until}) must be after --since ({args.since})")


def refuse_processes(args: argparse.Namespace, settings: Any) -> None:
    """ValueError when --processes cannot be honoured as asked."""
    from crawler.core.connection import redis_url

    if args.processes < 1:
        raise ValueError(f"--processes must be 1 or more, not {args.processes}")
    if args.processes == 1:
        return
    if args.shard:
        raise ValueError("--shard is one process of --processes: give one or the other")
    if not redis_url(settings):
        raise ValueError(
            "--processes needs REDIS_URL (--set REDIS_URL=redis://...): the processes share "
            "the ledger, notices and near-duplicate index through it"
        )
    if args.limit:
        raise ValueError("--limit counts the pages of one process: use it without --processes")


def shard_worker(settings: Any, shard: tuple[int, int]) -> str:
    """The shard's WORKER_ID: the replay's own (or this host's) name and the shard, the same in
    every run, so claims, heartbeats and monitoring name each process the same way."""
    base = str(settings.get("WORKER_ID") or "").strip() or socket.gethostname()
    return f"{base}:replay-{shard[0]}of{shard[1]}"


def shard_journal(path: str, shard: tuple[int, int]) -> str:
    """journal.jsonl -> journal-0of2.jsonl: one append-only journal per process."""
    journal = Path(path)
    return str(journal.with_name(f"{journal.stem}-{shard[0]}of{shard[1]}{journal.suffix}"))


def shard_command(args: argparse.Namespace, index: int) -> list[str]:
    """This replay's command line for one of its processes."""
    command = [sys.executable, "-m", "crawler.cli", "replay", *args.warcs]
    for option in ("domain", "since", "until", "journal"):
        if value := getattr(args, option):
            command += [f"--{option}", value]
    for assignment in args.set:
        command += ["--set", assignment]
    return [*command, "--log-level", args.log_level, "--shard", f"{index}/{args.processes}"]


def run_shards(args: argparse.Namespace) -> int:
    """Start one process per shard and wait for them all. Ctrl-C reaches each of them (one
    process group) and they stop cleanly; a SIGTERM here is passed on; they die with this
    process (Linux), so a replay restarted after a kill -9 never runs beside its old shards."""
    children = [
        subprocess.Popen(shard_command(args, index), preexec_fn=die_with_parent)
        for index in range(args.processes)
    ]

    def forward(signum: int, _frame: Any) -> None:
        for child in children:
            child.send_signal(signum)

    previous = signal.signal(signal.SIGTERM, forward)
    try:
        codes = []
        for child in children:
            while True:
                try:
                    codes.append(child.wait())
                    break
                except KeyboardInterrupt:  # the children got it too: wait for their clean stop
                    continue
    finally:
        signal.signal(signal.SIGTERM, previous)
    for index, code in enumerate(codes):
        if code != 0:
            print(f"replay: process {index}/{args.processes} exited with code {code}",
                  file=sys.stderr)  # fmt: skip
    failed = [code for code in codes if code != 0]
    return failed[0] if failed else 0
