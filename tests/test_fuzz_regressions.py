"""Inputs the fuzzers found (tests/test_fuzz_properties.py, `newsharvest fuzz`), minimised and
kept, each with the invariant it broke. They run through the same checks as the fuzzer."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from crawler.core.urls import canonical_article_url
from crawler.feedparse import parse_feed
from crawler.warc.records import READERS, iter_records
from crawler.warc.replay import Page, pages
from extractors import extract_verbose
from newsharvest_bench.fuzzing import (
    FeedInput,
    PageInput,
    WarcInput,
    check_extract,
    check_feed,
    check_url,
    check_warc,
)
from tests.support.commands import newsharvest

FIXTURES = Path(__file__).parent / "fixtures" / "fuzz"
SESSION_MINUTES = 0.25  # a worker starts in a few seconds; the rest of the time it executes
PROSE = "The island ferry returned to its normal timetable on Sunday after the storm passed. "


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(
    ("name", "broke"),
    [
        ("warc-negative-chunk-size.warc", "a chunk size of -6 sent dechunk back to it forever"),
        ("warc-nested-metadata.warc.gz", "RecursionError killed the reading thread"),
        ("warc-file-uri.warc.gz", "a URI without a host stopped the whole replay"),
    ],
)
def test_hostile_warc_records_are_skipped_and_the_next_page_read(
    name: str, broke: str, reader: str
) -> None:
    data = (FIXTURES / name).read_bytes()
    check_warc(WarcInput(data, reader))
    found = list(pages(iter_records(io.BytesIO(data), reader), name, 1 << 20))
    assert isinstance(found[-1], Page), broke
    assert found[-1].url.startswith("http://news.example.com/"), broke


def test_a_nul_in_an_xml_encoding_label_is_no_crash() -> None:
    body = b'<?xml version="1.0" encoding="bogus\x00"?><rss version="2.0"><channel><title>T</title></channel></rss>'  # noqa: E501
    check_feed(FeedInput(body, "http://feeds.example.com/rss"))


def test_a_broken_xml_base_is_ignored_not_fatal() -> None:
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://[broken/">'
        b'<entry><link href="http://x.example/a"/></entry></feed>'
    )
    assert [entry.link for entry in parse_feed(body, "http://x.example/feed").entries] == [
        "http://x.example/a"
    ]


def test_a_time_zone_offset_of_days_is_no_date_not_a_lost_feed() -> None:
    item = "<item><link>http://x.example/{n}</link><pubDate>Mon, 02 Nov 2026 08:30:00 {tz}</pubDate></item>"  # noqa: E501
    items = item.format(n=1, tz="+7955") + item.format(n=2, tz="+0100")
    body = f'<rss version="2.0"><channel>{items}</channel></rss>'.encode()
    check_feed(FeedInput(body, "http://feeds.example.com/rss"))
    entries = parse_feed(body, "http://feeds.example.com/rss").entries
    assert [entry.published is None for entry in entries] == [True, False]


def test_a_time_of_sixty_digits_is_no_date_not_a_lost_feed() -> None:
    """dateutil reads a time's minutes as a Decimal, and one of 30 digits or more raised
    decimal.InvalidOperation, which no date parser caught: the whole poll of the feed failed."""
    entry = "<entry><link href='http://x.example/{n}'/><updated>{when}</updated></entry>"
    entries = entry.format(n=1, when="2026-11-01T21:" + "6" * 60 + "00:00Z") + entry.format(
        n=2, when="2026-11-01T21:00:00Z"
    )
    body = f'<feed xmlns="http://www.w3.org/2005/Atom">{entries}</feed>'.encode()
    check_feed(FeedInput(body, "http://feeds.example.com/atom"))
    parsed = parse_feed(body, "http://feeds.example.com/atom").entries
    assert [entry.link for entry in parsed] == ["http://x.example/1", "http://x.example/2"]
    assert [entry.updated is None for entry in parsed] == [True, False]


@pytest.mark.parametrize(
    "body",
    [
        # Escaped HTML in an RSS title, holding a character reference to a control character.
        b'<rss version="2.0"><channel><title>Gazette</title><item><title>&lt;p&gt;Budget&amp;#8;'
        b" grows&lt;/p&gt;</title><link>http://x.example/1</link></item></channel></rss>",
        # An XHTML feed title holding one.
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title type="xhtml"><div xmlns="http://www.w3'
        b'.org/1999/xhtml"><p>Gazette&#5;</p></div></title><entry><title>Budget grows</title>'
        b'<link href="http://x.example/1"/></entry></feed>',
    ],
)
def test_a_control_character_in_a_markup_title_is_dropped_not_a_lost_feed(body: bytes) -> None:
    """libxml2 keeps the control character such a reference spells in the tree, and lxml
    refused to store the text again when the markup reader set word breaks: the whole feed
    raised ValueError, every poll."""
    check_feed(FeedInput(body, "http://feeds.example.com/rss"))
    feed = parse_feed(body, "http://feeds.example.com/rss")
    assert feed.title == "Gazette"
    assert [(entry.title, entry.link) for entry in feed.entries] == [
        ("Budget grows", "http://x.example/1")
    ]


def test_a_nul_in_the_http_charset_is_no_crash() -> None:
    check_extract(PageInput(b"<html><head><title>T</title></head><body></body></html>", None,
                            "bogus\x00"))  # fmt: skip


def test_control_characters_in_text_do_not_turn_an_article_into_an_error() -> None:
    page = (b'<html><body><div itemprop="articleBody"><p>' + PROSE.encode() * 5 + b"</p>"
            b'<div id="comment"></div>\x1f\x0b text</div></body></html>')  # fmt: skip
    check_extract(PageInput(page, None, None))
    assert extract_verbose(page).article is not None


def test_a_code_block_whose_first_line_is_indented_most_keeps_its_indentation() -> None:
    """A mutated page's `<pre>` whose later lines lost their indentation: the block keeps its
    first line's (the lines' shared margin is none), which the invariant, written when every block
    was one stripped line, took for bad text."""
    code = "    return retry(job)\nexport(job)"
    page = (b"<html><body><article><p>" + PROSE.encode() * 5 + b"</p><pre>" + code.encode()
            + b"</pre><p>" + PROSE.encode() * 3 + b"</p></article></body></html>")  # fmt: skip
    check_extract(PageInput(page, None, None))
    article = extract_verbose(page).article
    assert article is not None
    assert ("preformatted", code) in article.blocks


def test_a_broken_canonical_link_does_not_lose_the_article() -> None:
    page = (b'<html><head><link rel="canonical" href="http://[oops/x"></head><body><article><p>'
            + PROSE.encode() * 5 + b"</p></article></body></html>")  # fmt: skip
    result = extract_verbose(page, "https://news.example.com/a")
    assert result.article is not None, result.reason
    assert result.article.canonical_url == "https://news.example.com/a"  # the page's own URL


@pytest.mark.parametrize(
    "page",
    [
        # A link to a broken host right below a short post (is it a link home?).
        "<article><h1>Short</h1><p>27 November 2026</p><p>{prose}</p>"
        '<p><a href="http://[x/">Back to the home page now</a></p></article>',
        # A logo heading linking a broken host (is it the site's name?).
        '<h1><a href="http://[oops/">Short</a></h1><article><h2>Short</h2>'
        "<p>27 November 2026</p><p>{prose}</p></article>",
    ],
    ids=["link-below-a-short-post", "logo-heading"],
)
def test_a_broken_host_in_a_link_by_a_short_post_is_no_error(page: str) -> None:
    """urlsplit raises on "http://[x/": asked of links by a short post, it turned the post into
    an extractor_error NULL."""
    html = f"<html><head><title>Short</title></head><body>{page.format(prose=PROSE)}</body></html>"
    check_extract(PageInput(html.encode(), None, None))
    assert extract_verbose(html.encode()).reason != "extractor_error"


def test_cells_nested_in_cells_are_not_output_twice() -> None:
    """A mutated table-layout page whose broken markup nests cells inside cells of the same
    table: each outer cell was walked, and so was each cell inside it (text 1.2x the input)."""
    page = (FIXTURES / "nested-cells.html").read_bytes()
    check_extract(PageInput(page, None, None))
    article = extract_verbose(page).article
    assert article is not None
    paragraphs = [text for _, text in article.blocks]
    assert len(paragraphs) == len(set(paragraphs))


@pytest.mark.parametrize("url", ["http://\\", "http:/\\28.0.0.18]:0/x", "http:///x"])
def test_urls_without_a_usable_host_are_refused_by_the_canonicaliser(url: str) -> None:
    check_url(url)
    with pytest.raises(ValueError):
        canonical_article_url(url)


def test_backslashes_before_the_query_are_slashes_as_in_browsers() -> None:
    check_url("http://f.\\")  # was "http://f.//", then "http://f//": not idempotent
    assert canonical_article_url("http://a.example\\b\\c?q=\\") == "http://a.example/b/c?q=%5C"


def test_ipv6_hosts_keep_their_brackets() -> None:
    assert canonical_article_url("http://[FE80::1]:8080/a#x") == "http://[fe80::1]:8080/a"
    check_url("http://[::ffff:127.0.0.1]:8080/x")


def test_hosts_with_control_characters_are_refused() -> None:
    check_url("http://0x0\x00.\x00/")  # libc reads "0x0" (0.0.0.0) and stops at the NUL


def test_a_failing_input_is_kept_in_a_file_and_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `newsharvest fuzz` does with a finding: the input goes to `<target>-<hash>.bin` with
    a `.json` record (the smallest input per bug), and `--replay` runs it again."""
    from newsharvest_bench.fuzz import Recorder, replay
    from newsharvest_bench.fuzzing import TARGETS, Target

    def check(url: str) -> None:
        if "bad" in url:
            raise ValueError("found a bug")

    target = Target("urls", TARGETS["urls"].strategy, check, ())
    monkeypatch.setitem(TARGETS, "urls", target)
    recorder = Recorder(target, tmp_path, tmp_path / "status.json", tmp_path / "last")
    for url in ("http://bad.example/long/path", "http://bad.example/"):
        meta, payload = recorder.before(url)
        recorder.finding(meta, payload, "ValueError@check", "found a bug", "trace")
    [saved] = tmp_path.glob("urls-*.bin")
    assert saved.read_bytes() == b"http://bad.example/"  # the smaller of the two inputs
    assert json.loads(saved.with_suffix(".json").read_text())["error"] == "found a bug"
    assert replay([saved]) == 1 and "still fails" in capsys.readouterr().out
    saved.write_bytes(b"http://fine.example/")
    assert replay([saved]) == 0 and "passes now" in capsys.readouterr().out


