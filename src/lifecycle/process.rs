//! Hooks into the life of the process: the end of the program (with its exit status), fork(),
//! and fatal signals all lead to the one finalisation, or (in a forked child) to none.
//!
//! Fatal signals: the handler writes the trace itself, on the thread the signal interrupted
//! (no thread waits for signals: a run that fits in memory starts none), then lets the first
//! fatal signal take its course (default action, so the shell sees 128 + signal). While it
//! writes, the asynchronous fatal signals are blocked on that thread (a second SIGTERM goes to
//! another thread, whose handler waits, bounded, for the trace), its allocations come from
//! memory of their own (`signal_heap`: the interrupted code may hold malloc's lock), and an
//! alarm ends the process by the first signal should the writing get stuck on a lock the
//! interrupted code holds. A fault on one of pomptrace's own threads, or while the trace is
//! being written, ends the process at once.
//!
//! A signal inside a recording call: the trace cannot wait for a call that the handler itself
//! interrupted, so that thread's location would be left out. An asynchronous fatal signal
//! (SIGINT, SIGTERM, SIGHUP, SIGQUIT: sent by somebody else, so it may come a little later)
//! that finds its thread busy is therefore put off: the handler leaves it in the thread's
//! pending word and returns (`SA_RESTART`: whatever the call was doing in the kernel goes on),
//! and the end of the call raises it again (`ThreadState::end_call`), when the handler finds the
//! thread not busy and writes a complete trace. Calls are short and wait for nothing a signal
//! would have to end, so the signal comes soon. Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL) and
//! SIGABRT are raised by the thread itself and cannot be put off: they are handled at once,
//! leaving that location as it is if the thread was in a call.
//!
//! A stack overflow: the fault comes with the thread's stack used up, so SIGSEGV and SIGBUS are
//! handled on the alternate signal stack that every thread with a state gets
//! (`model::thread`), large enough to write the trace on. The other signals keep running on
//! the thread's own stack: a program that gives its threads small alternate stacks of its own
//! (sanitizers, other language runtimes) then still has its traces written.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::time::Duration;

use crate::base::diagnostics::warn;
use crate::base::helper_threads;
use crate::base::signal_heap;
use crate::base::signal_safe_mutex::ASYNC_FATAL_SIGNALS;
use crate::lifecycle::finish::{finalize_in_signal_handler, finalize_with_status};
use crate::lifecycle::state::{DISABLED, RUNNING, STATE};
use crate::model::thread;

extern "C" {
    /// glibc's exit handler registration that passes the exit status (not in the libc crate).
    fn on_exit(
        handler: extern "C" fn(libc::c_int, *mut libc::c_void),
        arg: *mut libc::c_void,
    ) -> libc::c_int;
}

pub(crate) fn register_exit_handler() {
    extern "C" fn at_exit(status: libc::c_int, _: *mut libc::c_void) {
        // Never unwind into the C runtime.
        let _ = std::panic::catch_unwind(|| finalize_with_status(status as i64));
    }
    // SAFETY: registers a function with C linkage that never unwinds; the argument is unused.
    if unsafe { on_exit(at_exit, std::ptr::null_mut()) } != 0 {
        warn("cannot register the exit handler; call POMP2_Finalize before exiting");
    }
}

/// A child created by fork() inherits the measurement but not its threads (the writer thread,
/// if one runs): recording or finalizing there would wait for them forever and could
/// overwrite the parent's trace, so the child records nothing. It still assigns region handles,
/// registers locks, warns and gets a thread state, so the locks behind those are held across
/// the fork (in `prepare`'s order, the order in which any thread may take them): no other
/// thread of the parent can be half-way through changing what they guard, and the child finds
/// them unlocked.
pub(crate) fn register_fork_handler() {
    use crate::base::diagnostics::WARNED;
    use crate::model::lock_table as locks;
    use crate::model::thread::{SPARE_STATES, STATES};
    use crate::output::registry::REGISTRY;
    extern "C" fn prepare() {
        WARNED.hold_across_fork();
        locks::hold_for_fork();
        REGISTRY.hold_across_fork();
        STATES.hold_across_fork();
        SPARE_STATES.hold_across_fork();
    }
    extern "C" fn in_parent() {
        // SAFETY: `prepare` locked these on this thread.
        unsafe {
            SPARE_STATES.release_in_parent();
            STATES.release_in_parent();
            REGISTRY.release_in_parent();
            locks::release_after_fork();
            WARNED.release_in_parent();
        }
    }
    extern "C" fn in_child() {
        // Only atomic stores: async-signal-safe, as a child of a threaded process requires.
        STATE.store(DISABLED, Ordering::Release);
        crate::lifecycle::state::HOT.store(crate::lifecycle::state::HOT_ENDED, Ordering::Release);
        // SAFETY: `prepare` locked these on the thread that is now the child's only one.
        unsafe {
            SPARE_STATES.reset_in_child();
            STATES.reset_in_child();
            REGISTRY.reset_in_child();
            locks::reset_after_fork_in_child();
            WARNED.reset_in_child();
        }
    }
    // SAFETY: registers functions with C linkage that take no arguments and never unwind.
    if unsafe { libc::pthread_atfork(Some(prepare), Some(in_parent), Some(in_child)) } != 0 {
        warn("cannot register the fork handler; forked children must not call exit()");
    }
}

