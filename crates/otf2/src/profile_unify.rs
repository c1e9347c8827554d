//! One CUBE4 profile of an MPI job from its ranks' parts: each rank writes its own profile
//! (its threads, its call paths, regions as its process defined them) as
//! `DIR/ranks/<rank>.profile.cubex`, with the attributes [`PARTS_ATTRIBUTE`] (the job's size)
//! and [`PART_ATTRIBUTE`] (its rank); the last rank to finish, or `pomptrace unify`, merges
//! them into `DIR/profile.cubex`, the ranks as processes.
//!
//! Parts are merged by content, never by ids: a region is its name, file, lines, paradigm and
//! role; a call path is its sequence of regions; a metric is its unique name (a metric a part
//! lacks reads 0 there); system tree nodes of the same class and name are one node.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::cube::{Cnode, LocationGroup, Metric, Profile, Region, SystemNode, Values};
use crate::directory::Directory;

/// The attribute of a part that holds the number of parts (ranks) of the job.
pub const PARTS_ATTRIBUTE: &str = "POMPTRACE::UNIFY::PARTS";
/// The attribute of a part that holds its rank.
pub const PART_ATTRIBUTE: &str = "POMPTRACE::UNIFY::PART";
/// A job's profile, and the ending of each part's file name.
pub const PROFILE_FILE: &str = "profile.cubex";

/// The file name of rank `rank`'s part.
pub fn part_name(rank: u32) -> String {
    format!("{rank}.{PROFILE_FILE}")
}

/// The part of rank `rank` in `parts_dir`.
pub fn part_path(parts_dir: &Path, rank: u32) -> PathBuf {
    parts_dir.join(part_name(rank))
}

/// The parts in `parts_dir`, by rank.
pub fn parts(parts_dir: &Path) -> std::io::Result<Vec<(u32, PathBuf)>> {
    let suffix = format!(".{PROFILE_FILE}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(parts_dir)?.flatten() {
        let name = entry.file_name();
        let Some(rank) = name
            .to_str()
            .and_then(|n| n.strip_suffix(&suffix))
            .and_then(|r| r.parse::<u32>().ok())
        else {
            continue;
        };
        found.push((rank, entry.path()));
    }
    found.sort();
    Ok(found)
}

/// Whether every rank of a job of `size` has written its part.
pub fn all_parts_written(parts_dir: &Path, size: u32) -> bool {
    parts(parts_dir).is_ok_and(|found| (0..size).all(|r| found.iter().any(|(rank, _)| *rank == r)))
}

/// What [`unify_directory`] wrote.
#[derive(Clone, Debug)]
pub struct UnifySummary {
    pub profile: PathBuf,
    pub parts: usize,
    pub call_paths: usize,
    pub locations: usize,
    /// Ranks of the job whose parts were not there (only with `require_all` false).
    pub missing_parts: Vec<u32>,
}

/// Merges the parts in `parts_dir` into `dir/profile.cubex`, never written through a symbolic
/// link (see [`Directory`]). `require_all`: every part the first one says the job has must be
/// there; otherwise the parts there are merged and the missing ones named.
pub fn unify_directory(
    dir: &Path,
    parts_dir: &Path,
    require_all: bool,
) -> Result<UnifySummary, String> {
    let found =
        parts(parts_dir).map_err(|e| format!("cannot list {}: {e}", parts_dir.display()))?;
    let mut read = Vec::new();
    for (rank, path) in &found {
        let part = crate::cube::read(path)
            .map_err(|e| format!("cannot read the profile part {}: {e}", path.display()))?;
        read.push((*rank, part));
    }
    let Some((_, first)) = read.first() else {
        return Err(format!(
            "{} holds no profile parts (<rank>.{PROFILE_FILE})",
            parts_dir.display()
        ));
    };
    let expected = attribute(first, PARTS_ATTRIBUTE)
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(read.len() as u32);
    let missing: Vec<u32> = (0..expected)
        .filter(|r| !read.iter().any(|(rank, _)| rank == r))
        .collect();
    if require_all && !missing.is_empty() {
        let ranks: Vec<String> = missing.iter().map(u32::to_string).collect();
        return Err(format!(
            "the profile parts of rank(s) {} are missing from {}",
            ranks.join(", "),
            parts_dir.display()
        ));
    }
    let merged = merge(read.into_iter().map(|(_, p)| p).collect());
    let path = dir.join(PROFILE_FILE);
    Directory::open(dir)
        .and_then(|out| merged.write_in(&out, PROFILE_FILE))
        .map_err(|e| format!("cannot write the profile {}: {e}", path.display()))?;
    Ok(UnifySummary {
        profile: path,
        parts: found.len(),
        call_paths: merged.cnodes.len(),
        locations: merged.location_count(),
        missing_parts: missing,
    })
}

