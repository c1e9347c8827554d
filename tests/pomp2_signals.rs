//! A program killed by a fatal signal (a crash, abort(), SIGTERM) in the middle of a parallel
//! region still leaves a complete trace that both reference readers read, with every open
//! region closed — and it still dies by that signal.

mod support;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use support::pomp2::*;
use support::Scratch;

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
        let out = Command::new(&exe)
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

mod libc_signal {
    pub const SIGABRT: i32 = 6;
    pub const SIGSEGV: i32 = 11;
    pub const SIGTERM: i32 = 15;
}
