//! Acceptance of the profile of an MPI job: the hybrid Jacobi solver (c-tests/mpi_jacobi.c)
//! with the MPI wrapper library, run by Open MPI's mpirun as 4 ranks of 2 OpenMP threads with
//! profiling and tracing on. One profile for the job (`profile.cubex`, merged by the last rank
//! from the ranks' parts), the ranks as processes; pycubexr reads it, and for every call path
//! and thread it agrees exactly with the job's unified trace (tests/support/profile_check.py).
//! `pomptrace unify` merges the parts again into the same profile.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::mpi::{build_instrumented, mpirun_ok};
use support::pomp2::{pomptrace_command, Link};
use support::{repo_root, run, Scratch};

const RANKS: u32 = 4;
const THREADS: u32 = 2;

/// The one experiment directory the job wrote in `cwd`.
fn only_experiment(cwd: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(cwd)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "expected one experiment directory: {dirs:?}");
    dirs[0].clone()
}

/// The checker's table (location group, location, visits, path) and summary line.
fn check(dir: &Path, with_trace: bool) -> (Vec<(String, String, u64, String)>, String) {
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg(repo_root().join("tests/support/profile_check.py"));
    if with_trace {
        cmd.arg(dir.join("traces.otf2"));
    }
    let out = run(cmd.arg(dir.join("profile.cubex")));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows = text
        .lines()
        .filter_map(|l| l.strip_prefix("PATH\t"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].into(), f[1].into(), f[2].parse().unwrap(), f[4].into())
        })
        .collect();
    let summary = text
        .lines()
        .find(|l| l.starts_with("checked "))
        .unwrap_or("")
        .to_string();
    (rows, summary)
}

#[test]
fn an_mpi_job_writes_one_profile_with_its_ranks_as_processes() {
    let scratch = Scratch::new("profile-mpi");
    let exe = build_instrumented(
        &scratch.path,
        "mpi_jacobi.c",
        "mpi_jacobi",
        Link::SharedWithMpi,
    );
    let cwd = scratch.join("run");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = mpirun_ok(
        &cwd,
        &exe,
        RANKS,
        THREADS,
        &[("POMPTRACE_ENABLE_PROFILING", "1")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("profile of 4 ranks written to").count(),
        1,
        "one rank merges the profile:\n{stderr}"
    );
    assert_eq!(
        stderr.matches("wrote its part of the profile").count(),
        3,
        "{stderr}"
    );
    let experiment = only_experiment(&cwd);
    let (rows, summary) = check(&experiment, true);
    assert!(summary.ends_with(" call paths on 8 locations"), "{summary}");
    // 4 processes "MPI Rank r" of 2 threads each, every one under the program's root.
    let threads: BTreeSet<(String, String)> = rows
        .iter()
        .filter(|(_, _, _, path)| !path.contains(" / "))
        .map(|(g, l, _, _)| (g.clone(), l.clone()))
        .collect();
    let expected: BTreeSet<(String, String)> = (0..RANKS)
        .flat_map(|r| {
            ["Master thread", "OMP thread 1"].map(|l| (format!("MPI Rank {r}"), l.to_string()))
        })
        .collect();
    assert_eq!(threads, expected);
    // MPI calls are call paths of their own, on every rank.
    let mpi_ranks: BTreeSet<&String> = rows
        .iter()
        .filter(|(_, _, visits, path)| *visits > 0 && path.contains(" / MPI_"))
        .map(|(g, _, _, _)| g)
        .collect();
    assert_eq!(mpi_ranks.len(), RANKS as usize, "{rows:?}");

    // `pomptrace unify` merges the parts into the same profile.
    let profile = experiment.join("profile.cubex");
    let first = check(&experiment, false).0;
    std::fs::remove_file(&profile).unwrap();
    let out = run(Command::new(pomptrace_command())
        .arg("unify")
        .arg(&experiment));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("profile written to {}", profile.display())),
        "{stdout}"
    );
    assert_eq!(check(&experiment, false).0, first);
}
