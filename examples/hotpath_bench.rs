//! Cost of recording one event on the hot path, against the floor: a bare TSC read, for the
//! shared library and for the static archive side by side.
//!
//! Builds the library, then `c-tests/hotpath_driver.c` twice: against `libpomptrace.so` and
//! against `libpomptrace.a`. The driver times POMP2 enter+exit pairs (one Enter and one Leave
//! event each) and bare TSC reads in the same process, best of 5 rounds; then the same loop on
//! 1, 2, 4, ... nproc threads at once, to show how the cost per event scales (each thread
//! records into its own location). The two drivers run alternately, twice each, and the best
//! of each figure is kept. The driver also times the same pair on a construct that a filter file
//! (POMPTRACE_FILTERING_FILE) excludes, checked absent from the trace. The last lines are
//! `hotpath so: filtered enter+exit F ns, recorded enter+exit P ns, ratio F/P = Q` (and `a`),
//! `hotpath so: paused (POMP2_Off) enter+exit ...` for the same pair with recording off,
//! `hotpath so: event X ns, tsc Y ns, ratio X/Y = R`, the same for `a`, and
//! `hotpath threads so: T at once = Z x one thread (a bare TSC read: W x; event / TSC read, both
//! at T at once = R)` (and `a`) for each T > 1: W is the machine's own slowdown with T threads
//! busy (on a VM whose virtual cores share physical cores, even a bare TSC read slows down).
//! Those loops write past the default event memory per thread, so chunks stream out while they
//! record (written by the recording threads or the writer thread, as `POMPTRACE_WRITER` says:
//! by default the writer thread, copying where a core is idle and straight to the device where
//! none is and the disk takes that): to the temp directory's file system, as
//! a user's traces go (every chunk streams out as it fills and its buffer is filled again), or
//! with `--traces-in-memory` to `/dev/shm`. The last lines, `hotpath threads so in memory: T at once = ...` (and
//! `a`), time the same loops with fewer pairs, each thread count in a process of its own, so
//! that every thread keeps its events in memory: the case the default event memory is for.
//!
//! With `--metrics`, it instead compares the cost per event (shared library, one thread) with no
//! metric, one and three software perf counters and a getrusage metric (`POMPTRACE_METRICS`).
//!
//! With `--mpi`, it instead compares the cost per event over a bare TSC read (shared library,
//! one thread) of the driver run alone (bound to one core, as mpirun binds its ranks) with the
//! same in a rank of `mpirun -np 2` (each rank
//! records into the job's archive; the best of its ranks; best of 5 rounds), and in a rank with
//! `POMPTRACE_CLOCK=monotonic` (what every rank used before they took the TSC): the line
//! `hotpath mpi: event / TSC read alone A, in a rank of mpirun -np 2 R (R/A = Q), ...`.
//!
//! The profile lines, `hotpath so: profile: event T ns traced, P ns profiled without a trace
//! (P/T = R), B ns traced and profiled (B/T = S)` (and `a`), time the one-thread pair with
//! `POMPTRACE_ENABLE_PROFILING=1` and `POMPTRACE_ENABLE_TRACING=0`, and with both on, against
//! tracing alone: the three alternate, best of [`PROFILE_RUNS`] runs each. With `--profile`
//! only these lines are measured.
//!
//! With `--load N`, N busy processes (pinned to nothing) run for the whole measurement: the
//! figures of a node whose cores are all taken.
//!
//! Run: `cargo run --release --example hotpath_bench [PAIRS] [--metrics | --mpi | --profile]
//! [--traces-in-memory] [--load N]`

#[path = "common/library_dir.rs"]
mod library_dir;
#[path = "common/load.rs"]
mod load;
#[path = "common/scratch.rs"]
mod scratch;

use std::path::{Path, PathBuf};
use std::process::Command;

/// How the driver is linked.
struct Variant {
    /// `so` or `a`, as in the summary lines.
    name: &'static str,
    exe: PathBuf,
}

/// The best figures of one variant over its runs.
#[derive(Default)]
struct Best {
    pair_ns: f64,
    tsc_ns: f64,
    filtered_pair_ns: f64,
    /// The recorded pair again while recording is off (`POMP2_Off`).
    paused_pair_ns: f64,
    /// Regions of the filtered construct defined in a trace (none when the filter works).
    filtered_regions: usize,
    /// (threads at once, ns per pair, ns per bare TSC read with as many threads at once)
    threads: Vec<(usize, f64, f64)>,
}

