//! pomptrace: a POMP2 measurement library that writes OTF2 traces.
//!
//! Rooms, with arrows pointing down only: `ffi` (every exported C symbol) → `measure` (the
//! runtime) → `ctc` (CTC strings), `filter` (filter files) and `otf2` (the OTF2 writer and reader, which knows nothing of
//! POMP2 and could be its own crate). `openmp` reaches the OpenMP runtime for `measure`.

pub mod ctc;
pub mod ffi;
pub mod filter;
pub mod measure;
pub mod openmp;

/// A unit test's directory, `<name>-<pid>` in the system's temporary directory (created).
#[cfg(test)]
pub(crate) fn test_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
