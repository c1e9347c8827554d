//! MPI the way users build it: `pomptrace mpicc` (or `CC="pomptrace mpicc"` in a Makefile,
//! `pomptrace mpif90`) and nothing else, no -l, no preload: the programs' MPI calls, messages
//! and collectives are traced, and the ranks record with the TSC where it is invariant. Read
//! back by both reference readers (the python `otf2` module through `View`, and otf2-print).

mod support;

use std::path::Path;
use std::process::Command;

use support::mpi::{assert_jacobi_trace, build_with_wrapper, mpirun_ok, printed_messages, Job};
use support::pomp2::{pomptrace_command, View};
use support::{otf2_print, run, Scratch};

const RANKS: u32 = 4;
const THREADS: u32 = 2;
const ITERATIONS: usize = 20;

/// Whether the CPU's TSC is invariant (constant rate, running in every state), as the kernel
/// reports it: then every rank records with it unless told otherwise.
fn invariant_tsc() -> bool {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let flags = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
    has("constant_tsc") && has("nonstop_tsc")
}

/// The shared libraries `exe` loads (ldd's names).
fn loaded_libraries(exe: &Path) -> String {
    String::from_utf8_lossy(&run(Command::new("ldd").arg(exe)).stdout).into_owned()
}

fn directory_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let md = e.metadata().unwrap();
            if md.is_dir() {
                directory_bytes(&e.path())
            } else {
                md.len()
            }
        })
        .sum()
}

/// Runs `exe` as RANKS ranks of THREADS threads; its trace in `dir/trace`.
fn run_job(dir: &Path, exe: &Path, env: &[(&str, &str)]) -> (String, View, std::path::PathBuf) {
    let experiment = dir.join("trace");
    let mut env = env.to_vec();
    env.push((
        "POMPTRACE_EXPERIMENT_DIRECTORY",
        experiment.to_str().unwrap(),
    ));
    let out = mpirun_ok(dir, exe, RANKS, THREADS, &env);
    let anchor = experiment.join("traces.otf2");
    let view = View::read(&anchor);
    view.assert_well_formed();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        view,
        anchor,
    )
}

#[test]
fn the_hybrid_jacobi_built_by_pomptrace_mpicc_alone() {
    let scratch = Scratch::new("mpi-build-mpicc");
    let source = support::repo_root().join("c-tests/mpi_jacobi.c");
    build_with_wrapper(
        &scratch.path,
        "mpicc",
        &[
            "-fopenmp",
            "-O2",
            source.to_str().unwrap(),
            "-o",
            "mpi_jacobi",
        ],
    );
    let exe = scratch.join("mpi_jacobi");
    let libraries = loaded_libraries(&exe);
    assert!(libraries.contains("libpomptrace_mpi.so"), "{libraries}");
    assert!(libraries.contains("libpomptrace.so"), "{libraries}");
    let (stdout, view, anchor) = run_job(&scratch.path, &exe, &[]);
    assert!(stdout.contains("ranks 4 threads 2"), "{stdout}");
    assert_jacobi_trace(&view, &anchor, RANKS, ITERATIONS);
    // Each rank's closing line counts its own files: together no more than the directory.
    let stderr = std::fs::read_to_string(scratch.join("mpirun.stderr")).unwrap();
    let bytes: Vec<u64> = stderr
        .lines()
        .filter(|l| l.starts_with("pomptrace: ") && l.contains(" events, "))
        .map(|l| {
            let end = l.rfind(" bytes)").unwrap();
            l[l[..end].rfind(' ').unwrap() + 1..end].parse().unwrap()
        })
        .collect();
    assert_eq!(bytes.len(), RANKS as usize, "{stderr}");
    let total = directory_bytes(anchor.parent().unwrap());
    assert!(bytes.iter().sum::<u64>() <= total, "{bytes:?} of {total}");
    // The ranks' clock: the TSC where it is invariant (its rate is not 1 GHz, the monotonic
    // clock's), and every rank's thread locations are there.
    assert_eq!(
        view.timer_resolution != 1_000_000_000,
        invariant_tsc(),
        "timer resolution {}",
        view.timer_resolution
    );
    assert_eq!(view.locations.len(), (RANKS * THREADS) as usize);
}

#[test]
fn a_makefile_project_built_with_cc_pomptrace_mpicc() {
    let scratch = Scratch::new("mpi-build-make");
    let from = support::repo_root().join("c-tests/projects/make_mpi");
    run(Command::new("cp").arg("-r").arg(&from).arg(&scratch.path));
    let dir = scratch.join("make_mpi");
    run(Command::new("make")
        .arg("-s")
        .arg(format!("CC={} mpicc", pomptrace_command().display()))
        .current_dir(&dir)
        .env_remove("MAKEFLAGS")
        .env_remove("POMPTRACE_NO_MPI"));
    let exe = dir.join("jacobi");
    // POMPTRACE_CLOCK=monotonic gives the old clock back.
    let (stdout, view, anchor) = run_job(&scratch.path, &exe, &[("POMPTRACE_CLOCK", "monotonic")]);
    assert!(stdout.contains("ranks 4 threads 2"), "{stdout}");
    assert_jacobi_trace(&view, &anchor, RANKS, ITERATIONS);
    assert_eq!(view.timer_resolution, 1_000_000_000);
    // The OpenMP loop of sweep.c, in its own file, on both threads of every rank.
    let sweeps = view
        .events
        .values()
        .flatten()
        .filter(|e| e.kind == "Enter" && e.detail[0].starts_with("!$omp for @sweep.c"))
        .count();
    assert_eq!(sweeps, RANKS as usize * THREADS as usize * ITERATIONS);
}

