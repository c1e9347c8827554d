//! Overhead pomptrace adds per OpenMP construct and per POMP2 event, in the spirit of the EPCC
//! syncbench.
//!
//! Builds `examples/syncbench/syncbench.c` twice in a temporary directory: plain
//! (`cc -O2 -fopenmp`) and instrumented the way README.md describes (the real `opari2`, the
//! region init file of `pomptrace init-regions`, linked against this build's
//! `libpomptrace.so`). Runs both at each thread count (`OMP_NUM_THREADS`; each trace goes to the
//! temporary directory and is deleted after the run) and prints one table:
//! `construct | threads | uninstrumented µs | pomptrace µs | added µs | events/construct |
//! ns/event`, where µs are per construct (mean over the repetitions, reference delay
//! subtracted), events/construct is what pomptrace records per construct on the encountering
//! (critical-path) thread, and ns/event = added µs / events.
//!
//! Run: `cargo run --release --example syncbench [-- --quick] [--threads 1,2,4,8,16]`
//! (`--quick`: about 15 s on 2 cores, 10 repetitions per test; without it 40, about a minute).

#[path = "common/library_dir.rs"]
mod library_dir;
use library_dir::library_dir;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

// The code behind `pomptrace init-regions`, so that the example does not depend on the
// `pomptrace` binary having been built (cargo builds only the library for an example).
#[allow(dead_code)]
#[path = "../src/bin/pomptrace/init_regions.rs"]
mod init_regions;

const USAGE: &str = "usage: syncbench [--quick] [--threads 1,2,4,8,16]";

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("syncbench: {problem}");
    }
    eprintln!("{USAGE}");
    std::process::exit(2)
}

fn run_tool(cmd: &mut Command) {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    assert!(
        out.status.success(),
        "{shown} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds the plain and the instrumented program in `work`; returns their paths.
fn build(root: &Path, lib: &Path, work: &Path) -> (PathBuf, PathBuf) {
    let source = work.join("syncbench.c");
    std::fs::copy(root.join("examples/syncbench/syncbench.c"), &source).expect("copy source");

    let plain = work.join("syncbench-plain");
    run_tool(
        Command::new("cc")
            .args(["-O2", "-fopenmp"])
            .arg(&source)
            .arg("-o")
            .arg(&plain)
            .arg("-lm"),
    );

    // opari2 syncbench.c syncbench.mod.c (also writes syncbench.c.opari.inc)
    run_tool(
        Command::new("opari2")
            .args(["syncbench.c", "syncbench.mod.c"])
            .current_dir(work),
    );
    let object = work.join("syncbench.o");
    run_tool(
        Command::new("cc")
            .args(["-O2", "-fopenmp", "-I"])
            .arg(root.join("include"))
            .arg("-c")
            .arg(work.join("syncbench.mod.c"))
            .arg("-o")
            .arg(&object),
    );
    // pomptrace init-regions -o pomp2_init.c syncbench.o
    let listing = init_regions::nm_listing(&init_regions::nm_program(), &object)
        .unwrap_or_else(|e| panic!("nm: {e}"));
    let mut regions = init_regions::InitRegions::default();
    regions.add_nm_output(&listing);
    let init = work.join("pomp2_init.c");
    std::fs::write(&init, regions.to_c()).expect("write init file");
    let init_object = work.join("pomp2_init.o");
    run_tool(
        Command::new("cc")
            .arg("-c")
            .arg(&init)
            .arg("-o")
            .arg(&init_object),
    );
    let instrumented = work.join("syncbench-pomptrace");
    run_tool(
        Command::new("cc")
            .arg("-fopenmp")
            .arg(&object)
            .arg(&init_object)
            .arg("-L")
            .arg(lib)
            .arg("-lpomptrace")
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lm")
            .arg("-o")
            .arg(&instrumented),
    );
    (plain, instrumented)
}

/// One `construct=...` line of the C program.
#[derive(Clone)]
struct Measured {
    construct: String,
    /// µs per construct, mean over the repetitions.
    us: f64,
    /// Standard error of that mean (standard deviation / √repetitions).
    se: f64,
    events: u32,
}

/// One line of the table: a construct at one thread count, plain and instrumented.
struct Row {
    threads: usize,
    base: Measured,
    traced: Measured,
}

fn parse(text: &str) -> Vec<Measured> {
    text.lines()
        .filter(|line| line.starts_with("construct="))
        .map(|line| {
            let field = |key: &str| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(key))
                    .unwrap_or_else(|| panic!("no {key} in `{line}`"))
            };
            Measured {
                construct: field("construct=").to_string(),
                us: field("us=").parse().expect("us="),
                se: field("sd_us=").parse::<f64>().expect("sd_us=")
                    / field("outer=").parse::<f64>().expect("outer=").sqrt(),
                events: field("events=").parse().expect("events="),
            }
        })
        .collect()
}

