//! Locations of threads that ended before the measurement does. A thread of control (a pthread
//! that called POMP2) leaves its locations behind: the root location and those of its teams,
//! which no thread can reach any more once it has ended. They are retired: their open regions
//! closed at the time the thread ended, their writers finished, their buffers given to the
//! writer for the locations of threads still to come. Each keeps its number, name and events,
//! as OTF2 needs.
//!
//! The ending thread only queues them (`thread_exit.rs`). Finishing a writer waits for the
//! writer thread, so the queue is worked off where that is harmless: where a new location is
//! made (`retire_ended`), i.e. when a new thread needs what the ended ones free, by a thread
//! inside a recording call (so the end of the measurement waits for it). What is still queued
//! when the measurement ends is written with every other location.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::base::signal_safe_mutex::SignalSafeMutex;
use crate::record::location::{LocationCell, Retired};
use otf2::BackgroundWriter;

/// Locations of ended threads not retired yet, with the time their thread ended.
static ENDED: SignalSafeMutex<Vec<(&'static LocationCell, u64)>> = SignalSafeMutex::new(Vec::new());

/// Whether `ENDED` has anything (so that making a location does not take its lock for nothing).
static ANY_ENDED: AtomicBool = AtomicBool::new(false);

/// Queues the locations of a thread that ended at `time` (it holds none of them any more).
pub(crate) fn queue(locations: Vec<&'static LocationCell>, time: u64) {
    let mut queue = ENDED.lock();
    queue.extend(locations.into_iter().map(|location| (location, time)));
    ANY_ENDED.store(true, Ordering::Release);
}

/// Retires the queued locations, giving their buffers to `writer` (see the module
/// documentation).
pub(crate) fn retire_ended(writer: &BackgroundWriter) {
    if !ANY_ENDED.load(Ordering::Acquire) {
        return;
    }
    let ended = {
        let mut queue = ENDED.lock();
        ANY_ENDED.store(false, Ordering::Release);
        std::mem::take(&mut *queue)
    };
    for (cell, time) in ended {
        // A location somebody holds (a position taken for good by a thread first seen outside
        // any team it saw begin) stays; the end of the measurement writes it.
        if !cell.take_for_retirement() {
            continue;
        }
        // SAFETY: the ownership word is now the retirement's for good: nobody writes it.
        let loc = unsafe { cell.get() };
        let Some(events) = loc.retire(time) else {
            continue;
        };
        let mut account = Retired {
            events: events.events(),
            clamped_timestamps: events.clamped_timestamps(),
            oversized_events: events.oversized_events(),
            waited: events.sink().waited(),
            error: None,
        };
        let (sink, result) = events.finish();
        if let Err(e) = result {
            account.error = Some(e.to_string());
        }
        writer.give_back(sink.into_buffers());
        loc.set_retired(account);
    }
}
