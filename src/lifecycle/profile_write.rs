//! The end of a profiled run: the locations' call trees (`record/profile.rs`) merged by call
//! path, a sequence of regions, into one CUBE4 profile, `DIR/profile.cubex`: one column per
//! location (thread), one row per call path, metrics `visits`, `time`, `min_time`, `max_time`
//! and the synchronous metrics, as Score-P writes them. In an MPI job each rank writes its own
//! profile as its part in `DIR/ranks/` and the last rank merges them (`otf2::profile_unify`).
//!
//! Every call path starts at the program's own root, as Score-P's do (CUBE readers such as
//! pycubexr want one root): the initial thread visits it once, for the whole measurement.
//! Merging never compares pointers: a node becomes its call path, and a thread start (a team
//! member's tree) becomes the call path of the construct that forked it, resolved in the
//! forking location's tree. On a location, a call path it did not visit itself but that leads
//! to paths it did (the fork's call path on a team member) gets the sums of its children: zero
//! visits, the time below it (Score-P's expansion of thread starts).

use std::collections::{BTreeMap, HashMap};

use crate::base::diagnostics::warn;
use crate::lifecycle::measurement::Measurement;
use crate::metrics::synchronous::Metric;
use crate::output::facts::RegionDef;
use crate::output::registry::REGISTRY;
use crate::record::profile::{Kind, Profile, NONE};

/// The region id of the program's root call path (never a real region's id).
const PROGRAM_REGION: u32 = u32::MAX - 2;
/// The program's root call path, the first.
const PROGRAM: usize = 0;
use otf2::profile_unify::{self, PROFILE_FILE};
use otf2::{cube, Directory};

/// One location's profile as the end of the run hands it over.
pub(crate) struct LocationProfile {
    pub number: u32,
    pub name: String,
    /// None: the location was still busy at the end (its column stays empty).
    pub profile: Option<Profile>,
}

/// Sums of one call path on one location.
#[derive(Clone, Debug, PartialEq)]
struct Stats {
    visits: u64,
    ticks: u64,
    /// Shortest and longest visit (u64::MAX and 0 without one).
    min: u64,
    max: u64,
    metrics: Vec<u64>,
    /// Visited by the location itself (not only the sum of its children).
    measured: bool,
    /// Its metrics were read at its Enters and Leaves (the program's root, visited for the
    /// whole measurement, has no reading: it takes its children's sums).
    metrics_measured: bool,
}

impl Stats {
    fn empty(metrics: usize, measured: bool) -> Self {
        Self {
            visits: 0,
            ticks: 0,
            min: u64::MAX,
            max: 0,
            metrics: vec![0; metrics],
            measured,
            metrics_measured: measured,
        }
    }

    /// Adds `other`'s visits and inclusive sums.
    fn add(&mut self, other: &Stats) {
        self.visits += other.visits;
        self.ticks += other.ticks;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        for (sum, value) in self.metrics.iter_mut().zip(&other.metrics) {
            *sum = sum.wrapping_add(*value);
        }
    }
}

/// The call paths of all locations, merged.
#[derive(Debug, Default)]
struct Merged {
    /// (parent, region id: the registry's, or `PROGRAM_REGION`), parents first.
    cnodes: Vec<(Option<usize>, u32)>,
    index: HashMap<(Option<usize>, u32), usize>,
    /// Per location (in the order given), its sums per call path.
    values: Vec<BTreeMap<usize, Stats>>,
}

impl Merged {
    fn new() -> Self {
        let mut merged = Merged::default();
        merged.intern(None, PROGRAM_REGION);
        merged
    }

    fn intern(&mut self, parent: Option<usize>, region: u32) -> usize {
        if let Some(&c) = self.index.get(&(parent, region)) {
            return c;
        }
        let c = self.cnodes.len();
        self.cnodes.push((parent, region));
        self.index.insert((parent, region), c);
        c
    }
}

/// Resolves nodes of the locations' trees to merged call paths (a root's parent is the
/// program's root), remembering each.
struct Resolver<'a> {
    /// Location number -> its position in `locations`.
    by_number: HashMap<u32, usize>,
    locations: &'a [LocationProfile],
    memo: HashMap<(usize, u32), usize>,
}

/// Thread starts refer to other locations' nodes, which may be thread starts again; a longer
/// chain than this is a cycle (which a run cannot produce) and resolves to the root.
const MAX_CHAIN: usize = 1 << 16;

