"""The thread pool of a server's plain ``def`` handlers.

Unlike :class:`concurrent.futures.ThreadPoolExecutor`, a call that is given up (its request
timed out, was cancelled, or the server shut down) does not keep holding a thread of the pool:
a thread cannot be stopped from outside, so it is *abandoned* and the pool starts another in
its place, up to ``max_abandoned`` abandoned threads at once (past that, a stuck thread keeps
counting against ``max_workers``). An abandoned thread that finally returns rejoins the pool
when there is room, and otherwise ends.

Every thread is a daemon: nothing joins it when the interpreter exits, so a stuck handler
cannot keep the process alive after the server stopped (a ``ThreadPoolExecutor`` is joined at
exit, which made shutdown wait forever). When every thread is busy, the pool logs one warning
(logger ``"mcpaxle"``) naming the handlers holding them, and calls wait in order.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import os
import threading
import time
from typing import Any, Callable

logger = logging.getLogger("mcpaxle")

__all__ = ["Pool", "default_max_workers"]


def default_max_workers() -> int:
    """``min(32, cpu_count + 4)``, as ``ThreadPoolExecutor``."""
    return min(32, (os.cpu_count() or 1) + 4)


class _Job:
    __slots__ = ("what", "fn", "ctx", "loop", "future", "state", "started", "abandoned")

    def __init__(self, what: str, fn: Callable[[], Any], loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]) -> None:
        self.what, self.fn, self.loop, self.future = what, fn, loop, future
        self.ctx = contextvars.copy_context()
        self.state = "queued"  # queued, running, done, dropped (given up while queued)
        self.started = 0.0
        #: Whether the thread running it was moved out of the pool (see Pool._give_up).
        self.abandoned = False


def _deliver(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if not future.done():
        future.set_result(outcome)


class Pool:
    """The bounded thread pool of a server's ``def`` handlers; threads start on demand.

    ``max_workers`` (default ``min(32, cpu_count + 4)``) bounds the threads running calls;
    ``max_abandoned`` (default: ``max_workers``) bounds the threads left running calls that
    were given up."""

    def __init__(self, max_workers: int | None = None, max_abandoned: int | None = None) -> None:
        self.max_workers = max_workers if max_workers is not None else default_max_workers()
        if self.max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_abandoned = max_abandoned if max_abandoned is not None else self.max_workers
        if self.max_abandoned < 0:
            raise ValueError("max_abandoned_threads must be 0 or more")
        self._cv = threading.Condition(threading.Lock())
        self._queue: collections.deque[_Job] = collections.deque()
        self._workers = 0  # threads of the pool (not abandoned)
        self._free = 0  # of those, not running a job (waiting for one, or about to)
        self._abandoned = 0  # threads running a job that was given up
        self._running: dict[int, _Job] = {}
        self._saturated = False
        self._limit_logged = False
        self._closed = False

    @property
    def abandoned(self) -> int:
        """How many threads are running calls that were given up."""
        return self._abandoned

    async def run(self, what: str, fn: Callable[[], Any]) -> Any:
        """Runs ``fn()`` on a thread of the pool (in a copy of the current context) and returns
        its result, or raises what it raised (any ``BaseException``). Cancelling the awaiting
        task gives the call up: its thread, if it started, is abandoned."""
        loop = asyncio.get_running_loop()
        job = _Job(what, fn, loop, loop.create_future())
        self._submit(job)
        try:
            ok, value = await job.future
        except asyncio.CancelledError:
            self._give_up(job)
            raise
        if ok:
            return value
        try:
            raise value
        finally:
            value = None

    def _submit(self, job: _Job) -> None:
        with self._cv:
            self._closed = False  # served again after a shutdown
            self._queue.append(job)
            if self._free >= len(self._queue):  # a free thread not yet claimed by a queued job
                self._cv.notify()
                return
            if self._workers < self.max_workers:
                self._start_thread()
                return
            if self._saturated:
                return
            self._saturated = True
            running = [j for j in self._running.values() if not j.abandoned]
            # Threads just started have not taken their job yet: the first queued ones are theirs.
            claimed = list(self._queue)[: max(0, self._workers - len(running))]
            holders = collections.Counter(j.what for j in running + claimed if j is not job)
            now = time.monotonic()
            longest = max((now - j.started for j in running), default=0.0)
        names = ", ".join(f"{what} x{n}" if n > 1 else what for what, n in holders.most_common())
        logger.warning(
            "mcpaxle: all %d handler threads are busy (%s, running for up to %.1f s), so the %s waits for one. "
            "A plain def handler holds its thread until it returns: give slow or stuck ones a timeout "
            "(Server(handler_timeout_ms=...) or @server.tool(timeout_ms=...)), make them async, or raise max_workers.",
            self.max_workers,
            names,
            longest,
            job.what,
        )

    def _start_thread(self) -> None:
        """Adds a thread to the pool (call with the lock held)."""
        self._workers += 1
        self._free += 1
        threading.Thread(target=self._work, name="mcpaxle-handler", daemon=True).start()

    def _give_up(self, job: _Job) -> None:
        """The awaiting task of ``job`` was cancelled: drop it if queued; abandon its thread
        if it runs (a replacement starts when calls wait)."""
        with self._cv:
            if job.state == "queued":
                job.state = "dropped"
                try:
                    self._queue.remove(job)
                except ValueError:
                    pass
                return
            if job.state != "running" or job.abandoned:
                return
            if self._abandoned >= self.max_abandoned:
                if self._limit_logged:
                    return
                self._limit_logged = True
                stuck = self._abandoned
                job_what = job.what
            else:
                job.abandoned = True
                self._abandoned += 1
                self._workers -= 1
                if self._queue and self._free < len(self._queue) and not self._closed:
                    self._start_thread()
                return
        logger.error(
            "mcpaxle: the %s was given up but its thread cannot be stopped, and %d abandoned threads are already running "
            "(max_abandoned_threads): it keeps its place in the pool until it returns (said once until one of them returns).",
            job_what,
            stuck,
        )

    def _work(self) -> None:
        me = threading.get_ident()
        while True:
            with self._cv:
                while not self._queue and not self._closed:
                    self._cv.wait()
                if self._closed:
                    self._workers -= 1
                    self._free -= 1
                    return
                job = self._queue.popleft()
                self._free -= 1
                job.state = "running"
                job.started = time.monotonic()
                self._running[me] = job
            try:
                outcome: tuple[bool, Any] = (True, job.ctx.run(job.fn))
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting task, which sorts it
                outcome = (False, e)
            # Counted free before the result is delivered: the next call it lets the loop make
            # finds this thread available (no spurious new thread, no spurious "busy" warning).
            with self._cv:
                job.state = "done"
                del self._running[me]
                if not self._queue:
                    self._saturated = False
                leave = False
                if job.abandoned:
                    self._abandoned -= 1
                    self._limit_logged = False
                    leave = self._closed or self._workers >= self.max_workers
                    if not leave:
                        self._workers += 1
                if not leave:
                    self._free += 1
            try:
                job.loop.call_soon_threadsafe(_deliver, job.future, outcome)
            except RuntimeError:
                pass  # the loop closed: nobody waits for this any more
            outcome = (False, None)
            if leave:
                return

    def shutdown(self) -> None:
        """Stops the idle threads (the next call starts new ones); threads still running calls
        are left to finish (daemons: they never delay the exit of the process)."""
        with self._cv:
            self._closed = True
            self._queue.clear()
            self._cv.notify_all()
