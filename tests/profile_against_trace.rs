//! Acceptance of the call-path profile (`POMPTRACE_ENABLE_PROFILING=1`): OPARI2-instrumented C
//! programs run with profiling and tracing on together, and the reference readers read both
//! back: pycubexr the profile (`profile.cubex`), the python otf2 module the trace. For every
//! call path and every thread, the profile's visits must equal the trace's Enters on that call
//! path and its time the trace's inclusive time, exactly (tests/support/profile_check.py
//! rebuilds the call paths from the trace by the rules the profile documents). Over threads,
//! nested parallelism, tied and untied tasks, locks and user regions; then profiling without a
//! trace, and a profile that cannot be written.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::pomp2::{instrument, pomptrace_command, program, Build, View};
use support::{repo_root, run, Scratch};

/// One line of the checker's table: a call path on one location.
#[derive(Clone, Debug)]
struct Entry {
    location: String,
    visits: u64,
    seconds: f64,
    path: Vec<String>,
}

/// `c-tests/<file>` instrumented (with `opari_args`) and built against the shared library.
fn build(scratch: &Scratch, file: &str, opari_args: &[&str]) -> PathBuf {
    let source = instrument(file, &scratch.path, opari_args);
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    Build::c(&scratch.path).executable(&[source], stem)
}