impl Resolver<'_> {
    fn resolve(&mut self, merged: &mut Merged, location: usize, node: u32) -> usize {
        // Walk up to a node already resolved (or the root), then resolve back down.
        let mut pending: Vec<(usize, u32)> = Vec::new();
        let (mut l, mut n) = (location, node);
        let mut resolved = loop {
            if n == NONE || pending.len() > MAX_CHAIN {
                break PROGRAM;
            }
            if let Some(&known) = self.memo.get(&(l, n)) {
                break known;
            }
            let Some(profile) = self.locations[l].profile.as_ref() else {
                break PROGRAM;
            };
            let Some(current) = profile.nodes().get(n as usize) else {
                break PROGRAM;
            };
            pending.push((l, n));
            match current.kind {
                Kind::Region => n = current.parent,
                Kind::ThreadStart => {
                    let fork = profile.thread_start_path(current.region);
                    match fork.and_then(|p| Some((*self.by_number.get(&((p >> 32) as u32))?, p))) {
                        Some((forking, path)) => (l, n) = (forking, path as u32),
                        None => n = NONE,
                    }
                }
            }
        };
        while let Some((l, n)) = pending.pop() {
            let profile = self.locations[l].profile.as_ref().expect("walked above");
            let current = profile.nodes()[n as usize];
            resolved = match current.kind {
                Kind::Region => merged.intern(Some(resolved), current.region),
                Kind::ThreadStart => resolved,
            };
            self.memo.insert((l, n), resolved);
        }
        resolved
    }
}

/// Merges the locations' trees (see the module documentation); `program`: the location that
/// visited the program's root and for how long (ticks).
fn merge(locations: &[LocationProfile], metrics: usize, program: Option<(u32, u64)>) -> Merged {
    let mut merged = Merged::new();
    let mut resolver = Resolver {
        by_number: locations
            .iter()
            .enumerate()
            .map(|(i, l)| (l.number, i))
            .collect(),
        locations,
        memo: HashMap::new(),
    };
    for (l, location) in locations.iter().enumerate() {
        let mut values: BTreeMap<usize, Stats> = BTreeMap::new();
        if let Some((_, ticks)) = program.filter(|&(number, _)| number == location.number) {
            values.insert(
                PROGRAM,
                Stats {
                    visits: 1,
                    ticks,
                    min: ticks,
                    max: ticks,
                    metrics_measured: false,
                    ..Stats::empty(metrics, true)
                },
            );
        }
        if let Some(profile) = &location.profile {
            for (n, node) in profile.nodes().iter().enumerate() {
                // A region never left (still open when a run was killed) has no visit of
                // its own: it gets its children's sums like a path only passed through.
                if node.kind != Kind::Region || node.visits == 0 {
                    continue;
                }
                let c = resolver.resolve(&mut merged, l, n as u32);
                let own = Stats {
                    visits: node.visits,
                    ticks: node.time,
                    min: node.min,
                    max: node.max,
                    metrics: profile.node_metrics(n).to_vec(),
                    measured: true,
                    metrics_measured: true,
                };
                values
                    .entry(c)
                    .or_insert_with(|| Stats::empty(metrics, true))
                    .add(&own);
            }
        }
        // Children before parents (a call path's id is above its parent's): each path not
        // visited here takes the sums of its children.
        let mut cursor = usize::MAX;
        while let Some((&c, stats)) = values.range(..cursor).next_back() {
            cursor = c;
            let Some(parent) = merged.cnodes[c].0 else {
                continue;
            };
            let stats = Stats {
                visits: 0,
                ..stats.clone()
            };
            let slot = values
                .entry(parent)
                .or_insert_with(|| Stats::empty(metrics, false));
            if !slot.measured {
                slot.add(&stats);
            } else if !slot.metrics_measured {
                for (sum, value) in slot.metrics.iter_mut().zip(&stats.metrics) {
                    *sum = sum.wrapping_add(*value);
                }
            }
        }
        merged.values.push(values);
    }
    merged
}

/// What a CUBE profile needs beside the call trees.
pub(crate) struct ProfileContext<'a> {
    /// The registry's regions and strings.
    pub regions: &'a [RegionDef],
    pub strings: &'a [String],
    pub metrics: &'a [&'static Metric],
    /// Clock ticks per second.
    pub resolution: u64,
    pub hostname: &'a str,
    /// This process's rank in an MPI job.
    pub rank: Option<u32>,
    pub creator: &'a str,
    /// The program's name (its root call path's region) and the measurement's length in
    /// ticks (its time, on the initial thread).
    pub program: &'a str,
    pub program_ticks: u64,
}