fn build_driver(exe: &Path, library: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new("cc")
        .args(["-O2", "-fopenmp", "-I"])
        .arg(root.join("include"))
        .arg(root.join("c-tests/hotpath_driver.c"))
        .arg("-o")
        .arg(exe)
        .args(library)
        .status()
        .expect("run cc");
    assert!(status.success(), "building {} failed", exe.display());
}

fn field(line: &str, key: &str) -> Option<f64> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .and_then(|v| v.parse().ok())
}

/// The driver's run-time settings.
struct DriverRun<'a> {
    pairs: u64,
    thread_counts: &'a [usize],
    trace: &'a Path,
    filter: &'a Path,
}

/// Runs `driver` (arguments and settings given) with its trace in `trace`, lets `inspect`
/// look at the trace, deletes it and returns the driver's standard output; the run must
/// succeed.
fn driver_output(driver: &mut Command, trace: &Path, inspect: impl FnOnce(&Path)) -> String {
    let out = driver
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", trace)
        // cargo run's LD_LIBRARY_PATH may name an older copy in target/<profile>: the driver
        // must load the library it was linked with (its rpath).
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run driver");
    inspect(trace);
    let _ = std::fs::remove_dir_all(trace);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} failed: {text}{}",
        Path::new(driver.get_program()).display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Runs the driver once and folds its figures into `best` (the minimum of each).
fn run_driver(exe: &Path, run: &DriverRun, best: &mut Best) {
    let mut driver = Command::new(exe);
    driver
        .arg(run.pairs.to_string())
        .args(run.thread_counts.iter().map(usize::to_string))
        .env("POMPTRACE_FILTERING_FILE", run.filter);
    let text = driver_output(&mut driver, run.trace, |trace| {
        best.filtered_regions = best
            .filtered_regions
            .max(regions_named_in(&trace.join("traces.otf2"), "filtered.c"));
    });
    for line in text.lines() {
        if let Some(figures) = threads_line(line) {
            keep_threads_min(&mut best.threads, figures);
        } else if let Some(filtered) = field(line, "filtered_pair_ns=") {
            keep_min(&mut best.filtered_pair_ns, filtered);
        } else if let Some(paused) = field(line, "paused_pair_ns=") {
            keep_min(&mut best.paused_pair_ns, paused);
        } else if let (Some(pair), Some(tsc)) = (field(line, "pair_ns="), field(line, "tsc_ns=")) {
            keep_min(&mut best.pair_ns, pair);
            keep_min(&mut best.tsc_ns, tsc);
        }
    }
    assert!(
        best.pair_ns > 0.0 && best.filtered_pair_ns > 0.0 && best.paused_pair_ns > 0.0,
        "no pair_ns=, filtered_pair_ns= or paused_pair_ns= in the output of {}",
        exe.display()
    );
}

fn keep_min(slot: &mut f64, value: f64) {
    if *slot == 0.0 || value < *slot {
        *slot = value;
    }
}

/// (threads, ns per pair, ns per TSC read) of a driver line `threads=T pair_ns=P tsc_ns=Y`.
fn threads_line(line: &str) -> Option<(usize, f64, f64)> {
    let threads = line.strip_prefix("threads=")?;
    let threads: usize = threads
        .split_whitespace()
        .next()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("bad driver line `{line}`"));
    let pair = field(line, "pair_ns=").unwrap_or_else(|| panic!("bad line `{line}`"));
    let tsc = field(line, "tsc_ns=").unwrap_or_else(|| panic!("bad line `{line}`"));
    Some((threads, pair, tsc))
}

/// Folds one threads-at-once figure into the per-thread-count minimums.
fn keep_threads_min(all: &mut Vec<(usize, f64, f64)>, (threads, pair, tsc): (usize, f64, f64)) {
    match all.iter_mut().find(|(t, ..)| *t == threads) {
        Some((_, pair_slot, tsc_slot)) => {
            keep_min(pair_slot, pair);
            keep_min(tsc_slot, tsc);
        }
        None => all.push((threads, pair, tsc)),
    }
}

/// Runs of each in-memory loop (each a short process: more of them than of the long loops).
const IN_MEMORY_RUNS: usize = 4;

