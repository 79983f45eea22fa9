#!/usr/bin/env bash
# The proof that dist/'s artifacts install and work on a machine with no Rust toolchain: every
# step runs with a PATH that holds no directory with cargo or rustc (an accidental source build
# fails loudly), in fresh directories under a temporary one.
#
#   Python  pip install the wheel into a new venv; the README's quick start (weather.py) driven by
#           the installed client over stdio; the conformance server set of 2026-07-28 against
#           examples/everything_server.py run by that venv.
#   Node    npm install the two tarballs into an empty project (no install script may run); the
#           README's quick starts as pasted, ES module and CommonJS; every conformance client
#           scenario (tests/conformance/client_all.sh) with examples/everything_client.mjs
#           importing the installed package.
#   C       unpack the bundle in a directory of its own; the README's server.c built with
#           pkg-config and with CMake (its CMakeLists.txt; and with the static library), each
#           run without LD_LIBRARY_PATH and driven by the Python client; the .deb's files,
#           unpacked, build it too.
#
# It prints the sizes, install times and import/require times it measured.
#
#   bash packaging/test-dist.sh            # after make dist
#   MCPAXLE_DIST_SKIP_CONFORMANCE=1 bash packaging/test-dist.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dist="$root/dist"
cd "$root"
version="$(python3 packaging/check_versions.py)"
wheel="$(ls "$dist"/mcpaxle-"$version"-cp310-abi3-manylinux*.whl)"
npm_main="$dist/mcpaxle-$version.tgz"
npm_platform="$dist/mcpaxle-linux-x64-gnu-$version.tgz"
bundle="$dist/mcpaxle-$version-linux-x86_64.tar.gz"
deb="$dist/libmcpaxle-dev_${version}_amd64.deb"
for f in "$wheel" "$npm_main" "$npm_platform" "$bundle"; do
  [ -f "$f" ] || { echo "test-dist: $f missing: run make dist" >&2; exit 1; }
done

# The licence and the changelog are in every artifact (the root files, byte for byte).
has() { # $1: artifact, $2: listing command, then the member paths
  local artifact="$1" list="$2"; shift 2
  local members; members="$($list "$artifact")"
  for m in "$@"; do
    grep -qx "$m" <<<"$members" || { echo "test-dist: $m missing from $(basename "$artifact")" >&2; exit 1; }
  done
}
zip_list() { python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$1"; }
tar_list() { tar -tzf "$1"; }
deb_list() { dpkg-deb --fsys-tarfile "$1" | tar -t; }
has "$wheel" zip_list "mcpaxle-$version.dist-info/licenses/LICENSE" mcpaxle/CHANGELOG.md
has "$dist/mcpaxle-$version.tar.gz" tar_list "mcpaxle-$version/LICENSE" "mcpaxle-$version/python/mcpaxle/CHANGELOG.md"
has "$npm_main" tar_list package/LICENSE package/CHANGELOG.md
has "$npm_platform" tar_list package/LICENSE package/CHANGELOG.md
has "$bundle" tar_list "mcpaxle-$version-linux-x86_64/share/doc/mcpaxle/LICENSE" "mcpaxle-$version-linux-x86_64/share/doc/mcpaxle/CHANGELOG.md"
[ ! -f "$deb" ] || has "$deb" deb_list ./usr/share/doc/libmcpaxle-dev/copyright ./usr/share/doc/libmcpaxle-dev/CHANGELOG.md
cmp -s <(tar -xzOf "$npm_main" package/LICENSE) LICENSE && cmp -s <(tar -xzOf "$npm_main" package/CHANGELOG.md) CHANGELOG.md \
  || { echo "test-dist: the npm package's LICENSE or CHANGELOG.md differs from the root one" >&2; exit 1; }
echo "== dist: LICENSE and CHANGELOG.md in every artifact"

# PATH without cargo and rustc.
PATH="$(python3 - <<'PY'
import os
keep = [d for d in os.environ["PATH"].split(os.pathsep)
        if d and not any(os.path.exists(os.path.join(d, tool)) for tool in ("cargo", "rustc"))]
print(os.pathsep.join(keep))
PY
)"
export PATH
unset LD_LIBRARY_PATH CARGO RUSTC
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  echo "test-dist: cargo or rustc still on PATH" >&2; exit 1
fi
echo "== dist: PATH holds no cargo and no rustc"

