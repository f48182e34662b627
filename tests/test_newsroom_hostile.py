"""The news-site fixture's hostile cases (bench/newsharvest_bench/hostile.py) serve what they
say: the crawler tests in tests/test_hostile.py rely on it. They are a plugin site: the simulator
finds them by name only when the tooling is installed."""

from __future__ import annotations

import html
import re
import subprocess
import sys
import zlib
from collections.abc import Iterator

import pytest
from lxml import etree

from crawler.newsroom import Newsroom
from crawler.newsroom.sites import SiteNotInstalled, Stream, load_site
from newsharvest_bench.hostile import (
    BOMB_DECOMPRESSED_BYTES,
    HOSTILE_DOMAIN,
    HUGE_FEED_ENTRIES,
    SSRF_LINKS,
    HostileSite,
)

ORIGIN = "http://127.0.0.1:8765"


def render(room: Newsroom, url: str) -> tuple[int, dict[str, str], bytes | Stream]:
    host, _, path = url.removeprefix("http://").partition("/")
    return room.render(host, "/" + path, ORIGIN)


def hostile_room() -> tuple[Newsroom, HostileSite]:
    site = HostileSite(seed=1)
    return Newsroom(seed=1, extra_sites=[site]), site


def test_hostile_domains_are_served_only_when_asked_for() -> None:
    assert render(Newsroom(seed=1), f"http://{HOSTILE_DOMAIN}/feeds/xxe.xml")[0] == 404
    room, site = hostile_room()
    assert room.extra_sites == {"hostile": site}
    assert HOSTILE_DOMAIN not in room.domains and not set(site.feed_urls) & set(room.feed_urls)


def test_the_hostile_site_is_a_plugin_found_by_name() -> None:
    site = load_site("hostile", seed=3)
    assert isinstance(site, HostileSite) and site.seed == 3
    with pytest.raises(SiteNotInstalled, match=re.escape("pip install '.[bench]'")):
        load_site("nonesuch", seed=1)
    with pytest.raises(ValueError, match="clashes"):
        Newsroom(seed=1, extra_sites=[HostileSite(seed=1), HostileSite(seed=2)])


def test_the_old_hostile_switch_still_serves_the_cases_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="extra_sites"):
        room = Newsroom(seed=1, hostile=True)
    with pytest.warns(DeprecationWarning, match="extra_sites"):
        site = room.hostile
    assert isinstance(site, HostileSite)
    assert render(room, site.cases["page_http_410"].url)[0] == 410


@pytest.mark.parametrize("flag", [["--site", "hostile"], ["--hostile"]])
def test_the_simulator_command_serves_the_plugin_site(flag: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "crawler.newsroom", "--port", "0", "--dry-run", *flag],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Feeds of hostile (hostile.test, elsewhere.test):" in result.stdout
    assert all(url in result.stdout for url in HostileSite(seed=1).feed_urls)


def test_every_case_answers_and_every_good_article_is_served() -> None:
    room, site = hostile_room()
    for case in site.cases.values():
        status, _, _ = render(room, case.url)
        expected = int(case.name[-3:]) if case.name.startswith("page_http_") else None
        assert status == expected if expected else status != 404, case.name
    for url, article in site.articles.items():
        status, _, body = render(room, url)
        assert status == 200 and isinstance(body, bytes)
        title = html.escape(article.title)
        encodings = ("utf-8", "cp1252", "utf-16-le")
        assert any(title.encode(encoding) in body for encoding in encodings), url


def test_the_gzip_bomb_inflates_to_what_it_says() -> None:
    room, _ = hostile_room()
    _, headers, body = render(room, f"http://{HOSTILE_DOMAIN}/bombs/gzip.html")
    assert headers["Content-Encoding"] == "gzip" and isinstance(body, bytes)
    assert len(body) < BOMB_DECOMPRESSED_BYTES // 500
    inflater = zlib.decompressobj(wbits=31)  # gzip framing
    assert sum(len(chunk) for chunk in _inflate(inflater, body)) == BOMB_DECOMPRESSED_BYTES


def _inflate(inflater: zlib._Decompress, data: bytes) -> Iterator[bytes]:
    chunk = inflater.decompress(data, 1 << 20)
    while chunk:
        yield chunk
        chunk = inflater.decompress(inflater.unconsumed_tail, 1 << 20)


def test_the_huge_feed_has_its_entries_and_the_ssrf_feed_its_links() -> None:
    room, _ = hostile_room()
    _, _, huge = render(room, f"http://{HOSTILE_DOMAIN}/feeds/huge.xml")
    assert isinstance(huge, bytes)
    assert len(etree.fromstring(huge).findall("./channel/item")) == HUGE_FEED_ENTRIES
    _, _, ssrf = render(room, f"http://{HOSTILE_DOMAIN}/feeds/ssrf.xml")
    assert isinstance(ssrf, bytes)
    links = [link.text for link in etree.fromstring(ssrf).iter("link")]
    assert f"{ORIGIN}/ssrf-canary/literal" in links
    assert len(links) == len(SSRF_LINKS) + 1 + 2  # the channel link and two good articles


def test_endless_and_truncated_bodies_are_streams() -> None:
    room, _ = hostile_room()
    for path in ("/big/chunked.html", "/feeds/oversized.xml"):
        _, _, body = render(room, f"http://{HOSTILE_DOMAIN}{path}")
        assert isinstance(body, Stream) and body.length is None
    _, _, truncated = render(room, f"http://{HOSTILE_DOMAIN}/big/truncated.html")
    assert isinstance(truncated, Stream) and truncated.length is not None
    assert sum(len(chunk) for chunk in truncated.chunks()) < truncated.length


def test_text_that_cannot_be_utf8_or_displays_spoofed_is_served_as_a_cms_would() -> None:
    """Half an emoji: a lone surrogate in JSON (\\ud83d), a character reference in HTML and XML;
    bidirectional overrides around a title. What the crawler tests expect them to become."""
    room, site = hostile_room()
    _, _, page = render(room, site.half_emoji_article)
    assert isinstance(page, bytes) and b"&#xD83D;" in page and b'\\ud83d"' in page
    page.decode("utf-8")  # the page itself is valid UTF-8: only what it spells is broken
    _, headers, feed = render(room, site.cases["feed_json_lone_surrogates"].url)
    assert headers["Content-Type"] == "application/feed+json" and isinstance(feed, bytes)
    assert feed.count(b"\\ud83d") == 3 * 3 + 1  # title, summary, author of 3 items; its title
    _, _, bidi = render(room, site.cases["page_bidi_controls"].url)
    assert isinstance(bidi, bytes) and "\u202e".encode() in bidi and "\u2067".encode() in bidi
    _, headers, wide = render(room, site.cases["page_charset_utf16_http_only"].url)
    assert headers["Content-Type"] == "text/html; charset=utf-16" and isinstance(wide, bytes)
    assert wide.startswith("<!DOCTYPE".encode("utf-16-le"))  # no byte order mark
