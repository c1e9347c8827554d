//! Acceptance of MPI + OpenMP tracing: the hybrid Jacobi solver of c-tests/mpi_jacobi.c,
//! instrumented by opari2, run by Open MPI's mpirun as 4 ranks of 2 OpenMP threads, read back
//! by both reference readers (the python otf2 module and otf2-print).

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::mpi::{build_instrumented, mpi_library, mpirun, mpirun_ok, Job};
use support::pomp2::{pomptrace_command, program, Link, View};
use support::{otf2_print, run, Scratch};

const RANKS: u32 = 4;
const THREADS: u32 = 2;
const ITERATIONS: usize = 20;

/// The one experiment directory the job wrote in `cwd` (named by default).
fn only_experiment(cwd: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(cwd)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "expected one experiment directory: {dirs:?}");
    let name = dirs[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("pomptrace-mpi_jacobi-job"), "{name}");
    dirs[0].clone()
}

/// 4 location groups "MPI Rank r" of 2 thread locations each, ids `thread << 32 | rank`.
fn assert_four_ranks_of_two_threads(view: &View) {
    let groups: BTreeSet<&String> = view.location_groups.values().collect();
    let expected: BTreeSet<String> = (0..RANKS).map(|r| format!("MPI Rank {r}")).collect();
    assert_eq!(groups, expected.iter().collect());
    for r in 0..u64::from(RANKS) {
        let locations: Vec<u64> = view
            .location_groups
            .iter()
            .filter(|(_, g)| **g == format!("MPI Rank {r}"))
            .map(|(&l, _)| l)
            .collect();
        assert_eq!(locations, vec![r, (1 << 32) | r], "rank {r}");
    }
}

#[test]
fn rank_detection_alone_writes_one_archive_with_a_location_group_per_rank() {
    let scratch = Scratch::new("mpi-ranks-only");
    let exe = build_instrumented(&scratch.path, "mpi_jacobi.c", "mpi_jacobi", Link::Shared);
    let cwd = scratch.join("run");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = mpirun_ok(&cwd, &exe, RANKS, THREADS, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ranks 4 threads 2"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr
            .matches("pomptrace: trace of 4 ranks written to")
            .count(),
        1,
        "one rank unifies:\n{stderr}"
    );
    assert_eq!(stderr.matches("wrote its part of").count(), 3, "{stderr}");
    let experiment = only_experiment(&cwd);
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    assert_four_ranks_of_two_threads(&view);
    assert!(
        view.regions.values().all(|r| r.paradigm != "MPI"),
        "no MPI regions without the MPI library"
    );
    // `pomptrace summary` names each thread with its rank.
    let summary = run(Command::new(pomptrace_command())
        .args(["summary", "--by-thread"])
        .arg(experiment.join("traces.otf2")));
    let summary = String::from_utf8_lossy(&summary.stdout);
    for r in 0..RANKS {
        for thread in ["Master thread", "OMP thread 1"] {
            assert!(
                summary.contains(&format!("MPI Rank {r}: {thread}")),
                "{summary}"
            );
        }
    }
    // Every rank's threads ran the same OpenMP regions: 2 loops per iteration plus the
    // final sum, on both threads of every rank.
    for r in 0..u64::from(RANKS) {
        for l in [r, (1 << 32) | r] {
            let loops = view.events[&l]
                .iter()
                .filter(|e| e.kind == "Enter" && e.detail[0].starts_with("!$omp for"))
                .count();
            assert_eq!(loops, ITERATIONS + 1, "location {l}");
        }
    }

    // A second job sent to the same directory finds the first job's trace there: every rank
    // gives way to the one directory named after the new job, and the first trace is untouched.
    let before = std::fs::read(experiment.join("traces.def")).unwrap();
    let out = mpirun_ok(
        &cwd,
        &exe,
        RANKS,
        THREADS,
        &[(
            "POMPTRACE_EXPERIMENT_DIRECTORY",
            experiment.to_str().unwrap(),
        )],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr
            .matches("already holds a trace; writing this trace to")
            .count(),
        RANKS as usize,
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(experiment.join("traces.def")).unwrap(),
        before
    );
    let second: Vec<PathBuf> = std::fs::read_dir(&cwd)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p != &experiment)
        .collect();
    assert_eq!(second.len(), 1, "{second:?}");
    let name = second[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let first_name = experiment
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with(&format!("{first_name}-job")), "{name}");
    let view = View::read(&second[0].join("traces.otf2"));
    view.assert_well_formed();
    assert_four_ranks_of_two_threads(&view);
    // The journals, the ranks' locks and the unifier's marker went with the finished run.
    for r in 0..RANKS {
        assert!(!second[0].join(format!("traces.rank{r}.journal")).exists());
    }
    for dir in [second[0].clone(), second[0].join("ranks")] {
        let leftovers: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".lock") || name == ".unifying")
            .collect();
        assert!(leftovers.is_empty(), "{}: {leftovers:?}", dir.display());
    }
}

