"""The shared near-duplicate index in Redis: one EVALSHA per document, atomic across workers.

Keys (all under the hash tag {nd}, so a Redis Cluster keeps them in one slot; see RedisKeys):

    <prefix>:{nd}:d:<docnum>      record: the 128-byte sketch, the document id, then NUL and its
                                  order key when it has one (crawler/core/order.py)
    <prefix>:{nd}:b:<bucket id>   LSH bucket: docnums of the newest MAX_BUCKET_DOCS documents that
                                  have this band ("123" or "123,456"; a lone integer is stored
                                  by Redis as a machine word, without a string allocation)
    <prefix>:{nd}:layout          the fingerprint layout the index was built with (no TTL)

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

from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio

from crawler.core.keys import RedisKeys
from crawler.core.lua import register_batched_lua, register_lua
from pipelines.dedup.index import (
    EXACT,
    MAX_BUCKET_DOCS,
    NEAR,
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
# Reply     {kind, id of the earlier document or nil, agreeing sketch positions, superseded ids...}
CHECK_AND_ADD = "dedup_check_and_add"  # dedup_check_and_add.lua beside this module


@dataclass(frozen=True)
class ScriptCall:
    """Builds the script's KEYS/ARGV for a fingerprint and reads its reply (sync and async)."""

    params: LshParams
    keys: RedisKeys
    ttl_seconds: int
    max_bucket_docs: int = MAX_BUCKET_DOCS

    def arguments(
        self, doc_id: str, found: Fingerprint, add: bool, order_key: str = ""
    ) -> tuple[list[str], list[Any]]:
        check_ids(doc_id, order_key)
        keys = [
            self.keys.dedup_record(found.docnum),
            *(self.keys.dedup_bucket(bucket) for bucket in found.buckets),
        ]
        args = [
            found.docnum,
            found.sketch,
            doc_id,
            self.ttl_seconds,
            self.params.min_matches,
            1 if add else 0,
            self.max_bucket_docs,
            self.keys.dedup_record_prefix(),
            order_key,
        ]
        return keys, args

    def verdict(self, reply: list[Any]) -> Verdict:
        kind_raw, other, matches, *superseded = reply
        kind = _text(kind_raw)
        if kind not in VERDICT_KINDS:
            raise redis.exceptions.ResponseError(f"unexpected dedup script reply {reply!r}")
        if kind in (EXACT, NEAR):
            return Verdict(kind, _text(other), self.params.similarity(int(matches)))
        return Verdict(kind, superseded=tuple(sorted({_text(owner) for owner in superseded})))


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class RedisNearDuplicateIndex(NearDuplicateIndex):
    """The index in Redis, through a blocking client (tools, benchmarks, worker processes)."""

    def __init__(
        self, client: redis.Redis, params: LshParams, keys: RedisKeys, ttl_seconds: int
    ) -> None:
        super().__init__(params, ttl_seconds)
        self.client = client
        self.keys = keys
        self._call = ScriptCall(params, keys, self.ttl_seconds)
        self._script = register_lua(client, "pipelines.dedup", CHECK_AND_ADD)
        pipe = client.pipeline(transaction=False)
        pipe.set(keys.dedup_layout(), params.layout, nx=True)  # the first worker records it
        pipe.get(keys.dedup_layout())
        check_layout(pipe.execute()[1], params, keys)

    def check_fingerprint(
        self, doc_id: str, found: Fingerprint, *, add: bool = True, order_key: str = ""
    ) -> Verdict:
        keys, args = self._call.arguments(doc_id, found, add, order_key)
        return self._call.verdict(self._script(keys=keys, args=args))

    def close(self) -> None:
        self.client.close()


class AsyncRedisNearDuplicateIndex:
    """The same index through redis.asyncio: what the crawler's pipeline uses."""

    def __init__(
        self, client: redis.asyncio.Redis, params: LshParams, keys: RedisKeys, ttl_seconds: int
    ) -> None:
        self.client = client
        self.params = params
        self.keys = keys
        self._call = ScriptCall(params, keys, checked_ttl(ttl_seconds))
        self._script = register_batched_lua(client, "pipelines.dedup", CHECK_AND_ADD)

    async def open(self) -> None:
        """Check (or record) the layout: a misconfigured worker fails before its first item."""
        pipe = self.client.pipeline(transaction=False)
        pipe.set(self.keys.dedup_layout(), self.params.layout, nx=True)
        pipe.get(self.keys.dedup_layout())
        check_layout((await pipe.execute())[1], self.params, self.keys)

    async def check_fingerprint(
        self, doc_id: str, found: Fingerprint, *, add: bool = True, order_key: str = ""
    ) -> Verdict:
        keys, args = self._call.arguments(doc_id, found, add, order_key)
        return self._call.verdict(await self._script(keys=keys, args=args))

    async def close(self) -> None:
        await self.client.aclose()


def check_layout(stored: bytes | None, params: LshParams, keys: RedisKeys) -> None:
    """`stored` is the layout the index has (ours, if this worker was the first)."""
    if stored is None or stored.decode() != params.layout:
        found = stored.decode() if stored is not None else "nothing"
        raise layout_mismatch(keys.dedup_layout(), found, params.layout)
