//! Memory of a profiled run against its length: the peak resident set size of a run that
//! records 10^8 events with profiling only (`POMPTRACE_ENABLE_PROFILING=1`,
//! `POMPTRACE_ENABLE_TRACING=0`) against one that records 10^4, the same program and the same
//! call paths (`c-tests/profile_memory_driver.c`, 2 threads). A profile's memory follows the
//! call paths, not the events, so the two should be within 2 MiB of each other. For contrast,
//! the same two runs traced (their event memory grows with the run up to the buffer size).
//!
//! Each figure is the smallest of 3 runs (VmHWM, read by the driver after the profile was
//! written). The last line is `profile memory: 10^8 events X KiB, 10^4 events Y KiB, difference
//! D KiB (goal: within 2048)`; the example fails when the goal is missed or the profile of the
//! long run does not hold its events.
//!
//! Run: `cargo run --release --example profile_memory_bench [EVENTS]` (default 100000000)

#[path = "common/library_dir.rs"]
mod library_dir;
#[path = "common/scratch.rs"]
mod scratch;

use std::path::Path;
use std::process::Command;

const THREADS: &str = "2";
const RUNS: usize = 3;

fn build_driver(exe: &Path, lib: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new("cc")
        .args(["-O2", "-fopenmp", "-I"])
        .arg(root.join("include"))
        .arg(root.join("c-tests/profile_memory_driver.c"))
        .arg("-o")
        .arg(exe)
        .arg(format!("-L{}", lib.display()))
        .arg("-lpomptrace")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .status()
        .expect("run cc");
    assert!(status.success(), "building {} failed", exe.display());
}

/// (events recorded, peak RSS in KiB) of one run.
fn run(exe: &Path, events: u64, dir: &Path, profiling_only: bool) -> (u64, u64) {
    let _ = std::fs::remove_dir_all(dir);
    let mut cmd = Command::new(exe);
    cmd.args([events.to_string().as_str(), THREADS])
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", dir)
        .env("POMPTRACE_VERBOSE", "0")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("POMPTRACE_ENABLE");
    if profiling_only {
        cmd.env("POMPTRACE_ENABLE_PROFILING", "1")
            .env("POMPTRACE_ENABLE_TRACING", "0");
    } else {
        cmd.env_remove("POMPTRACE_ENABLE_PROFILING")
            .env_remove("POMPTRACE_ENABLE_TRACING");
    }
    let out = cmd.output().expect("run driver");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "driver failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let field = |key: &str| {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no {key} in `{text}`"))
    };
    let recorded = field("events=");
    if profiling_only {
        assert!(
            !dir.join("traces.otf2").exists(),
            "a profiled run without tracing leaves no trace"
        );
        let profile = otf2::cube::read(&dir.join("profile.cubex"))
            .unwrap_or_else(|e| panic!("cannot read the profile: {e}"));
        let visits = profile.metric_index("visits").expect("a visits metric");
        let total: u64 = match &profile.values[visits] {
            otf2::cube::Values::U64(v) => v.iter().sum(),
            _ => panic!("visits are not UINT64"),
        };
        // Two events a visit; the program's root once and the parallel region once a thread.
        let threads: u64 = THREADS.parse().unwrap();
        assert_eq!(
            total,
            recorded / 2 + 1 + threads,
            "the profile holds every visit of the run"
        );
    }
    (recorded, field("peak_rss_kib="))
}

/// The smallest peak RSS of `RUNS` runs.
fn best(exe: &Path, events: u64, dir: &Path, profiling_only: bool) -> (u64, u64) {
    (0..RUNS)
        .map(|_| run(exe, events, dir, profiling_only))
        .min_by_key(|&(_, kib)| kib)
        .expect("at least one run")
}

fn main() {
    let long: u64 = std::env::args()
        .nth(1)
        .map_or(100_000_000, |a| a.parse().expect("EVENTS"));
    let short = 10_000u64;
    let lib = library_dir::fresh_library_dir();
    let scratch = scratch::Scratch::new("profile-memory", false);
    let exe = scratch.work.join("profile_memory_driver");
    build_driver(&exe, &lib);
    let dir = scratch.traces.join("run");
    let started = std::time::Instant::now();
    let (long_events, long_kib) = best(&exe, long, &dir, true);
    let long_seconds = started.elapsed().as_secs_f64() / RUNS as f64;
    let (short_events, short_kib) = best(&exe, short, &dir, true);
    let (_, traced_short_kib) = best(&exe, short, &dir, false);
    let (_, traced_long_kib) = run(&exe, long.min(20_000_000), &dir, false);
    println!(
        "profiled ({THREADS} threads, tracing off): {long_events} events in {long_seconds:.2} s: \
         peak RSS {long_kib} KiB; {short_events} events: peak RSS {short_kib} KiB"
    );
    println!(
        "traced, for contrast: {} events: peak RSS {traced_long_kib} KiB; {short_events} \
         events: peak RSS {traced_short_kib} KiB",
        long.min(20_000_000)
    );
    let difference = long_kib as i64 - short_kib as i64;
    println!(
        "profile memory: {long_events} events {long_kib} KiB, {short_events} events \
         {short_kib} KiB, difference {difference} KiB (goal: within 2048)"
    );
    if difference.abs() > 2048 {
        drop(scratch);
        std::process::exit(1);
    }
}
