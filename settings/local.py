"""Local profile: one machine, embedded stores, no server needed (the `scrapy.cfg` default)."""

from __future__ import annotations

from settings.base import *  # noqa: F403  (a profile is the base plus its overrides)
from settings.base import ITEM_PIPELINES

ITEM_PIPELINES = dict(ITEM_PIPELINES)  # profiles extend the base order, never mutate it

SINK_SQLITE_ENABLED = True  # the embedded full-text index: `newsharvest search` works at once
