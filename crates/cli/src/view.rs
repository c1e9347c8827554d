//! `pomptrace view`: one self-contained HTML file with a timeline (a lane per location, grouped
//! as in the system tree, bars coloured by construct kind, marks for fork/join, tasks and locks)
//! and a sortable profile table. The page (`view_page.html`) carries its script and style
//! inline and the trace as one JSON object; nothing is loaded from anywhere.
//!
//! A call-path profile (`profile.cubex`) adds an expandable call tree (per call path: visits,
//! inclusive and exclusive time over threads): beside the timeline when an experiment
//! directory holds both, alone (with the per-region table) when it holds only the profile.
//!
//! Big traces: when the trace has more visits than `ITEM_BUDGET`, visits shorter than one time
//! bucket are summed per (lane, depth, bucket) into cells drawn as one bar of the bucket's
//! dominant kind, whose height shows how busy the bucket was; longer visits stay exact. Each
//! lane starts with fine buckets and doubles their width whenever it holds more than its share
//! of the budget, so busy lanes get the finest detail the budget allows. The page says so.
//! This bounds the file and the drawing work whatever the number of events.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::cube_profile::{self, CubeProfile, Input, TRACE_FILE};
use crate::progress::Progress;
use crate::region_profile::{Profile, ProfileSink};
use crate::region_visits::{walk, Mark, MarkKind, NestingDamage, Visit, VisitSink};
use crate::terminal_text::escape_controls;
use crate::trace_definitions::{self, ConstructKind, TraceDefinitions};
use crate::Failure;

/// Bars and cells written at most (about 25 and 40 bytes each in the page).
const ITEM_BUDGET: u64 = 500_000;
/// Marks written at most before they are thinned to one per lane, kind and bucket.
const MARK_BUDGET: u64 = 200_000;

const PAGE: &str = include_str!("view_page.html");
const DATA_PLACEHOLDER: &str = "/*TRACE_DATA*/null";

/// Write a trace and/or a call-path profile as one self-contained HTML page: timeline, profile
/// table, call tree.
#[derive(clap::Args)]
#[command(override_usage = "pomptrace view DIR|traces.otf2|profile.cubex [-o FILE.html]")]
pub struct ViewArgs {
    /// An experiment directory (its trace and its profile.cubex, whichever it has), a trace's
    /// anchor file, or a CUBE4 profile (.cubex).
    #[arg(value_name = "DIR|traces.otf2|profile.cubex")]
    archive: PathBuf,
    /// Where to write the page. Default: traces.html (profile.html for a profile alone) next
    /// to the anchor file.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(args: &ViewArgs) -> Result<(), Failure> {
    let (trace, profile) = match Input::of(&args.archive) {
        Input::Trace(anchor) => (Some(anchor), None),
        // A directory with both: the trace, and the profile's call tree beside it.
        Input::Profile(cubex)
            if args.archive.is_dir() && args.archive.join(TRACE_FILE).is_file() =>
        {
            (Some(args.archive.join(TRACE_FILE)), Some(cubex))
        }
        Input::Profile(cubex) => (None, Some(cubex)),
    };
    let profile = match profile {
        Some(path) => Some((cube_profile::open(&path).map_err(Failure::Error)?, path)),
        None => None,
    };
    match (trace, profile) {
        (Some(anchor), profile) => view_trace(args, &anchor, profile.as_ref()),
        (None, Some(profile)) => view_profile(args, &profile),
        (None, None) => Err(Failure::Error("nothing to view".into())),
    }
}

/// The page of a profile alone: the per-region table and the call tree.
fn view_profile(args: &ViewArgs, (read, path): &(CubeProfile, PathBuf)) -> Result<(), Failure> {
    let output = trace_definitions::output_path(path, &args.output, "html");
    let detail = Detail::for_trace(&read.defs);
    let page = render_page(
        &path.display().to_string(),
        &read.defs,
        &detail,
        &read.profile,
        &[],
        Some(read),
    );
    std::fs::write(&output, page)
        .map_err(|e| Failure::Error(format!("cannot write {}: {e}", output.display())))?;
    eprintln!(
        "pomptrace: wrote {} (call tree of {} call paths on {} threads)",
        escape_controls(&output.display().to_string()),
        read.cube.cnodes.len(),
        read.defs.locations.len()
    );
    Ok(())
}

