//! Hooks into the life of the process: the end of the program (with its exit status), fork(),
//! and fatal signals all lead to the one finalisation, or (in a forked child) to none.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{finalize_with_status, warn, DISABLED, STATE};

extern "C" {
    /// glibc's exit handler registration that passes the exit status (not in the libc crate).
    fn on_exit(
        handler: extern "C" fn(libc::c_int, *mut libc::c_void),
        arg: *mut libc::c_void,
    ) -> libc::c_int;
}

pub(super) fn register_exit_handler() {
    extern "C" fn at_exit(status: libc::c_int, _: *mut libc::c_void) {
        // Never unwind into the C runtime.
        let _ = std::panic::catch_unwind(|| finalize_with_status(status as i64));
    }
    // SAFETY: registers a function with C linkage that never unwinds; the argument is unused.
    if unsafe { on_exit(at_exit, std::ptr::null_mut()) } != 0 {
        warn("cannot register the exit handler; call POMP2_Finalize before exiting");
    }
}

/// A child created by fork() inherits the measurement but not its writer thread: recording or
/// finalizing there (its exit handler runs when it calls exit()) would wait for that thread
/// forever and could overwrite the parent's trace. The child records nothing instead.
pub(super) fn register_fork_handler() {
    extern "C" fn in_child() {
        // Only an atomic store: async-signal-safe, as a child of a threaded process requires.
        STATE.store(DISABLED, Ordering::Release);
        super::HOT.store(0, Ordering::Release);
    }
    // SAFETY: registers a function with C linkage that takes no arguments and never unwinds.
    if unsafe { libc::pthread_atfork(None, None, Some(in_child)) } != 0 {
        warn("cannot register the fork handler; forked children must not call exit()");
    }
}

/// Signals that end the process by default. When one arrives the trace is written first, so a
/// crashing or killed program still leaves a readable trace; then the signal takes its course.
const FATAL_SIGNALS: [libc::c_int; 9] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGABRT,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
];

/// How long a fatal signal waits for the trace to be written (the interrupted thread may hold a
/// lock the writer needs; then the trace is given up rather than the process hung).
const SIGNAL_FINALIZE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

pub(super) fn register_signal_handlers() {
    extern "C" fn on_fatal_signal(signal: libc::c_int) {
        static HANDLING: AtomicBool = AtomicBool::new(false);
        if !HANDLING.swap(true, Ordering::AcqRel) {
            let message = b"pomptrace: fatal signal; writing the trace before the program ends\n";
            // SAFETY: write(2) with a valid buffer is async-signal-safe.
            unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
            // Finalize on a fresh thread: this one may have been interrupted holding a lock.
            let (done, wait) = std::sync::mpsc::channel();
            let spawned = std::thread::Builder::new()
                .name("pomptrace-signal".into())
                .spawn(move || {
                    let _ =
                        std::panic::catch_unwind(move || finalize_with_status(128 + signal as i64));
                    let _ = done.send(());
                });
            if spawned.is_ok() {
                let _ = wait.recv_timeout(SIGNAL_FINALIZE_TIMEOUT);
            }
        }
        // SAFETY: restoring the default action and re-raising the signal is the documented way
        // to let it terminate the process as it would have without us.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }
    for signal in FATAL_SIGNALS {
        // SAFETY: `old` is a valid sigaction to fill; passing NULL as the new action only queries.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        if unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) } != 0
            || old.sa_sigaction != libc::SIG_DFL
        {
            // The program handles (or ignores) this signal itself: leave it alone.
            continue;
        }
        // SAFETY: installs a handler with C linkage for a signal whose action was the default.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fatal_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}
