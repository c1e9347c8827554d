//! The end of a measurement: close what is open, drain every location, and write the global
//! definitions (from the journal's state, see `definitions.rs`) and the anchor file.

use std::time::Duration;

use crate::base::clock;
use crate::base::helper_threads;
use crate::base::launcher::JobRank;
use crate::base::signal_heap;
use crate::lifecycle::measurement::Measurement;
use crate::metrics::sampler;
use crate::metrics::snapshots;
use crate::metrics::synchronous::{self as metrics, ClassDefinition};
use crate::output::communicators;
use crate::output::facts::ExtraDefinitions;
use crate::output::job::{elected, location_id};
use crate::record::location::Location;
use otf2::unify::{self, PARTS_DIR, PARTS_PROPERTY, PART_PROPERTY};
use otf2::*;
use std::path::Path;

/// What `write_trace` reports.
pub struct Summary {
    /// The closing summary line: where the trace went and what it holds.
    pub line: String,
    /// What recording cost the program besides its calls: the CPU time of the writer's
    /// threads and the waits for a free buffer (`POMPTRACE_VERBOSE=2`).
    pub cost: String,
}

/// Writes the trace; returns its summary (or what went wrong).
/// `still_busy` are the locations of threads that did not leave their recording call in time:
/// they are left alone (their chunks already on disk stay; their definitions are written).
pub fn write_trace(
    m: &Measurement,
    exit_status: i64,
    still_busy: &[*mut Location],
) -> Result<Summary, String> {
    let sampled = sampler::RUNNING.lock().take().map(sampler::Sampler::stop);
    let end_time = clock::now();
    let elapsed = Duration::from_nanos(clock::monotonic_ns().saturating_sub(m.start.ns));
    // Before the locations are drained: what the writer's threads took while the program ran.
    let writer_cpu = m.writer.cpu_time();
    let helpers = helper_threads::started();
    // What is still queued to the writer thread is written from here, not waited for.
    m.writer.take_over();
    let mut waits = (Duration::ZERO, 0u64);
    // The TSC frequency is measured between the first and the last clock sample of the run;
    // each brackets a CLOCK_MONOTONIC read within a few tens of nanoseconds, so a run of 20 µs
    // gets it within about 0.5 %, and a longer one better (no calibration wait, at the start or
    // here).
    let end_sample = clock::sample();
    let resolution = clock::resolution(m.clock_kind, m.start, end_sample);

    let locations = m.locations();
    let mut errors = Vec::new();
    let mut events = vec![0u64; locations.len()];
    for cell in &locations {
        if still_busy.contains(&cell.as_ptr()) {
            continue;
        }
        // SAFETY: recording has stopped (the state is no longer RUNNING) and no thread that
        // could still use this location is inside a recording call.
        let loc = unsafe { cell.get() };
        loc.close_open_regions(end_time);
        if loc.number == 0 {
            loc.write(end_time, &Event::ProgramEnd { exit_status });
        }
        if let Some(writer) = loc.take_writer() {
            if writer.clamped_timestamps() > 0 {
                errors.push(format!(
                    "{} timestamps of {} went backwards and were recorded as the previous one",
                    writer.clamped_timestamps(),
                    loc.name
                ));
            }
            if writer.oversized_events() > 0 {
                errors.push(format!(
                    "{} events of {} were larger than an event chunk and were left out",
                    writer.oversized_events(),
                    loc.name
                ));
            }
            events[loc.number as usize] = writer.events();
            let (waited, times) = writer.sink().waited();
            waits = (waits.0 + waited, waits.1 + times);
            let (_, result) = writer.finish();
            if let Err(e) = result {
                errors.push(format!("writing the events of {} failed: {e}", loc.name));
            }
        }
    }
    let mut archive = m
        .archive
        .lock()
        .take()
        .ok_or("the trace was already written")?;
    let mut ids: Vec<u64> = (0..locations.len() as u32)
        .map(|n| m.location_id(n))
        .collect();
    // The metric location comes after every thread location.
    let metric_location = sampled.and_then(|recorded| {
        let id = m.location_id(locations.len() as u32);
        if let Err(e) = recorded.result {
            errors.push(format!("writing the sampled metrics failed: {e}"));
        }
        match std::fs::rename(&recorded.path, archive.event_path(id)) {
            Ok(()) => Some((id, recorded.events)),
            Err(e) => {
                errors.push(format!(
                    "cannot move {} into the trace: {e}",
                    recorded.path.display()
                ));
                None
            }
        }
    });
    ids.extend(metric_location.map(|(id, _)| id));
    if let Err(e) = m.journal.flush() {
        // The trace below is whole all the same: only a later `recover` would have needed it.
        errors.push(format!("the definitions journal is incomplete ({e})"));
    }
    let mut defs = archive.global_def_writer();
    let mut extra = (
        MetricDefinitions::new(metric_location),
        communicators::Definitions::collect(),
    );
    if let Err(e) = m.journal.with_definitions(|d| {
        d.write_global_defs(&mut defs, &events, resolution, end_time, &mut extra)
    }) {
        errors.push(e);
    }
    if m.config.snapshots() {
        let ticks = |d: Duration| (d.as_nanos() * resolution as u128 / 1_000_000_000) as u64;
        let schedule = snapshots::Schedule {
            start: m.start.ticks,
            interval: m.config.snapshot_interval.map(ticks),
            end: m.config.snapshot_at_end.then_some(end_time),
        };
        match snapshots::write_archive_snapshots(&archive, &ids, schedule) {
            Ok(taken) => archive.set_snapshot_count(taken),
            Err(e) => errors.push(format!("writing the snapshots failed: {e}")),
        }
    }
    let written = finish_archive(m, archive, defs, &ids)?;
    m.journal.remove();
    let total: u64 = events.iter().sum::<u64>() + metric_location.map_or(0, |(_, n)| n);
    let mut summary = format!("{written} ({} locations, {} events", ids.len(), total);
    // Listing a directory allocates with the system's malloc, which a fatal signal's handler
    // must not call (see `signal_heap`).
    if !signal_heap::rescuing() {
        summary.push_str(&format!(", {} bytes", directory_size(&m.experiment_dir)));
    }
    summary.push(')');
    if !errors.is_empty() {
        summary.push_str("; but ");
        summary.push_str(&errors.join("; "));
    }
    Ok(Summary {
        line: summary,
        cost: cost_line(elapsed, writer_cpu, helpers, waits),
    })
}

