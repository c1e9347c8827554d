#!/usr/bin/env bash
# The main job: writes a small OpenMP-shaped OTF2 trace with pomptrace's writer and shows it with
# the reference reader (otf2-print). Installs what it needs when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
out=${1:-pomptrace-demo}
rm -rf "$out"
cargo run --quiet --release --example otf2_demo -- "$out"
echo
otf2-print "$out/traces.otf2"
