"""Replay: WARC sources -> the pages a fetch would have handed to the pipeline.

* `expand_sources`: paths, globs, http(s) URLs, and listing files (`*.paths`, `*.paths.gz`,
  `*.txt`: one path or URL a line, like Common Crawl's `warc.paths.gz`, whose `crawl-data/...`
  lines are relative to data.commoncrawl.org);
* `open_source`: a local file, or a remote one streamed (HTTP Range from a resume offset; the
  file is read as it arrives, never downloaded whole);
* `RecordFeeder`: reads the sources in a thread (file and network reads never block the
  reactor) and hands batches of `Page`s or skip reasons through a bounded queue;
* `ReplayOffsets`: per source, the offset a restarted replay seeks to, in the harvest state
  (Redis hash, or SQLite in STATE_DIR).

A `Page` is a `response` record that carries an HTML page: its body decoded from any
Content-Encoding (our captures keep the body as sent), and the article identity the feeds spider
had when our own capture wrote a metadata record beside it.
"""

from __future__ import annotations

import gzip
import json
import logging
import math
import queue
import re
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from glob import glob
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from w3lib.url import safe_url_string

from crawler.core.connection import async_redis, redis_url
from crawler.core.keys import RedisKeys
from crawler.core.paths import state_dir
from crawler.core.sqlite import open_sqlite
from crawler.core.urls import canonical_article_url
from crawler.warc.capture import METADATA_TYPE
from crawler.warc.records import (
    ArchivedRecord,
    BrokenArchive,
    digest_matches,
    iter_records,
    parse_http_response,
)
from crawler.warc.remote import RemoteStream

log = logging.getLogger(__name__)

COMMON_CRAWL = "https://data.commoncrawl.org/"
LISTING_SUFFIXES = (".paths", ".paths.gz", ".txt")
HTML_TYPES = ("text/html", "application/xhtml+xml")
SNIFF_BYTES = 512  # a page without a Content-Type is HTML if it starts like it
MAX_CONTENT_CODINGS = 8  # servers apply one or two ("gzip", "br"); a long list is hostile
TOO_MANY_REQUESTS = 429  # a throttled remote source: worth opening again later
SQLITE_FILE = "replay.sqlite3"
BUSY_TIMEOUT_SECONDS = 5.0
_END = object()
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")  # a chunked body's size line, extensions cut off

# Skip reasons (stats `replay/skipped/<reason>`).
REVISIT, NON_HTML, TRUNCATED, NOT_HTTP, STATUS, TOO_LARGE, UNDECODABLE, BROKEN, BAD_URI = (
    "revisit", "non_html", "truncated", "not_http", "status", "too_large", "undecodable",
    "broken", "bad_uri",
)  # fmt: skip
DIGEST_MISMATCH = "digest_mismatch"  # the block is not what its WARC-Block-Digest says
SKIP_REASONS = frozenset(  # and f"{STATUS}_<code>"
    (REVISIT, NON_HTML, TRUNCATED, NOT_HTTP, TOO_LARGE, UNDECODABLE, BROKEN, BAD_URI,
     DIGEST_MISMATCH)
)  # fmt: skip
# What ends a file as broken (the readers' and zlib's errors); anything else is a bug.
READ_ERRORS = (BrokenArchive, OSError, EOFError, zlib.error)
# A damaged stretch of a file (local, or remote from a server that answers ranges) is skipped:
# reading goes on at the next whole record. In a gzip-per-record file, that is the next gzip
# member (RFC 1952: ID1 ID2, CM = deflate) that inflates to the start of a WARC record; in an
# uncompressed file, the next line that opens a WARC/1.x record header with the fields every
# record has (ISO 28500).
GZIP_MAGIC = b"\x1f\x8b"
GZIP_MEMBER_START = GZIP_MAGIC + b"\x08"
PLAIN_RECORD_START = b"WARC/1."
PLAIN_VERSION_LINES = (b"WARC/1.0\r\n", b"WARC/1.1\r\n")
PLAIN_RECORD_FIELDS = (b"warc-type", b"warc-record-id", b"warc-date", b"content-length")
RESYNC_SCAN_BYTES = 1 << 20  # looked through at a time for the next record
RESYNC_PROBE_BYTES = 64 * 1024  # at most this much of a candidate is read (or inflated) to judge it
RESYNC_PROBE_STEP_BYTES = 1024  # a gzip candidate is inflated this much at a time
# Bytes probed in one search at most: a stretch crafted to be all near-records costs that
# much, then the file ends there (a real damaged stretch has a handful of candidates).
RESYNC_MAX_PROBED_BYTES = 8 << 20
# Bytes looked through in one search at most: a real damaged stretch is a record or a few (a
# disk's bad blocks, a writer's torn record); a remote file that streams garbage without end
# must not be read for ever.
RESYNC_MAX_SCANNED_BYTES = 256 << 20
WARC_START = b"WARC/"
# A WARC gzipped whole is told from one gzip member per record by inflating the first member:
# more than its first record's header (within the first 64 KiB) and declared length is a
# whole file. At most 1 MiB is inflated, so a first record that lies costs nothing.
WHOLE_GZIP_HEAD_BYTES = 64 * 1024
WHOLE_GZIP_PROBE_BYTES = 1 << 20
WHOLE_GZIP_SLACK_BYTES = 16  # blank lines a writer may leave between records
WHOLE_GZIP_READ_BYTES = 64 * 1024
# A page address longer than this is no page's (servers refuse request lines of 8 KiB).
MAX_URI_CHARS = 8192
# A host name (IDNs arrive as punycode) or an IP address, as urlsplit gives it: lower case.
_HOST = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|[0-9a-f:.]+")
# Our capture's metadata record about a page, field by field: the type capture writes
# (crawler/warc/capture.py `article_metadata`; the entry is `FeedEntry.to_meta()`).
_ENTRY_TEXT_FIELDS = ("link", "title", "guid", "published", "updated", "summary")


