"""Every newsharvest default, one line of why per setting: the one source of defaults.

Profiles (`settings.local`, `settings.distributed`, `settings.fixture`) import this module and
override what differs; components read settings with no default of their own.

Naming: durations end in `_SECONDS` (or `_DAYS`), sizes in `_BYTES` (or `_MB`), a component's
on/off switch is `<COMPONENT>_ENABLED` (a sink whose one required value is an address, like
SINK_POSTGRES_URL or HARVEST_JOURNAL_PATH, is on when that address is set). Every setting `X`
here can be overridden by the environment variable `NEWSHARVEST_X`, typed like its default
(settings/env.py; `scrapy crawl -s X=...` still wins over the environment). Sections follow an
article's path: feeds, fetch, extraction, notices, near-duplicates, monitoring, sinks, journal.
"""

from __future__ import annotations

import importlib.metadata

from settings.env import apply_environment


def _release() -> str:
    """The installed release, so the User-Agent moves with pyproject.toml's version."""
    try:
        return importlib.metadata.version("newsharvest")
    except importlib.metadata.PackageNotFoundError:  # a checkout run without being installed
        return "dev"


# --- Scrapy project ---------------------------------------------------------------------------

BOT_NAME = "newsharvest"  # name used in logs and the default User-Agent
COMMANDS_MODULE = "crawler.commands"  # `scrapy crawl` with exit status 69 when a backend is down
SPIDER_MODULES = ["crawler.spiders"]  # where `scrapy crawl feeds` finds its spider
NEWSPIDER_MODULE = "crawler.spiders"  # where `scrapy genspider` would put a new one
LOG_LEVEL = "INFO"  # DEBUG logs every request
LOG_FORMATTER = "crawler.logformatter.NewsLogFormatter"  # dropped items: URL + reason, not the HTML
STATS_CLASS = "crawler.core.stats.HarvestStatsCollector"  # Scrapy's, without a per-call shim
TELNETCONSOLE_ENABLED = False  # an open telnet port is a liability on a harvester
FEED_EXPORT_ENCODING = "utf-8"  # JSON Lines as UTF-8, not \u-escaped
# Items processed in parallel per response. Scrapy starts this many asyncio tasks for every
# response's output; at its default (100) that bookkeeping was the crawl's top cost in profiles,
# and our responses yield one article each (feeds yield requests, which are cheap).
CONCURRENT_ITEMS = 4

# --- Politeness (on by default; the fixture profile only shortens the delays) -----------------

USER_AGENT = f"newsharvest/{_release()} (+https://github.com/newsharvest/newsharvest)"  # who we are
ROBOTSTXT_OBEY = True  # publishers' robots.txt is law
CONCURRENT_REQUESTS = 32  # total in flight across all publisher domains
CONCURRENT_REQUESTS_PER_DOMAIN = 2  # never hammer one publisher
DOWNLOADER = "crawler.downloader.Downloader"  # Scrapy's, with the per-domain limit always held
DOWNLOAD_DELAY = 0.5  # minimum seconds between requests to one domain
AUTOTHROTTLE_ENABLED = True  # back off when a publisher slows down
AUTOTHROTTLE_START_DELAY = 1.0  # first delay per domain before latency is known
AUTOTHROTTLE_MAX_DELAY = 30.0  # cap on the back-off
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0  # aim for one request in flight per domain
COOKIES_ENABLED = False  # news pages need no session; cookies only grow memory
DOWNLOAD_TIMEOUT = 30  # seconds before a slow server is given up on
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024  # refuse bodies over 16 MiB (bombs, huge dumps)
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024  # log bodies over 4 MiB
RETRY_TIMES = 2  # transient errors get two more attempts
REDIRECT_MAX_TIMES = 5  # a news article needs at most a handful of hops
# With REDIS_URL, the per-domain limit and delay above (and robots.txt crawl-delay, and the delay
# AutoThrottle reaches) hold for all workers together: a request takes a slot of its domain in
# Redis right before it is sent and frees it when the answer arrives (crawler/politeness.py).
POLITENESS_SHARED_ENABLED = True  # off: each worker is polite on its own (N workers, N times)
POLITENESS_LEASE_MARGIN_SECONDS = 10.0  # a dead worker's slot frees after DOWNLOAD_TIMEOUT + this
POLITENESS_DELAY_MARGIN_SECONDS = 0.05  # added to DOWNLOAD_DELAY: requests reach the server late
POLITENESS_POLL_SECONDS = 0.05  # a request that found every slot of its domain taken asks again
POLITENESS_STATE_TTL_SECONDS = 60.0  # a quiet domain's shared delay is forgotten (as in Scrapy)

