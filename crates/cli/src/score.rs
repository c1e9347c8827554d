//! `pomptrace score`: what each region costs a trace, as Score-P's `scorep-score` tells it:
//! per kind of region (OpenMP, user, MPI, …) and per region its visits, its share of the time
//! and the bytes its events take; what a filter file would leave of the trace (`--filter`); and
//! a filter that keeps the trace within a size (`--suggest`).
//!
//! Bytes are counted, not estimated: the reader says what each event took in its chunk (with
//! its timestamp). The trace a filter would give is estimated from those counts: each location's
//! remaining event bytes packed into chunks as the writer packs them, plus the archive's other
//! files. Visits that the run's size budget left out (the description of a region it stopped
//! recording says how many) are added at what a visit of that region costs, so a run that was
//! cut short by its budget still tells what the whole run would have written.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use otf2::{GlobalDef, Paradigm, RegionRole};
use pomptrace::filtering::{self, Filter, Filterable};
use serde_json::json;

use crate::progress::Progress;
use crate::region_profile::{Profile, ProfileSink};
use crate::region_visits::{plural, walk, NestingDamage, VisitSink};
use crate::summary::csv_field;
use crate::trace_definitions::{self, TraceDefinitions};
use crate::{print_stdout, usage_error, Failure};

/// Score a trace: per kind of region and per region visits, time share and bytes in the trace.
#[derive(clap::Args)]
#[command(
    override_usage = "pomptrace score DIR [-r] [--filter FILE] [--suggest [--budget SIZE] -o FILE] [--csv | --json]"
)]
pub struct ScoreArgs {
    /// An experiment directory, or the anchor file (traces.otf2) of its trace.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Every region (otherwise the kinds and the regions that cost the most bytes).
    #[arg(short = 'r', long = "regions")]
    regions: bool,
    /// Estimate the trace that this filter file (Score-P syntax) would give.
    #[arg(long, value_name = "FILE")]
    filter: Option<PathBuf>,
    /// Write a filter that keeps the trace within --budget to the file given with -o; the
    /// parallel regions, barriers, tasks, locks and MPI calls stay.
    #[arg(long, requires = "output")]
    suggest: bool,
    /// The size --suggest keeps the trace within, e.g. 50M or 2G. Default: the run's
    /// POMPTRACE_MAX_TRACE_SIZE (from DIR/pomptrace.cfg), else 2G.
    #[arg(long, value_name = "SIZE", requires = "suggest")]
    budget: Option<String>,
    /// Where --suggest writes its filter file.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        requires = "suggest"
    )]
    output: Option<PathBuf>,
    /// Comma-separated values, one row per region, times in milliseconds.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// One JSON document, times in milliseconds.
    #[arg(long)]
    json: bool,
}

/// Regions shown without `-r`.
const TOP_REGIONS: usize = 10;
/// The budget of a run whose configuration is not known: POMPTRACE_MAX_TRACE_SIZE's default.
const DEFAULT_BUDGET: u64 = 2 << 30;
/// Bytes the writer leaves unused at a chunk's end, on average (a record never straddles two
/// chunks; libotf2's rule keeps room for the largest record it might write).
const CHUNK_END_WASTE: u64 = 12;
/// Chunk header and, at the end of a file, END_OF_FILE and END_OF_BUFFER.
const CHUNK_HEADER: u64 = otf2::chunk::CHUNK_HEADER_LEN as u64;
const FILE_END: u64 = 2;

