"""Alert rules: when does a publisher domain look broken? Pure functions, stdlib only.

Two families, both judged against the domain's *own* recent past, never a global constant:

* Page rules run on the domain's recent page outcomes (a bounded list, oldest first, kept in
  Redis or memory): the last `window_pages` pages against the pages before them. A rule fires
  at the first page where the share of bad pages jumped by at least `rate_jump` *and* a
  one-sided Fisher exact test says such a jump is unlikely by chance (p <= `p_value`): a
  redesign that turns articles into NULL (`null_rate`) or into a sliver of boilerplate
  (`thin_articles`) is caught within a window of pages, whatever the domain's normal rates.
* Time rules run on the domain's per-bucket counters: a domain returning errors (`errors`),
  articles per feed poll collapsing against the baseline (`yield_drop`, a Poisson test), and
  a feed that is still polled but stopped publishing (`feed_stale`, against the domain's own
  publishing cadence).

Alerts are sticky: once fired, an alert stays active until its measure is back near the
baseline recorded when it fired (hysteresis), so a broken domain does not flap or become
"the new normal" as its broken pages fill the baseline.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from settings import base as defaults

NULL_RATE = "null_rate"
THIN_ARTICLES = "thin_articles"
ERRORS = "errors"
YIELD_DROP = "yield_drop"
FEED_STALE = "feed_stale"
ALERT_KINDS = (NULL_RATE, THIN_ARTICLES, ERRORS, YIELD_DROP, FEED_STALE)
PAGE_KINDS = (NULL_RATE, THIN_ARTICLES)

# A page-rate alert resolves once the recent rate is back within this share of the jump.
RESOLVE_SHARE = 0.5
# The counters time rules read (names from crawler.core.domainstats; every feed response, 304s
# included, counts as feeds/polled).
POLL_COUNTERS = ("feeds/polled",)
REQUEST_COUNTERS = ("fetched", "feeds/polled", "errors")
ERROR_COUNTERS = ("errors", "feeds/errors")


@dataclass(frozen=True)
class Thresholds:
    """Alert thresholds (settings MONITOR_ALERT_*; see settings/base.py for the reasons)."""

    window_pages: int = defaults.MONITOR_ALERT_WINDOW_PAGES
    min_baseline_pages: int = defaults.MONITOR_ALERT_MIN_BASELINE_PAGES
    rate_jump: float = defaults.MONITOR_ALERT_RATE_JUMP
    p_value: float = defaults.MONITOR_ALERT_P_VALUE
    thin_ratio: float = defaults.MONITOR_ALERT_THIN_RATIO
    error_window_seconds: float = defaults.MONITOR_ALERT_ERROR_WINDOW_SECONDS
    error_rate: float = defaults.MONITOR_ALERT_ERROR_RATE
    error_min: int = defaults.MONITOR_ALERT_ERROR_MIN
    yield_window_seconds: float = defaults.MONITOR_ALERT_YIELD_WINDOW_SECONDS
    yield_drop_ratio: float = defaults.MONITOR_ALERT_YIELD_DROP_RATIO
    yield_min_expected: float = defaults.MONITOR_ALERT_YIELD_MIN_EXPECTED
    stale_factor: float = defaults.MONITOR_ALERT_STALE_FACTOR
    stale_min_seconds: float = defaults.MONITOR_ALERT_STALE_MIN_SECONDS
    stale_min_polls: int = defaults.MONITOR_ALERT_STALE_MIN_POLLS
    stale_min_articles: int = defaults.MONITOR_ALERT_STALE_MIN_ARTICLES

    @classmethod
    def from_settings(cls, settings: Any) -> Thresholds:
        return cls(
            window_pages=settings.getint("MONITOR_ALERT_WINDOW_PAGES"),
            min_baseline_pages=settings.getint("MONITOR_ALERT_MIN_BASELINE_PAGES"),
            rate_jump=settings.getfloat("MONITOR_ALERT_RATE_JUMP"),
            p_value=settings.getfloat("MONITOR_ALERT_P_VALUE"),
            thin_ratio=settings.getfloat("MONITOR_ALERT_THIN_RATIO"),
            error_window_seconds=settings.getfloat("MONITOR_ALERT_ERROR_WINDOW_SECONDS"),
            error_rate=settings.getfloat("MONITOR_ALERT_ERROR_RATE"),
            error_min=settings.getint("MONITOR_ALERT_ERROR_MIN"),
            yield_window_seconds=settings.getfloat("MONITOR_ALERT_YIELD_WINDOW_SECONDS"),
            yield_drop_ratio=settings.getfloat("MONITOR_ALERT_YIELD_DROP_RATIO"),
            yield_min_expected=settings.getfloat("MONITOR_ALERT_YIELD_MIN_EXPECTED"),
            stale_factor=settings.getfloat("MONITOR_ALERT_STALE_FACTOR"),
            stale_min_seconds=settings.getfloat("MONITOR_ALERT_STALE_MIN_SECONDS"),
            stale_min_polls=settings.getint("MONITOR_ALERT_STALE_MIN_POLLS"),
            stale_min_articles=settings.getint("MONITOR_ALERT_STALE_MIN_ARTICLES"),
        )

    @property
    def history_pages(self) -> int:
        """How many recent page outcomes a store keeps per domain: window plus baseline."""
        return self.window_pages + max(self.min_baseline_pages, 9 * self.window_pages)


@dataclass
class Alert:
    domain: str
    kind: str  # one of ALERT_KINDS
    message: str  # one human sentence: what is off, against which baseline
    fired_at: float  # unix time
    value: float  # the measure that fired (a rate, a count, seconds)
    baseline: float  # what the domain's own past says it should be
    url: str | None = None  # page rules: the page at which the rule first held

    @property
    def key(self) -> str:
        return alert_key(self.domain, self.kind)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Alert:
        return cls(**json.loads(text))


def alert_key(domain: str, kind: str) -> str:
    return f"{domain}|{kind}"


# --- Page outcomes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What extraction made of one fetched page: NULL, or an article of `chars` characters."""

    null: bool
    chars: int = 0
    url: str | None = None  # known only to the worker that saw the page (not stored)

    def encode(self) -> str:
        return "n" if self.null else f"a{self.chars}"

    @classmethod
    def decode(cls, text: str | bytes) -> Outcome:
        if isinstance(text, bytes):
            text = text.decode("ascii", "replace")
        if text.startswith("a") and text[1:].isdigit():
            return cls(False, int(text[1:]))
        return cls(True)


