"""stdio end to end: the example server spawned with --stdio, JSON lines both ways; nothing
but MCP messages on stdout; cancellation by notifications/cancelled; first answer within
200 ms of launch."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from mcpclient import EXAMPLE, Stdio, request

SERVERS = Path(__file__).resolve().parent / "servers"


def test_example_over_stdio() -> None:
    s = Stdio([str(EXAMPLE), "--stdio"])
    try:
        s.send(request("server/discover", id=1))
        discover, _ = s.until_response(1)
        assert discover["result"]["supportedVersions"][0] == "2026-07-28"
        assert discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpaxle-everything-server"
        s.send(request("tools/list", id=2))
        tools, _ = s.until_response(2)
        assert len(tools["result"]["tools"]) >= 25
        s.send(request("tools/call", {"name": "test_tool_with_progress", "_meta": {"progressToken": 9}}, id=3))
        result, before = s.until_response(3)
        assert result["result"]["content"][0]["text"] == "Progress tool completed"
        assert [n["params"]["progress"] for n in before] == [0, 50, 100]
        s.send(request("resources/read", {"uri": "test://template/7/data"}, id=4))
        read, _ = s.until_response(4)
        assert json.loads(read["result"]["contents"][0]["text"])["id"] == "7"
    finally:
        assert s.close() == 0


def test_nothing_but_messages_on_stdout() -> None:
    s = Stdio([str(SERVERS / "stdio_server.py")])
    try:
        s.send(request("tools/call", {"name": "noisy"}, id=1))
        result, before = s.until_response(1)
        assert result["result"]["content"][0]["text"] == "quiet"
        assert before == []
    finally:
        assert s.close() == 0
    err = s.proc.stderr.read().decode() if s.proc.stderr else ""
    assert "print() from a handler" in err and "a raw write to fd 1" in err


def test_cancelled_notification_cancels_the_handler() -> None:
    s = Stdio([str(SERVERS / "stdio_server.py")])
    try:
        s.send(request("tools/call", {"name": "wait_for_cancel", "_meta": {"progressToken": "p5"}}, id=5))
        # The handler is running (not merely queued) once its progress notification arrives.
        running = s.read()
        assert running.get("method") == "notifications/progress", running
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "test"}})
        s.send(request("tools/list", id=6))
        listed, _ = s.until_response(6)
        assert "result" in listed
    finally:
        s.close()
    err = s.proc.stderr.read().decode() if s.proc.stderr else ""
    assert "handler saw CancelledError" in err


def first_answer_ms() -> float:
    line = (json.dumps(request("server/discover", id=1)) + "\n").encode()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(EXAMPLE), "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line)
    proc.stdin.flush()
    answer = proc.stdout.readline()
    elapsed = (time.perf_counter() - started) * 1000
    proc.stdin.close()
    proc.wait(10)
    assert b'"result"' in answer
    return elapsed


def test_first_answer_is_prompt() -> None:
    """Launch + import + setup of the whole example + first answer, best of five runs. The
    target is 200 ms (official clients take a slower first answer for a legacy server); it is
    measured and printed here, but asserted only loosely, since shared test machines are
    noisy: the bound catches a regression such as a heavy import at start-up."""
    runs = [first_answer_ms() for _ in range(5)]
    print(f"stdio first answer: best {min(runs):.0f} ms (target 200 ms), runs {[round(r) for r in runs]}")
    assert min(runs) < 1000, runs


BACKPRESSURE_SERVER = """
import asyncio, sys
from mcpaxle import Server

server = Server("backpressure")

@server.tool()
async def big() -> str:
    print("called", file=sys.stderr, flush=True)
    return "x" * 65536

queue = None if sys.argv[1] == "default" else int(sys.argv[1])
asyncio.run(server.serve_stdio(max_outbound_queue=queue))
"""


def _calls_while_stdout_unread(queue: str, requests: int) -> tuple[int, int]:
    """Sends `requests` calls of a tool answering 64 KiB each without reading stdout; returns
    how many calls the server had started after a pause, and how many answers arrive once
    stdout is read."""
    import threading

    proc = subprocess.Popen(
        [sys.executable, "-c", BACKPRESSURE_SERVER, queue],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    calls = [0]

    def count() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.strip() == b"called":
                calls[0] += 1

    threading.Thread(target=count, daemon=True).start()
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for i in range(requests):
            proc.stdin.write((json.dumps(request("tools/call", {"name": "big"}, id=i + 1)) + "\n").encode())
        proc.stdin.flush()
        time.sleep(1.5)
        started = calls[0]
        answered = 0
        for line in proc.stdout:
            if json.loads(line).get("id") is not None:
                answered += 1
                if answered == requests:
                    break
        return started, answered
    finally:
        proc.stdin.close()
        proc.wait(10)


def test_max_outbound_queue_stops_reading_a_client_that_does_not_read() -> None:
    # Bounded by the option: the server stops reading once two answers wait to be written...
    # Each answer (64 KiB and a little) holds its room until it has reached the pipe, whose own
    # buffer (64 KiB on Linux) cannot take one whole: two answers wait, so two calls start; a
    # margin of two for a pipe larger than that.
    started, answered = _calls_while_stdout_unread("2", 40)
    assert started <= 4, f"{started} calls started with max_outbound_queue=2 and stdout unread"
    assert answered == 40
    # ...while the default (1024) takes all 40 in: the option is what made the difference.
    started, answered = _calls_while_stdout_unread("default", 40)
    assert started == 40
    assert answered == 40


def test_max_outbound_queue_of_zero_is_a_usage_error() -> None:
    code = "import asyncio\nfrom mcpaxle import Server\nfrom mcpaxle.errors import UsageError\n" \
        "try:\n    asyncio.run(Server('s').serve_stdio(max_outbound_queue=0))\nexcept UsageError as e:\n    print('usage:', e)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    assert b"max_outbound_queue: must be at least 1" in out.stdout, out
