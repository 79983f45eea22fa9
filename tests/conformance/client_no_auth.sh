#!/usr/bin/env bash
# Runs the conformance client scenarios that need no authorization, both revisions, against
# one client command (the suite appends the mock server's URL):
#   tests/conformance/client_no_auth.sh "target/release/examples/everything_client" rust
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmd="$1"
label="${2:-client}"
echo "conformance ($label client): $cmd"
status=0
python3 "$here/run.py" client --requirements 2026-07-28 --cmd "$cmd" \
  --scenario tools_call --scenario request-metadata --scenario sep-2322-client-request-state \
  --scenario http-standard-headers --scenario http-custom-headers --scenario http-invalid-tool-headers \
  --scenario json-schema-ref-no-deref --extra json-schema-2020-12-preservation || status=1
python3 "$here/run.py" client --requirements 2025-11-25 --cmd "$cmd" \
  --scenario initialize --scenario tools_call --scenario elicitation-sep1034-client-defaults \
  --scenario sse-retry || status=1
exit $status
