"""Replay: WARC files through the same pipeline as a crawl (`newsharvest replay`)."""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import io
import itertools
import json
import random
import re
import sqlite3
import sys
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from crawler.newsroom import Newsroom, NewsroomServer
from crawler.warc import remote
from crawler.warc.records import (
    READERS,
    OutRecord,
    gzip_member,
    http_block,
    new_record_id,
    response_record,
)
from crawler.warc.remote import WINDOW_BYTES, RemoteStream
from crawler.warc.replay import BROKEN, Page, Skip, source_pages
from newsharvest_bench.bench_replay import write_room_warc
from newsharvest_bench.bench_syndication import final_duplicates
from newsharvest_bench.crawlrun import (
    count_lines,
    crawl_command,
    crawl_env,
    kill_when,
    read_jsonl,
    run_to_end,
    stats_from_log,
)

WARC_10 = "WARC/1.0"  # what CC-NEWS files are written as
START = datetime(2024, 1, 1, 0, 0, tzinfo=UTC)
ACCENTED = " thé café "  # replaces " the " in the legacy-charset pages, body and JSON-LD alike


def replay_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "crawler.cli", "replay", *args, "--log-level", "INFO"]


def replay_env(workdir: Path, **extra: str) -> dict[str, str]:
    """A fresh state, index and output for one replay (what crawl_env gives a crawl)."""
    return crawl_env(workdir / "state", **extra)


def run_replay(workdir: Path, *args: str, **env: str) -> str:
    workdir.mkdir(parents=True, exist_ok=True)
    return run_to_end(replay_command(*args), replay_env(workdir, **env), workdir / "replay.log")


def index_rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM articles").fetchone()[0]


# --- the round trip: crawl with capture, replay into a fresh index ---------------------------


@pytest.mark.slow
def test_a_captured_crawl_replays_into_the_same_articles_and_dedup_decisions(
    tmp_path: Path,
) -> None:
    room = Newsroom(seed=3, n_domains=6, articles_per_domain=8)  # "wire" syndicates copies
    crawl_dir, replay_dir = tmp_path / "crawl", tmp_path / "replay"
    crawled_journal, replayed_journal = tmp_path / "crawled.jsonl", tmp_path / "replayed.jsonl"
    warc_dir = tmp_path / "warc"
    with NewsroomServer(room, port=0) as server:
        command = crawl_command(room.feed_urls, server.proxy_url, [
            f"HARVEST_JOURNAL_PATH={crawled_journal}", "WARC_CAPTURE_ENABLED=1",
            f"WARC_DIR={warc_dir}", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
        ])  # fmt: skip
        crawl_dir.mkdir()
        run_to_end(command, crawl_env(crawl_dir / "state"), crawl_dir / "crawl.log")
    log = run_replay(replay_dir, str(warc_dir / "*.warc.gz"), "--journal", str(replayed_journal))

    crawled = {item["url"]: item for item in read_jsonl(crawled_journal)}
    replayed = {item["url"]: item for item in read_jsonl(replayed_journal)}
    assert len(crawled) == len(read_jsonl(crawled_journal)) > 30
    assert replayed.keys() == crawled.keys()
    fields = ("text", "title", "published", "authors", "content_hash", "entry_url", "version",
              "feed_url", "guid", "notices_removed", "canonical_url")  # fmt: skip
    for url, item in crawled.items():
        assert {f: item.get(f) for f in fields} == {f: replayed[url].get(f) for f in fields}, url
    # The same dedup decisions: the same articles found to be copies of each other. Which copy
    # of a pair is the original follows each harvest's rule (a crawl: the earlier publication;
    # a replay: the earlier record, here the earlier fetch); the pairs are the same.
    crawled_groups = copy_groups(crawled.values())
    assert crawled_groups, "no copy to judge"
    assert copy_groups(replayed.values()) == crawled_groups
    flagged = [sum(1 for original in final_duplicates(list(items.values())).values() if original)
               for items in (crawled, replayed)]  # fmt: skip
    assert flagged[0] == flagged[1]
    stats = stats_from_log(log)
    assert stats["replay/skipped/non_html"] > 0  # the feeds and robots.txt in the capture
    assert stats["gc/frozen_objects"] > 10_000  # a real crawl process freezes its start-up heap
    assert index_rows(replay_dir / "state-index.sqlite3") == index_rows(
        crawl_dir / "state-index.sqlite3"
    )


CAPTURE_KILL_AFTER_LINES = 12  # of 48: mid-crawl, pages in flight and in the capture