/// The Jacobi with the MPI library preloaded, its trace in `<scratch>/trace`.
fn run_with_library(label: &str, env: &[(&str, &str)]) -> (Scratch, PathBuf, Output) {
    let scratch = Scratch::new(label);
    let exe = build_instrumented(&scratch.path, "mpi_jacobi.c", "mpi_jacobi", Link::Shared);
    let library = mpi_library();
    let experiment = scratch.join("trace");
    let mut env = env.to_vec();
    env.push(("LD_PRELOAD", library.to_str().unwrap()));
    env.push((
        "POMPTRACE_EXPERIMENT_DIRECTORY",
        experiment.to_str().unwrap(),
    ));
    let out = mpirun(&scratch.path, &exe, RANKS, THREADS, &env);
    (scratch, experiment, out)
}

#[test]
fn the_mpi_library_traces_calls_messages_collectives_and_clock_offsets() {
    let (_scratch, experiment, out) = run_with_library("mpi-jacobi", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("internal error"), "{stderr}");
    let anchor = experiment.join("traces.otf2");
    let view = View::read(&anchor);
    view.assert_well_formed();
    assert_four_ranks_of_two_threads(&view);

    support::mpi::assert_jacobi_trace(&view, &anchor, RANKS, ITERATIONS);
}

/// `pomptrace unify` on a job that ended without its anchor; returns its report.
fn unify(experiment: &Path) -> String {
    let unify = run(Command::new(pomptrace_command())
        .arg("unify")
        .arg(experiment));
    String::from_utf8_lossy(&unify.stdout).into_owned()
}

/// Event files set aside by an earlier unification (there must be none).
fn set_aside(experiment: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(experiment.join("traces"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".lost"))
        .collect()
}

