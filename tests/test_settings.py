"""One source of defaults (settings/base.py) and one environment rule (settings/env.py).

Components read settings with no default of their own: built from settings whose every value
differs from the base, each component must see exactly those values; built from the base
itself, exactly the base's. Every setting `X` is overridden by `NEWSHARVEST_X`, typed like its
default, and nothing else in the settings reads the environment.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from scrapy.settings import Settings
from scrapy.signalmanager import SignalManager

from crawler.core.heap import HeapTuning
from crawler.core.outage import RedisGate
from crawler.ledger import LedgerConfig
from crawler.polling import PollPolicy
from pipelines.extraction.workers import ExtractionPool
from pipelines.monitoring.alerts import Thresholds
from pipelines.monitoring.backends import StoreConfig
from pipelines.notices.learner import DAY_SECONDS, NoticeConfig
from pipelines.notices.pipeline import notice_config
from pipelines.sinks.base import SinkOptions
from settings import base
from settings.env import apply_environment, parse, values_of

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_FILES = ("base.py", "local.py", "distributed.py", "fixture.py")


def perturbed(value: Any) -> Any:
    """Another value of the same type and order (min <= max stays true, shares stay < 1)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value * 2 + 1
    if isinstance(value, float):
        return value * 0.5 + 0.0123 if value < 1 else value * 2 + 1
    return value


def own_settings(change: Callable[[Any], Any]) -> Settings:
    return Settings({name: change(value) for name, value in values_of(base).items()})


# (component built from settings, {attribute: (setting, how the setting becomes the value)})
SAME = float
COMPONENTS: list[tuple[str, Callable[[Settings], Any], dict[str, tuple[str, Callable]]]] = [
    (
        "ledger",
        LedgerConfig.from_settings,
        {
            "seen_ttl": ("HARVEST_SEEN_TTL_SECONDS", SAME),
            "max_versions": ("HARVEST_MAX_VERSIONS", int),
            "min_revision": ("HARVEST_MIN_REVISION_SECONDS", SAME),
            "max_attempts": ("HARVEST_MAX_ATTEMPTS", int),
            "retry_delay": ("HARVEST_RETRY_DELAY_SECONDS", SAME),
            "claim_lease": ("HARVEST_CLAIM_LEASE_SECONDS", SAME),
            "feed_lease": ("HARVEST_FEED_LEASE_SECONDS", SAME),
        },
    ),
    (
        "polling",
        PollPolicy.from_settings,
        {
            "min_interval": ("HARVEST_MIN_INTERVAL_SECONDS", SAME),
            "max_interval": ("HARVEST_MAX_INTERVAL_SECONDS", SAME),
            "polls_per_article": ("HARVEST_POLLS_PER_ARTICLE", SAME),
            "jitter": ("HARVEST_JITTER", SAME),
        },
    ),
    (
        "notices",
        notice_config,
        {
            "min_articles": ("NOTICES_MIN_ARTICLES", int),
            "min_share": ("NOTICES_MIN_SHARE", SAME),
            "half_life_seconds": ("NOTICES_HALF_LIFE_DAYS", lambda days: days * DAY_SECONDS),
            "max_signatures": ("NOTICES_MAX_SIGNATURES", int),
            "idle_ttl_seconds": ("NOTICES_IDLE_TTL_DAYS", lambda days: days * DAY_SECONDS),
            "prior_articles": ("NOTICES_PRIOR_ARTICLES", int),
            "min_body_chars": ("NOTICES_MIN_BODY_CHARS", int),
        },
    ),
    (
        "monitoring store",
        lambda s: StoreConfig.from_settings(s, 1),
        {
            "bucket_seconds": ("MONITOR_BUCKET_SECONDS", SAME),
            "retention_seconds": ("MONITOR_RETENTION_SECONDS", SAME),
            "counters_ttl_seconds": ("MONITOR_COUNTERS_TTL_SECONDS", SAME),
        },
    ),
    (
        "alerts",
        Thresholds.from_settings,
        {
            field.name: (f"MONITOR_ALERT_{field.name.upper()}", SAME)
            for field in dataclasses.fields(Thresholds)
        },
    ),
    (
        "sinks",
        SinkOptions.from_settings,
        {
            "batch_size": ("SINK_BATCH_SIZE", int),
            "batch_seconds": ("SINK_BATCH_SECONDS", SAME),
            "retry_times": ("SINK_RETRY_TIMES", int),
            "backoff_seconds": ("SINK_RETRY_BACKOFF_SECONDS", SAME),
            "backoff_max_seconds": ("SINK_RETRY_BACKOFF_MAX_SECONDS", SAME),
            "reconnect_seconds": ("SINK_RECONNECT_SECONDS", SAME),
            "connect_timeout_seconds": ("SINK_CONNECT_TIMEOUT_SECONDS", SAME),
            "write_timeout_seconds": ("SINK_WRITE_TIMEOUT_SECONDS", SAME),
            "journal_fsync": ("SINK_JOURNAL_FSYNC", bool),
        },
    ),
    (
        "extraction pool",
        lambda s: ExtractionPool.from_settings(_with(s, EXTRACT_WORKERS=2)),
        {
            "timeout_seconds": ("EXTRACT_TIMEOUT_SECONDS", SAME),
            "max_tasks": ("EXTRACT_WORKER_MAX_TASKS", int),
            "memory_limit_bytes": ("EXTRACT_WORKER_MEMORY_MB", lambda mb: mb * 1024 * 1024),
            "niceness": ("EXTRACT_WORKER_NICENESS", int),
        },
    ),
    (
        "heap",
        lambda s: HeapTuning.from_crawler(_crawler(s)),
        {
            "freeze": ("GC_FREEZE_ENABLED", bool),
            "gen0_threshold": ("GC_GEN0_THRESHOLD", int),
        },
    ),
    (
        "outage gate",
        lambda s: RedisGate(_crawler(s), "redis://127.0.0.1:1/0"),
        {
            "retry_seconds": ("REDIS_RETRY_SECONDS", SAME),
            "retry_max_seconds": ("REDIS_RETRY_MAX_SECONDS", SAME),
            "log_seconds": ("REDIS_OUTAGE_LOG_SECONDS", SAME),
            "max_seconds": ("REDIS_OUTAGE_MAX_SECONDS", SAME),
        },
    ),
]


