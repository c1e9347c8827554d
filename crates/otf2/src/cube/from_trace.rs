//! A call-path profile rebuilt from an OTF2 trace: every location's Enter and Leave records
//! replayed into call paths, merged over locations, as a [`Profile`] with Score-P's metrics
//! (`visits`, `time`, `min_time`, `max_time`) and the trace's synchronous metric class.
//!
//! The rules are those of pomptrace's own profile (the runtime's call trees), stated in OTF2
//! terms so that a profile from a trace and one measured with it agree call path by call path:
//!
//! - Every call path starts at the program's root, named after the ProgramBegin's program (its
//!   file name). A location with a ProgramBegin visits the root once, until its ProgramEnd (or,
//!   in a trace that never ended, the last event of the trace).
//! - A location's regions nest as its Enter and Leave records do; a Leave ends the innermost
//!   open region. Regions still open at the end of a location are left at its last event.
//! - Thread teams: the first member of a team's group (its thread 0) records, at its `k`-th
//!   ThreadTeamBegin of the team, the call path it is in (the path of the construct that
//!   forked the team). Another member that has nothing open at its own `k`-th ThreadTeamBegin
//!   of that team records what follows under that path.
//! - Tasks: the Enter of a region whose role is `TASK` or `TASK_UNTIED` begins a task. Its path
//!   starts under the path of the location's implicit task of the innermost team (the task the
//!   location ran at that team's ThreadTeamBegin), never under another explicit task, so
//!   recursive tasks add no call paths. An explicit task running when another begins is
//!   suspended until the new one's region is left: its open regions stop counting time (and
//!   metrics) meanwhile, so a task counts only the time it ran.
//! - A call path a location did not visit itself but that leads to paths it did (the forking
//!   construct's path on a team member) gets, on that location, no visits and the sums of its
//!   children, as in Score-P's profiles.
//!
//! Times are the trace's clock ticks over its resolution, in seconds, like Score-P's `time`.
//! Memory follows the call paths and the open regions, not the number of events: locations
//! are replayed one at a time, each team's thread 0 before the team's other members.

use std::collections::HashMap;

use super::model::{
    Cnode, DataType, Location, LocationGroup, LocationGroupKind, LocationKind, Metric, MetricKind,
    Profile, Region, SystemNode, Values,
};
use crate::reader::{ArchiveReader, ReadResult};
use crate::records::{Event, GlobalDef};
use crate::types::{
    GroupType, LocationGroupType, LocationType, MetricOccurrence, Paradigm, RegionRole,
    UNDEFINED_U32,
};

/// The region id the program's root stands for (no OTF2 region has it: it means undefined).
const PROGRAM_REGION: u32 = UNDEFINED_U32;
/// The program's root: the first call path.
const PROGRAM: usize = 0;
/// The root's name when the trace has no ProgramBegin.
const UNNAMED_PROGRAM: &str = "program";

/// The profile of a trace, and what the replay found wrong with the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct FromTrace {
    pub profile: Profile,
    pub damage: ReplayDamage,
}

/// Records the replay had to make sense of; all zero for a trace of a run that ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayDamage {
    /// Leave records with no region open on their location (ignored).
    pub unmatched_leaves: u64,
    /// Leave records of another region than the innermost open one (which they left).
    pub misnested_leaves: u64,
    /// Regions still open at the end of their location (left at its last event).
    pub open_at_end: u64,
    /// ThreadTeamBegin records of team members whose thread 0 had no matching team begin
    /// (what followed was recorded under the program's root).
    pub unmatched_team_begins: u64,
}

impl ReplayDamage {
    /// One sentence per kind of damage found.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut say = |n: u64, what: &str| {
            if n > 0 {
                out.push(format!("{n} {what}"));
            }
        };
        say(
            self.unmatched_leaves,
            "Leave record(s) without an open region (ignored)",
        );
        say(
            self.misnested_leaves,
            "Leave record(s) of another region than the innermost open one (which they left)",
        );
        say(
            self.open_at_end,
            "region visit(s) never left (counted up to the last event of their location)",
        );
        say(
            self.unmatched_team_begins,
            "team begin(s) without the matching begin of the team's thread 0 (counted under \
             the program's root)",
        );
        out
    }
}

