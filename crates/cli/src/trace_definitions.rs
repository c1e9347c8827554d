//! What the readers of a trace (`summary`, `view`, `export`) need from its global definitions:
//! the clock, the regions with their construct kind and source position, and the locations in
//! lane order, grouped as in the system tree.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use otf2::{ArchiveReader, GlobalDef, Paradigm, RegionRole, UNDEFINED_U32};

/// The construct families the views colour and the summary's headline adds up.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum ConstructKind {
    Parallel,
    Worksharing,
    /// Explicit and implicit barriers and taskwait: time spent waiting for other threads.
    Barrier,
    /// Critical sections, ordered, atomic and the OpenMP lock API.
    Lock,
    Task,
    User,
    Other,
}

impl ConstructKind {
    pub const ALL: [ConstructKind; 7] = [
        ConstructKind::Parallel,
        ConstructKind::Worksharing,
        ConstructKind::Barrier,
        ConstructKind::Lock,
        ConstructKind::Task,
        ConstructKind::User,
        ConstructKind::Other,
    ];

    pub fn of(role: RegionRole, paradigm: Paradigm) -> Self {
        match role {
            RegionRole::PARALLEL => Self::Parallel,
            RegionRole::LOOP
            | RegionRole::SECTIONS
            | RegionRole::SECTION
            | RegionRole::WORKSHARE
            | RegionRole::SINGLE
            | RegionRole::SINGLE_SBLOCK
            | RegionRole::MASTER
                if paradigm == Paradigm::OPENMP =>
            {
                Self::Worksharing
            }
            RegionRole::BARRIER | RegionRole::IMPLICIT_BARRIER | RegionRole::TASK_WAIT => {
                Self::Barrier
            }
            RegionRole::CRITICAL
            | RegionRole::CRITICAL_SBLOCK
            | RegionRole::ORDERED
            | RegionRole::ORDERED_SBLOCK
            | RegionRole::ATOMIC
            | RegionRole::WRAPPER => Self::Lock,
            RegionRole::TASK | RegionRole::TASK_UNTIED | RegionRole::TASK_CREATE => Self::Task,
            _ if paradigm == Paradigm::USER => Self::User,
            _ => Self::Other,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Parallel => "parallel",
            Self::Worksharing => "worksharing",
            Self::Barrier => "barrier",
            Self::Lock => "critical/lock",
            Self::Task => "task",
            Self::User => "user region",
            Self::Other => "other",
        }
    }
}