pub fn run(args: &ScoreArgs) -> Result<(), Failure> {
    let (experiment, anchor) = locate(&args.dir)?;
    let (reader, defs) = trace_definitions::open(&anchor).map_err(Failure::Error)?;
    let filter = match &args.filter {
        Some(path) => Some(read_filter(path)?),
        None => None,
    };
    let budget = match &args.budget {
        Some(text) => Some(pomptrace::settings::parse_size(text).ok_or_else(|| {
            usage_error(format!(
                "--budget {text} is not a size (bytes, or a number with K, M or G, e.g. 50M)"
            ))
        })? as u64),
        None => None,
    };
    let progress = Progress::new(defs.total_events(), "score");
    let score = Score::measure(&reader, &defs, &anchor, experiment.as_deref(), &progress)
        .map_err(Failure::Error)?;
    drop(progress);
    let filtered = filter.as_ref().map(|f| score.excluded_by(f));
    let report = Report {
        args,
        anchor: &anchor,
        defs: &defs,
        score: &score,
        filtered: filtered.as_ref(),
    };
    if args.suggest {
        let budget = budget
            .or_else(|| experiment.as_deref().and_then(recorded_budget))
            .unwrap_or(DEFAULT_BUDGET);
        let output = args
            .output
            .as_ref()
            .expect("clap requires -o with --suggest");
        let (text, estimate) = score.suggest(budget, &anchor);
        std::fs::write(output, text)
            .map_err(|e| Failure::Error(format!("cannot write {}: {e}", output.display())))?;
        if !args.json && !args.csv {
            eprintln!(
                "pomptrace: wrote {}: a trace of about {estimate} bytes with it (budget {budget})",
                output.display()
            );
        }
    }
    let text = if args.json {
        report.json()
    } else if args.csv {
        report.csv()
    } else {
        report.table()
    };
    print_stdout(&text)
}

/// The experiment directory (if `dir` is one, or holds the anchor) and the trace's anchor file.
fn locate(dir: &Path) -> Result<(Option<PathBuf>, PathBuf), Failure> {
    if dir.is_dir() {
        let anchor = dir.join("traces.otf2");
        if anchor.is_file() {
            return Ok((Some(dir.to_path_buf()), anchor));
        }
        if dir.join("profile.cubex").is_file() {
            return Err(Failure::Error(format!(
                "{} holds a profile and no trace; this pomptrace scores traces only (reading \
                 CUBE profiles is not built in yet)",
                dir.display()
            )));
        }
        return Err(Failure::Error(format!(
            "{} holds no trace (traces.otf2)",
            dir.display()
        )));
    }
    let experiment = dir
        .parent()
        .filter(|p| p.join("pomptrace.cfg").is_file())
        .map(Path::to_path_buf);
    Ok((experiment, dir.to_path_buf()))
}

fn read_filter(path: &Path) -> Result<Filter, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::Error(format!(
            "cannot read the filter file {}: {e}",
            path.display()
        ))
    })?;
    Filter::parse(&text).map_err(|e| Failure::Error(format!("filter file {}, {e}", path.display())))
}

/// A setting from the experiment's `pomptrace.cfg`.
fn recorded_setting(experiment: &Path, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(experiment.join("pomptrace.cfg")).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key == name).then(|| value.trim().to_string())
    })
}

/// The run's POMPTRACE_MAX_TRACE_SIZE, if it had one.
fn recorded_budget(experiment: &Path) -> Option<u64> {
    recorded_setting(experiment, "POMPTRACE_MAX_TRACE_SIZE")
        .and_then(|v| pomptrace::settings::parse_size(&v))
        .map(|n| n as u64)
        .filter(|&n| n > 0)
}

/// The kinds `score` adds regions up by: their paradigm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    OpenMp,
    User,
    Mpi,
    Other,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::OpenMp, Kind::User, Kind::Mpi, Kind::Other];

    fn of(paradigm: Paradigm) -> Self {
        match paradigm {
            Paradigm::OPENMP => Self::OpenMp,
            Paradigm::USER => Self::User,
            Paradigm::MPI => Self::Mpi,
            _ => Self::Other,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::OpenMp => "OpenMP",
            Self::User => "user",
            Self::Mpi => "MPI",
            Self::Other => "other",
        }
    }
}

