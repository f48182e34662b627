"""WARC records: building them (WARC/1.1, one gzip member each) and reading them back.

Writing is done here, by hand, because crash safety needs each record to be exactly one gzip
member handed to the file in one write (crawler/warc/writer.py): the format is a header block of
`Name: value` lines, a blank line, the block, two CRLFs (ISO 28500, section 4).

Reading goes through one of two libraries behind `iter_records`: FastWARC (the Resiliparse
project's C++ reader, the default: `newsharvest bench replay` measured it several times faster)
or warcio (the reference reader, pure Python). Both yield `ArchivedRecord`s with the record's
offset in the file (a gzip member boundary, where a resumed replay seeks to) and its whole block,
checked against the record's Content-Length: a record cut short (the last one of a killed
capture, a truncated download) is flagged `truncated`, never passed on as if complete.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

WARC_VERSION = "WARC/1.1"
CRLF = b"\r\n"
HEADER_END = b"\r\n\r\n"
# An HTTP response head (status line and headers) longer than this is no server's: servers
# refuse far shorter ones (8-64 KiB); a hostile record's megabytes of headers are not parsed.
MAX_HTTP_HEAD_BYTES = 1024 * 1024
# A WARC record header longer than this is no writer's (real ones are under 2 KiB; FastWARC
# refuses far shorter ones): warcio, which reads a header without limit, is held to it too.
MAX_WARC_HEADER_BYTES = 1024 * 1024
GZIP_LEVEL = 6  # zlib's default: ~4x smaller HTML at ~1 ms per 50 KB page (in the writer thread)
GZIP_WBITS = 31  # a gzip member (header and CRC), not a raw deflate stream
HTTP_RESPONSE_TYPE = "application/http; msgtype=response"
HTTP_REQUEST_TYPE = "application/http; msgtype=request"
READERS = ("fastwarc", "warcio")


def check_reader(reader: str) -> None:
    """Raise ValueError, with what to do, when `reader` is unknown or not installed: a replay
    must say so before it starts, not fail on its first record."""
    if reader not in READERS:
        raise ValueError(f"unknown WARC reader {reader!r} (one of {', '.join(READERS)})")
    if importlib.util.find_spec(reader) is None:
        raise ValueError(f"REPLAY_READER={reader}: the {reader} package is not installed "
                         f"(pip install {reader})")  # fmt: skip


def new_record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


def warc_date(moment: datetime) -> str:
    """WARC/1.1 dates: UTC, ISO 8601, with microseconds (section 5.4 allows the fraction)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def digest(data: bytes) -> str:
    """The usual WARC digest: SHA-1, base32 (what Heritrix, wget and Common Crawl write)."""
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


DIGEST_ALGORITHMS = {"sha1": "sha1", "sha-1": "sha1", "sha256": "sha256", "sha-256": "sha256",
                     "sha512": "sha512", "sha-512": "sha512", "md5": "md5"}  # fmt: skip


def digest_matches(labelled: str | None, data: bytes) -> bool | None:
    """Whether `data` has the labelled digest ("sha1:<base32>", as ISO 28500 writes it; hex
    and base64 values too, which some writers use); None when there is none, or it names an
    algorithm or encoding we cannot check (no verdict is no damage)."""
    algorithm, colon, value = (labelled or "").strip().partition(":")
    name = DIGEST_ALGORITHMS.get(algorithm.strip().lower())
    if not colon or name is None:
        return None
    expected = _digest_bytes(value.strip(), hashlib.new(name).digest_size)
    return None if expected is None else hashlib.new(name, data).digest() == expected


def _digest_bytes(value: str, size: int) -> bytes | None:
    """A digest value in hex, base32 or base64 (padding optional): the one that decodes to
    `size` bytes; None when none does. (For SHA-1 and SHA-256 no value fits two of them.)"""
    decoders = (
        bytes.fromhex,
        lambda text: base64.b32decode(text.upper() + "=" * (-len(text) % 8)),
        lambda text: base64.b64decode(text + "=" * (-len(text) % 4), validate=True),
    )
    for decode in decoders:
        try:
            found = decode(value)
        except ValueError:  # binascii.Error is one
            continue
        if len(found) == size:
            return found
    return None


@dataclass
class OutRecord:
    """A record to write. `payload_start` is where the payload begins inside `block` (after
    the HTTP headers) for HTTP records, None for records without a payload digest."""

    type: str
    block: bytes
    content_type: str
    target_uri: str | None = None
    date: datetime = field(default_factory=lambda: datetime.now(UTC))
    record_id: str = field(default_factory=new_record_id)
    payload_start: int | None = None
    extra: list[tuple[str, str]] = field(default_factory=list)
    version: str = WARC_VERSION  # tests write WARC/1.0 files the way CC-NEWS does

    def serialize(self) -> bytes:
        headers = [
            ("WARC-Type", self.type),
            ("WARC-Record-ID", self.record_id),
            ("WARC-Date", warc_date(self.date)),
        ]
        if self.target_uri is not None:
            headers.append(("WARC-Target-URI", self.target_uri))
        headers += self.extra
        headers.append(("WARC-Block-Digest", digest(self.block)))
        if self.payload_start is not None:
            headers.append(("WARC-Payload-Digest", digest(self.block[self.payload_start :])))
        headers += [("Content-Type", self.content_type), ("Content-Length", str(len(self.block)))]
        lines = [self.version.encode()] + [f"{k}: {_clean(v)}".encode() for k, v in headers]
        return CRLF.join(lines) + HEADER_END + self.block + CRLF + CRLF


