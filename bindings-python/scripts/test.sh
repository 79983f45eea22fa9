#!/usr/bin/env bash
# Tests the Python package: venv with the pinned dev tools, the extension built into the
# workspace's target/ and installed into the venv, the stub drift check, the pytest suite, and
# the official conformance suite (both protocol eras against one server process, and the client
# scenarios that need no authorization against examples/everything_client.py).
#
#   bash bindings-python/scripts/test.sh            # everything
#   MCPAXLE_PY_SKIP_CONFORMANCE=1 bash bindings-python/scripts/test.sh
#
# The venv is bindings-python/.venv (created or reused; PYTHON picks the interpreter, default
# python3). The extension is built with `maturin develop --release`: cargo builds into the
# workspace's target/ (no second copy of the core), and a run with nothing changed is quick.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
venv="$here/.venv"
py="$venv/bin/python"
cd "$root"

if [ ! -x "$py" ]; then
  echo "== python: creating $venv"
  "${PYTHON:-python3}" -m venv "$venv"
fi

stamp="$venv/.requirements-dev.sha256"
want="$(sha256sum "$here/requirements-dev.txt" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "== python: installing the pinned dev requirements"
  "$py" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-dev.txt"
  echo "$want" > "$stamp"
fi

echo "== python: building the extension (maturin develop --release)"
(cd "$here" && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop --release --quiet)

echo "== python: stub drift check"
"$py" "$here/scripts/check_stubs.py"

echo "== python: pytest"
"$py" -m pytest "$here/tests" -q -p no:cacheprovider

if [ "${MCPAXLE_PY_SKIP_CONFORMANCE:-}" != "1" ]; then
  echo "== python: conformance (2026-07-28 and 2025-11-25 against one process)"
  tests/conformance/server_both_eras.sh "$py $here/examples/everything_server.py --http 127.0.0.1:{port}" python
  echo "== python: conformance client scenarios (no authorization, both eras)"
  tests/conformance/client_no_auth.sh "$py $here/examples/everything_client.py" python
fi
echo "python: all passed"
