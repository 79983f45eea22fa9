"""Legacy (2025-11-25) session limits set from Python reach the core: a server with a quota
of 2 sessions per peer address and a 0.3 s handshake timeout, driven over raw HTTP."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time
from typing import Iterator

import pytest

SERVER = """
import sys
from mcpaxle import Server
server = Server("limits", legacy={"max_sessions_per_peer": 2, "uninitialized_timeout_ms": 300})
server.run("http", host="127.0.0.1", port=int(sys.argv[1]))
"""

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def port() -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(proc.stderr.read().decode() if proc.stderr else "the server did not start")
            time.sleep(0.05)
    yield port
    proc.kill()
    proc.wait()


def post(port: int, body: dict, session: str | None = None) -> tuple[int, str | None]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("POST", "/mcp", json.dumps(body), headers)
    resp = conn.getresponse()
    resp.read()
    conn.close()
    return resp.status, resp.getheader("Mcp-Session-Id")


def test_legacy_session_limits_reach_the_core(port: int) -> None:
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    sids = []
    for _ in range(3):
        status, sid = post(port, INIT)
        assert status == 200 and sid
        assert post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)[0] == 202
        sids.append(sid)
    # Two per peer address: the third session made room by ending the first.
    assert [post(port, ping, s)[0] for s in sids] == [404, 200, 200]
    # A handshake that stops at initialize ends after 0.3 s (the reaper looks every 75 ms), not
    # after the 30-minute idle timeout that keeps the initialized sessions.
    status, half_open = post(port, INIT)
    assert status == 200
    time.sleep(1.0)
    assert post(port, ping, half_open)[0] == 404
    assert post(port, ping, sids[2])[0] == 200
