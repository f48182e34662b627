"""This process's name among the workers of one harvest.

Claims, feed leases, heartbeats, the monitoring store and the dashboard all name a worker the
same way, so an operator can follow one process across them.
"""

from __future__ import annotations

import os
import socket

from scrapy.settings import BaseSettings


def worker_identity(settings: BaseSettings) -> str:
    """`WORKER_ID` when set (a restarted worker keeps its name), else `host:pid`."""
    configured = settings.get("WORKER_ID") or ""
    return str(configured).strip() or f"{socket.gethostname()}:{os.getpid()}"
