//! The end of a thread that has a state (its pthread key's destructor, which runs after the
//! thread's own thread-local destructors; see `model::thread`): it gives back the ownership
//! words it holds, and a thread of control queues its locations for retirement (`retire.rs`).

use std::sync::atomic::Ordering;

use super::retire;
use super::state::{MEASUREMENT, RUNNING, STATE};
use crate::base::clock;
use crate::model::thread::ThreadState;
use crate::record::location::LocationCell;

/// The exit hook of every thread with a state (`thread::set_exit_hook`).
pub(crate) fn thread_ends(thread: &'static ThreadState) {
    if STATE.load(Ordering::Acquire) != RUNNING {
        // Not running (any more): the end of the measurement takes every location as it is.
        return;
    }
    let Some(m) = MEASUREMENT.get() else {
        return;
    };
    let tid = thread.tid.get();
    let mut ended: Vec<&'static LocationCell> = Vec::new();
    // SAFETY: nodes are leaked, never freed.
    if let Some(node) = unsafe { thread.node.get().as_ref() } {
        if node.is_root && !std::ptr::eq(node, m.root()) {
            // A thread of control: its teams ended before it did (each join waits for its
            // team), so nobody holds a location below it but itself.
            ended.extend(node.subtree_locations());
        } else {
            // A position it took for good (`team::adopt`): free for whoever takes it next.
            node.location.release(tid);
        }
    }
    // Its own stand-in locations (see `team::stand_in`): nobody else knows of them.
    ended.extend(thread.stand_ins.borrow().iter().map(|(_, own)| *own));
    if ended.is_empty() {
        return;
    }
    for location in &ended {
        location.release(tid);
    }
    retire::queue(ended, clock::now());
}
