//! A location (one OTF2 event stream, one logical OpenMP thread). The calling thread finds its
//! location through its state (`thread.rs`), so recording an event is a pointer load, a clock
//! read and a few stores.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, Ordering};

use otf2::{
    AttributeList, BackgroundSink, Event, EventWriter, Paradigm, PreparedRecords, TypedValue,
};

use crate::output::facts::THREAD_ID_ATTRIBUTE;

/// One OTF2 location: its event writer and the regions open on it.
pub struct Location {
    /// Creation order; also the OTF2 location id.
    pub number: u32,
    pub name: String,
    writer: Option<EventWriter<BackgroundSink>>,
    /// Open regions, innermost last, so that the end of the measurement can close them and a
    /// stray Leave can never unbalance the stream.
    open: Vec<u32>,
    /// The thread team this location currently works in (its Comm id).
    pub team: u32,
    /// The records of this location's last team begin and end, kept encoded.
    team_records: TeamRecords,
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
    pub fn new(number: u32, name: String, writer: EventWriter<BackgroundSink>, team: u32) -> Self {
        Self::with(number, name, Some(writer), team, Vec::with_capacity(64))
    }

    /// A location that records nothing (stands in when a real one cannot be created).
    pub fn without_writer() -> Self {
        Self::with(u32::MAX, String::new(), None, u32::MAX, Vec::new())
    }

    fn with(
        number: u32,
        name: String,
        writer: Option<EventWriter<BackgroundSink>>,
        team: u32,
        open: Vec<u32>,
    ) -> Self {
        Self {
            location: UnsafeCell::new(Location {
                number,
                name,
                writer,
                open,
                team,
                team_records: TeamRecords::default(),
                retired: None,
            }),
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

/// The ownership word of a retired location (no thread id is this).
const RETIRED: u32 = u32::MAX;

impl Location {
    #[inline(always)]
    pub fn enter(&mut self, time: u64, region: u32) {
        self.enter_with(time, region, crate::metrics::synchronous::synchronous());
    }

    /// `enter`, told by the caller whether synchronous metrics are on (the fast path knows it
    /// from the hot word).
    #[inline(always)]
    pub fn enter_with(&mut self, time: u64, region: u32, metrics: bool) {
        if let Some(w) = self.writer.as_mut() {
            if metrics {
                crate::metrics::synchronous::write_synchronous(w, time);
            }
            w.enter(time, region);
            self.open.push(region);
        }
    }

    /// `enter_with` without synchronous metrics, in the common case only: the location has a
    /// writer, room for one more open region and for the record in its chunk, and `time` is
    /// later than its last. False, with nothing changed, otherwise. Calls nothing.
    #[inline(always)]
    pub fn try_enter_fast(&mut self, time: u64, region: u32) -> bool {
        let Some(w) = self.writer.as_mut() else {
            return false;
        };
        let depth = self.open.len();
        if depth == self.open.capacity() || !w.try_enter(time, region) {
            return false;
        }
        // SAFETY: `depth < capacity`, checked above: the slot is allocated, and the stack grows
        // by that one initialised element (a plain `push` would keep its growth call here).
        unsafe {
            self.open.as_mut_ptr().add(depth).write(region);
            self.open.set_len(depth + 1);
        }
        true
    }

    /// `leave_with` without synchronous metrics, in the common case only: `region` is the
    /// innermost open one and the record fits as for `try_enter_fast`. Calls nothing.
    #[inline(always)]
    pub fn try_leave_fast(&mut self, time: u64, region: u32) -> bool {
        let Some(w) = self.writer.as_mut() else {
            return false;
        };
        if self.open.last() != Some(&region) || !w.try_leave(time, region) {
            return false;
        }
        self.open.pop();
        true
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
        if self.open.last() == Some(&region) {
            self.open.pop();
            if let Some(w) = self.writer.as_mut() {
                if metrics {
                    crate::metrics::synchronous::write_synchronous(w, time);
                }
                w.leave(time, region);
            }
        } else {
            self.leave_out_of_order(time, region);
        }
    }

    #[cold]
    fn leave_out_of_order(&mut self, time: u64, region: u32) {
        if let Some(depth) = self.open.iter().rposition(|&r| r == region) {
            while self.open.len() > depth {
                let r = self.open.pop().unwrap_or(region);
                if let Some(w) = self.writer.as_mut() {
                    if crate::metrics::synchronous::synchronous() {
                        crate::metrics::synchronous::write_synchronous(w, time);
                    }
                    w.leave(time, r);
                }
            }
        } else {
            crate::base::diagnostics::warn_once(&format!("unbalanced-leave {region}"), || {
                let registry = crate::output::registry::REGISTRY.lock();
                let name = registry.region_name(region).unwrap_or("(unknown region)");
                format!("region \"{name}\" was left but not entered; ignoring that leave")
            });
        }
    }

    /// Leaves every open region (end of measurement).
    pub fn close_open_regions(&mut self, time: u64) {
        while let Some(r) = self.open.pop() {
            if let Some(w) = self.writer.as_mut() {
                w.leave(time, r);
            }
        }
    }

    /// The writer, while the measurement runs.
    #[inline(always)]
    pub fn writer(&mut self) -> Option<&mut EventWriter<BackgroundSink>> {
        self.writer.as_mut()
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
            if let Some(w) = self.writer.as_mut() {
                if w.write_prepared(time, &self.team_records.begin) {
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
        if !metrics
            && self.team_records.end_key == (region, team)
            && self.open.last() == Some(&region)
        {
            if let Some(w) = self.writer.as_mut() {
                if w.write_prepared(time, &self.team_records.end) {
                    self.open.pop();
                    return;
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
        if self.team_records.end_key != (region, team) || self.team_records.end.events() == 0 {
            let mut prepared = PreparedRecords::new();
            prepared.leave(region).thread_team_end(team);
            self.team_records.end = prepared;
            self.team_records.end_key = (region, team);
        }
    }

    /// Ends recording on this location and hands back its writer.
    pub fn take_writer(&mut self) -> Option<EventWriter<BackgroundSink>> {
        self.writer.take()
    }

    /// Ends recording on this location before the end of the measurement (its thread of control
    /// has ended): closes its open regions at `time` and hands back its writer, to be finished
    /// by the caller, who keeps the account with `set_retired`. The location keeps its number
    /// and name; only what recording needed is freed.
    pub fn retire(&mut self, time: u64) -> Option<EventWriter<BackgroundSink>> {
        self.close_open_regions(time);
        self.open = Vec::new();
        self.team_records = TeamRecords::default();
        self.writer.take()
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
