//! Shared by the examples that build C programs against this build's library.

use std::path::{Path, PathBuf};

/// The library of this build: `target/<profile>/deps/` holds the freshly built one (the copy one
/// level up is only refreshed by `cargo build`), so the newer of the two.
pub fn library_dir() -> PathBuf {
    // target/<profile>/examples/<name> → target/<profile>
    let exe = std::env::current_exe().expect("current_exe");
    let top = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf();
    let deps = top.join("deps");
    let modified = |dir: &Path| {
        std::fs::metadata(dir.join("libpomptrace.so"))
            .and_then(|m| m.modified())
            .ok()
    };
    match (modified(&deps), modified(&top)) {
        (Some(d), Some(t)) if t > d => top,
        (Some(_), _) => deps,
        (None, Some(_)) => top,
        (None, None) => panic!(
            "no libpomptrace.so in {}: build the library first",
            top.display()
        ),
    }
}
