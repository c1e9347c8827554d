//! `pomptrace summary`: what a trace or a call-path profile says, per region aggregated over
//! threads (the default) or per region and thread (`--by-thread`), as a table, CSV or JSON,
//! with a headline for the time threads waited in barriers and for locks. A trace takes one
//! streaming pass over the events; a profile (`cube_profile`) gives the same numbers from its
//! call tree.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::cube_profile::{self, Input};
use crate::progress::Progress;
use crate::region_profile::{profile_trace, Profile, RegionRow};
use crate::region_visits::plural;
use crate::terminal_text::{escape_controls, escape_json_controls};
use crate::trace_definitions::{self, TraceDefinitions};
use crate::{print_stdout, Failure};

/// Summarise a trace or a call-path profile: visits, inclusive and exclusive time per region.
///
/// By default one row per region, aggregated over the threads that visited it (visits,
/// inclusive and exclusive time, inclusive time min/mean/max over threads, imbalance =
/// (max − mean) / max), sorted by exclusive time. Inclusive time counts the outermost visit of
/// a region on a thread at a time (a recursive region, a task run inside another of the same
/// construct), as CUBE's does.
#[derive(clap::Args)]
#[command(
    override_usage = "pomptrace summary DIR|traces.otf2|profile.cubex [--top N] [--by-thread] [--csv | --json]"
)]
pub struct SummaryArgs {
    /// An experiment directory (its profile.cubex when it has one, else its traces.otf2), a
    /// trace's anchor file, or a CUBE4 profile (.cubex).
    #[arg(value_name = "DIR|traces.otf2|profile.cubex")]
    archive: PathBuf,
    /// Only the N regions with the most exclusive time.
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// One row per region and thread: visits, inclusive and exclusive time.
    #[arg(long)]
    by_thread: bool,
    /// Comma-separated values, times in milliseconds.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// One JSON document, times in milliseconds.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &SummaryArgs) -> Result<(), Failure> {
    let (path, source, defs, profile) = match Input::of(&args.archive) {
        Input::Trace(anchor) => {
            let (reader, defs) = trace_definitions::open(&anchor).map_err(Failure::Error)?;
            let progress = Progress::new(defs.total_events(), "summary");
            let profile = profile_trace(&reader, &defs, &progress).map_err(Failure::Error)?;
            drop(progress);
            (anchor, Source::Trace, defs, profile)
        }
        Input::Profile(file) => {
            let read = cube_profile::open(&file).map_err(Failure::Error)?;
            let call_paths = read.cube.cnodes.len();
            (
                file,
                Source::Profile { call_paths },
                read.defs,
                read.profile,
            )
        }
    };
    let mut rows = profile.rows(&defs);
    if let Some(top) = args.top {
        rows.truncate(top);
    }
    let summary = Summary {
        args,
        path: &path,
        source,
        defs: &defs,
        profile: &profile,
        rows: &rows,
    };
    let text = if args.json {
        summary.json()
    } else if args.csv {
        summary.csv()
    } else {
        summary.table()
    };
    print_stdout(&text)
}

/// What the numbers were read from.
#[derive(Clone, Copy)]
enum Source {
    Trace,
    Profile { call_paths: usize },
}

struct Summary<'a> {
    args: &'a SummaryArgs,
    /// The trace's anchor file or the profile.
    path: &'a Path,
    source: Source,
    defs: &'a TraceDefinitions,
    profile: &'a Profile,
    rows: &'a [RegionRow],
}