/// One region of the trace.
struct RegionScore {
    region: u32,
    name: String,
    kind: Kind,
    role: RegionRole,
    paradigm: Paradigm,
    /// Its source file as the definitions give it (what filter files match).
    file: String,
    line: u32,
    visits: u64,
    inclusive: u128,
    exclusive: u128,
    /// Bytes of its Enter and Leave events in the trace.
    bytes: u64,
    /// Visits the run's size budget left out (from the region's description).
    unrecorded: u64,
}

impl RegionScore {
    /// Bytes the left-out visits would have taken.
    fn unrecorded_bytes(&self) -> u64 {
        self.unrecorded * 2 * otf2::region_event_bytes(self.region) as u64
    }
}

/// Event bytes of one location.
#[derive(Default)]
struct LocationBytes {
    /// Every event's bytes.
    total: u64,
    /// The bytes of each region's Enter and Leave events.
    by_region: HashMap<u32, u64>,
}

impl VisitSink for LocationBytes {
    fn visit(&mut self, _visit: crate::region_visits::Visit) {}

    fn event_bytes(&mut self, region: Option<u32>, bytes: usize) {
        self.total += bytes as u64;
        if let Some(region) = region {
            *self.by_region.entry(region).or_default() += bytes as u64;
        }
    }
}

/// How the archive's bytes come about: event files of whole chunks, and the other files.
struct SizeModel {
    /// An event file's chunk size (the anchor's).
    file_chunk: u64,
    /// The writer's chunk size in memory (its chunks are padded to `file_chunk` in the file).
    memory_chunk: u64,
    /// The anchor, definition and other files of the archive, as they are.
    other_files: u64,
}

impl SizeModel {
    /// An event file holding `records` bytes of events.
    fn event_file(&self, records: u64) -> u64 {
        let usable = self
            .memory_chunk
            .saturating_sub(CHUNK_HEADER + CHUNK_END_WASTE)
            .max(1);
        let full = records / usable;
        full * self.file_chunk + CHUNK_HEADER + (records - full * usable) + FILE_END
    }
}

/// Everything `score` reports about one trace.
struct Score {
    regions: Vec<RegionScore>,
    locations: Vec<LocationBytes>,
    model: SizeModel,
    /// The archive's files as they are on disk.
    actual_bytes: u64,
    events: u64,
    damage: NestingDamage,
}

impl Score {
    fn measure(
        reader: &otf2::ArchiveReader,
        defs: &TraceDefinitions,
        anchor: &Path,
        experiment: Option<&Path>,
        progress: &Progress,
    ) -> Result<Self, String> {
        let mut profile = Profile::default();
        let mut damage = NestingDamage::default();
        let mut locations = Vec::with_capacity(defs.locations.len());
        for (index, location) in defs.locations.iter().enumerate() {
            let mut sinks = (
                ProfileSink::new(&mut profile, defs, index),
                LocationBytes::default(),
            );
            walk(reader, location, &mut damage, &mut sinks, &mut |n| {
                progress.add(n)
            })?;
            let (profile_sink, bytes) = sinks;
            profile_sink.finish();
            locations.push(bytes);
        }
        // Full source paths and descriptions: the summary's definitions keep neither.
        let mut strings: HashMap<u32, String> = HashMap::new();
        let mut region_defs = Vec::new();
        for def in reader.global_defs().map_err(|e| e.to_string())? {
            match def {
                GlobalDef::String { id, string } => {
                    strings.insert(id, string);
                }
                GlobalDef::Region {
                    id,
                    name,
                    description,
                    source_file,
                    begin_line,
                    region_role,
                    paradigm,
                    ..
                } => region_defs.push((
                    id,
                    name,
                    description,
                    source_file,
                    begin_line,
                    region_role,
                    paradigm,
                )),
                _ => {}
            }
        }
        let text = |id: u32| strings.get(&id).cloned().unwrap_or_default();
        let mut per_region: HashMap<u32, (u64, u128, u128)> = HashMap::new();
        for (&(region, _), stats) in &profile.per_thread {
            let entry = per_region.entry(region).or_default();
            entry.0 += stats.visits;
            entry.1 += stats.inclusive;
            entry.2 += stats.exclusive;
        }
        let regions = region_defs
            .into_iter()
            .map(|(id, name, description, file, line, role, paradigm)| {
                let (visits, inclusive, exclusive) =
                    per_region.get(&id).copied().unwrap_or_default();
                RegionScore {
                    region: id,
                    name: text(name),
                    kind: Kind::of(paradigm),
                    role,
                    paradigm,
                    file: text(file),
                    line,
                    visits,
                    inclusive,
                    exclusive,
                    bytes: locations.iter().filter_map(|l| l.by_region.get(&id)).sum(),
                    unrecorded: unrecorded_visits(&text(description)),
                }
            })
            .collect();
        let actual_bytes = archive_bytes(anchor);
        let event_files: u64 = defs
            .locations
            .iter()
            .map(|l| std::fs::metadata(reader.event_path(l.id)).map_or(0, |m| m.len()))
            .sum();
        let file_chunk = reader.anchor().event_chunk_size;
        let memory_chunk = experiment
            .and_then(|dir| recorded_setting(dir, "POMPTRACE_CHUNK_SIZE"))
            .and_then(|v| pomptrace::settings::parse_size(&v))
            .map_or(file_chunk, |n| (n as u64).min(file_chunk));
        Ok(Score {
            regions,
            locations,
            model: SizeModel {
                file_chunk,
                memory_chunk,
                other_files: actual_bytes.saturating_sub(event_files),
            },
            actual_bytes,
            events: profile.events,
            damage,
        })
    }

