"""The event-loop watchdog: a warning (logger ``"mcpaxle"``) when an ``async def`` handler
blocks the serving loop (``time.sleep``, a blocking socket, a long computation), naming the
handler and how long it blocked. While the loop is blocked, every other request of the
server waits.

Nothing runs per call: the loop ticks a timestamp a few times per threshold (one timer
callback), and a daemon thread checks it. When the tick is late by more than the threshold,
the thread looks at the loop thread's stack for the frame of a registered handler (the code
objects of the async handlers, recorded when they are registered) and warns; when the loop
ticks again, the tick warns with the whole duration.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import threading
import time
import types
from typing import Any, Callable

logger = logging.getLogger("mcpaxle")

__all__ = ["Watchdog", "name_handler"]

#: The code object of each async handler's function, and what it serves (``tool 'forecast'``).
_names: dict[types.CodeType, str] = {}


def name_handler(fn: Callable[..., Any], what: str) -> None:
    """Records ``fn``'s code so that a block in it is reported as ``what``."""
    f: Any = fn
    while isinstance(f, functools.partial):
        f = f.func
    code = getattr(f, "__code__", None) or getattr(getattr(f, "__call__", None), "__code__", None)
    if isinstance(code, types.CodeType):
        _names[code] = what


def _blocking_handler(frame: types.FrameType | None) -> str | None:
    """The innermost registered handler on a stack."""
    while frame is not None:
        what = _names.get(frame.f_code)
        if what is not None:
            return what
        frame = frame.f_back
    return None


class Watchdog:
    """Watches one event loop while a server is served on it. Make it and :meth:`stop` it on
    the loop's thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, threshold: float) -> None:
        self._loop = loop
        self._threshold = threshold
        self._beat_every = threshold / 4
        self._loop_thread = threading.get_ident()
        self._due = time.monotonic() + self._beat_every
        #: The handler found blocking the loop, and when (set by the watching thread).
        self._blocking: tuple[str, float] | None = None
        self._stopped = threading.Event()
        self._timer: asyncio.TimerHandle | None = loop.call_later(self._beat_every, self._beat)
        threading.Thread(target=self._watch, name="mcpaxle-loop-watchdog", daemon=True).start()

    def _beat(self) -> None:
        now = time.monotonic()
        late = now - self._due
        self._due = now + self._beat_every
        self._timer = self._loop.call_later(self._beat_every, self._beat)
        blocking, self._blocking = self._blocking, None
        if blocking is not None and late > self._threshold:
            logger.warning(
                "mcpaxle: the async %s blocked the event loop for %.2f s; every other request of the server waited meanwhile. "
                "Await instead of blocking (asyncio.sleep, an async client), run blocking code with "
                "`await asyncio.to_thread(...)`, or make the handler a plain def (it then runs on a thread).",
                blocking[0],
                late,
            )

    def _watch(self) -> None:
        while not self._stopped.wait(self._beat_every):
            late = time.monotonic() - self._due
            if late <= self._threshold or self._blocking is not None:
                continue
            what = _blocking_handler(sys._current_frames().get(self._loop_thread))
            if what is None or self._stopped.is_set():
                continue
            self._blocking = (what, late)
            logger.warning("mcpaxle: the async %s has been blocking the event loop for %.2f s so far", what, late)

    def stop(self) -> None:
        """Stops watching."""
        self._stopped.set()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