fn attribute<'a>(profile: &'a Profile, key: &str) -> Option<&'a str> {
    profile
        .attributes
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// What makes two regions of different parts one region.
type RegionKey = (
    String,
    String,
    String,
    Option<u32>,
    Option<u32>,
    String,
    String,
);

fn region_key(r: &Region) -> RegionKey {
    (
        r.name.clone(),
        r.canonical_name.clone(),
        r.source_file.clone(),
        r.begin_line,
        r.end_line,
        r.paradigm.clone(),
        r.role.clone(),
    )
}

/// Merges profiles of processes (see the module documentation); the parts' own attributes
/// other than the part numbering are kept from the first.
pub fn merge(parts: Vec<Profile>) -> Profile {
    let mut out = Profile {
        attributes: parts
            .first()
            .map(|p| {
                p.attributes
                    .iter()
                    .filter(|(k, _)| k != PARTS_ATTRIBUTE && k != PART_ATTRIBUTE)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
        ..Profile::default()
    };
    // Metrics by unique name, in first-seen order (parents resolved by name too).
    let mut metric_index: HashMap<String, usize> = HashMap::new();
    for part in &parts {
        for m in &part.metrics {
            if metric_index.contains_key(&m.unique_name) {
                continue;
            }
            let parent = m
                .parent
                .and_then(|p| part.metrics.get(p))
                .and_then(|p| metric_index.get(&p.unique_name).copied());
            metric_index.insert(m.unique_name.clone(), out.metrics.len());
            out.metrics.push(Metric {
                parent,
                ..m.clone()
            });
        }
    }
    // Regions and call paths by content; per part, its cnode -> the merged one.
    let mut region_index: HashMap<RegionKey, usize> = HashMap::new();
    let mut cnode_index: HashMap<(Option<usize>, usize), usize> = HashMap::new();
    let mut cnode_maps = Vec::with_capacity(parts.len());
    for part in &parts {
        let mut map = Vec::with_capacity(part.cnodes.len());
        for cnode in &part.cnodes {
            let region = &part.regions[cnode.region];
            let r = *region_index.entry(region_key(region)).or_insert_with(|| {
                out.regions.push(region.clone());
                out.regions.len() - 1
            });
            let parent = cnode.parent.map(|p| map[p]);
            let c = *cnode_index.entry((parent, r)).or_insert_with(|| {
                out.cnodes.push(Cnode {
                    region: r,
                    parent,
                    line: cnode.line,
                });
                out.cnodes.len() - 1
            });
            map.push(c);
        }
        cnode_maps.push(map);
    }
    // The system tree: nodes of one class and name merged, groups in rank order.
    let mut tree: Vec<TreeNode> = Vec::new();
    for (p, part) in parts.iter().enumerate() {
        for node in &part.system {
            merge_system_node(&mut tree, node, p);
        }
    }
    // Columns: where each part's locations land in the merged location order (depth first,
    // a node's groups before its children, as `Profile::locations`).
    let mut columns: Vec<Vec<usize>> = vec![Vec::new(); parts.len()];
    let mut column = 0;
    out.system = finish_tree(tree, &mut |part, locations| {
        for _ in 0..locations {
            columns[part].push(column);
            column += 1;
        }
    });
    let width = column;
    let rows = out.cnodes.len();
    for metric in &out.metrics {
        let mut values = metric.data_type.zeros(rows * width);
        for (p, part) in parts.iter().enumerate() {
            let Some(m) = part
                .metrics
                .iter()
                .position(|pm| pm.unique_name == metric.unique_name)
            else {
                continue;
            };
            let local_width = part.location_count();
            let Some(local) = part.values.get(m) else {
                continue;
            };
            for (c, &merged_c) in cnode_maps[p].iter().enumerate() {
                for (l, &col) in columns[p].iter().enumerate().take(local_width) {
                    copy_value(
                        local,
                        c * local_width + l,
                        &mut values,
                        merged_c * width + col,
                    );
                }
            }
        }
        out.values.push(values);
    }
    out
}

/// `to[at] = from[index]` (the same call path of the same location is in one part only).
fn copy_value(from: &Values, index: usize, to: &mut Values, at: usize) {
    match (from, to) {
        (Values::U64(f), Values::U64(t)) => t[at] = f[index],
        (Values::I64(f), Values::I64(t)) => t[at] = f[index],
        (Values::F64(f), Values::F64(t)) => t[at] = f[index],
        (from, to) => {
            if let (Some(v), Values::F64(t)) = (from.get_f64(index), to) {
                t[at] = v;
            }
        }
    }
}

/// A system tree node while parts are merged: its groups with the part each came from.
struct TreeNode {
    node: SystemNode,
    groups: Vec<(usize, LocationGroup)>,
    children: Vec<TreeNode>,
}

/// Adds `node` of part `part` to `into`, merging with a node of the same class and name.
fn merge_system_node(into: &mut Vec<TreeNode>, node: &SystemNode, part: usize) {
    let i = match into
        .iter()
        .position(|n| n.node.class == node.class && n.node.name == node.name)
    {
        Some(i) => i,
        None => {
            into.push(TreeNode {
                node: SystemNode {
                    groups: Vec::new(),
                    children: Vec::new(),
                    ..node.clone()
                },
                groups: Vec::new(),
                children: Vec::new(),
            });
            into.len() - 1
        }
    };
    for group in &node.groups {
        let groups = &mut into[i].groups;
        let at = groups
            .iter()
            .position(|(_, g)| g.rank > group.rank)
            .unwrap_or(groups.len());
        groups.insert(at, (part, group.clone()));
    }
    for child in &node.children {
        merge_system_node(&mut into[i].children, child, part);
    }
}

/// The merged tree as CUBE system nodes; `column(part, locations)` is called for every group
/// in the order of the location columns.
fn finish_tree(tree: Vec<TreeNode>, column: &mut dyn FnMut(usize, usize)) -> Vec<SystemNode> {
    tree.into_iter()
        .map(|t| {
            let mut node = t.node;
            for (part, group) in t.groups {
                column(part, group.locations.len());
                node.groups.push(group);
            }
            node.children = finish_tree(t.children, column);
            node
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{
        DataType, Location, LocationGroup, LocationGroupKind, LocationKind, MetricKind,
    };

    fn region(name: &str) -> Region {
        Region {
            name: name.into(),
            canonical_name: name.into(),
            source_file: "a.c".into(),
            begin_line: Some(1),
            end_line: Some(2),
            paradigm: "openmp".into(),
            role: "parallel".into(),
            description: String::new(),
        }
    }

    /// A rank's profile: program root and `paths` below it (region names), one thread each
    /// with `visits` and `seconds` per path.
    fn part(rank: u32, host: &str, paths: &[(&str, u64, f64)], extra_metric: bool) -> Profile {
        let mut regions = vec![region("prog")];
        let mut cnodes = vec![Cnode {
            region: 0,
            parent: None,
            line: None,
        }];
        for (name, _, _) in paths {
            regions.push(region(name));
            cnodes.push(Cnode {
                region: regions.len() - 1,
                parent: Some(0),
                line: None,
            });
        }
        let mut metrics = Metric::scorep_defaults()[..2].to_vec();
        let mut values = vec![
            Values::U64(
                std::iter::once(1)
                    .chain(paths.iter().map(|p| p.1))
                    .collect(),
            ),
            Values::F64(
                std::iter::once(9.0)
                    .chain(paths.iter().map(|p| p.2))
                    .collect(),
            ),
        ];
        if extra_metric {
            metrics.push(Metric {
                unique_name: "faults".into(),
                display_name: "faults".into(),
                unit: "#".into(),
                description: String::new(),
                data_type: DataType::U64,
                kind: MetricKind::Inclusive,
                parent: None,
            });
            values.push(Values::U64(vec![7; paths.len() + 1]));
        }
        Profile {
            attributes: vec![
                (PARTS_ATTRIBUTE.into(), "2".into()),
                (PART_ATTRIBUTE.into(), rank.to_string()),
            ],
            metrics,
            regions,
            cnodes,
            system: vec![SystemNode {
                name: "machine Linux".into(),
                class: "machine".into(),
                children: vec![SystemNode {
                    name: format!("node {host}"),
                    class: "node".into(),
                    groups: vec![LocationGroup {
                        name: format!("MPI Rank {rank}"),
                        rank,
                        kind: LocationGroupKind::Process,
                        locations: vec![Location {
                            name: "Master thread".into(),
                            rank: 0,
                            kind: LocationKind::Thread,
                        }],
                    }],
                    ..SystemNode::default()
                }],
                ..SystemNode::default()
            }],
            values,
        }
    }

    #[test]
    fn parts_merge_by_call_path_with_their_ranks_as_processes_in_rank_order() {
        let one = part(1, "h", &[("b", 2, 0.5), ("a", 3, 1.5)], false);
        let zero = part(0, "h", &[("a", 4, 2.5)], true);
        let merged = merge(vec![one, zero]);
        merged.validate().unwrap();
        assert!(merged.attributes.is_empty());
        let names: Vec<&str> = merged
            .cnodes
            .iter()
            .map(|c| merged.regions[c.region].name.as_str())
            .collect();
        assert_eq!(names, ["prog", "b", "a"]);
        let groups: Vec<&str> = merged
            .location_groups()
            .iter()
            .map(|g| g.name.as_str())
            .collect();
        assert_eq!(groups, ["MPI Rank 0", "MPI Rank 1"]);
        let (visits, time) = (
            merged.metric_index("visits").unwrap(),
            merged.metric_index("time").unwrap(),
        );
        // Column 0 is rank 0, column 1 rank 1.
        assert_eq!(merged.value(visits, 2, 0), Some(4.0));
        assert_eq!(merged.value(visits, 2, 1), Some(3.0));
        assert_eq!(merged.value(visits, 1, 0), Some(0.0));
        assert_eq!(merged.value(time, 1, 1), Some(0.5));
        // A metric only rank 0 had reads 0 on rank 1.
        let faults = merged.metric_index("faults").unwrap();
        assert_eq!(merged.value(faults, 2, 0), Some(7.0));
        assert_eq!(merged.value(faults, 2, 1), Some(0.0));
    }

    #[test]
    fn ranks_on_other_hosts_get_their_own_node_and_a_missing_rank_is_named() {
        let dir = crate::test_dir("profile-unify");
        let parts_dir = dir.join("ranks");
        std::fs::create_dir_all(&parts_dir).unwrap();
        part(0, "h0", &[("a", 1, 1.0)], false)
            .write(&part_path(&parts_dir, 0))
            .unwrap();
        assert!(!all_parts_written(&parts_dir, 2));
        let error = unify_directory(&dir, &parts_dir, true).unwrap_err();
        assert!(error.contains("rank(s) 1 are missing"), "{error}");
        let summary = unify_directory(&dir, &parts_dir, false).unwrap();
        assert_eq!(summary.missing_parts, [1]);
        part(1, "h1", &[("a", 1, 1.0)], false)
            .write(&part_path(&parts_dir, 1))
            .unwrap();
        assert!(all_parts_written(&parts_dir, 2));
        std::fs::remove_file(dir.join(PROFILE_FILE)).unwrap();
        let summary = unify_directory(&dir, &parts_dir, true).unwrap();
        assert_eq!((summary.parts, summary.locations), (2, 2));
        let merged = crate::cube::read(&summary.profile).unwrap();
        let nodes: Vec<&str> = merged.system[0]
            .children
            .iter()
            .map(|n| n.name.as_str())
            .collect();
        assert_eq!(nodes, ["node h0", "node h1"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
