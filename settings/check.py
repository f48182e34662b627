"""Settings checked at start: a mistyped name, an old name or a value out of range is never
silently ignored.

`check_settings` reads a command's settings as Scrapy assembled them (the profile module, the
NEWSHARVEST_* environment that settings/env.py applied to it, `-s` on top) and the environment,
and returns a `Report`, one line per finding:

* errors: a name in one of our NAMESPACES that nothing reads (from `-s`, the profile module or a
  NEWSHARVEST_* variable), with where it came from and the closest known names (difflib); a
  value of ours of the wrong type or out of the range the code assumes; settings that are not a
  newsharvest profile at all;
* warnings: a renamed name (settings/renamed.py), whose value goes to the new name.

Known names: those of settings/base.py and the shipped profiles, Scrapy's own
(scrapy.settings.default_settings), and those of a scrapy-redis component the settings use.
Names outside our namespaces are not ours to judge and pass untouched (Scrapy's, an extension's,
a user's own component's). `enforce` prints the report on stderr and exits with status 2 on any
error; `scrapy crawl` (crawler/commands/crawl.py) calls it before the crawler exists, every
`newsharvest` command before it runs (crawler/cli).
"""

from __future__ import annotations

import difflib
import importlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings, default_settings

from settings.env import (
    PREFIX,
    default_of,
    environment_name,
    rejected_variables,
    renamed_variables,
    variable_for,
)
from settings.renamed import RENAMED_SETTINGS, Renamed

EXIT_BAD_SETTINGS = 2  # what argparse and Scrapy exit with on a usage error
# The prefixes of the names settings/base.py defines (tests/test_settings_check.py derives them
# from that file and fails when one is missing here), and ARTICLE_ for what comes next. A name
# under one of these is ours: unknown means mistyped, or renamed past its deprecation period.
NAMESPACES: tuple[str, ...] = (
    "ARTICLE_", "DEDUP_", "DUPEFILTER_", "EXTRACT_", "FEED_", "GC_", "HARVEST_", "HEARTBEAT_",
    "MONITOR_", "NETWORK_", "NEWSHARVEST_", "NOTICES_", "OUTPUT_", "POLITENESS_", "PROXY_",
    "REDIS_", "REPLAY_", "SCHEDULER_", "SINK_", "STATE_", "WARC_", "WORKER_",
)  # fmt: skip
PROFILES = ("settings.base", "settings.local", "settings.distributed", "settings.fixture")
# scrapy-redis components a crawl may add beside ours, and the names in our namespaces each one
# reads. They count as known only while such a component is configured: our own stages connect
# with REDIS_URL alone and name their keys from REDIS_KEY_PREFIX, so a REDIS_HOST meant for them
# would otherwise be ignored without a word.
_SCRAPY_REDIS_CONNECTION = (
    "REDIS_HOST", "REDIS_PORT", "REDIS_DB", "REDIS_PARAMS", "REDIS_ENCODING",
    "REDIS_DECODE_RESPONSES",
)  # fmt: skip
COMPONENT_SETTINGS: dict[str, tuple[str, ...]] = {
    "scrapy_redis.pipelines.RedisPipeline": (
        *_SCRAPY_REDIS_CONNECTION,
        "REDIS_ITEMS_KEY",
        "REDIS_ITEMS_SERIALIZER",
    ),
    "scrapy_redis.scheduler.Scheduler": (
        *_SCRAPY_REDIS_CONNECTION,
        "SCHEDULER_QUEUE_KEY",
        "SCHEDULER_DUPEFILTER_KEY",
        "SCHEDULER_DUPEFILTER_CLASS",
    ),
    "scrapy_redis.dupefilter.RFPDupeFilter": (*_SCRAPY_REDIS_CONNECTION, "DUPEFILTER_KEY"),
    "scrapy_redis.stats.RedisStatsCollector": _SCRAPY_REDIS_CONNECTION,
}
# Where a crawl names its components: dicts of class paths, and single class paths.
_COMPONENT_DICTS = ("ITEM_PIPELINES", "EXTENSIONS", "DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES")
_COMPONENT_PATHS = ("SCHEDULER", "DUPEFILTER_CLASS", "STATS_CLASS")
MAX_SUGGESTIONS = 3
# difflib's similarity ratio from which a known name is suggested: HARVEST_JOURNAL_PAHT ->
# HARVEST_JOURNAL_PATH (0.95), REDIS_ULR -> REDIS_URL (0.89), but not every HARVEST_ name (0.6+);
# and only names about as close as the closest (not HARVEST_JOURNAL_FSYNC beside ..._PATH).
SUGGESTION_CUTOFF = 0.75
SUGGESTION_MARGIN = 0.08