    /// Event bytes of all locations.
    fn event_bytes(&self) -> u64 {
        self.locations.iter().map(|l| l.total).sum()
    }

    /// The archive's size estimated from its events, less the regions in `left_out` (by
    /// region id); `with_unrecorded`: with the visits the run's budget left out of the others.
    fn estimate(&self, left_out: &dyn Fn(u32) -> bool, with_unrecorded: bool) -> u64 {
        let unrecorded = if with_unrecorded {
            self.unrecorded_share(left_out)
        } else {
            vec![0; self.locations.len()]
        };
        let events: u64 = self
            .locations
            .iter()
            .zip(unrecorded)
            .map(|(l, extra)| {
                let removed: u64 = l
                    .by_region
                    .iter()
                    .filter(|(&r, _)| left_out(r))
                    .map(|(_, &b)| b)
                    .sum();
                self.model.event_file(l.total - removed + extra)
            })
            .sum();
        self.model.other_files + events
    }

    /// The bytes of the visits the run's budget left out of the regions not in `left_out`,
    /// spread over the locations by their bytes of those regions (the trace does not say which
    /// location left out how many of which).
    fn unrecorded_share(&self, left_out: &dyn Fn(u32) -> bool) -> Vec<u64> {
        let mut shares = vec![0u64; self.locations.len()];
        for r in self
            .regions
            .iter()
            .filter(|r| r.unrecorded > 0 && !left_out(r.region))
        {
            let recorded: u64 = self
                .locations
                .iter()
                .map(|l| l.by_region.get(&r.region).copied().unwrap_or(0))
                .sum();
            for (share, l) in shares.iter_mut().zip(&self.locations) {
                let here = l.by_region.get(&r.region).copied().unwrap_or(0);
                *share += if recorded == 0 {
                    r.unrecorded_bytes() / self.locations.len().max(1) as u64
                } else {
                    (r.unrecorded_bytes() as u128 * here as u128 / recorded as u128) as u64
                };
            }
        }
        shares
    }

    /// Which regions `filter` leaves out (by region id).
    fn excluded_by(&self, filter: &Filter) -> HashMap<u32, bool> {
        self.regions
            .iter()
            .map(|r| (r.region, self.filter_excludes(filter, r)))
            .collect()
    }