fn view_trace(
    args: &ViewArgs,
    anchor: &Path,
    profile_beside: Option<&(CubeProfile, PathBuf)>,
) -> Result<(), Failure> {
    let output = trace_definitions::output_path(anchor, &args.output, "html");
    let (reader, defs) = trace_definitions::open(anchor).map_err(Failure::Error)?;
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

    let page = render_page(
        &anchor.display().to_string(),
        &defs,
        &detail,
        &profile,
        &lanes,
        profile_beside.map(|(read, _)| read),
    );
    std::fs::write(&output, page)
        .map_err(|e| Failure::Error(format!("cannot write {}: {e}", output.display())))?;
    for note in defs.notes.iter().chain(&profile.damage.warnings()) {
        eprintln!("pomptrace: warning: {}", escape_controls(note));
    }
    let bars: usize = lanes.iter().map(|l| l.bars.len()).sum();
    let cells: usize = lanes.iter().map(|l| l.cells.len()).sum();
    eprintln!(
        "pomptrace: wrote {} ({} lanes, {bars} bars{}{})",
        escape_controls(&output.display().to_string()),
        lanes.len(),
        if detail.aggregated {
            format!(", {cells} aggregated cells")
        } else {
            String::new()
        },
        match profile_beside {
            Some((read, _)) => format!(", call tree of {} call paths", read.cube.cnodes.len()),
            None => String::new(),
        }
    );
    Ok(())
}

/// How much detail the page gets.
struct Detail {
    /// Whether short visits are summed into cells (the trace has more visits than
    /// `ITEM_BUDGET`).
    aggregated: bool,
    /// Bars and cells each lane may keep; a lane over it doubles its bucket width.
    items_per_lane: usize,
    /// The first bucket width in ticks, finer than the budget allows on a busy lane.
    first_bucket: u64,
    /// Whether marks are thinned to one per lane, kind and bucket.
    thin_marks: bool,
    origin: u64,
    ticks_per_ns: f64,
}

impl Detail {
    fn for_trace(defs: &TraceDefinitions) -> Self {
        let events = defs.total_events();
        let lanes = defs.locations.len().max(1) as u64;
        let aggregated = events / 2 > ITEM_BUDGET;
        let items_per_lane = (ITEM_BUDGET / lanes).max(1000);
        Self {
            aggregated,
            items_per_lane: items_per_lane as usize,
            first_bucket: (defs.trace_length / (4 * items_per_lane)).max(1),
            thin_marks: aggregated && events / 4 > MARK_BUDGET,
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

/// Visits shorter than a bucket on one depth of a lane, summed.
#[derive(Clone)]
struct Cell {
    depth: usize,
    /// Index of the bucket: it starts at origin + bucket × the lane's bucket width.
    bucket: u64,
    count: u64,
    busy_by_kind: [u64; ConstructKind::ALL.len()],
}

impl Cell {
    fn new(depth: usize, bucket: u64) -> Self {
        Self {
            depth,
            bucket,
            count: 0,
            busy_by_kind: [0; ConstructKind::ALL.len()],
        }
    }

    fn add(&mut self, other: &Cell) {
        self.count += other.count;
        for (mine, theirs) in self.busy_by_kind.iter_mut().zip(other.busy_by_kind) {
            *mine += theirs;
        }
    }
}

/// One visit drawn as it is (ticks).
#[derive(Clone, Copy)]
struct Bar {
    start: u64,
    duration: u64,
    region: u32,
    depth: usize,
}

/// One lane of the page.
#[derive(Default)]
struct Lane {
    bars: Vec<Bar>,
    cells: Vec<Cell>,
    /// Bucket width of the cells in ticks (0 while nothing is aggregated).
    bucket: u64,
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
            lane: Lane {
                bucket: if detail.aggregated {
                    detail.first_bucket
                } else {
                    0
                },
                ..Lane::default()
            },
            open_cells: Vec::new(),
            last_mark_bucket: HashMap::new(),
        }
    }

    fn kind_of(&self, region: u32) -> usize {
        kind_index(
            self.defs
                .region(region)
                .map_or(ConstructKind::Other, |r| r.kind),
        )
    }

    fn close_open_cells(&mut self) {
        let open = std::mem::take(&mut self.open_cells);
        self.lane.cells.extend(open.into_iter().flatten());
    }

    /// Doubles the bucket width until the lane is within its budget: bars now shorter than a
    /// bucket become cells, cells of neighbouring buckets merge.
    fn coarsen(&mut self) {
        self.close_open_cells();
        while self.lane.bars.len() + self.lane.cells.len() > self.detail.items_per_lane {
            let width = self.lane.bucket * 2;
            self.lane.bucket = width;
            for cell in &mut self.lane.cells {
                cell.bucket /= 2;
            }
            let origin = self.detail.origin;
            let (keep, fold): (Vec<Bar>, Vec<Bar>) = std::mem::take(&mut self.lane.bars)
                .into_iter()
                .partition(|bar| bar.duration >= width);
            self.lane.bars = keep;
            for bar in fold {
                let mut cell = Cell::new(bar.depth, bar.start.saturating_sub(origin) / width);
                cell.count = 1;
                cell.busy_by_kind[self.kind_of(bar.region)] = bar.duration;
                self.lane.cells.push(cell);
            }
            merge_cells(&mut self.lane.cells);
        }
    }

    fn finish(mut self) -> Lane {
        self.close_open_cells();
        merge_cells(&mut self.lane.cells);
        self.lane
    }
}

/// Sorts cells by depth and bucket and sums those of the same bucket.
fn merge_cells(cells: &mut Vec<Cell>) {
    cells.sort_by_key(|c| (c.depth, c.bucket));
    let mut merged: Vec<Cell> = Vec::with_capacity(cells.len());
    for cell in cells.drain(..) {
        match merged.last_mut() {
            Some(last) if last.depth == cell.depth && last.bucket == cell.bucket => last.add(&cell),
            _ => merged.push(cell),
        }
    }
    *cells = merged;
}

impl VisitSink for LaneSink<'_> {
    fn visit(&mut self, visit: Visit) {
        self.lane.max_depth = self.lane.max_depth.max(visit.depth);
        let duration = visit.end.saturating_sub(visit.start);
        let width = self.lane.bucket;
        if width == 0 || duration >= width {
            self.lane.bars.push(Bar {
                start: visit.start,
                duration,
                region: visit.region,
                depth: visit.depth,
            });
        } else {
            let bucket = visit.start.saturating_sub(self.detail.origin) / width;
            if self.open_cells.len() <= visit.depth {
                self.open_cells.resize(visit.depth + 1, None);
            }
            let slot = &mut self.open_cells[visit.depth];
            if slot.as_ref().is_some_and(|c| c.bucket != bucket) {
                self.lane.cells.extend(slot.take());
            }
            let kind = self.kind_of(visit.region);
            let cell = self.open_cells[visit.depth].get_or_insert(Cell::new(visit.depth, bucket));
            cell.count += 1;
            cell.busy_by_kind[kind] += duration;
        }
        if width > 0 && self.lane.bars.len() + self.lane.cells.len() > self.detail.items_per_lane {
            self.coarsen();
        }
    }

