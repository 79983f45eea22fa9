#!/usr/bin/env bash
# Runs the Kotlin everything client (examples/mcpaxle/examples/EverythingClient.kt) on the JVM,
# from the packaged jar (the native library inside it, loaded by JNA) and the compiled examples:
# `mvn package` (bindings-uniffi/scripts/test.sh) first. Arguments go to the client.
here="$(cd "$(dirname "$0")" && pwd)"
exec java -cp "$here/target/mcpaxle-0.1.0.jar:$here/target/test-classes:$(cat "$here/target/classpath.txt")" \
  mcpaxle.examples.EverythingClientKt "$@"
