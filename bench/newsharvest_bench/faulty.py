"""Worker functions for the isolation tests (EXTRACT_FUNCTION): the production worker, except on
pages whose URL asks for a fault. No page of the fixture makes the real extractors hang or crash
(those bugs are fixed when found), so the faults are injected here, in the worker process, where a
real one would strike."""

from __future__ import annotations

import ctypes
import os
import sys

from pipelines.extraction.workers import PageJob, PageOutcome, extract_page

HANG_MARK = "hang-in-native-code"
CRASH_MARK = "segfault-in-native-code"
EXIT_MARK = "killed-by-the-oom-killer"


def faulty_extract_page(job: PageJob) -> PageOutcome:
    if HANG_MARK in job.url:
        while True:  # CPU-bound and never yields: only killing the process stops it
            pass
    if CRASH_MARK in job.url:
        ctypes.string_at(0)  # SIGSEGV, as a bug in a C extension would raise
    if EXIT_MARK in job.url:
        os.kill(os.getpid(), 9)
    return extract_page(job)


def heavy_modules_loaded(job: PageJob) -> list[str]:
    """Extract `job`, then name the heavy modules the worker has loaded (none is expected)."""
    extract_page(job)
    return sorted(name for name in ("datasketch", "scipy", "scrapy") if name in sys.modules)