def _clean(value: str) -> str:
    """A header value on one line (a URL or setting with a line break would end the header)."""
    return value.replace("\r", " ").replace("\n", " ")


def gzip_member(data: bytes, level: int = GZIP_LEVEL) -> bytes:
    compressor = zlib.compressobj(level, zlib.DEFLATED, GZIP_WBITS)
    return compressor.compress(data) + compressor.flush()


@dataclass(frozen=True)
class OutBlock:
    data: bytes
    payload_start: int


def http_block(first_line: str, headers: list[tuple[bytes, bytes]], body: bytes) -> OutBlock:
    """An HTTP message as a record block: start line, headers as given, blank line, body."""
    head = [first_line.encode("latin-1")] + [name + b": " + value for name, value in headers]
    start = CRLF.join(head) + HEADER_END
    return OutBlock(start + body, len(start))


def response_record(
    url: str,
    status: int,
    headers: list[tuple[bytes, bytes]],
    body: bytes,
    *,
    date: datetime | None = None,
    record_id: str | None = None,
    protocol: str = "HTTP/1.1",
    extra: list[tuple[str, str]] | None = None,
) -> OutRecord:
    """A `response` record: status line, headers as given, body as given."""
    block = http_block(f"{protocol} {status} {reason_phrase(status)}", headers, body)
    return OutRecord(
        "response", block.data, HTTP_RESPONSE_TYPE, url, date or datetime.now(UTC),
        record_id or new_record_id(), block.payload_start, list(extra or []),
    )  # fmt: skip


def reason_phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def warcinfo_record(software: str, fields: dict[str, Any], filename: str) -> OutRecord:
    """The record every file starts with: who wrote it and with which settings."""
    lines = [f"software: {software}", f"format: WARC File Format {WARC_VERSION[5:]}"]
    lines += [f"{name}: {_clean(str(value))}" for name, value in fields.items()]
    return OutRecord(
        type="warcinfo",
        block=("\r\n".join(lines) + "\r\n").encode("utf-8"),
        content_type="application/warc-fields",
        extra=[("WARC-Filename", filename)],
    )


# --- reading ----------------------------------------------------------------------------------


@dataclass
class ArchivedRecord:
    """A record as read: where it starts, its WARC headers that replay uses, its block."""

    offset: int  # in the file (compressed bytes for .gz): a record boundary to seek to
    type: str  # response, revisit, request, metadata, warcinfo, resource...
    record_id: str
    target_uri: str
    date: datetime | None
    content_type: str
    concurrent_to: str | None
    block: bytes
    truncated: bool  # fewer bytes than its Content-Length: the file ends inside it
    profile: str | None = None  # WARC-Profile (revisits)
    oversized: bool = False  # longer than the reader's limit: block left empty, never held
    block_digest: str | None = None  # WARC-Block-Digest, as written ("sha1:<base32>")


class BrokenArchive(Exception):
    """The stream is not WARC (or is damaged) from some point on: nothing more to read."""


def iter_records(
    stream: IO[bytes], reader: str = "fastwarc", max_block_bytes: int | None = None
) -> Iterator[ArchivedRecord]:
    """The records of a WARC stream (gzip per record or uncompressed, WARC/1.0 or 1.1) from its
    current position. Both readers take offsets from `stream.tell()`: absolute in the file for
    a seeked file and for `RemoteStream` (crawler/warc/remote.py) alike. A block longer than
    `max_block_bytes` is not read into memory (a hostile file can declare gigabytes, or inflate
    to them): its record comes `oversized`, with an empty block, and the reader skips the rest."""
    limit = -1 if max_block_bytes is None else max_block_bytes + 1
    if reader == "fastwarc":
        return _fastwarc_records(stream, limit)
    if reader == "warcio":
        return _warcio_records(stream, limit)
    raise ValueError(f"unknown WARC reader {reader!r} (one of {', '.join(READERS)})")


def _fastwarc_records(stream: IO[bytes], limit: int) -> Iterator[ArchivedRecord]:
    from fastwarc.warc import ArchiveIterator

    iterator = ArchiveIterator(stream, parse_http=False, fsspec_args=False)
    try:
        for record in iterator:
            headers = record.headers
            block = record.reader.read(limit)
            oversized = 0 <= limit <= len(block)
            yield ArchivedRecord(
                offset=record.stream_pos,
                type=str(headers.get("WARC-Type") or "unknown"),
                record_id=str(record.record_id or ""),
                target_uri=_uri(headers.get("WARC-Target-URI")),
                date=_date(headers.get("WARC-Date")),
                content_type=str(headers.get("Content-Type") or ""),
                concurrent_to=headers.get("WARC-Concurrent-To"),
                block=b"" if oversized else block,
                truncated=not oversized and len(block) < record.content_length,
                profile=headers.get("WARC-Profile"),
                oversized=oversized,
                block_digest=headers.get("WARC-Block-Digest"),
            )
    except OSError as error:
        raise BrokenArchive(str(error)) from error