#[test]
fn no_mpi_leaves_the_mpi_library_out() {
    let scratch = Scratch::new("mpi-build-no-mpi");
    let source = support::repo_root().join("c-tests/mpi_jacobi.c");
    run(Command::new(pomptrace_command())
        .args(["--no-mpi", "mpicc", "-fopenmp", "-O2"])
        .arg(&source)
        .args(["-o", "mpi_jacobi"])
        .current_dir(&scratch.path));
    let exe = scratch.join("mpi_jacobi");
    let libraries = loaded_libraries(&exe);
    assert!(!libraries.contains("libpomptrace_mpi"), "{libraries}");
    assert!(libraries.contains("libpomptrace.so"), "{libraries}");
    // Rank detection alone: one archive of all ranks, no MPI region.
    let (_, view, _) = run_job(&scratch.path, &exe, &[]);
    assert_eq!(view.locations.len(), (RANKS * THREADS) as usize);
    assert!(view.regions.values().all(|r| r.paradigm != "MPI"));
}

/// The MPI calls of c-tests/mpi_fortran.f90 or mpi_fortran_f08.f90 traced as a hybrid job
/// built by `pomptrace mpif90`: every message matched in both readers. Returns the view.
fn fortran_job(label: &str, source: &str, program: &str, openmp: bool) -> (Scratch, View, String) {
    let scratch = Scratch::new(label);
    let source = support::repo_root().join("c-tests").join(source);
    let mut args = vec!["-O1", source.to_str().unwrap(), "-o", program];
    if openmp {
        args.insert(0, "-fopenmp");
    }
    build_with_wrapper(&scratch.path, "mpif90", &args);
    let exe = scratch.join(program);
    let (stdout, view, anchor) = run_job(&scratch.path, &exe, &[]);
    assert!(stdout.contains("status ok"), "{stdout}");
    let job = Job { view: &view };
    let messages = job.assert_consistent();
    let printed = otf2_print(&[], &anchor, &[]);
    let (sends, receives) = printed_messages(&printed);
    assert_eq!(sends, receives, "otf2-print: sends and receives differ");
    assert_eq!(sends.len(), messages);
    (scratch, view, stdout)
}

#[test]
fn a_fortran_mpi_openmp_program_built_by_pomptrace_mpif90() {
    let (_scratch, view, stdout) =
        fortran_job("mpi-build-fortran", "mpi_fortran.f90", "mpi_fortran", true);
    assert!(
        stdout.contains("mpi_fortran ranks 4 total 96.0"),
        "{stdout}"
    );
    let job = Job { view: &view };
    // Every call of the program: 5 iterations of two Irecv, two Isend, a Waitall and an
    // Allreduce, and the calls around them.
    let calls = job.mpi_calls();
    for rank in 0..u64::from(RANKS) {
        let got: Vec<(&str, usize)> = calls[&rank].iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            got,
            [
                ("MPI_Allreduce", 5),
                ("MPI_Barrier", 1),
                ("MPI_Bcast", 1),
                ("MPI_Finalize", 1),
                ("MPI_Init_thread", 1),
                ("MPI_Irecv", 10),
                ("MPI_Isend", 10),
                ("MPI_Reduce", 1),
                ("MPI_Sendrecv", 1),
                ("MPI_Waitall", 5),
            ],
            "rank {rank}"
        );
    }
    // 2 halo messages per rank and iteration (a ring: none to MPI_PROC_NULL), and one
    // Sendrecv per rank; 8 doubles and one integer.
    let (sends, _) = job.messages();
    assert_eq!(sends.len(), RANKS as usize * (2 * 5 + 1));
    assert_eq!(
        sends.iter().filter(|m| m.4 == 64).count(),
        RANKS as usize * 10
    );
    // The OpenMP loop ran on both threads of every rank.
    let loops = view
        .events
        .values()
        .flatten()
        .filter(|e| e.kind == "Enter" && e.detail[0].starts_with("!$omp do"))
        .count();
    assert_eq!(loops, RANKS as usize * THREADS as usize * 5);
}

#[test]
fn a_fortran_program_using_mpi_f08() {
    let (_scratch, view, stdout) = fortran_job(
        "mpi-build-fortran-f08",
        "mpi_fortran_f08.f90",
        "mpi_fortran_f08",
        false,
    );
    assert!(
        stdout.contains("mpi_fortran_f08 ranks 4 total 12"),
        "{stdout}"
    );
    let job = Job { view: &view };
    let calls = job.mpi_calls();
    for rank in 0..u64::from(RANKS) {
        let got: Vec<(&str, usize)> = calls[&rank].iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            got,
            [
                ("MPI_Allreduce", 1),
                ("MPI_Finalize", 1),
                ("MPI_Init", 1),
                ("MPI_Irecv", 2),
                ("MPI_Isend", 2),
                ("MPI_Reduce", 1),
                ("MPI_Sendrecv", 1),
                ("MPI_Waitall", 1),
            ],
            "rank {rank}"
        );
    }
    assert_eq!(job.messages().0.len(), RANKS as usize * 3);
}
