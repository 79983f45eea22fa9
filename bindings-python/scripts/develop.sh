#!/usr/bin/env bash
# Builds the Python package into a development venv: bindings-python/.venv (created or reused;
# PYTHON picks the interpreter, default python3) with the pinned tools of
# requirements-dev.txt, and the extension built with `maturin develop --release`. Cargo builds
# into the workspace's target/ (no second copy of the core); a run with nothing changed is
# quick.
#
#   bash bindings-python/scripts/develop.sh        # then: bindings-python/.venv/bin/python
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
venv="$here/.venv"
py="$venv/bin/python"

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
