//! How long `pomptrace unify` takes, and how much memory, for a job of RANKS ranks of THREADS
//! threads: generates the job's experiment directory as its ranks write it, then times the
//! command on it.
//!
//! Each rank is a real process: `examples/unify_bench/rank.c`, instrumented by opari2 and linked
//! against this build's libpomptrace, run with the launcher variables of rank r of RANKS
//! (`OMPI_COMM_WORLD_RANK`/`_SIZE`) and OMP_NUM_THREADS=THREADS, several at a time. It records
//! ITERATIONS worksharing loops per thread and defines what the MPI wrapper library defines at
//! MPI_Init (MPI_COMM_WORLD, MPI_COMM_SELF, a communicator per 16 ranks, clock offsets), so that
//! its part holds what a hybrid MPI rank's holds. The last rank to finish unifies the job, as in
//! a real job; the benchmark then removes the unified anchor and definitions and runs
//! `pomptrace unify DIR` itself, taking its wall time and peak RSS (wait4's ru_maxrss).
//!
//! Run: `cargo run --release --example unify_bench -- RANKS THREADS [ITERATIONS [JOBS]]`
//! (defaults: ITERATIONS 10; JOBS, the ranks run at once, 4). Unification reads definitions
//! only: its memory does not grow with ITERATIONS (compare two runs).

#[path = "common/library_dir.rs"]
mod library_dir;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

// The code behind `pomptrace init-regions` (the example does not need the binary for it).
#[allow(dead_code)]
#[path = "../crates/cli/src/init_regions.rs"]
mod init_regions;

/// Runs a build tool; panics with its output when it fails.
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

fn usage() -> ! {
    eprintln!("usage: unify_bench RANKS THREADS [ITERATIONS [JOBS]]");
    std::process::exit(2)
}

/// Builds rank.c instrumented against the library in `lib`.
fn build_rank(lib: &Path, work: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("examples/unify_bench/rank.c"),
        work.join("rank.c"),
    )
    .unwrap();
    run_tool(
        Command::new("opari2")
            .args(["rank.c", "rank.mod.c"])
            .current_dir(work),
    );
    let include = root.join("include");
    let object = work.join("rank.o");
    run_tool(
        Command::new("cc")
            .args(["-O2", "-fopenmp", "-I"])
            .arg(&include)
            .arg("-c")
            .arg(work.join("rank.mod.c"))
            .arg("-o")
            .arg(&object),
    );
    let listing = init_regions::nm_listing(&init_regions::nm_program(), &object)
        .unwrap_or_else(|e| panic!("nm: {e}"));
    let mut regions = init_regions::InitRegions::default();
    regions.add_nm_output(&listing);
    let init = work.join("pomp2_init.c");
    std::fs::write(&init, regions.to_c()).unwrap();
    let exe = work.join("rank");
    run_tool(
        Command::new("cc")
            .args(["-O2", "-fopenmp"])
            .arg(&object)
            .arg(&init)
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lpomptrace"),
    );
    exe
}

/// Builds the `pomptrace` command in this example's profile; returns its path.
fn build_command(profile_dir: &Path) -> PathBuf {
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_string(),
        Some(name) => name.to_string(),
        None => panic!("no profile in {}", profile_dir.display()),
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    run_tool(
        Command::new(cargo)
            .args([
                "build",
                "--quiet",
                "-p",
                "pomptrace-cli",
                "--profile",
                &profile,
            ])
            .arg("--manifest-path")
            .arg(&manifest)
            .arg("--target-dir")
            .arg(profile_dir.parent().expect("target dir")),
    );
    profile_dir.join("pomptrace")
}

/// Starts rank `rank` of `ranks`.
fn start_rank(
    exe: &Path,
    experiment: &Path,
    rank: u32,
    ranks: u32,
    threads: u32,
    iterations: u32,
) -> Child {
    Command::new(exe)
        .arg(iterations.to_string())
        .env("OMPI_COMM_WORLD_RANK", rank.to_string())
        .env("OMPI_COMM_WORLD_SIZE", ranks.to_string())
        .env("OMPI_MCA_ess_base_jobid", "unify_bench")
        .env("OMP_NUM_THREADS", threads.to_string())
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", experiment)
        .env("POMPTRACE_VERBOSE", "0")
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()))
}

/// Runs the command, returning (wall seconds, peak RSS in KiB, its standard output).
// Waited for by wait4, which also gives its peak RSS.
#[allow(clippy::zombie_processes)]
fn timed(command: &mut Command) -> (f64, i64, String) {
    let started = Instant::now();
    let child = command
        .stdout(Stdio::piped())
        .spawn()
        .expect("run pomptrace unify");
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).ok();
        text
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not waited for elsewhere; both pointers are valid.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(waited, pid, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "pomptrace unify failed"
    );
    (seconds, usage.ru_maxrss, reader.join().unwrap_or_default())
}

fn directory_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => directory_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<u32> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap_or_else(|_| usage()))
        .collect();
    let (ranks, threads) = match args[..] {
        [r, t, ..] if r > 0 && t > 0 => (r, t),
        _ => usage(),
    };
    let iterations = args.get(2).copied().unwrap_or(10);
    let jobs = args.get(3).copied().unwrap_or(4).max(1);

    let lib = library_dir::fresh_library_dir();
    let command = build_command(&lib);
    let work = std::env::temp_dir().join(format!("pomptrace-unify_bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let exe = build_rank(&lib, &work);
    let experiment = work.join("job");

    let started = Instant::now();
    let mut running: Vec<Child> = Vec::new();
    for rank in 0..ranks {
        if running.len() as u32 >= jobs {
            let mut first = running.remove(0);
            assert!(first.wait().unwrap().success(), "a rank failed");
        }
        running.push(start_rank(
            &exe,
            &experiment,
            rank,
            ranks,
            threads,
            iterations,
        ));
    }
    for mut child in running {
        assert!(child.wait().unwrap().success(), "a rank failed");
    }
    let generated = started.elapsed().as_secs_f64();
    let anchor = experiment.join("traces.otf2");
    assert!(anchor.exists(), "the last rank unified the job");
    // What `pomptrace unify` would find after a job whose last rank did not unify it (the
    // unifier's marker is gone already once it wrote the anchor).
    for file in ["traces.otf2", "traces.def"] {
        std::fs::remove_file(experiment.join(file)).unwrap();
    }
    let bytes = directory_bytes(&experiment);
    println!(
        "unify_bench: {ranks} ranks x {threads} threads, {iterations} iterations: generated in \
         {generated:.1} s ({} MB)",
        bytes / 1_000_000
    );
    let (seconds, rss_kib, report) = timed(Command::new(&command).arg("unify").arg(&experiment));
    print!("{report}");
    println!(
        "unify_bench: pomptrace unify of {ranks} ranks x {threads} threads took {seconds:.2} s, \
         peak RSS {:.1} MiB",
        rss_kib as f64 / 1024.0
    );
    let _ = std::fs::remove_dir_all(&work);
}