/// Pairs per loop of the in-memory runs: each thread's three rounds of two events per pair
/// (at most 12 bytes each with their TIMESTAMP record) fill at most half of the default event
/// memory per thread, so that no chunk is written while the threads record.
fn in_memory_pairs() -> u64 {
    let buffer = pomptrace::settings::default_buffer_size() as u64;
    buffer / 2 / (3 * 2 * 12)
}

/// The threads-at-once loop on `threads` threads in a process of its own (`--at-once`: every
/// location starts fresh), keeping the minimum of each figure in `best`. Every full chunk is
/// kept in memory until the end (`POMPTRACE_KEEP_IN_MEMORY` set to the buffer: by default they
/// would stream).
fn run_at_once(
    exe: &Path,
    pairs: u64,
    threads: usize,
    trace: &Path,
    best: &mut Vec<(usize, f64, f64)>,
) {
    let mut driver = Command::new(exe);
    driver
        .args([pairs.to_string(), "--at-once".into(), threads.to_string()])
        .env(
            "POMPTRACE_KEEP_IN_MEMORY",
            pomptrace::settings::default_buffer_size().to_string(),
        );
    let text = driver_output(&mut driver, trace, |_| {});
    let figures = text.lines().find_map(threads_line).unwrap_or_else(|| {
        panic!(
            "no threads= line in the output of {}: {text}",
            exe.display()
        )
    });
    keep_threads_min(best, figures);
}

/// (ns per pair, ns per TSC read) of the one-thread run of a threads-at-once loop.
fn one_thread(threads: &[(usize, f64, f64)], fallback: (f64, f64)) -> (f64, f64) {
    threads
        .first()
        .map_or(fallback, |&(_, pair, tsc)| (pair, tsc))
}

/// The `hotpath threads` summary lines of one variant: each T > 1 against one thread.
fn print_at_once(label: &str, threads: &[(usize, f64, f64)], one: (f64, f64)) {
    let (one, one_tsc) = one;
    for &(t, pair, tsc) in threads.iter().filter(|(t, ..)| *t > 1) {
        println!(
            "hotpath threads {label}: {t} at once = {:.2} x one thread \
             (a bare TSC read: {:.2} x; event / TSC read, both at {t} at once = {:.2})",
            pair / one,
            tsc / one_tsc,
            pair / 2.0 / tsc
        );
    }
}