/// Reads every location of `reader`'s trace and builds its call-path profile; `creator` goes
/// into the profile's `Creator` attribute.
pub fn from_trace(reader: &ArchiveReader, creator: &str) -> ReadResult<FromTrace> {
    let model = TraceModel::new(&reader.global_defs()?);
    let mut builder = Builder::new(&model);
    for index in model.replay_order() {
        let location = &model.locations[index];
        let events = match reader.events(location.id) {
            Ok(events) => events,
            // A location that recorded nothing may have no event file.
            Err(_)
                if location.number_of_events == 0 && !reader.event_path(location.id).exists() =>
            {
                continue
            }
            Err(e) => return Err(e),
        };
        let mut replay = builder.location(index);
        for record in events {
            let record = record?;
            replay.event(record.time, &record.event);
        }
        replay.finish();
    }
    Ok(builder.finish(creator))
}

struct RegionDef {
    name: String,
    canonical_name: String,
    file: String,
    begin_line: u32,
    end_line: u32,
    role: RegionRole,
    paradigm: Paradigm,
}

struct LocationDef {
    id: u64,
    name: String,
    group: u32,
    number_of_events: u64,
}

struct GroupDef {
    id: u32,
    name: String,
    kind: LocationGroupKind,
    node: u32,
}

struct NodeDef {
    id: u32,
    name: String,
    class: String,
    parent: u32,
}

struct MemberDef {
    name: String,
    unit: String,
    description: String,
}

/// What the replay needs of a trace's global definitions.
pub struct TraceModel {
    strings: HashMap<u32, String>,
    /// Clock ticks per second.
    resolution: u64,
    regions: HashMap<u32, RegionDef>,
    /// Team (Comm id) → the location id of its thread 0.
    team_masters: HashMap<u32, u64>,
    /// Team → the location ids of its other members.
    team_members: HashMap<u32, Vec<u64>>,
    /// The CPU thread locations, in definition order.
    locations: Vec<LocationDef>,
    location_index: HashMap<u64, usize>,
    groups: Vec<GroupDef>,
    nodes: Vec<NodeDef>,
    /// The synchronous metric class (values with every Enter and Leave) and its members.
    metric_class: Option<u32>,
    metric_members: Vec<MemberDef>,
}

