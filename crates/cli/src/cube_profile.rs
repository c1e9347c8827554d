//! What `summary` and `view` read from a call-path profile (`profile.cubex`, CUBE4): the same
//! per-region and per-thread numbers a trace gives (`region_profile`), derived from the call
//! tree, and the call tree itself. Also which of the two a path names.
//!
//! Per location, from each call path's `visits` and `time` (inclusive, as CUBE stores it):
//! a region's visits are those of all its call paths; its inclusive time that of the call paths
//! not below another call path of the same region that the location visited (recursion counts
//! once, as in a trace's summary); its exclusive time each call path's time less its children's,
//! summed. A call path the location did not visit itself (the forking construct's path on a
//! team member, which only carries the time below it) adds nothing to its region.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use otf2::cube::{self, cube_word};
use otf2::{Paradigm, RegionRole};

use crate::region_profile::{Profile, ThreadStats};
use crate::trace_definitions::{
    nesting, thread_position, waiting_kind, ConstructKind, LocationInfo, RegionInfo,
    TraceDefinitions, WaitKind,
};

/// The profile's file name in an experiment directory.
pub const PROFILE_FILE: &str = "profile.cubex";
/// The trace's anchor file name in an experiment directory.
pub const TRACE_FILE: &str = "traces.otf2";

/// What a path given to `summary` or `view` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    Trace(PathBuf),
    Profile(PathBuf),
}

impl Input {
    /// An experiment directory gives its profile when it has one, else its trace; a file is
    /// a profile when it ends in `.cubex`, else a trace's anchor file.
    pub fn of(path: &Path) -> Input {
        if path.is_dir() {
            let profile = path.join(PROFILE_FILE);
            if profile.is_file() {
                Input::Profile(profile)
            } else {
                Input::Trace(path.join(TRACE_FILE))
            }
        } else if path.extension().is_some_and(|e| e == "cubex") {
            Input::Profile(path.to_path_buf())
        } else {
            Input::Trace(path.to_path_buf())
        }
    }
}

/// Ticks per second of a profile's times: picoseconds, finer than any clock a trace has, so
/// that differences of a profile's times in seconds lose nothing that matters.
pub const TICKS_PER_SECOND: f64 = 1e12;

/// A profile read for the readers: times in picoseconds ([`TICKS_PER_SECOND`]).
pub struct CubeProfile {
    pub cube: cube::Profile,
    /// Regions by their index in `cube.regions`, locations in column order.
    pub defs: TraceDefinitions,
    /// Per region and location, keyed like a trace's; the headline's sums.
    pub profile: Profile,
    /// Per call path and location (`c * locations + l`, locations in `defs` order): visits,
    /// inclusive and exclusive ticks.
    pub visits: Vec<u64>,
    pub inclusive: Vec<u128>,
    pub exclusive: Vec<u128>,
}

/// Reads `path` and derives the numbers (see the module documentation).
pub fn open(path: &Path) -> Result<CubeProfile, String> {
    let cube = cube::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    derive(cube)
}

fn seconds_to_ticks(seconds: f64) -> u128 {
    if seconds.is_finite() && seconds > 0.0 {
        (seconds * TICKS_PER_SECOND).round() as u128
    } else {
        0
    }
}

/// The OTF2 role and paradigm a CUBE region's words name (pomptrace writes them with
/// [`cube_word`]; Score-P's spellings of the OpenMP waits are accepted too).
fn otf2_role_and_paradigm(region: &cube::Region) -> (RegionRole, Paradigm) {
    let role = match region.role.as_str() {
        "taskwait" => RegionRole::TASK_WAIT,
        "task untied" | "untied task" => RegionRole::TASK_UNTIED,
        word => (0..=u8::MAX)
            .map(RegionRole)
            .find(|r| r.name().is_some() && cube_word(r.name()) == word)
            .unwrap_or(RegionRole::UNKNOWN),
    };
    let paradigm = (0..=u8::MAX)
        .map(Paradigm)
        .find(|p| p.name().is_some() && cube_word(p.name()) == region.paradigm)
        .unwrap_or(Paradigm::UNKNOWN);
    (role, paradigm)
}

