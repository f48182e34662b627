"""Sites served beside the publishers: what a plugin gives the simulator, and finding one by name.

An `ExtraSite` owns a few domains of its own; `Newsroom(extra_sites=[...])` routes every request
for them to its `render`, and keeps them out of `domains`, `pages` and `feed_urls` (their ground
truth is the site's own). The hostile-input cases are such a site, in the `newsharvest-bench`
distribution (registered under the entry point group `newsharvest.newsroom_sites` as `hostile`):
the product does not install them. `load_site(name, seed)` builds a registered one.

Bodies that are large, slow or endless are `Stream`s: the server writes them lazily.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from crawler.core.plugins import NEWSROOM_SITES_GROUP, install_hint, plugins


@dataclass(frozen=True)
class Stream:
    """A body written piece by piece: generated lazily, optionally slowly.

    With `length` set, that Content-Length is declared (and the connection is closed if the
    chunks end short of it: data loss); without, the body is sent chunked.
    """

    chunks: Callable[[], Iterator[bytes]]
    length: int | None = None
    interval_s: float = 0.0  # pause before each chunk
    headers_delay_s: float = 0.0  # pause before the status line (a server that never answers)


Response = tuple[int, dict[str, str], "bytes | Stream"]


class ExtraSite(Protocol):
    """Domains served beside the publishers, by a plugin."""

    name: str  # how `python -m crawler.newsroom --site NAME` and `load_site` call it
    domains: Sequence[str]  # the hosts it answers for (lower case, no port)

    @property
    def feed_urls(self) -> list[str]:
        """The feeds a crawl of this site starts from."""
        ...

    def render(self, domain: str, target: str, origin: str) -> Response:
        """Status, headers and body for GET http://{domain}{target}; `origin` is the serving
        fixture's own http://127.0.0.1:PORT (for links that must reach the fixture directly)."""
        ...


class SiteNotInstalled(LookupError):
    """No installed distribution registers a site of that name."""


def load_site(name: str, seed: int) -> ExtraSite:
    """The site registered as `name`, built for `seed`."""
    entry = plugins(NEWSROOM_SITES_GROUP).get(name)
    if entry is None:
        known = ", ".join(sorted(plugins(NEWSROOM_SITES_GROUP))) or "none"
        raise SiteNotInstalled(
            f"no news-site plugin {name!r} (installed: {known}); {install_hint('bench')}"
        )
    site: ExtraSite = entry.load()(seed)
    return site
