"""A raw MCP client for the tests: JSON-RPC over Streamable HTTP (http.client, with the
standard headers and ``_meta``) and over stdio (JSON lines to a child process)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

VERSION = "2026-07-28"
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "everything_server.py"
ALL_CAPS = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}


def meta(caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    m = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "mcpaxle-tests", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": ALL_CAPS if caps is None else caps,
    }
    m.update(extra)
    return m


def request(method: str, params: dict[str, Any] | None = None, *, id: int | str = 1, caps: dict[str, Any] | None = None, **meta_extra: Any) -> dict[str, Any]:
    p = dict(params or {})
    p["_meta"] = {**meta(caps, **meta_extra), **p.get("_meta", {})}
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": p}


class Reply:
    """An HTTP answer: status, content type, and the messages (one, or the SSE events)."""

    def __init__(self, status: int, content_type: str, messages: list[dict[str, Any]]) -> None:
        self.status, self.content_type, self.messages = status, content_type, messages

    @property
    def final(self) -> dict[str, Any]:
        """The response (the message with an id and a result or error)."""
        for m in self.messages:
            if "result" in m or "error" in m:
                return m
        raise AssertionError(f"no response among {self.messages}")

    @property
    def result(self) -> dict[str, Any]:
        f = self.final
        assert "result" in f, f
        return f["result"]

    @property
    def notifications(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if "method" in m and "id" not in m]


class Http:
    """Posts JSON-RPC requests to an MCP endpoint."""

    def __init__(self, url: str) -> None:
        u = urlsplit(url)
        self.host, self.port, self.path = u.hostname or "127.0.0.1", u.port or 80, u.path

    def headers(self, body: dict[str, Any]) -> dict[str, str]:
        h = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": VERSION,
            "Mcp-Method": body["method"],
        }
        params = body.get("params") or {}
        name = params.get("name") if body["method"] in ("tools/call", "prompts/get") else params.get("uri") if body["method"] == "resources/read" else None
        if body["method"] in ("tasks/get", "tasks/update", "tasks/cancel"):
            name = params.get("taskId")  # the Tasks extension routes on the task id
        if name is not None:
            h["Mcp-Name"] = name
        return h

    def post(self, body: dict[str, Any], timeout: float = 10) -> Reply:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request("POST", self.path, json.dumps(body), self.headers(body))
            r = conn.getresponse()
            ctype = r.getheader("Content-Type", "")
            raw = r.read().decode()
        finally:
            conn.close()
        if ctype.startswith("text/event-stream"):
            return Reply(r.status, ctype, parse_sse(raw))
        return Reply(r.status, ctype, [json.loads(raw)] if raw else [])

    def call(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Reply:
        return self.post(request(method, params, **kw))

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return self.call("tools/call", params, **kw).result

    def open_stream(self, body: dict[str, Any]) -> Stream:
        """Posts a request whose answer is a long-lived SSE stream (subscriptions/listen)."""
        return Stream(self, body)


def parse_sse(raw: str) -> list[dict[str, Any]]:
    out = []
    for event in raw.split("\n\n"):
        data = [line[5:].lstrip() for line in event.splitlines() if line.startswith("data:")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


class Stream:
    """A long-lived SSE response read on a thread; messages collected as they arrive."""

    def __init__(self, client: Http, body: dict[str, Any]) -> None:
        self.conn = http.client.HTTPConnection(client.host, client.port, timeout=30)
        self.conn.request("POST", client.path, json.dumps(body), client.headers(body))
        self.response = self.conn.getresponse()
        self.messages: list[dict[str, Any]] = []
        self._cv = threading.Condition()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        buf: list[str] = []
        try:
            while True:
                line = self.response.fp.readline()
                if not line:
                    break
                text = line.decode().rstrip("\r\n")
                if text.startswith("data:"):
                    buf.append(text[5:].lstrip())
                elif not text and buf:
                    with self._cv:
                        self.messages.append(json.loads("\n".join(buf)))
                        self._cv.notify_all()
                    buf = []
        except Exception:
            pass

    def wait_for(self, predicate: Any, timeout: float = 5) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for m in self.messages:
                    if predicate(m):
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out; got {self.messages}")
                self._cv.wait(left)

    def close(self) -> None:
        import socket

        sock = self.conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.conn.close()
        self._thread.join(5)


class Stdio:
    """Talks JSON lines to a child server process."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"the server closed stdout; stderr: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
        return json.loads(line)

    def until_response(self, id: int | str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        seen = []
        while True:
            m = self.read()
            if m.get("id") == id and ("result" in m or "error" in m):
                return m, seen
            seen.append(m)

    def close(self, timeout: float = 10) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
