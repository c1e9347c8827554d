//! `pomptrace recover DIR`: a readable archive from what a run that never ended (killed, out of
//! memory, out of time) or that ran out of disk space left in its experiment directory: the
//! global definitions and the anchor from the journal, and every whole event chunk that reached
//! the disk. Nothing is made up: regions left open stay open, and there is no ProgramEnd. (The
//! call-path profile of a profiled run is rebuilt from the recovered trace afterwards:
//! `lifecycle/profile_recover.rs`.)

use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use crate::base::clock::{self, ClockKind, Sample};
use crate::output::facts::Start;
use crate::output::journal::{self, journal_path};
use crate::output::metric_definitions::MetricDefinitions;
use otf2::recovery::salvage_event_file;
use otf2::regular_file::open_regular;
use otf2::ArchiveWriter;

/// What the recovered archive holds, and what was lost.
#[derive(Debug, Default)]
pub struct Recovered {
    pub anchor: PathBuf,
    pub locations: usize,
    pub events: u64,
    pub chunks: u64,
    /// Event chunks that did not reach the disk whole, and their bytes.
    pub dropped_chunks: u64,
    pub dropped_bytes: u64,
    /// Event files of locations the journal never named (their definitions were lost).
    pub unknown_event_files: usize,
    /// A torn or damaged end of the journal.
    pub journal_dropped_bytes: usize,
    /// Problems that did not stop the recovery.
    pub warnings: Vec<String>,
}

impl Recovered {
    /// One line for the user.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "recovered {} ({} locations, {} events in {} chunks); lost {} chunks ({} bytes) \
             that did not reach the disk whole",
            self.anchor.display(),
            self.locations,
            self.events,
            self.chunks,
            self.dropped_chunks,
            self.dropped_bytes
        );
        if self.unknown_event_files > 0 {
            s.push_str(&format!(
                ", and {} event files of locations the journal does not name",
                self.unknown_event_files
            ));
        }
        if self.journal_dropped_bytes > 0 {
            s.push_str(&format!(
                "; the last {} bytes of the journal were torn",
                self.journal_dropped_bytes
            ));
        }
        for w in &self.warnings {
            s.push_str("; ");
            s.push_str(w);
        }
        s
    }
}

pub fn recover(dir: &Path) -> Result<Recovered, String> {
    let journal = journal_path(dir, None);
    let (file, len) = open_regular(&journal).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound if dir.join("traces.otf2").is_file() => {
            format!("{} already holds a complete trace", dir.display())
        }
        io::ErrorKind::NotFound => format!(
            "cannot read {}: {e} (a run leaves it in its experiment directory)",
            journal.display()
        ),
        _ => format!("cannot read {}: {e}", journal.display()),
    })?;
    let replayed = replay(&journal, file, len)?;
    let mut definitions = replayed.definitions;
    let start = definitions
        .start
        .clone()
        .ok_or_else(|| format!("{} holds no start record", journal.display()))?;
    if definitions.locations() == 0 {
        return Err(format!(
            "{} names no location: the run was killed before it recorded anything",
            journal.display()
        ));
    }
    let archive =
        ArchiveWriter::create(dir, "traces", start.archive.clone()).map_err(|e| {
            match e.kind() {
                io::ErrorKind::WouldBlock => {
                    format!("{} is {e}: that run is still going", dir.display())
                }
                _ => format!("cannot write the trace in {}: {e}", dir.display()),
            }
        })?;
    let mut r = Recovered {
        anchor: archive.anchor_path(),
        locations: definitions.locations(),
        journal_dropped_bytes: replayed.dropped_bytes,
        ..Recovered::default()
    };
    let file_chunk = start.archive.event_chunk_size as u64;
    let mut events = Vec::with_capacity(r.locations);
    for location in 0..r.locations as u64 {
        let path = archive.event_path(location);
        let s = salvage_event_file(&path, file_chunk, start.memory_chunk_size)
            .map_err(|e| format!("cannot repair {}: {e}", path.display()))?;
        events.push(s.events);
        r.events += s.events;
        r.chunks += s.chunks;
        r.dropped_chunks += s.dropped_chunks;
        r.dropped_bytes += s.dropped_bytes;
    }
    r.unknown_event_files = unknown_event_files(&archive.location_dir(), r.locations as u64);

    let end = definitions.last_clock.unwrap_or(start.sample);
    let resolution = calibrated_resolution(&start, end, &mut r.warnings);
    let mut defs = archive.global_def_writer();
    if let Err(e) = definitions.write_global_defs(
        &mut defs,
        &events,
        resolution,
        end.ticks,
        &mut MetricDefinitions::named(&definitions.metrics),
    ) {
        r.warnings.push(e);
    }
    let ids: Vec<u64> = (0..r.locations as u64).collect();
    archive
        .finish(defs, &ids)
        .map_err(|e| format!("cannot write {}: {e}", r.anchor.display()))?;
    let _ = std::fs::remove_file(&journal);
    Ok(r)
}

