"""``Server.run("http", workers=N)``: N processes serving one port (``SO_REUSEPORT``, the
kernel spreads connections among them), each with its own mcpaxle runtime and asyncio loop, so
that Python handlers use every core. The parent process only supervises: it forks the
workers before anything starts a runtime, restarts a worker that dies, and on SIGINT/SIGTERM
stops them all gracefully (each drains its requests in flight) and waits for them."""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
import traceback
from typing import Callable

from . import _native
from .errors import TransportError, UsageError

logger = logging.getLogger("mcpaxle")

#: A worker that exits within this many seconds of its start failed to start.
QUICK_EXIT_S = 2.0
#: After this many workers in a row failed to start, the supervisor gives up.
MAX_QUICK_EXITS = 3


def check(workers: object, port: int) -> int:
    """The number of workers, checked: a positive int; more than one needs a fixed port and
    a platform with ``fork`` and ``SO_REUSEPORT``, and no runtime started yet."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise UsageError(f"workers must be a positive int, not {workers!r}")
    if workers == 1:
        return 1
    if not hasattr(os, "fork") or sys.platform == "win32":
        raise UsageError("workers > 1 needs fork and SO_REUSEPORT (Linux, macOS, BSD); run one process per port instead")
    if port == 0:
        raise UsageError("workers > 1 need a fixed port (port=0 would give each worker its own)")
    if _native.runtime_started():
        raise UsageError(
            "workers > 1: the mcpaxle runtime already runs in this process, and forked workers cannot use it; "
            "call run(..., workers=N) before serving or connecting anything"
        )
    return workers


def supervise(serve: Callable[[], None], workers: int) -> None:
    """Forks ``workers`` processes that each call ``serve()`` (which serves until SIGINT or
    SIGTERM), and supervises them until SIGINT/SIGTERM reaches this process."""
    children: dict[int, float] = {}
    stopping = False

    def spawn() -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.default_int_handler)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                serve()
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        children[pid] = time.monotonic()

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    saved = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    quick_exits = 0
    try:
        for _ in range(workers):
            spawn()
        logger.info("mcpaxle: %d workers serving (pids %s)", workers, ", ".join(map(str, children)))
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            started = children.pop(pid, None)
            if started is None or stopping:
                continue
            code = os.waitstatus_to_exitcode(status)
            how = f"exit code {code}" if code >= 0 else f"signal {signal.Signals(-code).name}"
            quick_exits = quick_exits + 1 if time.monotonic() - started < QUICK_EXIT_S else 0
            if quick_exits >= MAX_QUICK_EXITS:
                stop(signal.SIGTERM, None)
                while children:
                    try:
                        children.pop(os.wait()[0], None)
                    except ChildProcessError:
                        break
                raise TransportError(
                    f"workers keep failing at start ({MAX_QUICK_EXITS} in a row, the last with {how}); see their errors above"
                )
            logger.warning("mcpaxle: worker %d ended (%s); starting another", pid, how)
            spawn()
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
