//! Shared by the examples that build C programs against this build's library: the library is
//! built first, so that a stale one can never be measured (`cargo run --example` rebuilds the
//! rlib the example links, but leaves the `.so` and `.a` in `target/<profile>/` as they were).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the library (cdylib and staticlib) in the profile and target directory this example
/// was built in, with the cargo that runs it, and returns the directory that holds
/// `libpomptrace.so` and `libpomptrace.a`.
///
/// With `POMPTRACE_BENCH_LIBRARY_DIR` set, that directory instead, as it is: another build's
/// library measured by this build's programs, side by side with this one.
pub fn fresh_library_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("POMPTRACE_BENCH_LIBRARY_DIR") {
        return PathBuf::from(dir);
    }
    // target/<profile>/examples/<name> → target/<profile>
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile> above the example")
        .to_path_buf();
    let target_dir = profile_dir.parent().expect("target dir");
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_string(),
        Some(name) => name.to_string(),
        None => panic!("no profile in {}", profile_dir.display()),
    };
    // `cargo run` passes its own path in CARGO; fall back to the one that built the example.
    let cargo = std::env::var_os("CARGO")
        .or_else(|| option_env!("CARGO").map(Into::into))
        .unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let status = Command::new(&cargo)
        .args([
            "build",
            "--lib",
            "--quiet",
            "--profile",
            &profile,
            "--manifest-path",
        ])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_dir)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", Path::new(&cargo).display()));
    assert!(status.success(), "building the library failed");
    for name in ["libpomptrace.so", "libpomptrace.a"] {
        assert!(
            profile_dir.join(name).is_file(),
            "no {name} in {} after building the library",
            profile_dir.display()
        );
    }
    profile_dir
}