impl TraceModel {
    /// The model of the global definitions `defs`.
    pub fn new(defs: &[GlobalDef]) -> Self {
        let mut strings = HashMap::new();
        for def in defs {
            if let GlobalDef::String { id, string } = def {
                strings.insert(*id, string.clone());
            }
        }
        let string = |id: u32| strings.get(&id).cloned().unwrap_or_default();
        let mut model = TraceModel {
            strings: HashMap::new(),
            resolution: 0,
            regions: HashMap::new(),
            team_masters: HashMap::new(),
            team_members: HashMap::new(),
            locations: Vec::new(),
            location_index: HashMap::new(),
            groups: Vec::new(),
            nodes: Vec::new(),
            metric_class: None,
            metric_members: Vec::new(),
        };
        // (id, type, paradigm, members) of every group; comms by id.
        let mut groups = HashMap::new();
        let mut comms = Vec::new();
        let mut members = HashMap::new();
        let mut classes = Vec::new();
        for def in defs {
            match def {
                GlobalDef::ClockProperties {
                    timer_resolution, ..
                } => model.resolution = *timer_resolution,
                GlobalDef::Region {
                    id,
                    name,
                    canonical_name,
                    source_file,
                    begin_line,
                    end_line,
                    region_role,
                    paradigm,
                    ..
                } => {
                    let name = string(*name);
                    let canonical = strings.get(canonical_name).cloned();
                    model.regions.insert(
                        *id,
                        RegionDef {
                            canonical_name: canonical
                                .filter(|c| !c.is_empty())
                                .unwrap_or_else(|| name.clone()),
                            name,
                            file: string(*source_file),
                            begin_line: *begin_line,
                            end_line: *end_line,
                            role: *region_role,
                            paradigm: *paradigm,
                        },
                    );
                }
                GlobalDef::SystemTreeNode {
                    id,
                    name,
                    class_name,
                    parent,
                } => model.nodes.push(NodeDef {
                    id: *id,
                    name: string(*name),
                    class: string(*class_name),
                    parent: *parent,
                }),
                GlobalDef::LocationGroup {
                    id,
                    name,
                    location_group_type,
                    system_tree_parent,
                    ..
                } => model.groups.push(GroupDef {
                    id: *id,
                    name: string(*name),
                    kind: if *location_group_type == LocationGroupType::ACCELERATOR {
                        LocationGroupKind::Accelerator
                    } else {
                        LocationGroupKind::Process
                    },
                    node: *system_tree_parent,
                }),
                GlobalDef::Location {
                    id,
                    name,
                    location_type,
                    number_of_events,
                    location_group,
                } if *location_type == LocationType::CPU_THREAD => {
                    model.location_index.insert(*id, model.locations.len());
                    model.locations.push(LocationDef {
                        id: *id,
                        name: string(*name),
                        group: *location_group,
                        number_of_events: *number_of_events,
                    });
                }
                GlobalDef::Group {
                    id,
                    group_type,
                    paradigm,
                    members,
                    ..
                } => {
                    groups.insert(*id, (*group_type, *paradigm, members.clone()));
                }
                GlobalDef::Comm { id, group, .. } => comms.push((*id, *group)),
                GlobalDef::MetricMember {
                    id,
                    name,
                    description,
                    unit,
                    ..
                } => {
                    members.insert(
                        *id,
                        MemberDef {
                            name: string(*name),
                            unit: string(*unit),
                            description: string(*description),
                        },
                    );
                }
                GlobalDef::MetricClass {
                    id,
                    members,
                    occurrence,
                    ..
                } if *occurrence == MetricOccurrence::SYNCHRONOUS_STRICT => {
                    classes.push((*id, members.clone()))
                }
                _ => {}
            }
        }
        // A team's COMM_GROUP lists positions in the COMM_LOCATIONS group of its paradigm.
        for (comm, group) in comms {
            let Some((GroupType::COMM_GROUP, paradigm, positions)) = groups.get(&group) else {
                continue;
            };
            let Some((_, _, all)) = groups
                .values()
                .find(|(kind, p, _)| *kind == GroupType::COMM_LOCATIONS && p == paradigm)
            else {
                continue;
            };
            let ids: Vec<u64> = positions
                .iter()
                .filter_map(|&p| usize::try_from(p).ok().and_then(|p| all.get(p)).copied())
                .collect();
            if let Some((&first, rest)) = ids.split_first() {
                model.team_masters.insert(comm, first);
                model.team_members.insert(comm, rest.to_vec());
            }
        }
        // One synchronous class: the one the Enters and Leaves carry (pomptrace writes one).
        if let [(class, ids)] = classes.as_slice() {
            if let Some(list) = ids
                .iter()
                .map(|id| members.remove(id))
                .collect::<Option<Vec<_>>>()
            {
                model.metric_class = Some(*class);
                model.metric_members = list;
            }
        }
        model.strings = strings;
        model
    }

    /// Location indices in an order that replays every team's thread 0 before the team's other
    /// members (definition order otherwise; a cycle, which no run makes, is broken anywhere).
    pub fn replay_order(&self) -> Vec<usize> {
        let mut after: Vec<Vec<usize>> = vec![Vec::new(); self.locations.len()];
        for (team, master) in &self.team_masters {
            let Some(&m) = self.location_index.get(master) else {
                continue;
            };
            for member in self.team_members.get(team).into_iter().flatten() {
                if let Some(&l) = self.location_index.get(member) {
                    if l != m {
                        after[l].push(m);
                    }
                }
            }
        }
        let mut state = vec![0u8; self.locations.len()]; // 0 new, 1 on the path, 2 done
        let mut order = Vec::with_capacity(self.locations.len());
        for start in 0..self.locations.len() {
            // Depth first without recursion: (location, next dependency to look at).
            let mut stack = vec![(start, 0usize)];
            while let Some((l, next)) = stack.pop() {
                if next == 0 {
                    if state[l] != 0 {
                        continue;
                    }
                    state[l] = 1;
                }
                match after[l].get(next) {
                    Some(&m) => {
                        stack.push((l, next + 1));
                        if state[m] == 0 {
                            stack.push((m, 0));
                        }
                    }
                    None => {
                        state[l] = 2;
                        order.push(l);
                    }
                }
            }
        }
        order
    }
}

/// One call path's sums on one location.
#[derive(Clone, Copy, Debug)]
struct Stat {
    visits: u64,
    ticks: u64,
    min: u64,
    max: u64,
    /// Visited by the location itself (not only the sum of its children).
    measured: bool,
    /// Has a value on the location (measured, or the sum of its children).
    present: bool,
}

const EMPTY_STAT: Stat = Stat {
    visits: 0,
    ticks: 0,
    min: u64::MAX,
    max: 0,
    measured: false,
    present: false,
};

