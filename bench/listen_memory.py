#!/usr/bin/env python3
"""Is the memory of idle `subscriptions/listen` streams given back once they close? (issue 15)

Starts the benchmark's Rust server (`bench_server --http`), reads its VmRSS, opens --streams
listen streams (one keep-alive connection each, every stream acknowledged before the next
reading), reads VmRSS again, closes them all, waits --settle seconds, and reads it a third time;
--rounds repeats the open/close cycle. The aim: after the streams close, RSS returns to within
20 % of its value before them (`--max-after-ratio`).

    python3 bench/listen_memory.py [--streams 1000] [--rounds 2] [--no-build] [--check]

Linux only (reads /proc). Python 3.11 standard library only. Exit status: 0 (or 1 with --check
when the aim is missed; 1 too when a stream is not acknowledged), 2 when the run cannot be made.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release"
PROTOCOL_VERSION = "2026-07-28"


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port: int, rid: int, method: str, params: dict) -> bytes:
    params = {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION, "io.modelcontextprotocol/clientCapabilities": {}}}
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {PROTOCOL_VERSION}\r\n"
        f"Mcp-Method: {method}\r\n" + ("Mcp-Name: echo\r\n" if method == "tools/call" else "") + f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def call(port: int, n: int) -> None:
    """n small tools/call on one connection (the server's working set before and after)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        for i in range(n):
            s.sendall(request(port, i, "tools/call", {"name": "echo", "arguments": {"text": "hello"}}))
            buf = b""
            while b'"result"' not in buf or not buf.endswith(b"}"):
                chunk = s.recv(65536)
                if not chunk:
                    raise SystemExit("bench: the server closed a call's connection")
                buf += chunk


def open_streams(port: int, n: int, timeout: float) -> list[socket.socket]:
    """n listen streams, each acknowledged (its first event read)."""
    socks, sel = [], selectors.DefaultSelector()
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(request(port, i, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, [b""])
        socks.append(s)
    waiting, deadline = n, time.monotonic() + timeout
    while waiting and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.5):
            chunk = key.fileobj.recv(65536)
            key.data[0] += chunk
            if b"acknowledged" in key.data[0] or not chunk:
                sel.unregister(key.fileobj)
                waiting -= 1
                if not chunk:
                    raise SystemExit("bench: the server closed a listen stream before acknowledging it")
    sel.close()
    if waiting:
        raise SystemExit(f"bench: {waiting} of {n} listen streams were not acknowledged within {timeout:.0f} s")
    return socks


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", type=int, default=1000, help="listen streams open at once (default 1000)")
    ap.add_argument("--rounds", type=int, default=2, help="open/close cycles (default 2)")
    ap.add_argument("--settle", type=float, default=2.0, help="seconds after closing before RSS is read (default 2)")
    ap.add_argument("--max-after-ratio", type=float, default=1.2, help="aim: RSS after / before at most this (default 1.2)")
    ap.add_argument("--bin-dir", type=Path, default=BIN, help="where bench_server is (default target/release)")
    ap.add_argument("--no-build", action="store_true", help="do not run cargo build first")
    ap.add_argument("--check", action="store_true", help="exit 1 when the aim is missed")
    ap.add_argument("--output", type=Path, default=ROOT / "bench" / "results" / "listen_memory.json")
    opts = ap.parse_args()

    if not opts.no_build and subprocess.call([os.environ.get("CARGO", "cargo"), "build", "--release", "-p", "mcpaxle-bench", "--bins"], cwd=ROOT) != 0:
        return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < opts.streams + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, opts.streams + 1024), hard))
    port = free_port()
    cmd = [str(opts.bin_dir / "bench_server"), "--http", f"127.0.0.1:{port}"]
    server = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    print("bench: the server did not start", file=sys.stderr)
                    return 2
                time.sleep(0.05)
        call(port, 2000)
        before = rss_kib(server.pid)
        rounds = []
        fds = open_fds(server.pid)
        print(f"{'round':>5}{'before MiB':>12}{'open MiB':>10}{'KiB/stream':>12}{'after MiB':>11}{'after/before':>14}{'fds open/after':>16}")
        for r in range(opts.rounds):
            socks = open_streams(port, opts.streams, 30)
            open_kib, fds_open = rss_kib(server.pid), open_fds(server.pid)
            for s in socks:
                s.close()
            time.sleep(opts.settle)
            call(port, 2000)
            after, fds_after = rss_kib(server.pid), open_fds(server.pid)
            fd_pair = f"{fds_open - fds}/{fds_after - fds}"
            rounds.append({"open_kib": open_kib, "after_kib": after, "fds_open": fds_open, "fds_after": fds_after, "per_stream_kib": (open_kib - before) / opts.streams, "after_ratio": after / before})
            print(f"{r + 1:>5}{before / 1024:>12.1f}{open_kib / 1024:>10.1f}{(open_kib - before) / opts.streams:>12.1f}{after / 1024:>11.1f}{after / before:>14.2f}{fd_pair:>16}")
    finally:
        server.terminate()
        try:
            server.wait(5)
        except subprocess.TimeoutExpired:
            server.kill()
    worst = max(r["after_ratio"] for r in rounds)
    ok = worst <= opts.max_after_ratio
    print(f"RSS after the streams close: {worst:.2f}x its value before them (aim <= {opts.max_after_ratio:g}x): {'ok' if ok else 'MISSED'}")
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps({"streams": opts.streams, "before_kib": before, "rounds": rounds, "ok": ok}, indent=2) + "\n")
    return 1 if opts.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