def _crawler(settings: Settings) -> Any:
    """What the gate and the heap tuning read of a crawler: settings, signals, stats."""
    return SimpleNamespace(settings=settings, signals=SignalManager(), stats=None)


def _with(settings: Settings, **values: Any) -> Settings:
    copy = settings.copy()
    copy.update(values)
    return copy


@pytest.mark.parametrize(("change"), [lambda value: value, perturbed], ids=["base", "changed"])
@pytest.mark.parametrize(("name", "build", "fields"), COMPONENTS, ids=[c[0] for c in COMPONENTS])
def test_every_component_sees_exactly_the_settings_it_is_built_from(
    name: str, build: Callable[[Settings], Any], fields: dict, change: Callable[[Any], Any]
) -> None:
    settings = own_settings(change)
    component = build(settings)
    seen = {attribute: getattr(component, attribute) for attribute in fields}
    wanted = {attribute: how(settings[setting]) for attribute, (setting, how) in fields.items()}
    assert seen == wanted
    if change is perturbed:  # the test can fail: the values differ from the base's
        defaults = build(own_settings(lambda value: value))
        assert all(getattr(defaults, a) != v for a, v in seen.items() if a in wanted), name


def test_config_objects_built_without_settings_hold_the_base_defaults() -> None:
    """Tools build configs directly; their field defaults are settings/base.py's values."""
    from_base = Settings(values_of(base))
    assert LedgerConfig() == LedgerConfig.from_settings(from_base)
    assert PollPolicy() == PollPolicy.from_settings(from_base)
    assert Thresholds() == Thresholds.from_settings(from_base)
    assert NoticeConfig() == notice_config(from_base)
    assert StoreConfig() == StoreConfig.from_settings(from_base, Thresholds().history_pages)


