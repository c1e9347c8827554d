//! Every benchmark example runs to its end: each is run as `docs/benchmarks.md` runs it, with
//! arguments that make it small, and must exit 0 and print its closing figures as finite numbers.
//! The figures of such short runs mean nothing and are not checked; a benchmark that no longer
//! builds its programs, finds its files or parses its own output fails here and not the next
//! time someone measures.

mod support;

use std::process::Command;
use std::sync::Mutex;

use support::{repo_root, run};

/// One benchmark at a time: each starts threads and processes of its own, on every core.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `cargo run --example NAME -- ARGS` (this test's cargo and profile) and returns stdout.
fn run_example(name: &str, args: &[&str]) -> String {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let out = run(Command::new(cargo)
        .args(["run", "--quiet", "--example", name, "--manifest-path"])
        .arg(repo_root().join("Cargo.toml"))
        .arg("--")
        .args(args));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The numbers of the first line of `stdout` that starts with `prefix`, each checked finite.
fn figures(stdout: &str, prefix: &str) -> Vec<f64> {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?}:\n{stdout}"));
    let numbers: Vec<f64> = line
        .split_whitespace()
        .filter_map(|word| {
            word.trim_matches([',', '(', ')', '|', '~', '%'])
                .parse()
                .ok()
        })
        .collect();
    assert!(
        !numbers.is_empty() && numbers.iter().all(|n: &f64| n.is_finite()),
        "{line}"
    );
    numbers
}

#[test]
fn hotpath_bench_runs() {
    let out = run_example("hotpath_bench", &["100000"]);
    for prefix in [
        "hotpath so: event ",
        "hotpath a: event ",
        "hotpath so: profile: event ",
        "hotpath so: filtered enter+exit ",
        "hotpath so: paused (POMP2_Off) enter+exit ",
    ] {
        figures(&out, prefix);
    }
}

#[test]
fn otf2_write_bench_runs_and_writes_what_libotf2_writes() {
    let out = run_example("otf2_write_bench", &["20000"]);
    let numbers = figures(&out, "otf2_write_bench: ours ");
    // ... bytes/event ours A libotf2 B: the same trace, byte for byte in size.
    let [.., ours, libotf2] = numbers[..] else {
        panic!("{out}")
    };
    assert_eq!(ours, libotf2, "{out}");
}

/// Every kind of memory and write measures some CPU time (one chunk each).
#[test]
fn chunk_memory_bench_measures_every_kind() {
    let out = run_example("chunk_memory_bench", &["1"]);
    for kind in [
        "fresh memory:",
        "memory used before:",
        "direct write:",
        "buffered write:",
        "tmpfs write:",
        "direct write from huge pages:",
        "tmpfs write, pages allocated:",
    ] {
        let ns = figures(&out, kind)[0];
        assert!(ns > 0.0, "{kind} {ns} ns per byte");
    }
}

#[test]
fn startup_bench_runs() {
    let out = run_example("startup_bench", &["2"]);
    figures(&out, "startup: median of the rounds' on ");
}

#[test]
fn profile_memory_bench_runs() {
    let out = run_example("profile_memory_bench", &["100000"]);
    figures(&out, "profile memory: ");
}

#[test]
fn mpi_call_bench_runs() {
    let out = run_example("mpi_call_bench", &["1000", "2"]);
    for case in ["| barrier |", "| allreduce |", "| isend+irecv+waitall |"] {
        figures(&out, case);
    }
}

#[test]
fn unify_bench_runs() {
    let out = run_example("unify_bench", &["2", "2", "10"]);
    figures(
        &out,
        "unify_bench: pomptrace unify of 2 ranks x 2 threads took ",
    );
}

#[test]
fn syncbench_runs() {
    let out = run_example(
        "syncbench",
        &[
            "--threads",
            "1,2",
            "--outer",
            "2",
            "--constructs",
            "parallel,lock",
            "--warm-up",
            "0",
        ],
    );
    for threads in [1, 2] {
        figures(
            &out,
            &format!("syncbench {threads} threads: worst ns/event ÷ tsc = "),
        );
    }
    figures(
        &out,
        "syncbench 2 threads: the writer's threads used the CPU for ",
    );
}