/// "recording took …": the run's length, the helper threads started, the writer threads' CPU
/// time in it and how often and how long recording threads were held up by the writing of
/// their chunks (writing one themselves, or waiting for a free buffer), in milliseconds.
fn cost_line(
    elapsed: Duration,
    writer_cpu: Option<Duration>,
    helpers: usize,
    waits: (Duration, u64),
) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let writer = match writer_cpu {
        Some(cpu) => format!(
            "the writer's threads used the CPU for {:.3} ms ({:.2}% of it)",
            ms(cpu),
            100.0 * cpu.as_secs_f64() / elapsed.as_secs_f64().max(1e-9)
        ),
        None => "the writer's threads' CPU time is not known on this system".into(),
    };
    format!(
        "recording took {:.3} ms; {helpers} helper threads started; {writer}; threads waited {} \
         times for a free buffer or to write a chunk ({:.3} ms)",
        ms(elapsed),
        waits.1,
        ms(waits.0)
    )
}

fn directory_size(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(md) if md.is_dir() => directory_size(&e.path()),
            Ok(md) => md.len(),
            Err(_) => 0,
        })
        .sum()
}

/// The metric definitions of a run: the synchronous class of `POMPTRACE_METRICS` and, when the
/// sampler ran, its METRIC location and asynchronous class.
struct MetricDefinitions {
    synchronous: Vec<metrics::Member>,
    /// (location id, number of events) of the sampler's location.
    metric_location: Option<(u64, u64)>,
}

impl MetricDefinitions {
    fn new(metric_location: Option<(u64, u64)>) -> Self {
        Self {
            synchronous: metrics::selected().iter().map(|m| m.member).collect(),
            metric_location,
        }
    }

    fn sampled(&self) -> &'static [metrics::Member] {
        if self.metric_location.is_some() {
            &sampler::MEMBERS
        } else {
            &[]
        }
    }
}

impl ExtraDefinitions for MetricDefinitions {
    fn strings(&mut self, intern: &mut dyn FnMut(&str) -> u32) {
        for s in metrics::member_strings(&self.synchronous)
            .chain(metrics::member_strings(self.sampled()))
        {
            intern(s);
        }
        if self.metric_location.is_some() {
            intern(sampler::LOCATION_NAME);
        }
    }