# --- Network access ---------------------------------------------------------------------------

# Every request goes through this HTTP proxy when set (the local fixture serves all its
# publisher domains behind one port); empty means direct connections.
PROXY_URL = ""
DOWNLOADER_MIDDLEWARES = {
    "crawler.middlewares.StaticProxyMiddleware": 740,  # before Scrapy's HttpProxyMiddleware (750)
}

EXTENSIONS = {
    "crawler.core.domainstats.DomainItemStats": 500,  # per-domain article counts in stats
    "crawler.core.heap.HeapTuning": 100,  # the garbage collector of a long-lived crawl process
}
# Freeze the start-up heap when the spider opens: no collection walks it again (crawler/core/heap).
GC_FREEZE_ENABLED = True
# Young-generation threshold of the garbage collector (Python's default: 700; 0 keeps it).
GC_GEN0_THRESHOLD = 20_000

# --- Feeds spider -----------------------------------------------------------------------------

FEED_MAX_ENTRIES = 1_000  # entries read per feed poll; bounds work on giant feeds
FEED_MAX_BYTES = 8 * 1024 * 1024  # feeds larger than this are refused, not parsed

# --- Harvest filters (docs/harvest-filters.md) -----------------------------------------------

ARTICLE_LANGUAGES: list[str] = []  # ISO 639-1 codes to keep, e.g. ["en", "de"]; [] keeps all
ARTICLE_MAX_AGE_DAYS = 0.0  # skip articles published longer ago than this (days); 0 keeps all

# --- Item pipeline order ----------------------------------------------------------------------

# The stages an article passes, in this order (docs/architecture.md). Extraction first: every
# later stage needs the text. Notices next, because they change the text that near-duplicates
# compare (a copy with another site's notice is still a copy). Monitoring once the content is
# final (NULL or not, duplicate or not), before the sinks, whose batching delays items by
# seconds. The sinks index what is left (several may be on). The journal goes last: nothing after
# it may fail an item it has written. Each stage switches itself off (NotConfigured) per its
# settings below; profiles never reassemble this order.
ITEM_PIPELINES: dict[str, int] = {
    "pipelines.extraction.pipeline.ExtractionPipeline": 100,  # raw HTML -> article or NULL
    "pipelines.filtering.FilterPipeline": 150,  # ARTICLE_LANGUAGES / _MAX_AGE_DAYS on the page
    "pipelines.notices.pipeline.NoticePipeline": 200,  # drop the domain's recurring notices
    "pipelines.dedup.pipeline.DedupPipeline": 300,  # exact + near-duplicates (MinHash LSH)
    "pipelines.monitoring.pipeline.MonitoringPipeline": 350,  # per-domain health, fetch order
    "pipelines.sinks.sqlite.SQLiteSink": 410,  # embedded full-text index
    "pipelines.sinks.postgres.PostgresSink": 420,  # PostgreSQL full-text index
    "pipelines.sinks.redis_stream.RedisStreamSink": 430,  # stream for downstream indexers
    "pipelines.journal.JournalPipeline": 900,  # crash-safe JSON Lines output
}

# --- Extraction -------------------------------------------------------------------------------

