"""Failures a component survives, reported so that they get fixed: counted, and logged whole.

Some errors must not stop the harvest (a monitoring flush, a crawl-delay reader, a worker's
preparation): the component carries on, and reports the error through its `FailureLog`. Every
failure adds 1 to its stat. The first failure of each kind (exception type) is logged with its
whole traceback; after that, one line per `every` failures, with the count so far: a Redis
outage does not flood the log, and a bug that starts failing during one (a new exception type)
is still logged whole instead of reading as "Redis is down".
"""

from __future__ import annotations

import logging
from typing import Any

LOG_EVERY = 30  # failures of a kind already logged whole: one line per this many
MAX_KINDS = 32  # exception types remembered (then every failure counts as already seen)


def one_line(error: BaseException) -> str:
    """An exception as one log-friendly line (drivers put newlines in their messages)."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class FailureLog:
    """Counts and logs one kind of survived failure (`what`: "monitoring flush failed", ...)."""

    def __init__(
        self,
        logger: logging.Logger,
        stat: str,
        what: str,
        every: int = LOG_EVERY,
        level: int = logging.ERROR,
    ) -> None:
        self.logger = logger
        self.stat = stat
        self.what = what
        self.every = max(1, every)
        self.level = level
        self.count = 0
        self._kinds: set[str] = set()

    def report(
        self, stats: Any, error: BaseException, detail: str = "", traceback: str | None = None
    ) -> None:
        """Count `error` in `stats` (None: count only here) and log it when due. `detail` goes
        in the message (which item, which path); `traceback`: the text of one formatted
        elsewhere (another process), logged in place of this process's."""
        self.count += 1
        if stats is not None:
            stats.inc_value(self.stat)
        kind = type(error).__qualname__
        context = f" ({detail})" if detail else ""
        if kind not in self._kinds and len(self._kinds) < MAX_KINDS:
            self._kinds.add(kind)
            if traceback is None:
                self.logger.log(self.level, "%s%s: %s (%d so far; counted in %s)", self.what,
                                context, one_line(error), self.count, self.stat,
                                exc_info=error)  # fmt: skip
            else:
                self.logger.log(self.level, "%s%s: %s (%d so far; counted in %s)\n%s",
                                self.what, context, one_line(error), self.count, self.stat,
                                traceback.rstrip())  # fmt: skip
        elif self.count % self.every == 0:
            self.logger.log(self.level, "%s%s: %s (%d so far; the first of its kind was logged "
                            "with its traceback)", self.what, context, one_line(error),
                            self.count)  # fmt: skip