/// The merged profile of this process as CUBE data.
fn to_cube(
    locations: &[LocationProfile],
    merged: &Merged,
    context: &ProfileContext,
) -> cube::Profile {
    let string = |id: u32| {
        context
            .strings
            .get(id as usize)
            .cloned()
            .unwrap_or_default()
    };
    // Only the regions the call tree uses, in order of first use.
    let mut region_index: HashMap<u32, usize> = HashMap::new();
    let mut regions = Vec::new();
    let mut cnodes = Vec::with_capacity(merged.cnodes.len());
    for &(parent, region) in &merged.cnodes {
        let index = *region_index.entry(region).or_insert_with(|| {
            regions.push(match context.regions.get(region as usize) {
                Some(def) if region < PROGRAM_REGION => cube::Region {
                    name: string(def.name),
                    canonical_name: string(def.name),
                    source_file: string(def.file),
                    begin_line: Some(def.begin_line),
                    end_line: Some(def.end_line),
                    paradigm: cube::cube_word(def.paradigm.name()),
                    role: cube::cube_word(def.role.name()),
                    description: String::new(),
                },
                _ if region == PROGRAM_REGION => cube::Region {
                    name: context.program.into(),
                    canonical_name: context.program.into(),
                    paradigm: "measurement".into(),
                    role: "artificial".into(),
                    ..cube::Region::default()
                },
                _ => cube::Region {
                    name: format!("region {region}"),
                    canonical_name: format!("region {region}"),
                    paradigm: "unknown".into(),
                    role: "unknown".into(),
                    ..cube::Region::default()
                },
            });
            regions.len() - 1
        });
        cnodes.push(cube::Cnode {
            region: index,
            parent,
            line: None,
        });
    }
    let mut metrics = cube::Metric::scorep_defaults().to_vec();
    for m in context.metrics {
        metrics.push(cube::Metric {
            unique_name: cube::unique_name(m.member.name),
            display_name: m.member.name.into(),
            unit: m.member.unit.into(),
            description: m.member.description.into(),
            data_type: cube::DataType::U64,
            kind: cube::MetricKind::Inclusive,
            parent: None,
        });
    }
    let rows = merged.cnodes.len();
    let columns = locations.len();
    let seconds = |ticks: u64| ticks as f64 / context.resolution.max(1) as f64;
    let mut visits = vec![0u64; rows * columns];
    let mut time = vec![0f64; rows * columns];
    let mut min = vec![0f64; rows * columns];
    let mut max = vec![0f64; rows * columns];
    let mut sums = vec![vec![0u64; rows * columns]; context.metrics.len()];
    for (l, values) in merged.values.iter().enumerate() {
        for (&c, stats) in values {
            let at = c * columns + l;
            visits[at] = stats.visits;
            time[at] = seconds(stats.ticks);
            if stats.min != u64::MAX {
                min[at] = seconds(stats.min);
                max[at] = seconds(stats.max);
            }
            for (column, value) in sums.iter_mut().zip(&stats.metrics) {
                column[at] = *value;
            }
        }
    }
    let mut values = vec![
        cube::Values::U64(visits),
        cube::Values::F64(time),
        cube::Values::F64(min),
        cube::Values::F64(max),
    ];
    values.extend(sums.into_iter().map(cube::Values::U64));
    let group = cube::LocationGroup {
        name: match context.rank {
            Some(rank) => format!("MPI Rank {rank}"),
            None => "Process".into(),
        },
        rank: context.rank.unwrap_or(0),
        kind: cube::LocationGroupKind::Process,
        locations: locations
            .iter()
            .map(|l| cube::Location {
                name: l.name.clone(),
                rank: l.number,
                kind: cube::LocationKind::Thread,
            })
            .collect(),
    };
    cube::Profile {
        attributes: vec![
            ("Creator".into(), context.creator.into()),
            ("CUBE_CT_AGGR".into(), "SUM".into()),
        ],
        metrics,
        regions,
        cnodes,
        system: vec![cube::SystemNode {
            name: "machine Linux".into(),
            class: "machine".into(),
            children: vec![cube::SystemNode {
                name: format!("node {}", context.hostname),
                class: "node".into(),
                groups: vec![group],
                ..cube::SystemNode::default()
            }],
            ..cube::SystemNode::default()
        }],
        values,
    }
}

