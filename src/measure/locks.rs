//! OpenMP locks: a stable id per lock object, acquisition order per lock, nesting depth for
//! nest locks. Ids are shared with critical sections and never reused.

use std::collections::HashMap;

use once_cell::sync::Lazy;
use parking_lot::Mutex;

use super::REGISTRY;

struct LockState {
    id: u32,
    /// Successful (outermost) acquisitions so far.
    order: u32,
    /// Nesting depth of a nest lock (0 or 1 for a plain lock).
    depth: u32,
}

/// Locks by address of the lock object.
static LOCKS: Lazy<Mutex<HashMap<usize, LockState>>> = Lazy::new(|| Mutex::new(HashMap::new()));

fn state(locks: &mut HashMap<usize, LockState>, lock: usize) -> &mut LockState {
    locks.entry(lock).or_insert_with(|| LockState {
        id: REGISTRY.lock().new_lock_id(),
        order: 0,
        depth: 0,
    })
}

/// A lock was initialised: it gets a new id (also when the address held a destroyed lock).
pub fn register(lock: usize) {
    let id = REGISTRY.lock().new_lock_id();
    LOCKS.lock().insert(
        lock,
        LockState {
            id,
            order: 0,
            depth: 0,
        },
    );
}

pub fn unregister(lock: usize) {
    LOCKS.lock().remove(&lock);
}

/// The lock was just obtained: returns (id, acquisition order). A nest lock counts a new
/// acquisition only when its depth goes from 0 to 1; locks never seen before (initialised
/// outside the wrappers) are registered now.
pub fn acquired(lock: usize, nest: bool) -> (u32, u32) {
    let mut locks = LOCKS.lock();
    let s = state(&mut locks, lock);
    if !nest || s.depth == 0 {
        s.order += 1;
    }
    s.depth = if nest { s.depth + 1 } else { 1 };
    (s.id, s.order)
}

/// The lock is about to be released: returns (id, order of the acquisition being released).
pub fn releasing(lock: usize, nest: bool) -> (u32, u32) {
    let mut locks = LOCKS.lock();
    let s = state(&mut locks, lock);
    s.depth = if nest { s.depth.saturating_sub(1) } else { 0 };
    (s.id, s.order)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