# --- Values --------------------------------------------------------------------------------


ValueCheck = Callable[[Any], "str | None"]  # a setting's value -> what is wrong with it, or None


@dataclass(frozen=True)
class Bounds:
    """low <= value <= high (either end open, or absent)."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def holds(self, value: float) -> bool:
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        below = self.high is None or (value < self.high if self.high_open else value <= self.high)
        return above and below

    def describe(self) -> str:
        parts = []
        if self.low is not None:
            parts.append(f"{'above' if self.low_open else 'at least'} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'below' if self.high_open else 'at most'} {self.high:g}")
        return " and ".join(parts)


NOT_NEGATIVE = Bounds(0)
POSITIVE = Bounds(0, low_open=True)
AT_LEAST_ONE = Bounds(1)
SHARE = Bounds(0, 1)
# By settings/base.py's naming rule: durations and sizes are never negative; ports are ports.
BOUNDS_BY_SUFFIX = (
    ("_SECONDS", NOT_NEGATIVE), ("_DAYS", NOT_NEGATIVE), ("_BYTES", NOT_NEGATIVE),
    ("_MB", NOT_NEGATIVE), ("_PORT", Bounds(0, 65535)),
)  # fmt: skip
# The ranges the code assumes today (each component raises on a value outside, or misbehaves).
# Every other integer of ours counts something and is never negative.
BOUNDS: dict[str, Bounds] = {
    "DEDUP_THRESHOLD": Bounds(0.3, 0.98),  # pipelines/fingerprints.py THRESHOLD_RANGE: LSH bands
    "DEDUP_REDIS_SHARDS": AT_LEAST_ONE,  # crawler/core/keys.py dedup_shard_tags
    "HARVEST_JITTER": Bounds(0, 1, high_open=True),  # crawler/polling.py
    "HARVEST_MIN_INTERVAL_SECONDS": POSITIVE,
    "HARVEST_POLLS_PER_ARTICLE": POSITIVE,
    "HARVEST_CLOCK_SCALE": POSITIVE,  # crawler/core/clock.py
    "HARVEST_MAX_ATTEMPTS": AT_LEAST_ONE,
    "HARVEST_MAX_VERSIONS": AT_LEAST_ONE,
    "NOTICES_MIN_ARTICLES": AT_LEAST_ONE,  # pipelines/notices/learner.py
    "NOTICES_MIN_SHARE": SHARE,
    "NOTICES_MAX_SIGNATURES": AT_LEAST_ONE,
    "NOTICES_HALF_LIFE_DAYS": POSITIVE,
    "NOTICES_IDLE_TTL_DAYS": POSITIVE,
    "MONITOR_BUCKET_SECONDS": POSITIVE,  # pipelines/monitoring/backends.py
    "MONITOR_ALERT_RATE_JUMP": SHARE,
    "MONITOR_ALERT_P_VALUE": SHARE,
    "MONITOR_ALERT_THIN_RATIO": SHARE,
    "MONITOR_ALERT_ERROR_RATE": SHARE,
    "MONITOR_ALERT_YIELD_DROP_RATIO": SHARE,
    "EXTRACT_WORKERS": Bounds(-1),  # -1: one per core (pipelines/extraction/workers.py)
    "EXTRACT_WORKER_NICENESS": Bounds(0, 19),  # Linux's nice range
    "SINK_BATCH_SIZE": AT_LEAST_ONE,
    "REPLAY_MAX_IN_FLIGHT": AT_LEAST_ONE,
}
# Settings that take one of a few words (compared as the code compares them).
CHOICES: dict[str, tuple[str, ...]] = {
    "HARVEST_STATE": ("", "memory"),  # "" = SQLite in STATE_DIR (or Redis with REDIS_URL)
    "SINK_START_POLICY": ("fail", "journal"),
    "REPLAY_READER": ("fastwarc", "warcio"),
}
# List settings whose every item has a shape: (pattern, what it must be).
LIST_ITEMS: dict[str, tuple[re.Pattern[str], str]] = {
    "ARTICLE_LANGUAGES": (
        re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]+)*"),
        "an ISO 639-1 language code like 'en' or 'de'",
    ),
}
_CHOICE_FOLDED = frozenset({"HARVEST_STATE"})  # read stripped and lower-cased by the code
# (smaller, larger): the first may not exceed the second.
ORDERED = (
    ("HARVEST_MIN_INTERVAL_SECONDS", "HARVEST_MAX_INTERVAL_SECONDS"),
    ("MONITOR_BUCKET_SECONDS", "MONITOR_RETENTION_SECONDS"),
)


def bounds_of(name: str, default: Any) -> Bounds | None:
    if name in BOUNDS:
        return BOUNDS[name]
    for suffix, bounds in BOUNDS_BY_SUFFIX:
        if name.endswith(suffix):
            return bounds
    return NOT_NEGATIVE if type(default) is int else None


# --- Where a value came from -------------------------------------------------------------


class Origins:
    """Where each setting's value came from: the command line, the environment, the profile."""

    def __init__(self, settings: BaseSettings, environ: Mapping[str, str], cmdline: str) -> None:
        self.settings = settings
        self.environ = environ
        self.cmdline = cmdline
        module = settings.get("SETTINGS_MODULE") or os.environ.get("SCRAPY_SETTINGS_MODULE")
        self.profile = f"profile module {module}" if module else "the profile module"

    def of(self, name: str) -> str:
        priority = self.settings.getpriority(name)
        if priority is None or priority < SETTINGS_PRIORITIES["project"]:
            return "the defaults"
        if priority > SETTINGS_PRIORITIES["project"]:
            return self.cmdline
        variable = self.variable(name)
        return f"environment variable {variable}" if variable else self.profile

    def variable(self, name: str) -> str | None:
        """The variable that set `name`, when the environment (not -s) gave its value."""
        if self.settings.getpriority(name) != SETTINGS_PRIORITIES["project"]:
            return None
        return variable_for(name, self.environ)