EXTRACT_KEEP_HTML = False  # drop the raw HTML from items once extracted (output stays small)
# Which extractor turns pages into articles: "default" (the production chain) or any name in
# extractors.EXTRACTORS, e.g. "boilerpipe-tree" (high precision), "cetr", "boilerpipe+justext".
EXTRACT_EXTRACTOR = "default"
# Worker processes that extract pages off the reactor: -1 = cores - 1 (2 to 4), 0 = in the reactor
# thread (no time budget; for debugging). `newsharvest bench pipeline` measured the choice.
EXTRACT_WORKERS = -1
EXTRACT_TIMEOUT_SECONDS = 10.0  # per-page budget in a worker; over it the page is NULL (timeout)
EXTRACT_WORKER_MAX_TASKS = 0  # recycle a worker after this many pages (0: never; it stays flat)
EXTRACT_WORKER_MEMORY_MB = 2048  # address-space cap per worker: a runaway page fails, alone
# Workers run this much nicer (0-19) than the reactor thread, the serial step every page goes
# through: with the GC_* settings, crawl 224 -> 275, replay 476 -> 504 articles/s (benchmarks.md).
EXTRACT_WORKER_NICENESS = 5
EXTRACT_FUNCTION = (
    "pipelines.extraction.workers.extract_page"  # what a worker runs on a page (module.name)
)

# --- Notice suppression -----------------------------------------------------------------------

NOTICES_ENABLED = True  # learn and remove blocks a domain repeats across its articles
NOTICES_MIN_ARTICLES = 3  # K: a block is a notice once it occurs in this many distinct articles
NOTICES_MIN_SHARE = 0.1  # ... and in at least this share of the domain's recent articles
NOTICES_HALF_LIFE_DAYS = 30.0  # evidence halves in weight over this time, so stale notices fade
NOTICES_MAX_SIGNATURES = 1000  # per domain: signatures kept (~110 KB in Redis); least seen go first
NOTICES_IDLE_TTL_DAYS = 90.0  # a domain's notice state is forgotten after this long unseen
NOTICES_PRIOR_ARTICLES = 20  # cold start: priors act alone until a domain has this many (0: none)
NOTICES_MIN_BODY_CHARS = 250  # fewer paragraph chars left without notices: NULL (only_notices)
NOTICES_STORE_PATH = ""  # embedded store file; empty = STATE_DIR/notices.sqlite3

# --- Near-duplicate detection -----------------------------------------------------------------

DEDUP_ENABLED = True  # False switches the stage off
# Jaccard similarity of word 5-gram sets from which an article is a copy of an earlier one:
# syndicated copies with their own header/footer or a word or two edited mostly score > 0.9,
# different stories (even on one topic, with the same people) score below 0.05. On real text a
# copy with 2% of its words edited scores ~0.83 (flagged 98%), 3% ~0.76 (42%), 5% ~0.64 (0%)
# (`newsharvest bench edits`). Range 0.3-0.98; changing it changes the LSH bands (lower: more
# bands, more memory), so an existing index must then be rebuilt (new REDIS_KEY_PREFIX or
# STATE_DIR).
DEDUP_THRESHOLD = 0.8
DEDUP_TTL_SECONDS = 30 * 24 * 3600  # the time window: an article is remembered for 30 days
# Shards of the Redis index (its bands dealt over them, each with a copy of the records): on a
# Redis Cluster, the number of masters spreads it over all; 1 keeps it in one slot ({nd}).
DEDUP_REDIS_SHARDS = 1
DEDUP_DROP_DUPLICATES = False  # False: copies are kept with duplicate_of set; True: dropped
# The embedded index (no REDIS_URL): empty means STATE_DIR/dedup.sqlite3; ":memory:"
# forgets everything when the crawl ends (the demo).
DEDUP_EMBEDDED_PATH = ""

# --- Index sinks ------------------------------------------------------------------------------

