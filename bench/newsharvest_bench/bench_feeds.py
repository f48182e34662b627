"""`newsharvest bench feeds`: our feed parser against the ones a user would otherwise pick,
measured in one run: feedparser, and feedparser-rs (a Rust parser with feedparser's API).

1. Conformance on feedparser's own test corpus (`newsharvest_bench.feed_conformance`). Every
   parser's result is put in the project's entry shape by the same layer (link choice, http(s)
   links only, text from HTML, dates in UTC), then judged on the same translated expectations.
2. Speed: parse time per feed on the corpus files and on generated 500-item RSS and 500-entry
   Atom feeds with HTML summaries (median of --repeat runs), and its ratio to feedparser's.
   Peers are timed bare (their own parse, without our layer): what a user would call.
3. Peak memory and safety: one subprocess per parser and input, measuring the growth of its
   peak RSS over the baseline after imports and reading the input (C and Rust allocations
   included): the 500-entry feeds, the corpus, an 8 MB feed, and hostile inputs (billion laughs,
   quadratic blowup, XXE towards a canary file and a loopback listener, 100,000-deep nesting,
   an 8 MB description). A child still running after --timeout is a hang.

Peers come from the `peers` extra (`pip install -e './bench[peers]'`); a missing one is reported
and skipped. Nothing is written into the checkout: generated inputs go to a temporary directory.
"""

from __future__ import annotations

import argparse
import calendar
import ctypes
import io
import json
import random
import resource
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from newsharvest_bench.bench_extraction import PEER_INSTALL_HINT

OURS = "newsharvest"
PEERS = {"feedparser": "feedparser", "feedparser-rs": "feedparser_rs"}  # name -> module
BASELINE = "feedparser"  # speed ratios are against it
FEED_URL = "https://news.example.com/feed"
GENERATED_ENTRIES = 500
DEFAULT_REPEAT = 7
DEFAULT_TIMEOUT_S = 60.0
BIG_FEED_BYTES = 8 * 1024 * 1024
DEEP_LEVELS = 100_000
LAUGHS_LEVELS = 9  # 10**9 "lol"s if expanded
QUADRATIC_CHARS = 50_000  # one entity this long, referenced this often: 2.5 GB if expanded
KIB = 1024
TINY_FEED = b'<rss version="2.0"><channel><title>t</title><item><link>http://a.example/x</link>'\
    b"<description>&lt;p&gt;x&lt;/p&gt;</description></item></channel></rss>"  # fmt: skip


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "feeds", help="feed parser conformance, speed, memory and safety against its peers"
    )
    parser.add_argument(
        "--corpus", type=Path, default=None,
        help="feedparser's conformance corpus (default: found beside the checkout)",
    )  # fmt: skip
    parser.add_argument(
        "--peers", default=",".join(PEERS),
        help=f"comma-separated peers to measure (known: {', '.join(PEERS)})",
    )  # fmt: skip
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT, help="timed runs per feed")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help="seconds before a parser on one input counts as hung")  # fmt: skip
    parser.add_argument("--skip-hostile", action="store_true", help="no memory/hostile section")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from newsharvest_bench.feed_conformance import find_corpus, load_cases

    parsers = [OURS, *_available_peers(args.peers)]
    corpus = args.corpus or find_corpus()
    cases = load_cases(corpus) if corpus else []
    if corpus is None:
        print("conformance corpus not found (pass --corpus): corpus sections skipped\n")
    else:
        print(f"corpus: {len(cases)} feeds with an expectation\n")
        report_conformance(parsers, cases)
    report_speed(parsers, cases, args.repeat)
    if not args.skip_hostile:
        report_memory_and_safety(parsers, corpus, args.timeout)
    return 0


