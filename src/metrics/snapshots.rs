//! Snapshots (`POMPTRACE_SNAPSHOT_INTERVAL`, `POMPTRACE_SNAPSHOT_AT_END`): at each break time,
//! every location's `.snap` stream gets `SnapshotStart`, one record for everything still open
//! there (an `EnterSnap` per open region with its original time, an `OmpForkSnap` for an open
//! fork, an `OmpAcquireLockSnap` per held lock, a `MetricSnap` with the last values of each
//! metric) and `SnapshotEnd` with the event position a reader continues from.
//!
//! They are derived at the end of the measurement from the event files just written, in one
//! merged pass over all locations, by the rules of OTF2's own `otf2-snapshots` tool (so the
//! two write the same records at the same break times): a break at `start + k * interval` is
//! taken by the first event at or after it that changes the open state (Enter, Leave, Metric,
//! fork, join, locks), and captures every event before that one. Recording pays nothing for
//! them; the end of the measurement reads the trace once more.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use otf2::reader::{read_event_file, ReadResult};
use otf2::{
    ArchiveWriter, AttributeList, ChunkSink, Event, EventRecord, SnapRecord, SnapWriter, TypedValue,
};

/// When to take snapshots, in clock ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The measurement start (break times count from there).
    pub start: u64,
    /// Ticks between breaks, if periodic snapshots are wanted.
    pub interval: Option<u64>,
    /// The end of the measurement, if a last snapshot is wanted there.
    pub end: Option<u64>,
}

/// Something open on a location, as the snapshot restates it.
#[derive(Clone, Debug)]
enum Open {
    Region(u32),
    Fork(u32),
    Lock {
        lock: u32,
        order: u32,
    },
    Metric {
        metric: u32,
        values: Vec<TypedValue>,
    },
}

#[derive(Clone, Debug)]
struct Entry {
    time: u64,
    attributes: AttributeList,
    open: Open,
}

impl Entry {
    fn record(&self) -> SnapRecord {
        let time = self.time;
        match &self.open {
            Open::Region(region) => SnapRecord::Enter {
                orig_event_time: time,
                region: *region,
            },
            Open::Metric { metric, values } => SnapRecord::Metric {
                orig_event_time: time,
                metric: *metric,
                values: values.clone(),
            },
            Open::Fork(threads) => SnapRecord::OmpFork {
                orig_event_time: time,
                number_of_requested_threads: *threads,
            },
            Open::Lock { lock, order } => SnapRecord::OmpAcquireLock {
                orig_event_time: time,
                lock_id: *lock,
                acquisition_order: *order,
            },
        }
    }
}

/// One location during the replay.
struct Stream<I> {
    events: I,
    /// The next event, read ahead (as a merging reader holds one per location).
    next: Option<EventRecord>,
    /// Events handed out so far.
    delivered: u64,
    open: Vec<Entry>,
}

impl<I: Iterator<Item = ReadResult<EventRecord>>> Stream<I> {
    fn advance(&mut self) -> ReadResult<()> {
        self.next = self.events.next().transpose()?;
        Ok(())
    }

