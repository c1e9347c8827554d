#!/usr/bin/env bash
# The main job: instruments the bundled OpenMP Jacobi solver (examples/jacobi/jacobi.c) with the
# real opari2, builds it against pomptrace, runs it on 4 threads and prints a per-region summary
# read from the trace it wrote. Installs what it needs when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
cargo build --release --quiet

lib="$PWD/target/release"
build="$PWD/build/jacobi"
rm -rf "$build"
mkdir -p "$build"
cp examples/jacobi/jacobi.c "$build/"
(cd "$build" && opari2 jacobi.c jacobi.mod.c)                         # instrument
cc -O2 -fopenmp -Iinclude -c "$build/jacobi.mod.c" -o "$build/jacobi.o"   # compile against our headers
"$lib/pomptrace" init-regions -o "$build/pomp2_init.c" "$build/jacobi.o"  # region init file
cc -c "$build/pomp2_init.c" -o "$build/pomp2_init.o"
cc -fopenmp "$build/jacobi.o" "$build/pomp2_init.o" -L"$lib" -lpomptrace -Wl,-rpath,"$lib" -lm -o "$build/jacobi"

echo "== running the instrumented solver on 4 threads"
OMP_NUM_THREADS=4 POMPTRACE_EXPERIMENT_DIRECTORY="$build/trace" "$build/jacobi" "$@"
echo
echo "== what the trace says"
"$lib/pomptrace" summary "$build/trace/traces.otf2"
"$lib/pomptrace" view "$build/trace/traces.otf2" -o "$build/trace/traces.html"
echo
echo "Trace: $build/trace/traces.otf2 (open it with Vampir, or: otf2-print $build/trace/traces.otf2)"
echo "Timeline and profile: $build/trace/traces.html (open it in a browser)"
