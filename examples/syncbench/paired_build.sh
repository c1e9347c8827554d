#!/usr/bin/env bash
# Prepares a directory for paired_libraries.py: the syncbench program built as users build it,
# and the libpomptrace.so of every build to compare, so that the comparison can run on another
# machine (copy the directory; python3 is all it needs there).
#
#   examples/syncbench/paired_build.sh DIR [NAME=COMMIT ...]
#
#   DIR/sb          syncbench.c through plain `opari2` and `pomptrace init-regions`, as
#                   README.md's build by hand (no pomp_tpd channel), as the syncbench example
#   DIR/sb_tpd      syncbench.c built by `pomptrace gcc -O2 -fopenmp` (opari2 --omp-tpd)
#   DIR/today       this tree's release library
#   DIR/NAME        the release library of COMMIT, built in a git worktree of its own under
#                   ~/.cache/pomptrace-paired/ (outside this workspace, which cargo would
#                   otherwise take it to belong to)
#   DIR/gomp        the libgomp the programs were linked against
#
# The libraries lose their debug information (strip --strip-debug), the size of what is copied.
# Then, for example (every construct at 2 threads against COMMIT named base):
#
#   python3 examples/syncbench/paired_libraries.py --dir DIR --out /tmp/paired --threads 2 \
#       --target-ms 300 --seconds 1200 --rounds 100 --config off=sb:today:POMPTRACE_ENABLE=0 \
#       --config base=sb:base --config today=sb:today
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 DIR [NAME=COMMIT ...]" >&2
    exit 2
fi
dir=$(realpath -m "$1")
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

library_into() { # the release libpomptrace.so of the tree in $1 into $2
    mkdir -p "$2"
    cp "$1/target/release/libpomptrace.so" "$2/"
    strip --strip-debug "$2/libpomptrace.so"
}

mkdir -p "$dir"
names=today
cargo build --release --quiet -p pomptrace -p pomptrace-cli
library_into "$root" "$dir/today"

for pair in "$@"; do
    name=${pair%%=*}
    commit=${pair#*=}
    if [ "$name" = "$pair" ] || [ -z "$name" ] || [ -z "$commit" ]; then
        echo "bad build \`$pair\` (NAME=COMMIT)" >&2
        exit 2
    fi
    tree="${XDG_CACHE_HOME:-$HOME/.cache}/pomptrace-paired/$(git rev-parse --short "$commit^{commit}")"
    [ -d "$tree" ] || git worktree add --quiet --detach "$tree" "$commit"
    (cd "$tree" && cargo build --release --quiet --lib)
    library_into "$tree" "$dir/$name"
    names="$names, $name"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp examples/syncbench/syncbench.c examples/syncbench/floor_records.h "$work/"
pomptrace=target/release/pomptrace
"$pomptrace" gcc -O2 -fopenmp "$work/syncbench.c" -o "$dir/sb_tpd" -lm
(
    cd "$work"
    opari2 syncbench.c syncbench.mod.c
    cc -O2 -fopenmp $("$root/$pomptrace" config --cflags) -c syncbench.mod.c -o syncbench.o
    "$root/$pomptrace" init-regions -o pomp2_init.c syncbench.o
    cc -c pomp2_init.c -o pomp2_init.o
    cc -fopenmp syncbench.o pomp2_init.o $("$root/$pomptrace" config --libs) -lm \
        -o "$dir/sb"
)
mkdir -p "$dir/gomp"
cp "$(cc -print-file-name=libgomp.so.1)" "$dir/gomp/"
echo "paired_build: $dir holds sb, sb_tpd, gomp and the libraries $names"
