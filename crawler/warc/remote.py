"""A WARC file streamed over HTTP: read as it arrives, never downloaded whole.

`RemoteStream` knows its offset in the remote file (record offsets are absolute, so a resume
or a reconnection opens the file at a record with an HTTP Range). It also seeks, as far as
resynchronising after a damaged record needs: back within the last WINDOW_BYTES it read (kept
in memory), a little forward by reading on, and anywhere else by opening the file again at the
offset. Only a server that answers ranges (RFC 9110 `Accept-Ranges: bytes`, as Common Crawl's
does) makes it `seekable()`: with one that does not, each far seek would read the file again
from its start.
"""

from __future__ import annotations

import io
import re
import time
from typing import Any
from urllib.request import Request as UrlRequest
from urllib.request import urlopen

REMOTE_TIMEOUT_SECONDS = 60.0  # for each wait on the socket
# The least a connection must deliver per this long spent waiting on it (the time the reader
# spends elsewhere, a full pipeline, does not count): a server dripping a byte now and then,
# each within the socket timeout, would otherwise hold a replay for ever. The connection then
# counts as failed: opened again, and at last given up, like a reset one.
STALL_SECONDS = 60.0
STALL_MIN_BYTES = 64 * 1024
RECEIVE_BYTES = 1 << 20  # asked of the connection at a time; it answers what has arrived
SKIP_CHUNK_BYTES = 1 << 20  # read on (and dropped) this much at a time to reach an offset
# Kept behind the read position. A resync scan reads 1 MiB ahead and probes 64 KiB past a
# candidate, then seeks back to the next candidate in what it read: it never seeks further back.
WINDOW_BYTES = 2 << 20
HEAD_BYTES = 8  # the file's first bytes, remembered: they say its layout
ANY_LINE_BYTES = 64 * 1024  # a readline() without a limit reads at most this much
_CONTENT_RANGE = re.compile(r"\s*bytes\s+(\d+)-\d+/(\d+|\*)", re.IGNORECASE)  # RFC 9110 14.4