# --- The check -----------------------------------------------------------------------------


@dataclass
class Report:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def in_namespaces(name: str) -> bool:
    return name.startswith(NAMESPACES)


@cache
def profiles() -> tuple[ModuleType, ...]:
    return tuple(importlib.import_module(name) for name in PROFILES)


@cache
def our_names() -> frozenset[str]:
    """Every setting the shipped profiles define."""
    return frozenset(name for module in profiles() for name in dir(module) if name.isupper())


@cache
def scrapy_names() -> frozenset[str]:
    return frozenset(name for name in dir(default_settings) if name.isupper())


def component_names(settings: BaseSettings) -> set[str]:
    """The names the configured components of COMPONENT_SETTINGS read."""
    configured = {str(settings.get(name)) for name in _COMPONENT_PATHS}
    for name in _COMPONENT_DICTS:
        try:
            orders = settings.getdict(name).items()
        except (ValueError, TypeError):  # not a dict: Scrapy says so when it reads it
            continue
        configured |= {str(path) for path, order in orders if order is not None}
    return {name for path in configured for name in COMPONENT_SETTINGS.get(path, ())}


def check_settings(
    settings: BaseSettings,
    environ: Mapping[str, str] | None = None,
    cmdline: str = "-s",
    value_checks: Mapping[str, ValueCheck] | None = None,
) -> Report:
    """Check `settings` (applying renamed names to their new ones) and `environ` (default: the
    process environment). `cmdline` names the command-line source in messages ("-s").
    `value_checks` adds, per setting, a rule only code outside settings/ can state (settings
    are data: they import nothing of ours): the value -> the problem, or None."""
    environ = os.environ if environ is None else environ
    origins = Origins(settings, environ, cmdline)
    report = Report()
    if not _is_our_profile(settings, origins, report):
        return report
    apply_renames(settings, origins, report)
    _renamed_variables(environ, report)
    known = our_names() | scrapy_names() | component_names(settings)
    for name in settings:
        if in_namespaces(name) and name not in known:
            report.errors.append(_unknown(name, origins.of(name), known))
    for variable in environ:
        name = variable[len(PREFIX) :]
        if variable.startswith(PREFIX) and name not in known and not _is_renamed(variable):
            report.errors.append(_unknown(name, f"environment variable {variable}", known))
    for variable, reason in rejected_variables(environ).items():
        name = _setting_of(variable)
        report.errors.append(f"{name}={environ[variable]!r} (from environment variable "
                             f"{variable}): {reason}")  # fmt: skip
    _check_values(settings, origins, report, value_checks or {})
    return report


