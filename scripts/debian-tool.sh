#!/usr/bin/env bash
# Installs a Debian tool the tests start (redis-server, nginx), pinned, into
# target/tools/debian/TOOL of the repository: its packages are downloaded with `apt-get
# download` (no root needed, nothing installed system-wide, no service started) and unpacked
# with `dpkg-deb -x`. Prints the path of a wrapper that runs the tool with its unpacked
# libraries (target/tools/debian/bin/TOOL). Once installed, it is reused.
#
#   scripts/debian-tool.sh redis-server     -> .../target/tools/debian/bin/redis-server
#
# The pins are the Debian 12 (bookworm) versions; change them here, in one place. Debian's
# archive keeps only the newest security revision of a package: when a pin has been superseded
# (nginx 1.22.1-9+deb12u11 by ...u12), the newest revision of the same upstream version and
# Debian release (1.22.1-9+deb12u*) is taken instead, and said on stderr; never another upstream
# version.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
tool="${1:?usage: scripts/debian-tool.sh redis-server|nginx}"
case "$tool" in
    redis-server)
        dir=redis
        exe=usr/bin/redis-server
        packages=(redis-tools=5:7.0.15-1~deb12u10 redis-server=5:7.0.15-1~deb12u10 libjemalloc2=5.3.0-1 liblzf1=3.6-3)
        ;;
    nginx)
        dir=nginx
        exe=usr/sbin/nginx
        # nginx's own package only: its libraries (pcre2, ssl, zlib, crypt) are in every Debian.
        packages=(nginx=1.22.1-9+deb12u12)
        ;;
    *)
        echo "debian-tool.sh: unknown tool $tool (known: redis-server, nginx)" >&2
        exit 2
        ;;
esac
mkdir -p "$ROOT/target/tools/debian"
# Tests start several servers at once: one installation at a time, the others then reuse it.
exec 9>"$ROOT/target/tools/debian/.lock"
flock 9
dest="$ROOT/target/tools/debian/$dir"
wrapper="$ROOT/target/tools/debian/bin/$tool"
stamp="$dest/.pins"
want="${packages[*]}"
if [[ -x "$wrapper" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "$wrapper"
    exit 0
fi
debs="$ROOT/target/tools/debian/debs"
mkdir -p "$debs"
download() { (cd "$debs" && apt-get download -q "${packages[@]}") >&2; }
# NAME=VERSION, or the newest NAME=V the archive has where V is VERSION's upstream version and
# Debian release with another security revision (+debNNuM / ~debNNuM): the same software.
available() {
    local name="${1%%=*}" version="${1#*=}" base best="" v
    base="$(sed -E 's/([+~]deb[0-9]+u)[0-9]+$/\1/' <<<"$version")"
    if [[ "$base" == "$version" ]]; then
        echo "$1"
        return
    fi
    for v in $(apt-cache madison "$name" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}'); do
        [[ "$v" == "$base"* && "${v#"$base"}" =~ ^[0-9]+$ ]] || continue
        if [[ -z "$best" ]] || dpkg --compare-versions "$v" gt "$best"; then best="$v"; fi
    done
    if [[ -n "$best" && "$best" != "$version" ]]; then
        echo "debian-tool.sh: $1 is no longer in the archive; using $name=$best (same upstream version)" >&2
    fi
    echo "$name=${best:-$version}"
}
if ! download 2>/dev/null; then
    echo "debian-tool.sh: package lists are stale or missing; running apt-get update" >&2
    apt-get update -q >&2 || sudo -n apt-get update -q >&2
    if ! download 2>/dev/null; then
        resolved=()
        for p in "${packages[@]}"; do resolved+=("$(available "$p")"); done
        packages=("${resolved[@]}")
        download
    fi
fi
rm -rf "$dest"
mkdir -p "$dest"
for p in "${packages[@]}"; do
    name="${p%%=*}"
    version="${p#*=}"
    dpkg-deb -x "$debs/${name}_${version/:/%3a}_"*.deb "$dest"
done
mkdir -p "$(dirname "$wrapper")"
cat >"$wrapper" <<WRAPPER
#!/bin/sh
LD_LIBRARY_PATH="$dest/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$dest/$exe" "\$@"
WRAPPER
chmod +x "$wrapper"
echo "$want" >"$stamp"
echo "$wrapper"