/// This process's profile as CUBE data: its locations' trees merged (see the module
/// documentation); the number of call paths and of visits folded by the caps come along.
pub(crate) fn build(
    locations: &[LocationProfile],
    context: &ProfileContext,
) -> (cube::Profile, Folds) {
    let merged = merge(
        locations,
        context.metrics.len(),
        Some((0, context.program_ticks)),
    );
    let mut folds = Folds::default();
    for l in locations {
        if let Some(p) = &l.profile {
            let f = p.folded();
            folds.depth += f.depth;
            folds.nodes += f.nodes;
            folds.locations_at_node_cap += u32::from(f.nodes > 0);
        }
    }
    (to_cube(locations, &merged, context), folds)
}

/// Visits the caps folded into an ancestor, over all locations.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Folds {
    pub depth: u64,
    pub nodes: u64,
    pub locations_at_node_cap: u32,
}

/// The one line that says the caps were reached (None when they were not).
pub(crate) fn folds_message(folds: Folds, max_depth: u32, max_nodes: u32) -> Option<String> {
    let mut parts = Vec::new();
    if folds.depth > 0 {
        parts.push(format!(
            "{} visits deeper than {max_depth} regions (POMPTRACE_PROFILE_MAX_DEPTH)",
            folds.depth
        ));
    }
    if folds.nodes > 0 {
        parts.push(format!(
            "{} visits of new call paths on {} thread(s) that already had {max_nodes} \
             (POMPTRACE_PROFILE_MAX_NODES)",
            folds.nodes, folds.locations_at_node_cap
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "the profile counts {} in their nearest kept caller; raise the limit to see them",
            parts.join(" and ")
        )
    })
}

/// Writes `profile` as `name` in `dir`; the error says where and why.
fn write(profile: &cube::Profile, dir: &Directory, name: &str) -> Result<(), String> {
    profile
        .write_in(dir, name)
        .map_err(|e| format!("cannot write the profile {}: {e}", dir.join(name).display()))
}

/// The marker the rank that merges the job's profile creates (the first to create it).
const UNIFIER_MARKER: &str = ".profile-unifier";