    /// Whether the runtime, given `filter`, would not record `r` (it filters constructs: see
    /// `pomptrace::filtering`).
    fn filter_excludes(&self, filter: &Filter, r: &RegionScore) -> bool {
        match filtering::filterable(r.role, r.paradigm) {
            Filterable::Never => false,
            Filterable::Names if r.paradigm == Paradigm::USER => {
                filtering::user_region_name(&r.name)
                    .is_some_and(|name| filter.excludes(name, &r.file))
            }
            Filterable::Names => filter.excludes(&r.name, &r.file),
            Filterable::InnerOf(outer) => {
                let position = r.name.rfind(" @").map(|at| &r.name[at..]);
                self.regions
                    .iter()
                    .find(|o| {
                        o.role == outer
                            && o.file == r.file
                            && position.is_some_and(|p| o.name.ends_with(p))
                    })
                    .is_some_and(|o| filter.excludes(&o.name, &o.file))
            }
        }
    }

    /// A filter file that keeps the trace (with the visits its run left out) within `budget`,
    /// and the trace size estimated with it.
    fn suggest(&self, budget: u64, anchor: &Path) -> (String, u64) {
        let mut candidates: Vec<filtering::Candidate> = Vec::new();
        let mut members: Vec<Vec<u32>> = Vec::new();
        for r in &self.regions {
            let Some(pattern) = filtering::exclude_pattern(&r.name, r.role, r.paradigm) else {
                continue;
            };
            let bytes = r.bytes + r.unrecorded_bytes();
            let time = u64::try_from(r.inclusive).unwrap_or(u64::MAX);
            match candidates.iter().position(|c| c.pattern == pattern) {
                Some(i) => {
                    candidates[i].bytes += bytes;
                    candidates[i].time = candidates[i].time.max(time);
                    members[i].push(r.region);
                }
                None => {
                    candidates.push(filtering::Candidate {
                        pattern,
                        bytes,
                        time,
                        first: false,
                    });
                    members.push(vec![r.region]);
                }
            }
        }
        let full = self.estimate(&|_| false, true);
        let mut chosen = filtering::choose(&candidates, full, budget).0;
        // The linear choice above ignores how chunks pack: add more until the estimate fits.
        let estimate_with = |chosen: &[usize]| {
            let left_out: Vec<u32> = chosen.iter().flat_map(|&i| members[i].clone()).collect();
            self.estimate(&|r| left_out.contains(&r), true)
        };
        let mut estimate = estimate_with(&chosen);
        let all = filtering::choose(&candidates, full, 0).0;
        for i in all {
            if estimate <= budget {
                break;
            }
            if !chosen.contains(&i) {
                chosen.push(i);
                estimate = estimate_with(&chosen);
            }
        }
        let comments = [
            format!(
                "pomptrace score: a filter that keeps the trace of {} within {budget} bytes",
                anchor.display()
            ),
            format!("estimated trace size: {full} bytes without a filter, {estimate} bytes with this one"),
            "use it with POMPTRACE_FILTERING_FILE=<this file>".to_string(),
        ];
        let patterns: Vec<(String, String)> = chosen
            .iter()
            .map(|&i| {
                let names: Vec<String> = members[i]
                    .iter()
                    .filter_map(|&r| self.regions.iter().find(|x| x.region == r))
                    .map(|x| format!("{}: {} visits", x.name, x.visits + x.unrecorded))
                    .collect();
                (candidates[i].pattern.clone(), names.join("; "))
            })
            .collect();
        (filtering::filter_file(&comments, &patterns), estimate)
    }

    /// Visits the run's budget left out, over all regions.
    fn unrecorded(&self) -> u64 {
        self.regions.iter().map(|r| r.unrecorded).sum()
    }
}

