#!/usr/bin/env python3
"""mcpaxle soak benchmark: 1,000,000 tools/call over HTTP keep-alive, the server's RSS sampled
every 100,000 calls; fails when the RSS is not flat.

    python3 bench/soak.py [--server rust|python|node ...] [--calls 1000000] [--every 100000]
                          [--connections 8] [--flat-after 200000] [--max-growth-mib 4]
                          [--timeout 1200] [--no-build]

Flat means: from the sample at --flat-after calls (the allocator and the caches have reached
their working size by then) to every later sample, the server's RSS grows by at most
--max-growth-mib (4 MiB: over the 800,000 calls that follow, a leak of 5 bytes per call or more
fails). The load generator is bench's loadgen (`--count`, `--progress`), on a keep-alive
connection per worker; the servers are the bench rows mcpaxle-http (Rust) and python-async
(the Python package, `bindings-python/examples/echo_server.py`). Loopback only; every run is
bounded by --timeout. Linux only (reads /proc). Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (bench/run.py: the servers, the build, /proc helpers)

SERVERS = {
    "rust": ("mcpaxle HTTP (Rust)", ["{bin}/bench_server", "--http", "127.0.0.1:{port}"], None),
    "python": ("mcpaxle Python (async)", ["{binding_python}", "{root}/bindings-python/examples/echo_server.py", "--http", "127.0.0.1:{port}"], bench.binding_python),
    # Issue 15: the JavaScript handler of the node-http row.
    "node": ("mcpaxle Node handler", ["node", "{root}/bindings-node/examples/echo_server.mjs", "--http", "127.0.0.1:{port}"], bench.node_package),
}


def rss_kib(pid: int) -> int:
    """Resident set (VmRSS) of a process and its descendants, in KiB."""
    return sum(bench._status_kib(p, "VmRSS") for p in bench._tree(pid))


def soak(key: str, opts: argparse.Namespace, log_dir: Path) -> dict:
    label, command, setup = SERVERS[key]
    values: dict[str, object] = {"bin": bench.BIN, "root": bench.ROOT, **(setup() if setup else {})}
    port = bench.free_port()
    values |= {"port": port}
    url = f"http://127.0.0.1:{port}/mcp"
    server_log = log_dir / f"soak-{key}.server.log"
    client_log = log_dir / f"soak-{key}.client.log"
    with open(server_log, "wb") as slog, open(client_log, "wb") as clog:
        server = subprocess.Popen(bench.fill(command, values), stdin=subprocess.DEVNULL, stdout=slog, stderr=slog, cwd=bench.ROOT)
        try:
            bench.wait_listening(port, server)
            samples = [(0, rss_kib(server.pid), 0.0)]
            print(f"{label}: {opts.calls:,} calls on {opts.connections} keep-alive connections, RSS every {opts.every:,}", flush=True)
            print(f"  {'calls':>10} {'RSS MiB':>9} {'vs @' + format(opts.flat_after, ','):>13} {'s':>7}", flush=True)
            print(f"  {0:>10,} {samples[0][1] / 1024:>9.1f} {'':>13} {0:>7.1f}", flush=True)
            cmd = [str(bench.BIN / "loadgen"), "--http", url, "--connections", str(opts.connections), "--warmup", "0",
                   "--duration", str(opts.timeout), "--count", str(opts.calls), "--progress", str(opts.every)]
            client = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=clog, cwd=bench.ROOT)
            watchdog = threading.Timer(opts.timeout + 60, client.kill)
            watchdog.start()
            result, t0 = None, time.monotonic()
            try:
                assert client.stdout is not None
                for raw in client.stdout:
                    try:
                        msg = json.loads(raw)
                    except ValueError:
                        continue
                    if msg.get("event") == "progress":
                        count, rss, t = msg["count"], rss_kib(server.pid), time.monotonic() - t0
                        samples.append((count, rss, t))
                        base = next((s[1] for s in samples if s[0] == opts.flat_after), None)
                        delta = f"{(rss - base) / 1024:+.1f}" if base is not None and count >= opts.flat_after else ""
                        print(f"  {count:>10,} {rss / 1024:>9.1f} {delta:>13} {t:>7.1f}", flush=True)
                    elif msg.get("event") == "result":
                        result = msg
                        break
                client.wait(30)
            finally:
                watchdog.cancel()
                if client.poll() is None:
                    client.kill()
                    client.wait()
        finally:
            bench.stop(server)
    if result is None:
        tail = client_log.read_text(errors="replace")[-2000:]
        stail = server_log.read_text(errors="replace")[-2000:]
        raise bench.BenchError(f"{label}: the load generator gave no result\n--- client stderr:\n{tail}\n--- server log:\n{stail}")
    base = next((s[1] for s in samples if s[0] == opts.flat_after), None)
    growth_mib = max((s[1] - base for s in samples if s[0] >= opts.flat_after), default=0) / 1024 if base is not None else None
    problems = []
    if result["count"] < opts.calls:
        problems.append(f"only {result['count']:,} of {opts.calls:,} calls completed within {opts.timeout:.0f} s")
    if result["errors"]:
        problems.append(f"{result['errors']} failed calls (first: {result.get('first_error')})")
    if growth_mib is None:
        problems.append(f"no sample at {opts.flat_after:,} calls (--flat-after must be a multiple of --every)")
    elif growth_mib > opts.max_growth_mib:
        problems.append(f"RSS grew by {growth_mib:.1f} MiB after {opts.flat_after:,} calls (at most {opts.max_growth_mib:g} MiB is flat)")
    verdict = "flat" if not problems else "FAILED: " + "; ".join(problems)
    print(f"  {result['throughput_rps']:,.0f} calls/s, p99 {result['p99_us']:.0f} µs, growth after {opts.flat_after:,}: "
          f"{'-' if growth_mib is None else format(growth_mib, '+.1f')} MiB -> {verdict}\n", flush=True)
    return {"server": key, "label": label, "samples": [{"calls": c, "rss_kib": r, "elapsed_s": t} for c, r, t in samples],
            "growth_after_flat_mib": growth_mib, "throughput_rps": result["throughput_rps"], "errors": result["errors"],
            "count": result["count"], "ok": not problems, "verdict": verdict}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", action="append", choices=sorted(SERVERS), help="which server (repeat; default: rust and python)")
    ap.add_argument("--calls", type=int, default=1_000_000, help="tools/call to send (default 1,000,000)")
    ap.add_argument("--every", type=int, default=100_000, help="sample the server's RSS every N calls (default 100,000)")
    ap.add_argument("--connections", type=int, default=8, help="keep-alive connections, each a closed loop (default 8)")
    ap.add_argument("--flat-after", type=int, default=200_000, help="the sample the later ones are compared with (default 200,000)")
    ap.add_argument("--max-growth-mib", type=float, default=4.0, help="most RSS growth after --flat-after that is flat (default 4 MiB)")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds one server's run may take at most (default 1200)")
    ap.add_argument("--no-build", action="store_true", help="do not run cargo build first")
    ap.add_argument("--output", type=Path, default=bench.RESULTS / "soak.json", help="where to write the JSON results")
    opts = ap.parse_args()
    if opts.every <= 0 or opts.calls <= 0 or opts.flat_after % opts.every or opts.flat_after >= opts.calls:
        ap.error("--every and --calls must be positive, --flat-after a multiple of --every below --calls")
    servers = opts.server or ["rust", "python"]
    runs = []
    try:
        if not opts.no_build:
            bench.build()
        with tempfile.TemporaryDirectory(prefix="mcpaxle-soak-") as tmp:
            for key in servers:
                runs.append(soak(key, opts, Path(tmp)))
    except (bench.BenchError, bench.Skip) as e:
        print(f"soak: {e}", file=sys.stderr)
        return 2
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps({"timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "settings": {k: getattr(opts, k) for k in ("calls", "every", "connections", "flat_after", "max_growth_mib")}, "runs": runs}, indent=2) + "\n")
    for r in runs:
        print(f"soak: {r['label']}: {r['verdict']}")
    return 0 if all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