/// Writes the profile of this process from its locations' `profiles`: `DIR/profile.cubex`, or
/// in an MPI job this rank's part, and the job's profile once every rank's part is there (the
/// rank that sees that first merges). `resolution`: clock ticks per second; `end_time`: the
/// measurement's end. Returns the summary line's part about the profile.
pub(crate) fn write_profile(
    m: &Measurement,
    profiles: &[LocationProfile],
    resolution: u64,
    end_time: u64,
) -> Result<String, String> {
    let hostname = crate::lifecycle::measurement::hostname();
    let creator = format!("pomptrace {}", env!("CARGO_PKG_VERSION"));
    let registry = REGISTRY.lock();
    let context = ProfileContext {
        regions: registry.regions(),
        strings: registry.strings(),
        metrics: crate::metrics::synchronous::selected(),
        resolution,
        hostname: &hostname,
        rank: m.job.as_ref().map(|job| job.rank),
        creator: &creator,
        program: &crate::lifecycle::measurement::program_name(),
        program_ticks: end_time.saturating_sub(m.start.ticks),
    };
    let (mut profile, folds) = build(profiles, &context);
    drop(registry);
    if let Some(message) = folds_message(
        folds,
        m.config.profile_max_depth,
        m.config.profile_max_nodes,
    ) {
        warn(&message);
    }
    let call_paths = profile.cnodes.len();
    let experiment =
        Directory::open(&m.experiment_dir).map_err(|e| format!("cannot write the profile: {e}"))?;
    let Some(job) = &m.job else {
        write(&profile, &experiment, PROFILE_FILE)?;
        return Ok(format!(
            "profile written to {} ({call_paths} call paths, {} threads)",
            experiment.join(PROFILE_FILE).display(),
            profiles.len()
        ));
    };
    let parts = experiment
        .subdirectory(otf2::unify::PARTS_DIR, 0o777)
        .map_err(|e| {
            let parts_dir = experiment.join(otf2::unify::PARTS_DIR);
            format!("cannot create {}: {e}", parts_dir.display())
        })?;
    let parts_dir = parts.path();
    profile
        .attributes
        .push((profile_unify::PARTS_ATTRIBUTE.into(), job.size.to_string()));
    profile
        .attributes
        .push((profile_unify::PART_ATTRIBUTE.into(), job.rank.to_string()));
    write(&profile, &parts, &profile_unify::part_name(job.rank))?;
    let elected = || parts.create_new_file(UNIFIER_MARKER).is_ok();
    if !profile_unify::all_parts_written(parts_dir, job.size) || !elected() {
        return Ok(format!(
            "rank {} of {} wrote its part of the profile",
            job.rank, job.size
        ));
    }
    let summary = profile_unify::unify_directory(&m.experiment_dir, parts_dir, true)?;
    Ok(format!(
        "profile of {} ranks written to {} ({} call paths, {} threads)",
        summary.parts,
        summary.profile.display(),
        summary.call_paths,
        summary.locations
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(number: u32, profile: Profile) -> LocationProfile {
        LocationProfile {
            number,
            name: format!("thread {number}"),
            profile: Some(profile),
        }
    }

    /// (path of regions, location position, visits, ticks) of every entry.
    fn entries(merged: &Merged) -> Vec<(Vec<u32>, usize, u64, u64)> {
        let path = |mut c: usize| {
            let mut p = vec![merged.cnodes[c].1];
            while let Some(parent) = merged.cnodes[c].0 {
                p.push(merged.cnodes[parent].1);
                c = parent;
            }
            p.reverse();
            p
        };
        let mut out = Vec::new();
        for (l, values) in merged.values.iter().enumerate() {
            for (&c, s) in values {
                out.push((path(c), l, s.visits, s.ticks));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn workers_hang_under_the_fork_and_their_callers_get_their_time() {
        // The master (location 0) enters 1 and forks inside it; the worker (location 1) runs
        // the parallel region 2 under that call path, twice.
        let mut master = Profile::new(100, 10, 0);
        master.enter(0, 1, &[]);
        // Location 0 forks: its number is the high half of the path.
        let fork = u64::from(master.current_path());
        master.enter(10, 2, &[]);
        master.leave(20, &[]);
        master.leave(30, &[]);
        let mut worker = Profile::new(100, 10, 0);
        for (from, to) in [(11, 18), (21, 25)] {
            worker.thread_start(fork);
            worker.enter(from, 2, &[]);
            worker.leave(to, &[]);
        }
        let merged = merge(
            &[location(0, master), location(1, worker)],
            0,
            Some((0, 40)),
        );
        let p = PROGRAM_REGION;
        assert_eq!(
            entries(&merged),
            [
                (vec![p], 0, 1, 40),
                (vec![p], 1, 0, 7 + 4),
                (vec![p, 1], 0, 1, 30),
                // The worker never entered 1: no visit, the time below it.
                (vec![p, 1], 1, 0, 7 + 4),
                (vec![p, 1, 2], 0, 1, 10),
                (vec![p, 1, 2], 1, 2, 11),
            ]
        );
    }

    #[test]
    fn task_trees_hang_where_they_ran_and_a_nested_fork_resolves_through_its_forker() {
        let mut master = Profile::new(100, 10, 0);
        master.enter(0, 1, &[]);
        let outer = u64::from(master.current_path());
        // Location 1 works under the outer fork, and forks an inner team from region 3.
        let mut middle = Profile::new(100, 10, 0);
        middle.thread_start(outer);
        middle.enter(1, 3, &[]);
        let inner = (1u64 << 32) | u64::from(middle.current_path());
        middle.begin_task(2, 5, &[]);
        middle.leave(4, &[]);
        middle.leave(9, &[]);
        let mut leaf = Profile::new(100, 10, 0);
        leaf.thread_start(inner);
        leaf.enter(3, 4, &[]);
        leaf.leave(6, &[]);
        master.leave(10, &[]);
        let merged = merge(
            &[location(0, master), location(1, middle), location(2, leaf)],
            0,
            None,
        );
        let p = PROGRAM_REGION;
        assert_eq!(
            entries(&merged),
            [
                (vec![p], 0, 0, 10),
                (vec![p], 1, 0, 8),
                (vec![p], 2, 0, 3),
                (vec![p, 1], 0, 1, 10),
                (vec![p, 1], 1, 0, 8),
                (vec![p, 1], 2, 0, 3),
                (vec![p, 1, 3], 1, 1, 8),
                (vec![p, 1, 3], 2, 0, 3),
                (vec![p, 1, 3, 4], 2, 1, 3),
                // The task, where the implicit task ran it.
                (vec![p, 1, 3, 5], 1, 1, 2),
            ]
        );
    }

    #[test]
    fn the_fold_message_names_the_settings() {
        assert_eq!(folds_message(Folds::default(), 128, 65536), None);
        let m = folds_message(
            Folds {
                depth: 3,
                nodes: 5,
                locations_at_node_cap: 1,
            },
            128,
            65536,
        )
        .unwrap();
        assert!(m.contains("3 visits deeper than 128 regions (POMPTRACE_PROFILE_MAX_DEPTH)"));
        assert!(m.contains("POMPTRACE_PROFILE_MAX_NODES"), "{m}");
    }
}