/// `U` of a description `…; U of V visits left out` (what the runtime writes for a region its
/// size budget stopped recording); 0 otherwise.
fn unrecorded_visits(description: &str) -> u64 {
    description
        .strip_suffix(" visits left out")
        .and_then(|rest| rest.rsplit_once("; "))
        .and_then(|(_, counts)| counts.split_once(" of "))
        .and_then(|(unrecorded, _)| unrecorded.parse().ok())
        .unwrap_or(0)
}

/// The bytes of an archive: its anchor, its global definitions and everything in its
/// directory of location files.
fn archive_bytes(anchor: &Path) -> u64 {
    fn tree(path: &Path) -> u64 {
        match std::fs::symlink_metadata(path) {
            Ok(md) if md.is_dir() => std::fs::read_dir(path)
                .map(|entries| entries.flatten().map(|e| tree(&e.path())).sum())
                .unwrap_or(0),
            Ok(md) => md.len(),
            Err(_) => 0,
        }
    }
    tree(anchor) + tree(&anchor.with_extension("def")) + tree(&anchor.with_extension(""))
}

struct Report<'a> {
    args: &'a ScoreArgs,
    anchor: &'a Path,
    defs: &'a TraceDefinitions,
    score: &'a Score,
    /// Region id → left out by `--filter`.
    filtered: Option<&'a HashMap<u32, bool>>,
}

/// One line of the kinds table.
struct KindRow {
    label: &'static str,
    visits: u64,
    exclusive: u128,
    bytes: u64,
}

