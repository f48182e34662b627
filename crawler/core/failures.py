"""Failures a component survives, reported so that they get fixed: counted, and logged whole.

Some errors must not stop the harvest (a monitoring flush, a crawl-delay reader, a worker's
preparation): the component carries on, and reports the error through its `FailureLog`. Every
failure adds 1 to its stat. The first failure of each kind (exception type) is logged with its
whole traceback; after that, one line per `every` failures, with the count so far: a Redis
outage does not flood the log, and a bug that starts failing during one (a new exception type)
is still logged whole instead of reading as "Redis is down". An error the component expects
(`plain`: say, Redis unreachable, which the outage gate reports on its own) is logged as one
line even the first time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
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
        plain: Callable[[BaseException], bool] | None = None,
    ) -> None:
        self.logger = logger
        self.stat = stat
        self.what = what
        self.every = max(1, every)
        self.level = level
        self.plain = plain  # errors whose one line says it all: no traceback
        self.count = 0
        self._kinds: dict[str, bool] = {}  # kinds logged so far: with a traceback?

    def report(self, stats: Any, error: BaseException, detail: str = "") -> None:
        """Count `error` in `stats` (None: count only here) and log it when due; `detail` goes
        in the message (which item, which host)."""
        whole = None if self.plain is not None and self.plain(error) else error
        self._note(stats, type(error).__qualname__, one_line(error), detail, whole)

    def report_remote(
        self, stats: Any, kind: str, line: str, traceback: str, detail: str = ""
    ) -> None:
        """`report` for an error raised in another process (a worker), as its exception type's
        name, its one-line message and its formatted traceback."""
        self._note(stats, kind, line, detail, traceback.rstrip())

    def _note(
        self, stats: Any, kind: str, line: str, detail: str, whole: BaseException | str | None
    ) -> None:
        """`whole`: the traceback to log with the first of a kind (an exception, or its text)."""
        self.count += 1
        if stats is not None:
            stats.inc_value(self.stat)
        context = f" ({detail})" if detail else ""
        if kind not in self._kinds and len(self._kinds) < MAX_KINDS:
            self._kinds[kind] = whole is not None
            message = f"{self.what}{context}: {line} ({self.count} so far; counted in {self.stat})"
            if isinstance(whole, str):
                self.logger.log(self.level, "%s\n%s", message, whole)
            else:
                self.logger.log(self.level, "%s", message, exc_info=whole)
        elif self.count % self.every == 0:
            logged = "; the first of its kind was logged with its traceback"
            self.logger.log(self.level, "%s%s: %s (%d so far%s)", self.what, context, line,
                            self.count, logged if self._kinds.get(kind) else "")  # fmt: skip
