"""The shared near-duplicate index in Redis: one EVALSHA per document, atomic across workers.

Keys (all under the hash tag {nd}, so a Redis Cluster keeps them in one slot; see RedisKeys):

    <prefix>:{nd}:d:<docnum>      record: the 128-byte sketch followed by the document id
    <prefix>:{nd}:b:<bucket id>   LSH bucket: docnums of the newest MAX_BUCKET_DOCS documents that
                                  have this band ("123" or "123,456"; a lone integer is stored
                                  by Redis as a machine word, without a string allocation)
    <prefix>:{nd}:layout          the fingerprint layout the index was built with (no TTL)

In DEDUP_REDIS_SHARDS > 1 shards (for a Redis Cluster: the index spread over its masters), the
bands are dealt to the shards (band i to shard i mod S), each shard under its own hash tag
(crawler/core/keys.py, dedup_shard_tags) with its own copy of each record: the script runs per
shard, on that shard's keys only. A check asks every shard at once (nothing written) and takes
the best answer; a first copy is then added shard after shard, in the same order by every
worker, each step checking again (the script's check-and-add) and stopping at a match. Of two
workers racing with near-duplicates, the one second at the first shard where they share a band
sees the other there, and both cannot see each other: each would have to be added, before the
other's check, at a shard the other reaches first, which the common order rules out. The price:
a record copy per shard (about 200 bytes per article and shard), and a first copy's S calls.

<docnum> is 53 bits of the content hash, so the record key doubles as the exact-duplicate
lookup. Records and buckets get the TTL when written; a bucket that gains a member is rewritten
with a fresh TTL, and members whose record has expired are skipped.

Why a script and not "read candidates, confirm in Python, then write": between the read and the
write another worker could add its copy of the same story, and both would see an empty index and
both call themselves the original. A Redis script runs alone (no other command interleaves), so
lookup, confirmation against the stored sketches and insertion are one indivisible step: of two
workers racing with near-duplicates, whichever script runs second sees the first one's record.
Confirming inside the script also keeps it to one round trip (the sketches never leave Redis).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio

from crawler.core.keys import RedisKeys, dedup_shard_tags
from crawler.core.lua import register_batched_lua, register_lua
from pipelines.dedup.index import (
    EXACT,
    KNOWN,
    MAX_BUCKET_DOCS,
    NEAR,
    NEW,
    VERDICT_KINDS,
    NearDuplicateIndex,
    Verdict,
    checked_ttl,
    layout_mismatch,
)
from pipelines.fingerprints import Fingerprint, LshParams

# KEYS[1]   the record key of this text (content hash); KEYS[2..] its bucket keys
# ARGV      docnum, sketch, doc_id, ttl, min_matches, add (1/0), max_bucket_docs, record prefix
# Reply     {kind, id of the earlier document or nil, agreeing sketch positions}
CHECK_AND_ADD = "dedup_check_and_add"  # dedup_check_and_add.lua beside this module


@dataclass(frozen=True)
class ScriptCall:
    """Builds the script's KEYS/ARGV for a fingerprint and reads its reply (sync and async)."""

    params: LshParams
    keys: RedisKeys
    ttl_seconds: int
    shards: int = 1
    max_bucket_docs: int = MAX_BUCKET_DOCS

    def arguments(self, doc_id: str, found: Fingerprint, add: bool) -> tuple[list[str], list[Any]]:
        """The one call of an index in one shard."""
        return self.shard_arguments(doc_id, found, add)[0]

    def shard_arguments(
        self, doc_id: str, found: Fingerprint, add: bool
    ) -> list[tuple[list[str], list[Any]]]:
        """One call per shard, in the shards' order: its record copy and its bands' buckets."""
        if not doc_id:
            raise ValueError("doc_id must be a non-empty string")
        tags = dedup_shard_tags(self.shards)
        calls = []
        for shard, tag in enumerate(tags):
            keys = [
                self.keys.dedup_record(found.docnum, tag),
                *(
                    self.keys.dedup_bucket(bucket, tag)
                    for band, bucket in enumerate(found.buckets)
                    if band % len(tags) == shard
                ),
            ]
            args = [
                found.docnum,
                found.sketch,
                doc_id,
                self.ttl_seconds,
                self.params.min_matches,
                1 if add else 0,
                self.max_bucket_docs,
                self.keys.dedup_record_prefix(tag),
            ]
            calls.append((keys, args))
        return calls

    @property
    def layout(self) -> str:
        """The stored layout: the fingerprint's, and the shard count when above one."""
        return self.params.layout + (f"/shards={self.shards}" if self.shards > 1 else "")

    def redirect(
        self, found: Fingerprint, verdict: Verdict, shards: int
    ) -> list[tuple[str, bytes]]:
        """A first copy found to be a duplicate at shard `shards` (a racing worker's copy came
        first) was added to the shards before: its records there name the earlier copy from now
        on, so a later copy that matches it there is told the earlier one. (Between the add and
        this rewrite, such a copy is told this one: both are copies of one story.)"""
        owner = (verdict.duplicate_of or "").encode("utf-8")
        tags = dedup_shard_tags(self.shards)[:shards]
        return [(self.keys.dedup_record(found.docnum, tag), found.sketch + owner) for tag in tags]

    def best(self, replies: list[list[Any]]) -> Verdict:
        """The answer of a check asked of every shard: an exact copy (or this very document)
        first, else the nearest confirmed candidate, else new."""
        verdicts = [self.verdict(reply) for reply in replies]
        for verdict in verdicts:
            if verdict.kind in (EXACT, KNOWN):
                return verdict
        near = [v for v in verdicts if v.kind == NEAR]
        return max(near, key=lambda v: v.similarity or 0.0) if near else Verdict(NEW)

    def verdict(self, reply: list[Any]) -> Verdict:
        kind_raw, other, matches = reply
        kind = kind_raw.decode() if isinstance(kind_raw, bytes) else str(kind_raw)
        if kind not in VERDICT_KINDS:
            raise redis.exceptions.ResponseError(f"unexpected dedup script reply {reply!r}")
        if kind in (EXACT, NEAR):
            owner = other.decode("utf-8") if isinstance(other, bytes) else str(other)
            return Verdict(kind, owner, self.params.similarity(int(matches)))
        return Verdict(kind)


