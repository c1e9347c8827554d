//! Threads of pomptrace's own (the writer thread, the buffer-preparing thread, the metric
//! sampler): none runs unless there is work only it can do. Each starts with every signal
//! blocked, so a signal sent to the process never lands on one, and is known by its OS thread
//! id, so that a fault on one (whose work the end of the measurement may need) ends the process
//! at once instead of writing the trace from it.

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

use crate::base::signal_safe_mutex::with_signals_blocked;

/// OS thread ids of the helpers started so far (0: free slot). More helpers than slots only
/// go unrecognised by the fault check.
static HELPERS: [AtomicI32; 8] = [const { AtomicI32::new(0) }; 8];
static STARTED: AtomicUsize = AtomicUsize::new(0);

/// Starts `body` on a helper thread named `name`.
pub(crate) fn spawn(name: String, body: Box<dyn FnOnce() + Send>) -> std::io::Result<()> {
    let run = move || {
        note(gettid());
        body()
    };
    with_signals_blocked(|| std::thread::Builder::new().name(name).spawn(run))?;
    STARTED.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

fn note(tid: i32) {
    for slot in &HELPERS {
        if slot
            .compare_exchange(0, tid, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

/// Whether the calling thread is a helper. Async-signal-safe (a system call and loads).
pub(crate) fn on_helper_thread() -> bool {
    let tid = gettid();
    HELPERS
        .iter()
        .any(|slot| slot.load(Ordering::Acquire) == tid)
}

/// How many helper threads this process has started.
pub(crate) fn started() -> usize {
    STARTED.load(Ordering::Relaxed)
}

fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail; a raw syscall is async-signal-safe.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_helper_knows_it_is_one_and_starts_with_signals_blocked() {
        let (tx, rx) = std::sync::mpsc::channel();
        let before = started();
        spawn(
            "helper-test".into(),
            Box::new(move || {
                // SAFETY: queries this thread's mask into a valid sigset_t.
                let term_blocked = unsafe {
                    let mut mask: libc::sigset_t = std::mem::zeroed();
                    libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask);
                    libc::sigismember(&mask, libc::SIGTERM) == 1
                };
                tx.send((on_helper_thread(), term_blocked)).unwrap();
            }),
        )
        .unwrap();
        assert_eq!(rx.recv().unwrap(), (true, true));
        assert!(started() > before);
        assert!(!on_helper_thread());
    }
}
