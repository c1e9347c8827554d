//! `pomptrace view`: one self-contained HTML file with a timeline (a lane per location, grouped
//! as in the system tree, bars coloured by construct kind, marks for fork/join, tasks and locks)
//! and a sortable profile table. The page (`view_page.html`) carries its script and style
//! inline and the trace as one JSON object; nothing is loaded from anywhere.
//!
//! Big traces: when the trace has more visits than `BAR_BUDGET`, visits shorter than one time
//! bucket are summed per (lane, depth, bucket) into cells drawn as one bar of the bucket's
//! dominant kind, whose height shows how busy the bucket was; longer visits stay exact. The
//! page says so. This bounds the file and the drawing work whatever the number of events.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::json;

use crate::progress::Progress;
use crate::region_profile::{Profile, ProfileSink};
use crate::region_visits::{walk, Mark, MarkKind, NestingDamage, Visit, VisitSink};
use crate::trace_definitions::{self, ConstructKind, TraceDefinitions};
use crate::Failure;

/// Exact bars written at most (about 25 bytes each in the page).
const BAR_BUDGET: u64 = 400_000;
/// Marks written at most before they are thinned to one per lane, kind and bucket.
const MARK_BUDGET: u64 = 200_000;
/// Nesting depth assumed when sizing buckets (a parallel region and what it encloses).
const EXPECTED_DEPTH: u64 = 2;

const PAGE: &str = include_str!("view_page.html");
const DATA_PLACEHOLDER: &str = "/*TRACE_DATA*/null";

