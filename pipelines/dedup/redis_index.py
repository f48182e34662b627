"""The shared near-duplicate index in Redis: one script call per shard, atomic across workers.

Keys (all under the hash tag {nd}, so a Redis Cluster keeps them in one slot; see RedisKeys):

    <prefix>:{nd}:d:<docnum>      record: the 128-byte sketch, the document id, then NUL and its
                                  order key when it has one (crawler/core/order.py)
    <prefix>:{nd}:b:<bucket id>   LSH bucket: docnums of the newest MAX_BUCKET_DOCS documents that
                                  have this band ("123" or "123,456"; a lone integer is stored
                                  by Redis as a machine word, without a string allocation)
    <prefix>:{nd}:layout          the fingerprint layout the index was built with (no TTL)

The script (dedup_check_and_add.lua) takes many operations per call, each run as a call of its
own: the crawler's index sends the checks of the articles in flight together, one call per
shard (crawler/core/lua.py, OperationsScript), so a call's fixed costs are paid once per batch.

Which copy came first is a total order: the order keys, and for equal keys the document ids.
In DEDUP_REDIS_SHARDS = S > 1 shards (for a Redis Cluster: the index spread over its masters),
the buckets are dealt to the shards by their ids (a hash: id mod S, crawler/core/keys.py,
dedup_bucket_shard), each shard under its own hash tag (dedup_shard_tags) with its own copy of
the record of each article that has a band there, order key included: the script runs per
shard, on that shard's keys only. An exact copy has the same bands and a near one shares one,
so only the shards an article has bands in are asked. A document with an order key is checked
and added in each of its shards at once (one call each) and the answers combined by the rule of
`decide` (each names its earliest match that came before, with that match's order key): no
shard knows an earlier copy, it is new, and the copies it superseded in any shard leave every
shard; one does, it is a copy of the earliest named, and its records in the shards that added
it are taken out again (its withdrawal: the index ends as one server's would). Two workers
racing with near-duplicates cannot both be copies of the other: in every shard where they
share a band, the second there finds the first, and the earlier by the order either
supersedes the later (met second) or is never told it came after (met first); the later one
finds the earlier one in some shard, or is superseded by it. Without an order key (arrival
order decides, no total order) a check asks each of its shards (nothing written) and a first
copy is then added shard after shard, in the shards' order for every worker, stopping at a
match: of two racers, the second at the first shard where they share a band sees the other
there. The price: a record copy per shard the article has a band in (about 200 bytes per
article and shard), and as many calls per article (at most S).

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

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import redis
import redis.asyncio

from crawler.core.keys import (
    RedisKeys,
    dedup_bucket_shard,
    dedup_layout_with_shards,
    dedup_shard_tags,
)
from crawler.core.lua import (
    Operation,
    group_operations,
    register_lua,
    register_operations_lua,
    replies_in_order,
)
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

# KEYS      the shard's record prefix and bucket prefix
# ARGV      ttl, min_matches, max_bucket_docs, sketch bytes, then one operation each:
#           CHECK add sketch docnum NUL doc_id NUL order_key [NUL bucket id]...,
#           DROP docnum NUL doc_id
# Replies   CHECK: {kind, id of the earlier document (or this one: known) or nil, agreeing
#           sketch positions, its order key, added (1/0), then (new only) each superseded id
#           followed by its docnum}; DROP: records deleted (1/0)
CHECK_AND_ADD = "dedup_check_and_add"  # dedup_check_and_add.lua beside this module
CHECK = b"c"
DROP = b"d"
SEPARATOR = b"\0"


@dataclass(frozen=True)
class ScriptCall:
    """Builds the script's operations for a fingerprint and reads its replies (sync and async)."""

    params: LshParams
    keys: RedisKeys
    ttl_seconds: int
    shards: int = 1
    max_bucket_docs: int = MAX_BUCKET_DOCS

    def shard_keys(self, shard: int) -> list[str]:
        tag = dedup_shard_tags(self.shards)[shard]
        return [self.keys.dedup_record_prefix(tag), self.keys.dedup_bucket_prefix(tag)]

    @property
    def head(self) -> list[Any]:
        """The arguments before the operations."""
        params = self.params
        return [self.ttl_seconds, params.min_matches, self.max_bucket_docs, params.sketch_bytes]

    def checks(
        self, doc_id: str, found: Fingerprint, add: bool, order_key: str = ""
    ) -> list[Operation]:
        """One check per shard, in the shards' order: its record copy and its bands' buckets."""
        check_ids(doc_id, order_key)
        start = CHECK + (b"1" if add else b"0") + found.sketch
        ids = SEPARATOR.join((str(found.docnum).encode(), doc_id.encode(), order_key.encode()))
        return [
            (shard, start + SEPARATOR.join((ids, *(b.encode() for b in buckets))))
            for shard, buckets in self.shard_buckets(found).items()
        ]

    def shard_buckets(self, found: Fingerprint) -> dict[int, list[str]]:
        """The article's buckets by shard, in the shards' order: only the shards it has a band
        in (an exact copy has the same bands, a near one shares one, so no other shard can
        know a copy of it; its record copies live in these shards alone)."""
        by_shard: dict[int, list[str]] = {}
        for bucket in found.buckets:
            by_shard.setdefault(dedup_bucket_shard(bucket, self.shards), []).append(bucket)
        return dict(sorted(by_shard.items())) or {0: []}  # no bands: the exact lookup alone

    def drops(self, owner: str, docnum: int | str, shards: Sequence[int]) -> list[Operation]:
        """Take the record `docnum` out of `shards` where it still names `owner`."""
        operation = DROP + SEPARATOR.join((str(docnum).encode(), owner.encode()))
        return [(shard, operation) for shard in shards]

    @property
    def layout(self) -> str:
        """The stored layout: the fingerprint's, and the shard count and rule when above one."""
        return dedup_layout_with_shards(self.params.layout, self.shards)

    def gone_elsewhere(self, superseded: set[tuple[str, str]]) -> list[Operation]:
        """The record copies, in every shard, of the documents a first copy superseded (each
        shard's script took out only those it matched there): a superseded copy is no longer
        an original anywhere. A record another document has taken since stays."""
        every = range(self.shards) if self.shards > 1 else ()
        return [op for owner, num in sorted(superseded) for op in self.drops(owner, num, every)]

    def reply(self, raw: Any) -> Reply:
        """One check's reply: {kind, owner, agreeing positions, owner's order key, added, then
        (new only) each superseded document's id and docnum}."""
        if isinstance(raw, Exception):
            raise raw
        kind_raw, other, matches, key, added, *gone = raw
        kind = _text(kind_raw)
        if kind not in VERDICT_KINDS or len(gone) % 2:
            raise redis.exceptions.ResponseError(f"unexpected dedup script reply {raw!r}")
        superseded = {(_text(gone[i]), _text(gone[i + 1])) for i in range(0, len(gone), 2)}
        if kind in (EXACT, NEAR):
            verdict = Verdict(kind, _text(other), self.params.similarity(int(matches)))
        else:
            verdict = Verdict(kind, superseded=tuple(sorted({owner for owner, _ in superseded})))
        return Reply(verdict, _text(key or b""), int(matches), frozenset(superseded), added == 1)

    def best(self, raws: Sequence[Any]) -> Verdict:
        """The answer of a look asked of every shard, by the rule of `decide` over all their
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

    def settle(
        self, doc_id: str, found: Fingerprint, raws: Sequence[Any]
    ) -> tuple[Verdict, list[Operation]]:
        """The verdict of a check-and-add sent to every shard at once, and the drops it leaves:
        the superseded copies' records in every shard and, when a shard named an earlier copy,
        this document's own records where it was added (or found from an earlier attempt).
        `raws` answer `checks`, one per shard the article has bands in, in their order."""
        replies = [self.reply(raw) for raw in raws]
        shards = list(self.shard_buckets(found))
        superseded = {pair for reply in replies for pair in reply.superseded}
        named = tuple(sorted({owner for owner, _ in superseded}))
        drops = self.gone_elsewhere(superseded)
        copies = [r for r in replies if r.verdict.kind in (EXACT, NEAR)]
        if copies:
            mine = [
                shard
                for shard, r in zip(shards, replies, strict=True)
                if r.added or r.verdict.kind == KNOWN
            ]
            drops += self.drops(doc_id, found.docnum, mine)
            return replace(min(copies, key=Reply.rank).verdict, superseded=named), drops
        if all(reply.verdict.kind == KNOWN for reply in replies):
            return Verdict(KNOWN), drops
        return Verdict(NEW, superseded=named), drops

    def one_pass(self, add: bool, order_key: str) -> bool:
        """Whether a check goes to every shard at once (always, when it adds nothing). A first
        copy without an order key is added shard after shard instead (Adding): arrival order is
        no total order, so two racers adding everywhere at once could each find the other
        first."""
        return self.shards == 1 or not add or bool(order_key)


@dataclass(frozen=True)
class Reply:
    """One shard's answer, with what combining it with the others' needs."""

    verdict: Verdict
    key: str  # the named document's order key ("" when it has none)
    matches: int  # agreeing sketch positions with it
    superseded: frozenset[tuple[str, str]]  # new only: (id, docnum) of each later copy found
    added: bool = False  # new only: this document's record was written in this shard

    def rank(self) -> tuple[str, int, str]:
        return (self.key, -self.matches, self.verdict.duplicate_of or "")


class Adding:
    """A first copy without an order key being added shard after shard (sync and async share
    this bookkeeping)."""

    def __init__(self, call: ScriptCall, doc_id: str, found: Fingerprint) -> None:
        self.call = call
        self.doc_id = doc_id
        self.found = found
        self.added: list[int] = []  # shards it was added to
        self.superseded: set[tuple[str, str]] = set()  # (id, docnum), over the shards added to
        self.stopped: Reply | None = None  # the shard that named an earlier copy

    def step(self, shard: int, raw: Any) -> bool:
        """Take one shard's reply; True when adding must stop (another copy came first)."""
        reply = self.call.reply(raw)
        if reply.verdict.kind == NEW:
            self.superseded.update(reply.superseded)
            if reply.added:
                self.added.append(shard)
            return False
        self.stopped = reply
        return True

    def drops(self) -> list[Operation]:
        """The superseded copies' records in every shard; and, stopped at an earlier copy,
        this document's records in the shards it was added to."""
        drops = self.call.gone_elsewhere(self.superseded)
        stopped = self.stopped
        if stopped is not None and stopped.verdict.kind in (EXACT, NEAR):
            drops += self.call.drops(self.doc_id, self.found.docnum, self.added)
        return drops

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
        call = self._call
        checks = call.checks(doc_id, found, add, order_key)
        if call.one_pass(add, order_key):
            raws = self._run(checks)
            if not add:
                return call.best(raws)
            verdict, drops = call.settle(doc_id, found, raws)
        else:
            verdict = call.best(self._run(call.checks(doc_id, found, False, order_key)))
            if verdict.kind != NEW:
                return verdict
            adding = Adding(call, doc_id, found)
            for shard, operation in checks:
                if adding.step(shard, self._run([(shard, operation)])[0]):
                    break  # another worker's copy came first: stop adding
            verdict, drops = adding.verdict(), adding.drops()
        if drops:
            self._run(drops)
        return verdict

    def _run(self, operations: Sequence[Operation]) -> list[Any]:
        """The replies to `operations`, in order: one call per shard (one pipeline)."""
        groups = group_operations(operations)
        answers = self._ask_all(
            [
                (self._call.shard_keys(shard), [*self._call.head, *ops])
                for shard, ops in groups.items()
            ]
        )
        replies = {shard: iter(answer) for shard, answer in zip(groups, answers, strict=True)}
        return replies_in_order(operations, replies)

    def _ask_all(self, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        """The script's answers to `calls`: one call directly, several in one pipeline, loaded
        first where a node had none."""
        if len(calls) == 1:
            keys, args = calls[0]
            return [self._script(keys=keys, args=args)]
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
    """The same index through redis.asyncio: what the crawler's pipeline uses. The checks of
    the articles in flight go together: one script call per shard and batch."""

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
        self._script = register_operations_lua(
            client, "pipelines.dedup", CHECK_AND_ADD, self._call.shard_keys, self._call.head
        )

    async def open(self) -> None:
        """Check (or record) the layout: a misconfigured worker fails before its first item."""
        pipe = self.client.pipeline(transaction=False)
        pipe.set(self.keys.dedup_layout(), self._call.layout, nx=True)
        pipe.get(self.keys.dedup_layout())
        check_layout((await pipe.execute())[1], self._call.layout, self.keys)

    async def check_fingerprint(
        self, doc_id: str, found: Fingerprint, *, add: bool = True, order_key: str = ""
    ) -> Verdict:
        call = self._call
        checks = call.checks(doc_id, found, add, order_key)
        if call.one_pass(add, order_key):
            raws = await self._script(checks)
            if not add:
                return call.best(raws)
            verdict, drops = call.settle(doc_id, found, raws)
        else:
            verdict = call.best(await self._script(call.checks(doc_id, found, False, order_key)))
            if verdict.kind != NEW:
                return verdict
            adding = Adding(call, doc_id, found)
            for shard, operation in checks:
                if adding.step(shard, (await self._script([(shard, operation)]))[0]):
                    break  # another worker's copy came first: stop adding
            verdict, drops = adding.verdict(), adding.drops()
        if drops:
            await self._script(drops)
        return verdict

    async def close(self) -> None:
        await self.client.aclose()


def check_layout(stored: bytes | None, layout: str, keys: RedisKeys) -> None:
    """`stored` is the layout the index has (ours, if this worker was the first)."""
    if stored is None or stored.decode() != layout:
        found = stored.decode() if stored is not None else "nothing"
        raise layout_mismatch(keys.dedup_layout(), found, layout)
