"""The protocol types (mcpaxle.types, generated from spec/2026-07-28/schema.json by
scripts/gen_types.py): the runtime checker the client tests use (tests/conforms.py) tells a
value that is not of its type, and examples/typed_client.py (type-checked by mypy --strict in
scripts/test.sh) runs against the notes server. That the client's results are of their types,
in both eras, is test_client.py's test_results_match_their_types."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conforms import mismatches
from mcpaxle import types as t

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_the_checker_tells_what_does_not_conform() -> None:
    ok: t.CallToolResult = {"content": [{"type": "text", "text": "hi"}], "isError": False}
    assert mismatches(ok, t.CallToolResult) == []
    # Members the schema does not name are kept at run time and do not count.
    assert mismatches({**ok, "x-extra": 1}, t.CallToolResult) == []
    assert mismatches({"isError": False}, t.CallToolResult) == ["$: CallToolResult requires 'content', missing from ['isError']"]
    assert mismatches({"content": [{"type": "text"}]}, t.CallToolResult) != []
    assert mismatches({"content": [{"type": "video", "text": "x"}]}, t.CallToolResult) != []
    assert mismatches({"content": [], "isError": "no"}, t.CallToolResult) == ["$.isError: 'no' is not a bool"]
    assert mismatches([{"name": "a", "inputSchema": {"type": "array"}}], list[t.Tool]) != []
    assert mismatches({"method": "notifications/tools/list_changed", "jsonrpc": "2.0"}, t.ServerNotification) == []
    assert mismatches({"method": "notifications/nope", "jsonrpc": "2.0"}, t.ServerNotification) != []


def test_stamped_members_are_not_required() -> None:
    """What the server stamps on results, and legacy servers never send, is NotRequired."""
    assert mismatches({"tools": []}, t.ListToolsResult) == []
    assert mismatches({"contents": []}, t.ReadResourceResult) == []
    assert mismatches({"resultType": "complete"}, t.ListToolsResult) == ["$: ListToolsResult requires 'tools', missing from ['resultType']"]
    assert mismatches({"tools": [], "ttlMs": "soon"}, t.ListToolsResult) == ["$.ttlMs: 'soon' is not a int"]


def test_typed_client_example_runs() -> None:
    arguments = json.dumps({"title": "Milk", "body": "2 l", "tags": ["shopping"]})
    r = subprocess.run(
        [sys.executable, str(EXAMPLES / "typed_client.py"), "--call", "add_note", arguments, "--",
         sys.executable, str(EXAMPLES / "notes_server.py"), "--stdio"],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("server ") and "(modern, 2026-07-28)" in lines[0]
    assert "tool add_note(body, tags?, title)" in lines, lines
    assert "resource notes://index application/json" in lines, lines
    assert "template note://{id}" in lines, lines
    assert "prompt review_note(id)" in lines, lines
    assert lines[-1] == '{"id":1,"title":"Milk"}', lines
