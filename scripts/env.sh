# Sourced by the scripts: puts rustup's cargo on PATH when the shell does not have it yet.
if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
