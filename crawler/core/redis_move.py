"""Move a harvest's Redis state to another Redis deployment (`newsharvest redis-move`).

An operator who outgrows one Redis server moves the harvest to a Redis Cluster (or back, or
between any two deployments) while no worker runs: every key under the prefix is copied with
DUMP/RESTORE, keeping its remaining time to live (PTTL), under the name it has in the target's
layout (RedisKeys.renamed: the request queue and pop notes differ between one server and a
cluster). The near-duplicate index is re-sharded to the target's shard count: each bucket goes
to the shard its id names (dedup_bucket_shard), each record to the shards of the buckets that
list it (every shard when none does: an exact copy still finds it), and the layout key is
rewritten. The source is never changed.

SCAN walks the source: this is an offline operation (no worker may write meanwhile, so it
refuses while a worker's heartbeat is alive). The records are held in memory until every
bucket has been read (a record's target shards come from the buckets that list it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from crawler.core.connection import is_cluster_client, is_cluster_url, sync_redis
from crawler.core.keys import (
    DEDUP_BUCKETS,
    DEDUP_LAYOUT,
    DEDUP_RECORDS,
    RedisKeys,
    dedup_bucket_shard,
    dedup_layout_shards,
    dedup_layout_with_shards,
    dedup_shard_tags,
)

SCAN_COUNT = 1000  # keys per SCAN step and per pipeline of DUMPs or RESTOREs
NO_EXPIRY = -1  # PTTL of a key without a time to live
GONE = -2  # PTTL of a key that expired between SCAN and DUMP


class MoveRefused(Exception):
    """The move cannot start (workers alive, a non-empty target, an index it cannot read)."""


@dataclass
class MoveReport:
    """What was (or, in a dry run, would be) written: keys per family and per target node."""

    families: Counter[str] = field(default_factory=Counter)
    nodes: Counter[str] = field(default_factory=Counter)
    skipped: int = 0  # keys that expired while the move ran
    source_shards: int = 0  # of the near-duplicate index (0: none)
    target_shards: int = 0


@dataclass
class _Record:
    """The freshest source copy of one indexed article's record (its shards hold copies)."""

    source_key: str
    pttl: int


class _Resharding:
    """Where the index's keys go in `shards` target shards: each bucket to the shard its id
    names; each record to the shards of the buckets that list it (a near copy finds it through
    one of them, an exact copy has the same bands), to every shard when none does."""

    def __init__(self, keys: RedisKeys, shards: int) -> None:
        self.keys = keys
        self.shards = shards
        self.tags = dedup_shard_tags(shards)
        self.records: dict[str, _Record] = {}  # docnum -> its source copy to move
        self.record_shards: dict[str, set[int]] = {}  # docnum -> the shards that list it

    def buckets(self, bucket_ids: list[str], members: list[Any]) -> list[str]:
        """The target names of these buckets (`members`: their values, "docnum,docnum")."""
        names = []
        for bucket_id, value in zip(bucket_ids, members, strict=True):
            shard = dedup_bucket_shard(bucket_id, self.shards)
            names.append(self.keys.dedup_bucket(bucket_id, self.tags[shard]))
            for docnum in (value or b"").decode().split(","):
                if docnum:
                    self.record_shards.setdefault(docnum, set()).add(shard)
        return names

    def record_moves(self) -> Iterator[tuple[str, str]]:
        """(source key, target key) of every record copy, once every bucket has been read."""
        every = set(range(self.shards))
        for docnum, record in self.records.items():
            for shard in sorted(self.record_shards.get(docnum) or every):
                yield record.source_key, self.keys.dedup_record(docnum, self.tags[shard])


