"""Child processes that must not outlive the process that started them."""

from __future__ import annotations

import ctypes
import signal
import sys

PR_SET_PDEATHSIG = 1  # Linux prctl: a signal for the process when its parent dies


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """Have the kernel send `signum` to this process when its parent dies (Linux; elsewhere
    nothing). Run in the child: a worker stuck in native code, or a replay shard, goes with
    the process that owns it instead of running on unowned."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum)
