"""Consume newsharvest's article stream with a Redis consumer group.

Run one process per consumer name; the group hands each entry to one of them, and an entry
stays pending until its consumer acknowledges it, so a crashed consumer re-reads its pending
entries when it restarts (at-least-once: make `index()` an upsert by canonical URL).

    python -m pipelines.sinks.stream_consumer --group indexer --consumer worker-1
    python -m pipelines.sinks.stream_consumer --stream 'nh:{sink:articles}' --once  # drain, exit

Needs only redis-py. The stream is `<REDIS_KEY_PREFIX>:{sink:<SINK_REDIS_STREAM_NAME>}`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import redis


def index(article: dict[str, Any]) -> None:
    """Your indexer goes here (upsert by article["canonical_url"], then delete the URLs in
    article["supersedes"]: copies of it indexed before it); this one prints."""
    print(f"{article['domain']}\t{article['version']}\t{article['title']}", flush=True)
    for copy in article.get("supersedes") or ():
        print(f"-\t{copy}\t(a copy of {article['canonical_url']})", flush=True)


def consume(
    client: redis.Redis,
    stream: str,
    group: str,
    consumer: str,
    *,
    once: bool = False,
    block_ms: int = 2000,
) -> int:
    """Read, index and acknowledge entries; returns how many were indexed."""
    try:
        client.xgroup_create(stream, group, id="0", mkstream=True)  # from the stream's start
    except redis.ResponseError as error:
        if "BUSYGROUP" not in str(error):  # the group exists already: keep its position
            raise
    handled = 0
    position = "0"  # first our own pending entries (read before a crash, never acknowledged)
    while True:
        reply = client.xreadgroup(group, consumer, {stream: position}, count=100, block=block_ms)
        entries = reply[0][1] if reply else []
        if not entries:
            if position == "0":
                position = ">"  # pending ones done: now entries never delivered to anyone
                continue
            if once:
                return handled
            continue
        for entry_id, fields in entries:
            index(json.loads(fields[b"article"]))
            client.xack(stream, group, entry_id)
            handled += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--stream", default="nh:{sink:articles}")
    parser.add_argument("--group", default="indexer")
    parser.add_argument("--consumer", default="worker-1")
    parser.add_argument("--once", action="store_true", help="exit when nothing is left to read")
    parser.add_argument("--block-ms", type=int, default=2000, help="wait for new entries this long")
    args = parser.parse_args()
    client = redis.Redis.from_url(args.redis)
    handled = consume(
        client, args.stream, args.group, args.consumer, once=args.once, block_ms=args.block_ms
    )
    print(f"indexed {handled} articles")


if __name__ == "__main__":
    main()