impl Summary<'_> {
    fn ms(&self, ticks: u128) -> f64 {
        self.defs.duration_seconds(ticks) * 1000.0
    }

    fn ms_f(&self, ticks: f64) -> f64 {
        ticks / self.defs.ticks_per_second * 1000.0
    }

    /// (region row, location index, stats) for `--by-thread`, regions in the order of the
    /// rows, threads in lane order.
    fn thread_rows(&self) -> Vec<(&RegionRow, usize, crate::region_profile::ThreadStats)> {
        let mut out = Vec::new();
        for row in self.rows {
            for index in 0..self.defs.locations.len() {
                if let Some(stats) = self.profile.per_thread.get(&(row.region, index)) {
                    out.push((row, index, *stats));
                }
            }
        }
        out
    }

    fn warnings(&self) -> Vec<String> {
        let mut notes = self.defs.notes.clone();
        notes.extend(self.profile.damage.warnings());
        notes
    }

    fn table(&self) -> String {
        let mut out = String::new();
        let locations = self.defs.locations.len() as u64;
        let (what, count, unit) = match self.source {
            Source::Trace => ("trace", self.profile.events, "event"),
            Source::Profile { call_paths } => ("profile", call_paths as u64, "call path"),
        };
        let _ = writeln!(
            out,
            "{what} {}: {} location{}, {count} {unit}{}, duration {:.3} ms",
            escape_controls(&self.path.display().to_string()),
            locations,
            plural(locations),
            plural(count),
            self.ms(u128::from(self.profile.duration()))
        );
        if let Some(headline) = self.profile.headline() {
            let _ = writeln!(out, "{headline}");
        }
        out.push('\n');
        let region_w = self
            .rows
            .iter()
            .map(|r| escape_controls(&r.name).chars().count())
            .chain([40])
            .max()
            .unwrap_or(40);
        if self.args.by_thread {
            let thread_w = self
                .defs
                .locations
                .iter()
                .map(|l| escape_controls(&l.name).chars().count())
                .chain([16])
                .max()
                .unwrap_or(16);
            let _ = writeln!(
                out,
                "{:<region_w$} {:<thread_w$} {:>10} {:>18} {:>18}",
                "region", "thread", "visits", "incl. time [ms]", "excl. time [ms]"
            );
            let mut previous = None;
            for (row, index, stats) in self.thread_rows() {
                let label = if previous == Some(row.region) {
                    "".into()
                } else {
                    escape_controls(&row.name)
                };
                previous = Some(row.region);
                let _ = writeln!(
                    out,
                    "{:<region_w$} {:<thread_w$} {:>10} {:>18.3} {:>18.3}",
                    label,
                    escape_controls(&self.defs.locations[index].name),
                    stats.visits,
                    self.ms(stats.inclusive),
                    self.ms(stats.exclusive)
                );
            }
        } else {
            let _ = writeln!(
                out,
                "{:<region_w$} {:>8} {:>10} {:>15} {:>15} {:>30} {:>10}",
                "region",
                "threads",
                "visits",
                "incl. [ms]",
                "excl. [ms]",
                "incl. min / mean / max [ms]",
                "imbalance"
            );
            for row in self.rows {
                let spread = format!(
                    "{:.3} / {:.3} / {:.3}",
                    self.ms(row.inclusive.min),
                    self.ms_f(row.inclusive.mean),
                    self.ms(row.inclusive.max)
                );
                let _ = writeln!(
                    out,
                    "{:<region_w$} {:>8} {:>10} {:>15.3} {:>15.3} {:>30} {:>9.1}%",
                    escape_controls(&row.name),
                    row.threads,
                    row.visits,
                    self.ms(row.inclusive.total),
                    self.ms(row.exclusive.total),
                    spread,
                    row.imbalance_percent
                );
            }
        }
        if self.profile.per_thread.is_empty() {
            out.push_str("(no region was entered)\n");
        }
        let warnings = self.warnings();
        if !warnings.is_empty() {
            out.push('\n');
            for note in warnings {
                let _ = writeln!(out, "warning: {note}");
            }
        }
        out
    }

    fn csv(&self) -> String {
        let mut out = String::new();
        if self.args.by_thread {
            out.push_str("region,thread,visits,inclusive_ms,exclusive_ms\n");
            for (row, index, stats) in self.thread_rows() {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{}",
                    csv_field(&row.name),
                    csv_field(&self.defs.locations[index].name),
                    stats.visits,
                    self.ms(stats.inclusive),
                    self.ms(stats.exclusive)
                );
            }
        } else {
            out.push_str(
                "region,kind,file,line,threads,visits,inclusive_ms,exclusive_ms,\
                 inclusive_min_ms,inclusive_mean_ms,inclusive_max_ms,\
                 exclusive_min_ms,exclusive_mean_ms,exclusive_max_ms,imbalance_percent\n",
            );
            for row in self.rows {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    csv_field(&row.name),
                    row.kind.label(),
                    csv_field(&row.file),
                    row.line,
                    row.threads,
                    row.visits,
                    self.ms(row.inclusive.total),
                    self.ms(row.exclusive.total),
                    self.ms(row.inclusive.min),
                    self.ms_f(row.inclusive.mean),
                    self.ms(row.inclusive.max),
                    self.ms(row.exclusive.min),
                    self.ms_f(row.exclusive.mean),
                    self.ms(row.exclusive.max),
                    row.imbalance_percent
                );
            }
        }
        out
    }

    fn json(&self) -> String {
        let regions: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|row| {
                json!({
                    "region": row.name,
                    "kind": row.kind.label(),
                    "file": row.file,
                    "line": row.line,
                    "threads": row.threads,
                    "visits": row.visits,
                    "inclusive_ms": self.ms(row.inclusive.total),
                    "exclusive_ms": self.ms(row.exclusive.total),
                    "inclusive_min_ms": self.ms(row.inclusive.min),
                    "inclusive_mean_ms": self.ms_f(row.inclusive.mean),
                    "inclusive_max_ms": self.ms(row.inclusive.max),
                    "exclusive_min_ms": self.ms(row.exclusive.min),
                    "exclusive_mean_ms": self.ms_f(row.exclusive.mean),
                    "exclusive_max_ms": self.ms(row.exclusive.max),
                    "imbalance_percent": row.imbalance_percent,
                })
            })
            .collect();
        let mut document = json!({
            "locations": self.defs.locations.iter().map(|l| l.name.clone()).collect::<Vec<_>>(),
            "duration_ms": self.ms(u128::from(self.profile.duration())),
            "parallel_ms": self.ms(self.profile.parallel),
            "barrier_wait_ms": self.ms(self.profile.barrier_wait),
            "lock_wait_ms": self.ms(self.profile.lock_wait),
            "headline": self.profile.headline(),
            "regions": regions,
            "warnings": self.warnings(),
        });
        match self.source {
            Source::Trace => {
                document["trace"] = json!(self.path.display().to_string());
                document["events"] = json!(self.profile.events);
            }
            Source::Profile { call_paths } => {
                document["profile"] = json!(self.path.display().to_string());
                document["call_paths"] = json!(call_paths);
            }
        }
        if self.args.by_thread {
            document["by_thread"] = self
                .thread_rows()
                .into_iter()
                .map(|(row, index, stats)| {
                    json!({
                        "region": row.name,
                        "thread": self.defs.locations[index].name,
                        "visits": stats.visits,
                        "inclusive_ms": self.ms(stats.inclusive),
                        "exclusive_ms": self.ms(stats.exclusive),
                    })
                })
                .collect();
        }
        let mut text =
            escape_json_controls(&serde_json::to_string_pretty(&document).unwrap_or_default())
                .into_owned();
        text.push('\n');
        text
    }
}

/// Quotes a CSV field when it needs it (RFC 4180), its control characters escaped (a CSV is
/// as often read in a terminal as by a program).
pub(crate) fn csv_field(text: &str) -> String {
    let text = escape_controls(text);
    if text.contains([',', '"']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.into_owned()
    }
}
