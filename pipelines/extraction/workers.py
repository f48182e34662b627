"""Extraction off the reactor: worker processes with a per-page time budget and crash isolation.

Scrapy runs on one thread, so extracting in `process_item` (2-3 ms of lxml and numpy per page)
stalls every download and leaves the second core idle. `ExtractionPool` runs the CPU-bound work
in worker processes and hands the reactor an awaitable; the reactor only ships the raw HTML there
and the finished article back. A page over its time budget has its worker killed and replaced; a
worker that dies on a page (a segfault in native code, the OOM killer, its memory limit) costs
only that page. Both become a NULL with a reason (`timeout`, `worker_crashed`).

Each worker runs one task at a time, in order, over its own socket pair driven by the event loop
(no threads in the crawler). TASKS_PER_WORKER requests are sent ahead, so a worker finds its next
page waiting instead of idling until the busy reactor sends it; the replies come back in order, so
the pool always knows which page a stuck or dead worker had (the oldest unanswered one; the ones
queued behind it go to another worker). pebble,
used first, learns that from acknowledgements a helper thread reads, and that is racy: a worker
that dies before its acknowledgement is read leaves its task orphaned (pebble issue #153; our CI
once saw a segfault reported as a timeout and an article lost at shutdown).

Workers are forked from a fork server that has already imported the extractors (cheap
replacements, and no copy of the crawler's memory or threads in the workers). This module is
what the fork server preloads, so it imports no Scrapy.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import pickle
import resource
import signal
import socket
import struct
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from crawler.core.failures import one_line
from crawler.core.process import die_with_parent
from extractors import Article, Extraction, extract_verbose
from extractors.article import running_texts
from extractors.chain import NULL_EXTRACTOR_ERROR
from pipelines.fingerprints import Fingerprint, LshParams, fingerprint_blocks

if TYPE_CHECKING:
    from multiprocessing.context import ForkServerContext, ForkServerProcess

    from scrapy.settings import BaseSettings

log = logging.getLogger(__name__)

NULL_TIMEOUT = "timeout"  # the page used up its time budget; its worker was killed
NULL_WORKER_CRASHED = "worker_crashed"  # the worker died on the page (native crash, memory)
AUTO_WORKERS = -1  # EXTRACT_WORKERS value: a worker per core but the reactor's, within bounds
# At least two, so two on 2 cores. A worker makes the fingerprint and the notices stage's block
# signatures besides the article (~2 ms a page): alone, it idled whenever the busy reactor was
# late sending it a page, and the reactor idled waiting for it (a replay of `bench replay`'s WARC,
# alternating runs: 292, 304, 314 articles/s with one, 336, 330, 380 with two; docs/benchmarks.md
# has seven pairs). A crawl, bound by its reactor,
# neither gains nor loses (`bench pipeline`: 172, 172 vs 170, 181/s) and holds 21 MB more. The
# second worker also goes on extracting while a stuck page runs out its EXTRACT_TIMEOUT_SECONDS.
MIN_AUTO_WORKERS = 2
MAX_AUTO_WORKERS = 4  # one worker keeps up with ~500 pages/s; the reactor thread saturates first
# Requests sent ahead to a worker: its next page already waits in its socket when it answers, so
# it does not idle while the busy reactor gets round to sending one. One at a time, the worker
# idled half the time; two: `bench replay` 230 -> 318 articles/s, its crawl 137 -> 158/s.
TASKS_PER_WORKER = 2
JOIN_TIMEOUT_SECONDS = 10.0  # closing: how long running tasks may take before workers are killed
EXIT_WAIT_SECONDS = 1.0  # how long a worker that closed its socket may take to report its exit
# A new worker's start (fork, then multiprocessing's bootstrap, which imports the crawler's main
# module) is not part of any page's budget; a worker not up after this long counts as crashed.
START_TIMEOUT_SECONDS = 60.0
MIB = 1024 * 1024
MAX_NICENESS = 19  # the lowest scheduling priority Linux gives
FRAME = struct.Struct("!Q")  # a message on a worker's socket: its length, then its pickle
T = TypeVar("T")
# What a new worker runs once before its first page, as (function, args): e.g. state the crawler
# computed that the worker would otherwise compute (or import) itself.
Initializer = tuple[Callable[..., object], tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class WorkerLimits:
    """What a worker process sets on itself at its start."""

    memory_bytes: int  # address-space cap (0: none)
    niceness: int  # added to its scheduling niceness (0: the crawler's priority)


@dataclass(slots=True)
class PageJob:
    """What a worker needs to extract one page (the raw body, not the Scrapy response)."""

    html: bytes | str
    url: str
    encoding: str | None
    extractor: str
    lsh: LshParams | None = None  # set when the dedup stage will want the text's fingerprint
    # Later stages' CPU work on the article (`module:function(article)` paths), done here too.
    preparations: tuple[str, ...] = ()


class PreparationFailure(NamedTuple):
    """A preparation's error, as text (the exception itself may not pickle)."""

    kind: str  # the exception type's name
    line: str  # "<Type>: <message>" on one line
    traceback: str