def _available_peers(requested: str) -> list[str]:
    peers = []
    for name in (peer.strip() for peer in requested.split(",") if peer.strip()):
        if name not in PEERS:
            raise SystemExit(f"unknown peer {name!r}; known: {', '.join(PEERS)}")
        try:
            __import__(PEERS[name])
        except ImportError as error:
            print(f"peer {name} not measured ({error}); install with: {PEER_INSTALL_HINT}")
            continue
        peers.append(name)
    return peers


# --- the parsers ------------------------------------------------------------------------------

RawParser = Callable[[bytes, str], Any]


def raw_parser(name: str) -> RawParser:
    """The parser as a user calls it, given the body and the feed's URL."""
    if name == OURS:
        from crawler.feedparse import parse_feed

        return lambda body, url: parse_feed(body, url)
    if name == "feedparser":
        import feedparser

        # A bare bytes argument may be read as a file name: feedparser's docs say to wrap
        # untrusted input. The URL goes in as Content-Location, its base for relative links.
        return lambda body, url: feedparser.parse(
            io.BytesIO(body), response_headers={"content-location": url}
        )
    if name == "feedparser-rs":
        import feedparser_rs

        return lambda body, url: feedparser_rs.parse(body)  # bytes: never fetched
    raise ValueError(name)


def _get(obj: Any, key: str) -> Any:
    """A field of feedparser's dicts or feedparser-rs's objects."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(key)
    value = getattr(obj, key, None)
    if value is None and callable(getattr(obj, "get", None)):
        try:
            value = obj.get(key)
        except (KeyError, TypeError):
            return None
    return value


def peer_view(name: str) -> Callable[[Any], Any]:
    """A peer's result in our entry shape, by the same layer our parser applies."""
    from crawler.feedparse import document_base
    from newsharvest_bench.feed_conformance import ParsedView

    parse = raw_parser(name)

    def view(case: Any) -> ParsedView:
        base = document_base(case.url, case.content_location)
        try:
            result = parse(case.body, base)
        except Exception as error:  # a peer's crash fails the case, not the benchmark
            return ParsedView(None, [], f"{type(error).__name__}: {error}")
        entries = [_peer_entry(entry, base) for entry in _get(result, "entries") or []]
        return ParsedView(_peer_text(_get(result, "feed"), "title"), entries)

    return view


def _peer_entry(entry: Any, base: str) -> Any:
    from crawler.feedparse import FeedEntry, http_link

    alternates = [
        _get(link, "href")
        for link in _get(entry, "links") or []
        if (_get(link, "rel") or "alternate") == "alternate"
    ]
    candidates = [_get(entry, "feedburner_origlink"), *alternates, _get(entry, "link")]
    link = next((url for url in (http_link(base, c) for c in candidates) if url), "")
    authors = [_get(person, "name") for person in _get(entry, "authors") or []]
    published = _utc(_get(entry, "published_parsed"))
    updated = _utc(_get(entry, "updated_parsed"))
    return FeedEntry(
        link=link,
        title=_peer_text(entry, "title"),
        guid=_get(entry, "id") or link or None,
        published=published or updated,
        updated=updated or published,
        authors=[name for name in authors if name] or _peer_names(entry),
        summary=_peer_text(entry, "summary"),
    )


def _peer_names(entry: Any) -> list[str]:
    name = _get(_get(entry, "author_detail"), "name") or _get(entry, "author")
    return [name] if name else []


def _peer_text(obj: Any, key: str) -> str | None:
    """The value as text: read as HTML unless the peer says it is plain text."""
    from crawler.feedparse import clip_text, html_to_text

    value = _get(obj, key)
    if not isinstance(value, str):
        return None
    media_type = _get(_get(obj, f"{key}_detail"), "type") or "text/html"
    return clip_text(value if media_type == "text/plain" else html_to_text(value))


def _utc(parsed: Any) -> datetime | None:
    try:
        return datetime.fromtimestamp(calendar.timegm(tuple(parsed)[:9]), UTC) if parsed else None
    except (TypeError, ValueError, OverflowError):
        return None


