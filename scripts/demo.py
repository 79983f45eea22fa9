#!/usr/bin/env python3
"""End-to-end demo of mcpaxle: drives a notes server over Streamable HTTP.

    scripts/demo.py                          # core/examples/notes_server.rs (built first)
    scripts/demo.py --server "python bindings-python/examples/notes_server.py"

The server command gets `--http 127.0.0.1:PORT` appended. `make demo` builds the Rust
examples and the Python package, then runs this script against the Rust notes server and
against its Python port. It speaks raw MCP 2026-07-28
(no SDK, Python standard library only) so that every message on the wire is visible:

  * each request is a POST to /mcp with the MCP-Protocol-Version, Mcp-Method and Mcp-Name
    headers, and `_meta` (protocolVersion, clientInfo, clientCapabilities) in its params;
  * each answer is either one application/json object or a text/event-stream carrying
    notifications (progress, subscription events) before the final response;
  * MRTR: an `input_required` result is answered like a client would (a simulated user
    and LLM) and the request retried with `inputResponses` and the echoed `requestState`.

Exit status: 0 when every step behaved as expected, 1 otherwise (so `make demo` fails
loudly), 2 when the default server binary is missing or the command line is wrong.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import itertools
import json
import os
import queue
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROTOCOL_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "mcpaxle-demo", "version": "1.0.0"}
# What this client can do when a server asks for input (MRTR): answer elicitation forms and
# sampling requests.
CLIENT_CAPABILITIES = {"elicitation": {"form": {}}, "sampling": {}}

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
BINARY = TARGET / "release" / "examples" / "notes_server"


class DemoError(Exception):
    """A step did not behave as expected."""


class RpcError(Exception):
    """The server answered with a JSON-RPC error."""

    def __init__(self, error: dict, status: int):
        self.code = error.get("code")
        self.message = error.get("message", "")
        self.data = error.get("data")
        self.status = status
        super().__init__(f"{self.code} {self.message}")


# ─── Output ──────────────────────────────────────────────────────────────────────────────

if hasattr(sys.stdout, "reconfigure"):
    sys.stdout.reconfigure(errors="replace", line_buffering=True)


def out(line: str = "") -> None:
    print(line)


def section(title: str) -> None:
    out()
    out(f"── {title} " + "─" * max(3, 60 - len(title)))


def short(value, limit: int = 72) -> str:
    """One line, at most `limit` characters: compact JSON for non-strings."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def oneline(text: str, limit: int = 72) -> str:
    """A multi-line text on one line, its lines joined with " | "."""
    return short(" | ".join(line.strip() for line in text.splitlines() if line.strip()), limit)


def sent(text: str) -> None:
    out(f"  → {text}")


def got(text: str) -> None:
    out(f"  ← {text}")


def note(text: str) -> None:
    out(f"    {text}")


def number(x) -> str:
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def cache(result: dict) -> str:
    if "ttlMs" not in result:
        return ""
    ttl = result["ttlMs"]
    return f"(ttl {number(ttl / 1000)} s, {result.get('cacheScope')})" if ttl else f"(ttl 0: re-read every time, {result.get('cacheScope')})"


def check(condition, what: str) -> None:
    if not condition:
        raise DemoError(what)


# ─── A tiny MCP client over Streamable HTTP ──────────────────────────────────────────────


def header_value(value: str) -> str:
    """A header value, Base64-wrapped when it is not plain visible ASCII (spec: Value Encoding)."""
    plain = value == value.strip() and all(0x20 <= ord(c) <= 0x7E for c in value)
    if plain and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def sse_events(resp):
    """Yields the `data` of each Server-Sent Event of a response, as it arrives."""
    data: list[str] = []
    while True:
        raw = resp.readline()
        if not raw:
            break
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith(":"):
            continue  # a comment: keep-alive
        else:
            field, _, value = line.partition(":")
            if field == "data":
                data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


