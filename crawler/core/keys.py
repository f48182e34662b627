"""Every Redis key newsharvest uses, in one registry, under one configurable prefix."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

DEDUP_TAG = "nd"  # the near-duplicate index's hash tag (of its first shard)
# The stored layout's shard part (an index in one shard has none): the count, and the rule that
# deals buckets to shards. Bands were once dealt by their index ("band i to shard i mod S", no
# suffix), which a bucket id cannot recover; such an index is refused, not misread.
DEDUP_SHARDS_LAYOUT = "/shards={shards}/by=bucket-id"
# A key of the index, after the prefix: its shard's tag, then d:<docnum> or b:<bucket id>.
_DEDUP_KEY = re.compile(r"\{(nd\d*)\}:([db]):(.+)", re.DOTALL)
# A key's family for `RedisKeys.family`, by the part after the prefix (the rest: "other").
DEDUP_RECORDS, DEDUP_BUCKETS, DEDUP_LAYOUT, SCHEDULER = (
    "dedup records", "dedup buckets", "dedup layout", "scheduler",
)  # fmt: skip
_FAMILIES = {"{harvest}": "harvest", "notices": "notices", "polite": "politeness", "mon": "monitor"}


@lru_cache(maxsize=64)
def dedup_shard_tags(shards: int) -> tuple[str, ...]:
    """The hash tags of an index in `shards` shards: {nd} alone for one (the layout before
    shards); else "nd<n>" tags whose hash slots fall one in each of `shards` equal ranges of
    the slot space, so that a cluster whose masters hold equal contiguous ranges (what
    `redis-cli --cluster create` makes) gets its shards spread evenly over them."""
    if shards < 1:
        raise ValueError(f"an index has at least one shard, not {shards}")
    if shards == 1:
        return (DEDUP_TAG,)
    tags = []
    for shard in range(shards):
        low = shard * REDIS_CLUSTER_HASH_SLOTS // shards
        high = (shard + 1) * REDIS_CLUSTER_HASH_SLOTS // shards
        n = 0
        while not low <= key_slot(f"{DEDUP_TAG}{n}".encode()) < high:
            n += 1
        tags.append(f"{DEDUP_TAG}{n}")
    return tuple(tags)


def dedup_bucket_shard(bucket_id: str, shards: int) -> int:
    """The shard (an index into dedup_shard_tags) of an LSH bucket: its id is a hash already
    (hex, pipelines/fingerprints.py bucket_ids), so the id modulo the shard count spreads the
    buckets evenly, and a bucket's key alone says its shard (what re-sharding needs)."""
    return int(bucket_id, 16) % shards if shards > 1 else 0


def dedup_layout_with_shards(layout: str, shards: int) -> str:
    """The stored layout of an index of fingerprint `layout` in `shards` shards."""
    return layout + (DEDUP_SHARDS_LAYOUT.format(shards=shards) if shards > 1 else "")


def dedup_layout_shards(stored: str) -> tuple[str, int]:
    """The fingerprint layout and shard count of a stored layout (dedup_layout_with_shards);
    a layout of shards dealt by another rule is returned whole, with its count unknown (0)."""
    head, marker, tail = stored.partition("/shards=")
    if not marker:
        return stored, 1
    count = tail.split("/", 1)[0]
    if count.isdigit() and stored == dedup_layout_with_shards(head, int(count)):
        return head, int(count)
    return stored, 0


