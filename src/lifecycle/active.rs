//! Who is recording right now. Every call that touches its thread's location holds an
//! [`Active`] guard, which marks the thread busy; the end of the measurement waits until no
//! thread is busy before it takes the locations, so a thread still recording (exit() or a signal
//! in the middle of a parallel region) never writes into a location that is being closed.
//!
//! The protocol is a Dekker-style store-then-load on both sides. The recording side pays two
//! plain stores and a compiler fence per call; the heavy barrier is issued once, at the end, for
//! every thread at once (`membarrier`). Without membarrier the recording side uses a real fence.
//!
//! Clearing the flag also raises a fatal signal put off while the thread was busy (see
//! `lifecycle::process`): one more load and a branch not taken per call.

use std::sync::atomic::Ordering;

use crate::lifecycle::measurement::Measurement;
use crate::lifecycle::start::started;
use crate::lifecycle::state::hot;
use crate::lifecycle::state::HOT_ENDED;
use crate::lifecycle::state::HOT_MEMBARRIER;
use crate::lifecycle::state::HOT_METRICS;
use crate::lifecycle::state::HOT_RECORDING;
use crate::lifecycle::state::HOT_RUNNING;
use crate::lifecycle::state::HOT_TSC;
use crate::model::thread::{self, ThreadState};

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
        unsafe { crate::lifecycle::state::MEASUREMENT.get_unchecked() }
    }
    #[inline(always)]
    pub fn thread(&self) -> &'static ThreadState {
        self.thread
    }
    /// The current time (the clock's kind is part of the hot word, so no second load).
    #[inline(always)]
    pub fn now(&self) -> u64 {
        crate::base::clock::now_with(self.hot & HOT_TSC != 0)
    }
    /// The current time, read only after every earlier instruction finished: the time of an
    /// acquisition, which must not precede the release that made it possible.
    #[inline(always)]
    pub fn now_after_acquiring(&self) -> u64 {
        crate::base::clock::now_after_with(self.hot & HOT_TSC != 0)
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
        self.thread.end_call();
    }
}

/// The running measurement (started if `start` and needed), with this thread marked busy until
/// the returned guard is dropped. None when not recording.
#[inline(always)]
pub fn active(start: bool) -> Option<Active> {
    active_on(thread::state(), start)
}

/// `active` for a caller that holds the calling thread's state already: the thread-local slot
/// is read once, not twice (the compiler cannot merge the two reads across the stores between).
#[inline(always)]
pub fn active_on(thread: &'static ThreadState, start: bool) -> Option<Active> {
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
    thread.end_call();
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

/// What a fast path did, for its entry point to finish with: nothing (`DONE`); or the general
/// path still to take; or, for a location that records more than the trace (a profile, the
/// size budget's counts), the second try at `time` (`counted_at`). The fast path itself calls
/// nothing, so that it keeps its values in scratch registers; what needs a call happens after
/// it. A signal that arrived during the fast path is raised by the general path
/// (`raise_pending_signal`), after the second try; a fast path that recorded takes the general
/// path for that alone (`RAISE`).
///
/// One word, so that it travels in one register: 0, 1 and 2 are `DONE`, `GENERAL` and `RAISE`;
/// any other value is the time of the second try (a TSC reading is never that small; one
/// that were would take the general path instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Outcome(u64);

impl Outcome {
    /// Recorded (or nothing to record), nothing left to do.
    pub const DONE: Outcome = Outcome(0);
    /// Not recorded: the general path has to.
    pub const GENERAL: Outcome = Outcome(1);
    /// Recorded, and a signal to raise (the general path raises it and records nothing).
    const RAISE: Outcome = Outcome(2);
    /// Values above this are times of a second try.
    const LAST_CONSTANT: u64 = 2;

    /// Not recorded by a location that is not plain: the second try, at `time`.
    #[inline(always)]
    fn counted(time: u64) -> Self {
        if time > Self::LAST_CONSTANT {
            Outcome(time)
        } else {
            Self::GENERAL
        }
    }
    /// Whether nothing is left to do.
    #[inline(always)]
    pub fn is_done(self) -> bool {
        self == Self::DONE
    }
    /// Whether the general path still has to record the call.
    #[inline(always)]
    pub fn needs_general(self) -> bool {
        self != Self::DONE && self != Self::RAISE
    }
    /// The time of the second try, for a location that is not plain.
    #[inline(always)]
    pub fn counted_at(self) -> Option<u64> {
        (self.0 > Self::LAST_CONSTANT).then_some(self.0)
    }
}

/// Raises the signal that arrived during a fast path that gave way to the general path, if
/// one did (see `ThreadState::end_call`).
#[inline(always)]
pub fn raise_pending_signal() {
    if let Some(thread) = thread::existing() {
        if thread.pending_signal.load(Ordering::Relaxed) != 0 {
            thread.raise_pending_signal();
        }
    }
}

impl Active {
    /// Ends the call of a fast path (`done`: it recorded) without calling anything (see
    /// `Outcome` for a signal that arrived meanwhile).
    #[inline(always)]
    pub fn finish(self, done: bool) -> Outcome {
        let signal = self.thread.end_call_quietly();
        std::mem::forget(self);
        if !done {
            Outcome::GENERAL
        } else if signal {
            Outcome::RAISE
        } else {
            Outcome::DONE
        }
    }

    /// Ends the call of a fast path that found its location not plain: the entry point tries
    /// again with the time it read, `time` (see `Outcome`).
    #[inline(always)]
    pub fn hand_to_counted(self, time: u64) -> Outcome {
        self.thread.end_call_quietly();
        std::mem::forget(self);
        Outcome::counted(time)
    }
}

/// `active(false)` for the common state only: the guard when the hot word is `HOT_FAST` and
/// this thread already has its state; otherwise what the entry point has to do, with nothing
/// changed: its general path (which starts the measurement, fences, creates the state as
/// needed). The guard's `now` is the TSC and its `recording` is true.
#[inline(always)]
pub fn active_fast() -> Result<Active, Outcome> {
    let Some(thread) = thread::existing() else {
        return Err(Outcome::GENERAL);
    };
    thread.busy.store(true, Ordering::Relaxed);
    // The protocol of `active`: HOT_FAST includes HOT_MEMBARRIER, so whenever the value read
    // after this compiler fence is used, finalize issues the barrier for this thread.
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    if hot() == HOT_FAST {
        return Ok(Active {
            thread,
            hot: HOT_FAST,
        });
    }
    thread.end_call_quietly();
    Err(Outcome::GENERAL)
}

#[cold]
#[inline(never)]
fn start_and_retry() -> Option<Active> {
    started()?;
    active(false)
}