/// Signals that end the process by default. When one arrives the trace is written first, so a
/// crashing or killed program still leaves a readable trace; then the signal takes its course.
const FATAL_SIGNALS: [(libc::c_int, &str); 9] = [
    (libc::SIGINT, "SIGINT"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGHUP, "SIGHUP"),
    (libc::SIGQUIT, "SIGQUIT"),
    (libc::SIGABRT, "SIGABRT"),
    (libc::SIGSEGV, "SIGSEGV"),
    (libc::SIGBUS, "SIGBUS"),
    (libc::SIGFPE, "SIGFPE"),
    (libc::SIGILL, "SIGILL"),
];

/// The signals a stack overflow raises (touching the guard page below a thread's stack).
const STACK_OVERFLOW_SIGNALS: [libc::c_int; 2] = [libc::SIGSEGV, libc::SIGBUS];

/// How long a fatal signal waits for the trace to be written (the interrupted thread may hold a
/// lock the writing needs; then the trace is given up rather than the process hung).
const SIGNAL_FINALIZE_TIMEOUT: Duration = Duration::from_secs(10);

/// The first fatal signal (0: none yet). The process dies by this one, whatever comes later.
static FIRST_SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Kernel thread id of the thread writing the trace for the first signal: a fault there
/// cannot wait for itself.
static WRITING_TID: AtomicI32 = AtomicI32::new(0);
/// 1 once the trace for the first signal is written (or given up); a futex word, which the
/// handlers of later signals wait on.
static TRACE_DONE: AtomicU32 = AtomicU32::new(0);

fn gettid() -> libc::c_int {
    // SAFETY: gettid has no arguments and cannot fail; a raw syscall is async-signal-safe.
    unsafe { libc::syscall(libc::SYS_gettid) as libc::c_int }
}

fn set_mask(how: libc::c_int, signals: impl IntoIterator<Item = libc::c_int>) {
    // SAFETY: `set` is a valid sigset_t; pthread_sigmask and sigaddset are async-signal-safe.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in signals {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(how, &set, std::ptr::null_mut());
    }
}

/// Ends the process by `signal` as if no handler had been installed.
fn die_by(signal: libc::c_int) -> ! {
    // SAFETY: sigaction, pthread_sigmask, raise and _exit are async-signal-safe; the default
    // action of every fatal signal ends the process, so raise does not return.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut default.sa_mask);
        libc::sigaction(signal, &default, std::ptr::null_mut());
        set_mask(libc::SIG_UNBLOCK, [signal]);
        libc::raise(signal);
        libc::_exit(128 + signal)
    }
}

/// Writes "pomptrace: fatal signal SIGxxx; ..." with one write(2) and no allocation.
fn say_fatal_signal(signal: libc::c_int) {
    let name = FATAL_SIGNALS
        .iter()
        .find(|(s, _)| *s == signal)
        .map_or("", |(_, n)| n);
    let parts: [&[u8]; 3] = [
        b"pomptrace: fatal signal ",
        name.as_bytes(),
        b"; writing the trace before the program ends\n",
    ];
    let mut line = [0u8; 96];
    let mut len = 0;
    for part in parts {
        let n = part.len().min(line.len() - len);
        line[len..len + n].copy_from_slice(&part[..n]);
        len += n;
    }
    // SAFETY: write(2) with a valid buffer is async-signal-safe.
    unsafe { libc::write(2, line.as_ptr().cast(), len) };
}