impl Report<'_> {
    fn ms(&self, ticks: u128) -> f64 {
        self.defs.duration_seconds(ticks) * 1000.0
    }

    fn total_time(&self) -> u128 {
        self.score.regions.iter().map(|r| r.exclusive).sum()
    }

    fn percent(part: f64, whole: f64) -> f64 {
        if whole > 0.0 {
            part / whole * 100.0
        } else {
            0.0
        }
    }

    fn excluded(&self, region: u32) -> Option<bool> {
        self.filtered
            .map(|f| f.get(&region).copied().unwrap_or(false))
    }

    fn filtered_estimate(&self) -> Option<u64> {
        let filtered = self.filtered?;
        Some(
            self.score
                .estimate(&|r| filtered.get(&r).copied().unwrap_or(false), false),
        )
    }

    fn kinds(&self) -> Vec<KindRow> {
        let mut rows = vec![KindRow {
            label: "ALL",
            visits: 0,
            exclusive: 0,
            bytes: self.score.event_bytes(),
        }];
        for kind in Kind::ALL {
            let regions: Vec<&RegionScore> = self
                .score
                .regions
                .iter()
                .filter(|r| r.kind == kind)
                .collect();
            if regions.iter().all(|r| r.visits == 0) {
                continue;
            }
            let row = KindRow {
                label: kind.label(),
                visits: regions.iter().map(|r| r.visits).sum(),
                exclusive: regions.iter().map(|r| r.exclusive).sum(),
                bytes: regions.iter().map(|r| r.bytes).sum(),
            };
            rows[0].visits += row.visits;
            rows[0].exclusive += row.exclusive;
            rows.push(row);
        }
        let region_bytes: u64 = rows[1..].iter().map(|r| r.bytes).sum();
        rows.push(KindRow {
            label: "(other events)",
            visits: 0,
            exclusive: 0,
            bytes: rows[0].bytes - region_bytes,
        });
        rows
    }

    /// Regions with visits, most bytes first (ties: most time, then name).
    fn regions(&self) -> Vec<&RegionScore> {
        let mut regions: Vec<&RegionScore> =
            self.score.regions.iter().filter(|r| r.visits > 0).collect();
        regions.sort_by(|a, b| {
            b.bytes
                .cmp(&a.bytes)
                .then(b.exclusive.cmp(&a.exclusive))
                .then(a.name.cmp(&b.name))
        });
        regions
    }

    fn table(&self) -> String {
        let s = self.score;
        let mut out = String::new();
        let locations = self.defs.locations.len() as u64;
        let _ = writeln!(
            out,
            "trace {}: {} location{}, {} event{}",
            self.anchor.display(),
            locations,
            plural(locations),
            s.events,
            plural(s.events)
        );
        let _ = writeln!(
            out,
            "trace size: {} bytes on disk; estimated from its events: {} bytes",
            s.actual_bytes,
            s.estimate(&|_| false, false)
        );
        let unrecorded = s.unrecorded();
        if unrecorded > 0 {
            let _ = writeln!(
                out,
                "the run's size budget left out {unrecorded} visit{}: without it the trace would \
                 take about {} bytes",
                plural(unrecorded),
                s.estimate(&|_| false, true)
            );
        }
        if let (Some(path), Some(estimate)) = (&self.args.filter, self.filtered_estimate()) {
            let left_out = self
                .filtered
                .map_or(0, |f| f.values().filter(|&&x| x).count());
            let _ = writeln!(
                out,
                "with the filter {}: about {estimate} bytes ({left_out} region{} left out)",
                path.display(),
                plural(left_out as u64)
            );
        }
        out.push('\n');
        let total_time = self.total_time() as f64;
        let total_bytes = s.event_bytes() as f64;
        let _ = writeln!(
            out,
            "{:<16} {:>12} {:>16} {:>7} {:>14} {:>8}",
            "kind", "visits", "excl. time [ms]", "time %", "bytes", "bytes %"
        );
        for row in self.kinds() {
            let (visits, time, share) = if row.label == "(other events)" {
                (String::new(), String::new(), String::new())
            } else {
                (
                    row.visits.to_string(),
                    format!("{:.3}", self.ms(row.exclusive)),
                    format!("{:.1}", Self::percent(row.exclusive as f64, total_time)),
                )
            };
            let _ = writeln!(
                out,
                "{:<16} {:>12} {:>16} {:>7} {:>14} {:>8.1}",
                row.label,
                visits,
                time,
                share,
                row.bytes,
                Self::percent(row.bytes as f64, total_bytes)
            );
        }
        let regions = self.regions();
        let shown = if self.args.regions {
            regions.len()
        } else {
            regions.len().min(TOP_REGIONS)
        };
        out.push('\n');
        if shown < regions.len() {
            let _ = writeln!(
                out,
                "the {shown} regions with the most bytes (-r: all {}):",
                regions.len()
            );
        }
        let filter_column = if self.filtered.is_some() {
            "filter "
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{filter_column}{:<8} {:>12} {:>16} {:>7} {:>16} {:>14} {:>8}  region",
            "kind", "visits", "excl. time [ms]", "time %", "time/visit [us]", "bytes", "bytes %"
        );
        for r in &regions[..shown] {
            let filter = match self.excluded(r.region) {
                Some(true) => "-      ",
                Some(false) => "+      ",
                None => "",
            };
            let per_visit = if r.visits > 0 {
                self.ms(r.exclusive) * 1000.0 / r.visits as f64
            } else {
                0.0
            };
            let note = if r.unrecorded > 0 {
                format!(" ({} more visits not recorded)", r.unrecorded)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "{filter}{:<8} {:>12} {:>16.3} {:>7.1} {:>16.3} {:>14} {:>8.1}  {}{note}",
                r.kind.label(),
                r.visits,
                self.ms(r.exclusive),
                Self::percent(r.exclusive as f64, total_time),
                per_visit,
                r.bytes,
                Self::percent(r.bytes as f64, total_bytes),
                r.name
            );
        }
        if self.filtered.is_some() {
            out.push_str("(filter: - left out by the filter, + kept)\n");
        }
        for note in self.warnings() {
            let _ = writeln!(out, "warning: {note}");
        }
        out
    }

    fn warnings(&self) -> Vec<String> {
        let mut notes = self.defs.notes.clone();
        notes.extend(self.score.damage.warnings());
        notes
    }

    fn csv(&self) -> String {
        let mut out = String::from(
            "region,kind,file,line,visits,exclusive_ms,inclusive_ms,time_percent,bytes,\
             bytes_percent,unrecorded_visits,excluded_by_filter\n",
        );
        let total_time = self.total_time() as f64;
        let total_bytes = self.score.event_bytes() as f64;
        for r in self.regions() {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&r.name),
                r.kind.label(),
                csv_field(&r.file),
                r.line,
                r.visits,
                self.ms(r.exclusive),
                self.ms(r.inclusive),
                Self::percent(r.exclusive as f64, total_time),
                r.bytes,
                Self::percent(r.bytes as f64, total_bytes),
                r.unrecorded,
                self.excluded(r.region)
                    .map_or(String::new(), |x| x.to_string())
            );
        }
        out
    }

    fn json(&self) -> String {
        let total_time = self.total_time() as f64;
        let total_bytes = self.score.event_bytes() as f64;
        let kinds: Vec<serde_json::Value> = self
            .kinds()
            .iter()
            .map(|k| {
                json!({
                    "kind": k.label,
                    "visits": k.visits,
                    "exclusive_ms": self.ms(k.exclusive),
                    "time_percent": Self::percent(k.exclusive as f64, total_time),
                    "bytes": k.bytes,
                    "bytes_percent": Self::percent(k.bytes as f64, total_bytes),
                })
            })
            .collect();
        let regions: Vec<serde_json::Value> = self
            .regions()
            .iter()
            .map(|r| {
                json!({
                    "region": r.name,
                    "kind": r.kind.label(),
                    "file": r.file,
                    "line": r.line,
                    "visits": r.visits,
                    "exclusive_ms": self.ms(r.exclusive),
                    "inclusive_ms": self.ms(r.inclusive),
                    "time_percent": Self::percent(r.exclusive as f64, total_time),
                    "bytes": r.bytes,
                    "bytes_percent": Self::percent(r.bytes as f64, total_bytes),
                    "unrecorded_visits": r.unrecorded,
                    "excluded_by_filter": self.excluded(r.region),
                })
            })
            .collect();
        let document = json!({
            "trace": self.anchor.display().to_string(),
            "locations": self.defs.locations.iter().map(|l| l.name.clone()).collect::<Vec<_>>(),
            "events": self.score.events,
            "trace_bytes": self.score.actual_bytes,
            "estimated_bytes": self.score.estimate(&|_| false, false),
            "estimated_bytes_without_budget": self.score.estimate(&|_| false, true),
            "unrecorded_visits": self.score.unrecorded(),
            "filter": self.args.filter.as_ref().map(|p| p.display().to_string()),
            "estimated_bytes_with_filter": self.filtered_estimate(),
            "kinds": kinds,
            "regions": regions,
            "warnings": self.warnings(),
        });
        let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_s_description_tells_the_visits_left_out() {
        assert_eq!(
            unrecorded_visits(
                "pomptrace: not recorded on 2 locations after the trace came near its size \
                 budget; 18165224 of 20000000 visits left out"
            ),
            18_165_224
        );
        assert_eq!(unrecorded_visits(""), 0);
        assert_eq!(unrecorded_visits("a region of the program"), 0);
    }

    #[test]
    fn event_files_are_whole_chunks_and_a_last_one() {
        let model = SizeModel {
            file_chunk: 1 << 20,
            memory_chunk: 1 << 20,
            other_files: 0,
        };
        assert_eq!(model.event_file(100), 18 + 100 + 2);
        let usable = (1 << 20) - 18 - CHUNK_END_WASTE;
        assert_eq!(model.event_file(3 * usable + 5), 3 * (1 << 20) + 18 + 5 + 2);
        // Smaller chunks in memory are padded to the file's chunk size.
        let padded = SizeModel {
            memory_chunk: 64 << 10,
            ..model
        };
        let usable = (64 << 10) - 18 - CHUNK_END_WASTE;
        assert_eq!(padded.event_file(2 * usable), 2 * (1 << 20) + 18 + 2);
    }
}
