"""The shared near-duplicate index in Redis: one EVALSHA per document, atomic across workers.

Keys (all under the hash tag {nd}, so a Redis Cluster keeps them in one slot; see RedisKeys):

    <prefix>:{nd}:d:<docnum>      record: the 128-byte sketch, the document id, then NUL and its
                                  order key when it has one (crawler/core/order.py)
    <prefix>:{nd}:b:<bucket id>   LSH bucket: docnums of the newest MAX_BUCKET_DOCS documents that
                                  have this band ("123" or "123,456"; a lone integer is stored
                                  by Redis as a machine word, without a string allocation)
    <prefix>:{nd}:layout          the fingerprint layout the index was built with (no TTL)

In DEDUP_REDIS_SHARDS > 1 shards (for a Redis Cluster: the index spread over its masters), the
bands are dealt to the shards (band i to shard i mod S), each shard under its own hash tag
(crawler/core/keys.py, dedup_shard_tags) with its own copy of each record, order key included:
the script runs per shard, on that shard's keys only. A check asks every shard at once (nothing
written) and combines the answers by the rule of `decide` (each names its earliest match that
came before, with that match's order key); a first copy is then added shard after shard, in the
same order by every worker, each step checking again (the script's check-and-add: it takes out
the records of the copies it supersedes in its shard) and stopping at a match; the superseded
copies' records then leave the other shards too. Of two
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
from dataclasses import dataclass, replace
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
    check_ids,
    checked_ttl,
    layout_mismatch,
)
from pipelines.fingerprints import Fingerprint, LshParams

# KEYS[1]   the record key of this text (content hash); KEYS[2..] its bucket keys
# ARGV      docnum, sketch, doc_id, ttl, min_matches, add (1/0), max_bucket_docs, record prefix,
#           order key ("" = arrival order)
# Reply     {kind, id of the earlier document (or this one: known) or nil, agreeing sketch
#           positions, its order key, then (new only) each superseded id followed by its docnum}
CHECK_AND_ADD = "dedup_check_and_add"  # dedup_check_and_add.lua beside this module


@dataclass(frozen=True)
class ScriptCall:
    """Builds the script's KEYS/ARGV for a fingerprint and reads its reply (sync and async)."""

    params: LshParams
    keys: RedisKeys
    ttl_seconds: int
    shards: int = 1
    max_bucket_docs: int = MAX_BUCKET_DOCS

    def arguments(
        self, doc_id: str, found: Fingerprint, add: bool, order_key: str = ""
    ) -> tuple[list[str], list[Any]]:
        """The one call of an index in one shard."""
        return self.shard_arguments(doc_id, found, add, order_key)[0]

    def shard_arguments(
        self, doc_id: str, found: Fingerprint, add: bool, order_key: str = ""
    ) -> list[tuple[list[str], list[Any]]]:
        """One call per shard, in the shards' order: its record copy and its bands' buckets."""
        check_ids(doc_id, order_key)
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
                order_key,
            ]
            calls.append((keys, args))
        return calls

    @property
    def layout(self) -> str:
        """The stored layout: the fingerprint's, and the shard count when above one."""
        return self.params.layout + (f"/shards={self.shards}" if self.shards > 1 else "")

    def redirect(self, found: Fingerprint, reply: Reply, shards: int) -> list[tuple[str, bytes]]:
        """A first copy found to be a duplicate at shard `shards` (a racing worker's copy came
        first by order key) was added to the shards before: its records there name the earlier
        copy and carry its order key from now on, so a later copy that matches it there is told
        the earlier one, and ranks it where the earlier one ranks. (Between the add and this
        rewrite, such a copy is told this one: both are copies of one story.)"""
        owner = (reply.verdict.duplicate_of or "").encode("utf-8")
        value = found.sketch + owner + record_key_suffix(reply.key)
        tags = dedup_shard_tags(self.shards)[:shards]
        return [(self.keys.dedup_record(found.docnum, tag), value) for tag in tags]

    def gone_elsewhere(self, found: Fingerprint, superseded: set[tuple[str, str]]) -> list[str]:
        """The record copies, in every shard, of the documents a first copy superseded (each
        shard's script took out only those it matched there): a superseded copy is no longer
        an original anywhere."""
        docnums = {num for _, num in superseded if num != str(found.docnum)}
        return [
            self.keys.dedup_record(int(num), tag)
            for tag in dedup_shard_tags(self.shards)
            for num in sorted(docnums)
        ]

    def reply(self, raw: list[Any]) -> Reply:
        """The script's reply: {kind, owner, agreeing positions, owner's order key, then (new
        only) each superseded document's id and docnum}."""
        kind_raw, other, matches, key, *gone = raw
        kind = _text(kind_raw)
        if kind not in VERDICT_KINDS or len(gone) % 2:
            raise redis.exceptions.ResponseError(f"unexpected dedup script reply {raw!r}")
        superseded = {(_text(gone[i]), _text(gone[i + 1])) for i in range(0, len(gone), 2)}
        if kind in (EXACT, NEAR):
            verdict = Verdict(kind, _text(other), self.params.similarity(int(matches)))
        else:
            verdict = Verdict(kind, superseded=tuple(sorted({owner for owner, _ in superseded})))
        return Reply(verdict, _text(key or b""), int(matches), frozenset(superseded))

    def verdict(self, raw: list[Any]) -> Verdict:
        return self.reply(raw).verdict

    def best(self, raws: list[list[Any]]) -> Verdict:
        """The answer of a check asked of every shard, by the rule of `decide` over all their
        matches: each shard names its earliest match that came before (same key: most similar,
        then smallest id), so the earliest of those is the earliest of all; none in any shard:
        new, and every shard's matches are superseded."""
        replies = [self.reply(raw) for raw in raws]
        for reply in replies:
            if reply.verdict.kind == KNOWN:
                return reply.verdict
        copies = [r for r in replies if r.verdict.kind in (EXACT, NEAR)]
        if copies:
            return min(copies, key=Reply.rank).verdict
        gone = {owner for r in replies for owner, _ in r.superseded}
        return Verdict(NEW, superseded=tuple(sorted(gone)))


