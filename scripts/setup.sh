#!/usr/bin/env bash
# Installs what pomptrace needs on a Debian machine, only where it is missing:
#   - Debian packages: the OPARI2 instrumenter, the OTF2 reference reader (otf2-print, python3-otf2),
#     pip and numpy for the CUBE reference reader,
#     the OTF2 C library (speed and byte-identity baseline), compilers with OpenMP, pkg-config,
#     chromium (headless: the tests render the HTML of `pomptrace view` in it),
#     cmake (a test builds a CMake project through the compiler wrapper), Open MPI (MPI tests);
#   - pycubexr (PyPI), the CUBE4 reference reader, for /usr/bin/python3;
#   - a Rust toolchain (rustup's, or Debian's cargo as a last resort).
# Safe to run again: it does nothing when everything is there.
set -euo pipefail

packages=(opari2 otf2-tools python3-otf2 python3-pip python3-numpy libopen-trace-format2-dev gcc g++ gfortran make pkg-config chromium cmake openmpi-bin libopenmpi-dev)
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

# The tests run pycubexr with /usr/bin/python3, the interpreter python3-otf2 belongs to. Debian
# has no package of it: pip puts it in /usr/local as root and, not being able to write there,
# in ~/.local as a user; /usr/bin/python3 finds it in both. numpy comes from Debian above.
if ! /usr/bin/python3 -c 'import pycubexr' 2>/dev/null; then
    echo "pomptrace setup: installing pycubexr (PyPI) for /usr/bin/python3" >&2
    PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore /usr/bin/python3 -m pip install --quiet --disable-pip-version-check \
        --no-warn-script-location 'pycubexr==2.1.1'
fi

if ! command -v cargo >/dev/null; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        echo "pomptrace setup: add \$HOME/.cargo/bin to PATH (using it for now)" >&2
    else
        echo "pomptrace setup: no cargo found; installing Debian's cargo" >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cargo rustc >/dev/null
    fi
fi
