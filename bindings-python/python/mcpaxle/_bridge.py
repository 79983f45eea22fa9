"""One native bridge per asyncio event loop: the loop watches the bridge's pipe and runs the
jobs the Rust runtime queued for it (handler calls, completed Rust futures).

A bridge lives while something on its loop is served: :func:`acquire` when a transport starts,
:func:`release` when it has stopped. The last release unregisters and closes it; calls that
still arrive then fail at once instead of waiting for a loop that no longer listens, and
handler tasks still running (say, an input handler of a connect that was cancelled) are
cancelled.
"""

from __future__ import annotations

import asyncio

from . import _native

__all__ = ["acquire", "release"]

_bridges: dict[asyncio.AbstractEventLoop, tuple[_native.Bridge, int]] = {}


def acquire(loop: asyncio.AbstractEventLoop) -> _native.Bridge:
    """The bridge of ``loop``, made and registered on first use. Call on the loop's thread."""
    entry = _bridges.get(loop)
    if entry is None or entry[0].closed:
        b = _native.Bridge(loop)
        loop.add_reader(b.fileno(), b.drain)
        _bridges[loop] = (b, 1)
        return b
    _bridges[loop] = (entry[0], entry[1] + 1)
    return entry[0]


def release(loop: asyncio.AbstractEventLoop) -> None:
    """Drops one use of ``loop``'s bridge; the last one closes it."""
    entry = _bridges.get(loop)
    if entry is None:
        return
    b, n = entry
    if n > 1:
        _bridges[loop] = (b, n - 1)
        return
    del _bridges[loop]
    if not loop.is_closed():
        loop.remove_reader(b.fileno())
    b.close()
