# mcpaxle: the README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help
CARGO ?= cargo
PYTHON ?= python3
export CARGO_TERM_COLOR ?= never

CONFORMANCE := $(PYTHON) tests/conformance/run.py

.PHONY: help demo test test-stdio-eof test-fleet test-demo test-rust test-servers conformance conformance-server conformance-client lint bench soak fuzz c test-c test-python test-node test-kotlin dist test-dist symbol-order

help:
	@echo "make demo   build and run the demo servers (Rust, Python), exercised end to end"
	@echo "make test   install what the tests need and run every test"
	@echo "make dist   the release artifacts under dist/: Python wheel and sdist, npm tarballs, C bundle and .deb"
	@echo "make bench  run the benchmarks"
	@echo "make soak   1,000,000 tools/call per server (Rust, Python), fails unless RSS stays flat"
	@echo "make fuzz   run each fuzz target for FUZZ_SECONDS (default 60), report executions and crashes"
	@echo "make symbol-order   profile the servers again for packaging/symbol-order.txt (when make dist says it is stale)"

# The servers the tests drive: the core's examples (everything_server, everything_client,
# notes_server) and the OAuth fixture (target/debug/oauth_server), unoptimized. They come from
# the debug build test-rust's `cargo test --workspace --all-targets` needs anyway, with the same
# features (nothing is compiled twice, and the test run finds them built). In release each
# binary was a thin-LTO pass over every dependency: 11-12 of make test's minutes on two cores,
# for tests that check behaviour, not speed (make bench and make demo build their own release
# servers). The bindings' test scripts build them through this target.
SERVERS := target/debug
EVERYTHING := $(SERVERS)/examples/everything_server
test-servers:
	$(CARGO) build --workspace --examples --bins

PY_VENV := bindings-python/.venv/bin/python

# The Rust notes server, then its Python port on the Python package (built into the venv of
# bindings-python/scripts/develop.sh), each driven end to end by scripts/demo.py.
demo:
	$(CARGO) build --release -p mcpaxle --example notes_server
	$(PYTHON) scripts/demo.py
	bash bindings-python/scripts/develop.sh
	$(PYTHON) scripts/demo.py --server "$(PY_VENV) bindings-python/examples/notes_server.py"

# Each part in turn, with the time it took (the parts' own dependencies are built once: cargo,
# npm and pip are quick when nothing changed).
TEST_PARTS := lint test-rust conformance test-demo test-c test-python test-node test-kotlin test-stdio-eof test-fleet test-dist
test:
	@start=$$(date +%s); for part in $(TEST_PARTS); do \
	  t=$$(date +%s); $(MAKE) --no-print-directory $$part || { echo "make test: $$part failed after $$(( $$(date +%s) - t )) s"; exit 1; }; \
	  echo "== make $$part: $$(( $$(date +%s) - t )) s"; times="$$times $$part=$$(( $$(date +%s) - t ))s"; \
	done; echo "make test: all passed in $$(( $$(date +%s) - start )) s:$$times"

# The client tests spawn the everything_server example the conformance runs use
# (MCPAXLE_EVERYTHING_SERVER, core/tests/client_common).
test-rust: test-servers
	MCPAXLE_EVERYTHING_SERVER=$(CURDIR)/$(EVERYTHING) $(CARGO) test --workspace --all-targets
	$(CARGO) test --workspace --doc

conformance: conformance-server conformance-client

# What `make demo` shows must keep working: the demo against the Rust notes server (the
# Python one runs in test-python), its transcript printed only when it fails.
test-demo: test-servers
	bash scripts/demo-check.sh $(SERVERS)/examples/notes_server


# Both eras against one running process: the server is dual-era; the 2026-07-28 run also has
# the ten tasks-* scenarios of the Tasks extension (@extension).
conformance-server: test-servers
	tests/conformance/server_both_eras.sh "$(EVERYTHING) --http 127.0.0.1:{port}" rust --extra @extension

# No import cycles between the core's files but the schema's own mirror of schema.ts
# (scripts/module_cycles.py; ARCHITECTURE.md says which layer may use which); one release build
# of the core shared by every package that links it (scripts/shared_build.py).
lint:
	$(PYTHON) packaging/check_versions.py
	$(PYTHON) scripts/shared_build.py
	$(PYTHON) scripts/test_module_cycles.py
	$(PYTHON) scripts/module_cycles.py core
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) fmt --all -- --check
	cd fuzz && $(CARGO) fmt -- --check

bench: c
	$(CARGO) build --release -p mcpaxle-bench --bins
	$(CARGO) build --release -p mcpaxle-bench-rmcp --features rmcp
	bash bindings-node/scripts/build.sh
	bash bindings-python/scripts/develop.sh
	cd bench && (test -d node_modules || npm ci --no-audit --no-fund)
	$(PYTHON) bench/run.py --no-build

# 1,000,000 tools/call over keep-alive per server, RSS sampled every 100,000 (bench/soak.py,
# bench/README.md); SOAK_SERVERS=rust skips the Python package build. A benchmark, not a test.
SOAK_SERVERS ?= rust python
soak:
	$(CARGO) build --release -p mcpaxle-bench --bins
	$(if $(filter python,$(SOAK_SERVERS)),bash bindings-python/scripts/develop.sh)
	$(PYTHON) bench/soak.py --no-build $(addprefix --server ,$(SOAK_SERVERS))

# The cargo-fuzz targets (fuzz/README.md), one after the other, FUZZ_SECONDS each (FUZZ_TARGETS:
# a subset). Not part of `make test`: it needs nightly (or RUSTC_BOOTSTRAP) and time.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash fuzz/run.sh $(FUZZ_TARGETS)