class RemoteStream:
    """A remote file from `offset` on. A body that ends before the length its server announced
    raises ConnectionError: a connection closed halfway must not read as the end of the file
    (the rest would be lost, and the source taken as read to its end). A failure of the
    connection is kept in `failure`: a reader may wrap it, and it is not damage of the file."""

    def __init__(self, source: str, user_agent: str, offset: int = 0) -> None:
        self.source = source
        self.user_agent = user_agent
        self.failure: ConnectionError | OSError | None = None
        self.head: bytes | None = None  # the file's first HEAD_BYTES, once read
        self._open(offset)

    def _open(self, offset: int) -> None:
        headers = {"User-Agent": self.user_agent}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        response: Any = urlopen(UrlRequest(self.source, headers=headers),
                                timeout=REMOTE_TIMEOUT_SECONDS)  # fmt: skip
        ranged = response.status == 206
        length = response.headers.get("Content-Length")
        self.size = int(length) + (offset if ranged else 0) if length else None  # whole file
        answered = _CONTENT_RANGE.match(response.headers.get("Content-Range") or "")
        if ranged and answered and int(answered[1]) != offset:  # every offset would be wrong
            response.close()
            raise ConnectionError(f"asked for bytes {offset}-, the server answered "
                                  f"{response.headers.get('Content-Range')}")  # fmt: skip
        if ranged and answered and answered[2] != "*":
            self.size = int(answered[2])
        accepts = (response.headers.get("Accept-Ranges") or "").strip().lower() == "bytes"
        self.ranges = ranged or accepts
        self.response = response
        self.position = 0 if offset and not ranged else offset  # of the next byte received
        self.cursor = self.position  # of the next byte read
        self.window = bytearray()  # the bytes received before `position`, the last ones
        self.pace = (0.0, self.position)  # seconds waited on the connection since where
        if self.position < offset:  # no Range support: read up to the offset
            self._read_on_to(offset)

    def read(self, size: int | None = -1) -> bytes:
        wanted = -1 if size is None or size < 0 else size
        kept = self._kept(wanted)
        if 0 <= wanted <= len(kept):
            return kept
        received = self._receive(wanted - len(kept) if wanted >= 0 else -1)
        return kept + received if kept else received

    def readline(self, size: int | None = -1) -> bytes:
        start = self.cursor
        data = self.read(size if size is not None and size >= 0 else ANY_LINE_BYTES)
        newline = data.find(b"\n")
        if newline < 0:
            return data
        self.seek(start + newline + 1)  # within what was just read, so within the window
        return data[: newline + 1]

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence != io.SEEK_SET or offset < 0:
            raise io.UnsupportedOperation("a remote stream seeks to absolute offsets only")
        if self.position - len(self.window) <= offset <= self.position:
            self.cursor = offset
        elif self.position < offset <= self.position + WINDOW_BYTES:
            self.cursor = self.position
            self._read_on_to(offset)
        else:
            self.response.close()
            self._open(offset)
        return self.cursor

    def leading_bytes(self, count: int) -> bytes | None:
        """The file's first `count` (at most HEAD_BYTES) bytes: remembered, else asked for
        with a range of their own (the stream stays where it is); None when the server
        answers no ranges."""
        if self.head is None or len(self.head) < count:
            if not self.ranges:
                return None
            headers = {"User-Agent": self.user_agent, "Range": f"bytes=0-{HEAD_BYTES - 1}"}
            with urlopen(UrlRequest(self.source, headers=headers),
                         timeout=REMOTE_TIMEOUT_SECONDS) as response:  # fmt: skip
                if response.status != 206:
                    return None
                self.head = response.read(HEAD_BYTES)
        return self.head[:count]

    def tell(self) -> int:
        return self.cursor

    def seekable(self) -> bool:
        return self.ranges

    def close(self) -> None:
        self.response.close()

    def _kept(self, wanted: int) -> bytes:
        """What the window holds from the cursor on (after a seek back), up to `wanted`."""
        if self.cursor >= self.position:
            return b""
        start = self.cursor - (self.position - len(self.window))
        stop = len(self.window) if wanted < 0 else min(len(self.window), start + wanted)
        self.cursor += stop - start
        return bytes(self.window[start:stop])

    def _keep_pace(self, waited: float, received: int) -> None:
        """`waited` on the connection for what brought it up to offset `received`."""
        waited += self.pace[0]
        if waited < STALL_SECONDS:
            self.pace = (waited, self.pace[1])
            return
        if received - self.pace[1] < STALL_MIN_BYTES:
            raise ConnectionError(f"{received - self.pace[1]} bytes in {waited:.0f} s of "
                                  f"waiting: the connection stalls (under {STALL_MIN_BYTES} "
                                  f"bytes in {STALL_SECONDS:.0f} s)")  # fmt: skip
        self.pace = (0.0, received)

    def _read_on_to(self, offset: int) -> None:
        while self.position < offset:
            if not self._receive(min(offset - self.position, SKIP_CHUNK_BYTES)):
                return  # the file is shorter: reading there gives nothing

    def _receive(self, size: int) -> bytes:
        """`size` bytes (all to the end when negative), fewer only at the end of the body."""
        pieces: list[bytes] = []
        got = 0
        try:
            while size < 0 or got < size:
                started = time.monotonic()
                piece = self.response.read1(RECEIVE_BYTES if size < 0 else size - got)
                if not piece:
                    break
                pieces.append(piece)
                got += len(piece)
                self._keep_pace(time.monotonic() - started, self.position + got)
        except OSError as error:  # a reset, a timeout, a stall
            self.failure = error
            raise
        except Exception as error:  # http.client's IncompleteRead...
            self.failure = ConnectionError(str(error))
            raise self.failure from error
        data = b"".join(pieces)
        if self.position < HEAD_BYTES and len(self.head or b"") == self.position:
            self.head = (self.head or b"") + data[: HEAD_BYTES - self.position]
        self.position += len(data)
        self.cursor = self.position
        if not data and size != 0 and self.size is not None and self.position < self.size:
            self.failure = ConnectionError(
                f"connection closed at byte {self.position} of {self.size}"
            )
            raise self.failure
        self.window += data
        if len(self.window) > 2 * WINDOW_BYTES:  # trimmed now and then: each byte moves once
            del self.window[: len(self.window) - WINDOW_BYTES]
        return data
