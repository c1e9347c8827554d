//! A fatal signal that lands while its thread is inside a POMP2 call: an asynchronous one
//! (SIGTERM) waits until the call is over, so the trace keeps that thread's events and its
//! ProgramEnd; a stack overflow is handled on an alternate signal stack, so it still leaves a
//! trace.

mod support;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use support::pomp2::*;
use support::Scratch;

fn send(pid: u32, signal: i32) {
    // SAFETY: kill(2) with a plain pid and signal number touches no memory.
    assert_eq!(
        unsafe { libc::kill(pid as i32, signal) },
        0,
        "kill({pid}, {signal})"
    );
}

/// Starts `exe` with 2 OpenMP threads, tracing into `experiment`.
fn start(exe: &Path, args: &[&str], experiment: &Path) -> Child {
    start_with(exe, args, experiment, &[])
}

fn start_with(exe: &Path, args: &[&str], experiment: &Path, env: &[(&str, &str)]) -> Child {
    program(exe)
        .args(args)
        .envs(env.iter().copied())
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", experiment)
        .env_remove("POMPTRACE_ENABLE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the program")
}

/// Waits (at most 60 s) for `child` to end; its status and stderr.
fn finish(mut child: Child) -> (ExitStatus, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the program did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (status, stderr)
}

/// What is wrong with the trace of a run killed by SIGTERM while both threads make POMP2
/// calls back to back (None: nothing).
fn sigterm_run_problem(status: ExitStatus, stderr: &str, experiment: &Path) -> Option<String> {
    if status.signal() != Some(libc::SIGTERM) {
        return Some(format!("did not die by SIGTERM: {status:?}; {stderr}"));
    }
    if !stderr.contains("pomptrace: trace written to") || stderr.contains("still recording") {
        return Some(format!("stderr: {stderr}"));
    }
    let checks = std::panic::catch_unwind(|| {
        let view = View::read(&experiment.join("traces.otf2"));
        view.assert_well_formed();
        let master = view.texts("Master thread", &[]);
        assert_eq!(
            master.last().map(String::as_str),
            Some("ProgramEnd 143"),
            "the master's last event"
        );
        assert!(
            master
                .iter()
                .any(|e| e.starts_with("Enter !$pomp user(step)")),
            "master: {:?}",
            &master[..master.len().min(10)]
        );
        let worker = view.texts("OMP thread 1", &[]);
        assert!(
            worker
                .iter()
                .any(|e| e.starts_with("Enter !$pomp user(step)")),
            "worker: {:?}",
            &worker[..worker.len().min(10)]
        );
    });
    checks.err().map(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// Both threads enter and leave a user region as fast as they can, so a signal finds the
/// thread it interrupts inside a POMP2 call most of the time. The trace must keep every
/// location and end the master's with ProgramEnd, whenever the signal comes.
#[test]
fn a_sigterm_during_pomp2_calls_waits_for_the_call_and_keeps_every_location() {
    let scratch = Scratch::new("signals-during-calls");
    let source = instrument("stream_many.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stream_many");
    let runs = 20;
    let mut problems = Vec::new();
    for run in 0..runs {
        let experiment = scratch.join(&format!("run{run}"));
        // 20 to 300 ms into the run: from its first events to well into the streaming.
        let delay = Duration::from_millis(20 + run * 280 / (runs - 1));
        // The size budget keeps the traces small enough to read quickly: once it is used up
        // the calls go on (still marking their thread busy) without writing events.
        let child = start_with(
            &exe,
            &["1000000000"],
            &experiment,
            &[("POMPTRACE_MAX_TRACE_SIZE", "1M")],
        );
        std::thread::sleep(delay);
        send(child.id(), libc::SIGTERM);
        let (status, stderr) = finish(child);
        if let Some(problem) = sigterm_run_problem(status, &stderr, &experiment) {
            problems.push(format!("run {run} ({delay:?}): {problem}"));
        }
        let _ = std::fs::remove_dir_all(&experiment);
    }
    assert!(
        problems.is_empty(),
        "{} of {runs} runs failed:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Two SIGTERMs 1 ms apart (the second may find the first still waiting for a call to end,
/// or the trace being written): every run leaves a complete archive, no recovery needed.
#[test]
fn two_sigterms_during_pomp2_calls_leave_a_complete_archive() {
    let scratch = Scratch::new("signals-during-calls-twice");
    let source = instrument("paced_events.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "paced_events");
    let runs = 50;
    for run in 0..runs {
        let experiment = scratch.join(&format!("run{run}"));
        let delay = Duration::from_millis(100 + run * 900 / (runs - 1));
        let child = start(&exe, &["100000", "20"], &experiment);
        std::thread::sleep(delay);
        send(child.id(), libc::SIGTERM);
        std::thread::sleep(Duration::from_millis(1));
        send(child.id(), libc::SIGTERM);
        let (status, stderr) = finish(child);
        assert_eq!(
            status.signal(),
            Some(libc::SIGTERM),
            "run {run} ({delay:?}): {status:?}; {stderr}"
        );
        let anchor = experiment.join("traces.otf2");
        assert!(
            anchor.exists(),
            "run {run} ({delay:?}): no traces.otf2; {stderr}"
        );
        let view = View::read(&anchor);
        view.assert_well_formed();
        assert!(
            view.enters_of("paced") > 0,
            "run {run} ({delay:?}): no visits recorded"
        );
        let _ = std::fs::remove_dir_all(&experiment);
    }
}

/// `stack_overflow` (instrumented) run with `args` until its recursion uses up the stack of
/// the thread named `thread`: it dies by SIGSEGV, and the trace of what came before is read
/// back by both readers.
fn assert_overflow_leaves_a_trace(args: &[&str], thread: &str) {
    let scratch = Scratch::new("signals-stack-overflow");
    let source = instrument("stack_overflow.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stack_overflow");
    let experiment = scratch.join("exp");
    let child = start(&exe, args, &experiment);
    let (status, stderr) = finish(child);
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{status:?}; {stderr}");
    assert!(
        stderr.contains("pomptrace: fatal signal SIGSEGV"),
        "{stderr}"
    );
    assert!(stderr.contains("pomptrace: trace written to"), "{stderr}");
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    for location in ["Master thread", "OMP thread 1"] {
        let visits = view
            .texts(location, &[])
            .iter()
            .filter(|e| e.starts_with("Enter !$pomp user(before_overflow)"))
            .count();
        assert_eq!(visits, 100, "{location}");
    }
    let master = view.texts("Master thread", &[]);
    assert_eq!(
        master.last().map(String::as_str),
        Some("ProgramEnd 139"),
        "overflow on the {thread}"
    );
}

#[test]
fn a_stack_overflow_on_the_initial_thread_still_leaves_a_trace() {
    assert_overflow_leaves_a_trace(&[], "initial thread");
}

#[test]
fn a_stack_overflow_on_a_worker_thread_still_leaves_a_trace() {
    assert_overflow_leaves_a_trace(&["worker"], "worker thread");
}