    fn mark(&mut self, mark: Mark) {
        let kind = MarkKind::ALL
            .iter()
            .position(|k| *k == mark.kind)
            .unwrap_or(0);
        if self.detail.thin_marks {
            let bucket = mark.time.saturating_sub(self.detail.origin) / self.lane.bucket.max(1);
            if self.last_mark_bucket.insert(kind, bucket) == Some(bucket) {
                return;
            }
        }
        self.lane
            .marks
            .extend([self.detail.ns(mark.time), kind as u64, mark.id]);
    }
}

impl Lane {
    /// start ns, duration ns, region id, depth
    fn bar_numbers(&self, detail: &Detail) -> Vec<u64> {
        self.bars
            .iter()
            .flat_map(|b| {
                [
                    detail.ns(b.start),
                    detail.ns_duration(b.duration),
                    u64::from(b.region),
                    b.depth as u64,
                ]
            })
            .collect()
    }

    /// start ns, width ns, dominant kind, depth, visits, busy ns
    fn cell_numbers(&self, detail: &Detail) -> Vec<u64> {
        self.cells
            .iter()
            .flat_map(|c| {
                let (kind, _) = c
                    .busy_by_kind
                    .iter()
                    .enumerate()
                    .max_by_key(|(_, busy)| **busy)
                    .unwrap_or((0, &0));
                let busy: u64 = c.busy_by_kind.iter().sum();
                [
                    detail.ns(detail.origin + c.bucket * self.bucket),
                    detail.ns_duration(self.bucket),
                    kind as u64,
                    c.depth as u64,
                    c.count,
                    detail.ns_duration(busy),
                ]
            })
            .collect()
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

/// The call tree of a profile for the page: its regions (name, kind, source) and per call
/// path its parent (-1 for a root), region, and over threads its visits, inclusive and
/// exclusive time in ms and the threads that visited it; children by inclusive time.
fn call_tree(read: &CubeProfile) -> serde_json::Value {
    let cube = &read.cube;
    let width = read.defs.locations.len();
    let ms = |ticks: u128| ticks as f64 / read.defs.ticks_per_second * 1000.0;
    let regions: Vec<serde_json::Value> = (0..cube.regions.len())
        .map(|r| {
            let info = &read.defs.regions[&(r as u32)];
            let source = if info.file.is_empty() {
                String::new()
            } else {
                format!("{}:{}", info.file, info.line)
            };
            json!([info.name, kind_index(info.kind), source])
        })
        .collect();
    let mut nodes = Vec::with_capacity(cube.cnodes.len());
    for (c, cnode) in cube.cnodes.iter().enumerate() {
        let row = c * width..(c + 1) * width;
        let visits: u64 = read.visits[row.clone()].iter().sum();
        let inclusive: u128 = read.inclusive[row.clone()].iter().sum();
        let exclusive: u128 = read.exclusive[row.clone()].iter().sum();
        let threads = read.visits[row].iter().filter(|&&v| v > 0).count();
        nodes.push(json!([
            cnode.parent.map_or(-1, |p| p as i64),
            cnode.region,
            visits,
            ms(inclusive),
            ms(exclusive),
            threads
        ]));
    }
    json!({
        "threads": width,
        "regions": regions,
        "nodes": nodes,
    })
}

fn render_page(
    title: &str,
    defs: &TraceDefinitions,
    detail: &Detail,
    profile: &Profile,
    lanes: &[Lane],
    cube: Option<&CubeProfile>,
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
    // The last event, or the end of the last (aggregated) cell if that is later.
    let end_ns = lanes
        .iter()
        .flat_map(|l| {
            l.cells
                .iter()
                .map(|c| detail.origin + (c.bucket + 1) * l.bucket)
        })
        .chain(profile.last_time)
        .map(|t| detail.ns(t))
        .max()
        .unwrap_or(0);
    let start_ns = profile.first_time.map_or(0, |t| detail.ns(t));
    let mut warnings = defs.notes.clone();
    warnings.extend(profile.damage.warnings());
    let data = json!({
        "title": title,
        "events": profile.events,
        "callPaths": cube.map(|c| c.cube.cnodes.len()),
        "callTree": cube.map(call_tree),
        "start": start_ns,
        "end": end_ns.max(start_ns + 1),
        "aggregated": detail.aggregated,
        "bucket": detail.ns_duration(lanes.iter().map(|l| l.bucket).min().unwrap_or(0)),
        "coarsestBucket": detail.ns_duration(lanes.iter().map(|l| l.bucket).max().unwrap_or(0)),
        "thinnedMarks": detail.thin_marks,
        "headline": profile.headline(),
        "warnings": warnings,
        "kinds": ConstructKind::ALL.iter().map(|k| json!([k.label(), kind_colour(*k)])).collect::<Vec<_>>(),
        "markKinds": MarkKind::ALL.iter().map(|k| json!([k.label(), mark_colour(*k)])).collect::<Vec<_>>(),
        "regions": regions,
        "profile": profile_rows,
    });
    // Inside <script>, "</script" ends the element, and "<!--" followed by "<script" keeps
    // the real end tag from ending it (the page is then blank): every "<" is written as
    // "\u003c". In JSON a "<" can only be inside a string, where the escape reads the same.
    // The lanes' number arrays, by far the biggest part, go straight into the text, one lane
    // at a time, instead of through a JSON value tree.
    let mut data = data.to_string();
    data.pop(); // the object's closing brace
    data.push_str(",\"lanes\":[");
    for (index, (location, lane)) in defs.locations.iter().zip(lanes).enumerate() {
        if index > 0 {
            data.push(',');
        }
        let head = json!({
            "name": location.name,
            "group": format!("{} ({})", location.group, location.system_tree),
            "nesting": location.nesting,
            "depth": lane.max_depth + 1,
        })
        .to_string();
        data.push_str(&head[..head.len() - 1]);
        for (key, numbers) in [
            ("bars", lane.bar_numbers(detail)),
            ("cells", lane.cell_numbers(detail)),
            ("marks", lane.marks.clone()),
        ] {
            let _ = write!(data, ",\"{key}\":[");
            for (i, n) in numbers.iter().enumerate() {
                let _ = write!(data, "{}{n}", if i > 0 { "," } else { "" });
            }
            data.push(']');
        }
        data.push('}');
    }
    data.push_str("]}");
    let data = data.replace('<', "\\u003c");
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