def expand_sources(arguments: list[str]) -> list[str]:
    """Every WARC path or URL the arguments name, in order, once."""
    sources: list[str] = []
    for argument in arguments:
        if argument.startswith(("http://", "https://")):
            sources.append(argument)
        elif argument.endswith(LISTING_SUFFIXES) and Path(argument).is_file():
            sources += _listing(Path(argument))
        elif any(char in argument for char in "*?["):
            matched = sorted(glob(argument))
            if not matched:
                raise ValueError(f"no file matches {argument!r}")
            sources += [str(Path(path).resolve()) for path in matched]
        elif Path(argument).is_file():
            sources.append(str(Path(argument).resolve()))
        elif Path(argument).is_dir():
            raise ValueError(f"{argument!r} is a directory: name its files, e.g. "
                             f"'{Path(argument) / '*.warc.gz'}'")  # fmt: skip
        else:
            raise ValueError(f"no such WARC file: {argument!r}")
    return list(dict.fromkeys(sources))


def _listing(path: Path) -> list[str]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    resolved = []
    for line in lines:
        if line.startswith("crawl-data/"):
            resolved.append(COMMON_CRAWL + line)
        elif line.startswith(("http://", "https://")) or Path(line).is_absolute():
            resolved.append(line)
        else:
            resolved.append(str((path.parent / line).resolve()))
    return resolved