#[test]
fn a_rank_killed_after_its_last_mpi_call_is_unified_from_its_journal() {
    let (_scratch, experiment, out) =
        run_with_library("mpi-killed", &[("MPI_JACOBI_KILL_RANK", "2")]);
    assert!(!out.status.success(), "the job fails");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let anchor = experiment.join("traces.otf2");
    assert!(
        !anchor.exists(),
        "no rank could unify a job that lost a rank"
    );
    let parts = experiment.join("ranks");
    for r in [0, 1, 3] {
        assert!(
            parts.join(format!("{r}.otf2")).exists(),
            "rank {r} wrote its part:\n{stderr}"
        );
    }
    assert!(!parts.join("2.otf2").exists());
    assert!(experiment.join("traces.rank2.journal").exists());

    let stdout = unify(&experiment);
    // Rank 2 wrote its journal at MPI_Finalize; its events, less than one chunk, were still
    // in memory when it died.
    assert!(
        stdout.contains(
            "rank 2 did not finish: its part was rebuilt from its journal (2 locations, 0 \
             events in 0 chunks)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("(4 ranks, 8 locations)"), "{stdout}");
    assert!(!stdout.contains("wrote no definitions"), "{stdout}");
    assert!(set_aside(&experiment).is_empty());
    let view = View::read(&anchor);
    view.assert_well_formed();
    assert_four_ranks_of_two_threads(&view);
    // Its communicators came from its journal: the world is one Comm of all 4 ranks.
    let worlds: Vec<&support::pomp2::Comm> = view
        .comms
        .values()
        .filter(|c| c.name == "MPI_COMM_WORLD")
        .collect();
    assert_eq!(worlds.len(), 1);
    assert_eq!(worlds[0].members.len(), RANKS as usize);
    // The messages between the ranks that wrote their part all match; what rank 2 sent
    // and received is lost with it.
    let job = Job { view: &view };
    let (sends, receives) = job.messages();
    let between_survivors = |m: &&(u64, u64, u32, u64, u64)| m.0 != 2 && m.1 != 2;
    let sends: Vec<_> = sends.iter().filter(between_survivors).collect();
    let receives: Vec<_> = receives.iter().filter(between_survivors).collect();
    assert_eq!(sends.len(), 2 * ITERATIONS, "ranks 0 and 1 exchanged halos");
    assert_eq!(sends, receives);

    // A second unify refuses to overwrite the archive.
    let again = Command::new(pomptrace_command())
        .arg("unify")
        .arg(&experiment)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already unified"));
}

#[test]
fn a_rank_killed_mid_run_is_unified_with_its_events_up_to_its_last_whole_chunk() {
    let scratch = Scratch::new("mpi-killed-mid-run");
    let exe = build_instrumented(&scratch.path, "mpi_jacobi.c", "mpi_jacobi", Link::Shared);
    let experiment = scratch.join("trace");
    let env = [
        ("LD_PRELOAD", mpi_library().to_str().unwrap().to_string()),
        (
            "POMPTRACE_EXPERIMENT_DIRECTORY",
            experiment.to_str().unwrap().to_string(),
        ),
        // The smallest chunks, each written as it fills: rank 2 has several on disk when it
        // dies.
        ("POMPTRACE_CHUNK_SIZE", "256K".into()),
        ("POMPTRACE_KEEP_IN_MEMORY", "0".into()),
        ("MPI_JACOBI_KILL_RANK", "2".into()),
        ("MPI_JACOBI_KILL_AT_ITERATION", "1500".into()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out =
        support::mpi::mpirun_with_args(&scratch.path, &exe, &["64", "2000"], RANKS, THREADS, &env);
    assert!(!out.status.success(), "the job fails");
    assert!(!experiment.join("traces.otf2").exists());
    assert!(experiment.join("traces.rank2.journal").exists());
    let stdout = unify(&experiment);
    assert!(
        stdout.contains("rank 2 did not finish: its part was rebuilt from its journal"),
        "{stdout}"
    );
    assert!(stdout.contains("(4 ranks, 8 locations)"), "{stdout}");
    assert!(set_aside(&experiment).is_empty());

    let anchor = experiment.join("traces.otf2");
    let view = View::read(&anchor);
    // Rank 2's last whole chunk may end inside a region.
    view.assert_well_formed_but_cut_off(&[2, (1 << 32) | 2]);
    otf2_print(&[], &anchor, &[]);
    assert_four_ranks_of_two_threads(&view);
    let job = Job { view: &view };
    let calls = job.mpi_calls();
    // Every rank is there with its events. The killed one has what its whole chunks hold: a
    // prefix of its 1500 iterations, each of them complete up to where a chunk ended.
    for r in 0..u64::from(RANKS) {
        let allreduces = calls.get(&r).and_then(|c| c.get("MPI_Allreduce")).copied();
        let allreduces = allreduces.unwrap_or(0);
        if r == 2 {
            assert!(
                (10..=1500).contains(&allreduces),
                "rank 2 reduced {allreduces} times before it died"
            );
        } else {
            assert!(allreduces >= 1400, "rank {r}: {allreduces}");
        }
    }
    for location in [2u64, (1 << 32) | 2] {
        let (_, defined) = view.locations[&location];
        let events = view.events.get(&location).map_or(&[][..], Vec::as_slice);
        let read = events.len() as u64;
        // Its master thread filled chunks; its worker may not have filled one whole chunk.
        assert!(location != 2 || read > 0, "location {location} has events");
        assert_eq!(
            defined, read,
            "location {location}: as many events as defined"
        );
        assert!(
            events.iter().all(|e| e.kind != "ProgramEnd"),
            "killed: no ProgramEnd"
        );
    }
    // Each message rank 2 sent or received before it died has its other side.
    let (sends, receives) = job.messages();
    let of_rank_2 = |m: &&(u64, u64, u32, u64, u64)| m.0 == 2 || m.1 == 2;
    let sent_by_2: Vec<_> = sends
        .iter()
        .filter(of_rank_2)
        .filter(|m| m.0 == 2)
        .collect();
    assert!(!sent_by_2.is_empty());
    for m in sent_by_2 {
        assert!(receives.contains(m), "{m:?} was received");
    }
}

#[test]
fn a_process_using_mpi_without_a_launcher_writes_an_archive_of_its_own() {
    let scratch = Scratch::new("mpi-singleton");
    let exe = build_instrumented(&scratch.path, "mpi_jacobi.c", "mpi_jacobi", Link::Shared);
    let library = mpi_library();
    let experiment = scratch.join("trace");
    // Open MPI's singleton start: no mpirun, so no launcher variables.
    let out = run(program(&exe)
        .env("OMP_NUM_THREADS", "2")
        .env("LD_PRELOAD", &library)
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .env_remove("OMPI_COMM_WORLD_RANK")
        .env_remove("PMIX_RANK"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("pomptrace: trace written to"), "{stderr}");
    // Both readers without a complaint (View::read checks that), the MPI Comms numbered
    // after the OpenMP teams' as otf2-print wants them.
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    assert_eq!(
        view.location_groups.values().collect::<BTreeSet<_>>(),
        BTreeSet::from([&"Process".to_string()])
    );
    let world = view
        .comms
        .iter()
        .find(|(_, c)| c.name == "MPI_COMM_WORLD")
        .unwrap();
    assert_eq!(world.1.members, vec![0]);
    assert!(*world.0 < 10, "dense comm ids: {:?}", view.comms.keys());
    let job = Job { view: &view };
    assert_eq!(job.mpi_calls()[&0]["MPI_Allreduce"], ITERATIONS);
}