OUTPUT_DIR = "output"  # where output files go (the SQLite index, the demo's JSON Lines)
OUTPUT_MARKDOWN = False  # also give each article as Markdown (the record's `markdown` field)
# JSON Lines stays Scrapy's FEEDS (`-O articles.jsonl`); the sinks below index the same articles.
# Each sink is on when its switch says so; several may run at once (order: SQLite, PostgreSQL,
# Redis Stream). Near-duplicates (`duplicate_of` set) are counted, never indexed.
SINK_SQLITE_ENABLED = False  # the embedded full-text index (the local profile turns it on)
SINK_SQLITE_PATH = ""  # empty: <OUTPUT_DIR>/index.sqlite3
# PostgreSQL full-text sink, on when set (postgresql://user@host:5432/db); schema is created.
SINK_POSTGRES_URL = ""
SINK_POSTGRES_SCHEMA = "newsharvest"  # its tables
SINK_REDIS_STREAM_ENABLED = False  # XADD every article to a stream on REDIS_URL
SINK_REDIS_STREAM_NAME = "articles"  # stream key: <REDIS_KEY_PREFIX>:{sink:articles}
SINK_REDIS_STREAM_MAXLEN = 20_000  # approximate cap on entries (~5-10 KB each); oldest trimmed
SINK_REDIS_STREAM_SEEN_DAYS = 30.0  # how long a re-crawl of an unchanged article adds nothing
SINK_BATCH_SIZE = 200  # articles written per batch
SINK_BATCH_SECONDS = 0.5  # ...or fewer once the oldest waited this long (items wait for commit)
SINK_RETRY_TIMES = 3  # retries of a failed write (backoff doubling) before journalling it
SINK_RETRY_BACKOFF_SECONDS = 0.5  # first retry delay
SINK_RETRY_BACKOFF_MAX_SECONDS = 8.0  # cap on one retry delay
SINK_RECONNECT_SECONDS = 15.0  # while a backend is down: probe it and replay this often
SINK_CONNECT_TIMEOUT_SECONDS = 5.0  # a connection attempt longer than this counts as down
SINK_WRITE_TIMEOUT_SECONDS = 30.0  # a batch write longer than this counts as down
SINK_JOURNAL_DIR = ""  # spill journals for down backends; empty: <STATE_DIR>/journal
SINK_JOURNAL_FSYNC = True  # fsync each spilled batch (an outage is rare; losing it is not ok)
# A sink's backend unreachable at start: "fail" = one clear log line and the crawl stops (exit
# status 69); "journal" = log it and crawl into the spill journal, replayed once it is back.
SINK_START_POLICY = "fail"

# --- Continuous harvesting --------------------------------------------------------------------