/// Runs `exe` with `args` on `threads` threads into `dir`, profiling (and tracing unless
/// `env` says otherwise).
fn run_profiled(
    exe: &Path,
    args: &[&str],
    threads: u32,
    dir: &Path,
    env: &[(&str, &str)],
) -> Output {
    let _ = std::fs::remove_dir_all(dir);
    let mut cmd = program(exe);
    cmd.args(args)
        .env("OMP_NUM_THREADS", threads.to_string())
        .env("OMP_MAX_ACTIVE_LEVELS", "3")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", dir)
        .env("POMPTRACE_ENABLE_PROFILING", "1")
        .env_remove("POMPTRACE_ENABLE_TRACING")
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("LD_PRELOAD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// Runs the checker on `dir`'s profile (against its trace when `with_trace`); returns its
/// table. Fails the test when the two disagree.
fn check(dir: &Path, with_trace: bool) -> Vec<Entry> {
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg(repo_root().join("tests/support/profile_check.py"));
    if with_trace {
        cmd.arg(dir.join("traces.otf2"));
    }
    let out = run(cmd.arg(dir.join("profile.cubex")));
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    if with_trace {
        assert!(
            text.lines().any(|l| l.starts_with("checked ")),
            "no summary line:\n{text}"
        );
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("PATH\t"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Entry {
                location: format!("{}/{}", f[0], f[1]),
                visits: f[2].parse().unwrap(),
                seconds: f[3].parse().unwrap(),
                path: f[4].split(" / ").map(String::from).collect(),
            }
        })
        .collect()
}

/// Visits summed over locations, per call path (the root, the program, left out).
fn visits_by_path(entries: &[Entry]) -> BTreeMap<Vec<String>, u64> {
    let mut out = BTreeMap::new();
    for e in entries.iter().filter(|e| e.path.len() > 1) {
        *out.entry(e.path[1..].to_vec()).or_default() += e.visits;
    }
    out.retain(|_, v| *v > 0);
    out
}

/// The visits of every path whose last region's name starts with `prefix`.
fn visits_ending_in(entries: &[Entry], prefix: &str) -> u64 {
    entries
        .iter()
        .filter(|e| e.path.last().is_some_and(|r| r.starts_with(prefix)))
        .map(|e| e.visits)
        .sum()
}

#[test]
fn tied_tasks_count_once_each_and_recursion_adds_no_call_paths() {
    let scratch = Scratch::new("profile-fib");
    let exe = build(&scratch, "task_fib.c", &[]);
    for threads in [1, 2, 3] {
        let dir = scratch.join(&format!("t{threads}"));
        let out = run_profiled(&exe, &[], threads, &dir, &[]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("fib=6765"));
        let entries = check(&dir, true);
        // fib(20) with a cutoff at 8 creates 752 tasks; each is visited once.
        assert_eq!(
            visits_ending_in(&entries, "!$omp task @"),
            752,
            "{threads} threads"
        );
        // A task's tree hangs under the implicit task's call path where it ran: one task
        // region per path however deep the recursion went.
        for e in &entries {
            let tasks = e
                .path
                .iter()
                .filter(|r| r.starts_with("!$omp task @"))
                .count();
            assert!(tasks <= 1, "{:?}", e.path);
        }
        assert!(entries.len() < 60, "{} entries", entries.len());
        // The program's root: the initial thread, once.
        let root: Vec<&Entry> = entries.iter().filter(|e| e.path.len() == 1).collect();
        assert_eq!(root[0].path[0], "task_fib");
        assert_eq!(root.iter().map(|e| e.visits).sum::<u64>(), 1);
    }
}

#[test]
fn untied_tasks_and_their_children_count_once_each() {
    let scratch = Scratch::new("profile-untied");
    let exe = build(&scratch, "task_untied.c", &["--omp-task-untied=keep"]);
    for threads in [2, 4] {
        let dir = scratch.join(&format!("t{threads}"));
        run_profiled(&exe, &[], threads, &dir, &[]);
        let entries = check(&dir, true);
        let outer = "!$omp task @task_untied.c:17";
        let inner = "!$omp task @task_untied.c:20";
        assert_eq!(visits_ending_in(&entries, outer), 8);
        assert_eq!(visits_ending_in(&entries, inner), 40);
        // An outer task's taskwait only counts while the task runs: it is never longer than
        // the task's own time on any thread.
        for e in entries
            .iter()
            .filter(|e| e.path.last().is_some_and(|r| r == outer))
        {
            let waited: f64 = entries
                .iter()
                .filter(|w| {
                    w.location == e.location
                        && w.path.len() == e.path.len() + 1
                        && w.path.starts_with(&e.path)
                })
                .map(|w| w.seconds)
                .sum();
            assert!(waited <= e.seconds, "{e:?}: children {waited}");
        }
    }
}

#[test]
fn nested_teams_hang_under_the_forking_call_path() {
    let scratch = Scratch::new("profile-nested");
    let exe = build(&scratch, "nested_teams.c", &[]);
    let dir = scratch.join("run");
    let out = run_profiled(&exe, &["2", "3"], 2, &dir, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("threads=6"));
    let entries = check(&dir, true);
    let outer = "!$omp parallel @nested_teams.c:18";
    let inner = "!$omp parallel @nested_teams.c:20";
    let inner_path = vec!["nested_teams".to_string(), outer.into(), inner.into()];
    // Every one of the 6 threads runs the inner region under the outer one; only the 2 outer
    // threads visit the outer region, the 4 inner workers get its time without a visit.
    let on_inner: Vec<&Entry> = entries.iter().filter(|e| e.path == inner_path).collect();
    assert_eq!(on_inner.len(), 6, "{on_inner:?}");
    assert!(on_inner.iter().all(|e| e.visits == 1));
    let outer_visits: Vec<u64> = entries
        .iter()
        .filter(|e| e.path == inner_path[..2])
        .map(|e| e.visits)
        .collect();
    assert_eq!(outer_visits.len(), 6);
    assert_eq!(outer_visits.iter().sum::<u64>(), 2);
}

#[test]
fn locks_user_regions_and_the_other_constructs_agree_with_the_trace() {
    let scratch = Scratch::new("profile-families");
    for (file, must_have) in [
        ("fam_locks.c", "omp_set_lock"),
        ("fam_user.c", "!$pomp user(early)"),
        ("fam_sync.c", "!$omp critical"),
        ("fam_worksharing.c", "!$omp for"),
        ("fam_tasks.c", "!$omp task @"),
        ("task_if0.c", "!$omp task @"),
    ] {
        let exe = build(&scratch, file, &[]);
        for threads in [1, 3] {
            let dir = scratch.join(&format!("{file}-{threads}"));
            run_profiled(&exe, &[], threads, &dir, &[]);
            let entries = check(&dir, true);
            assert!(
                entries
                    .iter()
                    .any(|e| e.visits > 0 && e.path.last().unwrap().starts_with(must_have)),
                "{file}: no {must_have} in the profile"
            );
        }
    }
}

#[test]
fn profiling_alone_writes_the_profile_and_no_trace() {
    let scratch = Scratch::new("profile-alone");
    let exe = build(&scratch, "fam_user.c", &[]);
    let traced = scratch.join("traced");
    run_profiled(&exe, &[], 2, &traced, &[]);
    let alone = scratch.join("alone");
    let out = run_profiled(&exe, &[], 2, &alone, &[("POMPTRACE_ENABLE_TRACING", "0")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("pomptrace: profile written to") && !stderr.contains("trace written"),
        "{stderr}"
    );
    let mut files: Vec<String> = std::fs::read_dir(&alone)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    files.sort();
    assert_eq!(files, ["pomptrace.cfg", "profile.cubex"]);
    let config = std::fs::read_to_string(alone.join("pomptrace.cfg")).unwrap();
    assert!(config.contains("POMPTRACE_ENABLE_TRACING=0\n"), "{config}");
    assert!(
        config.contains("POMPTRACE_ENABLE_PROFILING=1\n"),
        "{config}"
    );
    // The same call paths with the same visits as the traced run's profile.
    let alone_visits = visits_by_path(&check(&alone, false));
    assert_eq!(alone_visits, visits_by_path(&check(&traced, true)));
    assert!(alone_visits.len() >= 5, "{alone_visits:?}");
    // A second run into the same directory leaves the profile alone and gives way.
    let mut cmd = program(&exe);
    let out = run(cmd
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &alone)
        .env("POMPTRACE_ENABLE_PROFILING", "1")
        .env("POMPTRACE_ENABLE_TRACING", "0"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("already holds a profile"), "{stderr}");
    assert_eq!(alone_visits, visits_by_path(&check(&alone, false)));
}

#[test]
fn both_switches_off_record_nothing_and_say_so() {
    let scratch = Scratch::new("profile-off");
    let exe = build(&scratch, "fam_user.c", &[]);
    let dir = scratch.join("run");
    let mut cmd = program(&exe);
    let out = run(cmd
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &dir)
        .env("POMPTRACE_ENABLE_TRACING", "0")
        .env_remove("POMPTRACE_ENABLE_PROFILING"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "pomptrace: POMPTRACE_ENABLE_TRACING=0 and POMPTRACE_ENABLE_PROFILING is not 1: \
         nothing will be recorded"
    );
    assert!(!dir.exists());
}

/// Runs paced_events (2 threads, 4000 visits each of 250 µs: a second at least) into `dir`,
/// puts a directory where its profile would go once the run has started, and returns its
/// stderr.
fn run_with_profile_blocked(exe: &Path, dir: &Path, tracing: bool) -> String {
    let _ = std::fs::remove_dir_all(dir);
    let child = program(exe)
        .args(["4000", "250"])
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", dir)
        .env("POMPTRACE_ENABLE_PROFILING", "1")
        .env("POMPTRACE_ENABLE_TRACING", if tracing { "1" } else { "0" })
        .env_remove("POMPTRACE_ENABLE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !dir.join("pomptrace.cfg").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    std::fs::create_dir(dir.join("profile.cubex")).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_profile_that_cannot_be_written_says_so_once_and_leaves_the_trace_whole() {
    let scratch = Scratch::new("profile-unwritable");
    let exe = support::pomp2::instrumented_c_program(&scratch.path, "paced_events.c");
    let dir = scratch.join("blocked");
    let stderr = run_with_profile_blocked(&exe, &dir, true);
    let lines: Vec<&str> = stderr.lines().collect();
    let profile = dir.join("profile.cubex");
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with(&format!(
                "pomptrace: cannot write the profile {}: ",
                profile.display()
            )) && l.ends_with("; the trace is written all the same"))
            .count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        lines.len(),
        2,
        "the message and the trace's summary line:\n{stderr}"
    );
    assert!(lines
        .iter()
        .any(|l| l.starts_with("pomptrace: trace written to")));
    let view = View::read(&dir.join("traces.otf2"));
    view.assert_well_formed();
    assert_eq!(view.enters_of("!$pomp user(paced)"), 2 * 4000);
    assert!(
        profile.is_dir(),
        "the directory in the way is left as it was"
    );
    // Without a trace the same message ends the run.
    let dir = scratch.join("blocked-alone");
    let stderr = run_with_profile_blocked(&exe, &dir, false);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "pomptrace: cannot write the profile {}: ",
            dir.join("profile.cubex").display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_directory_holding_a_profile_is_another_runs_and_a_traced_run_gives_way_too() {
    let scratch = Scratch::new("profile-given-way");
    let exe = build(&scratch, "fam_user.c", &[]);
    let dir = scratch.join("earlier");
    run_profiled(&exe, &[], 2, &dir, &[("POMPTRACE_ENABLE_TRACING", "0")]);
    let earlier = std::fs::read(dir.join("profile.cubex")).unwrap();
    let out = run(program(&exe)
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &dir)
        .env("POMPTRACE_ENABLE_PROFILING", "1")
        .env_remove("POMPTRACE_ENABLE_TRACING")
        .env_remove("POMPTRACE_ENABLE"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let own = format!("{}-{}", dir.display(), out_pid(&stderr));
    assert!(
        stderr.contains(&format!(
            "pomptrace: {} already holds a profile; writing this trace and profile to {own} \
             instead",
            dir.display()
        )),
        "{stderr}"
    );
    assert_eq!(std::fs::read(dir.join("profile.cubex")).unwrap(), earlier);
    assert!(!dir.join("traces.otf2").exists());
    check(Path::new(&own), true);
}

/// The process id in "writing this ... to DIR-PID instead".
fn out_pid(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.ends_with(" instead"))
        .unwrap_or_else(|| panic!("{stderr}"));
    let target = line.trim_end_matches(" instead");
    target.rsplit('-').next().unwrap().to_string()
}

#[test]
fn the_caps_fold_deep_and_new_call_paths_and_say_how_many() {
    let scratch = Scratch::new("profile-caps");
    let exe = build(&scratch, "fam_user.c", &[]);
    let dir = scratch.join("depth");
    let out = run_profiled(
        &exe,
        &[],
        2,
        &dir,
        &[
            ("POMPTRACE_PROFILE_MAX_DEPTH", "2"),
            ("POMPTRACE_ENABLE_TRACING", "0"),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("deeper than 2 regions (POMPTRACE_PROFILE_MAX_DEPTH)"),
        "{stderr}"
    );
    // The initial thread keeps 2 regions below the program's root; a team member 2 below
    // the call path its team was forked at (fam_user forks inside one user region).
    let entries = check(&dir, false);
    for e in &entries {
        let limit = if e.location.ends_with("/Master thread") {
            3
        } else {
            4
        };
        assert!(e.path.len() <= limit, "{e:?}");
    }
    let bad = scratch.join("bad");
    let out = run_profiled(
        &exe,
        &[],
        1,
        &bad,
        &[("POMPTRACE_PROFILE_MAX_NODES", "many")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("POMPTRACE_PROFILE_MAX_NODES=many is not a count in [16, 16M]"),
        "{stderr}"
    );
    check(&bad, true);
}

#[test]
fn metric_sums_are_inclusive_per_call_path() {
    let scratch = Scratch::new("profile-metrics");
    let exe = build(&scratch, "task_fib.c", &[]);
    let dir = scratch.join("run");
    run_profiled(&exe, &[], 2, &dir, &[("POMPTRACE_METRICS", "task-clock")]);
    // Visits and time still agree with the trace (the general path, with metrics).
    check(&dir, true);
    let out = run(Command::new("/usr/bin/python3")
        .arg(repo_root().join("tests/support/profile_check.py"))
        .args(["--metric", "task_clock"])
        .arg(dir.join("profile.cubex")));
    let text = String::from_utf8(out.stdout).unwrap();
    // (location, path) -> task-clock nanoseconds.
    let values: BTreeMap<(String, String), u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("PATH\t"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                (format!("{}/{}", f[0], f[1]), f[4].to_string()),
                f[5].parse().unwrap(),
            )
        })
        .collect();
    let root = values
        .iter()
        .find(|((l, p), _)| l.ends_with("/Master thread") && !p.contains(" / "))
        .map(|(_, v)| *v)
        .unwrap();
    assert!(
        root > 0,
        "the program's root sums its children's task-clock"
    );
    // A call path's metric includes its children's: no exclusive value below zero.
    for ((location, path), value) in &values {
        let children: u64 = values
            .iter()
            .filter(|((l, p), _)| {
                l == location
                    && p.strip_prefix(path.as_str())
                        .and_then(|rest| rest.strip_prefix(" / "))
                        .is_some_and(|rest| !rest.contains(" / "))
            })
            .map(|(_, v)| *v)
            .sum();
        assert!(
            children <= *value,
            "{location} {path}: {value} < children {children}"
        );
    }
}

/// The checker's table of `dir`'s profile, with the task-clock metric.
fn table_with_metric(dir: &Path) -> String {
    let out = run(Command::new("/usr/bin/python3")
        .arg(repo_root().join("tests/support/profile_check.py"))
        .args(["--metric", "task_clock"])
        .arg(dir.join("profile.cubex")));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_profile_rebuilt_from_a_whole_trace_is_the_one_the_run_wrote() {
    let scratch = Scratch::new("profile-rebuilt");
    for (file, threads) in [("task_fib.c", 3), ("nested_2x3.c", 2)] {
        let exe = build(&scratch, file, &[]);
        let dir = scratch.join(&format!("run-{file}"));
        run_profiled(
            &exe,
            &[],
            threads,
            &dir,
            &[("POMPTRACE_METRICS", "task-clock")],
        );
        let written = table_with_metric(&dir);
        std::fs::remove_file(dir.join("profile.cubex")).unwrap();
        // The trace is whole: only the profile is rebuilt.
        let out = run(Command::new(pomptrace_command()).arg("recover").arg(&dir));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.starts_with(&format!(
                "pomptrace: profile rebuilt from the trace: {} (",
                dir.join("profile.cubex").display()
            )),
            "{stdout}"
        );
        assert_eq!(table_with_metric(&dir), written, "{file}");
    }
}

#[test]
fn a_killed_profiled_run_gets_its_profile_back_from_its_recovered_trace() {
    let scratch = Scratch::new("profile-killed");
    let exe = build(&scratch, "stream_many.c", &[]);
    let dir = scratch.join("run");
    let mut child = program(&exe)
        .arg("2500000")
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_CHUNK_SIZE", "256K")
        .env("POMPTRACE_KEEP_IN_MEMORY", "0")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &dir)
        .env("POMPTRACE_ENABLE_PROFILING", "1")
        .env_remove("POMPTRACE_ENABLE_TRACING")
        .env_remove("POMPTRACE_ENABLE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once 2 MiB are on the disk and each thread's first chunk is among them: a thread
    // descheduled meanwhile on a loaded machine would otherwise leave nothing of its own, not
    // even the program's begin, and the kill would not be the one this test is about.
    let ready = |sizes: &[u64]| {
        sizes.iter().sum::<u64>() >= 2 << 20
            && sizes.len() == 2
            && sizes.iter().all(|&bytes| bytes >= 256 << 10)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !ready(&support::pomp2::event_file_sizes(&dir)) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it was killed"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "no events reached the disk"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!dir.join("profile.cubex").exists());
    let out = run(Command::new(pomptrace_command()).arg("recover").arg(&dir));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "pomptrace: profile rebuilt from the trace: {}",
            dir.join("profile.cubex").display()
        )),
        "{stdout}"
    );
    // Every visit the recovered trace holds, those the kill left open too.
    let entries = check(&dir, true);
    let step = visits_ending_in(&entries, "!$pomp user(step)");
    assert!(step > 1000, "{entries:?}");
}
