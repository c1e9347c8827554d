//! Fixed cost per process: whole runs of a tiny instrumented program (one parallel region),
//! recording against `POMPTRACE_ENABLE=0`, with an uninstrumented build for reference.
//!
//! Builds the library, then `examples/startup/tiny.c` plain and instrumented as README.md
//! describes, and runs the three configurations RUNS times each (default 50), interleaved so
//! that a change in the machine's load falls on all three alike; the trace goes to `/dev/shm`
//! and is deleted after each run, outside the timing. Prints the median wall time of each, the
//! differences of the medians (`startup: median on − off = X ms`, `on − plain`), and ends in
//! `startup: median of the rounds' on − off = X ms, on − plain = Y ms`: the median of each
//! round's own differences, which a change in a shared machine's load splits less.
//!
//! With `--load N`, N busy processes (pinned to nothing) run for the whole measurement: the
//! figures of a node whose cores are all taken (`--load` the number of cores).
//!
//! Run: `cargo run --release --example startup_bench [RUNS] [--load N]`

#[path = "common/library_dir.rs"]
mod library_dir;
#[path = "common/load.rs"]
mod load;
#[path = "common/opari2_build.rs"]
mod opari2_build;
#[path = "common/scratch.rs"]
mod scratch;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Wall time of one run of `exe`, in ms.
fn time_run(exe: &Path, enable: Option<&str>, trace: &Path) -> f64 {
    let mut cmd = Command::new(exe);
    // cargo run's LD_LIBRARY_PATH may name an older copy in target/<profile>: the program must
    // load the library it was linked with (its rpath).
    cmd.env("POMPTRACE_EXPERIMENT_DIRECTORY", trace)
        .env_remove("LD_LIBRARY_PATH")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(value) = enable {
        cmd.env("POMPTRACE_ENABLE", value);
    }
    let started = Instant::now();
    let out = cmd.output().expect("run tiny");
    let ms = started.elapsed().as_secs_f64() * 1e3;
    assert!(
        out.status.success(),
        "{} failed ({}): {}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(trace);
    ms
}

fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    let middle = times.len() / 2;
    if times.len() % 2 == 0 {
        (times[middle - 1] + times[middle]) / 2.0
    } else {
        times[middle]
    }
}

fn main() {
    load::spin_if_asked();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let busy = load::take_load_option(&mut args);
    let runs: usize = args.first().map_or(50, |a| match a.parse() {
        Ok(n) if n > 0 => n,
        _ => {
            eprintln!("usage: startup_bench [RUNS] [--load N]");
            std::process::exit(2)
        }
    });
    let lib = library_dir::fresh_library_dir();
    let scratch = scratch::Scratch::new("startup", true);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/startup/tiny.c");
    let builds = opari2_build::build_plain_and_instrumented(&source, &lib, &scratch.work);
    let trace = scratch.traces.join("trace");
    let configs: [(&str, &Path, Option<&str>); 3] = [
        ("plain", &builds.plain, None),
        ("off", &builds.instrumented, Some("0")),
        ("on", &builds.instrumented, None),
    ];
    let load = load::Load::start(busy);
    // Not timed: the first run of each pays for loading the binaries into the page cache.
    for &(_, exe, enable) in &configs {
        time_run(exe, enable, &trace);
    }
    let mut times = [vec![], vec![], vec![]];
    for _ in 0..runs {
        for (slot, &(_, exe, enable)) in configs.iter().enumerate() {
            times[slot].push(time_run(exe, enable, &trace));
        }
    }
    drop(load);
    // Each round's differences before sorting: the median of those leaves out the rounds that a
    // change in the machine's speed split (a shared machine's load moves from run to run).
    let paired = |a: usize, b: usize| -> f64 {
        let mut differences: Vec<f64> =
            times[a].iter().zip(&times[b]).map(|(x, y)| x - y).collect();
        median(&mut differences)
    };
    let (on_off, on_plain) = (paired(2, 1), paired(2, 0));
    let nproc = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "startup: {runs} runs of each, interleaved; {nproc} cores, OpenMP default threads; \
         {busy} busy processes"
    );
    let mut medians = [0.0; 3];
    for (slot, (name, _, _)) in configs.iter().enumerate() {
        let sorted = &mut times[slot];
        medians[slot] = median(sorted);
        println!(
            "{name:>5}: median {:.2} ms (min {:.2}, max {:.2})",
            medians[slot],
            sorted[0],
            sorted[sorted.len() - 1]
        );
    }
    println!(
        "startup: median off − plain = {:.2} ms",
        medians[1] - medians[0]
    );
    println!(
        "startup: median on − off = {:.2} ms",
        medians[2] - medians[1]
    );
    println!(
        "startup: median on − plain = {:.2} ms",
        medians[2] - medians[0]
    );
    println!(
        "startup: median of the rounds' on − off = {on_off:.2} ms, on − plain = {on_plain:.2} ms"
    );
}
