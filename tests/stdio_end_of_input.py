#!/usr/bin/env python3
"""`echo REQUEST | server`: every binding's stdio server answers a request still in flight
when its stdin closes, within the drain deadline, then exits 0 (one behaviour, the core's).

    python3 tests/stdio_end_of_input.py NAME=COMMAND [NAME=COMMAND...]

Each COMMAND (split on spaces) is an everything server that serves stdio; its
`test_tool_with_progress` sleeps between its progress notifications, so it is still running
when stdin closes right after the request. Both eras: the stateless request alone, and a legacy
initialize, initialized and the call. Exits 1 naming each server that dropped the answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "stdio-eof-check", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
CALL = {"name": "test_tool_with_progress", "arguments": {}}
ERAS = {
    "2026-07-28": [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**CALL, "_meta": META}}],
    "2025-11-25": [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "stdio-eof-check", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL},
    ],
}


def check(name: str, command: list[str], era: str, frames: list[dict]) -> str | None:
    """None when the call's answer came and the server exited 0; else what went wrong."""
    started = time.monotonic()
    text = "".join(json.dumps(f) + "\n" for f in frames)
    try:
        done = subprocess.run(command, input=text.encode(), capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return f"{name} ({era}): did not exit within 20 s after its stdin closed"
    took = time.monotonic() - started
    answers = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
    answer = next((m for m in answers if m.get("id") == 1), None)
    if answer is None:
        stderr = done.stderr.decode(errors="replace")[-2000:]
        return f"{name} ({era}): no answer to the request in flight at end of input; stdout {answers}; stderr: {stderr}"
    text_out = answer.get("result", {}).get("content", [{}])[0].get("text")
    if text_out != "Progress tool completed":
        return f"{name} ({era}): answered {answer}"
    if done.returncode != 0:
        return f"{name} ({era}): answered, then exited {done.returncode}"
    print(f"stdio end of input: {name} ({era}): answered and exited 0 in {took:.2f} s")
    return None


def main() -> int:
    failures = []
    for spec in sys.argv[1:]:
        name, _, command = spec.partition("=")
        for era, frames in ERAS.items():
            failure = check(name, command.split(), era, frames)
            if failure:
                failures.append(failure)
    for failure in failures:
        print(f"stdio end of input: FAILED {failure}", file=sys.stderr)
    return 1 if failures or len(sys.argv) < 2 else 0


if __name__ == "__main__":
    sys.exit(main())