@pytest.mark.parametrize("engine", ["hypothesis", "atheris"])
def test_a_short_session_runs_its_worker_and_executes_inputs(tmp_path: Path, engine: str) -> None:
    """`newsharvest fuzz` end to end: the supervisor starts a worker process (the tooling's own
    module, found by path as an installed copy would be) that imports its target and executes."""
    if engine == "atheris":
        pytest.importorskip("atheris", reason="atheris has wheels for Linux x86-64 only")
    result = newsharvest("fuzz", "--minutes", str(SESSION_MINUTES), "--target", "urls",
                         "--engine", engine, "--crash-dir", str(tmp_path / "crashes"),
                         cwd=tmp_path)  # fmt: skip
    row = next(line.split() for line in result.stdout.splitlines() if line.startswith("urls "))
    executions, restarts = int(row[3]), int(row[7])
    assert executions > 0 and restarts == 0, result.stdout + result.stderr[-2000:]
    assert "worker-exited" not in result.stdout


def test_half_an_emoji_in_rss_is_the_replacement_character_not_a_crash() -> None:
    """A character reference to a lone surrogate made libxml2 store bytes that are no UTF-8:
    reading the element's text raised UnicodeDecodeError out of parse_feed."""
    for reference in (b"&#xD83D;", b"&#55357;", b"&#xdfff;"):
        body = (b'<rss version="2.0"><channel><item><title>Cut ' + reference + b"</title>"
                b"<link>http://x.example/a</link></item></channel></rss>")  # fmt: skip
        check_feed(FeedInput(body, "http://feeds.example.com/rss"))
        (entry,) = parse_feed(body, "http://feeds.example.com/rss").entries
        assert entry.title == "Cut \ufffd"


def test_half_an_emoji_in_json_ld_and_bidi_controls_leave_no_unexportable_metadata() -> None:
    jsonld = (b'{"@type": "NewsArticle", "headline": "Emoji cut \\ud83d", "author": {"name": '
              b'"\xe2\x80\xaeReversed\xe2\x80\xac"}, "articleBody": "' + PROSE.encode() * 4
              + b'\\udc00"}')  # fmt: skip
    page = (
        b'<html><head><script type="application/ld+json">' + jsonld + b"</script></head>"
        b"<body><h1>One</h1><h1>Two</h1><p>" + PROSE.encode() * 4 + b"</p></body></html>"
    )
    check_extract(PageInput(page, "https://news.example.com/a", None))
    article = extract_verbose(page, "https://news.example.com/a").article
    assert article is not None
    assert (article.title, article.authors) == ("Emoji cut \ufffd", ["Reversed"])
