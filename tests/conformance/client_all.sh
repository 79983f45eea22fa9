#!/usr/bin/env bash
# Runs every scored conformance client scenario of both revisions (authorization included)
# against one client command (the suite appends the mock server's URL), plus the unscored
# json-schema-2020-12-preservation and the client credentials scenarios of the extension
# io.modelcontextprotocol/oauth-client-credentials (client_secret_basic, private_key_jwt):
#   tests/conformance/client_all.sh "target/release/examples/everything_client" rust
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmd="$1"
label="${2:-client}"
echo "conformance ($label client, every scenario): $cmd"
status=0
python3 "$here/run.py" client --requirements 2026-07-28 --cmd "$cmd" --extra json-schema-2020-12-preservation \
  --extra auth/client-credentials-basic --extra auth/client-credentials-jwt || status=1
python3 "$here/run.py" client --requirements 2025-11-25 --cmd "$cmd" || status=1
exit $status
