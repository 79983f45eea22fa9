#!/usr/bin/env bash
# Drives examples/mhd_server.c (the endpoint mounted in libmicrohttpd) with curl: a modern
# tools/call answered as an SSE stream (progress, then the result), a legacy session opened
# and used, and a path the host does not route (404).
#   bindings-c/tests/mhd_smoke.sh target/c-examples/mhd_server
set -euo pipefail
bin="$1"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" 127.0.0.1 "$port" 2>/dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null' EXIT
url="http://127.0.0.1:$port/mcp"
for _ in $(seq 100); do curl -s -o /dev/null "$url" && break; sleep 0.05; done
fail() { echo "mhd_smoke: $1" >&2; exit 1; }
meta='"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
out=$(curl -sS --max-time 10 "$url" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: forecast' \
  -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"forecast\",\"arguments\":{},$meta}}")
grep -q 'notifications/progress' <<<"$out" || fail "no progress event in: $out"
grep -q '"text":"Sunny"' <<<"$out" || fail "no result in: $out"
head=$(curl -sS --max-time 10 -D - -o /dev/null "$url" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}')
sid=$(tr -d '\r' <<<"$head" | sed -n 's/^mcp-session-id: //Ip')
[ -n "$sid" ] || fail "initialize opened no session: $head"
out=$(curl -sS --max-time 10 "$url" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
grep -q '"name":"forecast"' <<<"$out" || fail "tools/list in the session: $out"
status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$port/elsewhere")
[ "$status" = 404 ] || fail "an unrouted path got $status"
echo "mhd_smoke: ok (SSE tools/call, a legacy session, an unrouted path)"