/// One location's sums, by call path.
#[derive(Default)]
struct Column {
    stats: Vec<Stat>,
    /// The metric sums, `metrics` per call path.
    metrics: Vec<u64>,
}

/// The merged call tree and every location's sums; fed one location at a time.
pub struct Builder<'a> {
    model: &'a TraceModel,
    /// (parent, region) of every call path; the program's root first.
    cnodes: Vec<(Option<usize>, u32)>,
    index: HashMap<(usize, u32), usize>,
    /// Per team: the path its thread 0 was in at its team begins, as runs (the first instance
    /// of each run, path), and how many team begins thread 0 had.
    forks: HashMap<u32, (Vec<(u64, usize)>, u64)>,
    columns: Vec<Column>,
    program: Option<String>,
    /// (column, ProgramBegin, ProgramEnd if any).
    program_visits: Vec<(usize, u64, Option<u64>)>,
    last_time: Option<u64>,
    damage: ReplayDamage,
}

impl<'a> Builder<'a> {
    pub fn new(model: &'a TraceModel) -> Self {
        let mut index = HashMap::new();
        index.insert((usize::MAX, PROGRAM_REGION), PROGRAM);
        Builder {
            model,
            cnodes: vec![(None, PROGRAM_REGION)],
            index,
            forks: HashMap::new(),
            columns: (0..model.locations.len())
                .map(|_| Column::default())
                .collect(),
            program: None,
            program_visits: Vec::new(),
            last_time: None,
            damage: ReplayDamage::default(),
        }
    }

    /// The replay of the location at `index` (in the model's locations); its events follow in
    /// time order, then [`LocationReplay::finish`].
    pub fn location(&mut self, index: usize) -> LocationReplay<'_, 'a> {
        let metrics = self.model.metric_members.len();
        LocationReplay {
            id: self.model.locations[index].id,
            column: index,
            builder: self,
            frames: Vec::new(),
            frame_metrics: Vec::new(),
            segments: vec![Segment::default()],
            segment_metrics: vec![0; 2 * metrics],
            bases: vec![0],
            instances: HashMap::new(),
            last: 0,
            last_event: None,
            values: vec![0; metrics],
            program_begin: None,
        }
    }

    fn child(&mut self, parent: usize, region: u32) -> usize {
        let next = self.cnodes.len();
        let c = *self.index.entry((parent, region)).or_insert(next);
        if c == next {
            self.cnodes.push((Some(parent), region));
        }
        c
    }

    /// The path thread 0 of `team` was in at its team begin number `instance`.
    fn fork_path(&self, team: u32, instance: u64) -> Option<usize> {
        let (runs, count) = self.forks.get(&team)?;
        if instance >= *count {
            return None;
        }
        let run = runs.partition_point(|&(first, _)| first <= instance);
        runs.get(run.checked_sub(1)?).map(|&(_, path)| path)
    }

    fn stat(&mut self, column: usize, cnode: usize) -> &mut Stat {
        let stats = &mut self.columns[column].stats;
        if stats.len() <= cnode {
            stats.resize(cnode + 1, EMPTY_STAT);
        }
        &mut stats[cnode]
    }

    fn add_metrics(&mut self, column: usize, cnode: usize, deltas: &[u64]) {
        let n = deltas.len();
        let sums = &mut self.columns[column].metrics;
        if sums.len() < (cnode + 1) * n {
            sums.resize((cnode + 1) * n, 0);
        }
        for (sum, delta) in sums[cnode * n..(cnode + 1) * n].iter_mut().zip(deltas) {
            *sum = sum.wrapping_add(*delta);
        }
    }

