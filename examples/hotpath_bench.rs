//! Cost of recording one event on the hot path, against the floor: a bare TSC read.
//!
//! Builds `c-tests/hotpath_driver.c` against this build's `libpomptrace.so`, which times
//! POMP2 enter+exit pairs (one Enter and one Leave event each) and bare `rdtsc` reads in the
//! same process, best of 5 rounds. The last line is
//! `hotpath: event X ns, tsc Y ns, ratio X/Y = R` with X the cost per event (half a pair).
//!
//! Run: `cargo run --release --example hotpath_bench [PAIRS]`

#[path = "common/library_dir.rs"]
mod library_dir;
use library_dir::library_dir;

use std::path::Path;
use std::process::Command;

fn main() {
    let pairs: u64 = std::env::args()
        .nth(1)
        .map_or(2_000_000, |a| a.parse().expect("PAIRS"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = library_dir();
    let work = std::env::temp_dir().join(format!("pomptrace-hotpath-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work dir");
    let exe = work.join("hotpath_driver");
    let status = Command::new("cc")
        .args(["-O2", "-I"])
        .arg(root.join("include"))
        .arg(root.join("c-tests/hotpath_driver.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg("-lpomptrace")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .status()
        .expect("run cc");
    assert!(status.success(), "building the driver failed");
    let out = Command::new(&exe)
        .arg(pairs.to_string())
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", work.join("trace"))
        .output()
        .expect("run driver");
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        out.status.success(),
        "driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |key: &str| -> f64 {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in driver output: {text}"))
    };
    let (pair, tsc) = (field("pair_ns="), field("tsc_ns="));
    let event = pair / 2.0;
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    println!("enter+exit pair {pair:.2} ns ({pairs} pairs, best of 5 rounds)");
    println!(
        "hotpath: event {event:.2} ns, tsc {tsc:.2} ns, ratio X/Y = {:.2}",
        event / tsc
    );
}
