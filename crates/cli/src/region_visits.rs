//! Turns one location's event stream into region visits (matched Enter/Leave pairs, with
//! exclusive time) and marks (fork/join, task, lock events), one chunk at a time: memory is the
//! reader's chunk and the stack of open regions.
//!
//! Damaged nesting never panics:
//! * a Leave whose region is not open on its location is ignored and counted;
//! * a Leave of a region that is open but not innermost closes the regions above it at that
//!   time (counted);
//! * a region still open at the end of its location is closed at the location's last event
//!   time (counted).

use std::collections::HashMap;

use otf2::{ArchiveReader, Event};

use crate::trace_definitions::LocationInfo;

/// One matched Enter/Leave pair. Visits are reported when they end, so an enclosed visit comes
/// before the one enclosing it.
#[derive(Clone, Copy, Debug)]
pub struct Visit {
    pub region: u32,
    pub start: u64,
    pub end: u64,
    /// Time not spent in enclosed visits.
    pub exclusive: u64,
    /// Number of visits open around this one on its location.
    pub depth: usize,
    /// Another visit of the same region is open around this one on its location (recursion,
    /// a task run inside another of the same task construct): its time is already in that
    /// visit's inclusive time.
    pub nested: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MarkKind {
    Fork,
    Join,
    TaskCreate,
    TaskSwitch,
    TaskComplete,
    LockAcquire,
    LockRelease,
}

impl MarkKind {
    pub const ALL: [MarkKind; 7] = [
        MarkKind::Fork,
        MarkKind::Join,
        MarkKind::TaskCreate,
        MarkKind::TaskSwitch,
        MarkKind::TaskComplete,
        MarkKind::LockAcquire,
        MarkKind::LockRelease,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Self::Fork => "fork",
            Self::Join => "join",
            Self::TaskCreate => "task create",
            Self::TaskSwitch => "task switch",
            Self::TaskComplete => "task complete",
            Self::LockAcquire => "lock acquire",
            Self::LockRelease => "lock release",
        }
    }
}

/// A fork/join, task or lock event. `id` names what it is about: the lock id, or the task as
/// (creating thread << 32 | generation number); 0 for fork/join.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    pub kind: MarkKind,
    pub time: u64,
    pub id: u64,
    /// Fork: the number of threads requested; task events: the team (Comm id); else 0.
    pub detail: u32,
}

/// What the walk found wrong with the nesting, over all locations walked.
#[derive(Default, Clone, Copy)]
pub struct NestingDamage {
    pub unmatched_leaves: u64,
    pub misnested: u64,
    pub open_at_end: u64,
}

impl NestingDamage {
    pub fn warnings(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.unmatched_leaves > 0 {
            notes.push(format!(
                "{} Leave event{} without a matching Enter (ignored)",
                self.unmatched_leaves,
                plural(self.unmatched_leaves)
            ));
        }
        if self.misnested > 0 {
            notes.push(format!(
                "{} region visit{} closed by the Leave of an enclosing region",
                self.misnested,
                plural(self.misnested)
            ));
        }
        if self.open_at_end > 0 {
            notes.push(format!(
                "{} region visit{} never left (counted up to the last event of the location)",
                self.open_at_end,
                plural(self.open_at_end)
            ));
        }
        notes
    }
}

pub fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Receives what a walk finds on one location.
pub trait VisitSink {
    fn visit(&mut self, visit: Visit);
    fn mark(&mut self, _mark: Mark) {}
    /// Every event, after the visit or mark it produced (for event counts and time bounds).
    fn event(&mut self, _time: u64) {}
    /// The bytes every event took in its chunk (see `otf2::EventReader::last_record_bytes`),
    /// with the region of an Enter or Leave, before `event`.
    fn event_bytes(&mut self, _region: Option<u32>, _bytes: usize) {}
}