@dataclass(slots=True)
class PageOutcome:
    """The extraction, the near-duplicate fingerprint of its text (MinHash: CPU work the dedup
    stage would otherwise do in the reactor), what the job's preparations made of the article,
    by path, and the CPU seconds it all took in the worker."""

    extraction: Extraction
    cpu_seconds: float
    fingerprint: Fingerprint | None = None
    prepared: dict[str, Any] | None = None
    # Preparations that raised, by path: for the stage to log and count (a worker cannot).
    failed: dict[str, PreparationFailure] | None = None


def extract_page(job: PageJob) -> PageOutcome:
    """The default worker function (also what the in-reactor mode calls)."""
    started = time.process_time()
    extraction = extract_verbose(job.html, job.url, encoding=job.encoding, extractor=job.extractor)
    article = extraction.article
    found = prepared = failed = None
    if article is not None and job.lsh is not None:
        found = fingerprint_blocks(running_texts(article.blocks), job.lsh)
    if article is not None and job.preparations:
        prepared, failed = run_preparations(article, job.preparations)
    return PageOutcome(extraction, time.process_time() - started, found, prepared, failed or None)


def run_preparations(
    article: Article, paths: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, PreparationFailure]]:
    """Each preparation's result, by path, and the failures of those that raised. One that
    fails is left out: its stage then does the work itself, in the reactor; the extraction
    stage logs the failure (the first of its kind with its traceback) and counts it
    (`extract/preparation_errors`)."""
    prepared, failed = {}, {}
    for path in paths:
        try:
            prepared[path] = function_at(path, "a worker preparation")(article)
        except Exception as error:
            failed[path] = PreparationFailure(
                type(error).__qualname__, one_line(error), traceback.format_exc()
            )
    return prepared, failed


def resolve_function(path: str) -> Callable[[PageJob], PageOutcome]:
    """`module:function` or `module.function` -> the function (tests inject faulty workers)."""
    return function_at(path, "EXTRACT_FUNCTION")


@functools.lru_cache(maxsize=16)
def function_at(path: str, what: str) -> Callable[..., Any]:
    """`module:function` or `module.function` -> the function; `what` names it in the error."""
    module_name, _, name = path.replace(":", ".").rpartition(".")
    function = getattr(importlib.import_module(module_name), name, None)
    if not callable(function):
        raise ValueError(f"{what} {path!r} is not a function")
    return function


def worker_count(setting: int) -> int:
    """EXTRACT_WORKERS -> processes: 0 means extract in the reactor thread."""
    if setting == AUTO_WORKERS:
        return max(MIN_AUTO_WORKERS, min((os.cpu_count() or 1) - 1, MAX_AUTO_WORKERS))
    if setting < 0:
        raise ValueError(f"EXTRACT_WORKERS must be >= 0 or {AUTO_WORKERS} (auto), not {setting}")
    return setting


# --- the worker process -------------------------------------------------------------------