@pytest.mark.slow
def test_a_capture_killed_and_restarted_replays_into_every_article_once(tmp_path: Path) -> None:
    """kill -9 during a crawl with capture, then a restart: the capture holds the pages in
    flight at the kill twice (fetched again), yet replays into each article once, as crawled."""
    room = Newsroom(seed=6, n_domains=4, articles_per_domain=12)
    journal, replayed_journal = tmp_path / "crawled.jsonl", tmp_path / "replayed.jsonl"
    warc_dir = tmp_path / "warc"
    env = crawl_env(tmp_path / "state", NEWSHARVEST_SINK_BATCH_SIZE="4")  # a gradual journal
    with NewsroomServer(room, port=0, delay=0.2) as server:
        command = crawl_command(room.feed_urls, server.proxy_url, [
            f"HARVEST_JOURNAL_PATH={journal}", "WARC_CAPTURE_ENABLED=1", f"WARC_DIR={warc_dir}",
            "CONCURRENT_REQUESTS_PER_DOMAIN=2",
        ])  # fmt: skip
        kill_when(command, env, tmp_path / "killed.log",
                  lambda: count_lines(journal) >= CAPTURE_KILL_AFTER_LINES, 60,
                  f"{CAPTURE_KILL_AFTER_LINES} articles in the journal")  # fmt: skip
        at_kill = count_lines(journal)
        run_to_end(command, env, tmp_path / "final.log")
    run_replay(tmp_path / "replay", str(warc_dir / "*.warc.gz"), "--journal", str(replayed_journal))

    crawled, replayed = read_jsonl(journal), read_jsonl(replayed_journal)
    assert at_kill < len(crawled), "the kill did not land mid-crawl"
    key = ("entry_url", "version")
    assert Counter(tuple(i[k] for k in key) for i in replayed) == Counter(
        tuple(i[k] for k in key) for i in crawled
    )  # every article, each once (the crawl's own exactly-once is tested elsewhere)
    texts = {tuple(i[k] for k in key): i["text"] for i in crawled}
    assert all(texts[tuple(i[k] for k in key)] == i["text"] for i in replayed)


def copy_groups(items: object) -> set[frozenset[str]]:
    """Articles linked by duplicate_of or supersedes (copy and original), as groups."""
    parent: dict[str, str] = {}

    def root(url: str) -> str:
        while parent.setdefault(url, url) != url:
            url = parent[url]
        return url

    for item in items:  # type: ignore[attr-defined]
        if item["duplicate_of"]:
            parent[root(item["canonical_url"])] = root(item["duplicate_of"])
        for copy in item.get("supersedes") or ():  # found to be copies after they were indexed
            parent[root(copy)] = root(item["canonical_url"])
    groups: dict[str, set[str]] = {}
    for url in parent:
        groups.setdefault(root(url), set()).add(url)
    return {frozenset(group) for group in groups.values() if len(group) > 1}


# --- a CC-NEWS-shaped file ---------------------------------------------------------------------


