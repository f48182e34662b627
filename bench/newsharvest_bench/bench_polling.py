"""`newsharvest bench polling`: a simulated day of adaptive polling against the news-site fixture.

The fixture's clock and the harvester's clock are both simulated (no sleeping): the loop jumps
from one due poll to the next. Each poll runs the spider's own code (`FeedPoller`, the SQLite
ledger, the poll policy) against the fixture's own responses, conditional GET included; each
article claimed is counted as fetched at that instant. The publishers follow a script: steady
sites at different rates, a site that never publishes, a site whose server ignores conditional
requests, and a site whose rate drops mid-day.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from crawler.cli.table import render_table

DAY_HOURS = 24.0
HOUR = 3600.0
RATE_CHANGE_HOUR = 8.0


@dataclass(frozen=True)
class Publisher:
    domain: str
    every_minutes: float | None  # None: never publishes
    later_every_minutes: float | None = None  # rate from RATE_CHANGE_HOUR on
    ignores_conditional: bool = False


SCRIPT = (
    Publisher("dailyherald.test", 20),
    Publisher("metroledger.test", None),
    Publisher("valleytimes.test", 120, ignores_conditional=True),
    Publisher("coastalpost.test", 45),
    Publisher("wirewatch.test", 6, later_every_minutes=180),
)


@dataclass
class FeedLog:
    polls: list[float] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "polling", help="simulate a day of adaptive feed polling against the fixture"
    )
    parser.add_argument("--hours", type=float, default=DAY_HOURS, help="simulated hours")
    parser.add_argument("--min-interval", type=float, default=None, help="seconds (settings)")
    parser.add_argument("--max-interval", type=float, default=None, help="seconds (settings)")
    parser.add_argument("--seed", type=int, default=1)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from scrapy.utils.project import get_project_settings

    from crawler.polling import PollPolicy

    settings = get_project_settings()
    if args.min_interval is not None:
        settings.set("HARVEST_MIN_INTERVAL_SECONDS", args.min_interval)
    if args.max_interval is not None:
        settings.set("HARVEST_MAX_INTERVAL_SECONDS", args.max_interval)
    policy = PollPolicy.from_settings(settings)
    report = asyncio.run(simulate(policy, settings, args.hours, args.seed))
    print(report)
    return 0


async def simulate(policy: Any, settings: Any, hours: float, seed: int) -> str:
    from crawler.core.clock import ManualClock
    from crawler.harvest import FeedPoller
    from crawler.ledger import LedgerConfig, SqliteHarvestState
    from crawler.newsroom import FixtureClock, Newsroom
    from crawler.newsroom.server import not_modified

    room = Newsroom(seed=seed)
    start = room.clock.now()
    room.clock = fixture_clock = FixtureClock(start)
    clock = ManualClock(start.timestamp())
    for publisher in SCRIPT:
        if publisher.every_minutes:
            room.publish_every(publisher.domain, timedelta(minutes=publisher.every_minutes))
        room.ignore_conditional_requests(publisher.domain, publisher.ignores_conditional)
    state = SqliteHarvestState(LedgerConfig.from_settings(settings), ":memory:")
    await state.open()
    poller = FeedPoller(state, policy, clock, random.Random(seed))
    await state.register_feeds(room.feed_urls)
    end = start.timestamp() + hours * HOUR
    logs: dict[str, FeedLog] = {url: FeedLog() for url in room.feed_urls}
    fetched_at: dict[str, float] = {}
    next_polls = {url: start.timestamp() for url in room.feed_urls}
    rate_changed = False
    while (now := min(next_polls.values())) <= end:
        if not rate_changed and now >= start.timestamp() + RATE_CHANGE_HOUR * HOUR:
            change_rates(room, fixture_clock, start + timedelta(hours=RATE_CHANGE_HOUR))
            rate_changed = True
        clock.advance(now - clock.now())
        fixture_clock.set(max(fixture_clock.now(), datetime.fromtimestamp(now, start.tzinfo)))
        for url in await state.claim_due_feeds(now):
            feed = await state.load_feed(url)
            status, headers, body = poll(room, url, feed, not_modified)
            result = await poller.handle(feed, status, dict(headers), body, url)
            logs[url].polls.append(now)
            logs[url].outcomes[result.outcome] += 1
            for claim in result.claims:
                fetched_at.setdefault(claim.key, now)
                await state.done(claim.key, claim.version, now)
            next_polls[url] = feed.next_poll
    await state.close()
    return render_report(room, policy, logs, fetched_at, start, hours)


def change_rates(room: Any, fixture_clock: Any, when: datetime) -> None:
    fixture_clock.set(max(fixture_clock.now(), when))
    for publisher in SCRIPT:
        if publisher.later_every_minutes:
            room.publish_every(publisher.domain, timedelta(minutes=publisher.later_every_minutes))


def poll(room: Any, url: str, feed: Any, not_modified: Any) -> tuple[int, dict, bytes]:
    from crawler.polling import conditional_headers

    parts = urlsplit(url)
    status, headers, body = room.render(parts.netloc, parts.path or "/")
    honours = room.honours_conditional(parts.netloc)
    if status == 200 and honours and not_modified(conditional_headers(feed), headers):
        return 304, headers, b""
    return status, headers, body


def render_report(
    room: Any,
    policy: Any,
    logs: dict[str, FeedLog],
    fetched_at: dict[str, float],
    start: datetime,
    hours: float,
) -> str:
    t0 = start.timestamp()
    live = [p for p in room.pages.values() if p.published > start]
    rows = []
    for url, log in logs.items():
        gaps = _gaps(log.polls)
        early = [
            g for a, g in zip(log.polls, gaps, strict=False) if a < t0 + RATE_CHANGE_HOUR * HOUR
        ]
        late = [
            g for a, g in zip(log.polls, gaps, strict=False) if a >= t0 + RATE_CHANGE_HOUR * HOUR
        ]
        o = log.outcomes
        rows.append([
            url.removeprefix("http://"),
            len(log.polls),
            o["changed"],
            o["not_modified"],
            o["unchanged_body"] + o["unchanged_entries"],
            _minutes(min(gaps, default=0)),
            _minutes(max(gaps, default=0)),
            _minutes(_mean(early)),
            _minutes(_mean(late)),
        ])  # fmt: skip
    table = render_table(
        ["feed", "polls", "200 new", "304", "200 same", "min gap", "max gap",
         f"mean 0-{RATE_CHANGE_HOUR:g}h", f"mean {RATE_CHANGE_HOUR:g}h-"],
        rows,
    )  # fmt: skip
    latencies, first_poll = [], 0
    for page in live:
        if page.url not in fetched_at:
            continue
        polls = sorted(t for url, log in logs.items() if page.domain in url for t in log.polls)
        after = [t for t in polls if t >= page.published.timestamp()]
        latencies.append(fetched_at[page.url] - page.published.timestamp())
        first_poll += bool(after) and fetched_at[page.url] == after[0]
    missing = [p.url for p in live if p.url not in fetched_at]
    all_gaps = [g for log in logs.values() for g in _gaps(log.polls)]
    per_day = [len(log.polls) * DAY_HOURS / hours for log in logs.values()]
    lines = [
        f"simulated {hours:g} h on the fixture's clock; bounds {_minutes(policy.min_interval)} / "
        f"{_minutes(policy.max_interval)}, {policy.polls_per_article:g} polls per article gap, "
        f"jitter {policy.jitter:.0%}",
        "",
        table,
        "",
        f"articles published during the run: {len(live)}; fetched: {len(live) - len(missing)}"
        f" (not yet: {len(missing)}, published after the last poll of their feed)",
        f"fetched by the first poll after publication: {first_poll}/{len(latencies)}",
        f"publication-to-fetch latency: mean {_minutes(_mean(latencies))}, "
        f"max {_minutes(max(latencies, default=0))}",
        f"poll gaps across all feeds: min {_minutes(min(all_gaps, default=0))}, "
        f"max {_minutes(max(all_gaps, default=0))} (bounds {_minutes(policy.min_interval)}"
        f"-{_minutes(policy.max_interval)})",
        f"requests per feed per day: {min(per_day):.0f}-{max(per_day):.0f} (polling every "
        f"{_minutes(policy.min_interval)}: {DAY_HOURS * HOUR / policy.min_interval:.0f}; every "
        f"{_minutes(policy.max_interval)}: {DAY_HOURS * HOUR / policy.max_interval:.0f})",
    ]
    return "\n".join(lines)


def _gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"
