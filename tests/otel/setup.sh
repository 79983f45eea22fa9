#!/usr/bin/env bash
# The test collector's venv (tests/otel/.venv): the pinned opentelemetry-proto and protobuf of
# requirements.txt. Prints the venv's python. Idempotent: a venv whose pins match is reused.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$stamp"; then
    rm -rf "$venv"
    "${PYTHON:-python3}" -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
    cp "$here/requirements.txt" "$stamp"
fi
echo "$venv/bin/python"