work="$(mktemp -d -t mcpaxle-dist.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
report=()
seconds() { # runs "$@", prints its wall time in seconds on fd 3
  local start end
  start="$(date +%s.%N)"
  "$@"
  end="$(date +%s.%N)"
  python3 -c "print(f'{$end - $start:.2f}')" >&3
}
size() { echo "$(( $(stat -c %s "$1") / 1024 )) KiB"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
python3 packaging/quickstarts.py "$work/quickstarts"

echo "== dist: Python wheel into a new venv"
python3 -m venv "$work/py/venv"
py="$work/py/venv/bin/python"
t="$(seconds "$py" -m pip install --quiet --no-index --disable-pip-version-check "$wheel" 3>&1 >/dev/null)"
report+=("python  $(basename "$wheel"): $(size "$wheel"); pip install ${t} s")
t="$(cd "$work/py" && "$py" -c 'import time; t = time.perf_counter(); import mcpaxle; print(f"{(time.perf_counter() - t) * 1000:.0f}")')"
report+=("python  import mcpaxle: ${t} ms")
cp "$work/quickstarts/weather.py" "$work/py/"
echo "== dist: Python quick start (README weather.py over stdio)"
(cd "$work/py" && "$py" "$root/packaging/tests/call_tool.py" stdio "$py weather.py" forecast '{"city": "Paris"}' '"celsius":21.5') \
  | tee "$work/py/call.log"
grep -q "mcpaxle from $work/py/venv/" "$work/py/call.log"
if [ "${MCPAXLE_DIST_SKIP_CONFORMANCE:-}" != "1" ]; then
  echo "== dist: conformance server 2026-07-28 against examples/everything_server.py on the wheel"
  cp bindings-python/examples/everything_server.py "$work/py/"
  port="$(free_port)"
  (cd "$work/py" && exec "$py" everything_server.py --http "127.0.0.1:$port") >"$work/py/server.log" 2>&1 &
  pids+=($!)
  python3 tests/conformance/run.py server --requirements 2026-07-28 --url "http://127.0.0.1:$port/mcp" --extra @pending \
    || { tail -n 40 "$work/py/server.log"; exit 1; }
fi

echo "== dist: npm tarballs into an empty project"
mkdir -p "$work/node"
echo '{"name": "dist-test", "version": "0.0.0", "private": true}' >"$work/node/package.json"
for tgz in "$npm_main" "$npm_platform"; do
  if tar -xzOf "$tgz" package/package.json | node -e '
    const s = JSON.parse(require("fs").readFileSync(0, "utf8")).scripts || {}
    process.exit(["preinstall", "install", "postinstall", "prepare"].some((k) => k in s) ? 0 : 1)'; then
    echo "test-dist: $(basename "$tgz") has an install script" >&2; exit 1
  fi
done
t="$(cd "$work/node" && seconds npm install --offline --no-audit --no-fund --loglevel=error "$npm_main" "$npm_platform" 3>&1 >/dev/null)"
report+=("node    $(basename "$npm_main"): $(size "$npm_main"), $(basename "$npm_platform"): $(size "$npm_platform"); npm install ${t} s")
t="$(cd "$work/node" && node -e 'const t = performance.now(); require("mcpaxle"); console.log((performance.now() - t).toFixed(0))')"
report+=("node    require('mcpaxle'): ${t} ms")
cp "$work/quickstarts/quickstart.mjs" "$work/quickstarts/quickstart.cjs" "$work/node/"
for q in quickstart.mjs quickstart.cjs; do
  echo "== dist: Node quick start $q (README, as pasted)"
  (cd "$work/node" && timeout 60 node "$q") | tee "$work/node/$q.log"
  grep -q "Sunny in Paris" "$work/node/$q.log"
done
grep -q "notifications/tools/list_changed" "$work/node/quickstart.mjs.log"
if [ "${MCPAXLE_DIST_SKIP_CONFORMANCE:-}" != "1" ]; then
  echo "== dist: conformance client scenarios with examples/everything_client.mjs on the installed package"
  sed -e "s#require('../index.js')#require('mcpaxle')#" -e "s#require('../package.json')#require('mcpaxle/package.json')#" \
    bindings-node/examples/everything_client.mjs >"$work/node/everything_client.mjs"
  if grep -n "\.\./" "$work/node/everything_client.mjs"; then
    echo "test-dist: everything_client.mjs still refers to the source tree" >&2; exit 1
  fi
  tests/conformance/client_all.sh "node $work/node/everything_client.mjs" node-dist
fi

echo "== dist: C bundle unpacked in a directory of its own"
mkdir -p "$work/c/opt" "$work/c/src"
t="$(seconds tar -xzf "$bundle" -C "$work/c/opt" 3>&1 >/dev/null)"
report+=("c       $(basename "$bundle"): $(size "$bundle"); unpack ${t} s")
prefix="$work/c/opt/mcpaxle-$version-linux-x86_64"
cp "$work/quickstarts/server.c" "$work/quickstarts/CMakeLists.txt" "$work/c/src/"
check_c_server() { # $1: the binary, $2: "static" when it must not load libmcpaxle.so
  local lib; lib="$(ldd "$1" | sed -n 's/.*libmcpaxle\.so => \(.*\) (0x.*/\1/p')"
  if [ "${2:-}" = static ]; then
    [ -z "$lib" ] || { ldd "$1"; echo "test-dist: $1 loads libmcpaxle.so" >&2; exit 1; }
  else
    [ -n "$lib" ] && [ "$(realpath "$lib")" = "$(realpath "$prefix/lib/libmcpaxle.so")" ] \
      || { ldd "$1"; echo "test-dist: $1 does not find libmcpaxle.so in the bundle" >&2; exit 1; }
  fi
  local port; port="$(free_port)"
  "$1" "127.0.0.1:$port" >"$1.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  "$py" "$root/packaging/tests/call_tool.py" http "http://127.0.0.1:$port/mcp" greet '{"name": "Ada"}' Ada \
    || { cat "$1.log"; exit 1; }
  kill "$pid"
}
echo "== dist: C quick start with pkg-config"
(cd "$work/c/src" && PKG_CONFIG_PATH="$prefix/lib/pkgconfig" && export PKG_CONFIG_PATH \
  && [ "$(pkg-config --modversion mcpaxle)" = "$version" ] \
  && cc -std=c11 -O2 server.c $(pkg-config --cflags --libs mcpaxle) -o server)
check_c_server "$work/c/src/server"
echo "== dist: C quick start with CMake (find_package(mcpaxle))"
cmake -S "$work/c/src" -B "$work/c/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/c/build" >/dev/null
check_c_server "$work/c/build/server"
echo "== dist: C quick start with CMake, linked with mcpaxle::mcpaxle_static"
mkdir -p "$work/c/src-static"
cp "$work/c/src/server.c" "$work/c/src-static/"
sed 's/PRIVATE mcpaxle::mcpaxle)/PRIVATE mcpaxle::mcpaxle_static)/' "$work/c/src/CMakeLists.txt" >"$work/c/src-static/CMakeLists.txt"
grep -q 'PRIVATE mcpaxle::mcpaxle_static)' "$work/c/src-static/CMakeLists.txt"
cmake -S "$work/c/src-static" -B "$work/c/build-static" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/c/build-static" >/dev/null
check_c_server "$work/c/build-static/server" static
if [ -f "$deb" ]; then
  echo "== dist: the .deb's files (dpkg-deb -x), server.c built against them"
  report+=("c       $(basename "$deb"): $(size "$deb")")
  dpkg-deb -x "$deb" "$work/deb"
  for f in usr/include/mcpaxle.h usr/lib/libmcpaxle.so usr/lib/libmcpaxle.a usr/lib/pkgconfig/mcpaxle.pc \
    usr/lib/cmake/mcpaxle/mcpaxleConfig.cmake usr/share/doc/libmcpaxle-dev/copyright; do
    [ -f "$work/deb/$f" ] || { echo "test-dist: $f missing from $(basename "$deb")" >&2; exit 1; }
  done
  (cd "$work/c/src" && cc -std=c11 server.c $(PKG_CONFIG_PATH="$work/deb/usr/lib/pkgconfig" pkg-config --cflags --libs mcpaxle) -o server-deb)
fi

echo "== dist: measured"
printf '  %s\n' "${report[@]}"
echo "dist: all passed"
