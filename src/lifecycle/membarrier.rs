//! Expedited membarrier: once the process is registered, the end of the measurement orders
//! every recorder's stores with one system call, so the hot path needs only a compiler fence
//! (see `active.rs`). Registration may never happen (and takes no thread of its own); the hot
//! path learns of it through `HOT_MEMBARRIER` only once it is final.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use crate::base::clock;
use crate::lifecycle::state::{HOT, HOT_MEMBARRIER};

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

/// When the measurement started (CLOCK_MONOTONIC ns), for `register_once_the_run_is_long`.
static STARTED_NS: AtomicU64 = AtomicU64::new(0);
/// A thread has taken on the registration that the start could not make.
static LATE_REGISTRATION_CLAIMED: AtomicBool = AtomicBool::new(false);

/// Registers for expedited membarrier at once when the process has a single thread: the kernel
/// then needs no RCU grace period (4 µs measured here, against 13 ms once a second thread
/// exists), so recording uses compiler fences from its first event. Called at the start of the
/// measurement; with other threads already running, `register_once_the_run_is_long` registers
/// later, if the run lasts.
pub(crate) fn register_membarrier_if_alone() {
    STARTED_NS.store(clock::monotonic_ns(), Ordering::Relaxed);
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

/// How long a run records with real fences before it registers for membarrier: twenty times
/// what the registration costs the thread that makes it once other threads exist (an RCU grace
/// period, 13 ms measured here).
const MEMBARRIER_AFTER_NS: u64 = 250_000_000;

/// Registers a process that had threads already at the start, on the calling thread, once the
/// run has recorded for `MEMBARRIER_AFTER_NS` (called when a chunk fills, off the hot path).
/// The registration waits for an RCU grace period, which the calling thread spends in the
/// kernel, and which a process cannot exit during: a short run never pays it (nor starts a
/// thread to pay it elsewhere), a long one pays it once, a small share of its length. Until
/// then, recording uses a real fence.
pub(crate) fn register_once_the_run_is_long() {
    if MEMBARRIER.load(Ordering::Relaxed) != MEMBARRIER_PENDING
        || clock::monotonic_ns().saturating_sub(STARTED_NS.load(Ordering::Relaxed))
            < MEMBARRIER_AFTER_NS
        || LATE_REGISTRATION_CLAIMED.swap(true, Ordering::Relaxed)
    {
        return;
    }
    settle_membarrier(if register_with_kernel() {
        MEMBARRIER_REGISTERED
    } else {
        MEMBARRIER_UNUSED
    });
}

/// At the end of the measurement: a registration still under way is called off (every recorder
/// has used real fences); one that completed is relied on by recorders, so the barrier is
/// issued, after which every recorder's busy flag is visible to this thread.
pub(crate) fn order_every_recorder() {
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
