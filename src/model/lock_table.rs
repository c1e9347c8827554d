//! The table behind OpenMP locks' ids: each lock object's state by address, and the
//! generation number that tells a thread's cache of recent lookups when an address may have
//! changed hands (see `locks.rs`). Locked only when a lock is initialised, destroyed, or looked
//! up past the cache.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::output::registry::REGISTRY;

pub(crate) struct LockState {
    pub(crate) id: u32,
    /// Successful (outermost) acquisitions so far.
    pub(crate) order: AtomicU32,
    /// Nesting depth of a nest lock (0 or 1 for a plain lock).
    pub(crate) depth: AtomicU32,
}

/// Locks by address of the lock object; states are leaked (a destroyed lock's state may still
/// sit in a thread's cache, and ids are never reused anyway).
static LOCKS: std::sync::LazyLock<Mutex<HashMap<usize, &'static LockState>>> =
    std::sync::LazyLock::new(|| Mutex::new(HashMap::new()));
/// Bumped on every init and destroy: cached lookups from an older generation are re-checked.
pub(crate) static GENERATION: AtomicU64 = AtomicU64::new(0);

pub(crate) const CACHE_SLOTS: usize = 8;

/// (lock address, generation, state) of the locks a thread used last (kept in its state).
pub(crate) type LockCache = [(usize, u64, Option<&'static LockState>); CACHE_SLOTS];

fn new_state() -> &'static LockState {
    Box::leak(Box::new(LockState {
        id: REGISTRY.lock().new_lock_id(),
        order: AtomicU32::new(0),
        depth: AtomicU32::new(0),
    }))
}

/// `state` for a lock other than the one in the first slot of the cache.
#[inline(never)]
pub(crate) fn state_not_last(
    cache: &mut LockCache,
    lock: usize,
    generation: u64,
) -> &'static LockState {
    let cached = cache
        .iter()
        .find(|(addr, gen, _)| *addr == lock && *gen == generation)
        .and_then(|e| e.2);
    if let Some(state) = cached {
        return state;
    }
    let state = *LOCKS.lock().entry(lock).or_insert_with(new_state);
    cache.rotate_right(1);
    cache[0] = (lock, generation, Some(state));
    state
}

/// A lock was initialised: it gets a new id (also when the address held a destroyed lock).
pub(crate) fn register(lock: usize) {
    LOCKS.lock().insert(lock, new_state());
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

pub(crate) fn unregister(lock: usize) {
    LOCKS.lock().remove(&lock);
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

/// fork() support (see `process::register_fork_handler`): the lock table is held across the
/// fork, so the child never finds it locked by a thread it does not have.
pub(crate) fn hold_for_fork() {
    std::mem::forget(LOCKS.lock());
}

/// # Safety
/// In the parent, on the thread that ran `hold_for_fork`.
pub(crate) unsafe fn release_after_fork() {
    // SAFETY: `hold_for_fork` locked the table on this thread and forgot the guard.
    unsafe { LOCKS.force_unlock() };
}

/// # Safety
/// In the child, on the thread that ran `hold_for_fork` (its only thread).
pub(crate) unsafe fn reset_after_fork_in_child() {
    // SAFETY: as the caller guarantees.
    unsafe { crate::base::signal_safe_mutex::reset_unlocked(&LOCKS) };
}
