//! A location (one OTF2 event stream, one logical OpenMP thread). The calling thread finds its
//! location through its state (`thread.rs`), so recording an event is a pointer load, a clock
//! read and a few stores.
//!
//! A location records its events into its trace (the event writer, when tracing) and its
//! call-path profile (`profile.rs`, when profiling), either or both: every Enter and Leave the
//! trace would hold goes to the profile at the same time, so the two always agree. The trace-size
//! budget (`budget.rs`) only ever skips writing an event: what the profile sees never changes.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, Ordering};

use otf2::{
    AttributeList, BackgroundSink, EncodedU32, Event, EventWriter, Paradigm, PreparedRecords,
    TypedValue,
};

use crate::metrics::synchronous::MAX_VALUES;
use crate::output::facts::{THREAD_ID_ATTRIBUTE, THROTTLE_PARAMETER};
use crate::record::budget::{Decision, Filled, LocationBudget, Tallies, Tally};
use crate::record::open_regions::OpenRegions;
use crate::record::profile::Profile;

/// One OTF2 location: its event writer and the regions open on it.
pub struct Location {
    /// Creation order; also the OTF2 location id.
    pub number: u32,
    pub name: String,
    writer: Option<EventWriter<BackgroundSink>>,
    /// The call-path profile, when profiling (see `profile.rs`).
    profile: Option<Profile>,
    /// Open regions, innermost last, so that the end of the measurement can close them and a
    /// stray Leave can never unbalance the stream.
    open: OpenRegions,
    /// The thread team this location currently works in (its Comm id).
    pub team: u32,
    /// The records of this location's last team begin and end, kept encoded.
    team_records: TeamRecords,
    /// Visits and time of each region here, and which ones are no longer written, once the
    /// size budget comes in sight (see `budget.rs`).
    tallies: Tallies,
    /// This location's part of the trace-size budget (touched when a chunk is full).
    budget: LocationBudget,
    /// What the location recorded, once its thread of control ended and its writer was
    /// finished before the end of the measurement (see `retire`).
    retired: Option<Retired>,
}

/// The account of a location whose writer was finished early (its thread of control ended):
/// what the end of the measurement would otherwise read from the writer.
pub struct Retired {
    pub events: u64,
    pub clamped_timestamps: u64,
    pub oversized_events: u64,
    /// Time the producer waited for a free buffer, and how many times.
    pub waited: (std::time::Duration, u64),
    pub error: Option<String>,
}

/// The records of a location's last team begin (ThreadTeamBegin with ThreadId, and the Enter of
/// the parallel region) and end (the Leave and ThreadTeamEnd), and what they were written for:
/// (OS thread id, team, region) and (region, team). A thread that begins and ends the same team
/// position region after region writes them again with one copy each.
#[derive(Default)]
struct TeamRecords {
    begin: PreparedRecords,
    begin_key: (u32, u32, u32),
    end: PreparedRecords,
    end_key: (u32, u32),
}

/// Shared ownership of a location across the OS threads that act as its logical thread over
/// time. OpenMP guarantees one thread at a time per position in the thread tree, which is how
/// locations are handed out (see `team.rs`); the ownership word makes sure of it: a thread
/// takes it (`claim`) when it takes the position, at a team begin, and gives it back
/// (`release`) at the team's end, so a position inferred wrongly (the ancestry of a team the
/// library did not see begin) finds the word taken instead of a second writer in the buffer.
///
/// Aligned to its own cache lines: locations of different threads are written on every event.
/// The ownership word sits beside the location, on the line its owner writes anyway.
#[repr(align(128))]
pub struct LocationCell {
    location: UnsafeCell<Location>,
    /// The OS thread id of the thread that writes the location now; 0: none.
    owner: AtomicU32,
}

// SAFETY: a location is written only by the thread that holds its ownership word (`claim`);
// finalisation takes it only after recording has stopped.
unsafe impl Sync for LocationCell {}

impl LocationCell {
    /// A location recording into `writer` (None: not tracing) and `profile` (None: not
    /// profiling).
    pub fn new(
        number: u32,
        name: String,
        writer: Option<EventWriter<BackgroundSink>>,
        profile: Option<Profile>,
        team: u32,
    ) -> Self {
        Self::with(number, name, writer, profile, team, 64)
    }