def test_environment_values_are_typed_by_the_default() -> None:
    namespace = {"A_ENABLED": False, "N": 3, "X_SECONDS": 1.5, "S": "s", "L": [], "D": {}}
    environ = {
        "NEWSHARVEST_A_ENABLED": "yes", "NEWSHARVEST_N": "7", "NEWSHARVEST_X_SECONDS": "2.5",
        "NEWSHARVEST_S": "t", "NEWSHARVEST_L": '[".test"]', "NEWSHARVEST_D": '{"a": 1}',
        "N": "99",  # not the rule's name: ignored
    }  # fmt: skip
    overridden = apply_environment(namespace, environ)
    assert namespace == {"A_ENABLED": True, "N": 7, "X_SECONDS": 2.5, "S": "t",
                         "L": [".test"], "D": {"a": 1}}  # fmt: skip
    assert set(overridden) == set(namespace)


@pytest.mark.parametrize(
    ("text", "default"), [("maybe", False), ("7.5", 3), ("fast", 1.0), ('{"a": 1}', [])]
)
def test_an_environment_value_that_does_not_parse_names_its_variable(
    text: str, default: Any
) -> None:
    with pytest.raises(ValueError, match="NEWSHARVEST_SOME_SETTING"):
        parse("NEWSHARVEST_SOME_SETTING", text, default)


def test_the_environment_overrides_a_profile_and_the_command_line_overrides_the_environment(
    tmp_path: Path,
) -> None:
    code = (
        "import json\n"
        "from scrapy.utils.project import get_project_settings\n"
        "s = get_project_settings()\n"
        "s.set('DEDUP_THRESHOLD', 0.9, priority='cmdline')\n"
        "print(json.dumps([s.getbool('SINK_SQLITE_ENABLED'), s.getfloat('DEDUP_THRESHOLD'),"
        " s.get('STATE_DIR'), s.getlist('NETWORK_ALLOWLIST')]))\n"
    )
    env = {
        **os.environ,
        "SCRAPY_SETTINGS_MODULE": "settings.fixture",
        "NEWSHARVEST_SINK_SQLITE_ENABLED": "0",  # the local profile turns it on
        "NEWSHARVEST_DEDUP_THRESHOLD": "0.7",
        "NEWSHARVEST_STATE_DIR": str(tmp_path / "state"),
        "NEWSHARVEST_NETWORK_ALLOWLIST": '[".example"]',  # the fixture profile sets [".test"]
    }
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout) == [False, 0.9, str(tmp_path / "state"), [".example"]]


def test_only_the_environment_rule_reads_the_environment_in_the_settings() -> None:
    for name in SETTINGS_FILES:
        text = (ROOT / "settings" / name).read_text()
        assert "os.environ" not in text and "getenv" not in text, name
        assert "apply_environment(globals())" in text, name  # the profile's own values too


def test_settings_follow_the_naming_rule() -> None:
    """Durations say their unit; our switches are *_ENABLED (Scrapy's own names are Scrapy's)."""
    from scrapy.settings import default_settings

    ours = [name for name in values_of(base) if not hasattr(default_settings, name)]
    timing_words = ("INTERVAL", "TTL", "DELAY", "LEASE", "TIMEOUT", "TICK", "REVISION", "EVERY")
    for name in ours:
        if any(word in name.split("_") for word in timing_words):
            assert name.endswith(("_SECONDS", "_DAYS")), name
        if isinstance(getattr(base, name), bool) and name.endswith("_ON"):
            pytest.fail(f"{name}: a switch is named *_ENABLED")


def test_the_crawl_counts_with_the_stats_collector_without_scrapys_per_call_shim() -> None:
    from scrapy.utils.test import get_crawler

    from crawler.core.stats import HarvestStatsCollector
    from settings import base

    crawler = get_crawler(settings_dict={"STATS_CLASS": base.STATS_CLASS})
    stats = crawler.stats
    assert isinstance(stats, HarvestStatsCollector)
    stats.inc_value("extract/null")
    stats.inc_value("extract/null", 2)
    stats.max_value("peak", 3)
    stats.max_value("peak", 1)
    assert stats.get_stats() == {"extract/null": 3, "peak": 3}
    # Scrapy's shim caches a wrapper per method on the instance; without it, none is made.
    assert not any(name.startswith("_cached_") for name in vars(stats))
