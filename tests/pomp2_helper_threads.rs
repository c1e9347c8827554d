//! A full node is the normal case (design decision 16): a run whose events fit in memory starts
//! no thread besides the program's own, and writes its trace at the end; a run that streams
//! still writes every event when the threads it starts get no core at all.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::pomp2::{instrument, program, Build, View};
use support::{run, Scratch};

/// `created=N alive=M names=...` of `thread_census.c`.
#[derive(Debug, PartialEq, Eq)]
struct Census {
    created: u32,
    alive: u32,
    names: Vec<String>,
}

fn census(stdout: &str) -> Census {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("created="))
        .unwrap_or_else(|| panic!("no census in {stdout:?}"));
    let field = |key: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {line:?}"))
            .to_string()
    };
    let mut names: Vec<String> = field("names=").split(',').map(String::from).collect();
    names.sort();
    Census {
        created: field("created=").parse().unwrap(),
        alive: field("alive=").parse().unwrap(),
        names,
    }
}

/// An environment variable and its value.
type Setting<'a> = (&'a str, &'a str);

fn census_program(scratch: &Scratch) -> PathBuf {
    let source = instrument("thread_census.c", &scratch.path, &[]);
    Build::c(&scratch.path).executable(&[source], "thread_census")
}

/// Runs the census program with `iterations` per thread on 2 threads, tracing into `dir` with
/// `env` (or not at all without a `dir`); returns its census.
fn run_census(exe: &Path, iterations: u64, dir: Option<&Path>, env: &[(&str, &str)]) -> Census {
    let mut cmd = program(exe);
    cmd.arg(iterations.to_string())
        .env("OMP_NUM_THREADS", "2")
        .envs(env.iter().copied());
    match dir {
        Some(dir) => cmd
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", dir)
            .env_remove("POMPTRACE_ENABLE"),
        None => cmd.env("POMPTRACE_ENABLE", "0"),
    };
    let out = run(&mut cmd);
    census(&String::from_utf8_lossy(&out.stdout))
}

#[test]
fn a_run_whose_events_fit_in_memory_starts_no_thread_of_its_own() {
    let scratch = Scratch::new("helper-census");
    let exe = census_program(&scratch);
    let untraced = run_census(&exe, 10, None, &[]);
    assert!(untraced.created >= 1, "the OpenMP worker: {untraced:?}");
    assert_eq!(untraced.alive as usize, untraced.names.len());

    // (label, iterations per thread, settings): a tiny run; chunks that fill but stay in
    // memory (256 KiB chunks, 2.4 MB per thread kept); chunks that stream from the threads that
    // fill them (none kept).
    let runs: [(&str, u64, &[Setting]); 4] = [
        ("tiny", 10, &[]),
        ("tiny-background", 10, &[("POMPTRACE_WRITER", "background")]),
        (
            "kept",
            100_000,
            &[
                ("POMPTRACE_CHUNK_SIZE", "256K"),
                ("POMPTRACE_KEEP_IN_MEMORY", "64M"),
                ("POMPTRACE_WRITER", "background"),
            ],
        ),
        (
            "streamed-from-the-filling-thread",
            100_000,
            &[
                ("POMPTRACE_CHUNK_SIZE", "256K"),
                ("POMPTRACE_KEEP_IN_MEMORY", "0"),
                ("POMPTRACE_WRITER", "thread"),
            ],
        ),
    ];
    for (label, iterations, env) in runs {
        let dir = scratch.join(label);
        let traced = run_census(&exe, iterations, Some(&dir), env);
        assert_eq!(
            traced, untraced,
            "{label}: threads started or still there at the end"
        );
        let view = View::read(&dir.join("traces.otf2"));
        view.assert_well_formed();
        assert_eq!(
            view.enters_of("user(step)"),
            2 * iterations as usize,
            "{label}"
        );
    }

    // The census sees pomptrace's threads when it starts them: chunks that stream to the
    // writer thread start it and the preparing thread.
    let dir = scratch.join("streamed-to-the-writer-thread");
    let streaming = run_census(
        &exe,
        100_000,
        Some(&dir),
        &[
            ("POMPTRACE_CHUNK_SIZE", "256K"),
            ("POMPTRACE_KEEP_IN_MEMORY", "0"),
            ("POMPTRACE_WRITER", "background"),
        ],
    );
    // (The writer thread ends once the end of the run has taken its work over.)
    assert_eq!(streaming.created, untraced.created + 2, "{streaming:?}");
    assert!(
        streaming.names.iter().any(|n| n == "pomptrace-prep"),
        "{streaming:?}"
    );
    View::read(&dir.join("traces.otf2")).assert_well_formed();
}