class RedisMove:
    """Copies every key under `prefix` from `source` to `target` (URLs, see connection.py)."""

    def __init__(
        self, source: str, target: str, prefix: str, dedup_shards: int | None = None
    ) -> None:
        self.source = sync_redis(source)
        self.target = sync_redis(target)
        self.source_keys = RedisKeys(prefix, cluster=is_cluster_url(source))
        self.target_keys = RedisKeys(prefix, cluster=is_cluster_url(target))
        self.dedup_shards = dedup_shards  # None: the source index's shard count
        self.report = MoveReport()

    def close(self) -> None:
        self.source.close()
        self.target.close()

    # --- before anything is written ----------------------------------------------------

    def check(self, force: bool = False) -> None:
        """Refuse while a worker is alive (its writes would be lost) unless `force`, and when
        the target already holds keys under the prefix (RESTORE would collide with them)."""
        for client, keys, where in (
            (self.source, self.source_keys, "source"),
            (self.target, self.target_keys, "target"),
        ):
            alive = _first(client, keys.pattern(keys.harvest_alive_prefix()))
            if alive is not None and not force:
                raise MoveRefused(
                    f"a worker is alive on the {where} ({alive}): stop every worker first "
                    "(or --force to copy anyway)"
                )
        taken = _first(self.target, self.target_keys.pattern())
        if taken is not None:
            raise MoveRefused(f"the target already holds keys under the prefix ({taken})")

    def index_shards(self) -> tuple[str, int] | None:
        """The source index's fingerprint layout and shard count (None: it has no index)."""
        stored = self.source.get(self.source_keys.dedup_layout())
        if stored is None:
            return None
        layout, shards = dedup_layout_shards(stored.decode())
        if shards == 0:
            raise MoveRefused(f"the near-duplicate index's layout {layout!r} cannot be re-sharded")
        return layout, shards

    # --- the move --------------------------------------------------------------------------

    def run(self, dry_run: bool = False) -> MoveReport:
        """Copy every key (nothing is written in a `dry_run`); the counts of what was copied."""
        index = self.index_shards()
        shards = self.dedup_shards or (index[1] if index else 1)
        self.report.source_shards = index[1] if index else 0
        self.report.target_shards = shards if index else 0
        resharding = _Resharding(self.target_keys, shards)
        scan = self.source.scan_iter(match=self.source_keys.pattern(), count=SCAN_COUNT)
        for batch in _batches(scan):
            plain, records, buckets = self._sorted(batch, has_index=index is not None)
            self._note_records(records, resharding.records)
            renamed = [(key, self.source_keys.renamed(key, self.target_keys)) for key in plain]
            self._copy(renamed, dry_run)
            names = [self._dedup_name(key) for key in buckets]
            targets = resharding.buckets(names, self._values(buckets))
            self._copy(list(zip(buckets, targets, strict=True)), dry_run)
        for moves in _batches(resharding.record_moves()):
            self._copy(moves, dry_run)
        if index is not None:
            layout_key = self.target_keys.dedup_layout()
            if not dry_run:
                self.target.set(layout_key, dedup_layout_with_shards(index[0], shards))
            self._count(layout_key)
        return self.report

    def _sorted(self, batch: list[str], has_index: bool) -> tuple[list[str], ...]:
        """The keys copied under their (renamed) names, the index's records, its buckets (the
        layout key is left out: it is rewritten for the target's shard count)."""
        plain: list[str] = []
        records: list[str] = []
        buckets: list[str] = []
        for key in batch:
            family = self.source_keys.family(key)
            if family in (DEDUP_RECORDS, DEDUP_BUCKETS) and not has_index:
                raise MoveRefused(f"{key} belongs to an index without a layout key")
            if family != DEDUP_LAYOUT:
                {DEDUP_RECORDS: records, DEDUP_BUCKETS: buckets}.get(family, plain).append(key)
        return plain, records, buckets

    def _dedup_name(self, key: str) -> str:
        parts = self.source_keys.dedup_parts(key)
        assert parts is not None  # classified as an index key by `family`
        return parts[2]

    def _note_records(self, keys: list[str], records: dict[str, _Record]) -> None:
        """Keep, of each record's copies (one per source shard), the one that lives longest:
        the one written last."""
        pipe = self.source.pipeline(transaction=False)
        for key in keys:
            pipe.pttl(key)
        for key, pttl in zip(keys, pipe.execute() if keys else [], strict=True):
            if pttl == GONE:
                self.report.skipped += 1
                continue
            docnum = self._dedup_name(key)
            known = records.get(docnum)
            if known is None or _lives_longer(pttl, known.pttl):
                records[docnum] = _Record(key, pttl)

    def _values(self, keys: list[str]) -> list[Any]:
        pipe = self.source.pipeline(transaction=False)
        for key in keys:
            pipe.get(key)
        return list(pipe.execute()) if keys else []

    def _copy(self, moves: list[tuple[str, str]], dry_run: bool) -> None:
        """DUMP each source key and RESTORE it under its target name with its remaining TTL."""
        if not moves:
            return
        pipe = self.source.pipeline(transaction=False)
        for source_key, _ in moves:
            pipe.dump(source_key)
            pipe.pttl(source_key)
        answers = pipe.execute()
        writes = self.target.pipeline(transaction=False)
        for i, (_, target_key) in enumerate(moves):
            payload, pttl = answers[2 * i], answers[2 * i + 1]
            if payload is None or pttl == GONE:
                self.report.skipped += 1
                continue
            writes.restore(target_key, 0 if pttl == NO_EXPIRY else pttl, payload)
            self._count(target_key)
        if not dry_run:
            writes.execute()

    def _count(self, target_key: str) -> None:
        self.report.families[self.target_keys.family(target_key)] += 1
        self.report.nodes[_node_of(self.target, target_key)] += 1


def _lives_longer(pttl: int, other: int) -> bool:
    if other == NO_EXPIRY:
        return False
    return pttl == NO_EXPIRY or pttl > other


def _node_of(client: Any, key: str) -> str:
    """host:port of the node that holds `key`."""
    if is_cluster_client(client):
        return str(client.get_node_from_key(key).name)
    kwargs = client.connection_pool.connection_kwargs
    return f"{kwargs.get('host', kwargs.get('path', '?'))}:{kwargs.get('port', '')}".rstrip(":")


def _first(client: Any, pattern: str) -> str | None:
    for key in client.scan_iter(match=pattern, count=SCAN_COUNT):
        return key.decode() if isinstance(key, bytes) else str(key)
    return None


def _batches(items: Iterator[Any]) -> Iterator[list[Any]]:
    """`items` (keys: decoded) SCAN_COUNT at a time."""
    batch: list[Any] = []
    for item in items:
        batch.append(item.decode() if isinstance(item, bytes) else item)
        if len(batch) >= SCAN_COUNT:
            yield batch
            batch = []
    if batch:
        yield batch