def _warcio_records(stream: IO[bytes], limit: int) -> Iterator[ArchivedRecord]:
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    iterator = ArchiveIterator(stream, no_record_parse=True, check_digests=False)
    loader = iterator.loader
    loader.warc_parser = _bounded_header_parser()(loader.warc_parser.statuslist)
    try:
        for record in iterator:
            if record.format != "warc":  # what it reads as ARC here is damage (FastWARC agrees)
                raise BrokenArchive(f"not a WARC record ({record.format}) at offset "
                                    f"{iterator.get_record_offset()}")  # fmt: skip
            headers = record.rec_headers
            block = record.raw_stream.read() if limit < 0 else record.raw_stream.read(limit)
            oversized = 0 <= limit <= len(block)
            length = int(headers.get_header("Content-Length") or 0)
            yield ArchivedRecord(
                offset=iterator.get_record_offset(),
                type=record.rec_type or "unknown",
                record_id=headers.get_header("WARC-Record-ID") or "",
                target_uri=_uri(headers.get_header("WARC-Target-URI")),
                date=_date(headers.get_header("WARC-Date")),
                content_type=headers.get_header("Content-Type") or "",
                concurrent_to=headers.get_header("WARC-Concurrent-To"),
                block=b"" if oversized else block,
                truncated=not oversized and len(block) < length,
                profile=headers.get_header("WARC-Profile"),
                oversized=oversized,
                block_digest=headers.get_header("WARC-Block-Digest"),
            )
    except (ArchiveLoadFailed, OSError, EOFError, ValueError, zlib.error) as error:
        raise BrokenArchive(str(error)) from error


class _BoundedLines:
    """A stream whose lines, read through it, add up to at most `limit` bytes."""

    def __init__(self, stream: Any, limit: int) -> None:
        self.stream, self.left = stream, limit

    def readline(self, length: int | None = None) -> bytes:
        wanted = self.left if length is None else min(length, self.left)
        line = self.stream.readline(wanted + 1)
        self.left -= len(line)
        if self.left < 0:
            raise BrokenArchive(f"a WARC record header over {MAX_WARC_HEADER_BYTES} bytes")
        return line


@functools.cache
def _bounded_header_parser() -> type:
    """warcio's WARC header parser, reading through `_BoundedLines` (a hostile header of
    gigabytes of lines cost warcio 7 s and 700 MB per 22 MB before)."""
    from warcio.statusandheaders import StatusAndHeadersParser

    class BoundedHeaderParser(StatusAndHeadersParser):  # type: ignore[misc]
        def parse(self, stream: Any, full_statusline: Any = None) -> Any:
            bounded = _BoundedLines(stream, MAX_WARC_HEADER_BYTES)
            return super().parse(bounded, full_statusline)

    return BoundedHeaderParser


def _uri(value: Any) -> str:
    """WARC/1.0 writers (CC-NEWS among them) sometimes wrap the URI in <...>."""
    text = str(value or "").strip()
    return text[1:-1] if text.startswith("<") and text.endswith(">") else text


def _date(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).strip().replace("Z", "+00:00")).astimezone(UTC)
    except (ValueError, OverflowError):  # "0001-01-01T00:00:00+01:00" is before year 1 in UTC
        return None


# --- HTTP inside records ----------------------------------------------------------------------


@dataclass
class HttpMessage:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        for key, value in self.headers:
            if key.lower() == wanted:
                return value
        return None


def parse_http_response(block: bytes) -> HttpMessage | None:
    """The status, headers and body of an HTTP response block; None if it is not one (or if
    its head is over MAX_HTTP_HEAD_BYTES)."""
    end = block.find(HEADER_END, 0, MAX_HTTP_HEAD_BYTES)
    separator = len(HEADER_END)
    if end < 0:  # some writers end header lines with a bare LF
        end, separator = block.find(b"\n\n", 0, MAX_HTTP_HEAD_BYTES), 2
        if end < 0:
            return None
    lines = block[:end].decode("latin-1").splitlines()
    if not lines or not lines[0].startswith("HTTP/"):
        return None
    parts = lines[0].split(None, 2)
    if len(parts) < 2 or not parts[1].isdigit():
        return None
    fields: list[tuple[str, list[str]]] = []
    for line in lines[1:]:
        if line[:1] in (" ", "\t") and fields:  # an obsolete folded continuation line
            fields[-1][1].append(line.strip())  # joined once below: no quadratic concatenation
            continue
        name, colon, value = line.partition(":")
        if colon:
            fields.append((name.strip(), [value.strip()]))
    headers = [(name, " ".join(values)) for name, values in fields]
    return HttpMessage(int(parts[1]), headers, block[end + separator :])
