"""This process's name among the workers of one harvest.

Claims, feed leases, heartbeats, the monitoring store and the dashboard all name a worker the
same way, so an operator can follow one process across them.
"""

from __future__ import annotations

import os
import socket
import uuid

from scrapy.settings import BaseSettings


def worker_identity(settings: BaseSettings) -> str:
    """`WORKER_ID` when set (a restarted worker keeps its name), else `host:pid`."""
    configured = settings.get("WORKER_ID") or ""
    return str(configured).strip() or f"{socket.gethostname()}:{os.getpid()}"


# One per process: a worker restarted under the same WORKER_ID is a new life of it, and what its
# last life held is recovered at once (it cannot be working on anything of it any more).
_LIFE = uuid.uuid4().hex[:8]


def claim_owner(settings: BaseSettings) -> str:
    """The owner id this process writes on claims, feed leases and its heartbeat:
    `<worker>/<life>` (see worker_of)."""
    return f"{worker_identity(settings)}/{_LIFE}"


def worker_of(owner: str) -> str:
    """The worker name of an owner id (what an operator set as WORKER_ID, or host:pid)."""
    return owner.rpartition("/")[0] or owner
