"""After fork(), a child that uses the library gets ForkError at once, never a hang."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest

from mcpaxle import Server, _native
from mcpaxle.errors import ForkError

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork"),
    # Python 3.12+ warns that forking a threaded process may deadlock: that is the point here.
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]


def run_in_child(body: object) -> int:
    """Forks; the child runs ``body()`` and exits 0 on ForkError, 1 on success, 2 on any
    other error. The parent waits at most 10 s (a hang fails the test)."""
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            body()  # type: ignore[operator]
            code = 1
        except ForkError as e:
            code = 0 if "forked" in str(e) else 4
        except BaseException as e:  # noqa: BLE001
            print(f"child: {type(e).__name__}: {e}", file=sys.stderr)
            code = 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    raise AssertionError("the forked child hung")


def test_child_gets_fork_error() -> None:
    _native.ensure_runtime()
    assert _native.runtime_started()
    parent_server = Server("parent")

    @parent_server.tool()
    def ping() -> str:
        return "pong"

    # Constructing a server, changing one made before the fork, serving: all refuse.
    assert run_in_child(lambda: Server("child")) == 0
    assert run_in_child(lambda: parent_server.remove_tool("ping")) == 0
    assert run_in_child(lambda: asyncio.run(parent_server.start_http("127.0.0.1", 0))) == 0
    assert run_in_child(lambda: _native.ensure_runtime()) == 0


async def test_parent_still_serves_after_fork(serve: object) -> None:
    server = Server("after-fork")

    @server.tool()
    def ping() -> str:
        return "pong"

    _native.ensure_runtime()
    assert run_in_child(lambda: Server("child")) == 0
    client = await serve(server)  # type: ignore[operator]
    from conftest import threaded

    assert (await threaded(client.call_tool)("ping"))["content"][0]["text"] == "pong"
