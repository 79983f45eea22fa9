#!/usr/bin/env python3
"""Notification latency across instances through Redis, side by side with one instance.

    bindings-python/.venv/bin/python bench/bus_latency.py [--count N]

Starts redis-server (scripts/debian-tool.sh) and two Rust everything servers sharing it
(MCPAXLE_BUS). A client listens on instance B; another calls `test_trigger_tool_change` on
instance A (across: through Redis) or on B itself (local), N times each, interleaved. The
latency of one change runs from sending the trigger call to the `list_changed` arriving on the
listen stream, stamped on arrival (it includes the request's way to the instance and its
handler, the same in both rows, but not the call's answer); the difference of the rows is what
the bus adds. Prints p50/p99 of each, in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from mcpaxle import Client

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "target" / "release" / "examples" / "everything_server"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(argv: list[str], port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return p
        except OSError:
            if p.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"bus_latency: {argv[0]} did not start")
            time.sleep(0.05)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(count: int, url_a: str, url_b: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"local (B to B)": [], "across (A to B, Redis)": []}
    async with Client.connect_http(url_b) as listener, Client.connect_http(url_a) as a, Client.connect_http(url_b) as b:
        async with listener.subscribe(tools_list_changed=True) as sub:
            # Both buses subscribe in the background: wait for a first change to cross.
            for _ in range(100):
                await a.call_tool("test_trigger_tool_change")
                try:
                    await asyncio.wait_for(sub.next(), 0.2)
                    break
                except asyncio.TimeoutError:
                    pass
            await asyncio.sleep(0.5)
            while True:
                try:
                    await asyncio.wait_for(sub.next(), 0.3)
                except asyncio.TimeoutError:
                    break
            # Arrivals are stamped as they come, by a task of their own (not after the trigger
            # call returns: a notification may arrive before the call's own answer).
            arrivals: asyncio.Queue[float] = asyncio.Queue()

            async def stamp() -> None:
                while await sub.next() is not None:
                    arrivals.put_nowait(time.perf_counter())

            stamper = asyncio.create_task(stamp())
            for i in range(count):
                for label, maker in (("local (B to B)", b), ("across (A to B, Redis)", a)):
                    t0 = time.perf_counter()
                    await maker.call_tool("test_trigger_tool_change")
                    arrived = await asyncio.wait_for(arrivals.get(), 10)
                    out[label].append((arrived - t0) * 1000)
            stamper.cancel()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=500, help="changes per row (default 500)")
    args = ap.parse_args()
    if not SERVER.exists():
        sys.exit(f"{SERVER} is missing: cargo build --release -p mcpaxle --examples")
    redis = subprocess.run(["bash", str(ROOT / "scripts" / "debian-tool.sh"), "redis-server"], check=True, capture_output=True, text=True).stdout.strip()
    rport, pa, pb = free_port(), free_port(), free_port()
    procs = [start([redis, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], rport)]
    env = {**os.environ, "MCPAXLE_BUS": f"redis://127.0.0.1:{rport}/0"}
    try:
        procs.append(start([str(SERVER), "--http", f"127.0.0.1:{pa}"], pa, env))
        procs.append(start([str(SERVER), "--http", f"127.0.0.1:{pb}"], pb, env))
        results = asyncio.run(measure(args.count, f"http://127.0.0.1:{pa}/mcp", f"http://127.0.0.1:{pb}/mcp"))
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait()
    print(f"{'change to listener':<26} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for label, values in results.items():
        print(f"{label:<26} {len(values):>5} {pct(values, 0.5):>8.3f} {pct(values, 0.99):>8.3f} {statistics.mean(values):>8.3f}")


if __name__ == "__main__":
    main()
