#!/usr/bin/env python3
"""A real fleet: redis-server and nginx (the pinned Debian packages, installed by
scripts/debian-tool.sh) in front of three instances of the everything server, one each in
Rust, Python and C, configured only by the environment (MCPAXLE_BUS, MCPAXLE_STATE_SECRET).

    bindings-python/.venv/bin/python tests/fleet/run.py RUST_SERVER PYTHON_SERVER C_SERVER

Each SERVER is a command (split on spaces) taking `--http 127.0.0.1:PORT`. nginx routes
2026-07-28 requests (`MCP-Protocol-Version: 2026-07-28`) round-robin over the three, and
legacy ones sticky by client address (see the README's deployment guide). Checks, in order:

1. a listen stream on each instance hears a change made through each other instance (Redis);
2. an MRTR call's round 2 completes on another instance than its round 1 (one shared state
   secret), for every pair; elicitation calls through nginx complete;
3. the conformance server sets pass through nginx: 2026-07-28 37/37 with the tasks-* scenarios
   of the Tasks extension (each tasks/get, tasks/update, tasks/cancel lands on any instance:
   the tasks live in the bus's Redis), 2025-11-25 30/30;
4. killing one instance under load: no call is answered wrongly, calls after it all succeed,
   a listen stream it carried ends and a new one (elsewhere) hears changes, and a task it was
   running reads `failed` through nginx once its lease (15 s) has passed.

Everything is started and stopped here, on 127.0.0.1; exits 1 on the first failed check.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from mcpaxle import Client

ROOT = Path(__file__).resolve().parents[2]
SECRET = "fleet-test-secret-0123456789abcdef"
NAMES = ("rust", "python", "c")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tool(name: str) -> str:
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "debian-tool.sh"), name], check=True, capture_output=True, text=True
    ).stdout.strip()


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str, log: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"fleet: {what} exited with {proc.returncode}; its output:\n{log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                sys.exit(f"fleet: {what} did not listen on {port} within 30 s")
            time.sleep(0.05)


NGINX_CONF = """
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;

    # 2026-07-28 is stateless: any instance serves any request.
    upstream mcp_modern {{
{servers}
    }}
    # Legacy (2025-11-25) sessions live in the instance that opened them: sticky by client.
    upstream mcp_legacy {{
        hash $remote_addr consistent;
{servers}
    }}
    map $http_mcp_protocol_version $mcp_upstream {{
        "2026-07-28" mcp_modern;
        default      mcp_legacy;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://$mcp_upstream;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            # Streams (SSE) go through as they come.
            proxy_buffering off;
            proxy_read_timeout 1h;
            proxy_next_upstream error timeout;
        }}
    }}
}}
"""


class Fleet:
    def __init__(self, commands: list[str]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="mcpaxle-fleet-"))
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.ports: dict[str, int] = {}
        try:
            self.start_all(commands)
        except BaseException:
            # What did start must not outlive a failed start (an nginx that cannot be
            # installed left Redis and two servers running after the test had failed).
            self.stop()
            raise

    def start_all(self, commands: list[str]) -> None:
        redis_port = free_port()
        self.start("redis", [tool("redis-server"), "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], redis_port)
        env = {**os.environ, "MCPAXLE_BUS": f"redis://127.0.0.1:{redis_port}/0", "MCPAXLE_STATE_SECRET": SECRET}
        for name, command in zip(NAMES, commands):
            port = free_port()
            self.start(name, [*shlex.split(command), "--http", f"127.0.0.1:{port}"], port, env)
        self.port = free_port()
        servers = "\n".join(f"        server 127.0.0.1:{self.ports[n]} max_fails=1 fail_timeout=30s;" for n in NAMES)
        conf = self.dir / "nginx.conf"
        conf.write_text(NGINX_CONF.format(dir=self.dir, servers=servers, port=self.port))
        self.start("nginx", [tool("nginx"), "-p", str(self.dir), "-c", str(conf)], self.port)
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def start(self, name: str, argv: list[str], port: int, env: dict[str, str] | None = None) -> None:
        log = self.dir / f"{name}.log"
        self.procs[name] = subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.ports[name] = port
        wait_port(port, self.procs[name], name, log)

    def url_of(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}/mcp"

    def kill(self, name: str) -> None:
        p = self.procs.pop(name)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()

    def stop(self) -> None:
        for p in self.procs.values():
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in self.procs.values():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def alive(self) -> None:
        for name, p in self.procs.items():
            if p.poll() is not None:
                sys.exit(f"fleet: {name} died; its output:\n{(self.dir / f'{name}.log').read_text()[-3000:]}")


def ok(what: str) -> None:
    print(f"fleet: ok  {what}", flush=True)


async def next_change(sub: Any, timeout: float = 10) -> dict[str, Any]:
    n = await asyncio.wait_for(sub.next(), timeout)
    assert n is not None, "the listen stream ended"
    return dict(n)


async def drain(sub: Any) -> None:
    while True:
        try:
            await asyncio.wait_for(sub.next(), 0.5)
        except asyncio.TimeoutError:
            return


async def changes_cross_instances(fleet: Fleet) -> None:
    """A listen stream on each instance hears a change made through each other one."""
    for listener in NAMES:
        async with Client.connect_http(fleet.url_of(listener)) as c:
            async with c.subscribe(tools_list_changed=True) as sub:
                for maker in NAMES:
                    if maker == listener:
                        continue
                    async with Client.connect_http(fleet.url_of(maker)) as m:
                        # The trigger toggles a tool on the maker; called twice, its list is back.
                        for _ in range(2):
                            await m.call_tool("test_trigger_tool_change")
                            n = await next_change(sub)
                            assert n["method"] == "notifications/tools/list_changed", n
                            await drain(sub)
                    ok(f"a change made on {maker} reached a listen stream on {listener}")


META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "fleet-check", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


TASKS_META = {**META, "io.modelcontextprotocol/clientCapabilities": {
    "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}}


def call(url: str, params: dict[str, Any], method: str = "tools/call", meta: dict[str, Any] = META,
         name: str = "test_input_required_result_request_state") -> dict[str, Any]:
    """One request by hand: a tools/call of `name` (by default
    `test_input_required_result_request_state`), or `method` with `params` as they are."""
    if method == "tools/call":
        params = {"name": name, "arguments": {}, **params}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    req = urllib.request.Request(url, json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method,
        "Mcp-Name": params.get("taskId", name),
    })
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return dict(json.loads(r.read()))
    except urllib.error.HTTPError as e:
        return dict(json.loads(e.read()))


def mrtr_round_on_another_instance(fleet: Fleet) -> None:
    """Round 1 of an MRTR call on one instance, round 2 (its sealed requestState) on another."""
    answer = {"user_name": {"action": "accept", "content": {"name": "Ada"}}}
    for first in NAMES:
        for second in NAMES:
            if first == second:
                continue
            r1 = call(fleet.url_of(first), {})["result"]
            assert r1["resultType"] == "input_required" and r1.get("requestState"), r1
            r2 = call(fleet.url_of(second), {"inputResponses": answer, "requestState": r1["requestState"]})
            text = r2["result"]["content"][0]["text"]
            assert text.startswith("Hello, Ada") and "started" in text, r2
            tampered = r1["requestState"][:-4] + ("AAAA" if not r1["requestState"].endswith("AAAA") else "BBBB")
            bad = call(fleet.url_of(second), {"inputResponses": answer, "requestState": tampered})
            assert "error" in bad, f"a tampered requestState was accepted: {bad}"
            ok(f"MRTR round 1 on {first}, round 2 on {second}: completed (a tampered state is refused)")


async def mrtr_rounds_spread(fleet: Fleet) -> None:
    """Elicitation rounds through nginx land on different instances; all complete."""

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}

    async with Client.connect_http(fleet.url, on_elicitation=elicit, cache=False) as c:
        for _ in range(9):
            r = await c.call_tool("test_elicitation", {"message": "Who?"})
            text = r["content"][0]["text"]
            assert "action=accept" in text and "ada" in text, text
    ok("9 elicitation calls through nginx (rounds on any instance) completed")


def conformance(fleet: Fleet) -> None:
    run = [sys.executable, str(ROOT / "tests" / "conformance" / "run.py"), "server", "--url", fleet.url]
    for args in (
        ["--requirements", "2026-07-28", "--extra", "@extension"],
        ["--requirements", "2025-11-25"],
    ):
        r = subprocess.run([*run, *args])
        fleet.alive()
        if r.returncode != 0:
            sys.exit(f"fleet: conformance {args[1]} through nginx failed")
        ok(f"conformance {args[1]} through nginx")


def start_task_on(fleet: Fleet, name: str) -> str:
    """A ten-minute task started on instance `name` directly; its id."""
    created = call(fleet.url_of(name), {"arguments": {"seconds": 600, "label": "doomed"}}, meta=TASKS_META,
                   name="slow_compute")["result"]
    assert created["resultType"] == "task" and created["status"] == "working", created
    status = call(fleet.url, {"taskId": created["taskId"]}, "tasks/get", TASKS_META)["result"]["status"]
    assert status == "working", status
    return str(created["taskId"])


async def task_of_dead_instance_fails(fleet: Fleet, task_id: str) -> None:
    """Through nginx (any live instance), the dead instance's task reads failed within its lease."""
    deadline = time.monotonic() + 30
    while True:
        task = call(fleet.url, {"taskId": task_id}, "tasks/get", TASKS_META)["result"]
        if task["status"] == "failed":
            assert "stopped before the task ended" in task["statusMessage"], task
            assert task["error"]["code"] == -32603, task
            ok("a task of the killed instance reads failed on the others once its lease passed")
            return
        assert task["status"] == "working", task
        assert time.monotonic() < deadline, f"the dead instance's task still reads {task['status']} after 30 s"
        await asyncio.sleep(0.5)


