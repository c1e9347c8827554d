//! A program killed by a fatal signal (a crash, abort(), SIGTERM) in the middle of a parallel
//! region still leaves a complete trace that both reference readers read, with every open
//! region closed — and it still dies by that signal.

mod support;

use std::io::BufRead;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use support::pomp2::*;
use support::{otf2_print, Scratch};

#[test]
fn fatal_signals_still_leave_a_readable_trace() {
    let scratch = Scratch::new("signals");
    let source = instrument("robust_signal.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "robust_signal");
    for (how, signal) in [
        ("segv", libc_signal::SIGSEGV),
        ("abort", libc_signal::SIGABRT),
        ("term", libc_signal::SIGTERM),
    ] {
        let experiment = scratch.join(how);
        let out = program(&exe)
            .arg(how)
            .env("OMP_NUM_THREADS", "2")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(signal),
            "{how}: the program must still die by its signal ({:?})",
            out.status
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("pomptrace: fatal signal"),
            "{how}: {stderr}"
        );
        assert!(
            stderr.contains("pomptrace: trace written to"),
            "{how}: {stderr}"
        );

        let view = View::read(&experiment.join("traces.otf2"));
        view.assert_well_formed();
        let master = view.texts("Master thread", &[]);
        assert!(
            master
                .iter()
                .any(|e| e.starts_with("Enter !$omp master @robust_signal.c:")),
            "{how}: {master:?}"
        );
        assert_eq!(
            master.last().map(String::as_str),
            Some(format!("ProgramEnd {}", 128 + signal).as_str()),
            "{how}"
        );
        // The other thread was waiting in the barrier; its regions were closed too.
        let worker = view.texts("OMP thread 1", &[]);
        assert!(
            worker
                .iter()
                .any(|e| e.starts_with("Enter !$omp barrier @robust_signal.c:")),
            "{how}: {worker:?}"
        );
    }
}

/// A run of `robust_signal_blocked` (a worker blocked for good in a critical section, the
/// master waiting for it in a barrier), started by `command`; `signal` is called once the
/// program said it is ready. Returns the exit status and stderr; panics after 60 s.
fn run_blocked_program(
    mut command: Command,
    signal: impl FnOnce(u32),
) -> (ExitStatus, String, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the program");
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = std::io::BufReader::new(stdout).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let _ = ready_tx.send(first.clone());
        first + &lines.map_while(Result::ok).collect::<String>()
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let ready = ready_rx.recv_timeout(Duration::from_secs(60));
    if ready.as_deref() == Ok("ready") {
        signal(pid);
    }
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the program did not end within 60 s (ready: {ready:?})");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let stdout = reader.join().unwrap();
    (status, stdout, stderr)
}

fn send(pid: i32, signal: i32) {
    // SAFETY: kill(2) with a plain pid and signal number touches no memory.
    assert_eq!(
        unsafe { libc::kill(pid, signal) },
        0,
        "kill({pid}, {signal})"
    );
}

/// `robust_signal_blocked`, instrumented and built in a scratch directory of its own.
fn blocked_program(label: &str, init_file: bool) -> (Scratch, PathBuf) {
    let scratch = Scratch::new(label);
    let source = instrument("robust_signal_blocked.c", &scratch.path, &[]);
    let exe = Build {
        init_file,
        ..Build::c(&scratch.path)
    }
    .executable(&[source], "robust_signal_blocked");
    (scratch, exe)
}

/// pomptrace said it wrote the trace of `robust_signal_blocked` killed by `signal`, and both
/// reference readers accept it, with the worker's critical section closed and the exit status
/// as the shell saw it.
fn assert_killed_trace(experiment: &Path, signal: i32, stderr: &str, run: &str) {
    assert!(
        stderr.contains("pomptrace: trace written to"),
        "{run}: {stderr}"
    );
    let anchor = experiment.join("traces.otf2");
    otf2_print(&[], &anchor, &[]);
    let view = View::read(&anchor);
    view.assert_well_formed();
    let master = view.texts("Master thread", &[]);
    assert_eq!(
        master.last().map(String::as_str),
        Some(format!("ProgramEnd {}", 128 + signal).as_str()),
        "{run}: {master:?}"
    );
    let worker = view.texts("OMP thread 1", &[]);
    assert!(
        worker
            .iter()
            .any(|e| e.starts_with("Enter !$omp critical @robust_signal_blocked.c:")),
        "{run}: {worker:?}"
    );
}

#[test]
fn two_sigterms_one_millisecond_apart_still_leave_a_readable_trace() {
    // No init file: handles are assigned when first reached, so signals also find threads
    // holding the region registry.
    let (scratch, exe) = blocked_program("signals-twice", false);
    for run in 0..20 {
        let experiment = scratch.join(&format!("run{run}"));
        let mut command = program(&exe);
        command.env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment);
        let (status, _, stderr) = run_blocked_program(command, |pid| {
            send(pid as i32, libc::SIGTERM);
            std::thread::sleep(Duration::from_millis(1));
            send(pid as i32, libc::SIGTERM);
        });
        assert_eq!(
            status.signal(),
            Some(libc::SIGTERM),
            "run {run}: must die by the first SIGTERM (shell: 143), got {status:?}; {stderr}"
        );
        assert_killed_trace(&experiment, libc::SIGTERM, &stderr, &format!("run {run}"));
    }
}

/// `timeout` sends its signal to the program and then to its whole process group: the program
/// gets it twice, and `timeout --preserve-status` reports how the program ended.
#[test]
fn a_sigterm_to_the_process_group_as_timeout_sends_it_leaves_a_readable_trace() {
    let (scratch, exe) = blocked_program("signals-group", true);
    let experiment = scratch.join("timeout");
    let mut command = Command::new("timeout");
    command
        .args(["--preserve-status", "--signal=TERM", "2"])
        .arg(&exe)
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment);
    let (status, stdout, stderr) = run_blocked_program(command, |_| {});
    assert!(
        stdout.starts_with("ready"),
        "the signal must come after the program was ready: {stdout:?}"
    );
    assert_eq!(status.code(), Some(143), "{status:?}; {stderr}");
    assert_killed_trace(&experiment, libc::SIGTERM, &stderr, "timeout");
}

/// A fault on a worker thread (not the initial thread, which the other test crashes) while the
/// master is still recording: the trace is written all the same, and the program dies by it.
#[test]
fn a_segfault_on_a_worker_thread_still_leaves_a_readable_trace() {
    let (scratch, exe) = blocked_program("signals-worker-segv", true);
    let experiment = scratch.join("segv");
    let mut command = program(&exe);
    command
        .arg("segv")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment);
    let (status, _, stderr) = run_blocked_program(command, |_| {});
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{status:?}; {stderr}");
    assert!(
        stderr.contains("pomptrace: fatal signal SIGSEGV"),
        "{stderr}"
    );
    assert_killed_trace(&experiment, libc::SIGSEGV, &stderr, "segv");
}

mod libc_signal {
    pub const SIGABRT: i32 = 6;
    pub const SIGSEGV: i32 = 11;
    pub const SIGTERM: i32 = 15;
}