HARVEST_CONTINUOUS = False  # stay alive and re-poll every feed (same as `-a continuous=1`)
HARVEST_MIN_INTERVAL_SECONDS = 120.0  # no feed is polled more often than this
HARVEST_MAX_INTERVAL_SECONDS = 3600.0  # every feed is polled at least this often
HARVEST_POLLS_PER_ARTICLE = 2.0  # polls per expected gap between a feed's articles
HARVEST_JITTER = 0.1  # +/- share of each interval, so feeds of one host do not align
HARVEST_TICK_SECONDS = 1.0  # wall clock between checks for due feeds and retries
HARVEST_MAINTENANCE_SECONDS = 60.0  # wall clock between retries/lease recovery/purges
HARVEST_SEEN_TTL_SECONDS = 30 * 86400.0  # a URL no feed has listed for this long is forgotten
HARVEST_MAX_VERSIONS = 5  # an article is fetched at most this often (first + revisions)
HARVEST_MIN_REVISION_SECONDS = 60.0  # an entry's `updated` must move this far to be a new version
# Failed tries of an article (its fetch, or a stage raising on it) before it is given up; a
# stage that failed on the last try puts it in <journal dir>/pipeline.rejected.jsonl.
HARVEST_MAX_ATTEMPTS = 3
HARVEST_RETRY_DELAY_SECONDS = 300.0  # before a failed article fetch is retried
HARVEST_CLAIM_LEASE_SECONDS = 1800.0  # a claim still pending after this is handed out again
HARVEST_FEED_LEASE_SECONDS = 300.0  # a feed poll unanswered after this is handed out again
# Worker liveness (REDIS_URL): each worker refreshes a heartbeat key every HEARTBEAT_SECONDS; what
# a worker without one held (claims, feed polls) is taken over at once by the others. The leases
# above remain the last resort, for a worker alive but stuck.
HEARTBEAT_TTL_SECONDS = 15.0  # a worker silent this long is gone
HEARTBEAT_SECONDS = 3.0  # wall clock between heartbeats (and checks for gone workers)
# Where state lives without Redis: "" = SQLite in STATE_DIR (kept across runs),
# "memory" = nothing kept (every run starts afresh).
HARVEST_STATE = ""
# Crash-safe JSON Lines output: each article is appended and flushed before its URL counts as
# seen (FEEDS / -o buffer their writes, so a killed crawler can lose what they held). "" = off.
HARVEST_JOURNAL_PATH = ""
HARVEST_JOURNAL_FSYNC = False  # also fsync each write (survives power loss, not just SIGKILL)
DUPEFILTER_TTL_SECONDS = 7 * 86400.0  # distributed profile: its shared dupefilter remembers
# Distributed profile, fair split: a worker pops from the shared queue only while fewer than this
# many of its requests wait (in its downloader's per-domain queues or before its item pipeline).
SCHEDULER_PREFETCH = 4
SCHEDULER_IDLE_POLL_SECONDS = 0.25  # an idle worker looks at the shared queue this often
# Simulated time for tests and benchmarks: now = START + (time.time() - ANCHOR) * SCALE.
HARVEST_CLOCK_SCALE = 1.0  # 1.0 with no START = the system clock
HARVEST_CLOCK_START = ""  # ISO 8601 instant (or epoch seconds) at ANCHOR
HARVEST_CLOCK_ANCHOR = ""  # epoch seconds (wall clock); "" = when the crawler starts

# --- Web archives (WARC) ---------------------------------------------------------------------

# Capture (crawler/warc/capture.py, docs/archives.md): every fetched response as WARC/1.1
# request/response records, one gzip member each, in rotating files. Off by default: archives
# take disk (~6 KB per fetched page, compressed); docker-compose.yml turns it on.
WARC_CAPTURE_ENABLED = False
# After HttpCompressionMiddleware (590) in process_response order: it sees bodies as sent.
DOWNLOADER_MIDDLEWARES["crawler.warc.capture.WarcCaptureMiddleware"] = 595
WARC_DIR = ""  # where archives go; empty: <OUTPUT_DIR>/warc
WARC_PREFIX = "newsharvest"  # file names: <prefix>-<UTC time>-<serial>-<host>-<pid>.warc.gz
WARC_ROTATE_BYTES = 1024**3  # a file is closed and a new one begun past 1 GB
WARC_QUEUE_RECORDS = 256  # groups waiting for the writer thread; more waits off the reactor
# Replay (`newsharvest replay`, crawler/spiders/replay.py): archived pages through the pipeline.
REPLAY_READER = "fastwarc"  # "fastwarc" (C++, measured fastest) or "warcio" (pure Python)
# Pages in the pipeline at once: bounds memory; 2 x SINK_BATCH_SIZE, so a sink's batch fills while
# the previous one commits instead of waiting SINK_BATCH_SECONDS for pages that cannot come.
REPLAY_MAX_IN_FLIGHT = 400
REPLAY_CHECKPOINT_SECONDS = 2.0  # how often per-file resume offsets are saved
REPLAY_PROGRESS_SECONDS = 5.0  # how often a progress line goes to stderr
REPLAY_REMOTE_RETRIES = 5  # times in a row a remote WARC whose connection failed is opened again
REPLAY_REMOTE_RETRY_SECONDS = 1.0  # ... after this long, doubled each time (1+2+4+8+16 s)
REPLAY_VERIFY_DIGESTS = True  # skip a record whose block does not match its WARC-Block-Digest