/// Write the trace as one self-contained HTML page: timeline and profile.
#[derive(clap::Args)]
#[command(override_usage = "pomptrace view ARCHIVE.otf2 [-o trace.html]")]
pub struct ViewArgs {
    /// The trace's anchor file (traces.otf2).
    #[arg(value_name = "ARCHIVE.otf2")]
    archive: PathBuf,
    /// Where to write the page. Default: traces.html next to the anchor file.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(args: &ViewArgs) -> Result<(), Failure> {
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.archive.with_extension("html"));
    let (reader, defs) = trace_definitions::open(&args.archive).map_err(Failure::Error)?;
    let progress = Progress::new(defs.total_events(), "view");
    let detail = Detail::for_trace(&defs);
    let mut profile = Profile::default();
    let mut damage = NestingDamage::default();
    let mut lanes = Vec::with_capacity(defs.locations.len());
    for (index, location) in defs.locations.iter().enumerate() {
        let mut sinks = (
            ProfileSink::new(&mut profile, &defs, index),
            LaneSink::new(&defs, &detail),
        );
        walk(&reader, location, &mut damage, &mut sinks, &mut |n| {
            progress.add(n)
        })
        .map_err(Failure::Error)?;
        let (profile_sink, lane) = sinks;
        profile_sink.finish();
        lanes.push(lane.finish());
    }
    profile.damage = damage;
    drop(progress);

    let page = render_page(args, &defs, &detail, &profile, &lanes);
    std::fs::write(&output, page)
        .map_err(|e| Failure::Error(format!("cannot write {}: {e}", output.display())))?;
    for note in defs.notes.iter().chain(&profile.damage.warnings()) {
        eprintln!("pomptrace: warning: {note}");
    }
    let bars: usize = lanes.iter().map(|l| l.bars.len() / 4).sum();
    let cells: usize = lanes.iter().map(|l| l.cells.len() / 6).sum();
    eprintln!(
        "pomptrace: wrote {} ({} lanes, {bars} bars{})",
        output.display(),
        lanes.len(),
        if detail.bucket > 0 {
            format!(", {cells} aggregated cells")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// How much detail the page gets.
struct Detail {
    /// Bucket width in ticks; 0: every visit is drawn exactly.
    bucket: u64,
    /// Whether marks are thinned to one per lane, kind and bucket.
    thin_marks: bool,
    origin: u64,
    ticks_per_ns: f64,
}

impl Detail {
    fn for_trace(defs: &TraceDefinitions) -> Self {
        let events = defs.total_events();
        let visits = events / 2;
        let lanes = defs.locations.len().max(1) as u64;
        let bucket = if visits <= BAR_BUDGET {
            0
        } else {
            (defs.trace_length.saturating_mul(lanes * EXPECTED_DEPTH) / BAR_BUDGET).max(1)
        };
        Self {
            bucket,
            thin_marks: bucket > 0 && events / 4 > MARK_BUDGET,
            origin: defs.origin,
            ticks_per_ns: defs.ticks_per_second / 1e9,
        }
    }

    fn ns(&self, time: u64) -> u64 {
        (time.saturating_sub(self.origin) as f64 / self.ticks_per_ns).round() as u64
    }

    fn ns_duration(&self, ticks: u64) -> u64 {
        (ticks as f64 / self.ticks_per_ns).round() as u64
    }
}

/// Visits shorter than a bucket, summed.
#[derive(Clone)]
struct Cell {
    bucket: u64,
    count: u64,
    busy_by_kind: [u64; ConstructKind::ALL.len()],
}

/// One lane of the page, in the flat number arrays the page reads.
#[derive(Default)]
struct Lane {
    /// start ns, duration ns, region id, depth
    bars: Vec<u64>,
    /// start ns, width ns, kind index, depth, visits, busy ns
    cells: Vec<u64>,
    /// time ns, mark kind index, id
    marks: Vec<u64>,
    max_depth: usize,
}

struct LaneSink<'a> {
    defs: &'a TraceDefinitions,
    detail: &'a Detail,
    lane: Lane,
    /// The cell being filled at each depth.
    open_cells: Vec<Option<Cell>>,
    /// Per mark kind, the bucket of the last mark kept (when thinning).
    last_mark_bucket: HashMap<usize, u64>,
}

impl<'a> LaneSink<'a> {
    fn new(defs: &'a TraceDefinitions, detail: &'a Detail) -> Self {
        Self {
            defs,
            detail,
            lane: Lane::default(),
            open_cells: Vec::new(),
            last_mark_bucket: HashMap::new(),
        }
    }

    fn flush_cell(&mut self, depth: usize) {
        let Some(cell) = self.open_cells.get_mut(depth).and_then(Option::take) else {
            return;
        };
        let (kind, _) = cell
            .busy_by_kind
            .iter()
            .enumerate()
            .max_by_key(|(_, busy)| **busy)
            .unwrap_or((0, &0));
        let busy: u64 = cell.busy_by_kind.iter().sum();
        let start = self.detail.origin + cell.bucket * self.detail.bucket;
        self.lane.cells.extend([
            self.detail.ns(start),
            self.detail.ns_duration(self.detail.bucket),
            kind as u64,
            depth as u64,
            cell.count,
            self.detail.ns_duration(busy),
        ]);
    }

    fn finish(mut self) -> Lane {
        for depth in 0..self.open_cells.len() {
            self.flush_cell(depth);
        }
        self.lane
    }
}

impl VisitSink for LaneSink<'_> {
    fn visit(&mut self, visit: Visit) {
        self.lane.max_depth = self.lane.max_depth.max(visit.depth);
        let duration = visit.end.saturating_sub(visit.start);
        let bucket_width = self.detail.bucket;
        if bucket_width == 0 || duration >= bucket_width {
            self.lane.bars.extend([
                self.detail.ns(visit.start),
                self.detail.ns_duration(duration),
                u64::from(visit.region),
                visit.depth as u64,
            ]);
            return;
        }
        let bucket = visit.start.saturating_sub(self.detail.origin) / bucket_width;
        if self.open_cells.len() <= visit.depth {
            self.open_cells.resize(visit.depth + 1, None);
        }
        if self.open_cells[visit.depth]
            .as_ref()
            .is_some_and(|c| c.bucket != bucket)
        {
            self.flush_cell(visit.depth);
        }
        let kind = self
            .defs
            .region(visit.region)
            .map_or(ConstructKind::Other, |r| r.kind);
        let cell = self.open_cells[visit.depth].get_or_insert(Cell {
            bucket,
            count: 0,
            busy_by_kind: [0; ConstructKind::ALL.len()],
        });
        cell.count += 1;
        cell.busy_by_kind[kind_index(kind)] += duration;
    }

    fn mark(&mut self, mark: Mark) {
        let kind = MarkKind::ALL
            .iter()
            .position(|k| *k == mark.kind)
            .unwrap_or(0);
        if self.detail.thin_marks {
            let bucket = mark.time.saturating_sub(self.detail.origin) / self.detail.bucket;
            if self.last_mark_bucket.insert(kind, bucket) == Some(bucket) {
                return;
            }
        }
        self.lane
            .marks
            .extend([self.detail.ns(mark.time), kind as u64, mark.id]);
    }
}

fn kind_index(kind: ConstructKind) -> usize {
    ConstructKind::ALL
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(0)
}