# --- 1. conformance ---------------------------------------------------------------------------


def report_conformance(parsers: list[str], cases: list[Any]) -> None:
    from crawler.cli.table import render_table
    from newsharvest_bench.feed_conformance import (
        FAIL,
        NO_LINK,
        PASS,
        our_view,
        run_conformance,
        select_cases,
    )

    selected, unselected = select_cases(cases)
    reports = {}
    for name in parsers:
        view = our_view if name == OURS else peer_view(name)
        reports[name] = run_conformance(selected, view, unselected)
    print(f"conformance: {len(selected)} cases selected (about entries' link, title, id, dates, "
          f"authors, summary, and the feed title), {unselected} not\n")  # fmt: skip
    rows = [
        [name, r.with_link, r.count(PASS), r.count(FAIL), f"{100 * r.pass_rate:.1f}%",
         r.count(NO_LINK), r.plain_readings, f"{r.linkless(PASS)}/{r.count(NO_LINK)}"]
        for name, r in reports.items()
    ]  # fmt: skip
    headers = ["parser", "with link", "passed", "failed", "pass rate", "no link",
               "plain reading", "no-link read anyway"]  # fmt: skip
    print(render_table(headers, rows))
    print("  (each parser through our layer; 'no link': the entry has no http(s) link and is "
          "dropped by design)\n")  # fmt: skip
    for result in reports[OURS].failures():
        print(f"  FAIL {result.case.name}: {result.reason[:300]}")
    _print_link_disagreements(reports)
    print()


def _print_link_disagreements(reports: dict[str, Any]) -> None:
    """Cases we count as no-link where a peer found an http(s) link: each may hide a miss."""
    from newsharvest_bench.feed_conformance import NO_LINK

    ours = {result.case.name: result.outcome for result in reports[OURS].results}
    for name, report in reports.items():
        if name == OURS:
            continue
        linked = [r.case.name for r in report.results
                  if r.outcome != NO_LINK and ours.get(r.case.name) == NO_LINK]  # fmt: skip
        print(f"  no-link for us, linked for {name}: {len(linked)} {' '.join(linked)}")


# --- 2. speed ---------------------------------------------------------------------------------


def generated_feeds() -> dict[str, bytes]:
    """The 500-item RSS and 500-entry Atom feeds, with HTML summaries."""
    return {
        f"rss {GENERATED_ENTRIES}": rss_feed(GENERATED_ENTRIES),
        f"atom {GENERATED_ENTRIES}": atom_feed(GENERATED_ENTRIES),
    }


def report_speed(parsers: list[str], cases: list[Any], repeat: int) -> None:
    from crawler.cli.table import render_table

    functions = {name: raw_parser(name) for name in parsers}
    for name in parsers[1:]:  # what building on a peer would cost: it, then our layer
        functions[f"{name} + layer"] = _layered(functions[name])
    inputs = {name: [(body, FEED_URL)] for name, body in generated_feeds().items()}
    if cases:
        inputs["corpus (per feed)"] = [(case.body, case.url) for case in cases]
    rows = []
    for label, documents in inputs.items():
        millis = _median_millis(functions, documents, repeat)
        baseline = millis.get(BASELINE)
        for name in functions:
            ratio = f"{millis[name] / baseline:.2f}" if baseline else "-"
            rows.append([label, name, round(millis[name], 3), ratio])
    print(f"speed: median of {repeat} runs, parsers interleaved; '+ layer': the peer's result "
          "put in our entry shape as the conformance section does\n")  # fmt: skip
    print(render_table(["feed", "parser", "ms per feed", f"x {BASELINE}"], rows))
    print()


def _layered(parse: RawParser) -> RawParser:
    def parse_and_shape(body: bytes, url: str) -> list[Any]:
        return [_peer_entry(entry, url) for entry in _get(parse(body, url), "entries") or []]

    return parse_and_shape


