"""Local profile: one machine, embedded stores, no server needed (the `scrapy.cfg` default)."""

from __future__ import annotations

from settings.base import *  # noqa: F403  (a profile is the base plus its overrides)
from settings.env import apply_environment

SINK_SQLITE_ENABLED = True  # the embedded full-text index: `newsharvest search` works at once

apply_environment(globals())  # NEWSHARVEST_<SETTING> overrides this profile's values too
