//! Who is recording right now. Every call that touches its thread's location holds an
//! [`Active`] guard, which marks the thread busy; the end of the measurement waits until no
//! thread is busy before it takes the locations, so a thread still recording (exit() or a signal
//! in the middle of a parallel region) never writes into a location that is being closed.
//!
//! The protocol is a Dekker-style store-then-load on both sides. The recording side pays two
//! plain stores and a compiler fence per call; the heavy barrier is issued once, at the end, for
//! every thread at once (`membarrier`). Without membarrier the recording side uses a real fence.

use std::sync::atomic::{AtomicBool, Ordering};

use super::location::Location;
use super::thread::{self, ThreadState};
use super::{hot, started, warn, Measurement, HOT_RECORDING, HOT_RUNNING, HOT_TSC};

/// A thread inside a call that touches its location (see the module documentation).
pub struct Active {
    m: &'static Measurement,
    thread: &'static ThreadState,
    hot: u8,
}

impl Active {
    #[inline(always)]
    pub fn get(&self) -> &'static Measurement {
        self.m
    }
    #[inline(always)]
    pub fn thread(&self) -> &'static ThreadState {
        self.thread
    }
    /// The current time (the clock's kind is part of the hot word, so no second load).
    #[inline(always)]
    pub fn now(&self) -> u64 {
        super::clock::now_with(self.hot & HOT_TSC != 0)
    }
    /// Whether events other than the team structure are recorded (POMP2_On/Off).
    #[inline(always)]
    pub fn recording(&self) -> bool {
        self.hot & HOT_RECORDING != 0
    }
}

impl Drop for Active {
    #[inline(always)]
    fn drop(&mut self) {
        self.thread.busy.store(false, Ordering::Release);
    }
}

/// Whether the process is registered for expedited membarrier: then finalize issues the heavy
/// barrier for everybody, and recording needs only a compiler fence.
static MEMBARRIER: AtomicBool = AtomicBool::new(false);
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

/// The running measurement (started if `start` and needed), with this thread marked busy until
/// the returned guard is dropped. None when not recording.
#[inline(always)]
pub fn active(start: bool) -> Option<Active> {
    let thread = thread::state();
    thread.busy.store(true, Ordering::Relaxed);
    // Either this thread sees the end of the measurement below, or `wait_for_recorders` sees
    // this flag: a store-load fence between the two, here or (with membarrier) in finalize.
    if MEMBARRIER.load(Ordering::Relaxed) {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
    } else {
        std::sync::atomic::fence(Ordering::SeqCst);
    }
    let hot = hot();
    if hot & HOT_RUNNING != 0 {
        // SAFETY: HOT_RUNNING is only set after the measurement was published.
        let m = unsafe { super::MEASUREMENT.get_unchecked() };
        return Some(Active { m, thread, hot });
    }
    thread.busy.store(false, Ordering::Release);
    if start {
        start_and_retry()
    } else {
        None
    }
}

#[cold]
#[inline(never)]
fn start_and_retry() -> Option<Active> {
    started()?;
    active(false)
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
/// Returns the locations of the threads that were still busy when the wait ended: they may
/// still be written, so the end of the measurement leaves them alone.
pub(super) fn wait_for_recorders() -> Vec<*mut Location> {
    if MEMBARRIER.load(Ordering::Relaxed) {
        // SAFETY: as in `register_membarrier`.
        unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) };
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let mut still_busy = Vec::new();
    thread::for_each_state(|busy, location, own| {
        if own {
            return;
        }
        while busy.load(Ordering::Acquire) {
            if std::time::Instant::now() > deadline {
                still_busy.push(location);
                return;
            }
            std::thread::yield_now();
        }
    });
    if !still_busy.is_empty() {
        warn(&format!(
            "{} thread(s) were still recording when the measurement ended; their locations are left as they are on disk",
            still_busy.len()
        ));
    }
    still_busy
}
