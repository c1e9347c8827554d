//! The end, once: POMP2_Finalize, the exit handler and fatal signals all come here. Waits for
//! threads still inside a recording call (the waiting half of the protocol that `active.rs`
//! describes), then has the trace written.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::state::{
    update_hot, DISABLED, FINISHED, MEASUREMENT, NOT_STARTED, RUNNING, START_LOCK, STATE,
};
use super::{membarrier, write};
use crate::base::diagnostics::warn;
use crate::model::thread;
use crate::record::location::Location;

/// Ends the measurement once: closes open regions, drains every location's events, writes
/// definitions and the anchor file, and prints one line saying where the trace is. The exit
/// status is not known here (POMP2_Finalize); ProgramEnd records it as undefined.
pub(crate) fn finalize() {
    finalize_with_status(otf2::UNDEFINED_I64)
}

/// `finalize` at the end of the process: `exit_status` is what exit() was given (or 128 +
/// the signal number for a fatal signal, as shells report it).
pub(crate) fn finalize_with_status(exit_status: i64) {
    finalize_from(exit_status, false)
}

/// `finalize_with_status` from a fatal signal's handler, on the thread the signal interrupted:
/// that thread may be in the middle of a recording call, and then its location is left as it is.
pub(crate) fn finalize_in_signal_handler(exit_status: i64) {
    finalize_from(exit_status, true)
}

fn finalize_from(exit_status: i64, interrupted: bool) {
    if STATE.load(Ordering::Acquire) == DISABLED {
        // Also a forked child, where another thread of the parent may have held the lock.
        return;
    }
    let _guard = START_LOCK.lock();
    let ended = STATE.compare_exchange(RUNNING, FINISHED, Ordering::AcqRel, Ordering::Acquire);
    update_hot();
    if ended.is_err() {
        if STATE.load(Ordering::Acquire) == NOT_STARTED {
            // Finalize before any event: nothing to write, and nothing may start afterwards.
            STATE.store(FINISHED, Ordering::Release);
            update_hot();
        }
        return;
    }
    let still_busy = wait_for_recorders(interrupted);
    if let Some(m) = MEASUREMENT.get() {
        match write::write_trace(m, exit_status, &still_busy) {
            Ok(summary) => {
                if m.config.verbose > 0 {
                    warn(&summary.line);
                }
                if m.config.verbose > 1 {
                    warn(&summary.cost);
                }
            }
            Err(message) => warn(&message),
        }
    }
}

/// After the state left RUNNING: waits (bounded) until no thread is inside a recording call.
/// Returns the locations of the threads that were still busy when the wait ended: they may
/// still be written, so the end of the measurement leaves them alone. `interrupted`: the
/// calling thread is a signal handler's, and its own recording call (if it was in one) cannot
/// end before the handler does.
fn wait_for_recorders(interrupted: bool) -> Vec<*mut Location> {
    membarrier::order_every_recorder();
    let deadline = Instant::now() + RECORDERS_DEADLINE;
    let mut still_busy = Vec::new();
    thread::for_each_state(|busy, location, own| {
        if own {
            if interrupted && busy.load(Ordering::Acquire) {
                still_busy.push(location);
            }
            return;
        }
        // A recording call lasts well under a microsecond unless its thread lost its core:
        // then short sleeps, each longer than the last, give that core away (the thread may
        // be waiting for it) instead of spinning on it.
        let mut pause = FIRST_PAUSE;
        while busy.load(Ordering::Acquire) {
            let now = Instant::now();
            if now >= deadline {
                still_busy.push(location);
                return;
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(LONGEST_PAUSE);
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

/// How long the end waits for threads inside a recording call.
const RECORDERS_DEADLINE: Duration = Duration::from_secs(2);
const FIRST_PAUSE: Duration = Duration::from_micros(20);
const LONGEST_PAUSE: Duration = Duration::from_millis(5);
