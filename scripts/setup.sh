#!/usr/bin/env bash
# Installs what pomptrace needs on a Debian machine, only where it is missing:
#   - Debian packages: the OPARI2 instrumenter, the OTF2 reference reader (otf2-print, python3-otf2),
#     the OTF2 C library (speed and byte-identity baseline), compilers with OpenMP, pkg-config,
#     chromium (headless: the tests render the HTML of `pomptrace view` in it),
#     cmake (a test builds a CMake project through the compiler wrapper), Open MPI (MPI tests);
#   - a Rust toolchain (rustup's, or Debian's cargo as a last resort).
# Safe to run again: it does nothing when everything is there.
set -euo pipefail

packages=(opari2 otf2-tools python3-otf2 libopen-trace-format2-dev gcc g++ gfortran make pkg-config chromium cmake openmpi-bin libopenmpi-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "pomptrace setup: need root (or sudo) to run: $*" >&2; exit 1
    fi
}

if [ ${#missing[@]} -gt 0 ]; then
    echo "pomptrace setup: installing Debian packages: ${missing[*]}" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        echo "pomptrace setup: add \$HOME/.cargo/bin to PATH (using it for now)" >&2
    else
        echo "pomptrace setup: no cargo found; installing Debian's cargo" >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cargo rustc >/dev/null
    fi
fi