/// Runs `exe` on `threads` threads; the trace, if any, goes to `trace` and is deleted.
/// Returns the measurements and the closing line of pomptrace (empty for the plain build).
fn run(exe: &Path, threads: usize, quick: bool, trace: &Path) -> (Vec<Measured>, String) {
    let mut cmd = Command::new(exe);
    if quick {
        cmd.arg("--quick");
    }
    let out = cmd
        .env("OMP_NUM_THREADS", threads.to_string())
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", trace)
        .output()
        .expect("run syncbench");
    let _ = std::fs::remove_dir_all(trace);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} failed ({}):\n{stdout}{stderr}",
        exe.display(),
        out.status
    );
    let closing = stderr
        .lines()
        .find(|l| l.starts_with("pomptrace: trace written"))
        .unwrap_or("")
        .to_string();
    (parse(&stdout), closing)
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, model)| model.trim().to_string())
}

fn main() {
    let mut quick = false;
    let mut threads: Vec<usize> = vec![1, 2, 4, 8, 16];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--threads" => {
                let list = args.next().unwrap_or_else(|| usage(""));
                threads = list
                    .split(',')
                    .map(|t| match t.trim().parse() {
                        Ok(n) if n > 0 => n,
                        _ => usage(&format!("bad thread count `{t}`")),
                    })
                    .collect();
            }
            _ => usage(&format!("unknown argument `{arg}`")),
        }
    }

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = library_dir();
    let work = std::env::temp_dir().join(format!("pomptrace-syncbench-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work dir");
    let (plain, instrumented) = build(root, &lib, &work);

    let nproc = std::thread::available_parallelism().map_or(1, |n| n.get());
    let over: Vec<String> = threads
        .iter()
        .filter(|&&t| t > nproc)
        .map(usize::to_string)
        .collect();
    println!(
        "syncbench{}: machine nproc={nproc}{}; thread counts above {nproc} are oversubscribed{}",
        if quick { " --quick" } else { "" },
        cpu_model().map_or(String::new(), |m| format!(" ({m})")),
        if over.is_empty() {
            String::new()
        } else {
            format!(" (here: {})", over.join(", "))
        }
    );

    let mut rows: Vec<Row> = Vec::new();
    for &n in &threads {
        let started = Instant::now();
        let (base, _) = run(&plain, n, quick, &work.join("trace-plain"));
        let middle = started.elapsed();
        let (traced, closing) = run(&instrumented, n, quick, &work.join("trace"));
        eprintln!(
            "syncbench: {n} threads: plain {:.1} s, pomptrace {:.1} s; {}",
            middle.as_secs_f64(),
            (started.elapsed() - middle).as_secs_f64(),
            closing.trim_start_matches("pomptrace: ")
        );
        for b in base {
            let t = traced
                .iter()
                .find(|t| t.construct == b.construct)
                .cloned()
                .unwrap_or_else(|| panic!("no {} in the instrumented run", b.construct));
            rows.push(Row {
                threads: n,
                base: b,
                traced: t,
            });
        }
    }
    let _ = std::fs::remove_dir_all(&work);

    println!();
    println!(
        "| construct | threads | uninstrumented µs | pomptrace µs | added µs | events/construct | ns/event |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    // Grouped by construct (in the program's order), then by thread count.
    let mut constructs: Vec<&str> = Vec::new();
    for row in &rows {
        if !constructs.contains(&row.base.construct.as_str()) {
            constructs.push(&row.base.construct);
        }
    }
    let mut noisy = 0;
    for construct in constructs {
        for Row {
            threads: n,
            base,
            traced,
        } in rows.iter().filter(|r| r.base.construct == construct)
        {
            let added = traced.us - base.us;
            // Within two standard errors of zero: the difference is noise.
            let mark = if added.abs() < 2.0 * base.se.hypot(traced.se) {
                noisy += 1;
                "~"
            } else {
                ""
            };
            println!(
                "| {construct} | {n} | {:.3} | {:.3} | {added:.3}{mark} | {} | {:.1}{mark} |",
                base.us,
                traced.us,
                traced.events,
                added * 1e3 / f64::from(traced.events)
            );
        }
    }
    println!();
    println!(
        "µs per construct: mean over the repetitions minus the reference delay; \
         added = pomptrace - uninstrumented; ns/event = added / events per construct."
    );
    if noisy > 0 {
        println!(
            "~ marks {noisy} rows whose added time is within two standard errors of zero \
             (noise, mostly oversubscribed thread counts)."
        );
    }
}