/// Colours by construct kind: waiting (barrier red, lock purple) stands out.
fn kind_colour(kind: ConstructKind) -> &'static str {
    match kind {
        ConstructKind::Parallel => "#4e79a7",
        ConstructKind::Worksharing => "#59a14f",
        ConstructKind::Barrier => "#e15759",
        ConstructKind::Lock => "#b07aa1",
        ConstructKind::Task => "#f28e2b",
        ConstructKind::User => "#edc948",
        ConstructKind::Other => "#9c9c9c",
    }
}

fn mark_colour(kind: MarkKind) -> &'static str {
    match kind {
        MarkKind::Fork | MarkKind::Join => "#1f1f1f",
        MarkKind::TaskCreate | MarkKind::TaskSwitch | MarkKind::TaskComplete => "#b35806",
        MarkKind::LockAcquire | MarkKind::LockRelease => "#6a3d9a",
    }
}

fn render_page(
    args: &ViewArgs,
    defs: &TraceDefinitions,
    detail: &Detail,
    profile: &Profile,
    lanes: &[Lane],
) -> String {
    let mut regions = serde_json::Map::new();
    for (id, info) in &defs.regions {
        let source = if info.file.is_empty() {
            String::new()
        } else {
            format!("{}:{}", info.file, info.line)
        };
        regions.insert(
            id.to_string(),
            json!([info.name, kind_index(info.kind), source]),
        );
    }
    let ms = |ticks: f64| ticks / defs.ticks_per_second * 1000.0;
    let profile_rows: Vec<serde_json::Value> = profile
        .rows(defs)
        .iter()
        .map(|row| {
            json!({
                "region": row.region,
                "name": row.name,
                "kind": kind_index(row.kind),
                "source": if row.file.is_empty() { String::new() } else { format!("{}:{}", row.file, row.line) },
                "threads": row.threads,
                "visits": row.visits,
                "incl": [ms(row.inclusive.total as f64), row.inclusive.mean / defs.ticks_per_second * 1000.0, ms(row.inclusive.max as f64)],
                "excl": [ms(row.exclusive.total as f64), row.exclusive.mean / defs.ticks_per_second * 1000.0, ms(row.exclusive.max as f64)],
                "imbalance": row.imbalance_percent,
            })
        })
        .collect();
    let lane_values: Vec<serde_json::Value> = defs
        .locations
        .iter()
        .zip(lanes)
        .map(|(location, lane)| {
            json!({
                "name": location.name,
                "group": format!("{} ({})", location.group, location.system_tree),
                "nesting": location.nesting,
                "depth": lane.max_depth + 1,
                "bars": lane.bars,
                "cells": lane.cells,
                "marks": lane.marks,
            })
        })
        .collect();
    let end_ns = lanes
        .iter()
        .flat_map(|l| {
            let bar_ends = l.bars.chunks(4).map(|b| b[0] + b[1]);
            let cell_ends = l.cells.chunks(6).map(|c| c[0] + c[1]);
            let mark_ends = l.marks.chunks(3).map(|m| m[0]);
            bar_ends.chain(cell_ends).chain(mark_ends)
        })
        .max()
        .unwrap_or(0);
    let start_ns = profile.first_time.map_or(0, |t| detail.ns(t));
    let mut warnings = defs.notes.clone();
    warnings.extend(profile.damage.warnings());
    let data = json!({
        "title": args.archive.display().to_string(),
        "events": profile.events,
        "start": start_ns,
        "end": end_ns.max(start_ns + 1),
        "aggregated": detail.bucket > 0,
        "bucket": if detail.bucket > 0 { detail.ns_duration(detail.bucket) } else { 0 },
        "thinnedMarks": detail.thin_marks,
        "headline": profile.headline(),
        "warnings": warnings,
        "kinds": ConstructKind::ALL.iter().map(|k| json!([k.label(), kind_colour(*k)])).collect::<Vec<_>>(),
        "markKinds": MarkKind::ALL.iter().map(|k| json!([k.label(), mark_colour(*k)])).collect::<Vec<_>>(),
        "regions": regions,
        "lanes": lane_values,
        "profile": profile_rows,
    });
    // Inside <script>, "</" could end the element; in JSON it only occurs in strings, where
    // "<\/" means the same.
    let data = data.to_string().replace("</", "<\\/");
    PAGE.replacen(DATA_PLACEHOLDER, &data, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_one_data_placeholder_and_no_network_reference() {
        assert_eq!(PAGE.matches(DATA_PLACEHOLDER).count(), 1);
        assert!(!PAGE.contains("http://") && !PAGE.contains("https://"));
    }
}
