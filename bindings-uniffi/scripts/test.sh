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
# not reach the library's build (bindings-uniffi/bindgen/Cargo.toml says why).
"$CARGO" build --release -p mcpaxle-uniffi
"$CARGO" build --release -p mcpaxle --examples
"$CARGO" build --release -p mcpaxle-fixtures --bins
"$CARGO" build --release -p mcpaxle-uniffi-bindgen
bindings-uniffi/scripts/generate.sh --check

# The jar's copy of the library, without the debug info of the release profile (debug = 1).
native="$root/target/uniffi-jar"
mkdir -p "$native"
objcopy --strip-debug target/release/libmcpaxle_uniffi.so "$native/libmcpaxle_uniffi.so"

# README's Kotlin quick start, as it is printed, in a package of its own and with its URL read
# from a system property (ClientTest.readmeQuickStartRuns runs it against the everything_server).
mkdir -p bindings-uniffi/kotlin/target/quickstart
python3 - <<'PY2'
import re, sys
readme = open("README.md").read()
section = readme.split("## Kotlin quick start", 1)[1]
block = re.search(r"```kotlin\n(.*?)```", section, re.S).group(1)
url = '"http://127.0.0.1:3000/mcp"'
if block.count(url) != 1:
    sys.exit(f"test.sh: README's Kotlin quick start must name the server as {url}, once")
block = block.replace(url, 'System.getProperty("mcpaxle.quickstartUrl")')
open("bindings-uniffi/kotlin/target/quickstart/QuickStart.kt", "w").write("package quickstart\n\n" + block)
PY2

cd bindings-uniffi/kotlin
mvn -B -q -Dnative.dir="$native" package
cd "$root"
tests/conformance/client_all.sh "bindings-uniffi/kotlin/everything_client.sh" kotlin
