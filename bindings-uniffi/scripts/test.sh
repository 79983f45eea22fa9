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

"$CARGO" build --release -p mcpaxle-uniffi
"$CARGO" build --release -p mcpaxle --examples
bindings-uniffi/scripts/generate.sh --check

# The jar's copy of the library, without the debug info of the release profile (debug = 1).
native="$root/target/uniffi-jar"
mkdir -p "$native"
objcopy --strip-debug target/release/libmcpaxle_uniffi.so "$native/libmcpaxle_uniffi.so"

# README's Kotlin quick start, compiled with the tests (it needs a server with a `greet` tool
# to run, so it is only compiled).
mkdir -p bindings-uniffi/kotlin/target/quickstart
python3 - <<'PY'
import re
readme = open("README.md").read()
section = readme.split("## Kotlin quick start", 1)[1]
block = re.search(r"```kotlin\n(.*?)```", section, re.S).group(1)
open("bindings-uniffi/kotlin/target/quickstart/QuickStart.kt", "w").write(block)
PY

cd bindings-uniffi/kotlin
mvn -B -q -Dnative.dir="$native" package
cd "$root"
tests/conformance/client_all.sh "bindings-uniffi/kotlin/everything_client.sh" kotlin
