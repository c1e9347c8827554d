//! Who is recording right now. Every call that touches its thread's location holds an
//! [`Active`] guard, which marks the thread busy; the end of the measurement waits until no
//! thread is busy before it takes the locations, so a thread still recording (exit() or a signal
//! in the middle of a parallel region) never writes into a location that is being closed.
//!
//! The protocol is a Dekker-style store-then-load on both sides. The recording side pays two
//! plain stores and a compiler fence per call; the heavy barrier is issued once, at the end, for
//! every thread at once (`membarrier`). Without membarrier the recording side uses a real fence.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{running, started, warn, Measurement, SignalSafeMutex, RUNNING, STATE};

/// A thread inside a call that touches its location (see the module documentation).
pub struct Active {
    m: &'static Measurement,
    flag: &'static AtomicBool,
}

/// A thread's busy flag on a cache line of its own: it is written twice per event, and flags
/// of different threads sharing a line would make every event a cache-line transfer.
#[repr(align(128))]
struct BusyFlag(AtomicBool);

impl Active {
    #[inline(always)]
    pub fn get(&self) -> &'static Measurement {
        self.m
    }
}

impl Drop for Active {
    #[inline(always)]
    fn drop(&mut self) {
        self.flag.store(false, Ordering::Release);
    }
}

thread_local! {
    static BUSY: std::cell::Cell<*const AtomicBool> = const { std::cell::Cell::new(std::ptr::null()) };
}
/// Every thread's busy flag (threads register on their first recording call; flags are leaked,
/// one per thread that ever recorded).
static BUSY_FLAGS: SignalSafeMutex<Vec<&'static AtomicBool>> = SignalSafeMutex::new(Vec::new());
/// Whether the process is registered for expedited membarrier: then finalize issues the heavy
/// barrier for everybody, and recording needs only a compiler fence.
static MEMBARRIER: AtomicBool = AtomicBool::new(false);
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

#[inline(always)]
fn busy_flag() -> &'static AtomicBool {
    let p = BUSY.with(|b| b.get());
    // SAFETY: BUSY only holds pointers to leaked flags.
    match unsafe { p.as_ref() } {
        Some(flag) => flag,
        None => register_busy_flag(),
    }
}

#[cold]
fn register_busy_flag() -> &'static AtomicBool {
    let flag: &'static AtomicBool = &Box::leak(Box::new(BusyFlag(AtomicBool::new(false)))).0;
    BUSY_FLAGS.lock().push(flag);
    BUSY.with(|b| b.set(flag));
    flag
}

/// The running measurement (started if `start` and needed), with this thread marked busy until
/// the returned guard is dropped. None when not recording.
#[inline(always)]
pub fn active(start: bool) -> Option<Active> {
    let m = if start { started() } else { running() }?;
    let flag = busy_flag();
    flag.store(true, Ordering::Relaxed);
    // Either this thread sees the end of the measurement below, or `wait_for_recorders` sees
    // this flag: a store-load fence between the two, here or (with membarrier) in finalize.
    if MEMBARRIER.load(Ordering::Relaxed) {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
    } else {
        std::sync::atomic::fence(Ordering::SeqCst);
    }
    if STATE.load(Ordering::Relaxed) != RUNNING {
        flag.store(false, Ordering::Release);
        return None;
    }
    Some(Active { m, flag })
}

pub(super) fn register_membarrier() {
    // SAFETY: membarrier takes (cmd, flags[, cpu]) integers and touches no memory of ours.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_membarrier,
            MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
            0,
        )
    };
    MEMBARRIER.store(rc == 0, Ordering::Relaxed);
}

/// After the state left RUNNING: waits (bounded) until no thread is inside a recording call.
pub(super) fn wait_for_recorders() {
    if MEMBARRIER.load(Ordering::Relaxed) {
        // SAFETY: as in `register_membarrier`.
        unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) };
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let own = BUSY.with(|b| b.get());
    for flag in BUSY_FLAGS.lock().iter() {
        if std::ptr::eq(*flag, own) {
            continue;
        }
        while flag.load(Ordering::Acquire) {
            if std::time::Instant::now() > deadline {
                warn("a thread was still recording when the measurement ended; its last events may be incomplete");
                return;
            }
            std::thread::yield_now();
        }
    }
}
