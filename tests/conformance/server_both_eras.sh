#!/usr/bin/env bash
# Runs the 2026-07-28 and the 2025-11-25 server sets against ONE running server process: a
# dual-era server must pass both on the same endpoint at the same time.
#   tests/conformance/server_both_eras.sh "target/release/examples/everything_server --http 127.0.0.1:{port}" [label] [run.py options...]
# Options after the label go to the 2026-07-28 run, e.g. `--extra @extension` for the ten
# tasks-* scenarios of the Tasks extension, against the same process as the rest.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
template="$1"
label="${2:-server}"
shift $(( $# < 2 ? $# : 2 ))
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cmd="${template//\{port\}/$port}"
log="$(mktemp -t conformance-server.XXXXXX)"
echo "conformance ($label): starting $cmd"
# shellcheck disable=SC2086
$cmd >"$log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; sleep 0.3; kill -9 "$pid" 2>/dev/null; rm -f "$log"; }
trap cleanup EXIT
url="http://127.0.0.1:$port/mcp"
status=0
python3 "$here/run.py" server --requirements 2026-07-28 --url "$url" --extra @pending "$@" || status=1
python3 "$here/run.py" server --requirements 2025-11-25 --url "$url" \
  --extra json-schema-2020-12 --extra server-session-lifecycle --extra server-sse-polling || status=1
if ! kill -0 "$pid" 2>/dev/null; then
  echo "conformance ($label): the server died during the run; its output:"; tail -n 40 "$log"
  status=1
fi
exit $status