def _article_pages(n: int) -> list[tuple[str, str]]:
    room = Newsroom(seed=5, n_domains=2, articles_per_domain=n)
    found = []
    for page in room.articles()[:n]:
        parts = urlsplit(page.url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        status, _, body = room.render(parts.netloc, target)
        assert status == 200 and isinstance(body, bytes)
        found.append((page.url, body.decode("utf-8")))
    return found


def _legacy(html: str, charset: str) -> bytes:
    """The page in a legacy charset, saying so in its meta tag, with accented words added."""
    html = re.sub(r"charset=[\"']?utf-8[\"']?", f"charset={charset}", html, flags=re.I)
    html = html.replace(" the ", ACCENTED)
    return html.encode(charset, errors="xmlcharrefreplace")


HTTP_TYPES = {
    "response": "application/http; msgtype=response",
    "request": "application/http; msgtype=request",
    "revisit": "application/http; msgtype=response",
}
REVISIT_PROFILE = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"


def _cc_record(kind: str, url: str, block: bytes, when: datetime, **extra: str) -> bytes:
    content_type = HTTP_TYPES.get(kind, "application/warc-fields")
    record = OutRecord(kind, block, content_type, url, when, version=WARC_10,
                       extra=list(extra.items()))  # fmt: skip
    return record.serialize()


def write_cc_news(path: Path, compress: bool = True) -> dict[str, object]:
    """A file laid out like CC-NEWS: WARC/1.0, warcinfo, request + response pairs with HTTP/1.1
    headers, pages in UTF-8, windows-1252 and ISO-8859-1 (one gzip-encoded), non-HTML records,
    a revisit and a 404. Returns what a replay must find."""
    pages = _article_pages(6)
    records = [_cc_record("warcinfo", "", b"software: StormCrawler\r\n", START)]
    expected_urls = []
    for i, (url, html) in enumerate(pages):
        when = START + timedelta(hours=i)
        charset = ("utf-8", "windows-1252", "iso-8859-1")[i % 3]
        body = html.encode() if charset == "utf-8" else _legacy(html, charset)
        headers = [(b"Content-Type", f"text/html; charset={charset}".encode()),
                   (b"Server", b"nginx")]  # fmt: skip
        if i == 4:  # sent compressed, archived as sent
            body = gzip.compress(body)
            headers.append((b"Content-Encoding", b"gzip"))
        request = http_block(f"GET {urlsplit(url).path} HTTP/1.1", [(b"Host", b"x")], b"")
        records.append(_cc_record("request", url, request.data, when))
        response = response_record(url, 200, headers, body, date=when)
        response.version = WARC_10
        records.append(response.serialize())
        expected_urls.append(url)
    extras = [
        response_record("http://img.test/a.jpg", 200, [(b"Content-Type", b"image/jpeg")],
                        b"\xff\xd8\xff\xe0" + bytes(200), date=START),
        response_record("http://api.test/x.json", 200, [(b"Content-Type", b"application/json")],
                        b'{"a": 1}', date=START),
        response_record("http://gone.test/404", 404, [(b"Content-Type", b"text/html")],
                        b"<html><body>not found</body></html>", date=START),
    ]  # fmt: skip
    for record in extras:
        record.version = WARC_10
        records.append(record.serialize())
    revisit = http_block("HTTP/1.1 200 OK", [(b"Content-Type", b"text/html")], b"")
    refers = {"WARC-Profile": REVISIT_PROFILE, "WARC-Refers-To": new_record_id()}
    records.append(_cc_record("revisit", pages[0][0], revisit.data, START, **refers))
    data = b"".join(gzip_member(r) for r in records) if compress else b"".join(records)
    path.write_bytes(data)
    return {"urls": expected_urls, "skips": {"non_html": 2, "status_404": 1, "revisit": 1}}


@pytest.mark.parametrize(
    ("name", "compression", "reader"),
    [
        ("cc.warc.gz", "per record", "fastwarc"),
        ("cc.warc", "none", "warcio"),
        ("cc-gzipped-whole.warc.gz", "whole file", "fastwarc"),  # `gzip cc.warc`
    ],
)
def test_a_cc_news_shaped_file_replays_its_html_pages_and_counts_what_it_skips(
    tmp_path: Path, name: str, compression: str, reader: str
) -> None:
    path = tmp_path / name
    expected = write_cc_news(path, compress=compression == "per record")
    if compression == "whole file":
        path.write_bytes(gzip.compress(path.read_bytes()))
    journal = tmp_path / "out.jsonl"
    log = run_replay(tmp_path / "run", str(path), "--journal", str(journal),
                     NEWSHARVEST_REPLAY_READER=reader)  # fmt: skip
    items = read_jsonl(journal)
    stats = stats_from_log(log)
    assert sorted(item["url"] for item in items) == sorted(expected["urls"]), log[-3000:]
    for reason, count in expected["skips"].items():  # type: ignore[union-attr]
        assert stats.get(f"replay/skipped/{reason}") == count, (reason, stats)
    legacy = [item for item in items if ACCENTED in item["text"]]
    assert len(legacy) == 4, "windows-1252 / ISO-8859-1 pages decoded by their charset"
    assert not any("th\ufffd" in item["text"] or "thÃ" in item["text"] for item in items)
    assert all(item["entry_url"] and item["version"] == 1 for item in items)
    assert all(item["replay_key"].startswith("warc:<urn:uuid:") for item in items)
    assert {item["fetched_at"][:10] for item in items} == {"2024-01-01"}  # the WARC-Date


def member_ends(data: bytes) -> list[int]:
    """Where each gzip member of a gzip-per-record file ends."""
    ends, position = [], 0
    while position < len(data):
        decompressor = zlib.decompressobj(31)
        decompressor.decompress(data[position:])
        position = len(data) - len(decompressor.unused_data)
        ends.append(position)
    return ends


def test_a_file_cut_inside_its_last_record_replays_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "cut.warc.gz"
    expected = write_cc_news(path)
    data = path.read_bytes()
    # Cut inside the member of the last page's response (followed by 3 extras + the revisit).
    ends = member_ends(data)
    path.write_bytes(data[: ends[-5] - 50])
    journal = tmp_path / "out.jsonl"
    log = run_replay(tmp_path / "run", str(path), "--journal", str(journal))
    urls = [item["url"] for item in read_jsonl(journal)]
    assert sorted(urls) == sorted(expected["urls"][:-1])  # type: ignore[index]
    assert stats_from_log(log).get("replay/skipped/truncated") == 1


def test_a_page_archived_twice_in_a_file_is_replayed_once(tmp_path: Path) -> None:
    """The same records twice in one file (an archive concatenated with itself; a capture that
    fetched an article again in the same run): the copies share a replay key, and a key is
    claimed once. Copies in one batch of the reader were both sent on, each output once."""
    path = tmp_path / "twice.warc.gz"
    expected = write_cc_news(path)
    path.write_bytes(path.read_bytes() * 2)
    journal = tmp_path / "out.jsonl"
    log = run_replay(tmp_path / "run", str(path), "--journal", str(journal))
    got = Counter(item["url"] for item in read_jsonl(journal))
    assert got == Counter(expected["urls"]), got  # type: ignore[arg-type]
    stats = stats_from_log(log)
    skipped = stats.get("replay/skipped/repeated", 0) + stats.get("replay/skipped/done", 0)
    assert skipped == len(expected["urls"]), stats  # type: ignore[arg-type]
    assert stats.get("replay/skipped/repeated", 0) > 0  # the copies did meet in one batch


def test_filters_choose_by_domain_date_and_count(tmp_path: Path) -> None:
    path = tmp_path / "cc.warc.gz"
    expected = write_cc_news(path)
    urls: list[str] = expected["urls"]  # type: ignore[assignment]
    domain = urlsplit(urls[0]).hostname or ""
    cases = {
        ("--domain", domain): [u for u in urls if urlsplit(u).hostname == domain],
        ("--since", "2024-01-01T02:00:00Z", "--until", "2024-01-01T04:00:00Z"): urls[2:4],
        ("--limit", "2"): urls[:2],
    }
    for n, (args, want) in enumerate(cases.items()):
        journal = tmp_path / f"out-{n}.jsonl"
        run_replay(tmp_path / f"run-{n}", str(path), "--journal", str(journal), *args)
        assert sorted(item["url"] for item in read_jsonl(journal)) == sorted(want), args


@contextlib.contextmanager
def loopback_server(handler: Any) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 in a thread (tests never leave the machine): its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


def test_a_remote_warc_is_streamed_over_http(tmp_path: Path) -> None:
    """Over a loopback server (tests never leave the machine), as from data.commoncrawl.org."""
    served = tmp_path / "served"
    served.mkdir()
    expected = write_cc_news(served / "CC-NEWS-20240101000000-00000.warc.gz")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    with loopback_server(handler) as base:
        listing = tmp_path / "warc.paths"
        listing.write_text(f"{base}/CC-NEWS-20240101000000-00000.warc.gz\n")
        journal = tmp_path / "out.jsonl"
        run_replay(tmp_path / "run", str(listing), "--journal", str(journal), "--limit", "2")
        # Again: it resumes past what is done (this server ignores Range: read up to there).
        log = run_replay(tmp_path / "run", str(listing), "--journal", str(journal))
    urls = [item["url"] for item in read_jsonl(journal)]
    assert sorted(urls) == sorted(expected["urls"])  # type: ignore[arg-type]
    resumed = re.search(r"replaying \S+ from offset (\d+)", log)
    assert resumed and int(resumed.group(1)) > 0


def test_a_remote_warc_gzipped_whole_ends_with_a_reason_and_is_not_opened_again(
    tmp_path: Path,
) -> None:
    """Streamed, a WARC gzipped whole cannot be read record by record: the replay says so
    (a `broken` skip and the reason in the log) at once, without reconnections that could
    not help, and keeps what it read before."""
    served = tmp_path / "served"
    served.mkdir()
    plain = tmp_path / "cc.warc"
    write_cc_news(plain, compress=False)
    (served / "gzipped-whole.warc.gz").write_bytes(gzip.compress(plain.read_bytes()))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    journal = tmp_path / "out.jsonl"
    with loopback_server(handler) as base:
        log = run_replay(tmp_path / "run", f"{base}/gzipped-whole.warc.gz", "--journal",
                         str(journal), NEWSHARVEST_REPLAY_REMOTE_RETRY_SECONDS="30")  # fmt: skip
    assert "not one member per record" in log
    assert "opening it again" not in log  # a reconnection would have waited 30 s first
    assert stats_from_log(log).get("replay/skipped/broken") == 1


class RangeArchiveHandler(http.server.BaseHTTPRequestHandler):
    """Serves one file with Range support (`bytes=A-` and `bytes=A-B`), as Common Crawl's
    server does; `requests` keeps the Range header of each request, in order."""

    body = b""
    requests: list[str | None] = []
    accept_ranges = True  # says so in each answer (the first one has no Range to answer)

    def do_GET(self) -> None:
        asked = self.headers.get("Range")
        type(self).requests.append(asked)
        if not self.fault():
            start, stop = self.span(asked)
            self.send_response(206 if asked else 200)
            if asked:
                self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{len(self.body)}")
            if self.accept_ranges:
                self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(stop - start))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.write(self.body[start:stop])  # a client that seeks far hangs up midway
        self.close_connection = True

    def span(self, asked: str | None) -> tuple[int, int]:
        found = re.fullmatch(r"bytes=(\d+)-(\d*)", asked or "bytes=0-")
        assert found, asked
        stop = int(found[2]) + 1 if found[2] else len(self.body)
        return int(found[1]), min(stop, len(self.body))

    def fault(self) -> bool:
        """Answer this request wrongly instead (subclasses)."""
        return False

    def write(self, part: bytes) -> None:
        self.wfile.write(part)

    def log_message(self, *args: object) -> None:
        pass


