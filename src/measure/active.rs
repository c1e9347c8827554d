//! Who is recording right now. Every call that touches its thread's location holds an
//! [`Active`] guard, which marks the thread busy; the end of the measurement waits until no
//! thread is busy before it takes the locations, so a thread still recording (exit() or a signal
//! in the middle of a parallel region) never writes into a location that is being closed.
//!
//! The protocol is a Dekker-style store-then-load on both sides. The recording side pays two
//! plain stores and a compiler fence per call; the heavy barrier is issued once, at the end, for
//! every thread at once (`membarrier`). Without membarrier the recording side uses a real fence.

use std::sync::atomic::{AtomicU8, Ordering};

use super::location::Location;
use super::thread::{self, ThreadState};
use super::{
    hot, started, warn, Measurement, HOT, HOT_ENDED, HOT_MEMBARRIER, HOT_METRICS, HOT_RECORDING,
    HOT_RUNNING, HOT_TSC,
};

/// A thread inside a call that touches its location (see the module documentation). Two
/// words, so that it travels in registers, also out of the cold start path.
pub struct Active {
    thread: &'static ThreadState,
    hot: u8,
}

impl Active {
    #[inline(always)]
    pub fn get(&self) -> &'static Measurement {
        // SAFETY: an `Active` exists only after HOT_RUNNING was seen, and HOT_RUNNING is only
        // set after the measurement was published (it is never taken down).
        unsafe { super::MEASUREMENT.get_unchecked() }
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
    /// The current time, read only after every earlier instruction finished: the time of an
    /// acquisition, which must not precede the release that made it possible.
    #[inline(always)]
    pub fn now_after_acquiring(&self) -> u64 {
        super::clock::now_after_with(self.hot & HOT_TSC != 0)
    }
    /// Whether Enter and Leave carry synchronous metric values (`metrics::synchronous()`).
    #[inline(always)]
    pub fn metrics(&self) -> bool {
        self.hot & HOT_METRICS != 0
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

/// `MEMBARRIER_REGISTERED` once the process is registered for expedited membarrier: then
/// finalize issues the heavy barrier for everybody, and recording needs only a compiler fence
/// (the hot path reads this as `HOT_MEMBARRIER`, set once this state is final).
static MEMBARRIER: AtomicU8 = AtomicU8::new(MEMBARRIER_PENDING);
const MEMBARRIER_PENDING: u8 = 0;
const MEMBARRIER_REGISTERED: u8 = 1;
/// Registration failed, or finalize came first (then it must not be used any more).
const MEMBARRIER_UNUSED: u8 = 2;
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
    // One load answers both which fence it takes and whether the measurement runs: with
    // HOT_MEMBARRIER set the registration is final and finalize issues the barrier, so the
    // compiler fence suffices and the value read after it stands; without it, the real fence
    // comes first and the word is read again after it.
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    // A measurement that ended (HOT_ENDED, final) records nothing, so it needs no fence.
    let mut word = hot();
    if word & (HOT_MEMBARRIER | HOT_ENDED) == 0 {
        std::sync::atomic::fence(Ordering::SeqCst);
        word = hot();
    }
    if word & HOT_RUNNING != 0 {
        return Some(Active { thread, hot: word });
    }
    thread.busy.store(false, Ordering::Release);
    if start && word & HOT_ENDED == 0 {
        start_and_retry()
    } else {
        None
    }
}

/// The common state of a run, in which one-event calls take their fast path: running,
/// recording, on the TSC, registered for membarrier, and no synchronous metrics (none of
/// `HOT_METRICS`). One comparison of the hot word checks all of it.
pub const HOT_FAST: u8 = HOT_RUNNING | HOT_RECORDING | HOT_TSC | HOT_MEMBARRIER;
const _: () = assert!(HOT_FAST & HOT_METRICS == 0);

/// `active(false)` for the common state only: Some when the hot word is `HOT_FAST` and this
/// thread already has its state; otherwise None, with nothing changed, and the caller takes its
/// general path (which starts the measurement, fences, creates the state as needed).
/// The guard's `now` is the TSC and its `recording` is true.
#[inline(always)]
pub fn active_fast() -> Option<Active> {
    let thread = thread::existing()?;
    thread.busy.store(true, Ordering::Relaxed);
    // The protocol of `active`: HOT_FAST includes HOT_MEMBARRIER, so whenever the value read
    // after this compiler fence is used, finalize issues the barrier for this thread.
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    if hot() == HOT_FAST {
        return Some(Active {
            thread,
            hot: HOT_FAST,
        });
    }
    thread.busy.store(false, Ordering::Release);
    None
}

#[cold]
#[inline(never)]
fn start_and_retry() -> Option<Active> {
    started()?;
    active(false)
}

/// Registers for expedited membarrier at once when the process has a single thread: the kernel
/// then needs no RCU grace period (4 µs measured here, against 13 ms once a second thread
/// exists), so recording uses compiler fences from its first event. Called at the start of the
/// measurement, before it starts threads of its own; with other threads already running, the
/// delayed registration below is used instead.
pub(super) fn register_membarrier_if_alone() {
    if single_threaded() && register_with_kernel() {
        settle_membarrier(MEMBARRIER_REGISTERED);
    }
}

/// Asks the kernel to register this process for private expedited membarrier.
fn register_with_kernel() -> bool {
    // SAFETY: membarrier takes (cmd, flags[, cpu]) integers and touches no memory of ours.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_membarrier,
            MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
            0,
        )
    };
    rc == 0
}