    /// The profile of every location replayed.
    pub fn finish(mut self, creator: &str) -> FromTrace {
        let end = self.last_time.unwrap_or(0);
        for (column, begin, program_end) in std::mem::take(&mut self.program_visits) {
            let ticks = program_end.unwrap_or(end).saturating_sub(begin);
            let stat = self.stat(column, PROGRAM);
            stat.visits += 1;
            stat.ticks += ticks;
            stat.min = stat.min.min(ticks);
            stat.max = stat.max.max(ticks);
            stat.measured = true;
            stat.present = true;
        }
        let rows = self.cnodes.len();
        let n = self.model.metric_members.len();
        for column in &mut self.columns {
            column.stats.resize(rows, EMPTY_STAT);
            column.metrics.resize(rows * n, 0);
            // Children after their parents: from the last call path up, each path with a value
            // hands its sums to a parent the location did not visit itself.
            for c in (1..rows).rev() {
                let stat = column.stats[c];
                let Some(parent) = self.cnodes[c].0 else {
                    continue;
                };
                if !stat.present || column.stats[parent].measured {
                    continue;
                }
                let up = &mut column.stats[parent];
                up.present = true;
                up.ticks += stat.ticks;
                up.min = up.min.min(stat.min);
                up.max = up.max.max(stat.max);
                for i in 0..n {
                    let v = column.metrics[c * n + i];
                    let s = &mut column.metrics[parent * n + i];
                    *s = s.wrapping_add(v);
                }
            }
            // The root has no metric values of its own: it counts what was measured below it.
            if column.stats[PROGRAM].measured && n > 0 {
                let mut sums = vec![0u64; n];
                for c in 1..rows {
                    if self.cnodes[c].0 == Some(PROGRAM) && column.stats[c].present {
                        for (i, sum) in sums.iter_mut().enumerate() {
                            *sum = sum.wrapping_add(column.metrics[c * n + i]);
                        }
                    }
                }
                column.metrics[..n].copy_from_slice(&sums);
            }
        }
        let profile = self.to_cube(creator);
        FromTrace {
            profile,
            damage: self.damage,
        }
    }

    fn to_cube(&self, creator: &str) -> Profile {
        let model = self.model;
        let mut region_index: HashMap<u32, usize> = HashMap::new();
        let mut regions = Vec::new();
        let mut cnodes = Vec::with_capacity(self.cnodes.len());
        for &(parent, region) in &self.cnodes {
            let index = *region_index.entry(region).or_insert_with(|| {
                regions.push(match model.regions.get(&region) {
                    _ if region == PROGRAM_REGION => {
                        let name = self.program.as_deref().unwrap_or(UNNAMED_PROGRAM);
                        Region {
                            name: name.into(),
                            canonical_name: name.into(),
                            paradigm: "measurement".into(),
                            role: "artificial".into(),
                            ..Region::default()
                        }
                    }
                    Some(def) => Region {
                        name: def.name.clone(),
                        canonical_name: def.canonical_name.clone(),
                        source_file: def.file.clone(),
                        begin_line: Some(def.begin_line),
                        end_line: Some(def.end_line),
                        paradigm: cube_word(def.paradigm.name()),
                        role: cube_word(def.role.name()),
                        description: String::new(),
                    },
                    None => Region {
                        name: format!("region {region}"),
                        canonical_name: format!("region {region}"),
                        paradigm: "unknown".into(),
                        role: "unknown".into(),
                        ..Region::default()
                    },
                });
                regions.len() - 1
            });
            cnodes.push(Cnode {
                region: index,
                parent,
                line: None,
            });
        }
        let (system, columns) = self.system_tree();
        let rows = self.cnodes.len();
        let width = columns.len();
        let n = model.metric_members.len();
        let seconds = |ticks: u64| ticks as f64 / model.resolution.max(1) as f64;
        let mut visits = vec![0u64; rows * width];
        let mut time = vec![0f64; rows * width];
        let mut min = vec![0f64; rows * width];
        let mut max = vec![0f64; rows * width];
        let mut sums = vec![vec![0u64; rows * width]; n];
        for (x, &location) in columns.iter().enumerate() {
            let column = &self.columns[location];
            for (c, stat) in column.stats.iter().enumerate() {
                if !stat.present {
                    continue;
                }
                let at = c * width + x;
                visits[at] = stat.visits;
                time[at] = seconds(stat.ticks);
                if stat.min != u64::MAX {
                    min[at] = seconds(stat.min);
                    max[at] = seconds(stat.max);
                }
                for (i, matrix) in sums.iter_mut().enumerate() {
                    matrix[at] = column.metrics[c * n + i];
                }
            }
        }
        let mut metrics = Metric::scorep_defaults().to_vec();
        metrics.extend(model.metric_members.iter().map(|m| Metric {
            unique_name: unique_name(&m.name),
            display_name: m.name.clone(),
            unit: m.unit.clone(),
            description: m.description.clone(),
            data_type: DataType::U64,
            kind: MetricKind::Inclusive,
            parent: None,
        }));
        let mut values = vec![
            Values::U64(visits),
            Values::F64(time),
            Values::F64(min),
            Values::F64(max),
        ];
        values.extend(sums.into_iter().map(Values::U64));
        Profile {
            attributes: vec![
                ("Creator".into(), creator.into()),
                ("CUBE_CT_AGGR".into(), "SUM".into()),
            ],
            metrics,
            regions,
            cnodes,
            system,
            values,
        }
    }

