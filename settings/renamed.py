"""Every renamed setting and environment variable, old -> new: the one table of renames.

An old name keeps working for a deprecation period: its value goes to the new name and one
warning at start names the new one (settings/check.py). From the release in `removed_in` on, the
old name is an unknown name like any other: the crawl refuses to start and names the closest
known ones. docs/upgrading.md lists these renames for people; tests/test_settings_check.py keeps
every `removed_in` ahead of the project's version, so a rename past its period must be removed.

Old environment variables are read by settings/env.py (the profiles' values), old setting names
(`-s`, a profile module of one's own) by settings/check.py, on the settings a command holds.
"""

from __future__ import annotations

from dataclasses import dataclass

# Releases an old name keeps working for: renamed in 0.2.0, refused from 0.4.0 on.
RENAMED_IN = "0.2.0"
REFUSED_FROM = "0.4.0"


@dataclass(frozen=True)
class Renamed:
    old: str  # a setting name, or an environment variable (RENAMED_VARIABLES)
    new: str  # the setting that replaces it (set in the environment as NEWSHARVEST_<new>)
    since: str = RENAMED_IN  # the release that renamed it
    removed_in: str = REFUSED_FROM  # the first release where the old name is an error
    # A setting the old name's value also switched on, when it was not empty or "off" (the old
    # Prometheus port was the switch too: empty meant no endpoint).
    enables: str = ""


# Setting names (`-s NAME=...`, a profile module): units in the names (settings/base.py's
# naming rule), and the settings that were named after their environment variable.
RENAMED_SETTINGS: tuple[Renamed, ...] = (
    Renamed("HARVEST_JOURNAL", "HARVEST_JOURNAL_PATH"),
    Renamed("HARVEST_CLAIM_LEASE", "HARVEST_CLAIM_LEASE_SECONDS"),
    Renamed("HARVEST_FEED_LEASE", "HARVEST_FEED_LEASE_SECONDS"),
    Renamed("HARVEST_TICK", "HARVEST_TICK_SECONDS"),
    Renamed("HARVEST_MAINTENANCE_EVERY", "HARVEST_MAINTENANCE_SECONDS"),
    Renamed("HARVEST_MIN_INTERVAL", "HARVEST_MIN_INTERVAL_SECONDS"),
    Renamed("HARVEST_MAX_INTERVAL", "HARVEST_MAX_INTERVAL_SECONDS"),
    Renamed("HARVEST_MIN_REVISION", "HARVEST_MIN_REVISION_SECONDS"),
    Renamed("HARVEST_RETRY_DELAY", "HARVEST_RETRY_DELAY_SECONDS"),
    Renamed("HARVEST_SEEN_TTL", "HARVEST_SEEN_TTL_SECONDS"),
    Renamed("DUPEFILTER_TTL", "DUPEFILTER_TTL_SECONDS"),
    Renamed("NEWSHARVEST_PROXY", "PROXY_URL"),
    Renamed("NEWSHARVEST_STATE_DIR", "STATE_DIR"),
    Renamed("NEWSHARVEST_OUTPUT_DIR", "OUTPUT_DIR"),
)

# Environment variables that settings/base.py read by their own names before every setting X
# became NEWSHARVEST_X (settings/env.py). A plain REDIS_URL is read too, as the old name of
# NEWSHARVEST_REDIS_URL: a deployment still exporting it would otherwise run without Redis.
RENAMED_VARIABLES: tuple[Renamed, ...] = (
    Renamed("NEWSHARVEST_PROXY", "PROXY_URL"),
    Renamed("NEWSHARVEST_INDEX", "SINK_SQLITE_PATH"),
    Renamed("REDIS_URL", "REDIS_URL"),
    Renamed("NEWSHARVEST_REDIS_PREFIX", "REDIS_KEY_PREFIX"),
    Renamed("NEWSHARVEST_POSTGRES_URL", "SINK_POSTGRES_URL"),
    Renamed("NEWSHARVEST_POSTGRES_SCHEMA", "SINK_POSTGRES_SCHEMA"),
    Renamed("NEWSHARVEST_PROMETHEUS_ADDRESS", "MONITOR_PROMETHEUS_ADDRESS"),
    Renamed(
        "NEWSHARVEST_PROMETHEUS_PORT",
        "MONITOR_PROMETHEUS_PORT",
        enables="MONITOR_PROMETHEUS_ENABLED",
    ),
)
OFF_WORDS = frozenset({"", "off"})  # an old switch-and-value name with these meant "off"
