"""Local news-site fixture: synthetic publisher domains served from one loopback port.

    room = Newsroom(seed=1)
    with NewsroomServer(room, port=0) as server:
        ...  # crawl room.feed_urls through the HTTP proxy server.proxy_url

`room.pages` holds the ground truth (true article blocks, notices, duplicates) that tests and
benchmarks compare extraction results against. Stdlib only.
"""

from __future__ import annotations

from .clock import FixtureClock, ScaledClock
from .model import BASE_DATE, Block, Page, Site
from .redesign import REDESIGN_KINDS, Redesign
from .room import Newsroom
from .server import NewsroomServer, RequestRecord, RequestTiming
from .styles import STYLES, Style

__all__ = [
    "BASE_DATE",
    "REDESIGN_KINDS",
    "STYLES",
    "Block",
    "FixtureClock",
    "Newsroom",
    "NewsroomServer",
    "Page",
    "Redesign",
    "RequestRecord",
    "RequestTiming",
    "ScaledClock",
    "Site",
    "Style",
]
