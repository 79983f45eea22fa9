#!/usr/bin/env python3
"""mcpaxle benchmarks: tools/call throughput, latency, peak RSS and server CPU time per call.

Every row is a server command plus a transport. For each row this script starts the server
(loopback only), drives it with a load generator, samples the server's CPU time and peak RSS
from /proc exactly at the edges of the measured window (the load generator announces them on
stdout), stops the server, and prints one table with every row side by side, the ratios to
the ceiling row and the targets. Rows run interleaved, round after round (--repeat), and each
figure is the median over rounds: the machine is shared and noisy, so server CPU time per call
is the figure to trust most.

    python3 bench/run.py [--duration 5] [--warmup 1] [--connections 8] [--window 64]
                         [--repeat 2] [--only KEY[,KEY]] [--no-build] [--check]

Adding a row: append one Row(...) to ROWS (see bench/README.md).
Linux only (reads /proc). Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release"
RESULTS = ROOT / "bench" / "results"

# Targets from the issue: mcpaxle over HTTP at >= 70 % of the ceiling's throughput, and at most
# 30 µs of server CPU time per call.
TARGET_THROUGHPUT_RATIO = 0.70
TARGET_CPU_US_PER_CALL = 30.0


@dataclass
class Row:
    """One benchmarked configuration.

    key        short name, for --only
    label      what the table shows
    transport  "http" (the server listens on 127.0.0.1:{port}) or "stdio" (newline-delimited
               JSON-RPC on the server's stdin/stdout)
    server     the command that starts the server; placeholders: {bin} (target/release),
               {root} (the repository), {port} (a free loopback port, http only), {python}
    path       the HTTP endpoint path (http only)
    ceiling    the row the others are compared with
    client     another load generator instead of bench's loadgen, speaking the same stdout
               protocol (see bench/README.md); extra placeholders: {url}, {fd_in}, {fd_out},
               {connections}, {window}, {warmup}, {duration}
    env        extra environment variables of the server
    targets    whether the issue's targets apply to this row
    setup      a function run before the row (once per run): returns extra placeholders (e.g. the
               interpreter of a venv) or raises Skip, and the row is left out with that message
    """

    key: str
    label: str
    transport: str
    server: list[str]
    path: str = "/mcp"
    ceiling: bool = False
    client: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    targets: bool = False
    setup: "Callable[[], dict[str, object]] | None" = None


class Skip(Exception):
    """A row's prerequisites are missing: the row is left out of the run, with this message."""


BINDING_VENV = ROOT / "bindings-python" / ".venv"
SDK_VENV = ROOT / "target" / "bench-venv-sdk"
SDK_REQUIREMENTS = ROOT / "bench" / "python" / "requirements-sdk.txt"


def binding_python() -> dict[str, object]:
    """The venv with the mcpaxle Python package (made by bindings-python/scripts/test.sh)."""
    py = BINDING_VENV / "bin" / "python"
    hint = "run `bash bindings-python/scripts/test.sh` (or `bash bindings-python/scripts/develop.sh`) first"
    if not py.exists():
        raise Skip(f"{py.relative_to(ROOT)} is missing: {hint}")
    if subprocess.call([py, "-c", "import mcpaxle._native"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) != 0:
        raise Skip(f"mcpaxle does not import in {BINDING_VENV.relative_to(ROOT)}: {hint}")
    return {"binding_python": py}


def sdk_python() -> dict[str, object]:
    """A venv with the official Python SDK, pinned (bench/python/requirements-sdk.txt), made on demand."""
    py = SDK_VENV / "bin" / "python"
    stamp = SDK_VENV / ".requirements.sha256"
    want = hashlib.sha256(SDK_REQUIREMENTS.read_bytes()).hexdigest()
    if py.exists() and stamp.exists() and stamp.read_text().strip() == want:
        return {"sdk_python": py}
    print(f"+ installing {SDK_REQUIREMENTS} into {SDK_VENV}", flush=True)
    for cmd in ([sys.executable, "-m", "venv", SDK_VENV], [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", SDK_REQUIREMENTS]):
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if out.returncode != 0:
            raise Skip(f"installing the official Python SDK failed ({' '.join(map(str, cmd))}):\n{out.stdout[-1500:]}")
    stamp.write_text(want + "\n")
    return {"sdk_python": py}


_otlp_sink: subprocess.Popen | None = None


def otlp_sink() -> dict[str, object]:
    """Starts (once per run) bench/otlp_sink.py, which takes OTLP exports and drops them: the
    telemetry rows export to it, so their CPU per call includes building and sending spans."""
    global _otlp_sink
    if _otlp_sink is None:
        _otlp_sink = subprocess.Popen([sys.executable, str(ROOT / "bench" / "otlp_sink.py")], stdout=subprocess.PIPE, text=True)
        line = _otlp_sink.stdout.readline() if _otlp_sink.stdout else ""
        if not line.startswith("PORT "):
            raise BenchError(f"the OTLP sink did not start: {line!r}")
        _otlp_sink.port = int(line.split()[1])  # type: ignore[attr-defined]
        atexit.register(stop, _otlp_sink)
    return {"otlp_sink": f"http://127.0.0.1:{_otlp_sink.port}"}  # type: ignore[attr-defined]


def c_echo() -> dict[str, object]:
    """The C echo server (bindings-c/examples/echo_server.c), built by bindings-c/build.sh."""
    if not (ROOT / "target" / "c-examples" / "echo_server").exists():
        raise Skip("target/c-examples/echo_server is missing: run `bindings-c/build.sh` first")
    return {}


def node_package() -> dict[str, object]:
    """The Node package's native module (bindings-node/scripts/build.sh)."""
    if subprocess.call(["node", "-e", "require('./bindings-node/index.js')"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) != 0:
        raise Skip("the Node package does not load: run `bash bindings-node/scripts/build.sh` first")
    return {}


ROWS: list[Row] = [
    Row("ceiling", "ceiling (plain hyper)", "http", ["{bin}/ceiling_server", "--http", "127.0.0.1:{port}"], path="/", ceiling=True),
    Row("mcpaxle-http", "mcpaxle HTTP", "http", ["{bin}/bench_server", "--http", "127.0.0.1:{port}"], targets=True),
    # The same server with a visibility predicate (per-principal visibility; this one hides
    # nothing): what asking it costs per call, read against mcpaxle-http.
    Row("mcpaxle-visibility", "mcpaxle HTTP (visibility)", "http", ["{bin}/bench_server", "--http", "127.0.0.1:{port}", "--visibility"]),
    # The same server with one middleware around every request (an audit that times them).
    Row("mcpaxle-middleware", "mcpaxle HTTP (middleware)", "http", ["{bin}/bench_server", "--http", "127.0.0.1:{port}", "--middleware"]),
    # Issue 15: the official Rust SDK (rmcp, pinned in bench/rmcp/Cargo.toml), stateless JSON answers.
    # Telemetry's cost (issue 18): on, exporting to a sink, with every trace sampled out
    # (spans not recorded; metrics kept) and with every trace sampled (spans built and sent).
    Row("mcpaxle-otel-unsampled", "mcpaxle HTTP, telemetry on, unsampled", "http", ["{bin}/bench_server", "--http", "127.0.0.1:{port}"],
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": "{otlp_sink}", "OTEL_TRACES_SAMPLER": "always_off"}, setup=otlp_sink),
    Row("mcpaxle-otel-sampled", "mcpaxle HTTP, telemetry on, sampled", "http", ["{bin}/bench_server", "--http", "127.0.0.1:{port}"],
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": "{otlp_sink}", "OTEL_TRACES_SAMPLER": "always_on"}, setup=otlp_sink),
    Row("rmcp", "rmcp (official Rust SDK)", "http", ["{bin}/rmcp_server", "--http", "127.0.0.1:{port}"]),
    Row("mcpaxle-stdio", "mcpaxle stdio", "stdio", ["{bin}/bench_server", "--stdio"], targets=True),
    # Clients (issue 5): tools/call round trips from Node, {connections} calls in flight from one
    # client, against the same mcpaxle server: mcpaxle's Node package vs the official TypeScript client.
    Row("node-client", "Node client (mcpaxle)", "http", ["{bin}/bench_server", "--http", "127.0.0.1:{port}"],
        client=["node", "{root}/bench/node_client.mjs", "--client", "mcpaxle", "--url", "{url}", "--concurrency", "{connections}", "--warmup", "{warmup}", "--duration", "{duration}"]),
    Row("ts-client", "Node client (TS SDK)", "http", ["{bin}/bench_server", "--http", "127.0.0.1:{port}"],
        client=["node", "{root}/bench/node_client.mjs", "--client", "sdk", "--url", "{url}", "--concurrency", "{connections}", "--warmup", "{warmup}", "--duration", "{duration}"]),
    # Python servers (issue 4): the same trivial tool as an `async def` on mcpaxle's Python package,
    # and on the official Python SDK (mcp 2.3.0, MCPServer, stateless Streamable HTTP, JSON responses).
    Row("python-async", "mcpaxle Python (async)", "http", ["{binding_python}", "{root}/bindings-python/examples/echo_server.py", "--http", "127.0.0.1:{port}"], setup=binding_python),
    # Issue 14: the same server as 2 worker processes on one port (run("http", workers=2)), and
    # both with a tool that computes ~0.2 ms in Python first (where one event loop is the limit).
    Row("python-async-2w", "mcpaxle Python (async, 2 workers)", "http", ["{binding_python}", "{root}/bindings-python/examples/echo_server.py", "--http", "127.0.0.1:{port}", "--workers", "2"], setup=binding_python),
    Row("python-busy", "mcpaxle Python (busy tool)", "http", ["{binding_python}", "{root}/bindings-python/examples/echo_server.py", "--http", "127.0.0.1:{port}", "--busy"], setup=binding_python),
    Row("python-busy-2w", "mcpaxle Python (busy tool, 2 workers)", "http", ["{binding_python}", "{root}/bindings-python/examples/echo_server.py", "--http", "127.0.0.1:{port}", "--busy", "--workers", "2"], setup=binding_python),
    Row("python-sdk", "Python SDK (mcp 2.3.0)", "http", ["{sdk_python}", "{root}/bench/python/echo_sdk.py", "--port", "{port}"], setup=sdk_python),
    # The same `async def` tool through server.asgi_app() under uvicorn (issue 13): what the ASGI
    # bridge costs against the built-in server of the python-async row.
    Row("python-asgi", "mcpaxle Python (ASGI, uvicorn)", "http", ["{binding_python}", "{root}/bindings-python/examples/echo_server.py", "--asgi", "127.0.0.1:{port}"], setup=binding_python),
    # Every binding's handler (issue 15), served by the core's HTTP server like mcpaxle-http:
    # the Python tool as a plain def, the C tool through the C API, the JavaScript tool.
    Row("python-def", "mcpaxle Python (def)", "http", ["{binding_python}", "{root}/bindings-python/examples/echo_server.py", "--http", "127.0.0.1:{port}", "--sync"], setup=binding_python),
    # The Rust handler with its work on tokio's blocking pool (spawn_blocking), as a handler that
    # may block runs: the thread switches c-http pays, without the C API; read c-http against it.
    Row("mcpaxle-http-blocking", "mcpaxle HTTP (blocking pool)", "http", ["{bin}/bench_server", "--http", "127.0.0.1:{port}", "--blocking"]),
    Row("c-http", "mcpaxle C handler", "http", ["{root}/target/c-examples/echo_server", "--http", "127.0.0.1:{port}"], setup=c_echo),
    # The same C handler called on the runtime's worker (mcpaxle_server_set_inline_handlers): no
    # thread switch per call, for callbacks that never block.
    Row("c-http-inline", "mcpaxle C handler (inline)", "http", ["{root}/target/c-examples/echo_server", "--inline", "--http", "127.0.0.1:{port}"], setup=c_echo),
    Row("node-http", "mcpaxle Node handler", "http", ["node", "{root}/bindings-node/examples/echo_server.mjs", "--http", "127.0.0.1:{port}"], setup=node_package),
]

# Side-by-side comparisons printed after the table: (row, baseline, the issue's aims: row's
# throughput at least this many times the baseline's, row's memory at most this fraction of it,
# and which memory: "peak_rss_mib", or "pss_mib" for a group of processes sharing pages).
COMPARISONS: list[tuple[str, str, float | None, float | None, str]] = [
    ("python-async", "python-sdk", 10.0, 0.5, "peak_rss_mib"),
    # Two workers on two cores, for about twice the memory: a trivial tool gains nothing (one
    # process already keeps 1.4 cores busy, Rust serving HTTP beside the loop, and the load
    # generator takes the rest); a tool whose Python work is the limit gains. Memory as PSS:
    # the supervisor forks the workers after it has imported and registered everything, and
    # the three share those pages, which their summed RSS counts three times.
    ("python-async-2w", "python-async", None, 2.5, "pss_mib"),
    ("python-busy-2w", "python-busy", 1.3, 2.5, "pss_mib"),
    # No aim: the ratio is read, not judged.
    ("python-asgi", "python-async", None, None, "peak_rss_mib"),
    # Issue 15: every binding's handler against the Rust handler (C and Node within 1.5x its
    # CPU per call) and a plain def against async def (within 2x): read `server CPU per call`.
    ("c-http", "mcpaxle-http", None, None, "peak_rss_mib"),
    ("mcpaxle-http-blocking", "mcpaxle-http", None, None, "peak_rss_mib"),
    ("c-http", "mcpaxle-http-blocking", None, None, "peak_rss_mib"),
    # Issue 18: telemetry's cost against the same server with it off (server CPU per call).
    ("mcpaxle-otel-unsampled", "mcpaxle-http", None, None, "peak_rss_mib"),
    ("mcpaxle-otel-sampled", "mcpaxle-http", None, None, "peak_rss_mib"),
    ("c-http-inline", "mcpaxle-http", None, None, "peak_rss_mib"),
    ("mcpaxle-visibility", "mcpaxle-http", None, None, "peak_rss_mib"),
    ("mcpaxle-middleware", "mcpaxle-http", None, None, "peak_rss_mib"),
    ("node-http", "mcpaxle-http", None, None, "peak_rss_mib"),
    ("python-def", "python-async", None, None, "peak_rss_mib"),
]

# The default load generator (bench/src/bin/loadgen.rs), per transport.
LOADGEN = {
    "http": ["{bin}/loadgen", "--http", "{url}", "--connections", "{connections}", "--warmup", "{warmup}", "--duration", "{duration}"],
    "stdio": ["{bin}/loadgen", "--stdio-fds", "{fd_in},{fd_out}", "--window", "{window}", "--warmup", "{warmup}", "--duration", "{duration}"],
}

CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------------
# /proc sampling: CPU time and peak RSS of a process and all its descendants (a row's command
# may be a wrapper that starts the real server).


def _stat(pid: int) -> tuple[int, float] | None:
    """(ppid, utime+stime in seconds) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2 :].split()
    # fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / CLK_TCK


def _tree(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st:
                children.setdefault(st[0], []).append(int(name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _status_kib(pid: int, field: str) -> int:
    """A size field of /proc/PID/status (`VmHWM`, `VmRSS`), in KiB; 0 for a gone process."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _hwm_kib(pid: int) -> int:
    return _status_kib(pid, "VmHWM")


def _pss_kib(pid: int) -> int:
    """The process's proportional set size (`Pss` of /proc/PID/smaps_rollup), in KiB: each page
    it maps divided by the number of processes mapping it; 0 for a gone process."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class Sample:
    cpu_s: float
    hwm_kib: int
    pss_kib: int


def sample(pid: int, tree: bool = True) -> Sample:
    """CPU time, peak RSS and PSS of a process and, with `tree`, its descendants, summed. Summed
    peak RSS counts a page the processes share once per process: a pre-fork server's supervisor
    and workers share most of theirs. Summed PSS counts it once."""
    pids = _tree(pid) if tree else [pid]
    cpu = sum(st[1] for p in pids if (st := _stat(p)))
    return Sample(cpu, sum(_hwm_kib(p) for p in pids), sum(_pss_kib(p) for p in pids))


# ---------------------------------------------------------------------------------------------
# Running one row once.


class BenchError(Exception):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"the server exited with status {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise BenchError(f"the server did not listen on port {port} within {timeout:.0f} s")


def fill(args: list[str], values: dict[str, object]) -> list[str]:
    return [a.format(**values) for a in args]


def stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def pinned_cpus(pin: bool) -> tuple[set[int], set[int]]:
    """With `--pin`: the CPUs the server may use (the first half of ours, at least one) and
    those the load generator may (the rest); otherwise none, both go where the kernel puts
    them. A process's threads inherit its affinity, and tokio sizes its runtime by it."""
    if not pin:
        return set(), set()
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise BenchError("--pin needs at least 2 CPUs: one for the server, one for the load generator")
    half = len(cpus) // 2
    return set(cpus[:half]), set(cpus[half:])


def on_cpus(cpus: set[int]):
    """What a child runs before its program to stay on `cpus` (`preexec_fn`); None for any CPU."""
    return (lambda: os.sched_setaffinity(0, cpus)) if cpus else None


def run_once(row: Row, opts: argparse.Namespace, log_dir: Path, extra: dict[str, object]) -> dict:
    values: dict[str, object] = {
        **extra,
        "bin": opts.bin_dir,
        "root": ROOT,
        "python": sys.executable,
        "connections": opts.connections,
        "window": opts.window,
        "warmup": opts.warmup,
        "duration": opts.duration,
    }
    server_log = open(log_dir / f"{row.key}.server.log", "wb")
    client_err = open(log_dir / f"{row.key}.client.log", "wb")
    env = {**os.environ, **{k: fill([v], values)[0] for k, v in row.env.items()}}
    if opts.server_workers:
        env["TOKIO_WORKER_THREADS"] = str(opts.server_workers)
    on_server_cpus, on_client_cpus = (on_cpus(c) for c in pinned_cpus(opts.pin))
    keep_open: list[int] = []  # our end of the server's stdin: it stays alive until we close it
    pass_fds: tuple[int, ...] = ()
    if row.transport == "http":
        port = free_port()
        values |= {"port": port, "url": f"http://127.0.0.1:{port}{row.path}"}
        server = subprocess.Popen(fill(row.server, values), stdin=subprocess.DEVNULL, stdout=server_log, stderr=server_log, env=env, cwd=ROOT,
                                  preexec_fn=on_server_cpus)
        try:
            wait_listening(port, server)
        except BaseException:
            stop(server)
            raise
    elif row.transport == "stdio":
        req_r, req_w = os.pipe()  # loadgen → server
        resp_r, resp_w = os.pipe()  # server → loadgen
        server = subprocess.Popen(fill(row.server, values), stdin=req_r, stdout=resp_w, stderr=server_log, env=env, cwd=ROOT,
                                  preexec_fn=on_server_cpus)
        os.close(req_r)
        os.close(resp_w)
        values |= {"fd_in": resp_r, "fd_out": req_w}
        pass_fds = (resp_r, req_w)
        keep_open = [req_w]
    else:
        raise BenchError(f"unknown transport {row.transport!r}")

    client_cmd = fill(row.client or LOADGEN[row.transport], values)
    try:
        client = subprocess.Popen(client_cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=client_err, pass_fds=pass_fds, cwd=ROOT,
                                  preexec_fn=on_client_cpus)
        for fd in pass_fds:
            if fd not in keep_open:
                os.close(fd)
        # A watchdog, should the client hang.
        watchdog = threading.Timer(opts.warmup + opts.duration + 60, client.kill)
        watchdog.start()
        before = after = client_before = client_after = None
        t0 = t1 = 0.0
        result = None
        try:
            assert client.stdout is not None
            for raw in client.stdout:
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue
                event = msg.get("event")
                if event == "warmup_done":
                    before, client_before, t0 = sample(server.pid), sample(client.pid, tree=False), time.monotonic()
                elif event == "measure_done":
                    after, client_after, t1 = sample(server.pid), sample(client.pid, tree=False), time.monotonic()
                elif event == "result":
                    result = msg
                    break
            client.wait(30)
        finally:
            watchdog.cancel()
            if client.poll() is None:
                client.kill()
                client.wait()
    finally:
        for fd in keep_open:
            os.close(fd)  # end of input: a stdio server exits by itself
        if keep_open:
            try:
                server.wait(2)
            except subprocess.TimeoutExpired:
                pass
        stop(server)
        server_log.close()
        client_err.close()

    if result is None or before is None or after is None:
        tail = (log_dir / f"{row.key}.client.log").read_text(errors="replace")[-2000:]
        stail = (log_dir / f"{row.key}.server.log").read_text(errors="replace")[-2000:]
        raise BenchError(f"{row.label}: the load generator gave no result (exit {client.returncode})\n--- client stderr:\n{tail}\n--- server stderr:\n{stail}")
    count = result["count"]
    server_cpu = after.cpu_s - before.cpu_s
    client_cpu = client_after.cpu_s - client_before.cpu_s
    return {
        "throughput_rps": result["throughput_rps"],
        "p50_us": result["p50_us"],
        "p99_us": result["p99_us"],
        "p999_us": result.get("p999_us"),
        "mean_us": result.get("mean_us"),
        "server_cpu_us_per_call": server_cpu / count * 1e6 if count else None,
        "server_cpu_cores": server_cpu / (t1 - t0) if t1 > t0 else None,
        "client_cpu_us_per_call": client_cpu / count * 1e6 if count else None,
        "peak_rss_mib": after.hwm_kib / 1024,
        # At the end of the measured window, under load.
        "pss_mib": after.pss_kib / 1024,
        "count": count,
        "errors": result["errors"],
        "first_error": result.get("first_error"),
        "window_s": result["duration_s"],
        # The same window as seen by this script's /proc samples: should match window_s closely.
        "sampled_window_s": t1 - t0,
    }


# ---------------------------------------------------------------------------------------------
# Aggregation and report.

METRICS = [
    "throughput_rps",
    "p50_us",
    "p99_us",
    "p999_us",
    "mean_us",
    "server_cpu_us_per_call",
    "server_cpu_cores",
    "client_cpu_us_per_call",
    "peak_rss_mib",
    "pss_mib",
]


def median_of(runs: list[dict]) -> dict:
    out: dict[str, object] = {}
    for m in METRICS:
        vals = [r[m] for r in runs if r.get(m) is not None]
        out[m] = statistics.median(vals) if vals else None
    # Contention only ever adds CPU time per call: the lowest is the closest to the true cost.
    cpus = [r["server_cpu_us_per_call"] for r in runs if r.get("server_cpu_us_per_call") is not None]
    out["server_cpu_us_per_call_min"] = min(cpus) if cpus else None
    out["count"] = sum(r["count"] for r in runs)
    out["errors"] = sum(r["errors"] for r in runs)
    return out


def fmt(v, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def paired(runs: list[dict], ceiling_runs: list[dict], metric: str) -> float | None:
    """The median over rounds of row ÷ ceiling, each round's runs paired: a row and the ceiling
    measured moments apart see about the same machine load."""
    ratios = [r[metric] / c[metric] for r, c in zip(runs, ceiling_runs) if r.get(metric) and c.get(metric)]
    return statistics.median(ratios) if ratios else None


def report(rows: list[Row], results: dict[str, dict]) -> dict:
    ceiling = next((r for r in rows if r.ceiling and r.key in results), None)
    c_runs = results[ceiling.key]["runs"] if ceiling else []
    head = (
        f"{'row':<24}{'req/s':>10}{'p50 µs':>9}{'p99 µs':>9}{'srv CPU µs/call (min)':>23}{'srv cores':>10}"
        f"{'client µs/call':>16}{'peak RSS MiB':>14}{'errors':>8}{'vs ceiling':>12}"
    )
    print()
    print(head)
    print("-" * len(head))
    ratios: dict[str, dict] = {}
    for row in rows:
        if row.key not in results:
            continue
        m, runs = results[row.key]["median"], results[row.key]["runs"]
        ratio = paired(runs, c_runs, "throughput_rps") if ceiling else None
        cpu_ratio = paired(runs, c_runs, "server_cpu_us_per_call") if ceiling else None
        ratios[row.key] = {"throughput_vs_ceiling": ratio, "server_cpu_vs_ceiling": cpu_ratio}
        vs = f"{ratio * 100:.0f} %" if ratio is not None else "-"
        cpu = f"{fmt(m['server_cpu_us_per_call'], '.1f')} ({fmt(m['server_cpu_us_per_call_min'], '.1f')})"
        print(
            f"{row.label:<24}{fmt(m['throughput_rps'], ',.0f'):>10}{fmt(m['p50_us'], '.1f'):>9}{fmt(m['p99_us'], '.1f'):>9}"
            f"{cpu:>23}{fmt(m['server_cpu_cores'], '.2f'):>10}{fmt(m['client_cpu_us_per_call'], '.1f'):>16}"
            f"{fmt(m['peak_rss_mib'], '.1f'):>14}{m['errors']:>8}{vs:>12}"
        )
    print()
    verdicts: dict[str, dict] = {}
    for row in rows:
        if row.key not in results or not row.targets:
            continue
        m, r = results[row.key]["median"], ratios[row.key]
        v: dict[str, object] = {}
        lines = []
        cpu = m["server_cpu_us_per_call"]
        if cpu is not None:
            v["cpu_ok"] = cpu <= TARGET_CPU_US_PER_CALL
            lines.append(f"server CPU {cpu:.1f} µs/call (target <= {TARGET_CPU_US_PER_CALL:.0f}): {'ok' if v['cpu_ok'] else 'MISSED'}")
        if row.transport == "http" and r["throughput_vs_ceiling"] is not None:
            v["throughput_ok"] = r["throughput_vs_ceiling"] >= TARGET_THROUGHPUT_RATIO
            lines.append(
                f"throughput {r['throughput_vs_ceiling'] * 100:.0f} % of the ceiling (target >= {TARGET_THROUGHPUT_RATIO * 100:.0f} %): {'ok' if v['throughput_ok'] else 'MISSED'}"
            )
        if r["server_cpu_vs_ceiling"] is not None and ceiling is not None and row.transport == ceiling.transport:
            lines.append(f"{r['server_cpu_vs_ceiling']:.1f}x the ceiling's CPU per call (CPU-bound throughput would be {100 / r['server_cpu_vs_ceiling']:.0f} % of it)")
        print(f"{row.label}: " + "; ".join(lines))
        verdicts[row.key] = v
    comparisons = {}
    for key, base, aim_tp, aim_memory, memory in COMPARISONS:
        if key not in results or base not in results:
            continue
        runs, b_runs = results[key]["runs"], results[base]["runs"]
        m, b = results[key]["median"], results[base]["median"]
        label, b_label = next(r.label for r in rows if r.key == key), next(r.label for r in rows if r.key == base)
        tp = paired(runs, b_runs, "throughput_rps")
        cpu = paired(runs, b_runs, "server_cpu_us_per_call")
        rss = m["peak_rss_mib"] / b["peak_rss_mib"] if m["peak_rss_mib"] and b["peak_rss_mib"] else None
        pss = m["pss_mib"] / b["pss_mib"] if m.get("pss_mib") and b.get("pss_mib") else None
        comparisons[f"{key}/{base}"] = {"throughput": tp, "server_cpu": cpu, "peak_rss": rss, "pss": pss}
        parts = []
        if tp is not None:
            aim = "" if aim_tp is None else f" (aim >= {aim_tp:g}x: {'ok' if tp >= aim_tp else 'MISSED'})"
            parts.append(f"throughput {tp:.1f}x{aim}")
        for name, ratio in (("peak_rss_mib", rss), ("pss_mib", pss)):
            if ratio is None or (name == "pss_mib" and memory != name):
                continue
            judged = aim_memory is not None and memory == name
            aim = f" (aim <= {aim_memory:g}x: {'ok' if ratio <= aim_memory else 'MISSED'})" if judged else ""
            parts.append(f"{'peak RSS' if name == 'peak_rss_mib' else 'PSS'} {ratio:.2f}x{aim}")
        if cpu is not None:
            parts.append(f"server CPU per call {cpu:.2f}x")
        print(f"{label} vs {b_label}: " + "; ".join(parts))
    return {"ratios": ratios, "verdicts": verdicts, "comparisons": comparisons}


# ---------------------------------------------------------------------------------------------
# Scenarios (issue 15): the Rust servers (ceiling, rmcp, mcpaxle) side by side under other loads
# than the main table's small tools/call at --connections: the small call at each of
# --scenario-connections, tools/list of 1,000 tools in one page, 100 KB and 1 MB tools/call.
# One table per scenario, each row's CPU per call against the ceiling's and rmcp's of the same run.


@dataclass
class Scenario:
    """One load: extra arguments for the load generator and for each row's server."""

    key: str
    label: str
    loadgen: list[str]
    server: dict[str, list[str]]
    connections: int | None = None


SCENARIO_ROWS = ["ceiling", "rmcp", "mcpaxle-http", "mcpaxle-visibility", "mcpaxle-middleware"]
LIST_TOOLS = 1000
# The ceiling answers as many bytes as mcpaxle does (its answer padded): the tools/list of
# 1,000 tools is measured once from bench_server (`--tools 1000`).
LIST_REPLY_BYTES = 135_000


def scenarios(keys: list[str], connections: list[int]) -> list[Scenario]:
    out: list[Scenario] = []
    for key in keys:
        if key == "call":
            out += [Scenario(f"call-c{c}", f"tools/call, c={c}", [], {}, connections=c) for c in connections]
        elif key == "list-1000":
            tools = ["--tools", str(LIST_TOOLS)]
            out.append(Scenario(key, f"tools/list, {LIST_TOOLS:,} tools", ["--method", "tools/list"],
                                {"ceiling": ["--reply-bytes", str(LIST_REPLY_BYTES)], "rmcp": tools, "mcpaxle-http": tools,
                                 "mcpaxle-visibility": tools, "mcpaxle-middleware": tools}))
        elif key in ("call-100k", "call-1m"):
            n = 100_000 if key == "call-100k" else 1_000_000
            out.append(Scenario(key, f"tools/call, {n // 1000:,} KB text", ["--text-bytes", str(n)],
                                {"ceiling": ["--reply-bytes", str(n + 200)]}))
    return out


SCENARIO_KEYS = ["call", "list-1000", "call-100k", "call-1m"]


def scenario_row(row: Row, sc: Scenario) -> Row:
    """`row` under scenario `sc`: its server with the scenario's arguments, loadgen with its own."""
    return Row(f"{row.key}@{sc.key}", row.label, row.transport, row.server + sc.server.get(row.key, []), path=row.path,
               ceiling=row.ceiling, client=LOADGEN[row.transport] + sc.loadgen, env=row.env)


def run_scenarios(rows: list[Row], opts: argparse.Namespace, tmp: Path) -> dict[str, dict[str, list[dict]]]:
    keys = [k for o in opts.scenario for k in o.split(",") if k and k != "none"]
    conns = [int(c) for c in opts.scenario_connections.split(",") if c]
    chosen = [r for r in rows if r.key in SCENARIO_ROWS]
    out: dict[str, dict[str, list[dict]]] = {}
    if not chosen or not keys:
        return out
    sopts = argparse.Namespace(**{**vars(opts), "duration": opts.scenario_duration, "warmup": opts.scenario_warmup})
    for sc in scenarios(keys, conns):
        runs: dict[str, list[dict]] = {r.key: [] for r in chosen}
        sopts.connections = sc.connections or opts.connections
        for round_no in range(opts.scenario_repeat):
            order = chosen[round_no % len(chosen):] + chosen[: round_no % len(chosen)]
            for row in order:
                print(f"[{sc.label}, round {round_no + 1}/{opts.scenario_repeat}] {row.label} ...", end=" ", flush=True)
                r = run_once(scenario_row(row, sc), sopts, tmp, {})
                runs[row.key].append(r)
                print(f"{r['throughput_rps']:,.0f} req/s, server {fmt(r['server_cpu_us_per_call'], '.1f')} µs CPU/call, {r['errors']} errors", flush=True)
                if r.get("first_error"):
                    print(f"    first error: {r['first_error']}")
        out[sc.key] = {"label": sc.label, "runs": runs}
    return out


def report_scenarios(results: dict[str, dict]) -> dict:
    """One table per scenario; ratios paired per round like the main table's. The issue's aims:
    mcpaxle's CPU per call at most the ceiling's ÷ 0.85 at c=8 (÷ 0.8 at any c), and at most rmcp's
    for lists and large calls; its p99 at most rmcp's."""
    summary: dict[str, dict] = {}
    for key, sc in results.items():
        runs = sc["runs"]
        med = {k: median_of(v) for k, v in runs.items()}
        head = f"{sc['label']:<28}{'req/s':>10}{'p50 µs':>9}{'p99 µs':>10}{'srv CPU µs/call (min)':>23}{'ceiling/CPU':>13}{'CPU vs rmcp':>13}{'p99 vs rmcp':>13}"
        print()
        print(head)
        print("-" * len(head))
        summary[key] = {}
        for row, m in med.items():
            ceil = paired(runs.get("ceiling", []), runs[row], "server_cpu_us_per_call") if "ceiling" in runs else None
            vs_rmcp = paired(runs[row], runs["rmcp"], "server_cpu_us_per_call") if "rmcp" in runs else None
            p99 = m["p99_us"] / med["rmcp"]["p99_us"] if "rmcp" in med and m["p99_us"] and med["rmcp"]["p99_us"] else None
            summary[key][row] = {**m, "ceiling_cpu_over_cpu": ceil, "cpu_vs_rmcp": vs_rmcp, "p99_vs_rmcp": p99}
            cpu = f"{fmt(m['server_cpu_us_per_call'], '.1f')} ({fmt(m['server_cpu_us_per_call_min'], '.1f')})"
            print(f"{row:<28}{fmt(m['throughput_rps'], ',.0f'):>10}{fmt(m['p50_us'], '.1f'):>9}{fmt(m['p99_us'], '.1f'):>10}"
                  f"{cpu:>23}{fmt(ceil, '.2f'):>13}{fmt(vs_rmcp, '.2f'):>13}{fmt(p99, '.2f'):>13}")
    return summary


def build() -> None:
    cargo = os.environ.get("CARGO", "cargo")
    # Two builds, as `make bench` runs them: rmcp's package apart, so that its features do not
    # change the core's build (scripts/shared_build.py).
    for cmd in ([cargo, "build", "--release", "-p", "mcpaxle-bench", "--bins"],
                [cargo, "build", "--release", "-p", "mcpaxle-bench-rmcp", "--features", "rmcp"]):
        print("+ " + " ".join(cmd), flush=True)
        if subprocess.call(cmd, cwd=ROOT) != 0:
            raise BenchError("building the benchmark binaries failed (use --no-build to run the ones already built)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=5.0, help="measured seconds per run (default 5)")
    ap.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds before each measured window (default 1)")
    ap.add_argument("--connections", type=int, default=8, help="concurrent keep-alive HTTP connections (default 8)")
    ap.add_argument("--window", type=int, default=64, help="outstanding pipelined stdio requests (default 64)")
    ap.add_argument("--repeat", type=int, default=2, help="rounds over all rows; figures are medians (default 2)")
    ap.add_argument("--only", action="append", default=[], metavar="KEY", help="run only these rows (repeat or comma-separate); keys: " + ", ".join(r.key for r in ROWS))
    ap.add_argument("--no-build", action="store_true", help="do not run cargo build first")
    ap.add_argument("--bin-dir", type=Path, default=BIN, help="where the Rust binaries are (default target/release; e.g. a copy of an earlier build, with --no-build)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--server-workers", type=int, default=0, metavar="N",
                    help="runtime worker threads of every server, not of the load generator (TOKIO_WORKER_THREADS; default: tokio's, one per core)")
    ap.add_argument("--pin", action="store_true",
                    help="servers on the first half of the CPUs, the load generator on the rest (2 CPUs: one each), so tail "
                         "latencies measure the server rather than the two taking turns on the same cores; each server then "
                         "has fewer cores, so compare rows of one run only")
    ap.add_argument("--scenario", action="append", default=[], metavar="KEY",
                    help="issue 15's scenarios for the Rust rows (repeat or comma-separate; default all): " + ", ".join(SCENARIO_KEYS) + ", or none")
    ap.add_argument("--scenario-connections", default="1,8,64,256", help="connections of the `call` scenario (default 1,8,64,256)")
    ap.add_argument("--scenario-duration", type=float, default=2.0, help="measured seconds per scenario run (default 2)")
    ap.add_argument("--scenario-warmup", type=float, default=0.5, help="warm-up seconds per scenario run (default 0.5)")
    ap.add_argument("--scenario-repeat", type=int, default=1, help="rounds per scenario (default 1)")
    ap.add_argument("--output", type=Path, default=RESULTS / "latest.json", help="where to write the JSON results")
    opts = ap.parse_args()

    only = {k for o in opts.only for k in o.split(",") if k}
    unknown = only - {r.key for r in ROWS}
    if unknown:
        ap.error(f"unknown row(s) {', '.join(sorted(unknown))}; rows: {', '.join(r.key for r in ROWS)}")
    rows = [r for r in ROWS if not only or r.key in only]
    unknown = {k for o in opts.scenario for k in o.split(",") if k} - set(SCENARIO_KEYS) - {"none"}
    if unknown:
        ap.error(f"unknown scenario(s) {', '.join(sorted(unknown))}; scenarios: {', '.join(SCENARIO_KEYS)}, none")
    if not opts.scenario:
        opts.scenario = SCENARIO_KEYS

    try:
        if not opts.no_build:
            build()
        # Rows with prerequisites (a venv, a package): set them up now, leave out those that cannot run.
        extra: dict[str, dict[str, object]] = {}
        skipped: dict[str, str] = {}
        for row in rows:
            if row.setup is None:
                extra[row.key] = {}
                continue
            try:
                extra[row.key] = row.setup()
            except Skip as e:
                skipped[row.key] = str(e)
                print(f"bench: skipping {row.key} ({row.label}): {e}", file=sys.stderr, flush=True)
        rows = [r for r in rows if r.key not in skipped]
        if not rows:
            raise BenchError("no row left to run")
        RESULTS.mkdir(parents=True, exist_ok=True)
        load_before = os.getloadavg()
        runs: dict[str, list[dict]] = {r.key: [] for r in rows}
        started = time.time()
        with tempfile.TemporaryDirectory(prefix="mcpaxle-bench-") as tmp:
            for round_no in range(opts.repeat):
                # Rotate the order each round so no row is always first (or last) on a busy machine.
                order = rows[round_no % len(rows) :] + rows[: round_no % len(rows)]
                for row in order:
                    print(f"[round {round_no + 1}/{opts.repeat}] {row.label} ...", end=" ", flush=True)
                    r = run_once(row, opts, Path(tmp), extra[row.key])
                    runs[row.key].append(r)
                    print(f"{r['throughput_rps']:,.0f} req/s, server {fmt(r['server_cpu_us_per_call'], '.1f')} µs CPU/call, {r['errors']} errors", flush=True)
                    if r.get("first_error"):
                        print(f"    first error: {r['first_error']}")
            scenario_results = run_scenarios(rows, opts, Path(tmp))
    except BenchError as e:
        print(f"\nbench: {e}", file=sys.stderr)
        return 2

    results = {k: {"median": median_of(v), "runs": v} for k, v in runs.items()}
    summary = report(rows, results)
    summary["scenarios"] = report_scenarios(scenario_results)
    load_after = os.getloadavg()
    for key, why in skipped.items():
        print(f"skipped {key}: {why.splitlines()[0]}")
    print(f"\nload average before/after: {load_before[0]:.2f} / {load_after[0]:.2f} on {os.cpu_count()} CPUs; {time.time() - started:.0f} s")

    doc = {
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cpus": os.cpu_count(), "kernel": platform.release(), "loadavg_before": load_before, "loadavg_after": load_after},
        "settings": {k: getattr(opts, k) for k in ("duration", "warmup", "connections", "window", "repeat", "server_workers", "pin")},
        "targets": {"throughput_vs_ceiling_min": TARGET_THROUGHPUT_RATIO, "server_cpu_us_per_call_max": TARGET_CPU_US_PER_CALL},
        "skipped": skipped,
        "rows": [{"key": r.key, "label": r.label, "transport": r.transport, "ceiling": r.ceiling, **results[r.key]} for r in rows],
        **summary,
    }
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"results: {opts.output.relative_to(ROOT) if opts.output.is_relative_to(ROOT) else opts.output}")

    errors = sum(results[k]["median"]["errors"] for k in results)
    errors += sum(r["errors"] for sc in scenario_results.values() for runs in sc["runs"].values() for r in runs)
    if errors:
        print(f"bench: {errors} failed requests", file=sys.stderr)
        return 1
    if opts.check and any(not ok for v in summary["verdicts"].values() for ok in v.values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
