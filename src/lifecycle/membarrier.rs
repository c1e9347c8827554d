//! Expedited membarrier: once the process is registered, the end of the measurement orders
//! every recorder's stores with one system call, so the hot path needs only a compiler fence
//! (see `active.rs`). Registration is asynchronous and may never happen; the hot path learns
//! of it through `HOT_MEMBARRIER` only once it is final.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::base::signal_safe_mutex::with_signals_blocked;
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

/// Registers for expedited membarrier at once when the process has a single thread: the kernel
/// then needs no RCU grace period (4 µs measured here, against 13 ms once a second thread
/// exists), so recording uses compiler fences from its first event. Called at the start of the
/// measurement, before it starts threads of its own; with other threads already running, the
/// delayed registration below is used instead.
pub(crate) fn register_membarrier_if_alone() {
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
pub(crate) fn register_membarrier() {
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
    let spawned = with_signals_blocked(|| {
        std::thread::Builder::new()
            .name("pomptrace-membarrier".into())
            .spawn(register)
    });
    if spawned.is_err() {
        MEMBARRIER.store(MEMBARRIER_UNUSED, Ordering::SeqCst);
    }
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