@dataclass(frozen=True)
class RateJump:
    index: int  # position in the sequence where the rule first held
    recent: int  # bad pages in the window
    window: int
    before: int  # bad pages in the baseline
    baseline: int  # baseline size
    p_value: float  # one-sided Fisher exact test

    @property
    def recent_rate(self) -> float:
        return self.recent / self.window

    @property
    def baseline_rate(self) -> float:
        return self.before / self.baseline


def fisher_greater(k1: int, n1: int, k2: int, n2: int) -> float:
    """One-sided Fisher exact test: P(>= k1 bad of n1 | k1+k2 bad of n1+n2, no difference)."""
    total, bad = n1 + n2, k1 + k2
    numerator = sum(
        math.comb(bad, x) * math.comb(total - bad, n1 - x) for x in range(k1, min(bad, n1) + 1)
    )
    return numerator / math.comb(total, n1)


def first_rate_jump(flags: Sequence[bool], start: int, th: Thresholds) -> RateJump | None:
    """The first position >= start where the last `window_pages` flags hold a significantly
    larger share of True than every flag before them. O(new positions): the window slides."""
    window = th.window_pages
    first = max(start, window + th.min_baseline_pages - 1)
    if first >= len(flags):
        return None
    lo = first + 1 - window
    before, recent = sum(flags[:lo]), sum(flags[lo : first + 1])
    for end in range(first, len(flags)):
        if end > first:  # slide by one: the oldest window flag joins the baseline
            leaving = flags[end - window]
            recent += flags[end] - leaving
            before += leaving
            lo += 1
        if recent / window - before / lo < th.rate_jump:
            continue  # cheap margin test first: the exact test runs only on real jumps
        p_value = fisher_greater(recent, window, before, lo)
        if p_value <= th.p_value:
            return RateJump(end, recent, window, before, lo, p_value)
    return None


