//! The end of a measurement: close what is open, drain every location, and write the global
//! definitions (from the journal's state, see `definitions.rs`) and the anchor file.

use std::time::Duration;

use super::location::Location;
use super::{clock, Measurement};
use crate::otf2::*;

/// The TSC frequency is measured between the first and the last clock sample of the run; each
/// sample brackets a CLOCK_MONOTONIC read within a few tens of nanoseconds, so even a run of
/// 200 µs gets its frequency within about 0.02 %. Shorter runs wait for the rest (a tiny fixed
/// cost, where a calibration loop at start would cost every run milliseconds).
const MIN_CALIBRATION: Duration = Duration::from_micros(200);

/// Writes the trace; returns the one-line summary (or what went wrong).
/// `still_busy` are the locations of threads that did not leave their recording call in time:
/// they are left alone (their chunks already on disk stay; their definitions are written).
pub fn write_trace(
    m: &Measurement,
    exit_status: i64,
    still_busy: &[*mut Location],
) -> Result<String, String> {
    let end_time = clock::now();
    let elapsed = Duration::from_nanos(clock::monotonic_ns().saturating_sub(m.start.ns));
    if elapsed < MIN_CALIBRATION {
        std::thread::sleep(MIN_CALIBRATION - elapsed);
    }
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
            let (_, result) = writer.finish();
            if let Err(e) = result {
                errors.push(format!("writing the events of {} failed: {e}", loc.name));
            }
        }
    }
    let archive = m
        .archive
        .lock()
        .take()
        .ok_or("the trace was already written")?;
    if let Err(e) = m.journal.flush() {
        // The trace below is whole all the same: only a later `recover` would have needed it.
        errors.push(format!("the definitions journal is incomplete ({e})"));
    }
    let mut defs = archive.global_def_writer();
    if let Err(e) = m
        .journal
        .with_definitions(|d| d.write_global_defs(&mut defs, &events, resolution, end_time))
    {
        errors.push(e);
    }
    let ids: Vec<u64> = (0..locations.len() as u64).collect();
    let anchor_path = archive.anchor_path();
    archive
        .finish(defs, &ids)
        .map_err(|e| format!("writing {} failed: {e}", anchor_path.display()))?;
    m.journal.remove();
    let bytes = directory_size(&m.experiment_dir);
    let total: u64 = events.iter().sum();
    let mut summary = format!(
        "trace written to {} ({} locations, {} events, {} bytes)",
        anchor_path.display(),
        locations.len(),
        total,
        bytes
    );
    if !errors.is_empty() {
        summary.push_str("; but ");
        summary.push_str(&errors.join("; "));
    }
    Ok(summary)
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