/// How many region definitions of the trace have `text` in their name.
fn regions_named_in(anchor: &Path, text: &str) -> usize {
    use otf2::{ArchiveReader, GlobalDef};
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

/// `POMPTRACE_METRICS` settings compared by `--metrics`, with what they read per event.
const METRIC_SETS: [(&str, Option<&str>); 5] = [
    ("no metric", None),
    ("1 software counter", Some("task-clock")),
    (
        "3 software counters",
        Some("task-clock,page-faults,context-switches"),
    ),
    ("rusage", Some("ru_utime")),
    (
        "3 software + rusage",
        Some("task-clock,page-faults,context-switches,ru_utime"),
    ),
];

/// Runs the driver on one thread with `metrics` and returns the cost per event in ns.
fn event_cost_with_metrics(exe: &Path, trace: &Path, pairs: u64, metrics: Option<&str>) -> f64 {
    event_cost(exe, trace, pairs, &[("POMPTRACE_METRICS", metrics)])
}

/// Runs the driver on one thread with the settings `env` (None: unset) and returns the cost
/// per event in ns.
fn event_cost(exe: &Path, trace: &Path, pairs: u64, env: &[(&str, Option<&str>)]) -> f64 {
    let mut cmd = Command::new(exe);
    cmd.arg(pairs.to_string())
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", trace)
        .env("POMPTRACE_VERBOSE", "0")
        .env_remove("LD_LIBRARY_PATH");
    for (name, value) in env {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
    let out = cmd.output().expect("run driver");
    let _ = std::fs::remove_dir_all(trace);
    assert!(
        out.status.success(),
        "driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| field(l, "pair_ns="))
        .unwrap_or_else(|| panic!("no pair_ns= in driver output: {text}"))
        / 2.0
}

fn compare_metrics(exe: &Path, trace: &Path, pairs: u64) {
    let base = event_cost_with_metrics(exe, trace, pairs, None);
    for (label, metrics) in METRIC_SETS {
        let cost = match metrics {
            None => base,
            Some(_) => event_cost_with_metrics(exe, trace, pairs, metrics),
        };
        println!(
            "metrics {label:>20}: event {cost:8.2} ns ({:5.1} x no metric) [{}]",
            cost / base,
            metrics.unwrap_or("-")
        );
    }
}

/// The driver's one-thread figures from every `pair_ns= tsc_ns=` line the command printed (one
/// per rank under mpirun): (best ns per event, best ns per TSC read).
fn event_and_tsc(command: &mut Command) -> (f64, f64) {
    let out = command
        .env("POMPTRACE_VERBOSE", "0")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run driver");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "driver failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut best = (0.0, 0.0);
    for line in text.lines().filter(|l| !l.starts_with("threads=")) {
        if let (Some(pair), Some(tsc)) = (field(line, "pair_ns="), field(line, "tsc_ns=")) {
            keep_figures(&mut best, (pair / 2.0, tsc));
        }
    }
    assert!(best.0 > 0.0, "no pair_ns= in the driver's output: {text}");
    best
}

fn keep_figures(best: &mut (f64, f64), (event, tsc): (f64, f64)) {
    keep_min(&mut best.0, event);
    keep_min(&mut best.1, tsc);
}

/// Event / TSC read of the driver alone and in a rank of `mpirun -np 2` (TSC, and monotonic).
fn compare_mpi(exe: &Path, traces: &Path, pairs: u64) {
    let rank = |clock: &str| {
        let trace = traces.join(format!("mpi-{clock}"));
        let mut cmd = Command::new("mpirun");
        cmd.args(["-np", "2", "--oversubscribe", "--allow-run-as-root"])
            .args(["-x", "OMP_NUM_THREADS=1"])
            .args(["-x", &format!("POMPTRACE_CLOCK={clock}")])
            .args(["-x", "POMPTRACE_VERBOSE=0"])
            .args([
                "-x",
                &format!("POMPTRACE_EXPERIMENT_DIRECTORY={}", trace.display()),
            ])
            .arg(exe)
            .arg(pairs.to_string());
        let figures = event_and_tsc(&mut cmd);
        let _ = std::fs::remove_dir_all(&trace);
        figures
    };
    let mut alone = (0.0, 0.0);
    let mut tsc_rank = alone;
    let mut monotonic_rank = alone;
    for _round in 0..5 {
        let trace = traces.join("alone");
        // On one core, as mpirun binds each of its ranks to one.
        let mut cmd = Command::new("taskset");
        cmd.args(["-c", "0"])
            .arg(exe)
            .arg(pairs.to_string())
            .env("OMP_NUM_THREADS", "1")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &trace);
        keep_figures(&mut alone, event_and_tsc(&mut cmd));
        let _ = std::fs::remove_dir_all(&trace);
        keep_figures(&mut tsc_rank, rank("auto"));
        keep_figures(&mut monotonic_rank, rank("monotonic"));
    }
    let ratio = |(event, tsc): (f64, f64)| event / tsc;
    for (label, figures) in [
        ("alone", alone),
        ("in a rank of mpirun -np 2", tsc_rank),
        ("in a rank, POMPTRACE_CLOCK=monotonic", monotonic_rank),
    ] {
        println!(
            "mpi {label:>36}: event {:.2} ns, tsc {:.2} ns, event / TSC read {:.2}",
            figures.0,
            figures.1,
            ratio(figures)
        );
    }
    println!(
        "hotpath mpi: event / TSC read alone {:.2}, in a rank of mpirun -np 2 {:.2} ({:.2} x \
         alone), with the monotonic clock {:.2} ({:.2} x alone)",
        ratio(alone),
        ratio(tsc_rank),
        ratio(tsc_rank) / ratio(alone),
        ratio(monotonic_rank),
        ratio(monotonic_rank) / ratio(alone)
    );
}

/// Runs of each setting for the profile lines.
const PROFILE_RUNS: usize = 5;

/// The settings the profile lines compare: traced, profiled without a trace, both.
const PROFILE_SETTINGS: [[(&str, Option<&str>); 3]; 3] = [
    [
        ("POMPTRACE_ENABLE_PROFILING", None),
        ("POMPTRACE_ENABLE_TRACING", None),
        ("POMPTRACE_METRICS", None),
    ],
    [
        ("POMPTRACE_ENABLE_PROFILING", Some("1")),
        ("POMPTRACE_ENABLE_TRACING", Some("0")),
        ("POMPTRACE_METRICS", None),
    ],
    [
        ("POMPTRACE_ENABLE_PROFILING", Some("1")),
        ("POMPTRACE_ENABLE_TRACING", None),
        ("POMPTRACE_METRICS", None),
    ],
];

/// The best cost per event (ns, one thread) of each of `PROFILE_SETTINGS`, run alternately.
fn profile_costs(exe: &Path, trace: &Path, pairs: u64) -> [f64; 3] {
    let mut best = [f64::MAX; 3];
    for _ in 0..PROFILE_RUNS {
        for (slot, env) in best.iter_mut().zip(&PROFILE_SETTINGS) {
            *slot = slot.min(event_cost(exe, trace, pairs, env));
        }
    }
    best
}

/// The profile lines of every variant (see the module documentation).
fn print_profile_lines(variants: &[Variant], trace: &Path, pairs: u64) {
    for variant in variants {
        let [traced, profiled, both] = profile_costs(&variant.exe, trace, pairs);
        println!(
            "hotpath {}: profile: event {traced:.2} ns traced, {profiled:.2} ns profiled \
             without a trace (P/T = {:.3}), {both:.2} ns traced and profiled (B/T = {:.3})",
            variant.name,
            profiled / traced,
            both / traced
        );
    }
}

fn main() {
    load::spin_if_asked();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let busy = load::take_load_option(&mut args);
    let metrics_mode = args.iter().any(|a| a == "--metrics");
    let mpi_mode = args.iter().any(|a| a == "--mpi");
    let profile_mode = args.iter().any(|a| a == "--profile");
    let traces_in_memory = args.iter().any(|a| a == "--traces-in-memory");
    let pairs: u64 = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or(2_000_000, |a| a.parse().expect("PAIRS"));
    let lib = library_dir::fresh_library_dir();
    let scratch = scratch::Scratch::new("hotpath", traces_in_memory);
    let archive = lib.join("libpomptrace.a");
    let variants = [
        Variant {
            name: "so",
            exe: scratch.work.join("hotpath_driver_so"),
        },
        Variant {
            name: "a",
            exe: scratch.work.join("hotpath_driver_a"),
        },
    ];
    let (search, rpath) = (
        format!("-L{}", lib.display()),
        format!("-Wl,-rpath,{}", lib.display()),
    );
    build_driver(&variants[0].exe, &[&search, "-lpomptrace", &rpath]);
    let archive = archive.to_str().expect("UTF-8 library path");
    build_driver(&variants[1].exe, &[archive, "-lpthread", "-ldl", "-lm"]);
    let _load = load::Load::start(busy);
    if busy > 0 {
        println!("hotpath: {busy} busy processes run throughout");
    }
    if metrics_mode {
        compare_metrics(&variants[0].exe, &scratch.traces.join("metrics"), pairs);
        return;
    }
    if mpi_mode {
        compare_mpi(&variants[0].exe, &scratch.traces, pairs);
        return;
    }
    if profile_mode {
        print_profile_lines(&variants, &scratch.traces.join("profile"), pairs);
        return;
    }

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut thread_counts: Vec<usize> = std::iter::successors(Some(1), |t| Some(t * 2))
        .take_while(|&t| t <= cores)
        .collect();
    if thread_counts.last() != Some(&cores) {
        thread_counts.push(cores);
    }

    let filter = scratch.work.join("filtered.filter");
    std::fs::write(
        &filter,
        "SCOREP_FILE_NAMES_BEGIN\n  EXCLUDE filtered.c\nSCOREP_FILE_NAMES_END\n",
    )
    .expect("write the filter file");
    let mut best: Vec<Best> = variants.iter().map(|_| Best::default()).collect();
    for _round in 0..2 {
        for (variant, best) in variants.iter().zip(&mut best) {
            let trace = scratch.traces.join(variant.name);
            let run = DriverRun {
                pairs,
                thread_counts: &thread_counts,
                trace: &trace,
                filter: &filter,
            };
            run_driver(&variant.exe, &run, best);
        }
    }
    // The same loops within the default event memory, each thread count in a process of its
    // own: what recording costs while nothing is written (by default, and in the loops above,
    // chunks stream out as they fill).
    let memory_pairs = in_memory_pairs();
    let mut in_memory: Vec<Vec<(usize, f64, f64)>> = variants.iter().map(|_| Vec::new()).collect();
    for _round in 0..IN_MEMORY_RUNS {
        for (variant, best) in variants.iter().zip(&mut in_memory) {
            for &threads in &thread_counts {
                let trace = scratch.traces.join(variant.name);
                run_at_once(&variant.exe, memory_pairs, threads, &trace, best);
            }
        }
    }

    println!("{pairs} pairs per loop, best of 2 runs x 5 rounds; {cores} cores");
    println!(
        "traces go to {} ({})",
        scratch.traces.display(),
        if otf2::Directory::open(&scratch.traces)
            .is_ok_and(|d| otf2::ChunkFile::directory_takes_direct_writes(&d))
        {
            "a local disk: chunks stream out as they fill, straight to the device where no core \
             is idle, and their buffers are filled again"
        } else {
            "chunks stream out as they fill, through the page cache, and their buffers are \
             filled again"
        }
    );
    for (variant, best) in variants.iter().zip(&best) {
        let (one, one_tsc) = one_thread(&best.threads, (best.pair_ns, best.tsc_ns));
        println!(
            "{:>2}: enter+exit pair {:.2} ns, event {:.2} ns, tsc {:.2} ns",
            variant.name,
            best.pair_ns,
            best.pair_ns / 2.0,
            best.tsc_ns
        );
        for &(threads, pair, tsc) in &best.threads {
            println!(
                "{:>2}: {threads:2} threads at once: event {:.2} ns ({:.2} x one thread), \
                 tsc {tsc:.2} ns ({:.2} x one thread)",
                variant.name,
                pair / 2.0,
                pair / one,
                tsc / one_tsc
            );
        }
    }
    for (variant, best) in variants.iter().zip(&best) {
        println!(
            "hotpath {}: filtered enter+exit {:.2} ns, recorded enter+exit {:.2} ns, \
             ratio F/P = {:.3}",
            variant.name,
            best.filtered_pair_ns,
            best.pair_ns,
            best.filtered_pair_ns / best.pair_ns
        );
    }
    for (variant, best) in variants.iter().zip(&best) {
        println!(
            "hotpath {}: paused (POMP2_Off) enter+exit {:.2} ns, recorded enter+exit {:.2} ns, \
             ratio = {:.3}",
            variant.name,
            best.paused_pair_ns,
            best.pair_ns,
            best.paused_pair_ns / best.pair_ns
        );
    }
    for (variant, best) in variants.iter().zip(&best) {
        let event = best.pair_ns / 2.0;
        println!(
            "hotpath {}: event {event:.2} ns, tsc {:.2} ns, ratio X/Y = {:.2}",
            variant.name,
            best.tsc_ns,
            event / best.tsc_ns
        );
    }
    for (variant, best) in variants.iter().zip(&best) {
        let one = one_thread(&best.threads, (best.pair_ns, best.tsc_ns));
        print_at_once(variant.name, &best.threads, one);
    }
    print_profile_lines(&variants, &scratch.traces.join("profile"), pairs);
    println!(
        "in memory: {memory_pairs} pairs per loop (each thread keeps its events in memory), \
         best of {IN_MEMORY_RUNS} runs x 3 rounds"
    );
    for (variant, threads) in variants.iter().zip(&in_memory) {
        for &(t, pair, tsc) in threads {
            println!(
                "{:>2} in memory: {t:2} threads at once: event {:.2} ns, tsc {tsc:.2} ns",
                variant.name,
                pair / 2.0
            );
        }
    }
    for (variant, threads) in variants.iter().zip(&in_memory) {
        let one = one_thread(threads, (0.0, 0.0));
        print_at_once(&format!("{} in memory", variant.name), threads, one);
    }
    // The figures above are still worth seeing; the run fails once they are printed.
    let mut filter_failed = false;
    for (variant, best) in variants.iter().zip(&best) {
        if best.filtered_regions > 0 {
            filter_failed = true;
            eprintln!(
                "hotpath {}: the filter file was not applied: the trace defines {} region(s) of \
                 the filtered construct",
                variant.name, best.filtered_regions
            );
        }
    }
    if filter_failed {
        drop(scratch);
        std::process::exit(1);
    }
}