/// The clock's ticks per second between the start and the last sample the journal holds.
fn calibrated_resolution(start: &Start, end: Sample, warnings: &mut Vec<String>) -> u64 {
    match start.clock {
        ClockKind::Tsc if end.ns.saturating_sub(start.sample.ns) < 1_000_000 => {
            warnings.push(
                "the run ended too early to calibrate its clock: times are in unknown units".into(),
            );
            1_000_000_000
        }
        kind => clock::resolution(kind, start.sample, end),
    }
}

fn unknown_event_files(location_dir: &Path, known: u64) -> usize {
    let Ok(entries) = std::fs::read_dir(location_dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".evt"))
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|l| l >= known)
        })
        .count()
}

/// The ranks of a job in `dir` whose journal is still there: they did not write their part.
pub fn journaled_ranks(dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut ranks: Vec<u32> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            name.strip_prefix("traces.rank")?
                .strip_suffix(".journal")?
                .parse()
                .ok()
        })
        .collect();
    ranks.sort_unstable();
    ranks
}

/// The journal at `path`, opened as `file` of `len` bytes, read back as it goes: a long run's
/// journal may be larger than the memory to spare.
fn replay(path: &Path, file: std::fs::File, len: u64) -> Result<journal::Replayed, String> {
    journal::replay_from(BufReader::with_capacity(1 << 20, file), len)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// [`recover`] for one rank of a job that never ended: its part of the job's archive
/// (`DIR/ranks/<rank>.otf2`, as the rank would have written it) from its journal, and every
/// whole event chunk of its locations. `job_size` is the number of ranks the job had, where
/// the other parts or the journal (MPI_Init) say so (0: unknown, the rank's number + 1).
pub fn recover_rank(dir: &Path, rank: u32, job_size: u32) -> Result<Recovered, String> {
    let journal = journal_path(dir, Some(rank));
    let (file, len) =
        open_regular(&journal).map_err(|e| format!("cannot read {}: {e}", journal.display()))?;
    let replayed = replay(&journal, file, len)?;
    let mut definitions = replayed.definitions;
    let start = definitions
        .start
        .clone()
        .ok_or_else(|| format!("{} holds no start record", journal.display()))?;
    if start.rank != Some(rank) {
        return Err(format!(
            "{} is not the journal of rank {rank}",
            journal.display()
        ));
    }
    // The rank's own lock on its event files: refused while the rank still runs.
    let archive =
        ArchiveWriter::create_shared(dir, "traces", start.archive.clone(), &format!("rank{rank}"))
            .map_err(|e| match e.kind() {
                io::ErrorKind::WouldBlock => format!("rank {rank} is still running ({e})"),
                _ => format!(
                    "cannot open the events of rank {rank} in {}: {e}",
                    dir.display()
                ),
            })?;
    let mut r = Recovered {
        anchor: dir
            .join(otf2::unify::PARTS_DIR)
            .join(format!("{rank}.otf2")),
        locations: definitions.locations(),
        journal_dropped_bytes: replayed.dropped_bytes,
        ..Recovered::default()
    };
    let file_chunk = start.archive.event_chunk_size as u64;
    let mut events = Vec::with_capacity(r.locations);
    for number in 0..r.locations as u32 {
        let path = archive.event_path(crate::output::job::location_id(Some(rank), number));
        let s = salvage_event_file(&path, file_chunk, start.memory_chunk_size)
            .map_err(|e| format!("cannot repair {}: {e}", path.display()))?;
        events.push(s.events);
        r.events += s.events;
        r.chunks += s.chunks;
        r.dropped_chunks += s.dropped_chunks;
        r.dropped_bytes += s.dropped_bytes;
    }
    let end = definitions.last_clock.unwrap_or(start.sample);
    let resolution = calibrated_resolution(&start, end, &mut r.warnings);
    let mut defs = archive.global_def_writer();
    let mut extra = (
        MetricDefinitions::named(&definitions.metrics),
        crate::output::communicators::Definitions::journaled(&definitions.mpi),
    );
    if let Err(e) =
        definitions.write_global_defs(&mut defs, &events, resolution, end.ticks, &mut extra)
    {
        r.warnings.push(e);
    }
    let config = archive.config().clone();
    archive.close_unanchored();
    let size = [job_size, definitions.mpi.world_size, rank + 1]
        .into_iter()
        .max()
        .unwrap_or(0);
    let job = crate::base::launcher::JobRank {
        rank,
        size,
        job_id: None,
        source: "its journal",
    };
    crate::output::job::write_part(&job, dir, config, defs, &definitions.mpi.clock_offsets)?;
    let _ = std::fs::remove_file(&journal);
    Ok(r)
}