def _serve(sock: socket.socket, limits: WorkerLimits, initializer: Initializer | None) -> None:
    """A worker's life: run `(function, args)` requests one at a time until the crawler closes
    the socket; only that or a fault of the process ends it."""
    _prepare_worker(limits)
    if initializer is not None:
        function, args = initializer
        function(*args)
    try:
        sock.sendall(FRAME.pack(0))  # up: the page clock starts now
        while (request := _read_message(sock)) is not None:
            _reply(sock, request)
    except OSError:  # the crawler closed or reset the socket (it stopped): nothing to report
        return


def _reply(sock: socket.socket, request: bytes) -> None:
    """Run one request; its result, or the exception it raised, goes back as the reply."""
    function, args = pickle.loads(request)
    try:
        reply: tuple[bool, Any] = (True, function(*args))
    except Exception as error:
        reply = (False, error)
    try:
        message = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
    except Exception as error:  # an unpicklable result or exception
        message = pickle.dumps((False, RuntimeError(f"reply not picklable: {error!r}")))
    sock.sendall(FRAME.pack(len(message)) + message)


def _prepare_worker(limits: WorkerLimits) -> None:
    # Ctrl-C reaches the whole process group; the crawler decides when its workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()  # a crawler killed with SIGKILL takes a stuck worker with it
    # Cap the address space, so a page that makes lxml allocate without bound fails
    # (MemoryError or a dead worker: one NULL) instead of swapping the machine.
    if limits.memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    # The reactor thread is the one serial step every page goes through: when the cores are
    # short, it runs first and the workers take what it leaves (they have pages queued ahead).
    if limits.niceness > 0:
        os.nice(limits.niceness)


def _read_message(sock: socket.socket) -> bytes | None:
    """The next message, None when the crawler closed the socket."""
    header = _read_exactly(sock, FRAME.size)
    return None if header is None else _read_exactly(sock, FRAME.unpack(header)[0])


def _read_exactly(sock: socket.socket, size: int) -> bytes | None:
    buffer = bytearray(size)
    view, received = memoryview(buffer), 0
    while received < size:
        count = sock.recv_into(view[received:])
        if not count:
            return None
        received += count
    return bytes(buffer)


# --- the crawler's side -------------------------------------------------------------------


