"""The thread pool of a server's plain ``def`` handlers (and plain-function token verifiers).

Its queue and counts are native (``src/pool.rs``): a call reaches a thread of the pool straight
from the runtime, without passing through the event loop, and its outcome goes straight back.
The threads are started on demand, up to ``max_workers``, and run :func:`_work`.

Unlike :class:`concurrent.futures.ThreadPoolExecutor`, a call that is given up (its request
timed out, was cancelled, or the server shut down) does not keep holding a thread of the pool:
a thread cannot be stopped from outside, so it is *abandoned* and the pool starts another in
its place, up to ``max_abandoned`` abandoned threads at once (past that, a stuck thread keeps
counting against ``max_workers``). An abandoned thread that finally returns rejoins the pool
when there is room, and otherwise ends.

Every thread is a daemon: nothing joins it when the interpreter exits, so a stuck handler
cannot keep the process alive after the server stopped (a ``ThreadPoolExecutor`` is joined at
exit, which made shutdown wait forever). When every thread is busy, the pool logs one warning
(logger ``"mcpaxle.pool"``) naming the handlers holding them, and calls wait in order.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from typing import Any, Callable

from . import _native

__all__ = ["Pool", "default_max_workers"]


def default_max_workers() -> int:
    """``min(32, cpu_count + 4)``, as ``ThreadPoolExecutor``."""
    return min(32, (os.cpu_count() or 1) + 4)


def _deliver(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if not future.done():
        future.set_result(outcome)


def _start_thread(native: _native.Pool) -> None:
    """Starts one thread of ``native`` (called by the native pool, which counted it)."""
    threading.Thread(target=_work, args=(native,), name="mcpaxle-handler", daemon=True).start()


def _work(native: _native.Pool) -> None:
    """A pool thread: takes jobs until the pool shuts down, or until it was abandoned and the
    pool is full again. Each call runs in a context of its own (nothing it sets leaks into
    the next one)."""
    while (job := native.take()) is not None:
        try:
            fn, args = job.begin()
            value, ok = contextvars.Context().run(fn, *args), True
        except BaseException as e:  # noqa: BLE001 - the awaiting side sorts it
            value, ok = e, False
        leave = job.finish(ok, value)
        value = None
        if leave:
            return


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
        self._native = _native.Pool(self.max_workers, self.max_abandoned)

    @property
    def abandoned(self) -> int:
        """How many threads are running calls that were given up."""
        return self._native.abandoned

    @property
    def _workers(self) -> int:
        return self._native.workers

    def handler(self, what: str, invoke: Callable[[Any, Any, asyncio.AbstractEventLoop], Any]) -> _native.PoolHandler:
        """A handler the server runs on this pool: ``invoke(payload, ctx, loop)`` returns its
        value, called on a thread of the pool."""
        return _native.PoolHandler(self._native, what, invoke)

    async def run(self, what: str, fn: Callable[[], Any]) -> Any:
        """Runs ``fn()`` on a thread of the pool (in a copy of the current context) and returns
        its result, or raises what it raised (any ``BaseException``). Cancelling the awaiting
        task gives the call up: its thread, if it started, is abandoned."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[bool, Any]] = loop.create_future()
        run = functools.partial(contextvars.copy_context().run, fn)
        job = self._native.submit(what, run, functools.partial(loop.call_soon_threadsafe, _deliver, future))
        try:
            ok, value = await future
        except asyncio.CancelledError:
            self._native.give_up(job)
            raise
        if ok:
            return value
        try:
            raise value
        finally:
            value = None

    def shutdown(self) -> None:
        """Stops the idle threads (the next call starts new ones) and drops the calls waiting
        for one; threads still running calls are left to finish (daemons: they never delay the
        exit of the process)."""
        self._native.shutdown()