class FlakyArchiveHandler(RangeArchiveHandler):
    """The first answer is cut off halfway (the connection closes inside the body, as a reset
    or a proxy timeout does), and a 503 comes next."""

    accept_ranges = False

    def fault(self) -> bool:
        if len(type(self).requests) == 2:
            self.send_error(503, "Slow Down")
            return True
        return False

    def write(self, part: bytes) -> None:
        self.wfile.write(part[: len(part) // 2] if len(type(self).requests) == 1 else part)


def test_a_remote_warc_whose_connection_fails_is_opened_again_where_it_stopped(
    tmp_path: Path,
) -> None:
    archive = tmp_path / "CC-NEWS-20240101000000-00000.warc.gz"
    expected = write_cc_news(archive)
    handler = type(
        "Handler", (FlakyArchiveHandler,), {"body": archive.read_bytes(), "requests": []}
    )
    journal = tmp_path / "out.jsonl"
    with loopback_server(handler) as base:
        log = run_replay(tmp_path / "run", f"{base}/{archive.name}", "--journal", str(journal),
                         NEWSHARVEST_REPLAY_REMOTE_RETRY_SECONDS="0.05")  # fmt: skip
    urls = [item["url"] for item in read_jsonl(journal)]
    assert sorted(urls) == sorted(expected["urls"])  # type: ignore[arg-type]  # each once
    assert re.search(r"opening it again at offset [1-9]\d* in 0.05 s \(1/5\)", log)
    assert "in 0.1 s (2/5)" in log
    # The resumed answer (206) says the server answers ranges: at the end of the file, the
    # file's first bytes are asked for (its layout) to look for records a reader ran over.
    first, throttled, resumed, *rest = handler.requests
    assert first is None and throttled == resumed and rest == ["bytes=0-7"]
    assert resumed is not None and int(resumed[len("bytes=") : -1]) > 0  # not from the start
    assert "replay/skipped/broken" not in stats_from_log(log)


@contextlib.contextmanager
def served_archive(body: bytes) -> Iterator[tuple[str, list[Any]]]:
    """`body` on a loopback server that answers ranges: its URL and the Range of each request."""
    requests: list[str | None] = []
    handler = type("Handler", (RangeArchiveHandler,), {"body": body, "requests": requests})
    with loopback_server(handler) as base:
        yield f"{base}/archive.warc.gz", requests


RANDOM_STREAM_OPERATIONS = 400


def test_a_remote_stream_reads_and_seeks_as_a_local_file_does() -> None:
    """Random reads, lines and seeks (back into what it keeps, a little ahead, far either
    way) give the bytes a local file gives; only the far seeks open the file again."""
    rng = random.Random(20)
    size = 3 * WINDOW_BYTES
    body = bytes(rng.choice(b"ab\n\r\x1f\x8b") for _ in range(size))
    local = io.BytesIO(body)
    far_seeks = 0
    with served_archive(body) as (url, requests):
        remote = RemoteStream(url, "test")
        for _ in range(RANDOM_STREAM_OPERATIONS):
            kind = rng.choice(["read", "read", "readline", "seek_near", "seek_far", "read_all"])
            if kind in ("read", "readline"):
                count = rng.choice([0, 1, 7, 4096, 70_000])
                assert getattr(remote, kind)(count) == getattr(local, kind)(count), kind
            elif kind == "read_all" and rng.random() < 0.05:
                assert remote.read() == local.read()
            else:
                here = local.tell()
                target = (max(0, here - rng.randrange(WINDOW_BYTES)) if kind == "seek_near"
                          else rng.randrange(size))  # fmt: skip
                kept_from = remote.position - len(remote.window)
                near = kept_from <= target <= remote.position + WINDOW_BYTES
                far_seeks += not near
                assert remote.seek(target) == local.seek(target)
            assert remote.tell() == local.tell()
        remote.close()
    assert len(requests) == 1 + far_seeks  # the window and reading on cost no request


class MisplacedRangeHandler(RangeArchiveHandler):
    """Answers every range from the file's start (and says so in Content-Range)."""

    def span(self, asked: str | None) -> tuple[int, int]:
        return 0, len(self.body)


def test_a_range_answered_from_another_offset_is_refused() -> None:
    """Every record offset would be wrong (resume points, the search for the next record):
    the answer is a failed connection, not a file read from the wrong place."""
    body = b"0123456789" * 100
    handler = type("Handler", (MisplacedRangeHandler,), {"body": body, "requests": []})
    with loopback_server(handler) as base:
        assert RemoteStream(f"{base}/a.warc.gz", "test").read(10) == body[:10]  # no range asked
        with pytest.raises(ConnectionError, match="asked for bytes 500-, the server answered "
                                                  "bytes 0-999/1000"):  # fmt: skip
            RemoteStream(f"{base}/a.warc.gz", "test", 500)
    with served_archive(body) as (url, _):
        stream = RemoteStream(url, "test", 500)
        assert (stream.size, stream.read(10)) == (1000, body[500:510])


class DrippingHandler(RangeArchiveHandler):
    """Sends the start of the file, then a byte at a time, DRIP_SECONDS apart (each wait well
    within any socket timeout)."""

    def write(self, part: bytes) -> None:
        self.wfile.write(part[:DRIP_AFTER_BYTES])
        for byte in part[DRIP_AFTER_BYTES:]:
            time.sleep(DRIP_SECONDS)
            self.wfile.write(bytes([byte]))
            self.wfile.flush()


DRIP_AFTER_BYTES, DRIP_SECONDS = 4096, 0.05


def test_a_connection_that_drips_is_a_failed_one_and_a_slow_reader_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under STALL_MIN_BYTES per STALL_SECONDS spent waiting on it, a connection counts as
    failed (the feeder opens it again, and at last gives up) instead of holding the replay
    for ever; time the reader spends elsewhere (a full pipeline) does not count."""
    monkeypatch.setattr(remote, "STALL_SECONDS", 0.5)
    monkeypatch.setattr(remote, "STALL_MIN_BYTES", 1024)
    body = bytes(range(256)) * 64
    handler = type("Handler", (DrippingHandler,), {"body": body, "requests": []})
    with loopback_server(handler) as base:
        stream = RemoteStream(f"{base}/a.warc.gz", "test")
        assert stream.read(DRIP_AFTER_BYTES) == body[:DRIP_AFTER_BYTES]
        started = time.monotonic()
        with pytest.raises(ConnectionError, match="the connection stalls"):
            stream.read(1024)
        assert time.monotonic() - started < 10 * 0.5  # not the 51 s the drip would take
        assert isinstance(stream.failure, ConnectionError)
        stream.close()
    with served_archive(body) as (url, _):
        stream = RemoteStream(url, "test")
        assert stream.read(1000) == body[:1000]
        time.sleep(0.6)  # the reader busy elsewhere, longer than STALL_SECONDS
        assert stream.read(10) == body[1000:1010]
        stream.close()


Damage = bytes | Callable[[bytes], bytes]  # a stretch to put in a record's place, or a damage


def _archive_with_damage(stretch: Damage) -> tuple[bytes, list[str], list[int]]:
    """Six gzip-per-record responses (article pages), the third replaced by `stretch` (or
    damaged by it): the archive, the pages' URLs, and where each record starts."""
    pages = _article_pages(6)
    members = [gzip_member(response_record(url, 200, [(b"Content-Type", b"text/html")],
                                           html.encode()).serialize())
               for url, html in pages]  # fmt: skip
    members[2] = stretch(members[2]) if callable(stretch) else stretch
    starts = list(itertools.accumulate(map(len, members), initial=0))
    return b"".join(members), [url for url, _ in pages], starts


def _flipped(member: bytes) -> bytes:
    flipped = bytearray(member)
    for i in range(20, len(flipped) - 12, 7):
        flipped[i] ^= 0x55
    return bytes(flipped)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("stretch", ["bit_flips", "long_garbage"])
def test_a_damaged_record_of_a_remote_warc_costs_only_itself(reader: str, stretch: str) -> None:
    """As in a local file: one BROKEN skip where reading goes on, every other page read. The
    long stretch (3x what the stream keeps behind it) is searched as it streams by."""
    damage = _flipped if stretch == "bit_flips" else b"\x00garbage" * (3 * WINDOW_BYTES // 8)
    archive, urls, starts = _archive_with_damage(damage)
    with served_archive(archive) as (url, requests):
        stream = RemoteStream(url, "test")
        found = list(source_pages(stream, url, reader, 1 << 24))
        stream.close()
    assert [p.url for p in found if isinstance(p, Page)] == urls[:2] + urls[3:]
    assert [(p.reason, p.offset) for p in found if isinstance(p, Skip)] == [(BROKEN, starts[3])]
    assert len(requests) <= 4, requests  # a few ranges, not a reconnection per candidate


@pytest.mark.parametrize("where", ["local", "remote"])
def test_a_warc_damaged_in_the_middle_and_at_its_end_loses_only_the_damaged_records(
    tmp_path: Path, where: str
) -> None:
    """End to end (the feeder, the spider, the journal): damage in the middle costs only its
    record (the record reading goes on at shares its offset with the damage's skip, and is
    replayed too); damage with no record after it ends the file, searched once: opening it
    again could not help, so no reconnection (each would wait 30 s here)."""
    archive, urls, _ = _archive_with_damage(_flipped)
    archive += b"\x00garbage" * 50
    local = tmp_path / "damaged.warc.gz"
    local.write_bytes(archive)
    journal = tmp_path / "out.jsonl"
    with served_archive(archive) as (url, _):
        log = run_replay(tmp_path / "run", url if where == "remote" else str(local), "--journal",
                         str(journal), NEWSHARVEST_REPLAY_REMOTE_RETRY_SECONDS="30")  # fmt: skip
    assert sorted(item["url"] for item in read_jsonl(journal)) == sorted(urls[:2] + urls[3:])
    assert "opening it again" not in log
    assert stats_from_log(log).get("replay/skipped/broken") == 2


# --- kill -9 during a replay --------------------------------------------------------------------

KILL_AFTER_LINES = 100  # of ~190: late enough for a checkpoint to have landed
# Small sink batches and few pages in flight: the journal grows ten lines at a time and the
# resume offsets move with it, so the kill lands mid-replay however fast the machine is (with
# the defaults, one batch of 200 can finish the replay between two looks at the journal).
GRADUAL = {"NEWSHARVEST_SINK_BATCH_SIZE": "10", "NEWSHARVEST_REPLAY_MAX_IN_FLIGHT": "20",
           "NEWSHARVEST_REPLAY_CHECKPOINT_SECONDS": "0.1"}  # fmt: skip


def archive_and_truth(tmp_path: Path, room: Newsroom | None = None) -> tuple[Path, Counter[str]]:
    """A WARC of the room (default 5 domains x 40 articles), and the truth: what one
    uninterrupted replay (own state, embedded) outputs of it."""
    warc = tmp_path / "fixture.warc.gz"
    write_room_warc(room or Newsroom(seed=2, n_domains=5, articles_per_domain=40), warc)
    reference = tmp_path / "reference.jsonl"
    run_replay(tmp_path / "reference", str(warc), "--journal", str(reference),
               NEWSHARVEST_EXTRACT_WORKERS="0")  # fmt: skip
    return warc, Counter(item["url"] for item in read_jsonl(reference))


@pytest.mark.slow
@pytest.mark.parametrize("store", ["embedded", "redis"])
def test_kill_9_during_replay_then_restart_loses_nothing_and_repeats_nothing(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    warc, truth = archive_and_truth(tmp_path)
    extra = {"NEWSHARVEST_EXTRACT_WORKERS": "0", **GRADUAL}
    if store == "redis":
        extra["NEWSHARVEST_REDIS_URL"] = request.getfixturevalue("redis_url")
        extra["NEWSHARVEST_REDIS_KEY_PREFIX"] = request.getfixturevalue("redis_prefix")

    journal = tmp_path / "out.jsonl"
    workdir = tmp_path / "run"
    workdir.mkdir()
    env = replay_env(workdir, **extra)
    command = replay_command(str(warc), "--journal", str(journal))
    kill_when(command, env, workdir / "killed.log",
              lambda: count_lines(journal) >= KILL_AFTER_LINES, 60,
              f"{KILL_AFTER_LINES} articles in the journal")  # fmt: skip
    at_kill = count_lines(journal)
    log = run_to_end(command, env, workdir / "final.log")

    items = read_jsonl(journal)
    got = Counter(item["url"] for item in items)
    assert at_kill < sum(truth.values()), "the kill did not land mid-replay"
    assert [u for u, n in got.items() if n > 1] == [], "an article was output twice"
    assert got == truth, ("lost", set(truth) - set(got))
    resumed = re.search(r"replaying \S+ from offset (\d+)", log)
    assert resumed and int(resumed.group(1)) > 0, "the restart did not seek ahead"
    stats = stats_from_log(log)
    print(f"{store}: {sum(truth.values())} articles, {at_kill} at the kill, resumed at offset "
          f"{resumed.group(1)}; re-read and skipped as done {stats.get('replay/skipped/done', 0)},"
          f" reconciled {stats.get('journal/reconciled', 0)}")  # fmt: skip


def test_a_replay_killed_between_an_output_mark_and_its_line_outputs_the_article_on_restart(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """The window of the kill test above, made exact: the killed replay (another worker name,
    host:pid) had claimed pages, marked some as being output, and written the line of one of
    them. The restart outputs the marked page whose line was never written (it was skipped
    as done, lost, when its claim stayed pending for the dead writer), does not output the
    written one again, and leaves nothing pending."""
    import asyncio

    from crawler.core.journal_files import journal_location
    from crawler.core.keys import RedisKeys
    from crawler.ledger import Entry, LedgerConfig, RedisHarvestState
    from crawler.spiders.replay import KEY_PREFIX

    path = tmp_path / "cc.warc.gz"
    expected = write_cc_news(path)
    with path.open("rb") as stream:
        found = [p for p in source_pages(stream, str(path), "fastwarc", 1 << 24)
                 if isinstance(p, Page)]  # fmt: skip
    assert [page.url for page in found] == expected["urls"] and not found[0].metadata
    keys = [f"{KEY_PREFIX}{page.record_id}" for page in found]
    journal = tmp_path / "out.jsonl"
    written = {"url": found[0].url, "replay_key": keys[0]}  # killed before its done mark
    journal.write_text(json.dumps(written) + "\n")

    async def killed_replay() -> None:
        state = RedisHarvestState(LedgerConfig(), redis_url, RedisKeys(redis_prefix),
                                  owner="replayhost:4242/killed")  # fmt: skip
        await state.open()
        try:
            await state.heartbeat()  # killed a moment ago: it still looks alive
            await state.register_journal(journal_location(journal))
            now = time.time()
            await state.claim_entries([Entry(key, None, {}) for key in keys[:3]], now)
            for key in keys[:2]:  # keys[1]: marked, killed before its line; keys[2]: in flight
                assert await state.output_started(key, 1)
        finally:
            await state.client.aclose()  # no clean close: it was killed

    asyncio.run(killed_replay())
    log = run_replay(tmp_path / "run", str(path), "--journal", str(journal),
                     NEWSHARVEST_REDIS_URL=redis_url,
                     NEWSHARVEST_REDIS_KEY_PREFIX=redis_prefix)  # fmt: skip
    got = Counter(item["url"] for item in read_jsonl(journal))
    assert got == Counter(expected["urls"]), ("lost", set(expected["urls"]) - set(got), got)
    stats = stats_from_log(log)
    assert stats.get("journal/reconciled") == 1 and stats.get("replay/recovered") == 2, stats
    assert stats.get("replay/skipped/done") == 1  # the written page: output once


def test_an_unknown_or_missing_reader_is_refused_before_the_replay_starts(tmp_path: Path) -> None:
    from crawler.warc.records import check_reader
    from tests.support.commands import newsharvest

    with pytest.raises(ValueError, match="unknown WARC reader 'nope'"):
        check_reader("nope")
    archive = tmp_path / "empty.warc.gz"
    archive.write_bytes(b"")
    env = {"NEWSHARVEST_REPLAY_READER": "nope", "NEWSHARVEST_STATE_DIR": str(tmp_path / "s")}
    result = newsharvest("replay", str(archive), env=env)
    assert result.returncode == 2
    assert result.stderr == (  # the settings check at start (settings/check.py) says it first
        "newsharvest replay: error: REPLAY_READER='nope' (from environment variable "
        "NEWSHARVEST_REPLAY_READER): must be one of 'fastwarc', 'warcio'\n"
    )


# --- a replay in several processes ---------------------------------------------------------


def shard_journals(journal: Path) -> list[Path]:
    return sorted(journal.parent.glob(f"{journal.stem}-*of*{journal.suffix}"))


@pytest.mark.slow
def test_a_replay_in_two_processes_outputs_every_article_once_split_by_domain(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    from crawler.warc.replay import shard_of

    warc, truth = archive_and_truth(tmp_path, Newsroom(seed=3, n_domains=6, articles_per_domain=15))

    journal = tmp_path / "out.jsonl"
    log = run_replay(tmp_path / "sharded", str(warc), "--journal", str(journal),
                     "--processes", "2", NEWSHARVEST_REDIS_URL=redis_url,
                     NEWSHARVEST_REDIS_KEY_PREFIX=redis_prefix)  # fmt: skip

    journals = shard_journals(journal)
    assert [path.name for path in journals] == ["out-0of2.jsonl", "out-1of2.jsonl"]
    per_shard = [read_jsonl(path) for path in journals]
    got = Counter(item["url"] for items in per_shard for item in items)
    assert got == truth and max(got.values()) == 1
    for index, items in enumerate(per_shard):  # each domain in the process it hashes to
        assert items and {shard_of(item["domain"], 2) for item in items} == {index}
    assert "replay 0/2:" in log and "replay 1/2:" in log


@pytest.mark.slow
def test_kill_9_of_a_two_process_replay_then_restart_loses_nothing_and_repeats_nothing(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """The parent killed with SIGKILL takes its shards with it (no old shard keeps running
    beside the restarted replay); the restart resumes each shard where it stopped."""
    warc, truth = archive_and_truth(tmp_path)

    journal = tmp_path / "out.jsonl"
    workdir = tmp_path / "run"
    workdir.mkdir()
    env = replay_env(
        workdir,
        NEWSHARVEST_EXTRACT_WORKERS="0",
        NEWSHARVEST_REDIS_URL=redis_url,
        NEWSHARVEST_REDIS_KEY_PREFIX=redis_prefix,
        **GRADUAL,
    )
    command = replay_command(str(warc), "--journal", str(journal), "--processes", "2")

    def journalled() -> int:
        return sum(count_lines(path) for path in shard_journals(journal))

    def both_under_way() -> bool:  # each shard has output half as much as the single replay
        counts = [count_lines(path) for path in shard_journals(journal)]
        return len(counts) == 2 and min(counts) >= KILL_AFTER_LINES // 2

    kill_when(command, env, workdir / "killed.log", both_under_way, 60,
              f"{KILL_AFTER_LINES // 2} articles in each journal")  # fmt: skip
    at_kill = journalled()
    time.sleep(1.0)  # the shards die with their parent: nothing is written after the kill
    assert journalled() == at_kill, "a shard outlived the killed replay"
    log = run_to_end(command, env, workdir / "final.log")

    got = Counter(item["url"] for path in shard_journals(journal) for item in read_jsonl(path))
    assert at_kill < sum(truth.values()), "the kill did not land mid-replay"
    assert [u for u, n in got.items() if n > 1] == [], "an article was output twice"
    assert got == truth, ("lost", set(truth) - set(got))
    # Each shard resumes past where it started, or (if it had read its pages to the end of
    # the file before the kill, as a shard with fewer articles can) does not read it again.
    resumed = [int(o) for o in re.findall(r"replaying \S+ from offset (\d+)", log)]
    finished = re.findall(r"skipping \S+: read to its end by an earlier run", log)
    assert len(resumed) + len(finished) == 2 and all(offset > 0 for offset in resumed), log[-3000:]


def test_filters_that_cannot_be_read_or_select_nothing_are_refused(tmp_path: Path) -> None:
    from tests.support.commands import newsharvest

    archive = tmp_path / "empty.warc.gz"
    archive.write_bytes(b"")
    env = {"NEWSHARVEST_STATE_DIR": str(tmp_path / "s"), "NEWSHARVEST_REDIS_URL": ""}
    for options, said in [
        (["--limit", "0"], "--limit must be 1 or more"),
        (["--since", "yesterday"], "--since: Invalid isoformat string"),
        (["--since", "2026-02-01", "--until", "2026-01-01"], "--until (2026-01-01) must be after"),
    ]:
        refused = newsharvest("replay", str(archive), *options, env=env)
        assert refused.returncode == 2 and said in refused.stderr, (options, refused.stderr)
    folder = newsharvest("replay", str(tmp_path), env=env)
    assert folder.returncode == 2 and "is a directory: name its files" in folder.stderr


def test_processes_need_redis_and_no_limit(tmp_path: Path) -> None:
    from tests.support.commands import newsharvest

    archive = tmp_path / "empty.warc.gz"
    archive.write_bytes(b"")
    env = {"NEWSHARVEST_STATE_DIR": str(tmp_path / "s"), "NEWSHARVEST_REDIS_URL": ""}
    alone = newsharvest("replay", str(archive), "--processes", "2", env=env)
    assert alone.returncode == 2 and "--processes needs REDIS_URL" in alone.stderr
    env["NEWSHARVEST_REDIS_URL"] = "redis://127.0.0.1:6379/15"
    limited = newsharvest("replay", str(archive), "--processes", "2", "--limit", "5", env=env)
    assert limited.returncode == 2 and "--limit counts the pages of one process" in limited.stderr
    wrong = newsharvest("replay", str(archive), "--shard", "2/2", env=env)
    assert wrong.returncode == 2 and "INDEX must be within 0 .. COUNT-1" in wrong.stderr


# --- which copy is the original: archive order, whatever the workers and processes -----------


@pytest.mark.slow
def test_one_warc_gives_every_article_the_same_duplicate_of_with_any_workers_and_processes(
    tmp_path: Path, redis_url: str
) -> None:
    """Originals each followed by a plainer syndicated copy (extracted sooner: on a
    first-come basis the copy won the race): replayed in 1 and 2 processes with 0, 1 and 2
    extraction workers, every article ends with the same `duplicate_of`, every copy names its
    original, and no original names its copy."""
    from newsharvest_bench.bench_syndication import (
        fixture_originals,
        interleave,
        replay,
        write_warc,
    )

    sources = interleave(fixture_originals(3, 10))
    warc = tmp_path / "syndication.warc.gz"
    write_warc(sources, warc)
    copies = {source.url: source.copy_of for source in sources if source.copy_of}
    assert len(copies) >= 5
    verdicts = {}
    for processes, workers in [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]:
        items = replay(warc, workers, processes, redis_url, tmp_path / f"{processes}-{workers}")
        verdicts[processes, workers] = final_duplicates(items)
    first = verdicts[1, 0]
    assert all(found == first for found in verdicts.values())
    assert {url: first[url] for url in copies} == copies
    assert not any(first[original] for original in copies.values())