class WorkerFailed(Exception):
    """A task's worker went over the time budget or died; `reason` is the NULL reason."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass(slots=True, eq=False)
class _Task:
    """A request sent to a worker and the future its reply (or failure) goes to."""

    message: bytes
    reply: asyncio.Future[bytes]
    sent_at: float = 0.0


class _Budget:
    """The time budget of a worker's head task, on the event loop's clock, and the timer that
    enforces it by cancelling the worker's reader.

    The loop's clock also runs while the loop itself is stalled (a long synchronous stage),
    and a reply that came in meanwhile is read only after the stall: in the same pass as the
    timer, whose handle runs after the reply's read has been scheduled. So the verdict waits
    one pass, and a task whose reply is being read by then was not over its budget."""

    def __init__(
        self, worker: _Worker, head: _Task, reader: asyncio.Task[None], seconds: float, start: float
    ) -> None:
        self.worker, self.head, self.reader, self.seconds = worker, head, reader, seconds
        self.loop = asyncio.get_running_loop()
        self.overdue = False
        self._handle: asyncio.Handle = self.loop.call_at(start + seconds, self._expire)

    def cancel(self) -> None:
        self._handle.cancel()

    def _expire(self) -> None:
        self._handle = self.loop.call_soon(self._judge)

    def _judge(self) -> None:
        worker = self.worker
        if not worker.queue or worker.queue[0] is not self.head:
            return  # answered in the pass just run
        if worker.replying:  # its work is done, the (long) reply on its way: bounded again
            self._handle = self.loop.call_later(self.seconds, self._expire)
            return
        self.overdue = True
        self.reader.cancel()


class _Resend(Exception):
    """The task waited behind one that killed its worker: it goes to another worker."""


class _Worker:
    """One worker process and the crawler's end of its socket (non-blocking, for the loop).

    Up to TASKS_PER_WORKER requests are sent ahead; the worker runs them in order, so `queue`
    (sent, reply not read yet) says which one is running: its head."""

    def __init__(
        self, context: ForkServerContext, limits: WorkerLimits, initializer: Initializer | None
    ) -> None:
        ours, theirs = socket.socketpair()
        self.process: ForkServerProcess = context.Process(
            target=_serve,
            args=(theirs, limits, initializer),
            name="newsharvest-extract",
        )
        self.process.daemon = True
        self.process.start()
        theirs.close()
        ours.setblocking(False)
        self.sock = ours
        self.tasks = 0  # tasks handed to it
        self.up = False
        self.gone = False  # killed or retired: takes no more tasks
        self.queue: deque[_Task] = deque()
        self.reader: asyncio.Task[None] | None = None
        self.replying = False  # the head's reply is being read: its work is done
        self.sending = asyncio.Lock()  # one message at a time on the socket, in queue order

    async def started(self) -> None:
        """Wait for the worker's first message, which says it is up; EOFError if it died or
        is not up in time."""
        if not self.up:
            loop = asyncio.get_running_loop()
            try:
                await asyncio.wait_for(self._receive(loop, FRAME.size), START_TIMEOUT_SECONDS)
            except TimeoutError:
                raise EOFError(f"not up after {START_TIMEOUT_SECONDS:g} s") from None
            self.up = True

    async def send(self, task: _Task) -> None:
        """Queue the task and send it (after the ones queued before it). A worker that died
        meanwhile is the reader's to report: it fails or resends the task."""
        async with self.sending:
            if self.gone:
                if not task.reply.done():
                    task.reply.set_exception(_Resend())
                return
            loop = asyncio.get_running_loop()
            self.tasks += 1
            task.sent_at = loop.time()
            self.queue.append(task)
            with contextlib.suppress(OSError):  # the worker is gone: its reader sees that
                await loop.sock_sendall(self.sock, FRAME.pack(len(task.message)) + task.message)
        if self.gone:  # killed or retired while this was being sent: close it now
            self.sock.close()

    async def reply(self) -> bytes:
        """The next reply; EOFError when the worker died."""
        loop = asyncio.get_running_loop()
        (size,) = FRAME.unpack(await self._receive(loop, FRAME.size))
        self.replying = True
        try:
            return await self._receive(loop, size)
        finally:
            self.replying = False

    async def _receive(self, loop: asyncio.AbstractEventLoop, size: int) -> bytes:
        buffer = bytearray(size)
        view, received = memoryview(buffer), 0
        while received < size:
            count = await loop.sock_recv_into(self.sock, view[received:])
            if not count:
                raise EOFError("the worker closed its socket")
            received += count
        return bytes(buffer)

    async def exit_code(self) -> int | None:
        """The exit code of a worker that closed its socket (None if it has not exited)."""
        await asyncio.to_thread(self.process.join, EXIT_WAIT_SECONDS)
        return self.process.exitcode

    def retire(self) -> None:
        """Closing the socket ends an idle worker's loop; the process exits on its own."""
        self.gone = True
        self._close()

    def kill(self) -> None:
        self.gone = True
        if self.process.exitcode is None:
            self.process.kill()
        self._close()

    def _close(self) -> None:
        """Close our end, unless a message is being sent on it: the event loop still watches
        the socket then, and the send (which fails once the worker is dead) closes it."""
        if not self.sending.locked():
            self.sock.close()