/// Moves the state from pending to `outcome`; finalize may have given up on it meanwhile, and
/// then it stays unused. A registration that became final is announced to the hot path in
/// `HOT` (never before: a bit set while finalize could still call the registration off would
/// leave a recorder without any fence).
fn settle_membarrier(outcome: u8) {
    let settled = MEMBARRIER.compare_exchange(
        MEMBARRIER_PENDING,
        outcome,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
    if settled.is_ok() && outcome == MEMBARRIER_REGISTERED {
        // A read-modify-write, as `update_hot`'s: neither can lose the other's change.
        HOT.fetch_or(HOT_MEMBARRIER, Ordering::SeqCst);
    }
}

/// Whether the process has one thread.
fn single_threaded() -> bool {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| thread_count(&stat))
        == Some(1)
}

/// `num_threads` (field 20) of a /proc/<pid>/stat line.
fn thread_count(stat: &str) -> Option<u32> {
    // The command name (field 2) may hold spaces and parentheses: count after the last ')'.
    let (_, after_name) = stat.rsplit_once(')')?;
    after_name.split_whitespace().nth(17)?.parse().ok()
}

/// How long a run records with real fences before it registers for membarrier.
const MEMBARRIER_DELAY: std::time::Duration = std::time::Duration::from_millis(50);

/// Registers for expedited membarrier on a thread of its own, after `MEMBARRIER_DELAY`: the
/// registration waits for an RCU grace period (13 ms measured here), which a process cannot
/// exit during, so a short run would pay it at start or at its end. Until it is done,
/// recording uses a real fence, which only matters to runs long enough to register.
pub(super) fn register_membarrier() {
    if MEMBARRIER.load(Ordering::SeqCst) != MEMBARRIER_PENDING {
        // Registered at the start, or given up.
        return;
    }
    let register = || {
        std::thread::sleep(MEMBARRIER_DELAY);
        settle_membarrier(if register_with_kernel() {
            MEMBARRIER_REGISTERED
        } else {
            MEMBARRIER_UNUSED
        });
    };
    let spawned = super::process::with_signals_blocked(|| {
        std::thread::Builder::new()
            .name("pomptrace-membarrier".into())
            .spawn(register)
    });
    if spawned.is_err() {
        MEMBARRIER.store(MEMBARRIER_UNUSED, Ordering::SeqCst);
    }
}

/// After the state left RUNNING: waits (bounded) until no thread is inside a recording call.
/// Returns the locations of the threads that were still busy when the wait ended: they may
/// still be written, so the end of the measurement leaves them alone.
pub(super) fn wait_for_recorders() -> Vec<*mut Location> {
    // A registration still under way is called off: every recorder has used real fences. One
    // that completed is relied on by recorders, so the barrier is issued.
    let registered = MEMBARRIER
        .compare_exchange(
            MEMBARRIER_PENDING,
            MEMBARRIER_UNUSED,
            Ordering::SeqCst,
            Ordering::SeqCst,
        )
        .is_err_and(|state| state == MEMBARRIER_REGISTERED);
    if registered {
        // SAFETY: as in `register_with_kernel`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_count_is_read_after_the_command_name() {
        let stat = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 99 \
                    1000 50 18446744073709551615";
        assert_eq!(thread_count(stat), Some(3));
        assert_eq!(thread_count("garbage"), None);
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(thread_count(&own).unwrap() >= 1);
    }
}