def _is_our_profile(settings: BaseSettings, origins: Origins, report: Report) -> bool:
    """False (with the error) for settings that are not a newsharvest profile at all."""
    if settings.getpriority("STATE_DIR") is not None:
        return True
    report.errors.append(
        f"the settings come from {origins.profile.removeprefix('profile module ')}, which is not "
        "a newsharvest profile (no STATE_DIR): set SCRAPY_SETTINGS_MODULE=settings.local, or "
        "start that module with `from settings.local import *`"
    )
    return False


def apply_renames(settings: BaseSettings, origins: Origins, report: Report) -> None:
    """Each old setting name present: its value to the new name (unless the new one is set
    explicitly, above it or beside it), the old name removed, one warning."""
    for renamed in RENAMED_SETTINGS:
        old_priority = settings.getpriority(renamed.old)
        if old_priority is None:
            continue
        source = origins.of(renamed.old)
        value = settings[renamed.old]
        new_priority = settings.getpriority(renamed.new) or 0
        new_is_set = new_priority > old_priority or (
            new_priority == old_priority and settings[renamed.new] != _default(renamed.new)
        )
        if not new_is_set:
            settings.set(renamed.new, value, priority=old_priority)
        del settings[renamed.old]
        ignored = f" ({renamed.new} is set too, and wins)" if new_is_set else ""
        report.warnings.append(f"{renamed.old} (from {source}) {_deprecated(renamed)}: use "
                               f"{renamed.new}{ignored}")  # fmt: skip


def _renamed_variables(environ: Mapping[str, str], report: Report) -> None:
    for variable, renamed in renamed_variables():
        if variable in environ:
            current = environment_name(renamed.new)
            ignored = f" ({current} is set too, and wins)" if current in environ else ""
            report.warnings.append(
                f"environment variable {variable} {_deprecated(renamed)}: use {current}{ignored}"
            )


def _deprecated(renamed: Renamed) -> str:
    return f"is deprecated since {renamed.since} and stops working in {renamed.removed_in}"


def _is_renamed(variable: str) -> bool:
    return any(variable == old for old, _ in renamed_variables())


def _setting_of(variable: str) -> str:
    renamed = next((r for old, r in renamed_variables() if old == variable), None)
    return renamed.new if renamed else variable.removeprefix(PREFIX)


def _unknown(name: str, source: str, known: Iterable[str]) -> str:
    """One line: the name, where it came from, and the closest known names (as variables when
    it came from one: only our own settings are read from the environment)."""
    readers = [c for c, names in COMPONENT_SETTINGS.items() if name in names]
    if readers:
        return (
            f"{name} (from {source}) is read only by {', '.join(readers)}, which these settings "
            "do not use: newsharvest connects to Redis with REDIS_URL and names its keys from "
            "REDIS_KEY_PREFIX"
        )
    from_environment = source.startswith("environment variable")
    found = closest_names(name, our_names() if from_environment else known)
    if from_environment:
        found = [environment_name(match) for match in found]
    closest = f"closest: {', '.join(found)}" if found else "no known setting is close"
    return f"unknown setting {name} (from {source}); {closest}"


def closest_names(name: str, candidates: Iterable[str]) -> list[str]:
    """The known names most like `name`, closest first (difflib's ratio)."""
    scored = []
    for candidate in sorted(candidates):
        ratio = difflib.SequenceMatcher(None, name, candidate).ratio()
        if ratio >= SUGGESTION_CUTOFF:
            scored.append((-ratio, candidate))
    scored.sort()
    best = -scored[0][0] if scored else 0.0
    return [c for score, c in scored[:MAX_SUGGESTIONS] if -score >= best - SUGGESTION_MARGIN]