    /// The trace's system tree with its thread locations (Score-P's names: `CLASS NAME`), and
    /// the model's location index of every column, in the order of the profile's locations.
    fn system_tree(&self) -> (Vec<SystemNode>, Vec<usize>) {
        let model = self.model;
        // Locations by group, in definition order; only groups with threads are written.
        let mut by_group: Vec<(u32, Vec<usize>)> = Vec::new();
        for (l, location) in model.locations.iter().enumerate() {
            match by_group.iter_mut().find(|(g, _)| *g == location.group) {
                Some((_, list)) => list.push(l),
                None => by_group.push((location.group, vec![l])),
            }
        }
        let node_index: HashMap<u32, usize> = model
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id, i))
            .collect();
        let mut nodes: Vec<SystemNode> = model
            .nodes
            .iter()
            .map(|n| SystemNode {
                name: format!("{} {}", n.class, n.name).trim().to_string(),
                class: n.class.clone(),
                ..SystemNode::default()
            })
            .collect();
        let roots: Vec<usize> = (0..nodes.len())
            .filter(|&i| !node_index.contains_key(&model.nodes[i].parent))
            .collect();
        let mut orphans = Vec::new();
        let mut group_columns: Vec<(usize, Vec<usize>)> = Vec::new();
        for (rank, (group_id, locations)) in by_group.into_iter().enumerate() {
            let def = model.groups.iter().find(|g| g.id == group_id);
            let group = LocationGroup {
                name: def.map_or_else(|| format!("location group {group_id}"), |g| g.name.clone()),
                rank: rank as u32,
                kind: def.map_or(LocationGroupKind::Process, |g| g.kind),
                locations: locations
                    .iter()
                    .enumerate()
                    .map(|(r, &l)| Location {
                        name: model.locations[l].name.clone(),
                        rank: r as u32,
                        kind: LocationKind::Thread,
                    })
                    .collect(),
            };
            match def.and_then(|g| node_index.get(&g.node)) {
                Some(&node) => {
                    nodes[node].groups.push(group);
                    group_columns.push((node, locations));
                }
                None => {
                    orphans.push(group);
                    group_columns.push((usize::MAX, locations));
                }
            }
        }
        // Nodes into their parents, children first (a parent's index is not ordered).
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (i, n) in model.nodes.iter().enumerate() {
            if let Some(&p) = node_index.get(&n.parent) {
                if p != i {
                    children[p].push(i);
                }
            }
        }
        // Columns in the order the profile lists locations: depth first, groups before the
        // child nodes. Cycles in a damaged tree are cut by visiting each node once.
        let mut columns = Vec::new();
        let mut visited = vec![false; nodes.len()];
        let mut order = Vec::new();
        let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
        while let Some(node) = stack.pop() {
            if std::mem::replace(&mut visited[node], true) {
                continue;
            }
            order.push(node);
            for (n, locations) in &group_columns {
                if *n == node {
                    columns.extend(locations);
                }
            }
            stack.extend(children[node].iter().rev());
        }
        // Build the nested nodes bottom up along that order.
        let mut built: Vec<Option<SystemNode>> = nodes.into_iter().map(Some).collect();
        for &node in order.iter().rev() {
            let kids: Vec<SystemNode> = children[node]
                .iter()
                .filter_map(|&c| built[c].take())
                .collect();
            if let Some(n) = built[node].as_mut() {
                n.children = kids;
            }
        }
        let mut system: Vec<SystemNode> = roots.iter().filter_map(|&r| built[r].take()).collect();
        if !orphans.is_empty() {
            system.push(SystemNode {
                name: "machine unknown".into(),
                class: "machine".into(),
                groups: orphans,
                ..SystemNode::default()
            });
            for (n, locations) in &group_columns {
                if *n == usize::MAX {
                    columns.extend(locations);
                }
            }
        }
        (system, columns)
    }
}

/// An open region: its call path, the path that was current before, its start in its task's
/// own clock (time less the time the task was suspended), and its region id.
#[derive(Clone, Copy, Debug)]
struct Frame {
    cnode: usize,
    restore: usize,
    start: u64,
    region: u32,
}

