//! Hooks into the life of the process: the end of the program (with its exit status), fork(),
//! and fatal signals all lead to the one finalisation, or (in a forked child) to none.
//!
//! Fatal signals: a thread created at measurement start (the *signal writer*, with every
//! asynchronous signal blocked) sleeps on a POSIX semaphore. The handler only posts that
//! semaphore and waits, bounded, until the writer has written the trace; then the first fatal
//! signal takes its course (default action, so the shell sees 128 + signal). Everything the
//! handler calls is async-signal-safe: it allocates nothing, spawns nothing and takes no lock.
//! A semaphore rather than a pipe: a program that closes descriptors it did not open (3..1023)
//! and opens its own files would otherwise receive the wake-up bytes.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

use crate::base::diagnostics::warn;
use crate::base::signal_safe_mutex::{with_signals_blocked, ASYNC_FATAL_SIGNALS};
use crate::lifecycle::finish::finalize_with_status;
use crate::lifecycle::state::DISABLED;
use crate::lifecycle::state::STATE;

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

/// A child created by fork() inherits the measurement but not its threads (the event writer,
/// the signal writer): recording or finalizing there would wait for them forever and could
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
        SIGNAL_WRITER_READY.store(false, Ordering::Release);
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

/// Signals raised by the faulting instruction itself (or abort()): they cannot be blocked
/// and put off, and may arrive on any thread, the signal writer included.
fn is_fault(signal: libc::c_int) -> bool {
    !ASYNC_FATAL_SIGNALS.contains(&signal)
}

/// How long a fatal signal waits for the trace to be written (the interrupted thread may hold a
/// lock the writer needs; then the trace is given up rather than the process hung).
const SIGNAL_FINALIZE_TIMEOUT: Duration = Duration::from_secs(10);
const WAIT_STEP: Duration = Duration::from_millis(1);

/// The first fatal signal (0: none yet). The process dies by this one, whatever comes later.
static FIRST_SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The signal writer exists and waits for `WAKE_SIGNAL_WRITER` (false in a forked child).
static SIGNAL_WRITER_READY: AtomicBool = AtomicBool::new(false);
/// Kernel thread id of the signal writer: a fault there cannot wait for itself.
static SIGNAL_WRITER_TID: AtomicI32 = AtomicI32::new(0);
/// The signal writer has finished (trace written, or given up).
static TRACE_DONE: AtomicBool = AtomicBool::new(false);

/// A POSIX semaphore: sem_post is async-signal-safe.
struct Semaphore(UnsafeCell<libc::sem_t>);
// SAFETY: sem_t is made to be shared between threads; it is only used through sem_* calls.
unsafe impl Sync for Semaphore {}
// SAFETY: an all-zero sem_t is only a placeholder; sem_init runs before any other use.
static WAKE_SIGNAL_WRITER: Semaphore = Semaphore(UnsafeCell::new(unsafe { std::mem::zeroed() }));

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
    if tid == SIGNAL_WRITER_TID.load(Ordering::Acquire) {
        // A fault while writing the trace (asynchronous signals are blocked on this thread).
        let first = FIRST_SIGNAL.load(Ordering::Acquire);
        die_by(if first != 0 { first } else { signal });
    }
    if FIRST_SIGNAL
        .compare_exchange(0, signal, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        if !SIGNAL_WRITER_READY.load(Ordering::Acquire) {
            // A forked child, or the writer could not be started: nothing to write.
            die_by(signal);
        }
        say_fatal_signal(signal);
        // SAFETY: the semaphore was initialised before SIGNAL_WRITER_READY was set; sem_post
        // is async-signal-safe.
        unsafe { libc::sem_post(WAKE_SIGNAL_WRITER.0.get()) };
    }
    // Every fatal signal (the first one, a second SIGTERM, the same signal sent to the whole
    // process group) waits here for the trace.
    let steps = SIGNAL_FINALIZE_TIMEOUT.as_millis() / WAIT_STEP.as_millis();
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: WAIT_STEP.as_nanos() as libc::c_long,
    };
    for _ in 0..steps {
        if TRACE_DONE.load(Ordering::Acquire) || !SIGNAL_WRITER_READY.load(Ordering::Acquire) {
            break;
        }
        // SAFETY: nanosleep is async-signal-safe; `pause` is a valid timespec.
        unsafe { libc::nanosleep(&pause, std::ptr::null_mut()) };
    }
    die_by(FIRST_SIGNAL.load(Ordering::Acquire))
}

/// Starts the signal writer, then installs the handler for each fatal signal whose action is
/// still the default (signals the program handles or ignores are left alone).
pub(crate) fn register_signal_handlers() {
    if let Err(e) = start_signal_writer() {
        warn(&format!(
            "cannot start the thread that writes the trace on a fatal signal ({e}); a fatal \
             signal will end the program without a trace"
        ));
    }
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
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

fn start_signal_writer() -> std::io::Result<()> {
    // SAFETY: initialises the (not yet used) process-private semaphore with count 0.
    if unsafe { libc::sem_init(WAKE_SIGNAL_WRITER.0.get(), 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let writer = move || {
        SIGNAL_WRITER_TID.store(gettid(), Ordering::Release);
        // Faults stay deliverable here, so a crash while writing still ends the process by
        // the first signal; asynchronous signals stay blocked and go to other threads.
        set_mask(
            libc::SIG_UNBLOCK,
            FATAL_SIGNALS
                .iter()
                .map(|(s, _)| *s)
                .filter(|&s| is_fault(s)),
        );
        // SAFETY: the semaphore was initialised above; sem_wait only fails with EINTR.
        while unsafe { libc::sem_wait(WAKE_SIGNAL_WRITER.0.get()) } != 0 {}
        let signal = FIRST_SIGNAL.load(Ordering::Acquire);
        let _ = std::panic::catch_unwind(|| finalize_with_status(128 + signal as i64));
        TRACE_DONE.store(true, Ordering::Release);
    };
    with_signals_blocked(|| {
        std::thread::Builder::new()
            .name("pomptrace-signal".into())
            .spawn(writer)
    })?;
    SIGNAL_WRITER_READY.store(true, Ordering::Release);
    Ok(())
}