    fn after_locations(&mut self, defs: &mut GlobalDefWriter, intern: &mut dyn FnMut(&str) -> u32) {
        if let Some((id, number_of_events)) = self.metric_location {
            defs.write(&GlobalDef::Location {
                id,
                name: intern(sampler::LOCATION_NAME),
                location_type: LocationType::METRIC,
                number_of_events,
                location_group: 0,
            });
        }
        let mut next_member = 0;
        if !self.synchronous.is_empty() {
            let class = ClassDefinition {
                id: metrics::SYNCHRONOUS_CLASS,
                occurrence: MetricOccurrence::SYNCHRONOUS_STRICT,
                members: &self.synchronous,
                recorder: None,
            };
            next_member = metrics::write_class(defs, &class, next_member, &mut *intern);
        }
        if let Some((id, _)) = self.metric_location {
            let class = ClassDefinition {
                id: sampler::class_id(),
                occurrence: MetricOccurrence::ASYNCHRONOUS,
                members: self.sampled(),
                recorder: Some(id),
            };
            metrics::write_class(defs, &class, next_member, &mut *intern);
        }
    }
}

/// Writes the definitions and the anchor: directly for a plain process; for a rank of a job,
/// as its part, unified by the last rank to finish. A process that used MPI without a launcher
/// we know of (a singleton `./app`, or an unknown launcher) goes through unification too, as a
/// job of one: the MPI communicators' ids are not dense, and a group may name ranks whose
/// locations are not in this archive (unification gives those placeholders). Returns the start
/// of the closing summary line.
pub(crate) fn finish_archive(
    m: &Measurement,
    archive: ArchiveWriter,
    defs: GlobalDefWriter,
    locations: &[u64],
) -> Result<String, String> {
    let offsets = communicators::clock_offsets();
    if let Some(job) = &m.job {
        return finish_rank(job, &m.experiment_dir, archive, defs, &offsets);
    }
    if communicators::used() {
        let alone = JobRank {
            rank: 0,
            size: 1,
            job_id: None,
            source: "MPI",
        };
        return finish_rank(&alone, &m.experiment_dir, archive, defs, &offsets);
    }
    let anchor = archive.anchor_path();
    archive
        .finish(defs, locations)
        .map_err(|e| format!("writing {} failed: {e}", anchor.display()))?;
    Ok(format!("trace written to {}", anchor.display()))
}

/// Writes this rank's definitions as its part of the job's archive (events are already in
/// `archive`'s directory) and unifies the job if this is the last rank to finish. Returns the
/// start of the closing summary line.
fn finish_rank(
    job: &JobRank,
    experiment_dir: &Path,
    archive: ArchiveWriter,
    defs: GlobalDefWriter,
    clock_offsets: &[LocalDef],
) -> Result<String, String> {
    let parts_dir = experiment_dir.join(PARTS_DIR);
    let mut config: ArchiveConfig = archive.config().clone();
    // The definitions go to the part; the job's anchor is the unifier's.
    archive.close_unanchored();
    config
        .properties
        .push((PARTS_PROPERTY.into(), job.size.to_string()));
    config
        .properties
        .push((PART_PROPERTY.into(), job.rank.to_string()));
    let part = ArchiveWriter::create(&parts_dir, &job.rank.to_string(), config)
        .map_err(|e| format!("cannot write the definitions of rank {}: {e}", job.rank))?;
    let mut offsets = part.local_def_writer();
    for offset in clock_offsets {
        offsets.write(offset);
    }
    part.write_local_defs(location_id(Some(job.rank), 0), offsets)
        .and_then(|()| part.finish(defs, &[]).map(drop))
        .map_err(|e| format!("writing the definitions of rank {} failed: {e}", job.rank))?;
    if !unify::all_parts_written(&parts_dir) || !elected(&parts_dir) {
        return Ok(format!(
            "rank {} of {} wrote its part of {}",
            job.rank,
            job.size,
            experiment_dir.display()
        ));
    }
    let summary = unify::unify_directory(experiment_dir, "traces", &parts_dir)?;
    Ok(if job.size == 1 {
        format!("trace written to {}", summary.anchor.display())
    } else {
        format!(
            "trace of {} ranks written to {}; rank {}",
            summary.parts,
            summary.anchor.display(),
            job.rank
        )
    })
}
