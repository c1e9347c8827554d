//! Cost of recording one event on the hot path, against the floor: a bare TSC read.
//!
//! Builds `c-tests/hotpath_driver.c` against this build's `libpomptrace.so`, which times
//! POMP2 enter+exit pairs (one Enter and one Leave event each) and bare `rdtsc` reads in the
//! same process, best of 5 rounds; then the same loop on 1, 2, ... nproc threads at once, to
//! show how the cost per event scales (each thread records into its own location; above the
//! number of cores threads share them). The last line is
//! `hotpath: event X ns, tsc Y ns, ratio X/Y = R` with X the cost per event (half a pair) on
//! one thread. The line before it gives the cost of an enter+exit pair of a region that a filter
//! file (POMPTRACE_FILTERING_FILE) excludes, side by side with a recorded pair:
//! `hotpath: filtered enter+exit F ns, recorded enter+exit P ns, ratio F/P = Q`.
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
        .args(["-O2", "-fopenmp", "-I"])
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
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let thread_counts: Vec<String> = [1, 2, 4, 8, 16]
        .into_iter()
        .filter(|&t| t == 1 || t <= cores)
        .map(|t: usize| t.to_string())
        .collect();
    // The trace goes to memory where possible: at tens of millions of events per second the
    // disk, not the recording path, would set the pace (the waits show as BufferFlush events).
    let shm = std::path::Path::new("/dev/shm");
    let trace = if shm.is_dir() {
        shm.join(format!("pomptrace-hotpath-{}", std::process::id()))
    } else {
        work.join("trace")
    };
    let filter = work.join("filtered.filter");
    std::fs::write(
        &filter,
        "SCOREP_FILE_NAMES_BEGIN\n  EXCLUDE filtered.c\nSCOREP_FILE_NAMES_END\n",
    )
    .expect("write the filter file");
    let out = Command::new(&exe)
        .arg(pairs.to_string())
        .args(&thread_counts)
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &trace)
        .env("POMPTRACE_FILTERING_FILE", &filter)
        // cargo run's LD_LIBRARY_PATH may name an older copy in target/<profile>: the driver
        // must load the library it was linked with (its rpath).
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run driver");
    let filtered_regions = regions_named_in(&trace.join("traces.otf2"), "filtered.c");
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir_all(&trace);
    assert_eq!(filtered_regions, 0, "the filter file was not applied");
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
    let per_thread: Vec<(u32, f64)> = text
        .lines()
        .filter_map(|l| {
            let t = l
                .strip_prefix("threads=")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?;
            let p: f64 = l
                .split_whitespace()
                .find_map(|w| w.strip_prefix("pair_ns="))?
                .parse()
                .ok()?;
            Some((t, p / 2.0))
        })
        .collect();
    if let Some(&(_, one)) = per_thread.first() {
        for (threads, event) in &per_thread {
            println!(
                "threads {threads:2} at once: event {event:.2} ns ({:.2} x one thread; {cores} cores)",
                event / one
            );
        }
    }
    let filtered = field("filtered_pair_ns=");
    println!(
        "hotpath: filtered enter+exit {filtered:.2} ns, recorded enter+exit {pair:.2} ns, \
         ratio F/P = {:.3}",
        filtered / pair
    );
    println!(
        "hotpath: event {event:.2} ns, tsc {tsc:.2} ns, ratio X/Y = {:.2}",
        event / tsc
    );
}

/// How many region definitions of the trace have `text` in their name.
fn regions_named_in(anchor: &Path, text: &str) -> usize {
    use pomptrace::otf2::{ArchiveReader, GlobalDef};
    let defs = ArchiveReader::open(anchor)
        .and_then(|archive| archive.global_defs())
        .unwrap_or_else(|e| panic!("cannot read the driver's trace: {e}"));
    let strings: std::collections::HashMap<u32, &str> = defs
        .iter()
        .filter_map(|d| match d {
            GlobalDef::String { id, string } => Some((*id, string.as_str())),
            _ => None,
        })
        .collect();
    defs.iter()
        .filter(|d| match d {
            GlobalDef::Region { name, .. } => strings.get(name).is_some_and(|s| s.contains(text)),
            _ => false,
        })
        .count()
}