/// Processes that keep every core busy until dropped.
struct BusyProcesses(Vec<Child>);

impl BusyProcesses {
    fn start(count: usize) -> Self {
        Self(
            (0..count)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdin(Stdio::null())
                        .spawn()
                        .expect("start a busy process")
                })
                .collect(),
        )
    }
}

impl Drop for BusyProcesses {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Puts every thread of process `pid` whose name starts with `pomptrace` into the idle
/// scheduling class as soon as it appears, until `done`; returns their names by thread id.
fn starve_helpers(
    pid: u32,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<BTreeMap<i32, String>> {
    std::thread::spawn(move || {
        let starved = Mutex::new(BTreeMap::new());
        while !done.load(Ordering::Acquire) {
            let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
            for entry in tasks.into_iter().flatten().flatten() {
                let Ok(tid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                    continue;
                };
                let name = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
                let mut starved = starved.lock().unwrap();
                if name.starts_with("pomptrace") && !starved.contains_key(&tid) {
                    let param = libc::sched_param { sched_priority: 0 };
                    // SAFETY: sets the scheduling class of another process's thread (same user);
                    // `param` is valid for the call.
                    if unsafe { libc::sched_setscheduler(tid, libc::SCHED_IDLE, &param) } == 0 {
                        starved.insert(tid, name.trim().to_string());
                    }
                }
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        starved.into_inner().unwrap()
    })
}

#[test]
fn a_streaming_run_whose_helper_threads_get_no_core_still_writes_every_event() {
    let scratch = Scratch::new("helper-starved");
    let source = instrument("stream_many.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stream_many");
    // Through the page cache, and straight to the device (the scratch directory is on a disk):
    // a chunk the starved writer thread is writing when the run ends is written again the same
    // way.
    for writer in ["background", "direct"] {
        starved_helpers_lose_no_event(&exe, &scratch.join(writer), writer);
    }
}

fn starved_helpers_lose_no_event(exe: &Path, experiment: &Path, writer: &str) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let busy = BusyProcesses::start(cores.max(2));
    const ITERATIONS: u64 = 100_000;
    let child = program(exe)
        .arg(ITERATIONS.to_string())
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", experiment)
        .env("POMPTRACE_CHUNK_SIZE", "256K")
        .env("POMPTRACE_KEEP_IN_MEMORY", "0")
        .env("POMPTRACE_WRITER", writer)
        .env("POMPTRACE_VERBOSE", "2")
        .env_remove("POMPTRACE_ENABLE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let watcher = starve_helpers(child.id(), done.clone());
    let out = child.wait_with_output().unwrap();
    done.store(true, Ordering::Release);
    let starved = watcher.join().unwrap();
    drop(busy);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{writer}: {stderr}");
    assert!(
        stderr.starts_with("pomptrace: trace written to "),
        "{writer}: {stderr}"
    );
    assert!(
        starved.values().any(|name| name == "pomptrace-write"),
        "{writer}: the writer thread was started and starved: {starved:?}"
    );

    // Both reference readers (View::read runs otf2-print too).
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    assert_eq!(view.enters_of("user(step)"), 2 * ITERATIONS as usize);
    for (name, _) in view.locations.values() {
        let steps = view
            .events_of(name)
            .iter()
            .filter(|e| e.kind == "Enter" && e.detail[0].contains("user(step)"))
            .count();
        assert_eq!(steps as u64, ITERATIONS, "{writer}: {name}");
    }
}