def recent_rate(flags: Sequence[bool], window: int) -> float | None:
    tail = flags[-window:]
    return sum(tail) / len(tail) if len(tail) >= window else None


def scan_pages(
    domain: str,
    history: Sequence[Outcome],
    n_new: int,
    active: Mapping[str, Alert],
    th: Thresholds,
    now: float,
) -> tuple[list[Alert], list[Alert]]:
    """Page rules over a domain's outcomes (oldest first; the last n_new just arrived).
    Returns (newly fired, resolved); `active` maps kind -> the domain's active alerts.

    `null_rate` counts NULL pages. `thin_articles` counts pages without a full article (NULL,
    or an article under `thin_ratio` of the domain's median length), so a redesign that leaves
    a mix of NULLs and slivers of boilerplate is caught as fast as one that leaves only NULLs;
    it stays quiet while `null_rate` already speaks for the domain.
    """
    fired: list[Alert] = []
    resolved: list[Alert] = []
    start = len(history) - n_new
    null_flags = [outcome.null for outcome in history]
    _judge(NULL_RATE, domain, null_flags, history, start, active, th, now, fired, resolved)
    articles = [o.chars for o in history[: max(0, len(history) - th.window_pages)] if not o.null]
    if len(articles) < th.min_baseline_pages:
        return fired, resolved
    thin_below = th.thin_ratio * statistics.median_low(articles)
    if fired or (NULL_RATE in active and THIN_ARTICLES not in active):
        return fired, resolved
    thin_flags = [o.null or o.chars < thin_below for o in history]
    what = f"NULL or under {th.thin_ratio:.0%} of the usual {thin_below / th.thin_ratio:,.0f} chars"
    _judge(THIN_ARTICLES, domain, thin_flags, history, start, active, th, now, fired, resolved,
           unit=what)  # fmt: skip
    return fired, resolved


def _judge(
    kind: str,
    domain: str,
    flags: Sequence[bool],
    pages: Sequence[Outcome],
    start: int,
    active: Mapping[str, Alert],
    th: Thresholds,
    now: float,
    fired: list[Alert],
    resolved: list[Alert],
    unit: str = "NULL",
) -> None:
    alert = active.get(kind)
    if alert is not None:
        rate = recent_rate(flags, th.window_pages)
        if rate is not None and rate <= alert.baseline + RESOLVE_SHARE * th.rate_jump:
            resolved.append(alert)
        return
    jump = first_rate_jump(flags, start, th)
    if jump is None:
        return
    what = "NULL rate" if kind == NULL_RATE else "thin articles"
    message = (
        f"{what} {jump.recent_rate:.0%} over the last {jump.window} pages "
        f"({jump.recent} {unit}) vs {jump.baseline_rate:.0%} in the {jump.baseline} before "
        f"(p={jump.p_value:.1e})"
    )
    fired.append(
        Alert(domain, kind, message, now, jump.recent_rate, jump.baseline_rate,
              url=pages[jump.index].url)
    )  # fmt: skip


# --- Time rules ------------------------------------------------------------------------------


@dataclass
class DomainView:
    """A domain's numbers as a store holds them: total counters and per-bucket counters."""

    counters: Mapping[str, float]
    series: Mapping[int, Mapping[str, float]]  # bucket index (unix time // bucket) -> counts

    def window(self, names: Iterable[str], first_bucket: int, last_bucket: int) -> float:
        names = tuple(names)
        return sum(
            counts.get(name, 0)
            for bucket, counts in self.series.items()
            if first_bucket <= bucket <= last_bucket
            for name in names
        )