/// A task's frames on the location (the first segment is the implicit task's).
#[derive(Clone, Copy, Debug)]
struct Segment {
    /// Index of its first frame.
    start: usize,
    /// The call path of its innermost open region: the parent of its next Enter.
    current: usize,
    /// Time it spent suspended so far.
    offset: u64,
    /// When it was suspended (while it is not on top).
    suspended_at: u64,
}

impl Default for Segment {
    fn default() -> Self {
        Segment {
            start: 0,
            current: PROGRAM,
            offset: 0,
            suspended_at: 0,
        }
    }
}

/// The replay of one location's events (see the module documentation).
pub struct LocationReplay<'b, 'a> {
    builder: &'b mut Builder<'a>,
    id: u64,
    column: usize,
    frames: Vec<Frame>,
    /// Metric values at each frame's start, less its segment's metric offsets.
    frame_metrics: Vec<u64>,
    segments: Vec<Segment>,
    /// Per segment: metric offsets, then the values at its suspension.
    segment_metrics: Vec<u64>,
    /// Per team level, the segment that is its implicit task.
    bases: Vec<usize>,
    /// Team begins seen per team.
    instances: HashMap<u32, u64>,
    /// The latest Enter or Leave time (an earlier one counts as this).
    last: u64,
    last_event: Option<u64>,
    /// The synchronous metrics' latest values.
    values: Vec<u64>,
    program_begin: Option<u64>,
}

impl LocationReplay<'_, '_> {
    /// The next event of the location, at `time`.
    pub fn event(&mut self, time: u64, event: &Event) {
        self.last_event = Some(self.last_event.map_or(time, |t| t.max(time)));
        match event {
            Event::Enter { region } => self.enter(time, *region),
            Event::Leave { region } => self.leave(time, Some(*region)),
            Event::ThreadTeamBegin { team } => self.team_begin(*team),
            Event::ThreadTeamEnd { .. } if self.bases.len() > 1 => {
                self.bases.pop();
            }
            Event::Metric { metric, values }
                if Some(*metric) == self.builder.model.metric_class =>
            {
                for (slot, value) in self.values.iter_mut().zip(values) {
                    *slot = value.raw;
                }
            }
            Event::ProgramBegin { program_name, .. } => {
                self.program_begin = Some(time);
                if self.builder.program.is_none() {
                    let name = self
                        .builder
                        .model
                        .strings
                        .get(program_name)
                        .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
                        .filter(|p| !p.is_empty());
                    self.builder.program = name;
                }
            }
            Event::ProgramEnd { .. } => {
                if let Some(begin) = self.program_begin.take() {
                    self.builder
                        .program_visits
                        .push((self.column, begin, Some(time)));
                }
            }
            _ => {}
        }
    }

    /// The end of the location's events: what is still open is left at its last event.
    pub fn finish(mut self) {
        let end = self.last_event.unwrap_or(0);
        self.builder.damage.open_at_end += self.frames.len() as u64;
        while !self.frames.is_empty() {
            self.leave(end, None);
        }
        if let Some(begin) = self.program_begin.take() {
            self.builder.program_visits.push((self.column, begin, None));
        }
        if let Some(last) = self.last_event {
            self.builder.last_time = Some(self.builder.last_time.map_or(last, |t| t.max(last)));
        }
    }

    fn clamp(&mut self, time: u64) -> u64 {
        self.last = self.last.max(time);
        self.last
    }

    fn base(&self) -> usize {
        let base = self.bases.last().copied().unwrap_or(0);
        base.min(self.segments.len() - 1)
    }

    fn team_begin(&mut self, team: u32) {
        let instance = {
            let count = self.instances.entry(team).or_insert(0);
            *count += 1;
            *count - 1
        };
        let current = self.segments[self.segments.len() - 1].current;
        match self.builder.model.team_masters.get(&team) {
            Some(&master) if master == self.id => {
                let (runs, count) = self.builder.forks.entry(team).or_default();
                if runs.last().map(|&(_, path)| path) != Some(current) {
                    runs.push((instance, current));
                }
                *count = instance + 1;
            }
            _ if self.frames.is_empty() && self.segments.len() == 1 => {
                let path = self.builder.fork_path(team, instance);
                if path.is_none() {
                    self.builder.damage.unmatched_team_begins += 1;
                }
                self.segments[0].current = path.unwrap_or(PROGRAM);
            }
            _ => {}
        }
        self.bases.push(self.segments.len() - 1);
    }