    /// The open state after `event`.
    fn apply(&mut self, event: EventRecord) {
        let EventRecord {
            time,
            attributes,
            event,
        } = event;
        let push = |open: &mut Vec<Entry>, o| {
            open.push(Entry {
                time,
                attributes,
                open: o,
            })
        };
        match event {
            Event::Enter { region } => push(&mut self.open, Open::Region(region)),
            Event::Leave { region } => {
                if let Some(i) = self
                    .open
                    .iter()
                    .rposition(|e| matches!(e.open, Open::Region(_)))
                {
                    if matches!(self.open[i].open, Open::Region(r) if r == region) {
                        self.open.remove(i);
                    }
                }
            }
            Event::ThreadFork {
                number_of_requested_threads,
                ..
            } => push(&mut self.open, Open::Fork(number_of_requested_threads)),
            Event::ThreadJoin { .. } => self.remove_last(|o| matches!(o, Open::Fork(_))),
            Event::ThreadAcquireLock {
                lock_id,
                acquisition_order,
                ..
            } => push(
                &mut self.open,
                Open::Lock {
                    lock: lock_id,
                    order: acquisition_order,
                },
            ),
            Event::ThreadReleaseLock { lock_id, .. } => {
                self.remove_last(|o| matches!(o, Open::Lock { lock, .. } if *lock == lock_id))
            }
            Event::Metric { metric, values } => {
                // A metric is restated once, with its latest values and the time it was first
                // seen, after everything that happened before its latest values.
                if let Some(i) = self
                    .open
                    .iter()
                    .position(|e| matches!(&e.open, Open::Metric { metric: m, .. } if *m == metric))
                {
                    let mut entry = self.open.remove(i);
                    entry.open = Open::Metric { metric, values };
                    self.open.push(entry);
                } else {
                    push(&mut self.open, Open::Metric { metric, values });
                }
            }
            _ => {}
        }
    }

    fn remove_last(&mut self, matches: impl Fn(&Open) -> bool) {
        if let Some(i) = self.open.iter().rposition(|e| matches(&e.open)) {
            self.open.remove(i);
        }
    }
}

/// Whether `event` is one that can take a break (it changes, or could change, what is open).
fn takes_break(event: &Event) -> bool {
    matches!(
        event,
        Event::Enter { .. }
            | Event::Leave { .. }
            | Event::Metric { .. }
            | Event::ThreadFork { .. }
            | Event::ThreadJoin { .. }
            | Event::ThreadAcquireLock { .. }
            | Event::ThreadReleaseLock { .. }
            | Event::MeasurementOnOff { .. }
            | Event::ParameterString { .. }
            | Event::ParameterInt { .. }
            | Event::ParameterUnsignedInt { .. }
    )
}

/// Replays the event streams of all locations (in location order, `writers` alike) and writes
/// the snapshots of `schedule`; returns how many snapshots were taken.
pub fn replay<I, S>(
    streams: Vec<I>,
    writers: &mut [SnapWriter<S>],
    schedule: Schedule,
) -> ReadResult<u32>
where
    I: Iterator<Item = ReadResult<EventRecord>>,
    S: ChunkSink,
{
    let mut streams: Vec<Stream<I>> = streams
        .into_iter()
        .map(|events| Stream {
            events,
            next: None,
            delivered: 0,
            open: Vec::new(),
        })
        .collect();
    // Earliest first; equal times in location order.
    let mut heap = BinaryHeap::new();
    for (i, s) in streams.iter_mut().enumerate() {
        s.advance()?;
        if let Some(e) = &s.next {
            heap.push(Reverse((e.time, i)));
        }
    }
    let mut next_break = schedule
        .interval
        .map(|interval| schedule.start.saturating_add(interval.max(1)));
    let mut end_pending = schedule.end;
    let mut taken = 0u32;
    while let Some(Reverse((time, i))) = heap.pop() {
        let Some(event) = streams[i].next.take() else {
            continue;
        };
        if takes_break(&event.event) {
            if let Some(at) = next_break.filter(|&b| time >= b) {
                take_snapshot(&streams, writers, at, Some(i));
                taken += 1;
                let interval = schedule.interval.unwrap_or(1).max(1);
                let passed = (time - schedule.start) / interval;
                next_break = Some(schedule.start + (passed + 1) * interval);
            }
            if let Some(at) = end_pending.filter(|&e| time >= e) {
                take_snapshot(&streams, writers, at, Some(i));
                taken += 1;
                end_pending = None;
            }
        }
        let s = &mut streams[i];
        s.apply(event);
        s.delivered += 1;
        s.advance()?;
        if let Some(e) = &s.next {
            heap.push(Reverse((e.time, i)));
        }
    }
    if let Some(at) = end_pending {
        take_snapshot(&streams, writers, at, None);
        taken += 1;
    }
    Ok(taken)
}

