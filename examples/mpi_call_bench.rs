//! What tracing adds to an MPI call: builds `examples/mpi_call_bench/mpi_call_bench.c` with
//! `mpicc` (a plain MPI program) and `libpomptrace_mpi.so` against this build's library, runs
//! the program as one rank plainly and with the wrapper library preloaded (trace in
//! `/dev/shm`), and prints ns per call for each, side by side.
//!
//! Cases: `MPI_Barrier` (Enter, MpiCollectiveBegin, MpiCollectiveEnd, Leave), `MPI_Allreduce`
//! of one double (the same four events) and a message to itself, `MPI_Irecv` + `MPI_Isend` +
//! `MPI_Waitall` (three calls; 10 events and two request-table operations). One rank: the
//! numbers hold no partner's speed.
//!
//! Run: `cargo run --release --example mpi_call_bench [CALLS [ROUNDS]]`

#[path = "common/library_dir.rs"]
mod library_dir;
use library_dir::fresh_library_dir;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn build(args: &mut Command, what: &str) {
    let status = args
        .status()
        .unwrap_or_else(|e| panic!("cannot run mpicc: {e}"));
    assert!(status.success(), "building {what} failed");
}

fn run(
    exe: &Path,
    calls: &str,
    rounds: &str,
    preload: Option<&Path>,
    trace: &Path,
) -> BTreeMap<String, f64> {
    let mut cmd = Command::new("mpirun");
    cmd.args(["-np", "1", "--allow-run-as-root"]);
    if let Some(lib) = preload {
        cmd.args(["-x", &format!("LD_PRELOAD={}", lib.display())]);
        cmd.args([
            "-x",
            &format!("POMPTRACE_EXPERIMENT_DIRECTORY={}", trace.display()),
        ]);
    }
    let out = cmd
        .arg(exe)
        .args([calls, rounds])
        .output()
        .expect("run mpirun");
    assert!(
        out.status.success(),
        "mpi_call_bench failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (name, ns) = l.rsplit_once(' ')?;
            Some((name.to_string(), ns.parse().ok()?))
        })
        .collect()
}

fn main() {
    let calls = std::env::args().nth(1).unwrap_or_else(|| "200000".into());
    let rounds = std::env::args().nth(2).unwrap_or_else(|| "5".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = fresh_library_dir();
    let work = std::env::temp_dir().join(format!("pomptrace-mpibench-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work dir");
    let exe = work.join("mpi_call_bench");
    build(
        Command::new("mpicc")
            .arg("-O2")
            .arg(root.join("examples/mpi_call_bench/mpi_call_bench.c"))
            .arg("-o")
            .arg(&exe),
        "the benchmark",
    );
    let wrappers = work.join("libpomptrace_mpi.so");
    build(
        Command::new("mpicc")
            .args(["-shared", "-fPIC", "-O2", "-I"])
            .arg(root.join("include"))
            .arg(root.join("src/mpi/pomptrace_mpi.c"))
            .arg("-L")
            .arg(&lib)
            .arg("-lpomptrace")
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-o")
            .arg(&wrappers),
        "libpomptrace_mpi.so",
    );
    let shm = Path::new("/dev/shm");
    let trace = if shm.is_dir() { shm } else { work.as_path() }
        .join(format!("pomptrace-mpibench-{}", std::process::id()));
    let plain = run(&exe, &calls, &rounds, None, &trace);
    let traced = run(&exe, &calls, &rounds, Some(&wrappers), &trace);
    let _ = std::fs::remove_dir_all(&trace);
    let _ = std::fs::remove_dir_all(&work);

    println!("| case | MPI calls | events | plain ns | traced ns | added ns per call | ratio |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (case, mpi_calls, events) in [
        ("barrier", 1.0, 4),
        ("allreduce", 1.0, 4),
        ("isend+irecv+waitall", 3.0, 10),
    ] {
        let (p, t) = (plain[case], traced[case]);
        println!(
            "| {case} | {mpi_calls} | {events} | {p:.1} | {t:.1} | {:.1} | {:.2} |",
            (t - p) / mpi_calls,
            t / p
        );
    }
}