fn derive(cube: cube::Profile) -> Result<CubeProfile, String> {
    let metric = |name: &str| {
        cube.metric_index(name)
            .ok_or_else(|| format!("the profile has no `{name}` metric"))
    };
    let (visits_metric, time_metric) = (metric("visits")?, metric("time")?);
    if cube.metrics[time_metric].kind != cube::MetricKind::Inclusive {
        return Err("the profile's `time` is not an inclusive metric".into());
    }
    let mut regions = HashMap::new();
    for (index, region) in cube.regions.iter().enumerate() {
        let (role, paradigm) = otf2_role_and_paradigm(region);
        regions.insert(
            index as u32,
            RegionInfo {
                name: region.name.clone(),
                kind: ConstructKind::of(role, paradigm),
                role,
                file: region
                    .source_file
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                line: region.begin_line.unwrap_or(0),
            },
        );
    }
    let groups = cube.location_groups();
    let several = groups.len() > 1;
    // Lanes as a trace's: by process, then by position in the thread tree.
    let mut lanes = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        for location in &group.locations {
            let column = lanes.len();
            let position =
                thread_position(&location.name).unwrap_or_else(|| vec![u64::MAX, column as u64]);
            lanes.push(((g, position, column), group, location));
        }
    }
    lanes.sort_by(|a, b| a.0.cmp(&b.0));
    let columns: Vec<usize> = lanes.iter().map(|lane| lane.0 .2).collect();
    let mut locations = Vec::new();
    for (_, group, location) in lanes {
        {
            locations.push(LocationInfo {
                id: locations.len() as u64,
                name: if several {
                    format!("{}: {}", group.name, location.name)
                } else {
                    location.name.clone()
                },
                number_of_events: 0,
                group: group.name.clone(),
                system_tree: String::new(),
                nesting: nesting(&location.name),
            });
        }
    }
    let width = locations.len();
    let rows = cube.cnodes.len();
    let children = cube.children();
    let roots = cube.roots();
    let value = |m: usize, c: usize, l: usize| cube.value(m, c, columns[l]).unwrap_or(0.0);
    let mut visits = vec![0u64; rows * width];
    let mut inclusive = vec![0u128; rows * width];
    for c in 0..rows {
        for l in 0..width {
            visits[c * width + l] = value(visits_metric, c, l).max(0.0) as u64;
            inclusive[c * width + l] = seconds_to_ticks(value(time_metric, c, l));
        }
    }
    let mut exclusive = vec![0u128; rows * width];
    for c in 0..rows {
        for l in 0..width {
            let below: u128 = children[c].iter().map(|&k| inclusive[k * width + l]).sum();
            exclusive[c * width + l] = inclusive[c * width + l].saturating_sub(below);
        }
    }
    let region_of = |c: usize| cube.cnodes[c].region as u32;
    let kind_of = |c: usize| regions.get(&region_of(c)).map(|r: &RegionInfo| r.kind);
    let mut profile = Profile::default();
    let mut duration = 0u128;
    for l in 0..width {
        for &root in &roots {
            duration = duration.max(inclusive[root * width + l]);
        }
        // Depth first with, per region, the visited call paths open above the current one.
        let mut open: HashMap<u32, u32> = HashMap::new();
        let mut parallel_open = 0u32;
        // (call path, leaving): a call path is entered, then left after its subtree.
        let mut stack: Vec<(usize, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
        while let Some((c, leaving)) = stack.pop() {
            let at = c * width + l;
            let measured = visits[at] > 0;
            let region = region_of(c);
            let parallel = kind_of(c) == Some(ConstructKind::Parallel);
            if leaving {
                if measured {
                    if let Some(n) = open.get_mut(&region) {
                        *n -= 1;
                    }
                    parallel_open -= u32::from(parallel);
                }
                continue;
            }
            if measured {
                let nested = open.get(&region).is_some_and(|&n| n > 0);
                let stats: &mut ThreadStats = profile.per_thread.entry((region, l)).or_default();
                stats.visits += visits[at];
                stats.exclusive += exclusive[at];
                if !nested {
                    stats.inclusive += inclusive[at];
                }
                if parallel && parallel_open == 0 {
                    profile.parallel += inclusive[at];
                }
                let info = regions.get(&region);
                match info.and_then(|i| waiting_kind(i.role, &i.name)) {
                    Some(WaitKind::Barrier) => profile.barrier_wait += exclusive[at],
                    Some(WaitKind::Lock) => profile.lock_wait += exclusive[at],
                    None => {}
                }
                *open.entry(region).or_default() += 1;
                parallel_open += u32::from(parallel);
            }
            stack.push((c, true));
            stack.extend(children[c].iter().rev().map(|&k| (k, false)));
        }
    }
    profile.first_time = Some(0);
    profile.last_time = Some(u64::try_from(duration).unwrap_or(u64::MAX));
    let defs = TraceDefinitions {
        ticks_per_second: TICKS_PER_SECOND,
        origin: 0,
        trace_length: u64::try_from(duration).unwrap_or(u64::MAX),
        regions,
        locations,
        notes: Vec::new(),
    };
    Ok(CubeProfile {
        cube,
        defs,
        profile,
        visits,
        inclusive,
        exclusive,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use otf2::cube::*;

    fn region(name: &str, role: &str) -> cube::Region {
        cube::Region {
            name: name.into(),
            canonical_name: name.into(),
            paradigm: "openmp".into(),
            role: role.into(),
            ..cube::Region::default()
        }
    }

    /// prog / parallel / task / task (a recursion) and prog / parallel / barrier, on two
    /// threads; thread 1 did not visit prog.
    fn sample() -> cube::Profile {
        let tree = [
            (0, None),
            (1, Some(0)),
            (2, Some(1)),
            (2, Some(2)),
            (3, Some(1)),
        ];
        // (visits, time in seconds) per call path, thread 0 then thread 1.
        let data = [
            [(1, 10.0), (0, 6.0)],
            [(1, 8.0), (1, 6.0)],
            [(2, 5.0), (1, 2.0)],
            [(3, 3.0), (0, 0.0)],
            [(1, 1.0), (1, 3.0)],
        ];
        cube::Profile {
            attributes: vec![],
            metrics: vec![Metric::scorep_visits(), Metric::scorep_time()],
            regions: vec![
                region("prog", "artificial"),
                region("par", "parallel"),
                region("task", "task untied"),
                region("bar", "implicit barrier"),
            ],
            cnodes: tree
                .iter()
                .map(|&(region, parent)| Cnode {
                    region,
                    parent,
                    line: None,
                })
                .collect(),
            system: vec![SystemNode {
                name: "machine Linux".into(),
                class: "machine".into(),
                groups: vec![LocationGroup {
                    name: "Process".into(),
                    rank: 0,
                    kind: LocationGroupKind::Process,
                    locations: ["Master thread", "OMP thread 1"]
                        .iter()
                        .enumerate()
                        .map(|(r, n)| cube::Location {
                            name: n.to_string(),
                            rank: r as u32,
                            kind: LocationKind::Thread,
                        })
                        .collect(),
                }],
                ..SystemNode::default()
            }],
            values: vec![
                Values::U64(data.iter().flatten().map(|d| d.0).collect()),
                Values::F64(data.iter().flatten().map(|d| d.1).collect()),
            ],
        }
    }

    #[test]
    fn regions_per_thread_from_the_call_tree() {
        let derived = derive(sample()).unwrap();
        let s = |region: u32, l: usize| {
            let t = derived.profile.per_thread[&(region, l)];
            (
                t.visits,
                t.inclusive / 1_000_000_000_000,
                t.exclusive / 1_000_000_000_000,
            )
        };
        assert_eq!(s(0, 0), (1, 10, 2));
        // Thread 1 only carries the time below prog: no row for it.
        assert!(!derived.profile.per_thread.contains_key(&(0, 1)));
        assert_eq!(s(1, 0), (1, 8, 2));
        // The recursive task counts its outer call path once, exclusive times add up.
        assert_eq!(s(2, 0), (5, 5, 2 + 3));
        assert_eq!(s(2, 1), (1, 2, 2));
        assert_eq!(s(3, 1), (1, 3, 3));
        assert_eq!(derived.defs.regions[&2].kind, ConstructKind::Task);
        assert_eq!(derived.defs.regions[&3].role, RegionRole::IMPLICIT_BARRIER);
        // The headline's sums: parallel regions, barrier waiting (exclusive).
        assert_eq!(derived.profile.parallel, 14_000_000_000_000);
        assert_eq!(derived.profile.barrier_wait, 4_000_000_000_000);
        assert_eq!(derived.profile.duration(), 10_000_000_000_000);
    }

    #[test]
    fn a_directory_names_its_profile_before_its_trace() {
        let dir = std::env::temp_dir().join(format!("cube-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(Input::of(&dir), Input::Trace(dir.join(TRACE_FILE)));
        std::fs::write(dir.join(PROFILE_FILE), b"").unwrap();
        assert_eq!(Input::of(&dir), Input::Profile(dir.join(PROFILE_FILE)));
        assert_eq!(
            Input::of(&dir.join(TRACE_FILE)),
            Input::Trace(dir.join(TRACE_FILE))
        );
        assert_eq!(
            Input::of(Path::new("x.cubex")),
            Input::Profile("x.cubex".into())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
