"""Where the crawler may connect: http(s) URLs on public addresses only (SSRF protection).

A harvester follows links that strangers write into feeds and redirects, so a link to
`http://127.0.0.1:6379/`, `http://169.254.169.254/latest/meta-data/` or `http://redis/` must
never be requested from inside the crawler's network. Two checks, both driven by one
`NetworkPolicy`:

- `NetworkPolicyMiddleware` (a downloader middleware, before robots.txt) refuses every request,
  redirects included, whose URL is not http(s), names a non-public IP literal (in any spelling
  browsers accept: `2130706433`, `0x7f.1`, `[::ffff:127.0.0.1]`), `localhost`, a special-use
  name (`.test`, `.internal`, ...) or a single-label host (`http://redis/`).
- `PublicAddressResolver` (Scrapy's TWISTED_DNS_RESOLVER) refuses DNS answers that are not
  public. The check runs where the connection gets its address, so the address checked is the
  address connected to: a name that resolves to 10.0.0.5, a DNS-rebinding answer or a redirect
  to such a name all fail the same way.

`NETWORK_ALLOWLIST` makes exceptions: host names and `.suffix` domains lift the name rules (the
local fixture's `.test` publishers), addresses and CIDR networks lift the address rules (an
intranet publisher: its network is enough when its name is an ordinary dotted one). The
configured PROXY_URL is trusted as a connection endpoint, never as a link target. Behind
a proxy the proxy resolves names, so only the name and literal-address checks apply; let the
proxy refuse private destinations too. No other proxy is used: `ConfiguredProxyMiddleware`
replaces Scrapy's, which would also take `http_proxy`/`https_proxy` from the environment (a
proxy nobody configured for the crawler, resolving names where no check sees the answers).
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.httpproxy import HttpProxyMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.resolver import CachingThreadedResolver
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer
from twisted.internet import error as twisted_error
from twisted.internet.defer import Deferred
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IResolverSimple
from zope.interface import implementer

from crawler.core.failures import FailureLog

log = logging.getLogger(__name__)

# What resolving a name raises when it does not resolve (in time): the download then fails
# with the same error, counted as a DNS failure (crawler/faults.py).
UNRESOLVED = (DNSLookupError, TimeoutError, twisted_error.TimeoutError, defer.TimeoutError, OSError)

ALLOWED_SCHEMES = frozenset({"http", "https"})
# Names that never belong to a public publisher: loopback and documentation names (RFC 6761),
# mDNS (RFC 6762), home networks (RFC 8375), ICANN's private-use TLD, and the TLDs ICANN will
# never delegate because corporate networks use them internally.
SPECIAL_USE_SUFFIXES = (
    "localhost", "test", "example", "invalid", "local", "home.arpa", "internal",
    "corp", "home", "mail",
)  # fmt: skip
_HOST_NAME = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")  # LDH labels (IDNA-encoded)
NAT64_PREFIX = ipaddress.IPv6Network("64:ff9b::/96")  # embeds an IPv4 address in its last 32 bits
MAX_IPV4_PART_VALUES = (2**32, 2**24, 2**16, 2**8)  # the last part of a 1..4-part IPv4 literal

# Refusal reasons (error counters are `errors/<reason>`).
REFUSED_SCHEME = "refused_scheme"
REFUSED_HOST = "refused_host"
REFUSED_ADDRESS = "refused_address"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class RequestRefused(IgnoreRequest):
    """A request the network policy does not allow; `reason` is one of the REFUSED_* names."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class AddressRefused(DNSLookupError):
    """A DNS answer the network policy does not allow (raised by PublicAddressResolver). A
    lookup failure to Twisted, so the connection fails as if the name did not resolve."""

    reason = REFUSED_ADDRESS

    def __init__(self, name: str, address: str, why: str) -> None:
        self.detail = f"{name} resolves to {address}, {why}"
        super().__init__(self.detail)

    def __str__(self) -> str:
        return self.detail


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a host names literally, in every spelling URL parsers accept (WHATWG):
    dotted, decimal `2130706433`, hex `0x7f.1`, octal `0177.0.0.1`, short `127.1`, IPv6.
    None for a name. Raises ValueError for a host that looks numeric but is no address."""
    host = host.strip("[]").lower()
    if ":" in host:
        return ipaddress.IPv6Address(host.split("%", 1)[0])  # drop an IPv6 zone id
    labels = host.removesuffix(".").split(".")
    if not _looks_numeric(labels[-1]):
        return None
    numbers = [_ipv4_number(label) for label in labels]
    if len(numbers) > 4 or any(n > 255 for n in numbers[:-1]):
        raise ValueError(f"invalid IPv4 address {host!r}")
    if numbers[-1] >= MAX_IPV4_PART_VALUES[len(numbers) - 1]:
        raise ValueError(f"invalid IPv4 address {host!r}")
    value = numbers[-1]
    for position, number in enumerate(numbers[:-1]):
        value += number << (8 * (3 - position))
    return ipaddress.IPv4Address(value)


def _looks_numeric(label: str) -> bool:
    if label[:2] == "0x":
        return all(c in "0123456789abcdef" for c in label[2:])
    return label.isascii() and label.isdigit()


def _ipv4_number(label: str) -> int:
    if not label or not label.isascii():
        raise ValueError("empty or non-ASCII IPv4 part")
    if label[:2] == "0x":
        return int(label[2:] or "0", 16)
    if len(label) > 1 and label[0] == "0":
        return int(label[1:], 8)
    return int(label, 10)


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries and routes to (mapped, 6to4, NAT64)."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in NAT64_PREFIX:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def non_public_why(address: IPAddress) -> str | None:
    """Why an address is not on the public internet (loopback, private, ...), or None."""
    inner = embedded_ipv4(address)
    if inner is not None and (why := non_public_why(inner)):
        return f"{why} (inside {address})"
    for why, flag in (
        ("loopback", address.is_loopback),
        ("unspecified", address.is_unspecified),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
        ("not globally routable", not address.is_global),
    ):
        if flag:
            return why
    return None


@dataclass(frozen=True)
class NetworkPolicy:
    """Which URLs and addresses the crawler may connect to."""

    public_only: bool = True
    allowed_names: frozenset[str] = frozenset()  # lift the name rules, not the address rules
    allowed_suffixes: tuple[str, ...] = ()  # the same for whole domains (without the dot)
    allowed_networks: tuple[IPNetwork, ...] = ()  # addresses that may be connected to
    trusted_names: frozenset[str] = frozenset()  # resolved without any check (the proxy)

    @classmethod
    def from_entries(cls, entries: Iterable[str], public_only: bool = True) -> NetworkPolicy:
        """From NETWORK_ALLOWLIST entries: "host.name", ".suffix", "10.0.0.7", "10.1.0.0/16"."""
        names, suffixes, networks = set(), [], []
        for raw in entries:
            entry = raw.strip().lower()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            if entry.startswith("."):
                suffixes.append(entry.strip("."))
            else:
                names.add(entry.rstrip("."))
        return cls(public_only, frozenset(names), tuple(suffixes), tuple(networks))

    @classmethod
    def from_settings(cls, settings: BaseSettings, trust_proxy: bool = False) -> NetworkPolicy:
        """The policy of NETWORK_PUBLIC_ONLY and NETWORK_ALLOWLIST. With `trust_proxy`, the
        PROXY_URL host name is allowed too: for the resolver, which sees the proxy as a
        connection endpoint. Links to the proxy's address are still links to a private host."""
        policy = cls.from_entries(
            settings.getlist("NETWORK_ALLOWLIST"), settings.getbool("NETWORK_PUBLIC_ONLY")
        )
        proxy_host = urlsplit(settings.get("PROXY_URL") or "").hostname
        if trust_proxy and proxy_host:
            return replace(policy, trusted_names=frozenset({proxy_host.lower()}))
        return policy

    def name_allowed(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        return host in self.allowed_names or any(
            host == suffix or host.endswith("." + suffix) for suffix in self.allowed_suffixes
        )

    def address_allowed(self, address: IPAddress) -> bool:
        return any(address in network for network in self.allowed_networks)

    def refusal(self, url: str) -> RequestRefused | None:
        """Why a request for `url` must not be sent, or None when it may."""
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").rstrip(".")
        except ValueError as error:
            return RequestRefused(REFUSED_HOST, f"unparseable URL ({error})")
        if parts.scheme.lower() not in ALLOWED_SCHEMES:
            return RequestRefused(REFUSED_SCHEME, f"{parts.scheme or 'no'} scheme, only http(s)")
        if not host:
            return RequestRefused(REFUSED_HOST, "no host")
        if not self.public_only:
            return None
        try:
            address = parse_ip_literal(host)
        except ValueError:
            return RequestRefused(REFUSED_HOST, f"{host} looks like an IP address but is not one")
        if address is not None:
            why = None if self.address_allowed(address) else non_public_why(address)
            return RequestRefused(REFUSED_ADDRESS, f"{host} is {why}") if why else None
        if not _HOST_NAME.fullmatch(host):  # control characters, spaces, "%", "\\" ...
            return RequestRefused(REFUSED_HOST, f"{host!r} is not a valid host name")
        return None if self.name_allowed(host) else self._name_refusal(host)

    def _name_refusal(self, host: str) -> RequestRefused | None:
        host = host.lower()
        for suffix in SPECIAL_USE_SUFFIXES:
            if host == suffix or host.endswith("." + suffix):
                return RequestRefused(REFUSED_HOST, f"{host} is a special-use name (.{suffix})")
        if "." not in host:
            return RequestRefused(REFUSED_HOST, f"{host} is a single-label (intranet) name")
        return None

    def address_refusal(self, name: str, address: str) -> AddressRefused | None:
        """Why the DNS answer `address` for `name` must not be connected to, or None."""
        if not self.public_only or name.lower().rstrip(".") in self.trusted_names:
            return None
        try:
            parsed = ipaddress.ip_address(address)
        except ValueError:
            return AddressRefused(name, address, "not an IP address")
        if self.address_allowed(parsed):
            return None
        why = non_public_why(parsed)
        return AddressRefused(name, address, why) if why else None


class NetworkPolicyMiddleware:
    """Refuses requests the NetworkPolicy does not allow, before anything is sent (robots.txt
    included). Redirected requests come through here again, so redirects are checked too.

    Without a proxy it also resolves the host first (through the reactor's resolver, whose cache
    the connection then uses), so that a name pointing at a private address is refused here,
    with its reason, instead of failing later as a DNS error that would be retried."""

    def __init__(
        self, policy: NetworkPolicy, proxied: bool, dns_timeout: float, stats: Any = None
    ) -> None:
        self.policy = policy
        self.proxied = proxied
        self.dns_timeout = dns_timeout
        self.stats = stats
        # What the resolver raised besides a name that does not resolve (a bug): the download
        # goes on (the connection's resolver checks the address again), counted and logged.
        self.resolve_failures = FailureLog(log, "safety/resolve_errors",
                                           "resolving a host before its request failed",
                                           level=logging.WARNING)  # fmt: skip

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> NetworkPolicyMiddleware:
        settings = crawler.settings
        return cls(
            NetworkPolicy.from_settings(settings),
            proxied=bool(settings.get("PROXY_URL")),
            dns_timeout=settings.getfloat("DNS_TIMEOUT"),
            stats=crawler.stats,
        )

    async def process_request(self, request: Request) -> None:
        refusal = self.policy.refusal(request.url)
        if refusal is not None:
            raise refusal
        if self.proxied or request.meta.get("proxy") or not self.policy.public_only:
            return  # the proxy resolves names, not us
        host = urlsplit(request.url).hostname or ""
        if parse_ip_literal(host) is not None:
            return  # checked above
        from twisted.internet import reactor

        try:
            await maybe_deferred_to_future(reactor.resolve(host, (self.dns_timeout,)))
        except AddressRefused as refused:
            raise RequestRefused(REFUSED_ADDRESS, refused.detail) from refused
        except UNRESOLVED:  # a name that does not resolve fails later, as the download
            return
        except Exception as error:
            self.resolve_failures.report(self.stats, error, host)


class ConfiguredProxyMiddleware(HttpProxyMiddleware):
    """Scrapy's proxy middleware (credentials of the `proxy` in request.meta, which is PROXY_URL
    when set) without the proxies of the process environment."""

    def __init__(self, auth_encoding: str | None = "latin-1") -> None:
        super().__init__(auth_encoding)
        self.proxies = {}


@implementer(IResolverSimple)
class PublicAddressResolver(CachingThreadedResolver):
    """Scrapy's caching resolver, refusing answers the NetworkPolicy does not allow.

    Every connection by host name asks this resolver for its address (cache hits included), so
    no request reaches a private address through DNS, whatever the name and however often its
    answer changes. IPv4 only, like Scrapy's default resolver."""

    policy = NetworkPolicy()

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: Any) -> PublicAddressResolver:
        resolver = super().from_crawler(crawler, reactor)
        resolver.policy = NetworkPolicy.from_settings(crawler.settings, trust_proxy=True)
        return resolver

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        return super().getHostByName(name, timeout).addCallback(self._checked, name)

    def _checked(self, address: str, name: str) -> str:
        refusal = self.policy.address_refusal(name, address)
        if refusal is not None:
            log.info("refused DNS answer: %s", refusal.detail)
            raise refusal
        return address