/// Walks the events of `location`; Err(message) on a read error. `progress` is called with the
/// number of events read since its last call, every few thousand events.
pub fn walk(
    reader: &ArchiveReader,
    location: &LocationInfo,
    damage: &mut NestingDamage,
    sink: &mut impl VisitSink,
    progress: &mut dyn FnMut(u64),
) -> Result<(), String> {
    let mut events = match reader.events(location.id) {
        Ok(events) => events,
        // A location that never recorded anything may have no event file.
        Err(_) if location.number_of_events == 0 && !reader.event_path(location.id).exists() => {
            return Ok(())
        }
        Err(e) => return Err(e.to_string()),
    };
    // (region, enter time, time spent in enclosed visits)
    let mut stack: Vec<(u32, u64, u64)> = Vec::new();
    let mut open = OpenVisits::default();
    let mut last_time = 0;
    let mut unreported = 0u64;
    while let Some(record) = events.next() {
        let record = record.map_err(|e| e.to_string())?;
        let time = record.time;
        let region = match record.event {
            Event::Enter { region } | Event::Leave { region } => Some(region),
            _ => None,
        };
        sink.event_bytes(region, events.last_record_bytes());
        last_time = time;
        let mark = |kind, id, detail| {
            Some(Mark {
                kind,
                time,
                id,
                detail,
            })
        };
        let task_id =
            |creator: u32, generation: u32| u64::from(creator) << 32 | u64::from(generation);
        let found = match record.event {
            Event::Enter { region } => {
                stack.push((region, time, 0));
                open.enter(region);
                None
            }
            Event::Leave { region } => {
                match stack.iter().rposition(|(r, _, _)| *r == region) {
                    Some(pos) => {
                        damage.misnested += (stack.len() - 1 - pos) as u64;
                        while stack.len() > pos {
                            close(&mut stack, &mut open, sink, time);
                        }
                    }
                    None => damage.unmatched_leaves += 1,
                }
                None
            }
            Event::ThreadFork {
                number_of_requested_threads,
                ..
            } => mark(MarkKind::Fork, 0, number_of_requested_threads),
            Event::ThreadJoin { .. } => mark(MarkKind::Join, 0, 0),
            Event::ThreadTaskCreate {
                team,
                creating_thread,
                generation_number,
            } => mark(
                MarkKind::TaskCreate,
                task_id(creating_thread, generation_number),
                team,
            ),
            Event::ThreadTaskSwitch {
                team,
                creating_thread,
                generation_number,
            } => mark(
                MarkKind::TaskSwitch,
                task_id(creating_thread, generation_number),
                team,
            ),
            Event::ThreadTaskComplete {
                team,
                creating_thread,
                generation_number,
            } => mark(
                MarkKind::TaskComplete,
                task_id(creating_thread, generation_number),
                team,
            ),
            Event::ThreadAcquireLock { lock_id, .. } => {
                mark(MarkKind::LockAcquire, u64::from(lock_id), 0)
            }
            Event::ThreadReleaseLock { lock_id, .. } => {
                mark(MarkKind::LockRelease, u64::from(lock_id), 0)
            }
            _ => None,
        };
        if let Some(found) = found {
            sink.mark(found);
        }
        sink.event(time);
        unreported += 1;
        if unreported == 4096 {
            progress(unreported);
            unreported = 0;
        }
    }
    progress(unreported);
    damage.open_at_end += stack.len() as u64;
    while !stack.is_empty() {
        close(&mut stack, &mut open, sink, last_time);
    }
    Ok(())
}

/// Pops the innermost open visit, ending it at `time`, and reports it.
fn close(
    stack: &mut Vec<(u32, u64, u64)>,
    open: &mut OpenVisits,
    sink: &mut impl VisitSink,
    time: u64,
) {
    let Some((region, start, enclosed)) = stack.pop() else {
        return;
    };
    let nested = open.leave(region);
    let duration = time.saturating_sub(start);
    if let Some(parent) = stack.last_mut() {
        parent.2 += duration;
    }
    sink.visit(Visit {
        region,
        start,
        end: time,
        exclusive: duration.saturating_sub(enclosed),
        depth: stack.len(),
        nested,
    });
}

/// How many visits of each region are open on a location.
#[derive(Default)]
struct OpenVisits {
    /// region → open visits; regions with none are removed, so this stays as small as the
    /// stack.
    count: HashMap<u32, u32>,
}

impl OpenVisits {
    fn enter(&mut self, region: u32) {
        *self.count.entry(region).or_default() += 1;
    }

    /// One visit of `region` closes; whether another is still open around it.
    fn leave(&mut self, region: u32) -> bool {
        match self.count.get_mut(&region) {
            Some(n) if *n > 1 => {
                *n -= 1;
                true
            }
            _ => {
                self.count.remove(&region);
                false
            }
        }
    }
}