class ExtractionPool:
    """`await pool.run(job)` -> PageOutcome, with `timeout`/`worker_crashed` as NULLs; any
    CPU-bound function runs in a worker with `await pool.call(function, *args)`."""

    def __init__(
        self,
        workers: int,
        timeout_seconds: float,
        function: str,
        *,
        max_tasks: int = 0,
        memory_limit_mb: int = 0,
        niceness: int = 0,
        initializer: Initializer | None = None,
        preload: tuple[str, ...] = (),
    ) -> None:
        if workers < 1:
            raise ValueError(f"an extraction pool needs at least one worker, not {workers}")
        self.workers = workers
        self.timeout_seconds = timeout_seconds
        self.function = resolve_function(function)
        self.max_tasks = max_tasks
        if not 0 <= niceness <= MAX_NICENESS:
            raise ValueError(f"EXTRACT_WORKER_NICENESS must be 0 to {MAX_NICENESS}, not {niceness}")
        self.memory_limit_bytes = memory_limit_mb * MIB
        self.niceness = niceness
        self.initializer = initializer
        self._context = multiprocessing.get_context("forkserver")
        # The fork server imports the extractors once; every worker (and every replacement for a
        # killed one) is a fork of it. Must be set before the server starts.
        self._context.set_forkserver_preload([__name__, self.function.__module__, *preload])
        self._free: deque[_Worker] = deque()  # a worker per free place in it
        self._waiting: deque[asyncio.Future[_Worker]] = deque()  # calls waiting for a place
        self._all: set[_Worker] = set()
        self._running = 0  # calls not answered yet
        self._drained = asyncio.Event()  # set when the pool is closed and every call answered
        self._closed = False

    @classmethod
    def from_settings(
        cls,
        settings: BaseSettings,
        initializer: Initializer | None = None,
        preload: tuple[str, ...] = (),
    ) -> ExtractionPool | None:
        """The pool EXTRACT_* describe, None with EXTRACT_WORKERS=0; `preload`: modules the
        workers will need besides the extractors."""
        workers = worker_count(settings.getint("EXTRACT_WORKERS"))
        if not workers:
            return None
        return cls(
            workers,
            settings.getfloat("EXTRACT_TIMEOUT_SECONDS"),
            settings.get("EXTRACT_FUNCTION"),
            max_tasks=settings.getint("EXTRACT_WORKER_MAX_TASKS"),
            memory_limit_mb=settings.getint("EXTRACT_WORKER_MEMORY_MB"),
            niceness=settings.getint("EXTRACT_WORKER_NICENESS"),
            initializer=initializer,
            preload=preload,
        )

    def warm_up(self) -> None:
        """Start the fork server now: it imports the extractors (0.3-0.4 s) while the crawler
        goes on starting, instead of in `start`, where the reactor would wait for it."""
        multiprocessing.forkserver.ensure_running()

    def start(self) -> None:
        """Start the workers now rather than on the first page (a broken setup fails here)."""
        while len(self._all) < self.workers:
            self._add_worker()

    def _add_worker(self) -> None:
        limits = WorkerLimits(self.memory_limit_bytes, self.niceness)
        worker = _Worker(self._context, limits, self.initializer)
        self._all.add(worker)
        for _ in range(TASKS_PER_WORKER):
            self._give(worker)

    def _give(self, worker: _Worker) -> None:
        """A free place in `worker`: to the first call waiting, else kept for the next one."""
        while self._waiting:
            caller = self._waiting.popleft()
            if not caller.done():  # not cancelled
                caller.set_result(worker)
                return
        self._free.append(worker)

    async def _take(self) -> _Worker:
        """A place in a live worker, waiting for one."""
        while self._free:
            worker = self._free.popleft()
            if not worker.gone:  # places in killed or retired workers are dropped
                return worker
        caller: asyncio.Future[_Worker] = asyncio.get_running_loop().create_future()
        self._waiting.append(caller)
        try:
            return await caller
        except asyncio.CancelledError:
            if caller.done() and not caller.cancelled():  # given, then cancelled: pass it on
                self._give(caller.result())
            raise

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` in a worker; WorkerFailed when it times out or kills the worker,
        the function's own exception when it raises."""
        if self._closed:
            raise RuntimeError("the extraction pool is closed")
        self.start()
        message = pickle.dumps((function, args), pickle.HIGHEST_PROTOCOL)
        self._running += 1
        try:
            reply = await self._answer(message)
        finally:
            self._running -= 1
            if self._closed and not self._running:
                self._drained.set()
        ok, value = pickle.loads(reply)
        if not ok:
            raise value
        return value

    async def _answer(self, message: bytes) -> bytes:
        """The reply to `message` from the first worker with room, sent again to another one
        when the task ahead of it killed its worker."""
        loop = asyncio.get_running_loop()
        while True:
            worker = await self._take()
            task = _Task(message, loop.create_future())
            sending = asyncio.ensure_future(worker.send(task))
            sending.add_done_callback(lambda _, worker=worker: self._read_from(worker))
            # Shielded: a cancelled caller must not leave half a message on the socket.
            await asyncio.shield(sending)
            try:
                return await task.reply
            except _Resend:
                continue

    def _read_from(self, worker: _Worker) -> None:
        if worker.reader is None and worker.queue:
            worker.reader = asyncio.ensure_future(self._read_replies(worker))

    async def _read_replies(self, worker: _Worker) -> None:
        """Answer the worker's tasks in order while it has some. The head's time budget starts
        when the task before it was answered (or when it was sent to an idle worker); a timer,
        not a wait_for task per page, enforces it."""
        loop = asyncio.get_running_loop()
        reader = asyncio.current_task()
        assert reader is not None
        budget: _Budget | None = None  # its `overdue` says the cancellation is the budget's
        try:
            await worker.started()
            clock = loop.time()
            while worker.queue:
                head = worker.queue[0]
                clock = max(clock, head.sent_at)
                budget = _Budget(worker, head, reader, self.timeout_seconds, clock)
                try:
                    reply = await worker.reply()
                finally:
                    budget.cancel()
                clock = loop.time()
                worker.queue.popleft()
                if not head.reply.done():  # its caller may have been cancelled
                    head.reply.set_result(reply)
                self._answered(worker)
        except asyncio.CancelledError:
            if budget is None or not budget.overdue:
                raise
            self._fail(worker, NULL_TIMEOUT, f"took over {self.timeout_seconds:g} s")
        except (EOFError, ConnectionError, OSError):
            code = await worker.exit_code()
            self._fail(worker, NULL_WORKER_CRASHED, f"exit code {code}")
        finally:
            worker.reader = None

    def _answered(self, worker: _Worker) -> None:
        """A place in the worker is free again; a worn-out worker is replaced once idle."""
        worn_out = self.max_tasks and worker.tasks >= self.max_tasks
        if not worn_out and not self._closed:
            self._give(worker)
        elif worn_out and not worker.queue:
            self._all.discard(worker)
            worker.retire()
            if not self._closed:
                self._add_worker()

    def _fail(self, worker: _Worker, reason: str, detail: str) -> None:
        """The head task failed its worker (budget spent, or the process died): it is killed
        and replaced; the tasks queued behind the head go to other workers."""
        worker.kill()
        self._all.discard(worker)
        for index, task in enumerate(worker.queue):
            if not task.reply.done():
                task.reply.set_exception(WorkerFailed(reason, detail) if index == 0 else _Resend())
        worker.queue.clear()
        if not self._closed:
            self._add_worker()

    async def run(self, job: PageJob) -> PageOutcome:
        try:
            return await self.call(self.function, job)
        except WorkerFailed as failure:
            log.warning(
                "extraction of %s failed in its worker (%s): page is NULL (%s)",
                job.url,
                failure,
                failure.reason,
            )
            spent = self.timeout_seconds if failure.reason == NULL_TIMEOUT else 0.0
            return PageOutcome(Extraction(article=None, reason=failure.reason), spent)
        except Exception:  # the worker function raised (extract_verbose itself never does)
            log.exception("extraction of %s raised in its worker: page is NULL", job.url)
            return PageOutcome(Extraction(article=None, reason=NULL_EXTRACTOR_ERROR), 0.0)

    async def close(self) -> None:
        """Let running tasks finish (bounded by JOIN_TIMEOUT_SECONDS), then stop the workers."""
        self._closed = True
        if self._running:  # the last call to be answered sets _drained
            try:
                await asyncio.wait_for(self._drained.wait(), JOIN_TIMEOUT_SECONDS)
            except TimeoutError:
                log.warning("extraction workers busy after %g s: killed", JOIN_TIMEOUT_SECONDS)
        for worker in self._all:
            worker.retire()
        for worker in self._all:
            await worker.exit_code()
            worker.kill()  # only if it did not exit
        self._all.clear()


def describe(pool: ExtractionPool | None) -> str:
    if pool is None:
        return "extraction in the reactor thread (EXTRACT_WORKERS=0): no time budget"
    return f"extraction in {pool.workers} worker process(es), {pool.timeout_seconds:g} s per page"
