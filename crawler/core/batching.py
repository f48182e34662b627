"""Group commit: requests made while an earlier batch is on its way to a store go together in
the next batch (one round trip for a burst, none added when requests come one at a time)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class GroupCommit(Generic[T, R]):
    """Requests made while an earlier batch is on its way to the store go together in the
    next (group commit): one round trip for a burst, and none added when requests come one at a
    time. Each caller gets its own result (an exception instance is raised to that caller
    alone); a failed round trip fails every request of its batch."""

    def __init__(self, flush: Callable[[list[T]], Awaitable[list[R | Exception]]],
                 most: int) -> None:  # fmt: skip
        self._flush = flush
        self._most = most
        self._queue: list[tuple[T, asyncio.Future[R]]] = []
        self._draining: asyncio.Future[None] | None = None

    async def submit(self, request: T) -> R:
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queue.append((request, future))
        if self._draining is None:
            self._draining = asyncio.ensure_future(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue[: self._most], self._queue[self._most :]
                try:
                    results = await self._flush([request for request, _ in batch])
                except Exception as error:
                    results = [error] * len(batch)
                except BaseException:  # cancelled (the loop is closing): nobody gets an answer
                    for _, future in batch + self._queue:
                        future.cancel()
                    self._queue = []
                    raise
                for (_, future), result in zip(batch, results, strict=True):
                    if future.done():  # its caller was cancelled
                        continue
                    if isinstance(result, Exception):
                        future.set_exception(result)
                    else:
                        future.set_result(result)
        finally:
            self._draining = None