# --- Shared state (Redis) ---------------------------------------------------------------------

# Redis for shared state; empty means embedded stores. Every key starts with REDIS_KEY_PREFIX.
REDIS_URL = ""
REDIS_KEY_PREFIX = "nh"
# REDIS_URL names a Redis Cluster (any one node of it); as a redis+cluster:// URL would.
REDIS_CLUSTER = False
# This worker's name in claims, leases, heartbeats and the dashboard; empty means host:pid.
# Set it per worker so that a restarted worker takes back at once what its last life held.
WORKER_ID = ""
# Embedded stores (used when REDIS_URL is empty) keep their files here, across runs.
STATE_DIR = ".newsharvest"

# --- Monitoring -------------------------------------------------------------------------------

# Per-domain counters, timings and alerts: in Redis when REDIS_URL is set (shared by workers),
# else in memory with a snapshot in STATE_DIR/monitor.json for `newsharvest monitor`.
EXTENSIONS["pipelines.monitoring.extension.MonitoringExtension"] = 510  # after DomainItemStats
MONITOR_ENABLED = True  # costs well under 5% of throughput (`newsharvest bench monitoring`)
MONITOR_FLUSH_SECONDS = 1.0  # batch events this long, then one store round trip
MONITOR_ORDER_MAX_WAIT_SECONDS = 60.0  # page rules wait this long at most for an earlier page
MONITOR_EVALUATE_SECONDS = 60.0  # how often the time rules (errors, yield, stale) run
MONITOR_EVALUATE_BATCH = 1_000  # domains the time rules read per round (bounds each round)
MONITOR_SNAPSHOT_SECONDS = 5.0  # local crawls: how often monitor.json is rewritten
MONITOR_BUCKET_SECONDS = 300.0  # time-series resolution of charts and time rules
MONITOR_RETENTION_SECONDS = 48 * 3600.0  # series kept this long (yield baseline = this window)
MONITOR_COUNTERS_TTL_SECONDS = 30 * 86400.0  # a domain silent this long is forgotten in Redis
# Prometheus /metrics endpoint: off by default, because a one-off `scrapy crawl` should not
# open a listening socket nor fight another crawl for a fixed port (docker-compose.yml turns it
# on where Prometheus scrapes the workers).
MONITOR_PROMETHEUS_ENABLED = False
MONITOR_PROMETHEUS_PORT = 9410  # 0 = any free port (logged, and in the stats)
MONITOR_PROMETHEUS_ADDRESS = "127.0.0.1"  # loopback unless a scraper elsewhere needs it
MONITOR_TIMING_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
MONITOR_TIMING_BUCKETS = {  # histogram buckets per timing (few: one series per domain each)
    "fetch": [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    "extraction": [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
}
# Alert thresholds. Page rules compare a domain's last WINDOW pages with the pages before them.
MONITOR_ALERT_WINDOW_PAGES = 20  # a redesign is caught within about this many pages
MONITOR_ALERT_MIN_BASELINE_PAGES = 20  # a domain's own past needed before judging it
MONITOR_ALERT_RATE_JUMP = 0.3  # NULL/thin share must rise by 30 points over the baseline...
MONITOR_ALERT_P_VALUE = 1e-5  # ...and be that unlikely by chance (Fisher exact, one-sided)
MONITOR_ALERT_THIN_RATIO = 0.3  # an article under 30% of the domain's median length is thin
MONITOR_ALERT_ERROR_WINDOW_SECONDS = 900.0  # errors rule looks at the last 15 minutes
MONITOR_ALERT_ERROR_RATE = 0.2  # ...and fires when 20% of the domain's requests failed
MONITOR_ALERT_ERROR_MIN = 5  # ...and at least this many did (one 404 is not an outage)
MONITOR_ALERT_YIELD_WINDOW_SECONDS = 3 * 3600.0  # yield rule: articles per poll, last 3 h...
MONITOR_ALERT_YIELD_DROP_RATIO = 0.25  # ...under a quarter of the baseline's...
MONITOR_ALERT_YIELD_MIN_EXPECTED = 10.0  # ...when the baseline expects at least 10 articles
MONITOR_ALERT_STALE_FACTOR = 4.0  # feed stale: silent for 4x its usual publishing interval...
MONITOR_ALERT_STALE_MIN_SECONDS = 6 * 3600.0  # ...and at least 6 hours...
MONITOR_ALERT_STALE_MIN_POLLS = 3  # ...while we polled it at least 3 times
MONITOR_ALERT_STALE_MIN_ARTICLES = 5  # publishing cadence needs a few articles to know
# `newsharvest monitor`: where the dashboard listens.
MONITOR_DASHBOARD_ADDRESS = "127.0.0.1"
MONITOR_DASHBOARD_PORT = 8787

# --- Hostile input and faults -----------------------------------------------------------------

# Only http(s) to public addresses (SSRF protection, crawler/safety.py): links and redirects to
# loopback, private, link-local or reserved addresses, localhost, special-use names (.test,
# .internal, ...) and single-label hosts are refused before anything is sent, and DNS answers
# that point at such addresses are refused where the connection is made.
NETWORK_PUBLIC_ONLY = True  # False switches the address checks off (schemes are still checked)
# Exceptions: names and ".suffix" domains lift the name rules, IPs and CIDR networks lift the
# address rules, e.g. ["wiki", "10.20.0.0/16"] for http://wiki/ on 10.20.x.x. The
# PROXY_URL is trusted as the connection endpoint, never as a link target.
NETWORK_ALLOWLIST: list[str] = []
DOWNLOADER_MIDDLEWARES["crawler.safety.NetworkPolicyMiddleware"] = 50  # before robots.txt (100)
# Only PROXY_URL is a proxy: Scrapy's proxy middleware would also use the environment's
# http_proxy/https_proxy, a proxy that resolves names where the policy above sees no answer.
DOWNLOADER_MIDDLEWARES["scrapy.downloadermiddlewares.httpproxy.HttpProxyMiddleware"] = None
DOWNLOADER_MIDDLEWARES["crawler.safety.ConfiguredProxyMiddleware"] = 750  # Scrapy's, minus env
TWISTED_DNS_RESOLVER = "crawler.safety.PublicAddressResolver"  # refuses non-public DNS answers
# No download handler but http(s): a file:, ftp:, s3: or data: URL can never be fetched.
DOWNLOAD_HANDLERS = {"file": None, "ftp": None, "s3": None, "data": None}
# Backends (crawler/core/outage.py). Unreachable at start: one log line, exit status 69. Redis
# unreachable mid-crawl: the crawl pauses (stages wait, done marks go to a local outbox) and
# resumes when a probe gets an answer; PostgreSQL: its sink journals and replays (SINK_*).
REDIS_RETRY_SECONDS = 0.5  # first probe of a Redis that stopped answering...
REDIS_RETRY_MAX_SECONDS = 10.0  # ...then probes back off, doubling, to at most this interval
REDIS_OUTAGE_LOG_SECONDS = 60.0  # how often "still unreachable" is logged during an outage
REDIS_OUTAGE_MAX_SECONDS = 0.0  # give up and close the crawl after this long; 0 = wait for it

# --- Environment ------------------------------------------------------------------------------

apply_environment(globals())  # NEWSHARVEST_<SETTING> overrides (settings/env.py)
