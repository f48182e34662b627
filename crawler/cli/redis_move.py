"""`newsharvest redis-move`: copy a harvest's Redis state to another Redis deployment.

For the operator who outgrows one Redis server: stop the workers, move the state to a Redis
Cluster (the near-duplicate index re-sharded to its masters), start the workers on the cluster.
The logic is crawler/core/redis_move.py; the source is never changed.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from crawler.cli.table import render_table

if TYPE_CHECKING:
    from crawler.core.redis_move import MoveReport

EXIT_REFUSED = 1


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "redis-move",
        help="copy a harvest's Redis state to another Redis or a Redis Cluster (workers stopped)",
    )
    parser.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="URL",
        help="the Redis the harvest is on (redis://, redis+cluster://)",
    )
    parser.add_argument(
        "--to",
        dest="target",
        required=True,
        metavar="URL",
        help="the Redis to copy it to (redis+cluster:// for a cluster)",
    )
    parser.add_argument("--prefix", help="key prefix (REDIS_KEY_PREFIX)")
    parser.add_argument(
        "--dedup-shards",
        type=int,
        metavar="N",
        help="the index's shards on the target (default: as on the source); "
        "set DEDUP_REDIS_SHARDS to it for the workers",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="count what would move, write nothing"
    )
    parser.add_argument(
        "--force", action="store_true", help="copy even while a worker's heartbeat is alive"
    )
    parser.set_defaults(handler=run)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from crawler.core.redis_move import MoveRefused, RedisMove

    prefix = args.prefix or args.settings.get("REDIS_KEY_PREFIX")
    if args.dedup_shards is not None and args.dedup_shards < 1:
        print("newsharvest redis-move: --dedup-shards must be at least 1", file=sys.stderr)
        return EXIT_REFUSED
    move = RedisMove(args.source, args.target, prefix, args.dedup_shards)
    try:
        move.check(force=args.force)
        report = move.run(dry_run=args.dry_run)
    except MoveRefused as refused:
        print(f"newsharvest redis-move: {refused}", file=sys.stderr)
        return EXIT_REFUSED
    finally:
        move.close()
    done = "would copy" if args.dry_run else "copied"
    print(f"{done} {prefix}:* from {args.source} to {args.target}")
    print(report_text(report))
    return 0


def report_text(report: MoveReport) -> str:
    """Keys per family and per target node, then the index's re-sharding and expired keys."""
    parts = [
        render_table(["family", "keys"], sorted(report.families.items())),
        render_table(["target node", "keys"], sorted(report.nodes.items())),
    ]
    if report.source_shards:
        parts.append(
            f"near-duplicate index: {report.source_shards} -> {report.target_shards} shards"
        )
    if report.skipped:
        parts.append(f"{report.skipped} keys expired during the move (not copied)")
    return "\n\n".join(parts)