class Client:
    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self._ids = itertools.count(1)

    def _post(self, method: str, params: dict, timeout: float | None):
        """Sends one request; returns (id, connection, response)."""
        params = dict(params)
        meta = {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            "io.modelcontextprotocol/clientCapabilities": CLIENT_CAPABILITIES,
        }
        meta.update(params.get("_meta", {}))
        params["_meta"] = meta
        req_id = next(self._ids)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
            "Mcp-Method": method,
        }
        if method in ("tools/call", "prompts/get"):
            headers["Mcp-Name"] = header_value(params["name"])
        elif method == "resources/read":
            headers["Mcp-Name"] = header_value(params["uri"])
        body = json.dumps({"jsonrpc": "2.0", "id": req_id, "method": method, "params": params}).encode()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        conn.request("POST", "/mcp", body=body, headers=headers)
        return req_id, conn, conn.getresponse()

    def request(self, method: str, params: dict | None = None, on_notification=None, timeout: float = 30) -> dict:
        """Sends a request and returns its result; notifications on an SSE answer go to
        `on_notification`. Raises RpcError for a JSON-RPC error."""
        req_id, conn, resp = self._post(method, params or {}, timeout)
        try:
            ctype = resp.getheader("Content-Type", "")
            if ctype.startswith("application/json"):
                message = json.loads(resp.read())
            elif ctype.startswith("text/event-stream"):
                message = None
                for data in sse_events(resp):
                    m = json.loads(data)
                    if "method" in m:
                        if on_notification:
                            on_notification(m)
                    elif m.get("id") == req_id:
                        message = m
                        break
                check(message is not None, f"{method}: the event stream ended without a response")
            else:
                raise DemoError(f"{method}: HTTP {resp.status} with unexpected Content-Type {ctype!r}: {short(resp.read().decode(errors='replace'))}")
        finally:
            conn.close()
        check(message.get("id") == req_id, f"{method}: response id {message.get('id')} is not the request id {req_id}")
        if "error" in message:
            raise RpcError(message["error"], resp.status)
        return message["result"]

    def open_stream(self, method: str, params: dict):
        """Sends a request whose answer is a long-lived SSE stream; returns (id, conn, response)."""
        req_id, conn, resp = self._post(method, params, timeout=60)
        ctype = resp.getheader("Content-Type", "")
        if not ctype.startswith("text/event-stream"):
            body = resp.read().decode(errors="replace")
            conn.close()
            raise DemoError(f"{method}: expected an event stream, got HTTP {resp.status} {ctype!r}: {short(body)}")
        return req_id, conn, resp


class Listener(threading.Thread):
    """Reads a `subscriptions/listen` stream in the background."""

    def __init__(self, client: Client, notifications: dict):
        super().__init__(daemon=True)
        self.client, self.notifications = client, notifications
        self.events: queue.Queue = queue.Queue()
        self.acknowledged: dict | None = None
        self.ready = threading.Event()
        self.final: dict | None = None
        self.error: Exception | None = None
        self.subscription_id = None

    def run(self) -> None:
        try:
            self.subscription_id, conn, resp = self.client.open_stream("subscriptions/listen", {"notifications": self.notifications})
            try:
                for data in sse_events(resp):
                    m = json.loads(data)
                    if m.get("method") == "notifications/subscriptions/acknowledged":
                        self.acknowledged = m["params"]
                        self.ready.set()
                    elif "method" in m:
                        self.events.put(m)
                    elif m.get("id") == self.subscription_id:
                        self.final = m  # the graceful end: the response to the listen request
            finally:
                conn.close()
        except Exception as e:  # reported by the main thread
            self.error = e
        finally:
            self.ready.set()

    def expect(self, *methods: str, timeout: float = 5) -> None:
        """Waits for notifications with these methods (in any order) and prints each."""
        missing = list(methods)
        deadline = time.monotonic() + timeout
        while missing:
            try:
                m = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise DemoError(f"listen stream: no {', '.join(missing)} within {timeout:g} s") from None
            sub = m.get("params", {}).get("_meta", {}).get("io.modelcontextprotocol/subscriptionId")
            check(sub == self.subscription_id, f"notification for subscription {sub!r}, expected {self.subscription_id!r}")
            uri = m.get("params", {}).get("uri")
            check(m["method"] != "notifications/resources/updated" or uri == "notes://index", f"update for {uri!r}, not subscribed")
            out(f"  ⚑ listen: {m['method']}" + (f"  {uri}" if uri else ""))
            if m["method"] in missing:
                missing.remove(m["method"])


