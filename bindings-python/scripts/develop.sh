#!/usr/bin/env bash
# Builds the Python package into a development venv: bindings-python/.venv (created or reused;
# PYTHON picks the interpreter, default python3) with the pinned tools of
# requirements-dev.txt, and the release wheel of dist/ installed into it. The wheel is
# packaging/python/build.sh's (`maturin build --release`, the one `make dist` ships), so the
# tests run against the artifact users get and the extension is built once. Cargo builds into
# the workspace's target/ (no second copy of the core); a run with nothing changed is quick.
# After editing python/mcpaxle, run it again (the venv holds a copy, not the work tree).
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

bash "$here/../packaging/python/build.sh"
version="$(python3 "$here/../packaging/check_versions.py")"
echo "== python: installing the wheel into $venv"
"$py" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall \
  "$here"/../dist/mcpaxle-"$version"-cp310-abi3-*.whl