conformance-client: test-servers
	tests/conformance/client_all.sh "$(SERVERS)/examples/everything_client" rust

# The C ABI: libmcpaxle (shared and static), include/mcpaxle.h, mcpaxle.pc and the CMake
# package under target/c-prefix, and the C examples under target/c-examples (the system
# packages they and the C tests need first: valgrind, libmicrohttpd).
c:
	bindings-c/scripts/install-deps.sh
	bindings-c/build.sh

# The header must match the sources; the C tests run under valgrind; the C examples pass the
# conformance suite as a server (both eras, one process) and as a client; the endpoint
# mounted in libmicrohttpd (examples/mhd_server.c) passes the server sets too.
test-c: c
	bindings-c/build.sh check-header
	bindings-c/tests/run.sh
	bindings-c/tests/mhd_smoke.sh target/c-examples/mhd_server
	tests/conformance/server_both_eras.sh "target/c-examples/mhd_server 127.0.0.1 {port} --everything" c-mhd
	tests/conformance/server_both_eras.sh "target/c-examples/everything_server --http 127.0.0.1:{port}" c --extra @extension
	tests/conformance/client_all.sh "target/c-examples/everything_client" c

# `echo REQUEST | server` in every language: a request in flight when stdin closes still
# answers (within the drain deadline), then the server exits 0, in both eras. The builds are
# those of test-c, test-python and test-node (quick when nothing changed).
test-stdio-eof: test-servers c
	bash bindings-python/scripts/develop.sh
	bash bindings-node/scripts/build.sh
	$(PYTHON) tests/stdio_end_of_input.py "rust=$(EVERYTHING) --stdio" \
		"c=target/c-examples/everything_server --stdio" \
		"python=$(PY_VENV) bindings-python/examples/everything_server.py --stdio" \
		"node=node bindings-node/examples/everything_server.mjs --stdio"

# A fleet (docs/deployment.md): redis-server and nginx, pinned Debian packages installed by
# scripts/debian-tool.sh, in front of the Rust, Python and C everything servers; conformance
# through nginx, changes across instances, one instance killed under load.
test-fleet: test-servers c
	bash bindings-python/scripts/develop.sh
	$(PY_VENV) tests/fleet/run.py "$(EVERYTHING)" \
		"$(PY_VENV) bindings-python/examples/everything_server.py" \
		"target/c-examples/everything_server"

# The Python package: a venv under bindings-python/.venv with pinned tools, the extension
# built into the workspace target/ as the release wheel of dist/ and installed there
# (maturin build --release, packaging/python/build.sh), the stub drift check, the
# pytest suite, and the Python everything_server against both conformance server sets, served
# by serve_http (in test.sh) and by server.asgi_app() under uvicorn.
test-python:
	bash bindings-python/scripts/test.sh
	tests/conformance/server_both_eras.sh "$(PY_VENV) bindings-python/examples/everything_server.py --asgi 127.0.0.1:{port}" python-asgi --extra @extension

# The Node package: npm ci (pinned napi CLI), the .d.ts drift check, the napi build into the
# workspace target/, node --test, and the Node everything_client against the client scenarios.
test-node:
	bash bindings-node/scripts/test.sh

# Kotlin on the JVM through uniffi (bindings-uniffi/scripts/test.sh): the library in release from
# the workspace target/, the committed Kotlin and Swift sources checked against uniffi-bindgen's
# output, the jar (pinned pom, Maven Central; the native library inside), the JUnit tests (the
# client against the Rust everything_server and the OAuth fixture, the Kotlin server called by the
# Kotlin client, README's two quick starts), and the Kotlin everything client against the client
# scenarios.
# Swift is generated and drift-checked only (packaging/swift, built by the release workflow).
test-kotlin:
	bash bindings-uniffi/scripts/test.sh

# What the registries would serve (packaging/README.md), from the same release builds the tests
# use (test-python installs this wheel, test-c tests this prefix; nothing is built twice):
# dist/mcpaxle-VERSION-cp310-abi3-manylinux2014_x86_64...whl and the sdist, the npm tarballs
# (mcpaxle and mcpaxle-linux-x64-gnu), mcpaxle-VERSION-linux-x86_64.tar.gz and the .deb. One
# version for all: packaging/check_versions.py fails when a manifest or the header disagrees.
dist:
	$(PYTHON) packaging/check_versions.py
	bash bindings-python/scripts/develop.sh
	bash bindings-node/scripts/build.sh
	node packaging/node/pack.mjs
	bindings-c/build.sh
	bash packaging/c/bundle.sh
	$(PYTHON) packaging/check_symbol_order.py

# packaging/symbol-order.txt, the functions a server runs, which the release builds lay out
# together (packaging/symbol_order.py: callgrind over each binding's echo server). Run it when
# packaging/check_symbol_order.py (in make dist) says the file is stale, and commit the file.
symbol-order:
	bash bindings-python/scripts/develop.sh
	bindings-c/build.sh
	bash bindings-node/scripts/build.sh
	$(CARGO) build --release -p mcpaxle-bench --bin loadgen
	$(PYTHON) packaging/symbol_order.py
	bindings-c/build.sh
	bash bindings-node/scripts/build.sh
	bash bindings-python/scripts/develop.sh

# The artifacts install and work with no Rust toolchain (cargo and rustc off PATH), in fresh
# directories: the wheel in a new venv, the npm tarballs in an empty project, the C bundle
# unpacked anywhere; the README quick starts run as pasted; conformance on the installed
# Python server and Node client (packaging/test-dist.sh).
test-dist: dist
	$(PYTHON) packaging/test_packaging.py
	bash packaging/test-dist.sh
