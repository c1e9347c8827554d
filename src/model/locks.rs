//! OpenMP locks: a stable id per lock object, acquisition order per lock, nesting depth for
//! nest locks. Ids are shared with critical sections and never reused.
//!
//! A lock's counters are only updated while the real lock is held (after obtaining it, before
//! releasing it), so the lock itself serialises them and they need no mutex. Only finding a
//! lock's state by address does: a small per-thread cache answers that on the common path, and
//! a global generation number (bumped whenever a lock is initialised or destroyed) tells the
//! cache when an address may have changed hands.

use std::sync::atomic::Ordering;

use super::lock_table::{state_not_last, LockState, GENERATION};
use super::thread;

/// The state of the lock at `lock`; locks never seen before (initialised outside the
/// wrappers) are registered now.
#[inline(always)]
fn state(lock: usize) -> &'static LockState {
    let generation = GENERATION.load(Ordering::Acquire);
    thread::state().with_lock_cache(|cache| match cache[0] {
        // The lock this thread used last (a loop on one lock, an unset after its set).
        (addr, gen, Some(state)) if addr == lock && gen == generation => state,
        _ => state_not_last(cache, lock, generation),
    })
}

/// The lock was just obtained: returns (id, acquisition order). A nest lock counts a new
/// acquisition only when its depth goes from 0 to 1.
pub fn acquired(lock: usize, nest: bool) -> (u32, u32) {
    let s = state(lock);
    // Relaxed is enough: the caller holds the lock, whose own acquire/release orders these.
    let depth = s.depth.load(Ordering::Relaxed);
    let order = if !nest || depth == 0 {
        // A load and a store, not a locked add: the lock already serialises its holders, and
        // a locked instruction would first wait for this thread's pending stores (the records
        // just written among them).
        let next = s.order.load(Ordering::Relaxed).wrapping_add(1);
        s.order.store(next, Ordering::Relaxed);
        next
    } else {
        s.order.load(Ordering::Relaxed)
    };
    s.depth
        .store(if nest { depth + 1 } else { 1 }, Ordering::Relaxed);
    (s.id, order)
}

/// The lock is about to be released: returns (id, order of the acquisition being released).
pub fn releasing(lock: usize, nest: bool) -> (u32, u32) {
    let s = state(lock);
    let depth = s.depth.load(Ordering::Relaxed);
    s.depth.store(
        if nest { depth.saturating_sub(1) } else { 0 },
        Ordering::Relaxed,
    );
    (s.id, s.order.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::lock_table::{register, unregister};

    #[test]
    fn plain_locks_count_every_acquisition() {
        let lock = 0x1000;
        register(lock);
        let (id, first) = acquired(lock, false);
        assert_eq!(first, 1);
        assert_eq!(releasing(lock, false), (id, 1));
        assert_eq!(acquired(lock, false), (id, 2));
        unregister(lock);
    }

    #[test]
    fn nest_locks_count_only_outermost_acquisitions() {
        let lock = 0x2000;
        register(lock);
        let (id, _) = acquired(lock, true);
        assert_eq!(acquired(lock, true), (id, 1));
        assert_eq!(releasing(lock, true), (id, 1));
        assert_eq!(releasing(lock, true), (id, 1));
        assert_eq!(acquired(lock, true), (id, 2));
        unregister(lock);
    }

    #[test]
    fn unknown_locks_are_registered_on_first_use_and_ids_are_not_reused() {
        let (a, _) = acquired(0x3000, false);
        register(0x3000);
        let (b, order) = acquired(0x3000, false);
        assert_ne!(a, b);
        assert_eq!(order, 1);
    }

    #[test]
    fn a_cached_lock_destroyed_and_initialised_again_gets_a_new_id() {
        let lock = 0x4000;
        register(lock);
        let (first, _) = acquired(lock, false);
        releasing(lock, false);
        // Another thread destroys and re-initialises the lock at the same address.
        std::thread::spawn(move || {
            unregister(lock);
            register(lock);
        })
        .join()
        .unwrap();
        let (second, order) = acquired(lock, false);
        assert_ne!(
            first, second,
            "this thread's cache must not hand out the destroyed lock"
        );
        assert_eq!(order, 1);
    }
}