@dataclass(frozen=True)
class Reply:
    """One shard's answer, with what combining it with the others' needs."""

    verdict: Verdict
    key: str  # the named document's order key ("" when it has none)
    matches: int  # agreeing sketch positions with it
    superseded: frozenset[tuple[str, str]]  # new only: (id, docnum) of each later copy found

    def rank(self) -> tuple[str, int, str]:
        return (self.key, -self.matches, self.verdict.duplicate_of or "")


def record_key_suffix(order_key: str) -> bytes:
    """What follows the document id in a record: NUL and the order key, if there is one."""
    return b"\0" + order_key.encode("utf-8") if order_key else b""


class Adding:
    """A first copy being added shard after shard (sync and async share this bookkeeping)."""

    def __init__(self, call: ScriptCall, found: Fingerprint) -> None:
        self.call = call
        self.found = found
        self.added = 0  # shards it was added to
        self.superseded: set[tuple[str, str]] = set()  # (id, docnum), over the shards added to
        self.stopped: Reply | None = None  # the shard that named an earlier copy

    def step(self, raw: list[Any]) -> bool:
        """Take one shard's reply; True when adding must stop (another copy came first)."""
        reply = self.call.reply(raw)
        if reply.verdict.kind == NEW:
            self.superseded.update(reply.superseded)
            self.added += 1
            return False
        self.stopped = reply
        return True

    def deletes(self) -> list[str]:
        return self.call.gone_elsewhere(self.found, self.superseded)

    def rewrites(self) -> list[tuple[str, bytes]]:
        stopped = self.stopped
        if stopped is None or stopped.verdict.kind not in (EXACT, NEAR):
            return []  # added everywhere (or met itself, added by another worker: nothing to do)
        return self.call.redirect(self.found, stopped, self.added)

    def verdict(self) -> Verdict:
        """New with every shard's superseded copies; or the earlier copy met, naming those this
        one took out before it met it (they are its copies, so the earlier one's, one hop on)."""
        superseded = tuple(sorted({owner for owner, _ in self.superseded}))
        if self.stopped is None:
            return Verdict(NEW, superseded=superseded)
        return replace(self.stopped.verdict, superseded=superseded)


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


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

    def check_fingerprint(
        self, doc_id: str, found: Fingerprint, *, add: bool = True, order_key: str = ""
    ) -> Verdict:
        if self._call.shards == 1:
            keys, args = self._call.arguments(doc_id, found, add, order_key)
            return self._call.verdict(self._script(keys=keys, args=args))
        asked = self._call.shard_arguments(doc_id, found, False, order_key)
        verdict = self._call.best(self._ask_all(asked))
        if verdict.kind != NEW or not add:
            return verdict
        adding = Adding(self._call, found)
        for keys, args in self._call.shard_arguments(doc_id, found, True, order_key):
            if adding.step(self._script(keys=keys, args=args)):
                break  # another worker's copy came first: stop adding
        for key in adding.deletes():
            self.client.delete(key)
        for key, value in adding.rewrites():
            self.client.set(key, value, xx=True, keepttl=True)
        return adding.verdict()

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
        self, doc_id: str, found: Fingerprint, *, add: bool = True, order_key: str = ""
    ) -> Verdict:
        if self._call.shards == 1:
            keys, args = self._call.arguments(doc_id, found, add, order_key)
            return self._call.verdict(await self._script(keys=keys, args=args))
        asked = self._call.shard_arguments(doc_id, found, False, order_key)
        replies = await asyncio.gather(*(self._script(keys=k, args=a) for k, a in asked))
        verdict = self._call.best(list(replies))
        if verdict.kind != NEW or not add:
            return verdict
        adding = Adding(self._call, found)
        for keys, args in self._call.shard_arguments(doc_id, found, True, order_key):
            if adding.step(await self._script(keys=keys, args=args)):
                break  # another worker's copy came first: stop adding
        for key in adding.deletes():
            await self.client.delete(key)
        for key, value in adding.rewrites():
            await self.client.set(key, value, xx=True, keepttl=True)
        return adding.verdict()

    async def close(self) -> None:
        await self.client.aclose()


def check_layout(stored: bytes | None, layout: str, keys: RedisKeys) -> None:
    """`stored` is the layout the index has (ours, if this worker was the first)."""
    if stored is None or stored.decode() != layout:
        found = stored.decode() if stored is not None else "nothing"
        raise layout_mismatch(keys.dedup_layout(), found, layout)