/// Writes the snapshots of `schedule` for the archive's `locations` (whose event files are
/// complete) into their `.snap` files; returns how many snapshots were taken.
pub fn write_archive_snapshots(
    archive: &ArchiveWriter,
    locations: &[u64],
    schedule: Schedule,
) -> Result<u32, String> {
    let chunk_size = archive.config().event_chunk_size as u64;
    let mut streams = Vec::with_capacity(locations.len());
    let mut writers = Vec::with_capacity(locations.len());
    for &l in locations {
        streams
            .push(read_event_file(&archive.event_path(l), chunk_size).map_err(|e| e.to_string())?);
        writers.push(
            archive
                .snap_writer(l)
                .map_err(|e| format!("{}: {e}", archive.snap_path(l).display()))?,
        );
    }
    let taken = replay(streams, &mut writers, schedule).map_err(|e| e.to_string())?;
    for (writer, &l) in writers.into_iter().zip(locations) {
        let (_, result) = writer.finish();
        result.map_err(|e| format!("{}: {e}", archive.snap_path(l).display()))?;
    }
    Ok(taken)
}

/// One snapshot of every location at `time`, while location `current` (if any) is handing out
/// the event that took the break.
fn take_snapshot<I, S: ChunkSink>(
    streams: &[Stream<I>],
    writers: &mut [SnapWriter<S>],
    time: u64,
    current: Option<usize>,
) {
    for (i, (s, w)) in streams.iter().zip(writers.iter_mut()).enumerate() {
        w.write(
            time,
            None,
            &SnapRecord::SnapshotStart {
                number_of_records: s.open.len() as u64,
            },
        );
        for entry in &s.open {
            w.write(time, Some(&entry.attributes), &entry.record());
        }
        // Events read so far: those handed out, plus the current one or the one read ahead.
        let read = s.delivered + u64::from(current == Some(i) || s.next.is_some());
        w.write(
            time,
            None,
            &SnapRecord::SnapshotEnd {
                cont_read_pos: read,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use otf2::{Paradigm, VecSink};

    fn ev(time: u64, event: Event) -> ReadResult<EventRecord> {
        Ok(EventRecord {
            time,
            attributes: AttributeList::new(),
            event,
        })
    }

    fn records(w: SnapWriter<VecSink>) -> usize {
        w.records() as usize
    }

    #[test]
    fn a_break_restates_open_regions_forks_and_the_last_metric_values() {
        let metric = |v| Event::Metric {
            metric: 0,
            values: vec![TypedValue::u64(v)],
        };
        let master = vec![
            ev(
                0,
                Event::ProgramBegin {
                    program_name: 0,
                    arguments: vec![],
                },
            ),
            ev(1, metric(10)),
            ev(1, Event::Enter { region: 7 }),
            ev(
                2,
                Event::ThreadFork {
                    model: Paradigm::OPENMP,
                    number_of_requested_threads: 2,
                },
            ),
            ev(3, metric(20)),
            ev(3, Event::Enter { region: 8 }),
            // The break at 10 is taken here: 7, the fork, 8 and the metric are open.
            ev(12, metric(30)),
            ev(12, Event::Leave { region: 8 }),
        ];
        let worker = vec![ev(11, Event::ThreadTeamBegin { team: 1 })];
        let mut writers = vec![
            SnapWriter::new(4096, VecSink::default()),
            SnapWriter::new(4096, VecSink::default()),
        ];
        let schedule = Schedule {
            start: 0,
            interval: Some(10),
            end: None,
        };
        let taken = replay(
            vec![master.into_iter(), worker.into_iter()],
            &mut writers,
            schedule,
        )
        .unwrap();
        assert_eq!(taken, 1);
        let worker = writers.pop().unwrap();
        let master = writers.pop().unwrap();
        // Start, Enter 7, fork, metric (first seen at 1, values of 3), Enter 8, End.
        assert_eq!(records(master), 6);
        // Start and End only: the team begin at 11 was read, nothing is open.
        assert_eq!(records(worker), 2);
    }
}