def _median_millis(
    functions: dict[str, RawParser], documents: list[tuple[bytes, str]], repeat: int
) -> dict[str, float]:
    """Median over runs of the time per document (runs interleave the parsers: noise from the
    machine falls on all of them alike)."""
    runs: dict[str, list[float]] = {name: [] for name in functions}
    for parse in functions.values():  # warm-up: imports, compiled patterns
        _parse_quietly(parse, *documents[0])
    for _ in range(repeat):
        for name, parse in functions.items():
            started = time.perf_counter()
            for body, url in documents:
                _parse_quietly(parse, body, url)
            runs[name].append((time.perf_counter() - started) * 1000 / len(documents))
    return {name: statistics.median(values) for name, values in runs.items()}


def _parse_quietly(parse: RawParser, body: bytes, url: str) -> Any:
    try:
        return parse(body, url)
    except Exception as error:  # our FeedError on the corpus's broken feeds, a peer's crash
        return error


# --- inputs ------------------------------------------------------------------------------------

_WORDS = ("harbour", "council", "budget", "storm", "ferry", "minister", "election", "court",
          "ruling", "market", "shares", "energy", "prices", "school", "teachers", "hospital",
          "nurses", "festival", "river", "bridge", "rail", "strike", "museum", "archive",
          "climate", "report", "village", "mayor")  # fmt: skip


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def _escaped_html_summary(rng: random.Random, index: int) -> str:
    """A summary as CMSs write it: escaped HTML paragraphs, a link, an entity, an image."""
    paragraphs = "".join(
        f"&lt;p&gt;{_sentence(rng, 18)} &lt;b&gt;{_sentence(rng, 4)}&lt;/b&gt; "
        f"&lt;a href=&quot;/topics/{index}?a=1&amp;amp;b=2&quot;&gt;{_sentence(rng, 3)}&lt;/a&gt;"
        f" &amp;amp; {_sentence(rng, 12)}&lt;/p&gt;"
        for _ in range(3)
    )
    return f"&lt;img src=&quot;/img/{index}.jpg&quot; /&gt;{paragraphs}"


def rss_feed(entries: int, seed: int = 1) -> bytes:
    """RSS 2.0 with dc:creator, RFC 822 dates, tracking parameters and HTML descriptions."""
    rng = random.Random(seed)
    items = "".join(
        f"<item><title>{_sentence(rng, 8)} &amp; more</title>"
        f"<link>https://news.example.com/world/{i}.html?id={i}&amp;utm_source=rss</link>"
        f'<guid isPermaLink="false">news-{i}</guid>'
        f"<pubDate>Mon, 02 Nov 2026 {i % 24:02d}:{i % 60:02d}:00 +0100</pubDate>"
        f"<dc:creator>{_sentence(rng, 2)[:-1]}</dc:creator><category>World</category>"
        f"<description>{_escaped_html_summary(rng, i)}</description></item>"
        for i in range(entries)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>News</title>'
        f"<link>https://news.example.com/</link>{items}</channel></rss>"
    ).encode()


def atom_feed(entries: int, seed: int = 2) -> bytes:
    """Atom 1.0 with alternate and enclosure links, authors and HTML summaries."""
    rng = random.Random(seed)
    body = "".join(
        f"<entry><title>{_sentence(rng, 8)}</title>"
        f'<link rel="enclosure" type="image/jpeg" href="/img/{i}.jpg"/>'
        f'<link rel="alternate" type="text/html" href="/world/{i}.html"/>'
        f"<id>tag:news.example.com,2026:{i}</id><published>2026-11-02T{i % 24:02d}:00:00Z"
        f"</published><updated>2026-11-02T{i % 24:02d}:30:00+01:00</updated>"
        f"<author><name>{_sentence(rng, 2)[:-1]}</name></author>"
        f'<summary type="html">{_escaped_html_summary(rng, i)}</summary></entry>'
        for i in range(entries)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom" '
        'xml:base="https://news.example.com/"><title>News</title>'
        f"<id>tag:news.example.com,2026:feed</id>{body}</feed>"
    ).encode()


