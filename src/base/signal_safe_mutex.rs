//! Mutexes the trace writer takes when a fatal signal ends the program (the region registry,
//! the location and team lists, the archive, the start/finalize lock). Each is held only with
//! the asynchronous fatal signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT) blocked on the holding
//! thread: such a signal then never interrupts a thread in the middle of one of these critical
//! sections — which the writer would wait for in vain, the interrupted thread waiting in the
//! signal handler for the writer. A signal sent meanwhile goes to another thread, or (sent to
//! this thread) arrives right after the lock is released.
//!
//! Costs two `pthread_sigmask` calls per outermost lock; these locks are all off the hot path.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};

use parking_lot::{Mutex, MutexGuard};

/// Signals sent by somebody else, which can wait until a critical section is over. Faults
/// (SIGSEGV, ...) are raised by the faulting instruction and cannot be put off.
pub(crate) const ASYNC_FATAL_SIGNALS: [libc::c_int; 4] =
    [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

pub struct SignalSafeMutex<T>(Mutex<T>);

/// Field order matters: the lock is released before the signals are unblocked.
pub struct SignalSafeGuard<'a, T> {
    guard: MutexGuard<'a, T>,
    _signals: AsyncSignalsBlocked,
}

impl<T> SignalSafeMutex<T> {
    pub const fn new(value: T) -> Self {
        Self(Mutex::new(value))
    }

    pub fn lock(&self) -> SignalSafeGuard<'_, T> {
        let signals = AsyncSignalsBlocked::new();
        if let Some(guard) = self.0.try_lock() {
            return SignalSafeGuard {
                guard,
                _signals: signals,
            };
        }
        // Contended: wait with the signals deliverable, so that a program stuck here can
        // still be interrupted. A signal in the few instructions between getting the lock and
        // blocking them is left to the signal handler's bounded wait.
        drop(signals);
        let guard = self.0.lock();
        SignalSafeGuard {
            guard,
            _signals: AsyncSignalsBlocked::new(),
        }
    }

    /// fork() support (see `process::register_fork_handler`), without touching the signal
    /// mask: locks the mutex and keeps it locked through the fork.
    pub(crate) fn hold_across_fork(&self) {
        std::mem::forget(self.0.lock());
    }

    /// # Safety
    /// In the parent after fork(), on the thread that ran `hold_across_fork`.
    pub(crate) unsafe fn release_in_parent(&self) {
        // SAFETY: `hold_across_fork` locked it on this thread and forgot the guard.
        unsafe { self.0.force_unlock() }
    }

    /// # Safety
    /// In the child after fork() (its only thread, which ran `hold_across_fork`).
    pub(crate) unsafe fn reset_in_child(&self) {
        // SAFETY: as the caller guarantees.
        unsafe { reset_unlocked(&self.0) }
    }
}

impl<T> Deref for SignalSafeGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for SignalSafeGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

thread_local! {
    /// How many signal-safe locks this thread holds, and its signal mask before the first.
    static HELD: Cell<(u32, Option<libc::sigset_t>)> = const { Cell::new((0, None)) };
}

/// The asynchronous fatal signals blocked on this thread while any signal-safe lock is held.
/// Counted per thread, so guards may be dropped in any order.
struct AsyncSignalsBlocked;

impl AsyncSignalsBlocked {
    fn new() -> Self {
        let (depth, saved) = HELD.get();
        if depth == 0 {
            // SAFETY: `set` and `old` are valid sigset_t values for these calls to fill.
            let old = unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                let mut old: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                for signal in ASYNC_FATAL_SIGNALS {
                    libc::sigaddset(&mut set, signal);
                }
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
                old
            };
            HELD.set((1, Some(old)));
        } else {
            HELD.set((depth + 1, saved));
        }
        AsyncSignalsBlocked
    }
}

impl Drop for AsyncSignalsBlocked {
    fn drop(&mut self) {
        let (depth, saved) = HELD.get();
        if depth > 1 {
            HELD.set((depth - 1, saved));
            return;
        }
        HELD.set((0, None));
        if let Some(old) = saved {
            // SAFETY: restores the mask saved by `new` on this thread.
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
        }
    }
}

/// Marks `mutex`, locked by this thread before a fork(), unlocked in the child. Not
/// `force_unlock`: when other parent threads were parked on the lock, that wakes them through
/// parking_lot's global table, whose locks a parent thread may have held at the fork.
///
/// # Safety
/// Only in a forked child (the only thread), on a mutex locked by the forking thread.
pub(crate) unsafe fn reset_unlocked<T>(mutex: &parking_lot::Mutex<T>) {
    use parking_lot::lock_api::RawMutex as _;
    use std::sync::atomic::{AtomicU8, Ordering};
    // parking_lot's raw mutex is one atomic state byte (checked here at compile time).
    const _: () = assert!(std::mem::size_of::<parking_lot::RawMutex>() == 1);
    // SAFETY: same size (checked above); INIT is the unlocked state.
    const UNLOCKED: u8 = unsafe { std::mem::transmute(parking_lot::RawMutex::INIT) };
    // SAFETY: the raw mutex is that byte, held in an atomic; the caller guarantees that no
    // other thread exists to see the store.
    let state = unsafe { &*(mutex.raw() as *const parking_lot::RawMutex as *const AtomicU8) };
    state.store(UNLOCKED, Ordering::Release);
}

/// Runs `f` with the asynchronous fatal signals blocked on the calling thread (as while a
/// signal-safe lock is held): for work on a thread of the program that a signal handler on the
/// same thread must not find half done.
pub(crate) fn with_async_fatal_signals_blocked<R>(f: impl FnOnce() -> R) -> R {
    let _blocked = AsyncSignalsBlocked::new();
    f()
}

/// Runs `f` (which creates a thread) with every signal blocked on the calling thread, so the
/// new thread starts with them blocked: a process-directed signal then never lands on a
/// pomptrace thread, whose work the signal handler waits for.
pub(crate) fn with_signals_blocked<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: the sets are valid sigset_t values filled by sigfillset / pthread_sigmask.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let result = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(signal: libc::c_int) -> bool {
        // SAFETY: queries this thread's mask into a valid sigset_t.
        unsafe {
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask);
            libc::sigismember(&mask, signal) == 1
        }
    }

    #[test]
    fn asynchronous_signals_are_blocked_exactly_while_a_lock_is_held() {
        std::thread::spawn(|| {
            let a = SignalSafeMutex::new(1);
            let b = SignalSafeMutex::new(2);
            assert!(!blocked(libc::SIGTERM));
            let first = a.lock();
            let second = b.lock();
            assert!(blocked(libc::SIGTERM) && blocked(libc::SIGINT));
            assert!(!blocked(libc::SIGSEGV), "faults cannot wait");
            // Out of order: still blocked while the second lock is held.
            drop(first);
            assert!(blocked(libc::SIGTERM));
            assert_eq!(*second, 2);
            drop(second);
            assert!(!blocked(libc::SIGTERM));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_signal_the_thread_blocked_itself_stays_blocked() {
        std::thread::spawn(|| {
            // SAFETY: blocks SIGHUP on this test thread only.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGHUP);
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            }
            let m = SignalSafeMutex::new(());
            drop(m.lock());
            assert!(blocked(libc::SIGHUP));
            assert!(!blocked(libc::SIGTERM));
        })
        .join()
        .unwrap();
    }
}
