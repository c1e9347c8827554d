//! `pomptrace score`: what each region costs a trace, as Score-P's `scorep-score` tells it:
//! per kind of region (OpenMP, user, MPI, …) and per region its visits, its share of the time
//! and the bytes its events take; what a filter file would leave of the trace (`--filter`); and
//! a filter that keeps the trace within a size (`--suggest`).
//!
//! From a trace, bytes are counted, not estimated: the reader says what each event took in its
//! chunk (with its timestamp). The trace a filter would give is estimated from those counts:
//! each location's remaining event bytes packed into chunks as the writer packs them, plus the
//! archive's other files. Visits that the run's size budget left out (the description of a
//! region it stopped recording says how many) are added at what a visit of that region costs,
//! so a run that was cut short by its budget still tells what the whole run would have written.
//!
//! From a profile (`profile.cubex`, when the directory has no trace), the bytes are estimated:
//! each call path's visits on each location times the encoded size of an Enter and a Leave
//! with their timestamps, plus the events that come with some regions (team begin and end with
//! a parallel region, the lock events of a critical section, task switches), and definitions of
//! a size typical for the number of regions and locations.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use otf2::{region_event_bytes, GlobalDef, Paradigm, RegionRole};
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
    /// An experiment directory (its trace, else its profile.cubex), the anchor file
    /// (traces.otf2) of a trace, or a profile (.cubex).
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
    let (experiment, source) = locate(&args.dir)?;
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
    let (score, context) = match &source {
        Source::Trace(anchor) => {
            let (reader, defs) = trace_definitions::open(anchor).map_err(Failure::Error)?;
            let progress = Progress::new(defs.total_events(), "score");
            let score = Score::measure(&reader, &defs, anchor, experiment.as_deref(), &progress)
                .map_err(Failure::Error)?;
            let context = Context {
                label: format!("trace {}", anchor.display()),
                ticks_per_second: defs.ticks_per_second,
                locations: defs.locations.iter().map(|l| l.name.clone()).collect(),
                notes: defs.notes.clone(),
            };
            (score, context)
        }
        Source::Profile(path) => {
            Score::from_profile(path, experiment.as_deref()).map_err(Failure::Error)?
        }
    };
    let anchor = source.path();
    let filtered = filter.as_ref().map(|f| score.excluded_by(f));
    let report = Report {
        args,
        context: &context,
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
        let (text, estimate) = score.suggest(budget, anchor);
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

/// What `score` reads.
enum Source {
    /// A trace's anchor file.
    Trace(PathBuf),
    /// A CUBE profile.
    Profile(PathBuf),
}

impl Source {
    fn path(&self) -> &Path {
        match self {
            Source::Trace(path) | Source::Profile(path) => path,
        }
    }
}

/// The experiment directory (if `dir` is one, or holds the file) and what to read: a
/// directory's trace, else its profile; a file ending in `.cubex` is a profile, any other an
/// anchor file.
fn locate(dir: &Path) -> Result<(Option<PathBuf>, Source), Failure> {
    if dir.is_dir() {
        let anchor = dir.join("traces.otf2");
        if anchor.is_file() {
            return Ok((Some(dir.to_path_buf()), Source::Trace(anchor)));
        }
        let profile = dir.join("profile.cubex");
        if profile.is_file() {
            return Ok((Some(dir.to_path_buf()), Source::Profile(profile)));
        }
        return Err(Failure::Error(format!(
            "{} holds neither a trace (traces.otf2) nor a profile (profile.cubex)",
            dir.display()
        )));
    }
    let experiment = dir
        .parent()
        .filter(|p| p.join("pomptrace.cfg").is_file())
        .map(Path::to_path_buf);
    let source = if dir.extension().is_some_and(|e| e == "cubex") {
        Source::Profile(dir.to_path_buf())
    } else {
        Source::Trace(dir.to_path_buf())
    };
    Ok((experiment, source))
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
    /// The archive's files as they are on disk (a trace's).
    actual_bytes: Option<u64>,
    /// Events (of a trace) or events estimated (from a profile).
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
            actual_bytes: Some(actual_bytes),
            events: profile.events,
            damage,
        })
    }

    /// The score of the trace a profiled run would write (see the module's comment): visits and
    /// times from the profile, bytes estimated from the visits.
    fn from_profile(path: &Path, experiment: Option<&Path>) -> Result<(Self, Context), String> {
        let cube = otf2::cube::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let visits = cube
            .metric_index("visits")
            .ok_or_else(|| format!("{}: the profile has no visits metric", path.display()))?;
        let time = cube.metric_index("time");
        let names: Vec<String> = cube.locations().iter().map(|l| l.name.clone()).collect();
        let count = names.len();
        let children = cube.children();
        let kinds: Vec<(RegionRole, Paradigm)> = cube
            .regions
            .iter()
            .map(|r| (role_of(&r.role), paradigm_of(&r.paradigm)))
            .collect();
        let seconds = |cnode: usize, location: usize| {
            time.and_then(|m| cube.value(m, cnode, location))
                .filter(|t| t.is_finite() && *t > 0.0)
                .unwrap_or(0.0)
        };
        let ticks = |seconds: f64| (seconds.max(0.0) * PROFILE_TICKS_PER_SECOND) as u128;
        let mut per_region = vec![(0u64, 0u128, 0u128); cube.regions.len()];
        let mut locations: Vec<LocationBytes> =
            (0..count).map(|_| LocationBytes::default()).collect();
        let mut events = 0u64;
        for (c, cnode) in cube.cnodes.iter().enumerate() {
            let region = cnode.region;
            let Some(&(role, _)) = kinds.get(region) else {
                continue;
            };
            // Recursion counts once in the inclusive time, as in a trace's.
            let mut ancestor = cnode.parent;
            let mut nested = false;
            while let Some(a) = ancestor {
                nested |= cube.cnodes[a].region == region;
                ancestor = cube.cnodes[a].parent;
            }
            let (record, extra, extra_events) = visit_cost(region as u32, role);
            for (l, bytes) in locations.iter_mut().enumerate() {
                let n = cube.value(visits, c, l).unwrap_or(0.0) as u64;
                let inclusive = seconds(c, l);
                let below: f64 = children[c].iter().map(|&k| seconds(k, l)).sum();
                let entry = &mut per_region[region];
                entry.0 += n;
                if !nested {
                    entry.1 += ticks(inclusive);
                }
                entry.2 += ticks(inclusive - below);
                // Fork and join on the thread that forks (the first of its team).
                let fork = if role == RegionRole::PARALLEL && l == 0 {
                    FORK_JOIN_BYTES
                } else {
                    0
                };
                bytes.total += n * (record + extra + fork);
                *bytes.by_region.entry(region as u32).or_default() += n * record;
                events += n * (2 + extra_events);
            }
        }
        let regions = cube
            .regions
            .iter()
            .enumerate()
            .map(|(index, r)| {
                let (visits, inclusive, exclusive) = per_region[index];
                let (role, paradigm) = kinds[index];
                RegionScore {
                    region: index as u32,
                    name: r.name.clone(),
                    kind: Kind::of(paradigm),
                    role,
                    paradigm,
                    file: r.source_file.clone(),
                    line: r.begin_line.unwrap_or(0),
                    visits,
                    inclusive,
                    exclusive,
                    bytes: locations
                        .iter()
                        .filter_map(|l| l.by_region.get(&(index as u32)))
                        .sum(),
                    unrecorded: 0,
                }
            })
            .collect();
        let chunk = experiment
            .and_then(|dir| recorded_setting(dir, "POMPTRACE_CHUNK_SIZE"))
            .and_then(|v| pomptrace::settings::parse_size(&v))
            .map_or(DEFAULT_CHUNK, |n| n as u64);
        let file_chunk = chunk.clamp(MIN_FILE_CHUNK, MAX_FILE_CHUNK);
        let score = Score {
            regions,
            locations,
            model: SizeModel {
                file_chunk,
                memory_chunk: chunk.min(file_chunk),
                other_files: DEFINITIONS_BASE
                    + DEFINITIONS_PER_REGION * cube.regions.len() as u64
                    + DEFINITIONS_PER_LOCATION * count as u64,
            },
            actual_bytes: None,
            events,
            damage: NestingDamage::default(),
        };
        let context = Context {
            label: format!("profile {}", path.display()),
            ticks_per_second: PROFILE_TICKS_PER_SECOND,
            locations: names,
            notes: Vec::new(),
        };
        Ok((score, context))
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

/// A profile's times in ticks of a picosecond: finer than any clock a trace has.
const PROFILE_TICKS_PER_SECOND: f64 = 1e12;
/// POMPTRACE_CHUNK_SIZE's default, and the readers' limits on a file's chunk size.
const DEFAULT_CHUNK: u64 = 1 << 20;
const MIN_FILE_CHUNK: u64 = otf2::chunk::MIN_CHUNK_SIZE as u64;
const MAX_FILE_CHUNK: u64 = otf2::chunk::MAX_CHUNK_SIZE as u64;
/// A trace's anchor, definitions and local definition files, as pomptrace writes them for a
/// profile's regions and locations (the tests' traces: 1.9 KB for 26 regions and 2 locations).
const DEFINITIONS_BASE: u64 = 600;
const DEFINITIONS_PER_REGION: u64 = 50;
const DEFINITIONS_PER_LOCATION: u64 = 30;
/// ThreadFork and ThreadJoin, each with its timestamp, on the thread that forks.
const FORK_JOIN_BYTES: u64 = 26;

/// What a visit of `region` (its index) with `role` costs a trace: (its Enter and Leave with
/// their timestamps, the bytes of the events that come with it, how many those are). The events
/// that come with a visit share its Enter's or Leave's time, so they have no timestamp of their
/// own: ThreadTeamBegin with its ThreadId attribute and ThreadTeamEnd with a parallel region,
/// ThreadAcquireLock and ThreadReleaseLock with a critical section or lock call,
/// ThreadTaskSwitch and ThreadTaskComplete with a task, ThreadTaskCreate with its creation.
fn visit_cost(region: u32, role: RegionRole) -> (u64, u64, u64) {
    let record = 2 * region_event_bytes(region) as u64;
    let (extra, events) = match role {
        RegionRole::PARALLEL => (18, 2),
        RegionRole::CRITICAL | RegionRole::WRAPPER => (16, 2),
        RegionRole::TASK | RegionRole::TASK_UNTIED => (20, 2),
        RegionRole::TASK_CREATE => (10, 1),
        _ => (0, 0),
    };
    (record, extra, events)
}

/// The OTF2 region role a CUBE `role` names (`implicit barrier` → IMPLICIT_BARRIER).
fn role_of(word: &str) -> RegionRole {
    let name = otf2_name(word);
    match name.as_str() {
        "TASKWAIT" => return RegionRole::TASK_WAIT,
        "UNTIED_TASK" => return RegionRole::TASK_UNTIED,
        _ => {}
    }
    (0..=u8::MAX)
        .map(RegionRole)
        .find(|r| r.name() == Some(name.as_str()))
        .unwrap_or(RegionRole::UNKNOWN)
}

/// The OTF2 paradigm a CUBE `paradigm` names (`openmp` → OPENMP).
fn paradigm_of(word: &str) -> Paradigm {
    let name = otf2_name(word);
    (0..=u8::MAX)
        .map(Paradigm)
        .find(|p| p.name() == Some(name.as_str()))
        .unwrap_or(Paradigm::UNKNOWN)
}

/// `implicit barrier` → `IMPLICIT_BARRIER`.
fn otf2_name(word: &str) -> String {
    word.trim().to_ascii_uppercase().replace([' ', '-'], "_")
}

/// `U` of a description `…; U visits left out` (what the runtime writes for a region its size
/// budget stopped recording; earlier runtimes wrote `U of V`); 0 otherwise.
fn unrecorded_visits(description: &str) -> u64 {
    description
        .strip_suffix(" visits left out")
        .and_then(|rest| rest.rsplit_once("; "))
        .map(|(_, counts)| counts.split_once(" of ").map_or(counts, |(u, _)| u))
        .and_then(|unrecorded| unrecorded.parse().ok())
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

/// What the report says about its input besides the score.
struct Context {
    /// `trace PATH` or `profile PATH`.
    label: String,
    ticks_per_second: f64,
    /// Location names in column order.
    locations: Vec<String>,
    /// Said once to the user (e.g. a missing clock resolution).
    notes: Vec<String>,
}

struct Report<'a> {
    args: &'a ScoreArgs,
    context: &'a Context,
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
        ticks as f64 / self.context.ticks_per_second * 1000.0
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
        let locations = self.context.locations.len() as u64;
        let estimate = s.estimate(&|_| false, false);
        match s.actual_bytes {
            Some(actual) => {
                let _ = writeln!(
                    out,
                    "{}: {} location{}, {} event{}",
                    self.context.label,
                    locations,
                    plural(locations),
                    s.events,
                    plural(s.events)
                );
                let _ = writeln!(
                    out,
                    "trace size: {actual} bytes on disk; estimated from its events: {estimate} \
                     bytes"
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "{}: {} location{}, about {} event{} in a trace",
                    self.context.label,
                    locations,
                    plural(locations),
                    s.events,
                    plural(s.events)
                );
                let _ = writeln!(
                    out,
                    "trace size estimated from the visits: {estimate} bytes"
                );
            }
        }
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
        let mut notes = self.context.notes.clone();
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
        let (kind, path) = self.context.label.split_once(' ').unwrap_or(("trace", ""));
        let document = json!({
            kind: path,
            "locations": self.context.locations,
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
                 budget; 18165224 visits left out"
            ),
            18_165_224
        );
        assert_eq!(
            unrecorded_visits("pomptrace: not recorded …; 18165224 of 20000000 visits left out"),
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
