#!/usr/bin/env bash
# make test-kotlin: the uniffi library and its generator in release (the same target/release as
# the other bindings' builds), the generated Kotlin and Swift checked for drift, the jar built
# with Maven (pinned pom; the native library stripped of debug info and placed in the jar under
# linux-x86-64/), the JUnit tests against the Rust everything_server, and the Kotlin everything
# client against the conformance client scenarios of both revisions.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
CARGO="${CARGO:-cargo}"
command -v java >/dev/null || { echo "test.sh: java (17) is needed: apt-get install openjdk-17-jdk-headless" >&2; exit 1; }
command -v mvn >/dev/null || { echo "test.sh: Maven is needed: apt-get install maven" >&2; exit 1; }

# Separate builds, not one: each resolves its own features, and the generator's (uniffi `cli`) must
# not reach the library's build (bindings-uniffi/bindgen/Cargo.toml says why). The generator is
# built unoptimized: on two cores 1m07s after make test's debug build (1m33s alone), against 3m14s
# in release, and it reads the library and writes the same sources in half a second.
"$CARGO" build --release -p mcpaxle-uniffi
make -s -C "$root" test-servers CARGO="$CARGO"
"$CARGO" build -p mcpaxle-uniffi-bindgen
bindings-uniffi/scripts/generate.sh --check

# The jar's copy of the library, without the line tables of the release profile.
native="$root/target/uniffi-jar"
mkdir -p "$native"
objcopy --strip-debug target/release/libmcpaxle_uniffi.so "$native/libmcpaxle_uniffi.so"

# README's Kotlin quick starts (the client's, then the server's), as they are printed, each in a
# package of its own with its URL or address read from a system property (ClientTest and
# ServerTest run them: the client against the everything_server, the server called by a client).
mkdir -p bindings-uniffi/kotlin/target/quickstart
python3 - <<'PY2'
import re, sys
readme = open("README.md").read()
section = readme.split("## Kotlin quick start", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"```kotlin\n(.*?)```", section, re.S)
if len(blocks) != 2:
    sys.exit(f"test.sh: README's Kotlin quick start must have two kotlin blocks (client, server), not {len(blocks)}")
for block, package, literal, prop in (
    (blocks[0], "quickstart", '"http://127.0.0.1:3000/mcp"', "mcpaxle.quickstartUrl"),
    (blocks[1], "quickstartserver", '"127.0.0.1:3000"', "mcpaxle.quickstartAddress"),
):
    if block.count(literal) != 1:
        sys.exit(f"test.sh: README's Kotlin {package} block must name the server as {literal}, once")
    block = block.replace(literal, f'System.getProperty("{prop}")')
    open(f"bindings-uniffi/kotlin/target/quickstart/{package}.kt", "w").write(f"package {package}\n\n" + block)
PY2

cd bindings-uniffi/kotlin
mvn -B -q -Dnative.dir="$native" package
cd "$root"
tests/conformance/client_all.sh "bindings-uniffi/kotlin/everything_client.sh" kotlin