# ─── The server process ──────────────────────────────────────────────────────────────────


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(command: list[str], port: int, log):
    proc = subprocess.Popen([*command, "--http", f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    started = time.monotonic()
    while time.monotonic() - started < 15:
        if proc.poll() is not None:
            raise DemoError(f"the server exited at start with status {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, time.monotonic() - started
        except OSError:
            time.sleep(0.05)
    raise DemoError("the server did not accept connections within 15 s")


# ─── The demo ────────────────────────────────────────────────────────────────────────────


def tool_text(result: dict) -> str:
    return " ".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def call_tool(client: Client, name: str, arguments: dict, **kw) -> dict:
    sent(f"tools/call {name} {short(arguments, 60)}")
    return client.request("tools/call", {"name": name, "arguments": arguments}, **kw)


def with_input(client: Client, method: str, params: dict, answer, label: str) -> dict:
    """Runs an MRTR request to completion: answers every input request and retries."""
    sent(f"{method} {label}")
    attempt = dict(params)
    for _ in range(5):
        result = client.request(method, attempt)
        if result.get("resultType") != "input_required":
            return result
        responses = {}
        for key, ask in result.get("inputRequests", {}).items():
            got(f"input required [{key}]: {ask['method']}  {short(describe_ask(ask), 56)}")
            responses[key] = answer(key, ask)
            note(f"(the client answers [{key}]: {describe_answer(responses[key])})")
        attempt = dict(params, inputResponses=responses)
        if "requestState" in result:
            attempt["requestState"] = result["requestState"]  # echoed untouched: opaque to clients
        sent(f"{method} {label} again, with inputResponses + requestState ({len(result.get('requestState', ''))} chars)")
    raise DemoError(f"{method}: still input_required after 5 rounds")


def describe_ask(ask: dict) -> str:
    p = ask.get("params", {})
    if ask["method"] == "elicitation/create":
        return p.get("message", "")
    if ask["method"] == "sampling/createMessage":
        first = (p.get("messages") or [{}])[0].get("content", {})
        return oneline(first.get("text", "")) if isinstance(first, dict) else "(several blocks)"
    return ""


def describe_answer(answer: dict) -> str:
    if "action" in answer:  # ElicitResult
        return f"{answer['action']} {short(answer.get('content', {}), 50)}"
    text = answer.get("content", {}).get("text", "")  # CreateMessageResult
    return f"{answer.get('role')} via {answer.get('model')}: {short(text, 50)}"


def simulated_client(key: str, ask: dict) -> dict:
    """What a real client would get from its user or its LLM."""
    if ask["method"] == "elicitation/create":
        fields = ask["params"]["requestedSchema"]["properties"]
        check("confirm" in fields and fields["confirm"]["type"] == "boolean", f"unexpected form: {short(fields)}")
        return {"action": "accept", "content": {"confirm": True}}
    if ask["method"] == "sampling/createMessage":
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "Two notes: a grocery list for the weekend and the agenda of Thursday's team offsite."},
            "model": "demo-llm-1",
            "stopReason": "endTurn",
        }
    raise DemoError(f"unexpected input request {ask['method']}")


def run(client: Client, proc) -> None:
    section("Discover")
    sent("server/discover")
    r = client.request("server/discover")
    info = r.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
    check(PROTOCOL_VERSION in r.get("supportedVersions", []), "the server does not list 2026-07-28")
    got(f"{info.get('name')} {info.get('version')}  versions {', '.join(r['supportedVersions'])}  {cache(r)}")
    note(f"capabilities: {', '.join(r.get('capabilities', {}))}")
    note(f"instructions: {short(r.get('instructions', ''), 80)}")

    section("What it offers")
    sent("tools/list")
    r = client.request("tools/list")
    names = [t["name"] for t in r["tools"]]
    check({"add_note", "search_notes", "delete_note", "summarize_notes", "export_notes"} <= set(names), f"missing tools: {names}")
    got(f"{len(names)} tools  {cache(r)}")
    for t in r["tools"]:
        extra = "  → outputSchema" if "outputSchema" in t else ""
        note(f"{t['name']:<16} {short(t.get('description', ''), 64)}{extra}")
    sent("resources/templates/list")
    r = client.request("resources/templates/list")
    got(", ".join(t["uriTemplate"] for t in r["resourceTemplates"]) + f"  {cache(r)}")

    section("Listen for changes")
    listener = Listener(client, {"resourcesListChanged": True, "resourceSubscriptions": ["notes://index"]})
    sent('subscriptions/listen {resourcesListChanged, resourceSubscriptions: ["notes://index"]}  (background SSE stream)')
    listener.start()
    listener.ready.wait(10)
    if listener.error:
        raise listener.error
    check(listener.acknowledged is not None, "no notifications/subscriptions/acknowledged")
    got(f"acknowledged, subscription id {listener.subscription_id}: {short(listener.acknowledged['notifications'])}")

    section("Add notes")
    for args in (
        {"title": "Groceries", "body": "Eggs, flour, butter, apples for the weekend pie.", "tags": ["home", "shopping"]},
        {"title": "Team offsite", "body": "Thursday 10:00, room 4. Agenda: roadmap, hiring, demo day.", "tags": ["work"]},
    ):
        r = call_tool(client, "add_note", args)
        check(not r.get("isError"), f"add_note failed: {tool_text(r)}")
        check(set(r.get("structuredContent", {})) == {"id", "title"}, "add_note: structuredContent is not {id, title}")
        got(f"structuredContent {short(r['structuredContent'])}")
        listener.expect("notifications/resources/updated", "notifications/resources/list_changed")
    # The store is shared by every client, so it is bounded: an oversized note is refused (the
    # inputSchema's maxLength) and nothing is stored or announced.
    r = call_tool(client, "add_note", {"title": "Huge", "body": "x" * 20_001})
    check(r.get("isError") is True, "add_note accepted a 20,001-character body")
    check("body" in tool_text(r), f"add_note: the error does not name the body: {tool_text(r)}")
    got(f"isError: {short(tool_text(r), 66)}")

    section("Search")
    r = call_tool(client, "search_notes", {"query": "weekend"})
    hits = (r.get("structuredContent") or {}).get("notes")
    check(isinstance(hits, list) and [h["id"] for h in hits] == [1], f"search_notes: unexpected structuredContent {short(r.get('structuredContent'))}")
    got(short(r["content"][0]["text"], 80))
    note(f"structuredContent {short(r['structuredContent'], 72)}")

    section("Read resources")
    for uri in ("note://1", "notes://index"):
        sent(f"resources/read {uri}")
        r = client.request("resources/read", {"uri": uri})
        c = r["contents"][0]
        check(c["uri"] == uri and c.get("text"), f"resources/read {uri}: unexpected contents")
        got(f"{c.get('mimeType')}  {oneline(c['text'], 56)}  {cache(r)}")

    section("Summarize (MRTR: sampling)")
    r = with_input(client, "tools/call", {"name": "summarize_notes", "arguments": {}}, simulated_client, "summarize_notes {}")
    check(not r.get("isError") and "demo-llm-1" in tool_text(r), f"summarize_notes: {tool_text(r)}")
    summary = tool_text(r).splitlines()
    got(f"result: {short(summary[0], 90)}")
    for line in summary[1:]:
        note(short(line, 90))
    # Capabilities travel with every request: the same call from a client that cannot sample.
    sent("tools/call summarize_notes {}  (as a client without sampling: clientCapabilities {})")
    caps = {"io.modelcontextprotocol/clientCapabilities": {}}
    r = client.request("tools/call", {"name": "summarize_notes", "arguments": {}, "_meta": caps})
    check(r.get("resultType") == "complete" and "#1 Groceries" in tool_text(r), f"summarize_notes fallback: {short(r)}")
    got(f"result: {short(tool_text(r), 100)}")

    section("Export (progress)")
    progress = []

    def on_progress(m: dict) -> None:
        p = m["params"]
        progress.append(p)
        total = f"/{number(p['total'])}" if "total" in p else ""
        out(f"  … progress {number(p['progress'])}{total}  {p.get('message', '')}")

    sent('tools/call export_notes {}  (_meta.progressToken "export-1")')
    r = client.request("tools/call", {"name": "export_notes", "arguments": {}, "_meta": {"progressToken": "export-1"}}, on_notification=on_progress)
    check(len(progress) >= 2 and all(p["progressToken"] == "export-1" for p in progress), "export_notes: no progress notifications")
    check([p["progress"] for p in progress] == sorted(p["progress"] for p in progress), "export_notes: progress went backwards")
    lines = tool_text(r).splitlines()
    got(f"result: {lines[0] if lines else ''}  ({len(lines)} lines of Markdown)")

    section("Delete (MRTR: elicitation)")
    r = with_input(client, "tools/call", {"name": "delete_note", "arguments": {"id": 2}}, simulated_client, 'delete_note {"id":2}')
    check(not r.get("isError"), f"delete_note failed: {tool_text(r)}")
    got(f"result: {tool_text(r)}")
    listener.expect("notifications/resources/updated", "notifications/resources/list_changed")

    section("Mistakes get clear errors")
    sent("resources/read note://99")
    try:
        client.request("resources/read", {"uri": "note://99"})
        raise DemoError("reading note://99 succeeded")
    except RpcError as e:
        check(e.code == -32602 and (e.data or {}).get("uri") == "note://99", f"unexpected error {e} data={e.data}")
        got(f"error {e.code} (HTTP {e.status}): {e.message}  data {short(e.data)}")
    r = call_tool(client, "delete_note", {"id": "two"})
    check(r.get("isError") is True, "delete_note with a string id did not fail")
    got(f"isError: {short(tool_text(r), 80)}")

    section("Prompt and completion")
    sent('prompts/get review_note {"id":"1"}')
    r = client.request("prompts/get", {"name": "review_note", "arguments": {"id": "1"}})
    check(len(r.get("messages", [])) == 2, "review_note: expected two messages")
    got(f"{r.get('description', '')}: {len(r['messages'])} messages")
    for m in r["messages"]:
        c = m["content"]
        what = f"resource {c['resource']['uri']}" if c["type"] == "resource" else short(c.get("text", ""), 60)
        note(f"{m['role']}: {what}")
    sent('completion/complete ref/prompt review_note, argument id = ""')
    r = client.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "review_note"}, "argument": {"name": "id", "value": ""}})
    values = r["completion"]["values"]
    check(values == ["1"], f"completion: expected ['1'] (note 2 was deleted), got {values}")
    got(f"values {json.dumps(values)}  (note #2 is gone)")

    section("Shutdown")
    sent(f"SIGTERM to the server (pid {proc.pid})")
    proc.send_signal(signal.SIGTERM)
    listener.join(20)
    check(not listener.is_alive(), "the listen stream did not end after SIGTERM")
    if listener.error:
        raise listener.error
    check(listener.final is not None, "the listen stream closed without its final response")
    check(listener.final.get("result", {}).get("resultType") == "complete", f"unexpected final response {short(listener.final)}")
    final = listener.final["result"]
    sub = final.get("_meta", {}).get("io.modelcontextprotocol/subscriptionId")
    check(sub == listener.subscription_id, f"final response for subscription {sub!r}")
    got(f"listen stream's final response: id {listener.final['id']}, resultType {final['resultType']}, subscriptionId {sub}")
    got("listen stream closed gracefully")
    status = proc.wait(15)
    check(status == 0, f"the server exited with status {status}")
    got("the server exited with status 0")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Drives a notes server end to end over Streamable HTTP.")
    parser.add_argument("--server", metavar="CMD", help="the server command; `--http 127.0.0.1:PORT` is appended (default: the Rust notes_server example)")
    args = parser.parse_args(argv)
    if args.server:
        command = shlex.split(args.server)
        if not command:
            parser.error("--server: the command is empty")
    else:
        if not BINARY.exists():
            print(f"demo: {BINARY.relative_to(ROOT) if BINARY.is_relative_to(ROOT) else BINARY} is missing.", file=sys.stderr)
            print("      Build it first:  cargo build --release -p mcpaxle --examples   (or run `make demo`)", file=sys.stderr)
            return 2
        command = [str(BINARY)]
    label = " ".join(Path(a).name if "/" in a else a for a in command)  # e.g. "notes_server", "python notes_server.py"
    port = free_port()
    log = tempfile.TemporaryFile()
    proc = None
    out(f"mcpaxle demo: {label} over Streamable HTTP, MCP {PROTOCOL_VERSION}")
    try:
        proc, took = start_server(command, port, log)
        out(f"  ▶ started {label} --http 127.0.0.1:{port}  (pid {proc.pid}, ready in {took * 1000:.0f} ms, endpoint /mcp)")
        run(Client("127.0.0.1", port), proc)
    except (DemoError, RpcError, OSError, json.JSONDecodeError, subprocess.TimeoutExpired) as e:
        kind = "unexpected JSON-RPC error" if isinstance(e, RpcError) else type(e).__name__ if not isinstance(e, DemoError) else "failed"
        out()
        out(f"✗ demo {kind}: {e}")
        if isinstance(e, RpcError) and e.data is not None:
            out(f"  data: {short(e.data, 90)}")
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.seek(0)
            tail = log.read().decode(errors="replace").strip().splitlines()[-15:]
            if tail:
                out("  server log (last lines):")
                for line in tail:
                    out(f"    | {line}")
        return 1
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
    out()
    out("✓ demo complete: every step behaved as expected")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
