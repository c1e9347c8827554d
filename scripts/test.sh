#!/usr/bin/env bash
# Installs what the tests need (when missing) and runs every test: unit, integration (which
# drive the real otf2-print, python otf2 module, OTF2 C library and opari2), and the lints.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
# The runtime's rooms import each other without circles (fails fast, before the long tests).
cargo test --test module_graph
cargo test --workspace "$@"
