"""Run the news-site fixture in the foreground: `python -m crawler.newsroom`.

Prints the proxy URL and every feed URL, then serves until interrupted. Point a crawler's HTTP
proxy at the printed URL to reach the synthetic `.test` domains.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from .redesign import REDESIGN_KINDS, Redesign
from .regional import RegionalSites
from .room import DEFAULT_ARTICLES_PER_DOMAIN, DEFAULT_DOMAINS, Newsroom
from .server import NewsroomServer
from .sites import ExtraSite, SiteNotInstalled, load_site

DEFAULT_PORT = 8765
# Sites this package serves itself (the others come from plugins, e.g. the bench's hostile).
BUILTIN_SITES = {RegionalSites.name: RegionalSites}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m crawler.newsroom",
        description="Serve synthetic news sites on 127.0.0.1 (use it as an HTTP proxy).",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--domains", type=int, default=DEFAULT_DOMAINS, help="total domains")
    parser.add_argument("--articles-per-domain", type=int, default=DEFAULT_ARTICLES_PER_DOMAIN)
    parser.add_argument("--feed-limit", type=int, default=None, help="entries per feed")
    parser.add_argument(
        "--redesign",
        action="append",
        default=[],
        type=parse_redesign,
        metavar="DOMAIN:AFTER[:KIND]",
        help=f"switch DOMAIN's template after AFTER pages (kinds: {', '.join(REDESIGN_KINDS)})",
    )
    parser.add_argument(
        "--site",
        action="append",
        default=[],
        metavar="NAME",
        help="also serve an extra site: regional (a German feed and a sitemap-only publisher, "
        "crawler/newsroom/regional.py) or a plugin's: hostile (newsharvest-bench)",
    )
    parser.add_argument("--hostile", action="store_true", help="the same as --site hostile")
    parser.add_argument(
        "--dry-run", action="store_true", help="bind, print the URLs and exit without serving"
    )
    return parser


def parse_redesign(text: str) -> Redesign:
    domain, _, rest = text.partition(":")
    after, _, kind = rest.partition(":")
    try:
        return Redesign(domain, int(after), kind or REDESIGN_KINDS[0])
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None


def describe(room: Newsroom, proxy_url: str) -> list[str]:
    articles = room.articles()
    lines = [
        f"Newsroom fixture: {len(room.domains)} domains, {len(room.pages)} pages "
        f"({len(articles)} articles, "
        f"{sum(1 for p in articles if p.duplicate_of)} syndicated copies)",
        f"Proxy URL: {proxy_url}",
        "Feeds:",
    ]
    lines += [f"  {url}" for url in room.feed_urls]
    for name, site in room.extra_sites.items():
        lines.append(f"Feeds of {name} ({', '.join(site.domains)}):")
        lines += [f"  {url}" for url in site.feed_urls]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    names = list(dict.fromkeys([*args.site, *(["hostile"] if args.hostile else [])]))
    try:
        extra_sites = [extra_site(name, args.seed) for name in names]
    except SiteNotInstalled as error:
        print(f"python -m crawler.newsroom: {error}", file=sys.stderr)
        return 2
    room = Newsroom(
        seed=args.seed,
        n_domains=args.domains,
        articles_per_domain=args.articles_per_domain,
        feed_limit=args.feed_limit,
        extra_sites=extra_sites,
    )
    server = NewsroomServer(room, port=args.port, redesigns=args.redesign).bind()
    print("\n".join(describe(room, server.proxy_url)), flush=True)
    if args.dry_run:
        server.stop()
        return 0
    print("Serving until interrupted (Ctrl-C).", flush=True)
    # SIGTERM (process managers, `kill`) stops as cleanly as Ctrl-C: the socket is closed.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("Stopped.", file=sys.stderr)
    return 0


def extra_site(name: str, seed: int) -> ExtraSite:
    builtin = BUILTIN_SITES.get(name)
    return builtin(seed) if builtin is not None else load_site(name, seed)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    raise SystemExit(main())