    /// A location that records nothing (stands in when a real one cannot be created).
    pub fn without_writer() -> Self {
        Self::with(u32::MAX, String::new(), None, None, u32::MAX, 0)
    }

    fn with(
        number: u32,
        name: String,
        writer: Option<EventWriter<BackgroundSink>>,
        profile: Option<Profile>,
        team: u32,
        open_capacity: usize,
    ) -> Self {
        let writes = writer.is_some();
        let mut location = Location {
            number,
            name,
            writer,
            profile,
            open: OpenRegions::with_capacity(open_capacity),
            team,
            team_records: TeamRecords::default(),
            tallies: Tallies::new(),
            budget: LocationBudget::new(writes),
            retired: None,
        };
        location.refresh_plain();
        Self {
            location: UnsafeCell::new(location),
            owner: AtomicU32::new(0),
        }
    }

    pub fn as_ptr(&self) -> *mut Location {
        self.location.get()
    }

    /// # Safety
    /// The caller must be the only user of this location for the lifetime of the reference.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get(&self) -> &mut Location {
        // SAFETY: exclusivity is the caller's contract.
        unsafe { &mut *self.location.get() }
    }

    /// Whether OS thread `tid` holds the ownership word (one load: a thread that keeps its
    /// position, as the master continuing into its team, needs no locked instruction).
    #[inline(always)]
    pub fn holds(&self, tid: u32) -> bool {
        self.owner.load(Ordering::Relaxed) == tid
    }

    /// Makes OS thread `tid` the location's one writer if nobody is: true if it is now.
    #[inline(always)]
    pub fn take(&self, tid: u32) -> bool {
        self.owner
            .compare_exchange(0, tid, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// OS thread `tid`, which holds the word, writes the location no longer. Only the holder
    /// writes the word while it holds it, so a plain store gives it back.
    #[inline(always)]
    pub fn release(&self, tid: u32) {
        if self.holds(tid) {
            self.owner.store(0, Ordering::Release);
        }
    }

    /// Takes the word for good, for a location nobody will write again (`Location::retire`):
    /// true if nobody held it. A later `take` fails.
    pub fn take_for_retirement(&self) -> bool {
        self.take(RETIRED)
    }
}

/// The trace's part of a fast Enter: the record written (unless the size budget stopped
/// `region` here) and counted. False, with nothing changed, when it does not fit the chunk.
#[inline(always)]
fn enter_written_fast(
    w: &mut EventWriter<BackgroundSink>,
    tally: &mut Tally,
    time: u64,
    region: u32,
) -> bool {
    if tally.throttled == 0 {
        if !w.try_enter(time, region) {
            return false;
        }
        tally.count_enter(time);
    } else {
        // Stopped by the budget: counted, not written.
        tally.enter(time);
    }
    true
}

/// The trace's part of a fast Leave, as `enter_written_fast`.
#[inline(always)]
fn leave_written_fast(
    w: &mut EventWriter<BackgroundSink>,
    tally: &mut Tally,
    time: u64,
    region: u32,
) -> bool {
    if tally.unrecorded_open == 0 {
        if !w.try_leave(time, region) {
            return false;
        }
        tally.count_leave(time);
    } else {
        tally.leave(time);
    }
    true
}

/// The ownership word of a retired location (no thread id is this).
const RETIRED: u32 = u32::MAX;

impl Location {
    #[inline(always)]
    pub fn enter(&mut self, time: u64, region: u32) {
        self.enter_with(time, region, crate::metrics::synchronous::synchronous());
    }

    /// `enter`, told by the caller whether synchronous metrics are on (the fast path knows it
    /// from the hot word).
    ///
    /// A region the size budget stopped is entered as any other, open regions, counts and the
    /// profile included; only its event is not written.
    #[inline(always)]
    pub fn enter_with(&mut self, time: u64, region: u32, metrics: bool) {
        // Most Enters are the first record at their time, which the fast write takes.
        if !metrics && self.try_enter_fast(time, region) {
            return;
        }
        self.enter_region(time, region, metrics, false);
    }

    /// `enter` right after a record of its own at the same `time` (an acquisition, a task
    /// switch), which the fast write refuses, of a region with its wire form
    /// (`Construct::fast`): a plain location writes the Enter without encoding it, others take
    /// the general write. `task`: the region is an explicit task's, entered at its begin (in the
    /// profile, the task runs in a tree of its own until this region is left, see
    /// `profile.rs`).
    #[inline(always)]
    pub fn enter_after_record(&mut self, time: u64, region: u32, wire: EncodedU32, task: bool) {
        let metrics = crate::metrics::synchronous::synchronous();
        if !metrics {
            if let (Some(depth), Some(w)) = (self.open.fast_push_room(), self.writer.as_mut()) {
                if w.try_enter_encoded_at_last_time(time, wire) {
                    self.open.push_at(depth, region);
                    return;
                }
            }
        }
        self.enter_region(time, region, metrics, task);
    }

    /// `leave` after a record at the same `time` (as `enter_after_record`).
    #[inline(always)]
    pub fn leave_after_record(&mut self, time: u64, region: u32) {
        let metrics = crate::metrics::synchronous::synchronous();
        if !metrics {
            if let (Some(below), Some(w)) = (self.open.fast_pop_room(region), self.writer.as_mut())
            {
                // Plain (tracing alone: no tallies, no profile), and the innermost region.
                w.leave(time, region);
                self.open.pop_to(below);
                self.after_writing(time);
                return;
            }
        }
        self.leave_written_or_not(time, region, metrics);
    }

    /// `enter_with` and `enter_after_record`; `task` is a constant at each call.
    #[inline(always)]
    fn enter_region(&mut self, time: u64, region: u32, metrics: bool, task: bool) {
        if metrics {
            self.enter_with_metrics(time, region, task);
            return;
        }
        if let (Some(depth), Some(w)) = (self.open.fast_push_room(), self.writer.as_mut()) {
            // Plain (tracing alone: no tallies, no profile), with room on the stack.
            w.enter(time, region);
            self.open.push_at(depth, region);
            self.after_writing(time);
            return;
        }
        let write = self.tallies.enter(region, time);
        if let Some(w) = self.writer.as_mut() {
            if write {
                w.enter(time, region);
            }
        } else if self.profile.is_none() {
            return;
        }
        if let Some(p) = self.profile.as_mut() {
            if task {
                p.begin_task(time, region, &[]);
            } else {
                match p.simple_enter(time, region) {
                    Some(node) => p.enter_simple(time, node),
                    None => p.enter(time, region, &[]),
                }
            }
        }
        self.open.push(region);
        self.after_writing(time);
    }

    /// After an event was written: when it filled a chunk, the budget takes it (off the fast
    /// path: one compare here).
    #[inline(always)]
    fn after_writing(&mut self, time: u64) {
        if let Some(w) = self.writer.as_ref() {
            if w.chunks_filled() != self.budget.chunks_seen {
                self.chunk_filled(time);
            }
        }
    }

    /// `enter_with` with the synchronous metrics read once for the trace and the profile;
    /// `task`: the region is a task's (its begin, see `enter_after_record`).
    #[cold]
    #[inline(never)]
    fn enter_with_metrics(&mut self, time: u64, region: u32, task: bool) {
        let write = self.tallies.enter(region, time);
        if self.writer.is_none() && self.profile.is_none() {
            return;
        }
        let mut values = [0u64; MAX_VALUES];
        let n = crate::metrics::synchronous::read_values(&mut values);
        if let (true, Some(w)) = (write, self.writer.as_mut()) {
            crate::metrics::synchronous::write_values(w, time, &values[..n]);
            w.enter(time, region);
        }
        if let Some(p) = self.profile.as_mut() {
            if task {
                p.begin_task(time, region, &values[..n]);
            } else {
                p.enter(time, region, &values[..n]);
            }
        }
        self.open.push(region);
        self.after_writing(time);
    }

    /// `enter_with` without synchronous metrics, in the common case only: the location is
    /// `plain`, has room for one more open region, and its trace has room for the record in its
    /// chunk with `time` later than its last. False, with nothing changed, otherwise (a
    /// location that is not plain takes `try_enter_counted`, the entry point's second try).
    /// Calls nothing.
    #[inline(always)]
    pub fn try_enter_fast(&mut self, time: u64, region: u32) -> bool {
        self.try_enter_fast_with(region, |w| w.try_enter(time, region))
    }

    /// `try_enter_fast` with the region's wire form encoded before (`Construct::fast`).
    #[inline(always)]
    pub fn try_enter_fast_encoded(&mut self, time: u64, region: u32, wire: EncodedU32) -> bool {
        self.try_enter_fast_with(region, |w| w.try_enter_encoded(time, wire))
    }

    #[inline(always)]
    fn try_enter_fast_with(
        &mut self,
        region: u32,
        write: impl FnOnce(&mut EventWriter<BackgroundSink>) -> bool,
    ) -> bool {
        // Tracing alone, the common case: the record, and the region pushed. A location that
        // is not plain has no fast room.
        let Some(depth) = self.open.fast_push_room() else {
            return false;
        };
        let Some(w) = self.writer.as_mut() else {
            return false;
        };
        if !write(w) {
            return false;
        }
        self.open.push_at(depth, region);
        true
    }

    /// Whether the fast paths only write records: tracing, not profiling, the tallies not
    /// counting (kept by `refresh_plain` whenever one of those changes).
    #[inline(always)]
    pub fn plain(&self) -> bool {
        self.open.fast()
    }

    /// `try_enter_fast` for a location that is not `plain`: profiling or counting.
    #[inline(never)]
    pub fn try_enter_counted(&mut self, time: u64, region: u32) -> bool {
        let Some(depth) = self.open.push_room() else {
            return false;
        };
        let Some(tally) = self.tallies.for_fast_path(region) else {
            return false;
        };
        let Some(p) = self.profile.as_mut() else {
            // Counting, tracing alone.
            let (Some(w), Some(tally)) = (self.writer.as_mut(), tally) else {
                return false;
            };
            if !enter_written_fast(w, tally, time, region) {
                return false;
            }
            self.open.push_at(depth, region);
            return true;
        };
        let Some(node) = p.simple_enter(time, region) else {
            return false;
        };
        match (self.writer.as_mut(), tally) {
            (Some(w), Some(tally)) => {
                if !enter_written_fast(w, tally, time, region) {
                    return false;
                }
            }
            (Some(w), None) => {
                if !w.try_enter(time, region) {
                    return false;
                }
            }
            (None, Some(tally)) => tally.count_enter(time),
            (None, None) => {}
        }
        p.enter_simple(time, node);
        self.open.push_at(depth, region);
        true
    }

    /// `leave_with` without synchronous metrics, in the common case only: the location is
    /// `plain`, `region` is the innermost open one, and the record fits as for
    /// `try_enter_fast`. Calls nothing.
    #[inline(always)]
    pub fn try_leave_fast(&mut self, time: u64, region: u32) -> bool {
        self.try_leave_fast_with(region, |w| w.try_leave(time, region))
    }

    /// `try_leave_fast` with the region's wire form encoded before (`Construct::fast`).
    #[inline(always)]
    pub fn try_leave_fast_encoded(&mut self, time: u64, region: u32, wire: EncodedU32) -> bool {
        self.try_leave_fast_with(region, |w| w.try_leave_encoded(time, wire))
    }

    #[inline(always)]
    fn try_leave_fast_with(
        &mut self,
        region: u32,
        write: impl FnOnce(&mut EventWriter<BackgroundSink>) -> bool,
    ) -> bool {
        // Tracing alone (see `try_enter_fast`).
        let Some(below) = self.open.fast_pop_room(region) else {
            return false;
        };
        let Some(w) = self.writer.as_mut() else {
            return false;
        };
        if !write(w) {
            return false;
        }
        self.open.pop_to(below);
        true
    }

    /// `try_leave_fast` for a location that is not `plain` (as `try_enter_counted`).
    #[inline(never)]
    pub fn try_leave_counted(&mut self, time: u64, region: u32) -> bool {
        if self.open.last() != Some(&region) {
            return false;
        }
        let Some(tally) = self.tallies.for_fast_path(region) else {
            return false;
        };
        let Some(p) = self.profile.as_mut() else {
            let (Some(w), Some(tally)) = (self.writer.as_mut(), tally) else {
                return false;
            };
            if !leave_written_fast(w, tally, time, region) {
                return false;
            }
            self.open.pop();
            return true;
        };
        if !p.simple_leave(time) {
            return false;
        }
        match (self.writer.as_mut(), tally) {
            (Some(w), Some(tally)) => {
                if !leave_written_fast(w, tally, time, region) {
                    return false;
                }
            }
            (Some(w), None) => {
                if !w.try_leave(time, region) {
                    return false;
                }
            }
            (None, Some(tally)) => tally.count_leave(time),
            (None, None) => {}
        }
        p.leave_simple(time, region);
        self.open.pop();
        true
    }

    /// Keeps `plain` (see its field) after the writer, the profile or the counting changed.
    fn refresh_plain(&mut self) {
        let plain = self.writer.is_some() && self.profile.is_none() && !self.tallies.counting();
        self.open.set_fast(plain);
    }

    /// The profile's Leave of the innermost open region, `region` (`values`: the synchronous
    /// metrics read with it, if any).
    #[inline(always)]
    fn profile_leave(&mut self, time: u64, region: u32, values: &[u64]) {
        if let Some(p) = self.profile.as_mut() {
            if values.is_empty() && p.simple_leave(time) {
                p.leave_simple(time, region);
            } else {
                p.leave(time, values);
            }
        }
    }

    /// Leaves `region`. Regions opened after it and not yet left are closed first; a Leave of a
    /// region that is not open is dropped, so the stream stays well nested.
    #[inline(always)]
    pub fn leave(&mut self, time: u64, region: u32) {
        self.leave_with(time, region, crate::metrics::synchronous::synchronous());
    }

    /// `leave`, told whether synchronous metrics are on (as `enter_with`).
    #[inline(always)]
    pub fn leave_with(&mut self, time: u64, region: u32, metrics: bool) {
        // Most Leaves are the first record at their time, which the fast write takes.
        if !metrics && self.try_leave_fast(time, region) {
            return;
        }
        self.leave_written_or_not(time, region, metrics);
    }

    /// `leave_with` but for its fast write.
    #[inline(always)]
    fn leave_written_or_not(&mut self, time: u64, region: u32, metrics: bool) {
        if self.open.last() == Some(&region) {
            if metrics {
                self.leave_innermost_with_metrics(time);
                return;
            }
            self.open.pop();
            let write = self.tallies.leave(region, time);
            if let (true, Some(w)) = (write, self.writer.as_mut()) {
                w.leave(time, region);
            }
            self.profile_leave(time, region, &[]);
            self.after_writing(time);
        } else {
            self.leave_out_of_order(time, region);
        }
    }

    /// Leaves the innermost open region with the synchronous metrics (read once for the trace
    /// and the profile).
    #[cold]
    #[inline(never)]
    fn leave_innermost_with_metrics(&mut self, time: u64) {
        let Some(region) = self.open.pop() else {
            return;
        };
        let write = self.tallies.leave(region, time);
        let mut values = [0u64; MAX_VALUES];
        let n = crate::metrics::synchronous::read_values(&mut values);
        if let (true, Some(w)) = (write, self.writer.as_mut()) {
            crate::metrics::synchronous::write_values(w, time, &values[..n]);
            w.leave(time, region);
        }
        self.profile_leave(time, region, &values[..n]);
        self.after_writing(time);
    }

    #[cold]
    fn leave_out_of_order(&mut self, time: u64, region: u32) {
        if self.writer.is_none() && self.profile.is_none() {
            // Nothing is recorded here (a location the budget stopped, or one without a
            // file): its Enters were counted, never opened.
            self.tallies.leave(region, time);
            return;
        }
        if let Some(depth) = self.open.iter().rposition(|&r| r == region) {
            let metrics = crate::metrics::synchronous::synchronous();
            while self.open.len() > depth {
                if metrics {
                    self.leave_innermost_with_metrics(time);
                    continue;
                }
                let r = self.open.pop().unwrap_or(region);
                let write = self.tallies.leave(r, time);
                if let (true, Some(w)) = (write, self.writer.as_mut()) {
                    w.leave(time, r);
                }
                self.profile_leave(time, r, &[]);
            }
        } else {
            crate::base::diagnostics::warn_once(&format!("unbalanced-leave {region}"), || {
                let registry = crate::output::registry::REGISTRY.lock();
                let name = registry.region_name(region).unwrap_or("(unknown region)");
                format!("region \"{name}\" was left but not entered; ignoring that leave")
            });
        }
    }

    /// Leaves every open region (end of measurement). A location that stopped recording
    /// (its budget used up) gets its writer back for what the end writes.
    pub fn close_open_regions(&mut self, time: u64) {
        if let Some(w) = self.budget.stopped.take() {
            self.writer = Some(w);
            self.refresh_plain();
        }
        while let Some(r) = self.open.pop() {
            let write = self.tallies.leave(r, time);
            if let (true, Some(w)) = (write, self.writer.as_mut()) {
                w.leave(time, r);
            }
            self.profile_leave(time, r, &[]);
        }
    }

    /// After a chunk filled up: the budget takes it and may stop recording a region here, or
    /// everything (see `budget.rs`); each stop is marked in the events.
    #[cold]
    #[inline(never)]
    fn chunk_filled(&mut self, time: u64) {
        let Some(filled) = self.writer.as_ref().map(|w| Filled {
            chunks: w.chunks_filled(),
            events: w.events(),
            time,
        }) else {
            return;
        };
        let decision = self.budget.on_chunk_filled(
            filled,
            &mut self.tallies,
            &self.open,
            (self.number, &self.name),
        );
        self.refresh_plain();
        let marker = match decision {
            Decision::Nothing => return,
            Decision::Throttle { region, name } => {
                self.tallies.throttle(region);
                name
            }
            Decision::Stop { marker } => marker,
        };
        if let Some(w) = self.writer.as_mut() {
            w.write(
                time,
                None,
                &Event::ParameterString {
                    parameter: THROTTLE_PARAMETER,
                    string: marker,
                },
            );
        }
        if let Decision::Stop { .. } = decision {
            self.end_written_visits(time);
            self.tallies.throttle_all();
            self.budget.stopped = self.writer.take();
            self.refresh_plain();
        }
    }

    /// The budget is used up: the Leave of every open visit whose Enter was written is written
    /// now, innermost first, so the trace stays balanced. The regions stay open here (the
    /// profile and the counts follow the program, which has not left them); their own Leaves
    /// will not be written.
    fn end_written_visits(&mut self, time: u64) {
        let mut unwritten_seen: std::collections::HashMap<u32, u32> =
            std::collections::HashMap::new();
        let mut written = Vec::new();
        for &r in self.open.iter().rev() {
            let seen = unwritten_seen.entry(r).or_insert(0);
            if *seen < self.tallies.slot(r).unrecorded_open {
                *seen += 1;
            } else {
                written.push(r);
            }
        }
        for r in written {
            if let Some(w) = self.writer.as_mut() {
                w.leave(time, r);
            }
            self.tallies.slot(r).unrecorded_open += 1;
        }
    }

    /// What the budget needs at the end (`events`: what its writer wrote).
    pub fn budget_account(&self, events: u64) -> crate::record::budget::LocationAccount<'_> {
        crate::record::budget::LocationAccount {
            number: self.number,
            tallies: &self.tallies,
            budget: &self.budget,
            events,
        }
    }

    /// The writer, while the measurement runs.
    #[inline(always)]
    pub fn writer(&mut self) -> Option<&mut EventWriter<BackgroundSink>> {
        self.writer.as_mut()
    }

    /// ThreadAcquireLock of OpenMP lock `lock` (a critical section's or an `omp_lock_t`), the
    /// `order`-th acquisition. Until the matching release, a chunk that fills is not written
    /// by this thread while the others wait for the lock (`BackgroundSink::hold_back`).
    #[inline(always)]
    pub fn thread_acquire_lock(&mut self, time: u64, lock: u32, order: u32) {
        if let Some(w) = self.writer.as_mut() {
            // First: the acquire's own record may fill the chunk.
            w.sink_mut().hold_back();
            w.thread_acquire_lock(time, Paradigm::OPENMP, lock, order);
        }
    }

    /// ThreadReleaseLock; a chunk held back while the lock was held is written at this
    /// location's next event, which comes after the lock is really released (the release of
    /// a critical section is recorded inside it, in `POMP2_Critical_end`).
    #[inline(always)]
    pub fn thread_release_lock(&mut self, time: u64, lock: u32, order: u32) {
        if let Some(w) = self.writer.as_mut() {
            w.thread_release_lock(time, Paradigm::OPENMP, lock, order);
            if w.sink_mut().let_go() {
                w.write_held_at_next_event();
            }
        }
    }

    #[inline(always)]
    pub fn thread_fork(&mut self, time: u64, requested: u32) {
        if let Some(w) = self.writer.as_mut() {
            w.thread_fork(time, Paradigm::OPENMP, requested);
        }
    }

    #[inline(always)]
    pub fn thread_join(&mut self, time: u64) {
        if let Some(w) = self.writer.as_mut() {
            w.thread_join(time, Paradigm::OPENMP);
        }
    }

    pub fn write(&mut self, time: u64, event: &Event) {
        if let Some(w) = self.writer.as_mut() {
            w.write(time, None, event);
        }
    }

    /// Writes `event` with the OS thread id `tid` as the `ThreadId` attribute (as the
    /// reference does for ProgramBegin; team begins have their own allocation-free encoder).
    pub fn write_with_thread_id(&mut self, time: u64, tid: u32, event: &Event) {
        if let Some(w) = self.writer.as_mut() {
            let mut attributes = AttributeList::new();
            attributes.add(THREAD_ID_ATTRIBUTE, TypedValue::u64(tid as u64));
            w.write(time, Some(&attributes), event);
        }
    }

    /// ThreadTeamBegin with the ThreadId attribute (allocation-free: every team begin writes one).
    #[inline(always)]
    pub fn thread_team_begin(&mut self, time: u64, tid: u32, team: u32) {
        if let Some(w) = self.writer.as_mut() {
            w.thread_team_begin_with_u64_attribute(time, team, THREAD_ID_ATTRIBUTE, tid as u64);
        }
    }

    /// ThreadTeamEnd of the team this location works in.
    #[inline(always)]
    pub fn thread_team_end(&mut self, time: u64) {
        let team = self.team;
        if let Some(w) = self.writer.as_mut() {
            w.thread_team_end(time, team);
        }
    }

    /// ThreadTeamBegin (as `thread_team_begin`) and the Enter of the team's parallel `region`,
    /// at one time; `metrics`: synchronous metrics are on (as `enter_with`). The same records as
    /// written one by one, from the prepared bytes of the last begin when they still apply.
    #[inline(always)]
    pub fn thread_team_begin_and_enter(
        &mut self,
        time: u64,
        tid: u32,
        team: u32,
        region: u32,
        metrics: bool,
    ) {
        if !metrics && self.team_records.begin_key == (tid, team, region) {
            // A plain location (nothing counted, no profile) only writes and pushes.
            if let (Some(depth), Some(w)) = (self.open.fast_push_room(), self.writer.as_mut()) {
                if w.write_prepared(time, &self.team_records.begin) {
                    self.open.push_at(depth, region);
                    return;
                }
            } else if let Some(w) = self.writer.as_mut() {
                if w.write_prepared(time, &self.team_records.begin) {
                    // Never stopped by the budget: its events carry the team's structure.
                    self.tallies.count_enter(region, time);
                    if let Some(p) = self.profile.as_mut() {
                        match p.simple_enter(time, region) {
                            Some(node) => p.enter_simple(time, node),
                            None => p.enter(time, region, &[]),
                        }
                    }
                    self.open.push(region);
                    return;
                }
            }
        }
        self.thread_team_begin_and_enter_one_by_one(time, tid, team, region, metrics);
    }

    #[cold]
    #[inline(never)]
    fn thread_team_begin_and_enter_one_by_one(
        &mut self,
        time: u64,
        tid: u32,
        team: u32,
        region: u32,
        metrics: bool,
    ) {
        self.thread_team_begin(time, tid, team);
        self.enter_with(time, region, metrics);
        if self.writer.is_none() {
            return;
        }
        if self.team_records.begin_key != (tid, team, region)
            || self.team_records.begin.events() == 0
        {
            let mut prepared = PreparedRecords::new();
            prepared
                .thread_team_begin_with_u64_attribute(team, THREAD_ID_ATTRIBUTE, tid as u64)
                .enter(region);
            self.team_records.begin = prepared;
            self.team_records.begin_key = (tid, team, region);
        }
    }

    /// The Leave of the team's parallel `region` (as `leave_with`) and ThreadTeamEnd of the
    /// team this location works in, at one time; prepared as `thread_team_begin_and_enter`.
    #[inline(always)]
    pub fn leave_and_thread_team_end(&mut self, time: u64, region: u32, metrics: bool) {
        let team = self.team;
        if !metrics && self.team_records.end_key == (region, team) {
            // A plain location (nothing counted, no profile) only writes and pops.
            if let (Some(below), Some(w)) = (self.open.fast_pop_room(region), self.writer.as_mut())
            {
                if w.write_prepared(time, &self.team_records.end) {
                    self.open.pop_to(below);
                    return;
                }
            } else if self.open.last() == Some(&region) {
                if let Some(w) = self.writer.as_mut() {
                    if w.write_prepared(time, &self.team_records.end) {
                        self.tallies.count_leave(region, time);
                        self.open.pop();
                        self.profile_leave(time, region, &[]);
                        return;
                    }
                }
            }
        }
        self.leave_and_thread_team_end_one_by_one(time, region, metrics);
    }

    #[cold]
    #[inline(never)]
    fn leave_and_thread_team_end_one_by_one(&mut self, time: u64, region: u32, metrics: bool) {
        let team = self.team;
        self.leave_with(time, region, metrics);
        self.thread_team_end(time);
        if self.writer.is_none() {
            return;
        }
        if self.team_records.end_key != (region, team) || self.team_records.end.events() == 0 {
            let mut prepared = PreparedRecords::new();
            prepared.leave(region).thread_team_end(team);
            self.team_records.end = prepared;
            self.team_records.end_key = (region, team);
        }
    }

    /// Ends recording on this location and hands back its writer.
    pub fn take_writer(&mut self) -> Option<EventWriter<BackgroundSink>> {
        self.open.set_fast(false);
        self.writer.take()
    }

    /// Whether this location keeps a profile.
    #[inline(always)]
    pub fn profiling(&self) -> bool {
        self.profile.is_some()
    }

    /// Ends profiling on this location and hands back its profile.
    pub fn take_profile(&mut self) -> Option<Profile> {
        let profile = self.profile.take();
        self.refresh_plain();
        profile
    }

    /// The call path this location records into now, as a fork hands it to its team
    /// (location number << 32 | node; see `Profile::current_path`), when profiling.
    #[inline(always)]
    pub fn profile_path(&self) -> Option<u64> {
        let p = self.profile.as_ref()?;
        Some((u64::from(self.number) << 32) | u64::from(p.current_path()))
    }

    /// This location begins work in a team (before the Enter of its parallel region): in the
    /// profile, the task it runs now is the team's implicit task.
    #[inline(always)]
    pub fn profile_team_begin(&mut self) {
        if let Some(p) = self.profile.as_mut() {
            p.team_begin();
        }
    }

    /// This location's work in its innermost team ends (after the Leave of its parallel
    /// region).
    #[inline(always)]
    pub fn profile_team_end(&mut self) {
        if let Some(p) = self.profile.as_mut() {
            p.team_end();
        }
    }

    /// This location starts working in a team forked at `path` (`profile_path` of the forking
    /// location): its profile hangs what follows under that call path.
    pub fn profile_thread_start(&mut self, path: u64) {
        if let Some(p) = self.profile.as_mut() {
            p.thread_start(path);
        }
    }

    /// Ends recording on this location before the end of the measurement (its thread of control
    /// has ended): closes its open regions at `time` and hands back its writer, to be finished
    /// by the caller, who keeps the account with `set_retired`. The location keeps its number
    /// and name; only what recording needed is freed.
    pub fn retire(&mut self, time: u64) -> Option<EventWriter<BackgroundSink>> {
        self.close_open_regions(time);
        self.open.free();
        self.tallies.compact(self.budget.tallies_read());
        self.team_records = TeamRecords::default();
        self.take_writer()
    }

    pub fn set_retired(&mut self, account: Retired) {
        self.retired = Some(account);
    }

    /// The account of a location retired early (see `retire`).
    pub fn retired(&self) -> Option<&Retired> {
        self.retired.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_at_a_time_holds_a_locations_ownership_word() {
        let cell = LocationCell::without_writer();
        assert!(!cell.holds(7));
        assert!(cell.take(7));
        assert!(cell.holds(7));
        assert!(!cell.take(8), "a second writer is refused");
        cell.release(8);
        assert!(cell.holds(7), "only the holder gives it back");
        cell.release(7);
        assert!(cell.take(8), "free again");
        cell.release(8);
        assert!(cell.take_for_retirement());
        assert!(!cell.take(7), "nobody takes a retired location");
        assert!(!cell.take_for_retirement());
    }

    #[test]
    fn concurrent_takers_get_it_once() {
        let cell = LocationCell::without_writer();
        let won: u32 = std::thread::scope(|s| {
            let handles: Vec<_> = (1..=8u32)
                .map(|tid| {
                    let cell = &cell;
                    s.spawn(move || u32::from(cell.take(tid)))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(won, 1);
    }
}