def scan_time(
    domain: str,
    view: DomainView,
    active: Mapping[str, Alert],
    th: Thresholds,
    now: float,
    bucket_seconds: float,
) -> tuple[list[Alert], list[Alert]]:
    """Time rules for one domain. Returns (newly fired, resolved)."""
    fired: list[Alert] = []
    resolved: list[Alert] = []
    for kind, rule in ((ERRORS, _errors), (YIELD_DROP, _yield_drop), (FEED_STALE, _stale)):
        finding = rule(view, th, now, bucket_seconds)
        alert = active.get(kind)
        if alert is None and finding is not None and finding.firing:
            fired.append(Alert(domain, kind, finding.message, now, finding.value,
                               finding.baseline))  # fmt: skip
        elif alert is not None and (finding is None or finding.recovered):
            resolved.append(alert)
    return fired, resolved


@dataclass(frozen=True)
class Finding:
    firing: bool
    recovered: bool
    value: float
    baseline: float
    message: str


def _errors(view: DomainView, th: Thresholds, now: float, bucket: float) -> Finding | None:
    last = int(now // bucket)
    first = last - max(1, math.ceil(th.error_window_seconds / bucket)) + 1
    errors = view.window(ERROR_COUNTERS, first, last)
    requests = view.window(REQUEST_COUNTERS, first, last)
    if requests <= 0:
        return None
    rate = min(1.0, errors / requests)
    minutes = th.error_window_seconds / 60
    return Finding(
        firing=errors >= th.error_min and rate >= th.error_rate,
        recovered=rate < RESOLVE_SHARE * th.error_rate,
        value=rate,
        baseline=th.error_rate,
        message=f"{errors:.0f} of {requests:.0f} requests failed in the last "
        f"{minutes:.0f} min ({rate:.0%}; alert at {th.error_rate:.0%})",
    )


def poisson_cdf(k: float, mean: float) -> float:
    """P(X <= k) for X ~ Poisson(mean), in log space (large means do not underflow)."""
    if mean <= 0:
        return 1.0
    terms = [-mean + i * math.log(mean) - math.lgamma(i + 1) for i in range(int(k) + 1)]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def _yield_drop(view: DomainView, th: Thresholds, now: float, bucket: float) -> Finding | None:
    last = int(now // bucket)
    first = last - max(1, math.ceil(th.yield_window_seconds / bucket)) + 1
    oldest = min(view.series, default=first)
    polls = view.window(POLL_COUNTERS, first, last)
    articles = view.window(("articles",), first, last)
    base_polls = view.window(POLL_COUNTERS, oldest, first - 1)
    base_articles = view.window(("articles",), oldest, first - 1)
    if polls <= 0 or base_polls <= 0:
        return None
    per_poll = base_articles / base_polls
    expected = per_poll * polls
    if expected < th.yield_min_expected:
        return None  # too little baseline to call a drop
    p = poisson_cdf(articles, expected)
    hours = th.yield_window_seconds / 3600
    return Finding(
        firing=articles <= th.yield_drop_ratio * expected and p <= th.p_value,
        recovered=articles >= RESOLVE_SHARE * expected,
        value=articles / polls,
        baseline=per_poll,
        message=f"{articles:.0f} new articles in {polls:.0f} feed polls over the last "
        f"{hours:g} h; {expected:.0f} expected from {per_poll:.2f} per poll before (p={p:.1e})",
    )


def _stale(view: DomainView, th: Thresholds, now: float, bucket: float) -> Finding | None:
    counters = view.counters
    articles = counters.get("articles", 0)
    first, last = counters.get("first_article_at"), counters.get("last_article_at")
    if articles < th.stale_min_articles or not first or not last or last <= first:
        return None
    cadence = (last - first) / (articles - 1)
    limit = max(th.stale_min_seconds, th.stale_factor * cadence)
    age = now - last
    polls = counters.get("polls_since_article", 0)
    return Finding(
        firing=age >= limit and polls >= th.stale_min_polls,
        recovered=age < limit,
        value=age,
        baseline=cadence,
        message=f"no new article for {duration(age)} over {polls:.0f} feed polls; "
        f"it usually publishes every {duration(cadence)}",
    )


def duration(seconds: float) -> str:
    """A human duration: '45 s', '12 min', '3.5 h', '2.0 days'."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
