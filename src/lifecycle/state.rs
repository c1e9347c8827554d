//! The measurement's global state, read by every call: where the lifecycle stands (not started,
//! starting, running, finished, disabled), whether events are recorded (POMP2_On/Off), and the
//! one-byte word the hot path loads to learn all it needs of both. Owns no behaviour beyond
//! keeping that word in step; never blocks.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use once_cell::sync::OnceCell;

use super::measurement::Measurement;
use crate::base::clock;
use crate::base::signal_safe_mutex::SignalSafeMutex;
use crate::metrics::synchronous as metrics;

pub(crate) const NOT_STARTED: u8 = 0;
pub(crate) const STARTING: u8 = 1;
pub(crate) const RUNNING: u8 = 2;
pub(crate) const FINISHED: u8 = 3;
/// Disabled by configuration, or the start failed: every call only does its OpenMP duty.
pub(crate) const DISABLED: u8 = 4;

pub(crate) static STATE: AtomicU8 = AtomicU8::new(NOT_STARTED);
/// POMP2_On / POMP2_Off.
static RECORDING: AtomicBool = AtomicBool::new(true);
/// What the hot path needs of the global state, in one load: whether the measurement runs
/// and whether events are recorded (`STATE == RUNNING`, `RECORDING`), the clock's kind, and
/// whether recording may do without a real fence (see `active.rs`), and whether Enter and
/// Leave carry metrics.
pub(crate) static HOT: AtomicU8 = AtomicU8::new(0);
pub(crate) const HOT_RUNNING: u8 = 1;
pub(crate) const HOT_RECORDING: u8 = 2;
pub(crate) const HOT_TSC: u8 = 4;
/// The process is registered for expedited membarrier (final): finalize issues the heavy
/// barrier, so recording needs only a compiler fence. Set only by `active.rs`, once the
/// registration is final; `update_hot` keeps it.
pub(crate) const HOT_MEMBARRIER: u8 = 8;
/// Enter and Leave carry synchronous metric values (`metrics::synchronous()`).
pub(crate) const HOT_METRICS: u8 = 16;
/// The measurement is over for this process (finished, disabled, or a forked child). Final, so
/// a call that sees it needs neither a fence nor the start path: with `POMPTRACE_ENABLE=0` every
/// call costs a few instructions instead of a real fence and two calls into the start path.
pub(crate) const HOT_ENDED: u8 = 32;

#[inline(always)]
pub(crate) fn hot() -> u8 {
    HOT.load(Ordering::Relaxed)
}

/// Recomputes `HOT` after `STATE` or `RECORDING` changed.
pub(crate) fn update_hot() {
    let state = STATE.load(Ordering::Acquire);
    let value = if state == RUNNING {
        HOT_RUNNING
            | if clock::is_tsc() { HOT_TSC } else { 0 }
            | if metrics::synchronous() {
                HOT_METRICS
            } else {
                0
            }
            | if RECORDING.load(Ordering::Relaxed) {
                HOT_RECORDING
            } else {
                0
            }
    } else if matches!(state, FINISHED | DISABLED) {
        HOT_ENDED
    } else {
        0
    };
    // A read-modify-write keeps the membarrier bit: the registration sets it with another one
    // (`fetch_or`), so whichever of the two comes second sees the other's result and the bit is
    // never lost to a recomputation racing with the registration.
    let _ = HOT.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| {
        Some(value | (old & HOT_MEMBARRIER))
    });
}

/// The running measurement, once published (never taken down). once_cell's cell rather than
/// std's `OnceLock`: every recording call reads it through `get_unchecked` (see `active.rs`),
/// a plain address; `OnceLock` offers only `get`, an acquire load of its state and a branch on
/// the hot path.
pub(crate) static MEASUREMENT: OnceCell<Measurement> = OnceCell::new();
/// Held by the start and by finalize: each happens once, never both at a time.
pub(crate) static START_LOCK: SignalSafeMutex<()> = SignalSafeMutex::new(());

pub(crate) fn set_recording(on: bool) {
    RECORDING.store(on, Ordering::Relaxed);
    update_hot();
}