def is_remote(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _worth_retrying(error: Exception) -> bool:
    """A remote source's failure to open that may pass: not an HTTP answer that will not."""
    status = getattr(error, "code", None)
    return not (isinstance(status, int) and 400 <= status < 500 and status != TOO_MANY_REQUESTS)


def source_size(source: str) -> int | None:
    if is_remote(source):
        return None  # known once the stream is open (Content-Length)
    try:
        return Path(source).stat().st_size
    except OSError:
        return None


class InflatedStream:
    """A WARC gzipped whole (`gzip file.warc`: one gzip stream, not a member per record), read
    as the uncompressed file it holds: record offsets are positions in that file, since no
    reader can seek inside one deflate stream; a resume inflates again up to its offset. A
    damaged stretch ends it (nothing after broken deflate data can be read)."""

    def __init__(self, handle: IO[bytes], start: int) -> None:
        handle.seek(0)
        self.handle = handle
        self.inflated = gzip.GzipFile(fileobj=handle, mode="rb")
        self.inflated.seek(start)  # forward: inflates and drops `start` bytes

    def read(self, size: int = -1) -> bytes:
        return self.inflated.read(size)

    def tell(self) -> int:
        return self.inflated.tell()

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.inflated.close()
        self.handle.close()


def gzipped_whole(handle: IO[bytes]) -> bool:
    """Whether a file's first gzip member holds more than its first record (a WARC gzipped
    whole). Inflates at most WHOLE_GZIP_PROBE_BYTES of that member and keeps only the first
    record's header: a first record larger than that is taken for a member of its own (read as
    it is; should it share its member, the reading says so: SharedMember)."""
    handle.seek(0)
    inflater = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer
    head, inflated, pending = b"", 0, b""
    while not inflater.eof and inflated <= WHOLE_GZIP_PROBE_BYTES:
        pending = pending or handle.read(WHOLE_GZIP_READ_BYTES)
        if not pending:
            break
        try:
            out = inflater.decompress(pending, WHOLE_GZIP_PROBE_BYTES + 1 - inflated)
        except zlib.error:
            return False  # not gzip, or damaged at its start: read as it is
        pending = inflater.unconsumed_tail
        head += out[: max(WHOLE_GZIP_HEAD_BYTES - len(head), 0)]
        inflated += len(out)
    record_size = _record_size(head)
    if record_size is None or record_size + WHOLE_GZIP_SLACK_BYTES >= WHOLE_GZIP_PROBE_BYTES:
        return False
    return inflated > record_size + WHOLE_GZIP_SLACK_BYTES


def _record_size(inflated: bytes) -> int | None:
    """A WARC record's length (header, block, the blank line after it), from its header."""
    head, blank, _ = inflated.partition(b"\r\n\r\n")
    if not blank or not head.startswith(WARC_START):
        return None
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            return len(head) + len(blank) + int(value) + len(blank)
    return None


def open_source(source: str, offset: int, user_agent: str) -> tuple[IO[bytes], int | None]:
    """The source positioned at `offset`, and its total size when known (in the offsets'
    terms: a WARC gzipped whole is read inflated, its size unknown)."""
    if not is_remote(source):
        handle = open(source, "rb")  # noqa: SIM115  (closed by the feeder)
        if gzipped_whole(handle):
            return InflatedStream(handle, offset), None  # type: ignore[return-value]
        handle.seek(offset)
        return handle, source_size(source)
    stream = RemoteStream(source, user_agent, offset)
    return stream, stream.size  # type: ignore[return-value]


# --- records -> pages -------------------------------------------------------------------------


@dataclass
class Page:
    source: str
    offset: int
    record_id: str
    url: str
    date: datetime | None
    body: bytes
    content_type: str
    canonical_url: str = ""  # canonical_article_url(url)
    metadata: dict[str, Any] = field(default_factory=dict)  # article_metadata()


@dataclass
class Skip:
    source: str
    offset: int
    reason: str


class PermanentDamage(BrokenArchive):
    """Damage that opening the source again cannot mend: not worth a reconnection."""


class SharedMember(PermanentDamage):
    """Records share one gzip member: a WARC gzipped whole, streamed. Opening it again would
    not help (no Range lands on a record inside one deflate stream)."""


def pages(
    records: Iterator[ArchivedRecord], source: str, max_bytes: int, verify_digests: bool = True
) -> Iterator[Page | Skip]:
    """Pages and skips of a record stream. A response is held until the next record, which
    may be our capture's metadata record about it (and is passed on before a BrokenArchive
    from what follows it propagates)."""
    held: Page | None = None
    previous = -1
    try:
        for record in records:
            if record.offset <= previous:
                raise SharedMember(
                    f"records share the gzip member at offset {previous}: not one member per "
                    "record (a WARC gzipped whole is read locally only; recompress it per "
                    "record, e.g. `warcio recompress`, or gunzip it)"
                )
            previous = record.offset
            if held is not None and _describes(record, held):
                held.metadata = article_metadata(_json(record.block))
                continue
            if held is not None:
                yield held
                held = None
            if record.type not in ("response", "revisit", "resource"):
                continue  # request, warcinfo, metadata, conversion: nothing to replay
            try:
                outcome = page_of(record, source, max_bytes, verify_digests)
            except Exception:  # what no rule foresaw in one record: skip it, not the file
                log.warning("WARC %s: record at offset %d not decodable", source, record.offset,
                            exc_info=True)  # fmt: skip
                outcome = Skip(source, record.offset, UNDECODABLE)
            if isinstance(outcome, Page):
                held = outcome
            else:
                yield outcome
    except BrokenArchive:
        if held is not None:
            yield held
        raise
    if held is not None:
        yield held


def source_pages(
    stream: IO[bytes], source: str, reader: str, max_bytes: int, verify_digests: bool = True
) -> Iterator[Page | Skip]:
    """`pages` of a whole source from the stream's position. A damaged stretch of a local
    file (a corrupt member, a record header that is not one, garbage) is one BROKEN skip at
    the offset of the next whole record (`next_record`), where reading goes on; a record that
    declares more bytes than its member holds is skipped (TRUNCATED or TOO_LARGE) and reading
    goes on after it too, and so does a reading that ran on through whole records as one
    bogus record. So one bad record does not cost the records after it. A remote file is
    searched the same way when its server answers ranges (`RemoteStream`); a failure of its
    connection is no damage and is raised as it is (the feeder opens the file again).
    PermanentDamage when nothing after the damage can be read; BrokenArchive when the stream
    cannot seek to look."""
    resumed_at = stream.tell()
    damage: tuple[int, str] | None = None  # a damaged stretch began after offset, why
    seekable = getattr(stream, "seekable", None)
    searchable = bool(seekable and seekable())
    while True:
        last: Page | Skip | None = None
        cause: Exception | None = None
        records = _Remembered(iter_records(stream, reader, max_bytes))
        try:
            for item in pages(records, source, max_bytes, verify_digests):
                if damage is not None:  # the stretch ends where this read began
                    yield _skipped_damage(source, damage, resumed_at)
                    damage = None
                last = item
                yield item
        except READ_ERRORS as failure:
            if (lost := getattr(stream, "failure", None)) is not None:
                raise lost from failure  # the connection, not the file
            cause = failure
        # A record that ran to the end of the file may have declared more than it holds.
        overran = isinstance(last, Skip) and last.reason in (TRUNCATED, TOO_LARGE)
        if cause is None and not overran:
            # A member cut short can make a reader run on through the members after it as one
            # bogus record, with no error: a whole record after the last one read says so.
            # (Not in an uncompressed file, whose last page may quote a whole WARC record.)
            after_end = records.offset
            looked = searchable and after_end is not None and not _uncompressed(stream)
            found = next_record(stream, after_end + 1) if looked else None
            if found is None:
                if damage is not None:  # only records that are no pages after the damage
                    yield _skipped_damage(source, damage, resumed_at)
                return
            damage = damage or (after_end, "a record ran on over the records after it")
            stream.seek(found)
            resumed_at = found
            continue
        # Past the last record handed over; with none, past where this read began (it failed).
        after = last.offset if last is not None else resumed_at
        found = next_record(stream, after + 1) if searchable else None
        if found is None:
            if cause is None:
                return  # a truncated last record: the file ends there
            # Searched to the end, the damage is for good; unsearched, opening it again may help.
            kind = PermanentDamage if searchable else BrokenArchive
            if isinstance(cause, kind):
                raise cause
            raise kind(str(cause) or type(cause).__name__) from cause
        if cause is None:
            log.warning("WARC %s: the record at offset %d declares more than its member holds: "
                        "reading on at offset %d", source, after, found)  # fmt: skip
        elif damage is None:
            damage = after, str(cause) or type(cause).__name__
        stream.seek(found)
        resumed_at = found


class _Remembered:
    """A record stream that remembers the offset of the last record read."""

    def __init__(self, records: Iterator[ArchivedRecord]) -> None:
        self.records = records
        self.offset: int | None = None

    def __iter__(self) -> Iterator[ArchivedRecord]:
        for record in self.records:
            self.offset = record.offset
            yield record


def _uncompressed(stream: IO[bytes]) -> bool:
    return _leading_bytes(stream) == WARC_START


def _leading_bytes(stream: IO[bytes]) -> bytes:
    """The file's first bytes (a remote stream gets them without moving)."""
    leading = getattr(stream, "leading_bytes", None)
    if leading is not None and (head := leading(len(WARC_START))) is not None:
        return bytes(head)
    stream.seek(0)
    return stream.read(len(WARC_START))


def _skipped_damage(source: str, damage: tuple[int, str], resumed_at: int) -> Skip:
    after, cause = damage
    log.warning("WARC %s is damaged after offset %d (%s): skipped to the next whole record, "
                "at offset %d", source, after, cause, resumed_at)  # fmt: skip
    return Skip(source, resumed_at, BROKEN)


def next_record(stream: IO[bytes], start: int) -> int | None:
    """The offset of the first whole record at or after `start`: a gzip member that inflates to
    the start of a WARC record in a gzip-per-record file, a record header in an uncompressed
    one (the file's first bytes say which; both are looked for when they are damaged too); None
    when there is none. Reads the file forward (a bounded probe per candidate), so a long
    damaged stretch costs a scan, not a hang."""
    first = _leading_bytes(stream)
    found = []
    if not first.startswith(WARC_START):
        found.append(_next_candidate(stream, start, GZIP_MEMBER_START, _inflates_to_record))
    if not first.startswith(GZIP_MAGIC):
        found.append(_next_candidate(stream, start, PLAIN_RECORD_START, _opens_record))
    return min((offset for offset in found if offset is not None), default=None)


def _next_candidate(
    stream: IO[bytes], start: int, marker: bytes, judge: Callable[[IO[bytes], int], bool]
) -> int | None:
    position, probed = start, 0
    while True:
        stream.seek(position)
        # Overlapping by the marker's length less one: a marker across two reads is found.
        chunk = stream.read(RESYNC_SCAN_BYTES + len(marker) - 1)
        found = chunk.find(marker)
        while 0 <= found < RESYNC_SCAN_BYTES:
            if judge(stream, position + found):
                return position + found
            probed += stream.tell() - (position + found)
            if probed > RESYNC_MAX_PROBED_BYTES:
                return None
            found = chunk.find(marker, found + 1)
        if len(chunk) <= RESYNC_SCAN_BYTES:
            return None
        position += RESYNC_SCAN_BYTES
        if position - start >= RESYNC_MAX_SCANNED_BYTES:
            log.warning("no whole record in the %d MiB after offset %d: the file ends there",
                        RESYNC_MAX_SCANNED_BYTES >> 20, start)  # fmt: skip
            return None


def _inflates_to_record(stream: IO[bytes], offset: int) -> bool:
    """Fed a little at a time: a candidate that is no gzip member fails in its first bytes."""
    stream.seek(offset)
    inflater = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer
    inflated = b""
    for _ in range(RESYNC_PROBE_BYTES // RESYNC_PROBE_STEP_BYTES):
        data = stream.read(RESYNC_PROBE_STEP_BYTES)
        try:
            inflated += inflater.decompress(data, len(WARC_START) - len(inflated))
        except zlib.error:
            return False
        if len(inflated) >= len(WARC_START) or not data or inflater.eof:
            break
    return inflated == WARC_START


def _opens_record(stream: IO[bytes], offset: int) -> bool:
    """A WARC/1.x line, then header fields up to a blank line, among them the ones every
    record has (a page that merely quotes "WARC/1.0" is no record). Not necessarily at the
    start of a line: what was cut off or garbled before it need not end with one. Read a line
    at a time: a candidate that is no record fails at its first line that is no field."""
    stream.seek(offset)
    if stream.readline(len(PLAIN_VERSION_LINES[0])) not in PLAIN_VERSION_LINES:
        return False
    names: set[bytes] = set()
    left = RESYNC_PROBE_BYTES
    while left > 0:
        line = stream.readline(left)
        left -= len(line)
        if line == b"\r\n":
            return names.issuperset(PLAIN_RECORD_FIELDS)
        name, colon, value = line.partition(b":")
        if not line.endswith(b"\r\n") or not colon or not name or name != name.strip():
            return False
        names.add(name.lower())
        if name.lower() == b"content-length" and not value.strip().isdigit():
            return False
    return False


def _describes(record: ArchivedRecord, page: Page) -> bool:
    """Our capture's metadata record about `page` (written right after it)."""
    return (
        record.type == "metadata"
        and record.concurrent_to == page.record_id
        and record.content_type == METADATA_TYPE
    )


def page_of(
    record: ArchivedRecord, source: str, max_bytes: int, verify_digests: bool = True
) -> Page | Skip:
    def skip(reason: str) -> Skip:
        return Skip(source, record.offset, reason)

    if record.type == "revisit":
        return skip(REVISIT)  # "same as an earlier capture": that capture is the article
    if record.truncated:
        return skip(TRUNCATED)
    if record.oversized or len(record.block) > max_bytes:
        return skip(TOO_LARGE)
    # The only check an uncompressed file has (a gzip member has its CRC): a flipped byte in a
    # page would otherwise pass as the page. A digest we cannot check is no verdict.
    if verify_digests and digest_matches(record.block_digest, record.block) is False:
        log.warning("WARC %s: the record at offset %d does not match its WARC-Block-Digest "
                    "(skipped; REPLAY_VERIFY_DIGESTS=False reads a writer's wrong digests)",
                    source, record.offset)  # fmt: skip
        return skip(DIGEST_MISMATCH)
    url = _requested_url(record.target_uri)
    canonical_url = _canonical(url) if url is not None else None
    if url is None or canonical_url is None:
        return skip(BAD_URI)
    if record.type == "resource":  # a body without HTTP headers (some archivers)
        body, content_type = record.block, record.content_type
    else:
        message = parse_http_response(record.block)
        if message is None:
            return skip(NOT_HTTP)
        if message.status != 200:
            return skip(f"{STATUS}_{message.status}")
        content_type = message.header("Content-Type") or ""
        body = message.body
        if (message.header("Transfer-Encoding") or "").lower() == "chunked":
            body = dechunk(body)  # the transfer coding wraps the content coding: undone first
        try:
            body = decode_body(body, message.header("Content-Encoding"), max_bytes)
        except ValueError:
            return skip(UNDECODABLE)
    if not looks_html(content_type, body):
        return skip(NON_HTML)
    return Page(source, record.offset, record.record_id, url, record.date, body, content_type,
                canonical_url)  # fmt: skip


def _requested_url(uri: str) -> str | None:
    """The address as a crawl would have requested it: Scrapy's Request makes a link safe
    with w3lib (spaces, control characters and non-ASCII percent-encoded, an IDN host in
    punycode), so an archive's raw address gives the article the URL a crawl gives it; None
    when even that fails."""
    try:
        return safe_url_string(uri)
    except ValueError:
        return None


def _canonical(uri: str) -> str | None:
    """The page's canonical URL; None when its record's address is none a crawl could have
    fetched (no http(s), no host, a bad port, too long)."""
    if len(uri) > MAX_URI_CHARS or not uri.lower().startswith(("http://", "https://")):
        return None
    try:
        canonical = canonical_article_url(uri)
    except ValueError:
        return None
    host = urlsplit(canonical).hostname or ""
    return canonical if _HOST.fullmatch(host) else None


def article_metadata(value: Any) -> dict[str, Any]:
    """Our capture's metadata about a page, each field kept only with the type capture writes
    (a file is input from anywhere). Without a usable identity (entry URL and version), none:
    the page is then keyed by its record, like any archive's."""
    if not isinstance(value, dict):
        return {}
    entry_url, version = value.get("entry_url"), value.get("version")
    if not (isinstance(entry_url, str) and 0 < len(entry_url) <= MAX_URI_CHARS):
        return {}
    if type(version) is not int or version < 1:
        return {}
    raw_entry = value.get("entry") if isinstance(value.get("entry"), dict) else {}
    entry: dict[str, Any] = {
        name: raw_entry[name] for name in _ENTRY_TEXT_FIELDS if isinstance(raw_entry.get(name), str)
    }
    authors = raw_entry.get("authors")
    if isinstance(authors, list) and all(isinstance(author, str) for author in authors):
        entry["authors"] = authors
    feed_url = value.get("feed_url")
    return {
        "entry_url": entry_url,
        "version": version,
        "entry": entry,
        "feed_url": feed_url if isinstance(feed_url, str) else None,
        "updated": _epoch_seconds(value.get("updated")),
    }


def _epoch_seconds(value: Any) -> float | None:
    """The ledger's `updated` (epoch seconds), if `value` is one (a bool is an int to Python)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def looks_html(content_type: str, body: bytes) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind:
        return kind in HTML_TYPES
    head = body[:SNIFF_BYTES].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<!--"))


def decode_body(body: bytes, encoding: str | None, max_bytes: int) -> bytes:
    """Undo Content-Encoding (gzip, deflate, br), bounded by max_bytes (a zip bomb is an
    error, not an out-of-memory kill). ValueError when it does not decode."""
    codings = [c.strip().lower() for c in (encoding or "").split(",") if c.strip()]
    if len(codings) > MAX_CONTENT_CODINGS:  # each could be a gzip quine's round: bounded work
        raise ValueError(f"{len(codings)} content codings")
    for coding in reversed(codings):
        if coding in ("identity", "none"):
            continue
        if coding in ("gzip", "x-gzip", "deflate"):
            body = _inflate(body, coding, max_bytes)
        elif coding == "br":
            body = _unbrotli(body, max_bytes)
        else:
            raise ValueError(f"unknown content coding {coding!r}")
    return body


def _inflate(body: bytes, coding: str, max_bytes: int) -> bytes:
    # 47: gzip or zlib header; deflate is sometimes sent raw (-15)
    for wbits in (47,) if coding != "deflate" else (47, -15):
        decompressor = zlib.decompressobj(wbits)
        try:
            data = decompressor.decompress(body, max_bytes + 1)
        except zlib.error:
            continue
        if len(data) > max_bytes:
            raise ValueError("decoded body too large")
        return data
    if body[:SNIFF_BYTES].lstrip().startswith(b"<"):
        return body  # the header lies: the body was never compressed (it happens)
    raise ValueError("does not inflate")


def _unbrotli(body: bytes, max_bytes: int) -> bytes:
    try:
        import brotli
    except ImportError as error:
        raise ValueError("brotli is not installed") from error
    # Never more than max_bytes + 1 out: a few kB of brotli can stand for gigabytes.
    decompressor = brotli.Decompressor()
    pieces: list[bytes] = []
    size = 0
    try:
        piece = decompressor.process(body, output_buffer_limit=max_bytes + 1)
        while piece:
            pieces.append(piece)
            size += len(piece)
            if size > max_bytes or decompressor.is_finished():
                break
            piece = decompressor.process(b"", output_buffer_limit=max_bytes + 1 - size)
    except brotli.error as error:
        raise ValueError(str(error)) from error
    if size > max_bytes:
        raise ValueError("decoded body too large")
    return b"".join(pieces)


def dechunk(body: bytes) -> bytes:
    """Undo chunked transfer coding left in an archived body; the body as is if it is not.
    A chunk size is hex digits only: `int()` would also take "-6", which sends the reading
    position back to the same size line forever."""
    out, position = [], 0
    while True:
        end = body.find(b"\r\n", position)
        if end < 0:
            return body
        size_field = body[position:end].split(b";", 1)[0].strip()
        if not _CHUNK_SIZE.fullmatch(size_field):
            return body
        size = int(size_field, 16)
        if size == 0:
            return b"".join(out)
        out.append(body[end + 2 : end + 2 + size])
        position = end + 2 + size + 2


def _json(block: bytes) -> dict[str, Any]:
    try:
        value = json.loads(block)
    except (ValueError, RecursionError):  # "[[[[..." nests past the parser's stack
        return {}
    return value if isinstance(value, dict) else {}


# --- the reading thread -----------------------------------------------------------------------


@dataclass
class SourceEnd:
    """The feeder finished a source (fully read, or broken from `error` on)."""

    source: str
    error: str | None = None


@dataclass
class SourceStart:
    source: str
    offset: int
    size: int | None


class RecordFeeder:
    """Reads sources one after the other in a thread; `next_batch` hands their pages over."""

    BATCH = 32  # pages per queue entry: few thread hand-offs, little memory held

    def __init__(
        self,
        sources: list[str],
        offsets: dict[str, int],
        reader: str,
        max_bytes: int,
        user_agent: str,
        queue_batches: int,
        remote_retries: int = 0,
        remote_retry_seconds: float = 1.0,
        verify_digests: bool = True,
    ) -> None:
        self.sources = sources
        self.remote_retries = remote_retries
        self.remote_retry_seconds = remote_retry_seconds
        self.verify_digests = verify_digests
        self.offsets = offsets
        self.reader = reader
        self.max_bytes = max_bytes
        self.user_agent = user_agent
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, queue_batches))
        self.stopping = threading.Event()
        self.position = 0  # bytes of the current source read so far (for the ETA)
        self.thread = threading.Thread(target=self._run, name="warc-reader", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        while self.thread.is_alive():  # unblock a put waiting for room
            try:
                self.queue.get_nowait()
            except queue.Empty:
                self.thread.join(0.05)

    def next_batch(self) -> list[Any] | None:
        """Blocking (call it in a thread): the next batch, None at the end."""
        batch = self.queue.get()
        return None if batch is _END else batch

    def _put(self, batch: list[Any]) -> bool:
        while not self.stopping.is_set():
            try:
                self.queue.put(batch, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            for source in self.sources:
                if not self._read(source) or self.stopping.is_set():
                    break
        finally:
            self._put_end()

    def _put_end(self) -> None:
        while True:
            try:
                self.queue.put(_END, timeout=0.2)
                return
            except queue.Full:
                if self.stopping.is_set():
                    return

    def _read(self, source: str) -> bool:
        """Hand over the source's pages from its resume offset. A remote source whose
        connection fails (reset, timeout, a 5xx or 429 answer) is opened again, with a Range
        from the last record handed over, up to `remote_retries` times in a row, waiting
        longer each time; what was handed over is not handed over again."""
        offset = self.offsets.get(source, 0)
        batch: list[Any] = []
        started = False
        last = (-1, 0)  # where the last item handed over stands (`place_in_source`)
        failures = 0
        while True:
            progressed, error, retryable = False, None, is_remote(source)
            try:
                stream, size = open_source(source, offset, self.user_agent)
            except (OSError, ValueError) as failure:
                error, retryable = str(failure), retryable and _worth_retrying(failure)
            else:
                if not started:
                    batch.append(SourceStart(source, offset, size))
                    started = True
                try:
                    found = source_pages(stream, source, self.reader, self.max_bytes,
                                         self.verify_digests)  # fmt: skip
                    for item in found:
                        if place_in_source(item) <= last:
                            continue  # read again after a reconnection
                        batch.append(item)
                        last, progressed = place_in_source(item), True
                        if len(batch) >= self.BATCH:
                            self.position = item.offset
                            if not self._put(batch):
                                return False
                            batch = []
                except READ_ERRORS as failure:
                    error = str(failure) or type(failure).__name__
                    retryable = retryable and not isinstance(failure, PermanentDamage)
                except Exception as failure:  # a reader's own failure (or http.client's)
                    log.warning("reading %s failed", source, exc_info=True)
                    error = f"{type(failure).__name__}: {failure}"
                finally:
                    stream.close()
            failures = 0 if progressed else failures
            if error is None or not retryable or failures >= self.remote_retries:
                break
            delay = self.remote_retry_seconds * 2**failures
            failures += 1
            offset = max(offset, last[0])
            log.warning("reading %s failed (%s): opening it again at offset %d in %g s (%d/%d)",
                        source, error, offset, delay, failures, self.remote_retries)  # fmt: skip
            if self.stopping.wait(delay):
                return False
        if not started:
            batch.append(SourceStart(source, offset, None))
        batch.append(SourceEnd(source, error))
        return self._put(batch)


def place_in_source(item: Page | Skip) -> tuple[int, int]:
    """Where an item stands in its source. A damaged stretch's skip has the offset of the
    record reading went on at, and comes just before that record."""
    return item.offset, 0 if isinstance(item, Skip) and item.reason == BROKEN else 1


# --- resume offsets ---------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS offsets (source TEXT PRIMARY KEY, state TEXT NOT NULL);
"""


def parse_shard(value: str) -> tuple[int, int]:
    """Parse a shard, "2/4" -> (2, 4): the third of four replay processes (0-based);
    ValueError when it is not one."""
    index, slash, count = value.partition("/")
    if not (slash and index.strip().isdigit() and count.strip().isdigit()):
        raise ValueError(f"a shard is INDEX/COUNT, e.g. 0/2, not {value!r}")
    shard = int(index), int(count)
    if not 0 <= shard[0] < shard[1]:
        raise ValueError(f"shard {value!r}: INDEX must be within 0 .. COUNT-1")
    return shard


def shard_of(domain: str, count: int) -> int:
    """Which of `count` replay processes takes a publisher domain's pages: a stable hash (the
    same in every process and run), so each domain's notices are learned in one process, in
    the order of the archive."""
    return zlib.crc32(domain.encode("utf-8", "surrogatepass")) % count


class ReplayOffsets:
    """Per source: {"offset": where to resume, "complete": read to its end}. A shard of a
    replay in several processes (`scope`, e.g. "1/2") keeps offsets of its own per source."""

    def __init__(self, settings: Any, scope: str = "") -> None:
        self.scope = scope
        self.memory = (settings.get("HARVEST_STATE") or "").strip().lower() == "memory"
        self.url = "" if self.memory else redis_url(settings)
        self.keys = RedisKeys.from_settings(settings)
        self.settings = settings
        self.client: Any = None
        self.db: Any = None
        self.values: dict[str, dict[str, Any]] = {}

    async def open(self) -> None:
        if self.url:
            self.client = async_redis(self.url)
        elif not self.memory:
            path = state_dir(self.settings) / SQLITE_FILE
            self.db = open_sqlite(path, timeout_seconds=BUSY_TIMEOUT_SECONDS, schema=_SCHEMA)

    def _key(self, source: str) -> str:
        return f"{source} shard {self.scope}" if self.scope else source

    async def load(self, sources: list[str]) -> dict[str, dict[str, Any]]:
        keys = {self._key(source): source for source in sources}
        if self.client is not None and sources:
            raw = await self.client.hmget(self.keys.replay_offsets(), list(keys))
            found = {keys[k]: json.loads(r) for k, r in zip(keys, raw, strict=True) if r}
        elif self.db is not None:
            rows = self.db.execute("SELECT source, state FROM offsets").fetchall()
            found = {keys[key]: json.loads(state) for key, state in rows if key in keys}
        else:
            found = {keys[k]: self.values[k] for k in keys if k in self.values}
        return found

    async def save(self, states: dict[str, dict[str, Any]]) -> None:
        if not states:
            return
        states = {self._key(source): state for source, state in states.items()}
        if self.client is not None:
            encoded = {source: json.dumps(state) for source, state in states.items()}
            await self.client.hset(self.keys.replay_offsets(), mapping=encoded)
        elif self.db is not None:
            with self.db:
                self.db.executemany(
                    "INSERT OR REPLACE INTO offsets (source, state) VALUES (?, ?)",
                    [(source, json.dumps(state)) for source, state in states.items()],
                )
        else:
            self.values.update(states)

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()
            self.client = None
        if self.db is not None:
            self.db.close()
            self.db = None
