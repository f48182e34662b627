"""The network policy (crawler/safety.py): http(s) only, public addresses only (SSRF), with an
allow-list. Unit tests of the policy, then production-settings crawls that must refuse loopback
(literal, by name, by DNS answer, and with the URL check switched off)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from crawler.newsroom import Newsroom, NewsroomServer, RequestRecord
from crawler.safety import (
    REFUSED_ADDRESS,
    REFUSED_HOST,
    REFUSED_SCHEME,
    NetworkPolicy,
    parse_ip_literal,
)
from newsharvest_bench.crawlrun import CrawlRun, run_measured

PRODUCTION = "settings.local"  # the default profile: what a user runs


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),  # one decimal number
        ("0x7f000001", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),  # octal
        ("127.1", "127.0.0.1"),  # the last part fills the remaining bytes
        ("10.1", "10.0.0.1"),
        ("192.168.257", "192.168.1.1"),
        ("169.254.169.254.", "169.254.169.254"),  # trailing dot
        ("[::1]", "::1"),
        ("::ffff:127.0.0.1", "::ffff:127.0.0.1"),
        ("fe80::1%eth0", "fe80::1"),  # zone id
    ],
)
def test_ip_literals_in_every_spelling_parsers_accept(host: str, address: str) -> None:
    assert parse_ip_literal(host) == ipaddress.ip_address(address)


@pytest.mark.parametrize("host", ["example.com", "news.example", "1.2.3.4.example.com", "xn--nxa"])
def test_names_are_not_ip_literals(host: str) -> None:
    assert parse_ip_literal(host) is None


@pytest.mark.parametrize("host", ["1.2.3.256", "1.2.3.4.5", "a.b.123", "256.1", "1..2.3"])
def test_numeric_looking_hosts_that_are_no_address_raise(host: str) -> None:
    with pytest.raises(ValueError):
        parse_ip_literal(host)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:6379/", REFUSED_ADDRESS),
        ("http://2130706433/", REFUSED_ADDRESS),
        ("http://[::ffff:10.0.0.1]/", REFUSED_ADDRESS),  # IPv4-mapped private
        ("http://[2002:c0a8:101::]/", REFUSED_ADDRESS),  # 6to4 around 192.168.1.1
        ("http://[64:ff9b::a9fe:a9fe]/", REFUSED_ADDRESS),  # NAT64 around 169.254.169.254
        ("http://169.254.169.254/latest/meta-data/", REFUSED_ADDRESS),
        ("http://100.64.1.1/", REFUSED_ADDRESS),  # carrier-grade NAT
        ("http://0.0.0.0/", REFUSED_ADDRESS),
        ("http://255.255.255.255/", REFUSED_ADDRESS),
        ("http://[ff02::1]/", REFUSED_ADDRESS),
        ("http://localhost/", REFUSED_HOST),
        ("http://Admin.LOCALHOST./", REFUSED_HOST),
        ("http://metadata.google.internal/", REFUSED_HOST),
        ("http://printer.local/", REFUSED_HOST),
        ("http://dailyherald.test/", REFUSED_HOST),
        ("http://redis:6379/", REFUSED_HOST),  # single label: an intranet or container name
        ("http://1.2.3.999/", REFUSED_HOST),
        ("file:///etc/passwd", REFUSED_SCHEME),
        ("ftp://example.com/x", REFUSED_SCHEME),
        ("gopher://example.com:70/_x", REFUSED_SCHEME),
        ("http:///no-host", REFUSED_HOST),
    ],
)
def test_the_production_policy_refuses(url: str, reason: str) -> None:
    refusal = NetworkPolicy().refusal(url)
    assert refusal is not None and refusal.reason == reason, refusal


@pytest.mark.parametrize(
    "url",
    ["https://www.example.com/news/1", "http://8.8.8.8/", "http://[2606:4700::1]/",
     "http://1.2.3.4.nip.example.org/"],
)  # fmt: skip
def test_the_production_policy_allows_public_urls(url: str) -> None:
    assert NetworkPolicy().refusal(url) is None


def test_allowlist_names_lift_name_rules_and_networks_lift_address_rules() -> None:
    policy = NetworkPolicy.from_entries([".test", "wiki", "10.20.0.0/16", "192.168.1.7"])
    assert policy.refusal("http://dailyherald.test/x") is None
    assert policy.refusal("http://wiki/page") is None
    assert policy.refusal("http://10.20.3.4/") is None
    assert policy.refusal("http://192.168.1.7/") is None
    assert policy.refusal("http://192.168.1.8/") is not None
    assert policy.refusal("http://127.0.0.1/") is not None  # the fixture profile keeps this
    # An allowed name may still not resolve to a private address outside the allowed networks.
    assert policy.address_refusal("wiki", "10.20.0.5") is None
    assert policy.address_refusal("wiki", "127.0.0.1") is not None
    assert policy.address_refusal("news.example.com", "93.184.216.34") is None


def test_public_only_off_keeps_the_scheme_rule() -> None:
    policy = NetworkPolicy(public_only=False)
    assert policy.refusal("http://127.0.0.1/") is None
    refusal = policy.refusal("file:///etc/passwd")
    assert refusal is not None and refusal.reason == REFUSED_SCHEME


# --- production settings, end to end ----------------------------------------------------------


def _production_crawl(
    tmp_path: Path, feeds: list[str], server: NewsroomServer, *settings: str
) -> tuple[CrawlRun, list[RequestRecord]]:
    run = run_measured(feeds, tmp_path / "articles.jsonl", settings, profile=PRODUCTION)
    assert run.returncode == 0, run.log[-3000:]
    return run, server.request_log


def test_production_settings_refuse_loopback_links(tmp_path: Path) -> None:
    with NewsroomServer(Newsroom(seed=1), port=0) as server:
        port = server.port
        hosts = ("127.0.0.1", "[::1]", "2130706433", "localhost")
        feeds = [f"http://{host}:{port}/rss.xml" for host in hosts]
        run, requests = _production_crawl(tmp_path, feeds, server)
    assert requests == [], "the crawler reached the loopback fixture"
    refused = f"http://127.0.0.1:{port}/rss.xml (refused_address: 127.0.0.1 is loopback)"
    assert f"fetch failed: {refused}" in run.log
    assert f"fetch failed: http://localhost:{port}/rss.xml (refused_host:" in run.log
    assert run.stats["domain/127.0.0.1/errors/refused_address"] == 1
    assert run.stats["domain/localhost/feeds/errors/refused_host"] == 1
    assert run.stats["fetch/error/refused_address"] == 3


def test_production_settings_refuse_a_name_that_resolves_to_loopback(tmp_path: Path) -> None:
    """`localhost` allow-listed as a name lifts the name rule only: its DNS answer (127.0.0.1,
    from /etc/hosts) is still checked, before any request is sent."""
    with NewsroomServer(Newsroom(seed=1), port=0) as server:
        feeds = [f"http://localhost:{server.port}/rss.xml"]
        run, requests = _production_crawl(tmp_path, feeds, server, "NETWORK_ALLOWLIST=localhost")
    assert requests == []
    assert "(refused_address: localhost resolves to 127.0.0.1, loopback)" in run.log
    assert run.stats["domain/localhost/errors/refused_address"] == 1


def test_the_resolver_refuses_loopback_answers_without_the_url_check(tmp_path: Path) -> None:
    """Defence in depth: with the URL middleware switched off (as if a redirect or a DNS
    rebinding slipped past it), the resolver the connections use still refuses loopback."""
    with NewsroomServer(Newsroom(seed=1), port=0) as server:
        feeds = [f"http://localhost:{server.port}/rss.xml", f"http://127.0.0.1:{server.port}/"]
        run, requests = _production_crawl(
            tmp_path, feeds, server,
            'DOWNLOADER_MIDDLEWARES={"crawler.safety.NetworkPolicyMiddleware": null}',
            "RETRY_TIMES=0",
        )  # fmt: skip
    assert requests == []
    assert "refused DNS answer: localhost resolves to 127.0.0.1, loopback" in run.log
    assert "refused DNS answer: 127.0.0.1 resolves to 127.0.0.1, loopback" in run.log
    assert run.stats["domain/localhost/errors"] == 1


def test_production_settings_behind_a_proxy_refuse_test_domains(tmp_path: Path) -> None:
    """The fixture's publishers are .test names: production refuses them, which is why the
    fixture profile allow-lists `.test` (and only that)."""
    room = Newsroom(seed=1)
    with NewsroomServer(room, port=0) as server:
        run = run_measured(
            room.feed_urls[:1], tmp_path / "a.jsonl", proxy_url=server.proxy_url, profile=PRODUCTION
        )
        requests = server.request_log
    assert requests == []
    assert f"fetch failed: {room.feed_urls[0]} (refused_host:" in run.log