extern "C" fn on_fatal_signal(signal: libc::c_int) {
    let tid = gettid();
    if tid == WRITING_TID.load(Ordering::Acquire) || helper_threads::on_helper_thread() {
        // A fault while writing the trace (asynchronous signals are blocked here then), or on a
        // thread of pomptrace's own, whose work the writing may need.
        let first = FIRST_SIGNAL.load(Ordering::Acquire);
        die_by(if first != 0 { first } else { signal });
    }
    if put_off_until_call_ends(signal) {
        return;
    }
    if FIRST_SIGNAL
        .compare_exchange(0, signal, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        if STATE.load(Ordering::Acquire) != RUNNING {
            // Not started, already finished, or a forked child: nothing to write.
            die_by(signal);
        }
        say_fatal_signal(signal);
        WRITING_TID.store(tid, Ordering::Release);
        set_alarm();
        signal_heap::begin();
        let _ = std::panic::catch_unwind(|| finalize_in_signal_handler(128 + signal as i64));
        announce_trace_done();
        die_by(signal);
    }
    // Every other fatal signal (a second SIGTERM, the same signal sent to the whole process
    // group) waits here for the trace.
    wait_for_trace(SIGNAL_FINALIZE_TIMEOUT);
    die_by(FIRST_SIGNAL.load(Ordering::Acquire))
}

/// Leaves an asynchronous fatal signal that interrupted a recording call for the end of that
/// call (true), which raises it again; the first such signal is kept. A thread's state is
/// reached through initial-exec TLS, which is safe in a signal handler.
fn put_off_until_call_ends(signal: libc::c_int) -> bool {
    if !ASYNC_FATAL_SIGNALS.contains(&signal) {
        return false;
    }
    let Some(state) = thread::existing() else {
        return false;
    };
    if !state.busy.load(Ordering::Relaxed) {
        return false;
    }
    if state.pending_signal.load(Ordering::Relaxed) == 0 {
        state.pending_signal.store(signal, Ordering::Relaxed);
    }
    true
}

/// Marks the first signal's trace done and wakes every handler waiting for it.
fn announce_trace_done() {
    TRACE_DONE.store(1, Ordering::Release);
    // SAFETY: FUTEX_WAKE on a word of ours touches no other memory; futex is async-signal-safe.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            TRACE_DONE.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        )
    };
}

/// Waits (blocked in the kernel, at most `timeout`) until the first signal's trace is done.
fn wait_for_trace(timeout: Duration) {
    let wait = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    while TRACE_DONE.load(Ordering::Acquire) == 0 {
        // SAFETY: FUTEX_WAIT reads our word and sleeps while it is 0, for at most `wait` (a
        // valid timespec); futex is async-signal-safe.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_futex,
                TRACE_DONE.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                0u32,
                &wait as *const libc::timespec,
            )
        };
        // SAFETY: reading errno right after the call, on this thread.
        if rc != 0 && unsafe { *libc::__errno_location() } == libc::ETIMEDOUT {
            // (An interruption by another signal waits again, for the whole time: the alarm
            // of the thread writing the trace ends the process in any case.)
            return;
        }
    }
}

/// Ends the process by the first fatal signal `SIGNAL_FINALIZE_TIMEOUT` from now (the program's
/// own SIGALRM handler, if any, gives way: the process is ending).
fn set_alarm() {
    extern "C" fn on_alarm(_: libc::c_int) {
        die_by(FIRST_SIGNAL.load(Ordering::Acquire));
    }
    // SAFETY: sigaction and alarm are async-signal-safe; the handler has C linkage and never
    // returns.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_alarm as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut());
        set_mask(libc::SIG_UNBLOCK, [libc::SIGALRM]);
        libc::alarm(SIGNAL_FINALIZE_TIMEOUT.as_secs() as libc::c_uint);
    }
}

/// Installs the handler for each fatal signal whose action is still the default (signals the
/// program handles or ignores are left alone). While the handler runs, the asynchronous fatal
/// signals are blocked on its thread. The handler only returns for a signal it put off, and
/// then the interrupted call goes on as if nothing happened (`SA_RESTART`); the faults a stack
/// overflow raises run it on the alternate signal stack (`SA_ONSTACK`).
pub(crate) fn register_signal_handlers() {
    for (signal, _) in FATAL_SIGNALS {
        // SAFETY: `old` is a valid sigaction to fill; passing NULL as the new action only queries.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        if unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) } != 0
            || old.sa_sigaction != libc::SIG_DFL
        {
            continue;
        }
        // SAFETY: installs a handler with C linkage for a signal whose action was the default.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fatal_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            if STACK_OVERFLOW_SIGNALS.contains(&signal) {
                action.sa_flags |= libc::SA_ONSTACK;
            }
            libc::sigemptyset(&mut action.sa_mask);
            for blocked in ASYNC_FATAL_SIGNALS {
                libc::sigaddset(&mut action.sa_mask, blocked);
            }
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}