    fn enter(&mut self, time: u64, region: u32) {
        let time = self.clamp(time);
        let task = self
            .builder
            .model
            .regions
            .get(&region)
            .is_some_and(|r| matches!(r.role, RegionRole::TASK | RegionRole::TASK_UNTIED));
        if task {
            let base = self.base();
            if self.segments.len() - 1 > base {
                self.suspend_top(time);
            }
            let parent = self.segments[base].current;
            self.segments.push(Segment {
                start: self.frames.len(),
                current: parent,
                offset: 0,
                suspended_at: 0,
            });
            let n = self.values.len();
            self.segment_metrics
                .extend(std::iter::repeat(0).take(2 * n));
        }
        let top = self.segments.len() - 1;
        let parent = self.segments[top].current;
        let cnode = self.builder.child(parent, region);
        let segment = &mut self.segments[top];
        segment.current = cnode;
        self.frames.push(Frame {
            cnode,
            restore: parent,
            start: time.saturating_sub(segment.offset),
            region,
        });
        let n = self.values.len();
        let offsets = &self.segment_metrics[top * 2 * n..top * 2 * n + n];
        for (value, offset) in self.values.iter().zip(offsets) {
            self.frame_metrics.push(value.wrapping_sub(*offset));
        }
    }

    /// Leaves the innermost open region (`region`: the one the Leave record names).
    fn leave(&mut self, time: u64, region: Option<u32>) {
        let Some(frame) = self.frames.pop() else {
            self.builder.damage.unmatched_leaves += 1;
            return;
        };
        if region.is_some_and(|r| r != frame.region) {
            self.builder.damage.misnested_leaves += 1;
        }
        let time = self.clamp(time);
        let n = self.values.len();
        let depth = self.frames.len();
        let top = self.segments.len() - 1;
        let segment = self.segments[top];
        self.segments[top].current = frame.restore;
        let inclusive = time
            .saturating_sub(segment.offset)
            .saturating_sub(frame.start);
        let column = self.column;
        let stat = self.builder.stat(column, frame.cnode);
        stat.visits += 1;
        stat.ticks += inclusive;
        stat.min = stat.min.min(inclusive);
        stat.max = stat.max.max(inclusive);
        stat.measured = true;
        stat.present = true;
        if n > 0 {
            let offsets = &self.segment_metrics[top * 2 * n..top * 2 * n + n];
            let starts = &self.frame_metrics[depth * n..depth * n + n];
            let deltas: Vec<u64> = (0..n)
                .map(|i| {
                    self.values[i]
                        .wrapping_sub(offsets[i])
                        .wrapping_sub(starts[i])
                })
                .collect();
            self.builder.add_metrics(column, frame.cnode, &deltas);
        }
        self.frame_metrics.truncate(depth * n);
        if top > 0 && depth == segment.start {
            self.end_task(time);
        }
    }

    /// The running explicit task's region was left: the task below resumes.
    fn end_task(&mut self, time: u64) {
        self.segments.pop();
        let n = self.values.len();
        self.segment_metrics.truncate(self.segments.len() * 2 * n);
        let top = self.segments.len() - 1;
        if top <= self.base() {
            return;
        }
        let segment = &mut self.segments[top];
        segment.offset += time.saturating_sub(segment.suspended_at);
        let (offsets, suspended) =
            self.segment_metrics[top * 2 * n..(top + 1) * 2 * n].split_at_mut(n);
        for i in 0..n {
            offsets[i] = offsets[i].wrapping_add(self.values[i].wrapping_sub(suspended[i]));
        }
    }

    /// Suspends the running explicit task at `time`.
    fn suspend_top(&mut self, time: u64) {
        let n = self.values.len();
        let top = self.segments.len() - 1;
        self.segments[top].suspended_at = time;
        self.segment_metrics[top * 2 * n + n..(top + 1) * 2 * n].copy_from_slice(&self.values);
    }
}

/// A CUBE `role` or `paradigm` from an OTF2 name (`IMPLICIT_BARRIER` → `implicit barrier`), as
/// pomptrace's profile writes them.
pub fn cube_word(name: Option<&str>) -> String {
    name.unwrap_or("unknown")
        .to_ascii_lowercase()
        .replace('_', " ")
}

/// A CUBE unique name: cubew keeps `[A-Za-z0-9_:=]` and makes everything else `_`.
fn unique_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '=') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "from_trace_tests.rs"]
mod tests;