class RedisNearDuplicateIndex(NearDuplicateIndex):
    """The index in Redis, through a blocking client (tools, benchmarks, worker processes)."""

    def __init__(
        self,
        client: redis.Redis,
        params: LshParams,
        keys: RedisKeys,
        ttl_seconds: int,
        shards: int = 1,
    ) -> None:
        super().__init__(params, ttl_seconds)
        self.client = client
        self.keys = keys
        self._call = ScriptCall(params, keys, self.ttl_seconds, shards)
        self.shard_tags = dedup_shard_tags(shards)  # the hash tag of each shard, in order
        self._script = register_lua(client, "pipelines.dedup", CHECK_AND_ADD)
        pipe = client.pipeline(transaction=False)
        pipe.set(keys.dedup_layout(), self._call.layout, nx=True)  # the first worker records it
        pipe.get(keys.dedup_layout())
        check_layout(pipe.execute()[1], self._call.layout, keys)

    def check_fingerprint(self, doc_id: str, found: Fingerprint, *, add: bool = True) -> Verdict:
        if self._call.shards == 1:
            keys, args = self._call.arguments(doc_id, found, add)
            return self._call.verdict(self._script(keys=keys, args=args))
        asked = self._call.shard_arguments(doc_id, found, add=False)
        verdict = self._call.best(self._ask_all(asked))
        if verdict.kind != NEW or not add:
            return verdict
        for shard, (keys, args) in enumerate(self._call.shard_arguments(doc_id, found, True)):
            verdict = self._call.verdict(self._script(keys=keys, args=args))
            if verdict.kind != NEW:  # another worker's copy came first: stop adding
                for key, value in self._call.redirect(found, verdict, shard):
                    self.client.set(key, value, xx=True, keepttl=True)
                return verdict
        return verdict

    def _ask_all(self, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        """The script's replies to `calls` (one pipeline); loaded first where a node had none."""
        for _ in range(2):
            pipe = self.client.pipeline(transaction=False)
            for keys, args in calls:
                pipe.execute_command("EVALSHA", self._script.sha, len(keys), *keys, *args)
            try:
                return list(pipe.execute())
            except redis.exceptions.NoScriptError:
                self.client.script_load(self._script.script)  # every master, on a cluster
        raise redis.exceptions.NoScriptError("the dedup script could not be loaded")

    def close(self) -> None:
        self.client.close()


class AsyncRedisNearDuplicateIndex:
    """The same index through redis.asyncio: what the crawler's pipeline uses."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        params: LshParams,
        keys: RedisKeys,
        ttl_seconds: int,
        shards: int = 1,
    ) -> None:
        self.client = client
        self.params = params
        self.keys = keys
        self._call = ScriptCall(params, keys, checked_ttl(ttl_seconds), shards)
        self._script = register_batched_lua(client, "pipelines.dedup", CHECK_AND_ADD)

    async def open(self) -> None:
        """Check (or record) the layout: a misconfigured worker fails before its first item."""
        pipe = self.client.pipeline(transaction=False)
        pipe.set(self.keys.dedup_layout(), self._call.layout, nx=True)
        pipe.get(self.keys.dedup_layout())
        check_layout((await pipe.execute())[1], self._call.layout, self.keys)

    async def check_fingerprint(
        self, doc_id: str, found: Fingerprint, *, add: bool = True
    ) -> Verdict:
        if self._call.shards == 1:
            keys, args = self._call.arguments(doc_id, found, add)
            return self._call.verdict(await self._script(keys=keys, args=args))
        asked = self._call.shard_arguments(doc_id, found, add=False)
        replies = await asyncio.gather(*(self._script(keys=k, args=a) for k, a in asked))
        verdict = self._call.best(list(replies))
        if verdict.kind != NEW or not add:
            return verdict
        for shard, (keys, args) in enumerate(self._call.shard_arguments(doc_id, found, True)):
            verdict = self._call.verdict(await self._script(keys=keys, args=args))
            if verdict.kind != NEW:  # another worker's copy came first: stop adding
                for key, value in self._call.redirect(found, verdict, shard):
                    await self.client.set(key, value, xx=True, keepttl=True)
                return verdict
        return verdict

    async def close(self) -> None:
        await self.client.aclose()


def check_layout(stored: bytes | None, layout: str, keys: RedisKeys) -> None:
    """`stored` is the layout the index has (ours, if this worker was the first)."""
    if stored is None or stored.decode() != layout:
        found = stored.decode() if stored is not None else "nothing"
        raise layout_mismatch(keys.dedup_layout(), found, layout)