class RedisKeys:
    """Every Redis key newsharvest uses, under one configurable prefix (REDIS_KEY_PREFIX).

    Keys of one domain share a hash tag ({domain}) so a Redis Cluster keeps them in one slot.
    With `cluster` (REDIS_URL names a Redis Cluster), the keys a script moves claims between
    share a tag that they do not share on one server (scheduler_queue): one server keeps the
    names it always had, a cluster (new in this layout) gets names every script can run with.
    """

    def __init__(self, prefix: str, cluster: bool = False) -> None:
        self.prefix = prefix.rstrip(":")
        self.cluster = cluster

    @classmethod
    def from_settings(cls, settings: Any) -> RedisKeys:
        from crawler.core.connection import is_cluster_url, redis_url

        url = redis_url(settings)
        return cls(settings.get("REDIS_KEY_PREFIX"), cluster=bool(url and is_cluster_url(url)))

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    # --- reading key names back (`newsharvest redis-move`, crawler/core/redis_move.py) -------

    def pattern(self, start: str = "") -> str:
        """A SCAN pattern for the keys that begin with `start` (a key name of this registry,
        e.g. harvest_alive_prefix()), by default every key under the prefix; glob characters
        escaped."""
        literal = start or self.prefix + ":"
        return re.sub(r"([\\*?\[\]])", r"\\\1", literal) + "*"

    def _rest(self, key: str) -> str | None:
        head = self.prefix + ":"
        return key[len(head) :] if key.startswith(head) else None

    def dedup_parts(self, key: str) -> tuple[str, str, str] | None:
        """(DEDUP_RECORDS or DEDUP_BUCKETS, shard tag, docnum or bucket id) of an index key."""
        match = _DEDUP_KEY.fullmatch(self._rest(key) or "")
        if match is None:
            return None
        tag, kind, name = match.groups()
        return (DEDUP_RECORDS if kind == "d" else DEDUP_BUCKETS), tag, name

    def scheduler_parts(self, key: str) -> tuple[str, str | None] | None:
        """(spider, worker or None) of a request queue (None) or pop note in this layout."""
        rest = self._rest(key)
        if rest is None or key.startswith(
            (self.harvest_held_prefix(), self.harvest_alive_prefix())
        ):
            return None
        if self.cluster:
            if not rest.startswith("{harvest}:"):
                return None
            spider, _, tail = rest.removeprefix("{harvest}:").partition(":")
        else:
            match = re.fullmatch(r"\{([^{}]+)\}:(.+)", rest, re.DOTALL)
            if match is None or match.group(1) == "harvest":
                return None
            spider, tail = match.groups()
        if tail == "requests":
            return spider, None
        kind, _, worker = tail.partition(":")
        return (spider, worker) if kind == "popped" and worker else None

    def renamed(self, key: str, target: RedisKeys) -> str:
        """The name a key of this layout has in `target`'s: the request queue and pop notes
        differ between one server and a cluster (scheduler_queue); the rest only by prefix.
        The index's keys move by shard (dedup_parts), not by this."""
        parts = self.scheduler_parts(key)
        if parts is None:
            return target.key(key[len(self.prefix) + 1 :])
        spider, worker = parts
        return (
            target.scheduler_queue(spider)
            if worker is None
            else target.scheduler_popped(spider, worker)
        )

    def family(self, key: str) -> str:
        """What a key belongs to, for counts: the index's records, buckets and layout, the
        scheduler, the ledger (harvest), notices, politeness, monitoring, sinks, or other."""
        if key == self.dedup_layout():
            return DEDUP_LAYOUT
        dedup = self.dedup_parts(key)
        if dedup is not None:
            return dedup[0]
        if self.scheduler_parts(key) is not None:
            return SCHEDULER
        head = (self._rest(key) or "").split(":", 1)[0]
        if head in _FAMILIES:
            return _FAMILIES[head]
        if head.startswith("{sink"):
            return "sink"
        if head.startswith("{") and key.endswith(":dupefilter"):
            return SCHEDULER
        return "other"

    # --- notice suppression -------------------------------------------------------------

    def notice_signatures(self, domain: str) -> str:
        """ZSET: block signatures and article identities -> decayed distinct-article score."""
        return self.key("notices", f"{{{domain}}}", "signatures")

    def notice_meta(self, domain: str) -> str:
        """HASH: the domain's decay time base (t0) and decayed article total (articles)."""
        return self.key("notices", f"{{{domain}}}", "meta")

    # --- near-duplicate detection -------------------------------------------------------
    # One hash tag per shard of the index (DEDUP_REDIS_SHARDS; one shard: {nd}, the layout
    # before shards): its script reads the records its buckets point to, so a shard keeps its
    # own copy of each record, beside its bands' buckets (pipelines/dedup/redis_index.py).
    # Names stay short: at ~10 keys per indexed article, every byte of a key name costs ~10
    # bytes of memory per article.

    def dedup_record(self, docnum: int | str, shard: str = DEDUP_TAG) -> str:
        """An indexed article: its sketch and id (docnum comes from the content hash)."""
        return f"{self.dedup_record_prefix(shard)}{docnum}"

    def dedup_record_prefix(self, shard: str = DEDUP_TAG) -> str:
        return self.key(f"{{{shard}}}", "d", "")

    def dedup_bucket(self, bucket_id: str, shard: str = DEDUP_TAG) -> str:
        """One LSH band value: the docnums of the articles that have it."""
        return self.key(f"{{{shard}}}", "b", bucket_id)

    def dedup_bucket_prefix(self, shard: str = DEDUP_TAG) -> str:
        return self.dedup_bucket("", shard)

    def dedup_layout(self) -> str:
        """The fingerprint layout the index was built with (checked by every worker)."""
        return self.key("{nd}", "layout")

    # --- continuous harvesting ----------------------------------------------------------
    # One hash tag for the whole ledger: its Lua scripts touch several of these keys at once.

    def harvest_articles(self) -> str:
        """Hash: canonical article URL -> JSON ledger record (version, updated, status)."""
        return self.key("{harvest}", "articles")

    def harvest_expiry(self) -> str:
        """Sorted set: article URL scored by when it is forgotten (seen-URL TTL)."""
        return self.key("{harvest}", "articles", "expiry")

    def harvest_pending(self) -> str:
        """Sorted set: pending article URL scored by when it is handed out again."""
        return self.key("{harvest}", "pending")

    def harvest_feeds(self) -> str:
        """Hash: feed URL -> JSON FeedState (validators, hashes, interval, recent events)."""
        return self.key("{harvest}", "feeds")

    def harvest_due(self) -> str:
        """Sorted set: feed URL scored by its next poll time."""
        return self.key("{harvest}", "feeds", "due")

    def harvest_owners(self) -> str:
        """Set: the workers (owner ids, crawler/core/worker.py) that hold claims or feed leases."""
        return self.key("{harvest}", "owners")

    def harvest_held(self, owner: str) -> str:
        """Set: what one worker holds, "a|<article URL>" (a claim) or "f|<feed URL>" (a poll)."""
        return f"{self.harvest_held_prefix()}{owner}"

    def harvest_held_prefix(self) -> str:
        return self.key("{harvest}", "held", "")

    def harvest_alive(self, owner: str) -> str:
        """String with a short TTL (HEARTBEAT_TTL_SECONDS): the worker is alive while it exists."""
        return f"{self.harvest_alive_prefix()}{owner}"

    def harvest_alive_prefix(self) -> str:
        return self.key("{harvest}", "alive", "")

    def harvest_journal(self, owner: str) -> str:
        """String: where the owner's journal is, "<host>\n<path>" (crawler/core/journal_files.py),
        read by a worker taking the owner's claims over; deleted when the owner is gone."""
        return self.key("{harvest}", "journal", owner)

    def harvest_feed_owners(self) -> str:
        """Hash: feed URL -> the worker whose poll of it is under way (its lease)."""
        return self.key("{harvest}", "feeds", "owners")

    def harvest_count_outbox(self) -> str:
        """Hash (Redis Cluster): "<hash key>\n<field>" -> counts of done marks not yet sent to
        their hashes, which live in other hash slots (crawler/ledger.py, _send_counts)."""
        return self.key("{harvest}", "counts", "outbox")

    def harvest_count_sending(self) -> str:
        """Hash: the batch of counts being sent (its id in field "")."""
        return self.key("{harvest}", "counts", "sending")

    def harvest_count_sequence(self) -> str:
        """Integer: the last batch id of counts."""
        return self.key("{harvest}", "counts", "sequence")

    @staticmethod
    def count_applied(hash_key: str) -> str:
        """String: the last batch of counts applied to `hash_key` (same hash tag: same slot)."""
        return f"{hash_key}:applied"

    def replay_offsets(self) -> str:
        """Hash: WARC source (path or URL) -> JSON resume point of `newsharvest replay`."""
        return self.key("{harvest}", "replay", "offsets")

    # The pop script (crawler/scheduler_pop.lua) takes the claim a request carries over in the
    # ledger: on a cluster the queue and its pop notes share the ledger's tag.

    def scheduler_queue(self, spider: str) -> str:
        """scrapy-redis request queue shared by the workers of a distributed crawl."""
        return self.key(*self._scheduler_tag(spider), "requests")

    def scheduler_popped(self, spider: str, worker: str) -> str:
        """String: a worker's last pop ("<token>|<request>"), read back after a lost reply."""
        return self.key(*self._scheduler_tag(spider), "popped", worker)

    def _scheduler_tag(self, spider: str) -> tuple[str, ...]:
        return ("{harvest}", spider) if self.cluster else (f"{{{spider}}}",)

    def scheduler_dupefilter(self, spider: str) -> str:
        """Sorted set: request fingerprint scored by expiry (the TTL-bounded dupefilter)."""
        return self.key(f"{{{spider}}}", "dupefilter")

    # --- politeness across workers ------------------------------------------------------
    # One hash tag per domain: the acquire script reads and writes both keys at once.

    def politeness_slots(self, domain: str) -> str:
        """Sorted set: the requests to a domain in flight now (lease token -> lease end, µs)."""
        return self.key("polite", f"{{{domain}}}", "slots")

    def politeness_state(self, domain: str) -> str:
        """Hash: a domain's earliest next request start (next, µs) and shared delay (delay, µs)."""
        return self.key("polite", f"{{{domain}}}", "state")

    # --- index sinks --------------------------------------------------------------------

    def sink_stream(self, name: str = "articles") -> str:
        """The stream the Redis Stream sink XADDs articles to."""
        return self.key(f"{{sink:{name}}}")

    def sink_stream_seen(self, name: str, url_digest: str) -> str:
        """fetched_at|version last added for one article: a re-crawl of it adds nothing.
        Shares the stream's hash tag, so one script may touch both in a Redis Cluster."""
        return self.key(f"{{sink:{name}}}", "seen", url_digest)

    # --- monitoring ---------------------------------------------------------------------
    # Per-domain keys expire when a domain goes quiet (MONITOR_RETENTION_SECONDS for series,
    # MONITOR_COUNTERS_TTL_SECONDS for totals); the shared ones are bounded by trimming.

    def monitor_meta(self) -> str:
        """Hash: how the crawlers bucket time (bucket_seconds, retention_seconds, ...)."""
        return self.key("mon", "meta")

    def monitor_domains(self) -> str:
        """Sorted set: every monitored domain, scored by when it was last active."""
        return self.key("mon", "domains")

    def monitor_counters(self, domain: str) -> str:
        """Hash: a domain's total counters and timings (field = counter name)."""
        return self.key("mon", f"{{{domain}}}", "counters")

    def monitor_series(self, domain: str) -> str:
        """Hash: a domain's counters per time bucket (field = "<bucket>:<counter>")."""
        return self.key("mon", f"{{{domain}}}", "series")

    def monitor_pages(self, domain: str) -> str:
        """List: a domain's recent page outcomes, oldest first ("n" NULL, "a<chars>")."""
        return self.key("mon", f"{{{domain}}}", "pages")

    def monitor_alerts(self) -> str:
        """Hash: active alerts, "<domain>|<kind>" -> alert JSON."""
        return self.key("mon", "alerts")

    def monitor_alert_log(self) -> str:
        """List: the latest alert events (fired and resolved), oldest first."""
        return self.key("mon", "alert-log")

    def monitor_workers(self) -> str:
        """Hash: crawler worker id -> JSON heartbeat (last flush, metrics URL)."""
        return self.key("mon", "workers")

    def monitor_evaluation_lock(self) -> str:
        """String with a TTL: the worker that runs the time-based alert rules this round."""
        return self.key("mon", "evaluation-lock")