def _rss(items: str, doctype: str = "", title: str = "Hostile") -> bytes:
    return (f'<?xml version="1.0"?>{doctype}<rss version="2.0"><channel><title>{title}</title>'
            f"{items}</channel></rss>").encode()  # fmt: skip


def _item(body: str, n: int = 0) -> str:
    return f"<item><link>https://news.example.com/{n}.html</link>{body}</item>"


def hostile_inputs(canary: Path, probe_url: str) -> dict[str, bytes]:
    """What the open web sends a feed parser at its worst."""
    laughs = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{level} "{("&lol;" if level == 1 else f"&lol{level - 1};") * 10}">'
        for level in range(1, LAUGHS_LEVELS + 1)
    ]
    quadratic = f'<!ENTITY a "{"x" * QUADRATIC_CHARS}">'
    xxe = (f'<!ENTITY file SYSTEM "file://{canary}"><!ENTITY net SYSTEM "{probe_url}/entity">'
           f'<!ENTITY % remote SYSTEM "{probe_url}/parameter"> %remote;')  # fmt: skip
    big_item = _item("<title>Padding item</title><description>Some text.</description>")
    return {
        "billion laughs": _rss(_item(f"<title>lol &lol{LAUGHS_LEVELS};</title>"),
                               f"<!DOCTYPE rss [{''.join(laughs)}]>"),
        "quadratic blowup": _rss(_item(f"<description>{'&a;' * QUADRATIC_CHARS}</description>"),
                                 f"<!DOCTYPE rss [{quadratic}]>"),
        "xxe (file, network)": _rss(_item("<title>Leak: &file; &net;</title>"),
                                    f'<!DOCTYPE rss SYSTEM "{probe_url}/dtd" [{xxe}]>'),
        "8 MB feed": _rss(big_item * (BIG_FEED_BYTES // len(big_item))),
        "deep nesting (XML)": _rss(_item("<x>" * DEEP_LEVELS + "</x>" * DEEP_LEVELS)),
        "deep nesting (HTML)": _rss(_item(f"<description>{'&lt;div&gt;' * DEEP_LEVELS}"
                                          "</description>")),
        "8 MB description": _rss(_item(f"<description>{'&lt;p&gt;text ' * (BIG_FEED_BYTES // 16)}"
                                       "</description>")),
        "unclosed CDATA": _rss(_item("<description><![CDATA[" + "text " * 200_000)
                               + _item("<title>after</title>", 1)),
    }  # fmt: skip


# --- 3. memory and safety ---------------------------------------------------------------------


@dataclass(slots=True)
class ChildResult:
    millis: float | None = None
    peak_kib: int | None = None
    entries: int | None = None
    texts: str = ""  # every title and summary, to look for expanded entities and leaks
    error: str | None = None


def report_memory_and_safety(parsers: list[str], corpus: Path | None, timeout: float) -> None:
    from crawler.cli.table import render_table
    from crawler.feedparse import DEFAULT_MAX_ENTRIES

    with tempfile.TemporaryDirectory(prefix="nh-bench-feeds-") as scratch, _Listener() as probe:
        canary = Path(scratch) / "canary.txt"
        canary.write_text(secrets.token_hex(16))
        documents = {**generated_feeds(), **hostile_inputs(canary, probe.url)}
        rows = []
        for label, body in documents.items():
            path = Path(scratch) / f"{len(rows)}.xml"
            path.write_bytes(body)
            for name in parsers:
                result = run_child(name, path, timeout)
                rows.append([label, name, *_row(result, label, canary.read_text(), probe)])
        if corpus is not None:
            for name in parsers:
                result = run_child(name, corpus, timeout)
                rows.append(["corpus (all, one process)", name, *_row(result, "", "", probe)])
    print("peak memory and safety: one process per parser and input; memory is the growth of "
          "its peak RSS while parsing\n")  # fmt: skip
    print(render_table(["input", "parser", "ms", "peak +MiB", "entries", "outcome"], rows))
    print(f"  ({OURS} reads at most {DEFAULT_MAX_ENTRIES:,} entries a feed, by design; "
          "the others read them all)")  # fmt: skip


def _row(result: ChildResult, label: str, canary: str, probe: _Listener) -> list[object]:
    if result.error:
        return ["-", "-", "-", result.error]
    verdicts = []
    if "lollol" in result.texts or "x" * QUADRATIC_CHARS in result.texts:
        verdicts.append("ENTITY EXPANDED")
    if canary and canary in result.texts:
        verdicts.append("FILE LEAKED (XXE)")
    if label.startswith("xxe") and probe.connections:
        verdicts.append(f"NETWORK FETCHED (XXE, {probe.connections} so far)")
    if not result.entries:  # every input lists at least one readable entry first
        verdicts.append("ENTRIES LOST")
    millis = round(result.millis or 0.0, 1)
    peak = round((result.peak_kib or 0) / KIB, 1)
    return [millis, peak, result.entries, ", ".join(verdicts) or "ok"]


def run_child(name: str, path: Path, timeout: float) -> ChildResult:
    command = [sys.executable, "-m", "newsharvest_bench.bench_feeds", name, str(path)]
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return ChildResult(error=f"HANG (killed after {timeout:g} s)")
    if done.returncode != 0:
        last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["?"])[-1]
        return ChildResult(error=f"CRASH (exit {done.returncode}: {last[:120]})")
    return ChildResult(**json.loads(done.stdout))


def _child(name: str, path: Path) -> dict[str, Any]:
    """In the subprocess: parse one file (or every corpus file) and report time and memory."""
    parse = raw_parser(name)
    documents = (
        [(file.read_bytes(), FEED_URL) for file in sorted(path.rglob("*.xml"))]
        if path.is_dir()
        else [(path.read_bytes(), FEED_URL)]
    )
    _parse_quietly(parse, TINY_FEED, FEED_URL)
    baseline = _reset_peak_rss()
    started = time.perf_counter()
    results = [_parse_quietly(parse, body, url) for body, url in documents]
    millis = (time.perf_counter() - started) * 1000
    peak = _peak_rss()
    entries, texts = 0, []
    for result in results:
        for entry in [] if isinstance(result, Exception) else _get(result, "entries") or []:
            entries += 1
            texts += [str(_get(entry, "title") or ""), str(_get(entry, "summary") or "")]
        feed = None if isinstance(result, Exception) else _get(result, "feed") or result
        texts.append(str(_get(feed, "title") or ""))
    return {"millis": millis, "peak_kib": peak - baseline, "entries": entries,
            "texts": "\n".join(texts)}  # fmt: skip


def _reset_peak_rss() -> int:
    """The RSS (KiB) once freed heap is handed back to the system and the kernel's peak mark is
    reset to it (Linux), so that the peak then measures only what follows. Elsewhere: the peak
    so far (what follows is then seen only when it goes higher)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        Path("/proc/self/clear_refs").write_text("5")
        return _proc_status_kib("VmRSS")
    except (OSError, AttributeError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _peak_rss() -> int:
    try:
        return _proc_status_kib("VmHWM")
    except (OSError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _proc_status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise ValueError(f"no {field} in /proc/self/status")


class _Listener:
    """A loopback TCP listener that counts connections: a parser that resolves an external
    entity pointing here has fetched it."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/xxe"
        self.connections = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> _Listener:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join()
        self.server.close()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            self.connections += 1
            connection.close()


if __name__ == "__main__":  # the measuring subprocess: NAME PATH -> JSON on stdout
    print(json.dumps(_child(sys.argv[1], Path(sys.argv[2]))))