async def kill_one_under_load(fleet: Fleet) -> None:
    """Calls keep coming through nginx while the C instance is killed."""
    answered = {"right": 0, "failed": 0}
    stop = asyncio.Event()

    async def load() -> None:
        async with Client.connect_http(fleet.url, cache=False, request_timeout_ms=10_000) as c:
            i = 0
            while not stop.is_set():
                i += 1
                try:
                    r = await c.call_tool("test_simple_text")
                except Exception:
                    answered["failed"] += 1
                    continue
                text = r["content"][0]["text"]
                assert text == "This is a simple text response for testing.", f"answered wrongly: {text!r}"
                answered["right"] += 1

    # A listen stream on the instance about to die (directly), and one through nginx.
    doomed_task = start_task_on(fleet, "c")
    doomed = await Client.connect_http(fleet.url_of("c")).__aenter__()
    doomed_sub = doomed.subscribe(tools_list_changed=True)
    await doomed_sub
    workers = [asyncio.create_task(load()) for _ in range(4)]
    await asyncio.sleep(1.5)
    before = dict(answered)
    fleet.kill("c")
    await asyncio.sleep(1.5)
    at_kill = dict(answered)
    await asyncio.sleep(2)
    stop.set()
    await asyncio.gather(*workers)
    after_failures = answered["failed"] - at_kill["failed"]
    assert answered["right"] > before["right"] > 0, answered
    assert after_failures == 0, f"{after_failures} calls failed well after the kill (nginx should route around it)"
    ok(f"killed c under load: {answered['right']} calls answered right, {answered['failed']} failed around the kill, none wrongly")

    # Its listen stream ended; a new one through nginx lands on a live instance and hears changes.
    try:
        n = await asyncio.wait_for(doomed_sub.next(), 10)
        assert n is None, f"the dead instance's stream went on: {n}"
    except Exception as e:  # the stream may end with a transport error instead of plainly
        if isinstance(e, AssertionError):
            raise
    try:
        await doomed.__aexit__(None, None, None)
    except Exception:
        pass
    async with Client.connect_http(fleet.url) as c:
        async with c.subscribe(tools_list_changed=True) as sub:
            async with Client.connect_http(fleet.url_of("rust")) as m:
                await m.call_tool("test_trigger_tool_change")
                assert (await next_change(sub))["method"] == "notifications/tools/list_changed"
                await m.call_tool("test_trigger_tool_change")
    ok("the dead instance's listen stream ended; a new one through nginx hears changes")
    await task_of_dead_instance_fails(fleet, doomed_task)


async def main(commands: list[str]) -> None:
    fleet = Fleet(commands)
    try:
        await changes_cross_instances(fleet)
        mrtr_round_on_another_instance(fleet)
        await mrtr_rounds_spread(fleet)
        conformance(fleet)
        await kill_one_under_load(fleet)
        fleet.alive()
    except AssertionError as e:
        sys.exit(f"fleet: FAILED: {e}")
    finally:
        fleet.stop()
    print("fleet: all checks passed")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1:]))
