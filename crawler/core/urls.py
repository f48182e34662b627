"""URL canonicalisation and publisher domains."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

# Query parameters that only track the reader; every other parameter may identify the article.
TRACKING_PARAMETERS = frozenset(
    {
        "fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "igshid", "yclid", "_ga",
        "_gl", "ocid", "cmpid", "smid", "smtyp", "xtor", "at_medium", "at_campaign", "ito",
        "ns_mchannel", "ns_source", "ns_campaign", "ns_linkname", "ns_fee", "sr_share", "wt.mc_id",
        "mbid", "cid_source", "rss", "feed",
    }
)  # fmt: skip
TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hsa_", "oly_")


def is_tracking_parameter(name: str) -> bool:
    lowered = name.lower()
    return lowered in TRACKING_PARAMETERS or lowered.startswith(TRACKING_PREFIXES)


def canonical_article_url(url: str) -> str:
    """One spelling per article: tracking parameters, credentials and fragment dropped, query
    sorted, host lower-cased, default port removed, percent-encoding normalised.

    Raises ValueError for a URL that cannot be fetched as written (bad port, broken IPv6
    brackets)."""
    parts = urlsplit(_backslashes_as_slashes(url.strip()))
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if not is_tracking_parameter(k)]  # fmt: skip
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise ValueError(f"no host in {url[:200]!r}")
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    default_port = 80 if parts.scheme.lower() == "http" else 443
    port = parts.port if parts.port not in (None, default_port) else None  # may raise ValueError
    netloc = f"{host}:{port}" if port is not None else host
    cleaned = urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", urlencode(query), ""))
    canonical = canonicalize_url(cleaned)
    if not urlsplit(canonical).hostname:  # a "host" like "\\" that normalises away
        raise ValueError(f"no usable host in {url[:200]!r}")
    return canonical


def _backslashes_as_slashes(url: str) -> str:
    """Browsers read "\\" as "/" before the query of an http(s) URL (WHATWG); so do we, or
    "http://host\\path" would keep a backslash in its host."""
    end = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=len(url))
    return url[:end].replace("\\", "/") + url[end:]


def publisher_domain(url: str) -> str:
    """The publisher's domain of a URL: its host, lower-cased, without "www." and port."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    return host.removeprefix("www.")
