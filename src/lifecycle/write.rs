//! The end of a measurement: close what is open, drain every location, and write the global
//! definitions (from the journal's state, see `definitions.rs`) and the anchor file, and the
//! profile (`profile_write.rs`) when profiling. Without tracing there is no OTF2 archive at all:
//! the directory keeps only `profile.cubex` and `pomptrace.cfg`.

use std::time::Duration;

use crate::base::clock;
use crate::base::helper_threads;
use crate::base::launcher::JobRank;
use crate::base::signal_heap;
use crate::lifecycle::measurement::Measurement;
use crate::lifecycle::profile_write::{self, LocationProfile};
use crate::metrics::sampler;
use crate::metrics::snapshots;
use crate::metrics::synchronous as metrics;
use crate::output::communicators;
use crate::output::facts::ExtraDefinitions;
use crate::output::job::{elected, unifier_done, write_part};
use crate::output::metric_definitions::MetricDefinitions;
use crate::record::budget;
use crate::record::location::Location;
use otf2::unify::{self, PARTS_DIR};
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
    let streamed_by = m.writer.stream_from();
    // What is still queued to the writer thread is written from here, not waited for.
    m.writer.take_over();
    let mut waits = (Duration::ZERO, 0u64);
    // The TSC frequency is measured between the first and the last clock sample of the run;
    // each brackets a CLOCK_MONOTONIC read within a few tens of nanoseconds, so a run of 20 µs
    // gets it within about 0.5 %, and a longer one better (no calibration wait, at the start or
    // here).
    let end_sample = clock::sample();
    let resolution = clock::resolution(m.clock_kind, m.start, end_sample);

    let mut archive = m
        .archive
        .lock()
        .take()
        .ok_or("the trace was already written")?;
    let locations = m.locations();
    let mut errors = Vec::new();
    let mut events = vec![0u64; locations.len()];
    let mut profiles = Vec::new();
    for cell in &locations {
        if still_busy.contains(&cell.as_ptr()) {
            if m.config.profiling {
                // SAFETY: only reads the fields fixed at the location's creation.
                let loc = unsafe { &*cell.as_ptr() };
                profiles.push(LocationProfile {
                    number: loc.number,
                    name: loc.name.clone(),
                    profile: None,
                });
            }
            continue;
        }
        // SAFETY: recording has stopped (the state is no longer RUNNING) and no thread that
        // could still use this location is inside a recording call.
        let loc = unsafe { cell.get() };
        loc.close_open_regions(end_time);
        if loc.number == 0 {
            loc.write(end_time, &Event::ProgramEnd { exit_status });
        }
        if let Some(profile) = loc.take_profile() {
            profiles.push(LocationProfile {
                number: loc.number,
                name: loc.name.clone(),
                profile: Some(profile),
            });
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
                // The definitions must count what reached the disk, not what was recorded.
                match events_on_disk(&mut archive, m.location_id(loc.number), m.memory_chunk_size) {
                    Ok(on_disk) => events[loc.number as usize] = on_disk,
                    Err(e) => {
                        return Err(format!(
                            "{}; cannot read back the events of {} ({e}): `pomptrace recover {}` \
                         makes a readable trace of what reached the disk",
                            errors.join("; "),
                            loc.name,
                            m.experiment_dir.display()
                        ))
                    }
                }
            }
        } else if let Some(retired) = loc.retired() {
            // Its thread ended before the measurement (see `retire.rs`).
            if retired.clamped_timestamps > 0 {
                errors.push(format!(
                    "{} timestamps of {} went backwards and were recorded as the previous one",
                    retired.clamped_timestamps, loc.name
                ));
            }
            if retired.oversized_events > 0 {
                errors.push(format!(
                    "{} events of {} were larger than an event chunk and were left out",
                    retired.oversized_events, loc.name
                ));
            }
            if let Some(e) = &retired.error {
                errors.push(format!("writing the events of {} failed: {e}", loc.name));
            }
            events[loc.number as usize] = retired.events;
            waits = (waits.0 + retired.waited.0, waits.1 + retired.waited.1);
        }
    }
    let budget_report = budget::Report::collect(
        locations
            .iter()
            .filter(|cell| !still_busy.contains(&cell.as_ptr()))
            .map(|cell| {
                // SAFETY: as above; only read.
                let loc = unsafe { cell.get() };
                let written = events.get(loc.number as usize).copied().unwrap_or(0);
                loc.budget_account(written)
            }),
        end_time,
    );
    if !m.config.tracing {
        let location_dir = archive.location_dir();
        archive.close_unanchored();
        // Empty: no location wrote events.
        let _ = std::fs::remove_dir(location_dir);
        m.journal.remove();
        let line = profile_write::write_profile(m, &profiles, resolution, end_time)?;
        return Ok(Summary {
            line,
            cost: cost_line(elapsed, writer_cpu, helpers, streamed_by, waits),
        });
    }
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
        (
            MetricDefinitions::new(
                metrics::selected().iter().map(|m| m.member).collect(),
                metric_location,
            ),
            communicators::Definitions::collect(),
        ),
        BudgetDefinitions {
            unrecorded: budget_report
                .per_location
                .iter()
                .map(|&(number, visits)| (m.location_id(number), visits))
                .collect(),
        },
    );
    let region_notes = budget_report.region_notes();
    if let Err(e) = m.journal.with_definitions(|d| {
        d.describe_regions(&region_notes);
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
    // A rank's own files: the job's directory holds every rank's.
    let own_files: Option<Vec<std::path::PathBuf>> = m.job.as_ref().map(|job| {
        let parts = m.experiment_dir.join(otf2::unify::PARTS_DIR);
        ids.iter()
            .map(|&id| archive.event_path(id))
            .chain(["otf2", "def"].map(|ext| parts.join(format!("{}.{ext}", job.rank))))
            .chain([parts.join(job.rank.to_string())])
            .collect()
    });
    let written = finish_archive(m, archive, defs, &ids)?;
    m.journal.remove();
    // A profile that cannot be written leaves the trace as it is, and says so on its own.
    let profiled = m.config.profiling.then(|| {
        profile_write::write_profile(m, &profiles, resolution, end_time).map_err(|e| {
            crate::base::diagnostics::warn(&format!("{e}; the trace is written all the same"))
        })
    });
    // Listing a directory allocates with the system's malloc, which a fatal signal's handler
    // must not call (see `signal_heap`); a rank's own files are only looked up.
    let bytes: Option<u64> = match own_files {
        Some(files) => Some(files.iter().map(|f| path_size(f)).sum()),
        None if !signal_heap::rescuing() => Some(directory_size(&m.experiment_dir)),
        None => None,
    };
    if let (true, Some(bytes)) = (budget_report.acted(), bytes) {
        report_budget(m, &budget_report, bytes);
    }
    let total: u64 = events.iter().sum::<u64>() + metric_location.map_or(0, |(_, n)| n);
    let mut summary = format!("{written} ({} locations, {} events", ids.len(), total);
    if let Some(bytes) = bytes {
        summary.push_str(&format!(", {bytes} bytes"));
    }
    summary.push(')');
    if let Some(Ok(line)) = profiled {
        summary.push_str("; ");
        summary.push_str(&line);
    }
    if !errors.is_empty() {
        summary.push_str("; but ");
        summary.push_str(&errors.join("; "));
    }
    Ok(Summary {
        line: summary,
        cost: cost_line(elapsed, writer_cpu, helpers, streamed_by, waits),
    })
}

/// What the size budget did, in one line, and the filter file that would have kept the run
/// under it (`pomptrace.filter` in the experiment directory; one per rank in a job).
fn report_budget(m: &Measurement, report: &budget::Report, trace_bytes: u64) {
    let name = match &m.job {
        Some(job) => format!("pomptrace-rank{}.filter", job.rank),
        None => "pomptrace.filter".to_string(),
    };
    let path = m.experiment_dir.join(&name);
    let written = report.filter_file(trace_bytes).and_then(|text| {
        let result = Directory::open(&m.experiment_dir)
            .and_then(|dir| dir.write_file_atomically(&name, text.as_bytes()));
        match result {
            Ok(()) => Some(path.as_path()),
            Err(e) => {
                crate::base::diagnostics::warn(&format!(
                    "cannot write the filter file {}: {e}",
                    path.display()
                ));
                None
            }
        }
    });
    crate::base::diagnostics::warn(&report.line(written));
}

/// The visits each location left out (a LocationProperty of each location that did).
struct BudgetDefinitions {
    /// (location id, visits not recorded)
    unrecorded: Vec<(u64, u64)>,
}

/// The name of the LocationProperty with a location's visits that the size budget left out.
const UNRECORDED_PROPERTY: &str = "POMPTRACE::VISITS_NOT_RECORDED";

impl ExtraDefinitions for BudgetDefinitions {
    fn strings(&mut self, intern: &mut dyn FnMut(&str) -> u32) {
        if !self.unrecorded.is_empty() {
            intern(UNRECORDED_PROPERTY);
        }
    }

    fn after_locations(&mut self, defs: &mut GlobalDefWriter, intern: &mut dyn FnMut(&str) -> u32) {
        for &(location, visits) in &self.unrecorded {
            defs.write(&GlobalDef::LocationProperty {
                location,
                name: intern(UNRECORDED_PROPERTY),
                value: TypedValue::u64(visits),
            });
        }
    }
}

/// The events of `location` in the whole chunks of its file, after a write failed (a full
/// disk): the file is cut back to them and ended as readers expect. The room set aside for the
/// definitions is given back first, so the end fits.
fn events_on_disk(
    archive: &mut ArchiveWriter,
    location: u64,
    memory_chunk_size: usize,
) -> std::io::Result<u64> {
    archive.release_reserve();
    let file_chunk_size = archive.config().event_chunk_size as u64;
    otf2::recovery::salvage_event_file(
        &archive.event_path(location),
        file_chunk_size,
        memory_chunk_size as u64,
    )
    .map(|salvaged| salvaged.events)
}

/// "recording took …": the run's length, the helper threads started, the writer threads' CPU
/// time in it, who wrote the chunks that streamed, and how often and how long recording threads
/// were held up by the writing of their chunks (writing one themselves, or waiting for a free
/// buffer), in milliseconds.
fn cost_line(
    elapsed: Duration,
    writer_cpu: Option<Duration>,
    helpers: usize,
    streamed_by: otf2::StreamFrom,
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
    let streamed = match streamed_by {
        otf2::StreamFrom::FillingThread => "chunks streamed from the threads that filled them",
        otf2::StreamFrom::WriterThread => {
            "chunks streamed from the writer thread through the page cache"
        }
        otf2::StreamFrom::WriterThreadDirect => {
            "chunks streamed from the writer thread straight to the device while the disk kept up"
        }
        otf2::StreamFrom::Auto => "no chunk streamed",
    };
    format!(
        "recording took {:.3} ms; {helpers} helper threads started; {writer}; {streamed}; \
         threads waited {} times for a free buffer or to write a chunk ({:.3} ms)",
        ms(elapsed),
        waits.1,
        ms(waits.0)
    )
}

/// The bytes of a file, or of everything in a directory.
fn path_size(path: &std::path::Path) -> u64 {
    match std::fs::metadata(path) {
        Ok(md) if md.is_dir() => directory_size(path),
        Ok(md) => md.len(),
        Err(_) => 0,
    }
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
    let config: ArchiveConfig = archive.config().clone();
    // The definitions go to the part; the job's anchor is the unifier's.
    archive.close_unanchored();
    write_part(job, experiment_dir, config, defs, clock_offsets)?;
    let anchor = experiment_dir.join("traces.otf2");
    if !unify::all_parts_written(&parts_dir) || !elected(&parts_dir, &anchor) {
        return Ok(format!(
            "rank {} of {} wrote its part of {}",
            job.rank,
            job.size,
            experiment_dir.display()
        ));
    }
    let summary = unify::unify_directory(experiment_dir, "traces", &parts_dir)?;
    unifier_done(&parts_dir);
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
