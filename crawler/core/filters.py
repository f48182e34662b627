"""Harvest filters: which articles a crawl keeps, decided as early as the evidence allows.

Three rules, each optional (ARTICLE_LANGUAGES, ARTICLE_MAX_AGE_DAYS, and a URL pattern per feed:
`https://x/rss include=/politics/ exclude=/video/`). The crawl asks twice:

* `ArticleFilter.before_fetch`, with what the feed entry says (its link, its or its feed's
  declared language, its publication date): an entry ruled out here is never fetched;
* `ArticleFilter.after_extraction`, with what the page said (`text_language`: the language its
  words are in, else its declared `<html lang>`; the extracted publication date), for entries
  the feed said too little about.

Each answer is None (keep) or a reason, one of REASONS; the caller counts `filtered/<reason>`
and marks the article done in the ledger, so it is never fetched again and never output. What
is unknown never filters: an undated article is not too old, an article in no known language
is not in the wrong one. Time is the harvest clock's (crawler/core/clock.py), never the wall
clock, so a test or a simulated crawl is deterministic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from crawler.core.domainstats import FILTERED, inc_domain
from extractors.language import guess_language, primary_subtag

LANGUAGE = "language"
AGE = "age"
URL = "url"
REASONS = (LANGUAGE, AGE, URL)
SECONDS_PER_DAY = 86_400.0


class FilterError(ValueError):
    """A filter that cannot be built: an invalid pattern or language code."""


@dataclass(frozen=True)
class UrlRule:
    """Keep a link when some `include` pattern matches it (or there is none) and no `exclude`
    pattern does. Patterns are Python regular expressions, searched anywhere in the URL."""

    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def of(cls, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> UrlRule:
        return cls(tuple(map(compile_pattern, include)), tuple(map(compile_pattern, exclude)))

    def __bool__(self) -> bool:
        return bool(self.include or self.exclude)

    def keeps(self, url: str) -> bool:
        if self.include and not any(pattern.search(url) for pattern in self.include):
            return False
        return not any(pattern.search(url) for pattern in self.exclude)


def compile_pattern(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as error:
        raise FilterError(f"invalid URL pattern {text!r}: {error}") from None


@dataclass(frozen=True)
class ArticleFilter:
    """The crawl-wide rules: `languages` (ISO 639-1 codes; empty keeps every language) and
    `max_age_days` (0 keeps every date)."""

    languages: frozenset[str] = frozenset()
    max_age_days: float = 0.0

    @classmethod
    def from_settings(cls, settings: Any) -> ArticleFilter:
        codes = read_list(settings.get("ARTICLE_LANGUAGES"))
        return cls(languages_of(codes), settings.getfloat("ARTICLE_MAX_AGE_DAYS"))

    def __bool__(self) -> bool:
        return bool(self.languages or self.max_age_days)

    def cutoff(self, now: float) -> float | None:
        """Epoch seconds before which an article is too old (None: no age limit)."""
        return now - self.max_age_days * SECONDS_PER_DAY if self.max_age_days else None

    def before_fetch(
        self,
        url: str,
        language: str | None,
        published: datetime | None,
        now: float,
        rule: UrlRule | None = None,
    ) -> str | None:
        """Why a feed entry is not worth fetching, or None."""
        if rule and not rule.keeps(url):
            return URL
        return self._judge(language, published, now)

    def after_extraction(
        self, language: str | None, published: datetime | None, now: float
    ) -> str | None:
        """Why an extracted article is not kept, or None."""
        return self._judge(language, published, now)

    def _judge(self, language: str | None, published: datetime | None, now: float) -> str | None:
        code = primary_subtag(language)
        if self.languages and code and code not in self.languages:
            return LANGUAGE
        cutoff = self.cutoff(now)
        if cutoff is not None and published is not None and published.timestamp() < cutoff:
            return AGE
        return None


def text_language(text: str | None, declared: str | None) -> str | None:
    """The language an article is in: the one its words are in (the stop list they overlap
    most, extractors/language.py) when they say, else the one the page declares. Words first:
    templates declare the site's language on pages in another (an English edition)."""
    return guess_language((text or "").split()) or primary_subtag(declared)


def languages_of(codes: Sequence[str]) -> frozenset[str]:
    """ISO 639-1 (or -3) codes, as primary subtags ("en-GB" -> "en")."""
    found = set()
    for code in codes:
        language = primary_subtag(code)
        if language is None or language != code.strip().lower().split("-")[0].split("_")[0]:
            raise FilterError(f"not a language code: {code!r} (ISO 639-1, e.g. 'en' or 'de')")
        found.add(language)
    return frozenset(found)


def read_list(value: Any) -> list[str]:
    """A list setting as `-s` gives it: a list, a JSON list ('["en","de"]') or "en,de"."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError as error:
                raise FilterError(f"not a JSON list: {text!r}") from error
        else:
            value = text.split(",")
    if not isinstance(value, list | tuple):
        raise FilterError(f"not a list: {value!r}")
    return [str(item).strip() for item in value if str(item).strip()]


def count_filtered(stats: Any, domain: str, reason: str, *, before_fetch: bool) -> None:
    """Count a filtered article: `filtered/<reason>` globally and for its domain, where
    `filtered` is the total monitoring charts and shows; `filtered/before_fetch` or
    `filtered/after_fetch` globally."""
    stats.inc_value(f"{FILTERED}/{reason}")
    stats.inc_value(f"{FILTERED}/{'before_fetch' if before_fetch else 'after_fetch'}")
    inc_domain(stats, domain, FILTERED)
    inc_domain(stats, domain, f"{FILTERED}/{reason}")