/// Whether time spent directly in this region (not in regions it encloses) is waiting: at a
/// barrier or taskwait, for a critical section (the outer region around the acquire), or in a
/// blocking lock call.
pub fn waiting_kind(role: RegionRole, name: &str) -> Option<WaitKind> {
    match role {
        RegionRole::BARRIER | RegionRole::IMPLICIT_BARRIER | RegionRole::TASK_WAIT => {
            Some(WaitKind::Barrier)
        }
        RegionRole::CRITICAL => Some(WaitKind::Lock),
        RegionRole::WRAPPER if matches!(name, "omp_set_lock" | "omp_set_nest_lock") => {
            Some(WaitKind::Lock)
        }
        _ => None,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WaitKind {
    Barrier,
    Lock,
}

pub struct RegionInfo {
    pub name: String,
    pub kind: ConstructKind,
    pub role: RegionRole,
    /// The source file's base name, empty when the region has none.
    pub file: String,
    pub line: u32,
}

pub struct LocationInfo {
    pub id: u64,
    pub name: String,
    pub number_of_events: u64,
    /// The location group's name, and its system tree path ("machine Linux / node vm").
    pub group: String,
    pub system_tree: String,
    /// Nesting level in the thread tree: 0 for the top-level team, 1 for `OMP thread a:b`, ...
    pub nesting: usize,
}

pub struct TraceDefinitions {
    pub ticks_per_second: f64,
    /// Time zero of the trace, in ticks: the clock's global offset.
    pub origin: u64,
    pub trace_length: u64,
    pub regions: HashMap<u32, RegionInfo>,
    /// In lane order: by location group, then by position in the thread tree.
    pub locations: Vec<LocationInfo>,
    /// Said once to the user (e.g. a missing clock resolution).
    pub notes: Vec<String>,
}

impl TraceDefinitions {
    pub fn read(reader: &ArchiveReader) -> Result<Self, String> {
        let defs = reader.global_defs().map_err(|e| e.to_string())?;
        let mut strings: HashMap<u32, String> = HashMap::new();
        let mut clock = None;
        for def in &defs {
            match def {
                GlobalDef::String { id, string } => {
                    strings.insert(*id, string.clone());
                }
                GlobalDef::ClockProperties {
                    timer_resolution,
                    global_offset,
                    trace_length,
                    ..
                } => clock = Some((*timer_resolution, *global_offset, *trace_length)),
                _ => {}
            }
        }
        let string = |id: u32| strings.get(&id).cloned().unwrap_or_default();
        let mut notes = Vec::new();
        let (ticks_per_second, origin, trace_length) = match clock {
            Some((resolution, offset, length)) if resolution > 0 => {
                (resolution as f64, offset, length)
            }
            _ => {
                notes.push(
                    "no valid clock resolution in the trace; assuming 1 tick = 1 ns".to_string(),
                );
                (1e9, clock.map_or(0, |c| c.1), clock.map_or(0, |c| c.2))
            }
        };

        let mut tree_nodes: HashMap<u32, (String, u32)> = HashMap::new();
        let mut groups: HashMap<u32, (String, u32)> = HashMap::new();
        let mut regions = HashMap::new();
        let mut locations = Vec::new();
        for def in defs {
            match def {
                GlobalDef::SystemTreeNode {
                    id,
                    name,
                    class_name,
                    parent,
                } => {
                    let label = format!("{} {}", string(class_name), string(name));
                    tree_nodes.insert(id, (label.trim().to_string(), parent));
                }
                GlobalDef::LocationGroup {
                    id,
                    name,
                    system_tree_parent,
                    ..
                } => {
                    groups.insert(id, (string(name), system_tree_parent));
                }
                GlobalDef::Region {
                    id,
                    name,
                    region_role,
                    paradigm,
                    source_file,
                    begin_line,
                    ..
                } => {
                    let path = string(source_file);
                    let file = path.rsplit('/').next().unwrap_or_default().to_string();
                    regions.insert(
                        id,
                        RegionInfo {
                            name: string(name),
                            kind: ConstructKind::of(region_role, paradigm),
                            role: region_role,
                            file,
                            line: begin_line,
                        },
                    );
                }
                GlobalDef::Location {
                    id,
                    name,
                    number_of_events,
                    location_group,
                    ..
                } => locations.push((id, string(name), number_of_events, location_group)),
                _ => {}
            }
        }
        let system_tree = |mut node: u32| {
            let mut path = Vec::new();
            // Bounded: a cyclic parent chain in a damaged trace must not loop forever.
            while let Some((label, parent)) = tree_nodes.get(&node) {
                if path.len() > 64 {
                    break;
                }
                path.push(label.clone());
                node = *parent;
            }
            path.reverse();
            path.join(" / ")
        };
        let mut locations: Vec<(u32, Vec<u64>, LocationInfo)> = locations
            .into_iter()
            .map(|(id, name, number_of_events, group)| {
                let (group_name, tree_parent) = groups
                    .get(&group)
                    .cloned()
                    .unwrap_or_else(|| (format!("group {group}"), UNDEFINED_U32));
                let position = thread_position(&name);
                let location_name = if name.is_empty() {
                    format!("location {id}")
                } else {
                    name
                };
                (
                    group,
                    position.clone().unwrap_or_else(|| vec![u64::MAX, id]),
                    LocationInfo {
                        id,
                        name: location_name,
                        number_of_events,
                        group: group_name,
                        system_tree: system_tree(tree_parent),
                        nesting: position.map_or(0, |p| p.len().saturating_sub(1)),
                    },
                )
            })
            .collect();
        locations.sort_by(|a, b| (a.0, &a.1, a.2.id).cmp(&(b.0, &b.1, b.2.id)));
        // Several processes (the ranks of an MPI job) have threads of the same names: a thread
        // is named with its process then ("MPI Rank 1: Master thread").
        if locations.iter().any(|l| l.0 != locations[0].0) {
            for (_, _, location) in &mut locations {
                location.name = format!("{}: {}", location.group, location.name);
            }
        }
        Ok(Self {
            ticks_per_second,
            origin,
            trace_length,
            regions,
            locations: locations.into_iter().map(|(_, _, l)| l).collect(),
            notes,
        })
    }

    pub fn region(&self, id: u32) -> Option<&RegionInfo> {
        self.regions.get(&id)
    }

    pub fn region_name(&self, id: u32) -> String {
        self.region(id)
            .map_or_else(|| format!("region {id}"), |r| r.name.clone())
    }

    /// Seconds from time zero of the trace.
    pub fn seconds(&self, ticks: u64) -> f64 {
        ticks.saturating_sub(self.origin) as f64 / self.ticks_per_second
    }

    /// A duration in ticks, in seconds.
    pub fn duration_seconds(&self, ticks: u128) -> f64 {
        ticks as f64 / self.ticks_per_second
    }

    pub fn total_events(&self) -> u64 {
        self.locations.iter().map(|l| l.number_of_events).sum()
    }
}

/// Opens the archive and reads its definitions.
pub fn open(anchor: &Path) -> Result<(ArchiveReader, TraceDefinitions), String> {
    let reader = ArchiveReader::open(anchor).map_err(|e| e.to_string())?;
    let defs = TraceDefinitions::read(&reader)?;
    Ok((reader, defs))
}

/// Where a command writes what it makes of the trace at `anchor`: the `--output` given, else
/// next to the anchor file, with `extension`.
pub fn output_path(anchor: &Path, output: &Option<PathBuf>, extension: &str) -> PathBuf {
    output
        .clone()
        .unwrap_or_else(|| anchor.with_extension(extension))
}

/// Nesting level in the thread tree that a pomptrace location name spells: 0 for the
/// top-level team and for other names, 1 for `OMP thread a:b`, ...
pub fn nesting(name: &str) -> usize {
    thread_position(name).map_or(0, |p| p.len().saturating_sub(1))
}

/// The position in the thread tree that pomptrace's location names spell: `Master thread` is
/// [0], `OMP thread 3` is [3], `OMP thread 1:2` is [1, 2] (so nested teams sort under the
/// thread that forked them). None for other names.
pub fn thread_position(name: &str) -> Option<Vec<u64>> {
    if name == "Master thread" {
        return Some(vec![0]);
    }
    name.strip_prefix("OMP thread ")?
        .split(':')
        .map(|n| n.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_positions_put_nested_teams_under_their_parent() {
        let mut names = [
            "OMP thread 2",
            "OMP thread 1:1",
            "Master thread",
            "OMP thread 10",
            "OMP thread 1",
            "OMP thread 0:1",
        ];
        names.sort_by_key(|n| thread_position(n));
        assert_eq!(
            names,
            [
                "Master thread",
                "OMP thread 0:1",
                "OMP thread 1",
                "OMP thread 1:1",
                "OMP thread 2",
                "OMP thread 10"
            ]
        );
        assert_eq!(thread_position("GPU stream"), None);
    }

    #[test]
    fn construct_kinds_from_roles() {
        let omp = Paradigm::OPENMP;
        assert_eq!(
            ConstructKind::of(RegionRole::IMPLICIT_BARRIER, omp),
            ConstructKind::Barrier
        );
        assert_eq!(
            ConstructKind::of(RegionRole::LOOP, omp),
            ConstructKind::Worksharing
        );
        assert_eq!(
            ConstructKind::of(RegionRole::FUNCTION, Paradigm::USER),
            ConstructKind::User
        );
        assert_eq!(
            ConstructKind::of(RegionRole::WRAPPER, omp),
            ConstructKind::Lock
        );
        assert_eq!(
            waiting_kind(RegionRole::WRAPPER, "omp_unset_lock"),
            None,
            "releasing a lock never waits"
        );
    }
}