def _default(name: str) -> Any:
    """The value of `name` in the first shipped profile that defines it, before the environment."""
    for module in profiles():
        if hasattr(module, name):
            return default_of(name, module)
    return None


# --- Values, one line each -----------------------------------------------------------------


def _check_values(
    settings: BaseSettings,
    origins: Origins,
    report: Report,
    value_checks: Mapping[str, ValueCheck],
) -> None:
    rejected = rejected_variables(origins.environ)
    typed: dict[str, Any] = {}
    for name in sorted(our_names()):
        if not in_namespaces(name) or settings.getpriority(name) is None:
            continue
        if origins.variable(name) in rejected:
            continue  # reported with the variable's own reason
        default = _default(name)
        try:
            typed[name] = _typed(settings, name, default)
        except ValueError as error:
            report.errors.append(_bad_value(settings, name, origins, str(error)))
            continue
        problem = _out_of_range(name, typed[name], default)
        if problem is None and name in value_checks:
            problem = value_checks[name](typed[name])
        if problem:
            report.errors.append(_bad_value(settings, name, origins, problem))
    for smaller, larger in ORDERED:
        if smaller in typed and larger in typed and typed[smaller] > typed[larger]:
            report.errors.append(
                f"{smaller}={typed[smaller]:g} (from {origins.of(smaller)}) is larger than "
                f"{larger}={typed[larger]:g} (from {origins.of(larger)})"
            )


def _typed(settings: BaseSettings, name: str, default: Any) -> Any:
    """The value as the components read it (Scrapy's getters, by the default's type)."""
    readers: dict[type, tuple[Callable[[str], Any], str]] = {
        bool: (settings.getbool, "1/0 or true/false"),
        int: (settings.getint, "a whole number"),
        float: (settings.getfloat, "a number"),
        list: (settings.getlist, "a list"),
        dict: (settings.getdict, "a JSON object"),
    }
    if type(default) not in readers:
        return settings.get(name)
    read, expected = readers[type(default)]
    value = settings.get(name)
    if type(default) is list and isinstance(value, str) and value.strip().startswith("["):
        try:  # -s NAME='["a","b"]': a JSON list, as the components read it
            parsed = json.loads(value)
        except ValueError:
            raise ValueError("expected a list (a JSON list or items joined by ',')") from None
        if not isinstance(parsed, list):
            raise ValueError("expected a list")
        return parsed
    try:
        return read(name)
    except (ValueError, TypeError):
        raise ValueError(f"expected {expected}") from None


def _out_of_range(name: str, value: Any, default: Any) -> str | None:
    if name in LIST_ITEMS:
        pattern, expected = LIST_ITEMS[name]
        bad = [item for item in value if not pattern.fullmatch(str(item).strip())]
        return f"{', '.join(map(repr, bad))}: each must be {expected}" if bad else None
    if name in CHOICES:
        word = str(value).strip().lower() if name in _CHOICE_FOLDED else value
        if word not in CHOICES[name]:
            return f"must be one of {', '.join(repr(choice) for choice in CHOICES[name])}"
        return None
    bounds = bounds_of(name, default)
    if bounds is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if bounds.holds(value) else f"must be {bounds.describe()}"


def _bad_value(settings: BaseSettings, name: str, origins: Origins, problem: str) -> str:
    return f"{name}={settings.get(name)!r} (from {origins.of(name)}): {problem}"


# --- At start ------------------------------------------------------------------------------


def enforce(
    settings: BaseSettings,
    program: str,
    environ: Mapping[str, str] | None = None,
    cmdline: str = "-s",
    value_checks: Mapping[str, ValueCheck] | None = None,
) -> None:
    """Check, print each finding as one line on stderr, exit with status 2 on any error."""
    report = check_settings(settings, environ, cmdline, value_checks)
    for line in report.warnings:
        print(f"{program}: warning: {line}", file=sys.stderr)
    for line in report.errors:
        print(f"{program}: error: {line}", file=sys.stderr)
    if report.errors:
        sys.stderr.flush()
        raise SystemExit(EXIT_BAD_SETTINGS)
