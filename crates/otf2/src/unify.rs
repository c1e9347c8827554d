//! Unification: several processes of one job each wrote their event files into one archive
//! directory and their definitions, with ids of their own, as a *part* (`PARTS/<n>.otf2` and
//! `PARTS/<n>.def`, a small archive without events). This merges the parts' definitions into
//! the archive's global definitions and writes, per location, the mapping tables that translate
//! its part's ids (strings, regions, attributes, groups, comms, parameters) and the part's
//! clock offsets, then the anchor. Event files are never rewritten.
//!
//! Equal definitions of different parts become one (the same region, string, system tree node,
//! communicator seen by every process); locations keep their ids (they are unique in the job);
//! each part's location groups stay its own. A `COMM_LOCATIONS` group is the union over the
//! parts (part order), and the `COMM_GROUP` members, positions in that group, are re-counted.

use std::collections::HashMap;
use std::hash::Hash;
use std::io;
use std::path::{Path, PathBuf};

use super::archive::{ArchiveConfig, ArchiveWriter};
use super::reader::ArchiveReader;
use super::types::*;
use super::{GlobalDef, LocalDef};

/// Where the processes of a job put their parts, inside the archive's directory.
pub const PARTS_DIR: &str = "ranks";
/// Anchor property of a part: how many parts the job has (`PARTS/0..N`).
pub const PARTS_PROPERTY: &str = "UNIFY::PARTS";
/// Anchor property of a part: its own index.
pub const PART_PROPERTY: &str = "UNIFY::PART";

/// One process's definitions.
#[derive(Clone, Debug, Default)]
pub struct Part {
    pub defs: Vec<GlobalDef>,
    /// Clock offsets that hold for every location of the part.
    pub clock_offsets: Vec<LocalDef>,
}

/// The merged definitions, in an order every reader accepts, and per part the local
/// definitions its locations get.
#[derive(Debug)]
pub struct Unified {
    pub defs: Vec<GlobalDef>,
    pub locations: Vec<Vec<u64>>,
    pub local_defs: Vec<Vec<LocalDef>>,
    /// Definitions of kinds this unifier does not merge (left out).
    pub skipped: usize,
    /// Locations that a part's groups name but no part defines (its process wrote no
    /// definitions): defined here without events, so that ranks still index the groups.
    pub placeholders: Vec<u64>,
}

/// Local → global ids of one kind, in one part.
#[derive(Default)]
struct IdMapBuilder(Vec<(u32, u32)>, HashMap<u32, u32>);

impl IdMapBuilder {
    fn insert(&mut self, local: u32, global: u32) {
        self.0.push((local, global));
        self.1.insert(local, global);
    }
    fn get(&self, local: u32, what: &str) -> Result<u32, String> {
        if local == UNDEFINED_U32 {
            return Ok(UNDEFINED_U32);
        }
        self.1
            .get(&local)
            .copied()
            .ok_or_else(|| format!("{what} {local} is used before it is defined"))
    }
    /// None when the map changes nothing.
    fn table(&self, mapping_type: MappingType) -> Option<LocalDef> {
        if self.0.iter().all(|(l, g)| l == g) {
            return None;
        }
        let mut pairs = self.0.clone();
        pairs.sort_unstable();
        let dense = pairs.iter().enumerate().all(|(i, (l, _))| *l as usize == i);
        let map = if dense {
            IdMap::Dense(pairs.iter().map(|&(_, g)| u64::from(g)).collect())
        } else {
            IdMap::Sparse(
                pairs
                    .iter()
                    .map(|&(l, g)| (u64::from(l), u64::from(g)))
                    .collect(),
            )
        };
        Some(LocalDef::MappingTable { mapping_type, map })
    }
}

/// Assigns global ids to distinct keys, in order of first appearance.
struct Interner<K> {
    ids: HashMap<K, u32>,
}

impl<K: Eq + Hash> Interner<K> {
    fn new() -> Self {
        Self {
            ids: HashMap::new(),
        }
    }
    /// The global id of `key`; a new key's global definition, `def(global id, key)`, goes to
    /// `out`.
    fn intern(
        &mut self,
        key: K,
        out: &mut Vec<GlobalDef>,
        def: impl FnOnce(u32, &K) -> GlobalDef,
    ) -> u32 {
        let next = self.ids.len() as u32;
        match self.ids.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => *e.get(),
            std::collections::hash_map::Entry::Vacant(e) => {
                out.push(def(next, e.key()));
                e.insert(next);
                next
            }
        }
    }

    /// One local definition: `intern`, and the local id maps to the global one.
    fn unify(
        &mut self,
        key: K,
        local: u32,
        map: &mut IdMapBuilder,
        out: &mut Vec<GlobalDef>,
        def: impl FnOnce(u32, &K) -> GlobalDef,
    ) {
        map.insert(local, self.intern(key, out, def));
    }
}

/// The output, by section: the order in which a reader needs them.
#[derive(Default)]
struct Sections {
    strings: Vec<GlobalDef>,
    paradigms: Vec<GlobalDef>,
    attributes: Vec<GlobalDef>,
    tree: Vec<GlobalDef>,
    tree_extra: Vec<GlobalDef>,
    groups_of_locations: Vec<GlobalDef>,
    locations: Vec<GlobalDef>,
    regions: Vec<GlobalDef>,
    groups: Vec<GlobalDef>,
    comms: Vec<GlobalDef>,
    parameters: Vec<GlobalDef>,
}

/// Merges the parts (in part order: their location groups keep that order).
pub fn unify(parts: &[Part]) -> Result<Unified, String> {
    let mut out = Sections::default();
    let mut clock: Option<(u64, i128, i128, u64)> = None; // resolution, start, end, realtime
    let mut strings = Interner::<String>::new();
    let mut paradigms = HashMap::<u8, ()>::new();
    let mut paradigm_properties = HashMap::<(u8, u8), ()>::new();
    let mut attributes = Interner::<(u32, u32, u8)>::new();
    let mut tree_nodes = Interner::<(u32, u32, u32)>::new();
    let mut tree_extra = HashMap::<(u32, u32, u8), ()>::new();
    let mut regions = Interner::<[u32; 9]>::new();
    let mut groups = Interner::<(u32, u8, u8, u32, Vec<u64>)>::new();
    let mut comms = Interner::<(u32, u32, u32, u32)>::new();
    let mut parameters = Interner::<(u32, u8)>::new();
    let mut location_groups = 0u32;
    let mut seen_locations = HashMap::<u64, usize>::new();
    let mut skipped = 0;

    // Every part's COMM_LOCATIONS groups first: COMM_GROUP members count positions in the
    // merged ones.
    let defined: std::collections::HashSet<u64> = parts
        .iter()
        .flat_map(|p| p.defs.iter())
        .filter_map(|d| match d {
            GlobalDef::Location { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    let mut comm_locations: Vec<(Paradigm, Vec<u64>)> = Vec::new();
    for part in parts {
        for def in &part.defs {
            if let GlobalDef::Group {
                group_type: GroupType::COMM_LOCATIONS,
                paradigm,
                members,
                ..
            } = def
            {
                let index = match comm_locations.iter().position(|(p, _)| p == paradigm) {
                    Some(i) => i,
                    None => {
                        comm_locations.push((*paradigm, Vec::new()));
                        comm_locations.len() - 1
                    }
                };
                let merged = &mut comm_locations[index].1;
                for m in members {
                    if !merged.contains(m) {
                        merged.push(*m);
                    }
                }
            }
        }
    }
    let position_in = |paradigm: Paradigm, location: u64| -> Option<u64> {
        let (_, members) = comm_locations.iter().find(|(p, _)| *p == paradigm)?;
        members
            .iter()
            .position(|&m| m == location)
            .map(|p| p as u64)
    };

    let mut locations = Vec::new();
    let mut local_defs = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        let mut s = IdMapBuilder::default();
        let mut attribute_map = IdMapBuilder::default();
        let mut tree_map = IdMapBuilder::default();
        let mut group_of_locations_map = IdMapBuilder::default();
        let mut region_map = IdMapBuilder::default();
        let mut group_map = IdMapBuilder::default();
        let mut comm_map = IdMapBuilder::default();
        let mut parameter_map = IdMapBuilder::default();
        let mut part_locations = Vec::new();
        // This part's own COMM_LOCATIONS members, to turn its COMM_GROUP positions into
        // locations.
        let mut own_comm_locations: HashMap<u8, Vec<u64>> = HashMap::new();
        let string_value = |s: &IdMapBuilder, v: TypedValue| -> Result<TypedValue, String> {
            Ok(if v.value_type == Type::STRING {
                TypedValue::new(Type::STRING, u64::from(s.get(v.raw as u32, "string")?))
            } else {
                v
            })
        };
        for def in &part.defs {
            match def {
                GlobalDef::ClockProperties {
                    timer_resolution,
                    global_offset,
                    trace_length,
                    realtime_timestamp,
                } => {
                    let (low, high) = offset_bounds(&part.clock_offsets);
                    let start = i128::from(*global_offset) + low;
                    let end = i128::from(*global_offset) + i128::from(*trace_length) + high;
                    clock = Some(match clock {
                        None => (*timer_resolution, start, end, *realtime_timestamp),
                        Some((resolution, _, _, _)) if resolution != *timer_resolution => {
                            return Err(format!(
                                "part {index} has a timer resolution of {timer_resolution} ticks/s, another one {resolution}: their clocks cannot be merged"
                            ));
                        }
                        Some((r, s0, e0, rt0)) => (
                            r,
                            s0.min(start),
                            e0.max(end),
                            if start < s0 { *realtime_timestamp } else { rt0 },
                        ),
                    });
                }
                GlobalDef::String { id, string } => {
                    strings.unify(
                        string.clone(),
                        *id,
                        &mut s,
                        &mut out.strings,
                        |id, string| GlobalDef::String {
                            id,
                            string: string.clone(),
                        },
                    );
                }
                GlobalDef::Paradigm {
                    paradigm,
                    name,
                    paradigm_class,
                } => {
                    if paradigms.insert(paradigm.0, ()).is_none() {
                        out.paradigms.push(GlobalDef::Paradigm {
                            paradigm: *paradigm,
                            name: s.get(*name, "string")?,
                            paradigm_class: *paradigm_class,
                        });
                    }
                }
                GlobalDef::ParadigmProperty {
                    paradigm,
                    property,
                    value,
                } => {
                    if paradigm_properties
                        .insert((paradigm.0, property.0), ())
                        .is_none()
                    {
                        out.paradigms.push(GlobalDef::ParadigmProperty {
                            paradigm: *paradigm,
                            property: *property,
                            value: string_value(&s, *value)?,
                        });
                    }
                }
                GlobalDef::Attribute {
                    id,
                    name,
                    description,
                    attribute_type,
                } => {
                    let (name, description) =
                        (s.get(*name, "string")?, s.get(*description, "string")?);
                    let key = (name, description, attribute_type.0);
                    attributes.unify(
                        key,
                        *id,
                        &mut attribute_map,
                        &mut out.attributes,
                        |id, _| GlobalDef::Attribute {
                            id,
                            name,
                            description,
                            attribute_type: *attribute_type,
                        },
                    );
                }
                GlobalDef::SystemTreeNode {
                    id,
                    name,
                    class_name,
                    parent,
                } => {
                    let key = (
                        s.get(*name, "string")?,
                        s.get(*class_name, "string")?,
                        tree_map.get(*parent, "system tree node")?,
                    );
                    tree_nodes.unify(key, *id, &mut tree_map, &mut out.tree, |id, key| {
                        GlobalDef::SystemTreeNode {
                            id,
                            name: key.0,
                            class_name: key.1,
                            parent: key.2,
                        }
                    });
                }
                GlobalDef::SystemTreeNodeDomain { node, domain } => {
                    let node = tree_map.get(*node, "system tree node")?;
                    if tree_extra
                        .insert((node, u32::from(domain.0), 0), ())
                        .is_none()
                    {
                        out.tree_extra.push(GlobalDef::SystemTreeNodeDomain {
                            node,
                            domain: *domain,
                        });
                    }
                }
                GlobalDef::SystemTreeNodeProperty { node, name, value } => {
                    let node = tree_map.get(*node, "system tree node")?;
                    let name = s.get(*name, "string")?;
                    if tree_extra.insert((node, name, 1), ()).is_none() {
                        out.tree_extra.push(GlobalDef::SystemTreeNodeProperty {
                            node,
                            name,
                            value: string_value(&s, *value)?,
                        });
                    }
                }
                GlobalDef::LocationGroup {
                    id,
                    name,
                    location_group_type,
                    system_tree_parent,
                    creating_location_group,
                } => {
                    let global = location_groups;
                    location_groups += 1;
                    group_of_locations_map.insert(*id, global);
                    out.groups_of_locations.push(GlobalDef::LocationGroup {
                        id: global,
                        name: s.get(*name, "string")?,
                        location_group_type: *location_group_type,
                        system_tree_parent: tree_map
                            .get(*system_tree_parent, "system tree node")?,
                        creating_location_group: group_of_locations_map
                            .get(*creating_location_group, "location group")?,
                    });
                }
                GlobalDef::LocationGroupProperty {
                    location_group,
                    name,
                    value,
                } => out
                    .groups_of_locations
                    .push(GlobalDef::LocationGroupProperty {
                        location_group: group_of_locations_map
                            .get(*location_group, "location group")?,
                        name: s.get(*name, "string")?,
                        value: string_value(&s, *value)?,
                    }),
                GlobalDef::Location {
                    id,
                    name,
                    location_type,
                    number_of_events,
                    location_group,
                } => {
                    if let Some(other) = seen_locations.insert(*id, index) {
                        return Err(format!(
                            "location {id} is defined by parts {other} and {index} (are they of one job?)"
                        ));
                    }
                    part_locations.push(*id);
                    out.locations.push(GlobalDef::Location {
                        id: *id,
                        name: s.get(*name, "string")?,
                        location_type: *location_type,
                        number_of_events: *number_of_events,
                        location_group: group_of_locations_map
                            .get(*location_group, "location group")?,
                    });
                }
                GlobalDef::LocationProperty {
                    location,
                    name,
                    value,
                } => out.locations.push(GlobalDef::LocationProperty {
                    location: *location,
                    name: s.get(*name, "string")?,
                    value: string_value(&s, *value)?,
                }),
                GlobalDef::Region {
                    id,
                    name,
                    canonical_name,
                    description,
                    region_role,
                    paradigm,
                    region_flags,
                    source_file,
                    begin_line,
                    end_line,
                } => {
                    let key = [
                        s.get(*name, "string")?,
                        s.get(*canonical_name, "string")?,
                        s.get(*description, "string")?,
                        u32::from(region_role.0),
                        u32::from(paradigm.0),
                        region_flags.0,
                        s.get(*source_file, "string")?,
                        *begin_line,
                        *end_line,
                    ];
                    regions.unify(key, *id, &mut region_map, &mut out.regions, |id, key| {
                        GlobalDef::Region {
                            id,
                            name: key[0],
                            canonical_name: key[1],
                            description: key[2],
                            region_role: *region_role,
                            paradigm: *paradigm,
                            region_flags: *region_flags,
                            source_file: key[6],
                            begin_line: *begin_line,
                            end_line: *end_line,
                        }
                    });
                }
                GlobalDef::Group {
                    id,
                    name,
                    group_type,
                    paradigm,
                    group_flags,
                    members,
                } => {
                    let members: Vec<u64> = match *group_type {
                        GroupType::COMM_LOCATIONS => {
                            own_comm_locations.insert(paradigm.0, members.clone());
                            comm_locations
                                .iter()
                                .find(|(p, _)| p == paradigm)
                                .map(|(_, m)| m.clone())
                                .unwrap_or_default()
                        }
                        GroupType::COMM_GROUP => {
                            let own = own_comm_locations.get(&paradigm.0).ok_or_else(|| {
                                format!("group {id} comes before its COMM_LOCATIONS group")
                            })?;
                            members
                                .iter()
                                .filter_map(|&m| own.get(m as usize))
                                .filter_map(|&location| position_in(*paradigm, location))
                                .collect()
                        }
                        GroupType::REGIONS => members
                            .iter()
                            .map(|&r| region_map.get(r as u32, "region").map(u64::from))
                            .collect::<Result<_, _>>()?,
                        _ => members.clone(),
                    };
                    let key = (
                        s.get(*name, "string")?,
                        group_type.0,
                        paradigm.0,
                        group_flags.0,
                        members,
                    );
                    groups.unify(key, *id, &mut group_map, &mut out.groups, |id, key| {
                        GlobalDef::Group {
                            id,
                            name: key.0,
                            group_type: *group_type,
                            paradigm: *paradigm,
                            group_flags: *group_flags,
                            members: key.4.clone(),
                        }
                    });
                }
                GlobalDef::Comm {
                    id,
                    name,
                    group,
                    parent,
                    flags,
                } => {
                    let key = (
                        s.get(*name, "string")?,
                        group_map.get(*group, "group")?,
                        comm_map.get(*parent, "comm")?,
                        flags.0,
                    );
                    comms.unify(key, *id, &mut comm_map, &mut out.comms, |id, key| {
                        GlobalDef::Comm {
                            id,
                            name: key.0,
                            group: key.1,
                            parent: key.2,
                            flags: *flags,
                        }
                    });
                }
                GlobalDef::Parameter {
                    id,
                    name,
                    parameter_type,
                } => {
                    let key = (s.get(*name, "string")?, parameter_type.0);
                    parameters.unify(
                        key,
                        *id,
                        &mut parameter_map,
                        &mut out.parameters,
                        |id, key| GlobalDef::Parameter {
                            id,
                            name: key.0,
                            parameter_type: *parameter_type,
                        },
                    );
                }
                _ => skipped += 1,
            }
        }
        let mut defs: Vec<LocalDef> = [
            s.table(MappingType::STRING),
            attribute_map.table(MappingType::ATTRIBUTE),
            region_map.table(MappingType::REGION),
            group_map.table(MappingType::GROUP),
            comm_map.table(MappingType::COMM),
            parameter_map.table(MappingType::PARAMETER),
        ]
        .into_iter()
        .flatten()
        .collect();
        defs.extend(part.clock_offsets.iter().cloned());
        locations.push(part_locations);
        local_defs.push(defs);
    }
    let mut placeholders: Vec<u64> = Vec::new();
    for (_, members) in &comm_locations {
        for m in members {
            if !defined.contains(m) && !placeholders.contains(m) {
                placeholders.push(*m);
            }
        }
    }
    for &location in &placeholders {
        let mut string = |text: String| {
            strings.intern(text, &mut out.strings, |id, text| GlobalDef::String {
                id,
                string: text.clone(),
            })
        };
        let name = string(format!("location {location} (no definitions were written)"));
        let group_name = string(format!("process of location {location} (no definitions)"));
        out.groups_of_locations.push(GlobalDef::LocationGroup {
            id: location_groups,
            name: group_name,
            location_group_type: LocationGroupType::PROCESS,
            system_tree_parent: if tree_nodes.ids.is_empty() {
                UNDEFINED_U32
            } else {
                0
            },
            creating_location_group: UNDEFINED_U32,
        });
        out.locations.push(GlobalDef::Location {
            id: location,
            name,
            location_type: LocationType::CPU_THREAD,
            number_of_events: 0,
            location_group: location_groups,
        });
        location_groups += 1;
    }
    let (resolution, start, end, realtime) =
        clock.ok_or("no part has clock properties (no definitions were written)")?;
    let start = start.max(0);
    let mut defs = vec![GlobalDef::ClockProperties {
        timer_resolution: resolution,
        global_offset: start as u64,
        trace_length: (end - start).max(0) as u64,
        realtime_timestamp: realtime,
    }];
    for section in [
        out.strings,
        out.paradigms,
        out.attributes,
        out.tree,
        out.tree_extra,
        out.groups_of_locations,
        out.locations,
        out.regions,
        out.groups,
        out.comms,
        out.parameters,
    ] {
        defs.extend(section);
    }
    Ok(Unified {
        defs,
        locations,
        local_defs,
        skipped,
        placeholders,
    })
}

/// The most negative and most positive clock offset of a part (0 when it has none).
fn offset_bounds(offsets: &[LocalDef]) -> (i128, i128) {
    offsets.iter().fold((0, 0), |(low, high), d| match d {
        LocalDef::ClockOffset { offset, .. } => {
            (low.min(i128::from(*offset)), high.max(i128::from(*offset)))
        }
        _ => (low, high),
    })
}

/// What [`unify_directory`] did.
#[derive(Debug)]
pub struct UnifySummary {
    pub anchor: PathBuf,
    pub parts: usize,
    pub locations: usize,
    /// Parts the job should have had but that wrote no definitions (their events are left out).
    pub missing_parts: Vec<u32>,
    pub skipped_definitions: usize,
}

/// The part anchors in `parts_dir` (`<n>.otf2`), by index.
pub fn part_anchors(parts_dir: &Path) -> io::Result<Vec<(u32, PathBuf)>> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(parts_dir)?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let index = name.strip_suffix(".otf2")?.parse().ok()?;
            Some((index, e.path()))
        })
        .collect();
    found.sort();
    Ok(found)
}

/// The number of parts a part's anchor says the job has.
fn expected_parts(reader: &ArchiveReader) -> Option<u32> {
    reader
        .anchor()
        .properties
        .iter()
        .find(|(k, _)| k == PARTS_PROPERTY)
        .and_then(|(_, v)| v.parse().ok())
}

/// Whether every part of the job has written its definitions.
pub fn all_parts_written(parts_dir: &Path) -> bool {
    let Ok(found) = part_anchors(parts_dir) else {
        return false;
    };
    let Some(Ok(first)) = found.first().map(|(_, p)| ArchiveReader::open(p)) else {
        return false;
    };
    expected_parts(&first)
        .is_some_and(|n| (0..n).all(|i| found.iter().any(|(index, _)| *index == i)))
}

/// Unifies the parts in `parts_dir` into the archive `dir/name.otf2`, whose event files the
/// parts' processes wrote into `dir/name/`. The anchor's metadata comes from the first part.
pub fn unify_directory(dir: &Path, name: &str, parts_dir: &Path) -> Result<UnifySummary, String> {
    let anchors =
        part_anchors(parts_dir).map_err(|e| format!("cannot list {}: {e}", parts_dir.display()))?;
    if anchors.is_empty() {
        return Err(format!(
            "{} holds no part definitions (<n>.otf2)",
            parts_dir.display()
        ));
    }
    let mut parts = Vec::new();
    let mut first: Option<ArchiveReader> = None;
    let mut expected = 0;
    for (_, path) in &anchors {
        let reader = ArchiveReader::open(path).map_err(|e| e.to_string())?;
        let defs = reader.global_defs().map_err(|e| e.to_string())?;
        // A part's clock offsets are the local definitions of its first location.
        let first_location = defs.iter().find_map(|d| match d {
            GlobalDef::Location { id, .. } => Some(*id),
            _ => None,
        });
        let clock_offsets = match first_location {
            Some(l) => reader
                .local_defs(l)
                .map_err(|e| e.to_string())?
                .into_iter()
                .filter(|d| matches!(d, LocalDef::ClockOffset { .. }))
                .collect(),
            None => Vec::new(),
        };
        expected = expected.max(expected_parts(&reader).unwrap_or(0));
        parts.push(Part {
            defs,
            clock_offsets,
        });
        first.get_or_insert(reader);
    }
    let first = first.expect("at least one part");
    let missing_parts: Vec<u32> = (0..expected)
        .filter(|i| !anchors.iter().any(|(index, _)| index == i))
        .collect();
    let unified = unify(&parts)?;

    let anchor = first.anchor();
    let config = ArchiveConfig {
        event_chunk_size: anchor.event_chunk_size as usize,
        def_chunk_size: anchor.def_chunk_size as usize,
        machine_name: anchor.machine_name.clone(),
        creator: anchor.creator.clone(),
        description: anchor.description.clone(),
        properties: anchor
            .properties
            .iter()
            .filter(|(k, _)| k != PARTS_PROPERTY && k != PART_PROPERTY)
            .cloned()
            .collect(),
        trace_id: anchor.trace_id,
    };
    let archive = ArchiveWriter::create(dir, name, config).map_err(|e| e.to_string())?;
    for (part_locations, local) in unified.locations.iter().zip(&unified.local_defs) {
        for &location in part_locations {
            let mut writer = archive.local_def_writer();
            for def in local {
                writer.write(def);
            }
            archive
                .write_local_defs(location, writer)
                .map_err(|e| format!("writing the local definitions of {location}: {e}"))?;
        }
    }
    let mut writer = archive.global_def_writer();
    for def in &unified.defs {
        writer.write(def);
    }
    for &location in &unified.placeholders {
        // What the lost process recorded cannot be read without its definitions; kept aside.
        let events = archive.event_path(location);
        if events.exists() {
            let _ = std::fs::rename(&events, events.with_extension("evt.lost"));
        }
    }
    let all: Vec<u64> = unified
        .locations
        .iter()
        .flatten()
        .chain(&unified.placeholders)
        .copied()
        .collect();
    let anchor_path = archive.anchor_path();
    archive
        .finish(writer, &all)
        .map_err(|e| format!("writing {} failed: {e}", anchor_path.display()))?;
    Ok(UnifySummary {
        anchor: anchor_path,
        parts: parts.len(),
        locations: all.len() - unified.placeholders.len(),
        missing_parts,
        skipped_definitions: unified.skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(id: u32, s: &str) -> GlobalDef {
        GlobalDef::String {
            id,
            string: s.into(),
        }
    }

    /// A process with one thread location per `threads`, one OpenMP team of all of them and a
    /// region; `order` lists the strings in the order this process defined them.
    fn part(rank: u64, threads: u64, order: &[&str], offset: u64) -> Part {
        let id = |s: &str| order.iter().position(|o| *o == s).unwrap() as u32;
        let mut defs = vec![GlobalDef::ClockProperties {
            timer_resolution: 1_000_000_000,
            global_offset: offset,
            trace_length: 100,
            realtime_timestamp: offset,
        }];
        defs.extend(order.iter().enumerate().map(|(i, s)| string(i as u32, s)));
        defs.push(GlobalDef::SystemTreeNode {
            id: 0,
            name: id("host"),
            class_name: id("node"),
            parent: UNDEFINED_U32,
        });
        defs.push(GlobalDef::LocationGroup {
            id: 0,
            name: id("rank"),
            location_group_type: LocationGroupType::PROCESS,
            system_tree_parent: 0,
            creating_location_group: UNDEFINED_U32,
        });
        let locations: Vec<u64> = (0..threads).map(|t| (t << 32) | rank).collect();
        for &l in &locations {
            defs.push(GlobalDef::Location {
                id: l,
                name: id("thread"),
                location_type: LocationType::CPU_THREAD,
                number_of_events: 2,
                location_group: 0,
            });
        }
        defs.push(GlobalDef::Region {
            id: 0,
            name: id("region"),
            canonical_name: id("region"),
            description: id(""),
            region_role: RegionRole::FUNCTION,
            paradigm: Paradigm::USER,
            region_flags: RegionFlag::NONE,
            source_file: id(""),
            begin_line: 0,
            end_line: 0,
        });
        defs.push(GlobalDef::Group {
            id: 0,
            name: id(""),
            group_type: GroupType::COMM_LOCATIONS,
            paradigm: Paradigm::OPENMP,
            group_flags: GroupFlag::NONE,
            members: locations.clone(),
        });
        defs.push(GlobalDef::Group {
            id: 1,
            name: id(""),
            group_type: GroupType::COMM_GROUP,
            paradigm: Paradigm::OPENMP,
            group_flags: GroupFlag::NONE,
            members: (0..threads).collect(),
        });
        defs.push(GlobalDef::Comm {
            id: 0,
            name: UNDEFINED_U32,
            group: 1,
            parent: UNDEFINED_U32,
            flags: CommFlag::NONE,
        });
        Part {
            defs,
            clock_offsets: Vec::new(),
        }
    }

    #[test]
    fn equal_definitions_merge_and_positions_are_recounted() {
        let a = part(0, 2, &["", "host", "node", "rank", "thread", "region"], 10);
        let b = part(1, 2, &["region", "thread", "rank", "node", "host", ""], 5);
        let u = unify(&[a, b]).unwrap();
        let count = |f: fn(&GlobalDef) -> bool| u.defs.iter().filter(|d| f(d)).count();
        assert_eq!(count(|d| matches!(d, GlobalDef::String { .. })), 6);
        assert_eq!(count(|d| matches!(d, GlobalDef::Region { .. })), 1);
        assert_eq!(count(|d| matches!(d, GlobalDef::SystemTreeNode { .. })), 1);
        assert_eq!(count(|d| matches!(d, GlobalDef::LocationGroup { .. })), 2);
        assert_eq!(count(|d| matches!(d, GlobalDef::Location { .. })), 4);
        assert_eq!(count(|d| matches!(d, GlobalDef::Comm { .. })), 2);
        assert!(matches!(
            u.defs[0],
            GlobalDef::ClockProperties {
                global_offset: 5,
                trace_length: 105,
                ..
            }
        ));
        let groups: Vec<&Vec<u64>> = u
            .defs
            .iter()
            .filter_map(|d| match d {
                GlobalDef::Group { members, .. } => Some(members),
                _ => None,
            })
            .collect();
        assert_eq!(groups[0], &vec![0, 1 << 32, 1, (1 << 32) | 1]);
        assert_eq!(groups[1], &vec![0, 1]);
        assert_eq!(
            groups[2],
            &vec![2, 3],
            "the second team's positions follow the first's"
        );
        // The first part defined everything first: no tables. The second maps all strings
        // (in reverse), and its group and comm ids.
        assert!(u.local_defs[0].is_empty(), "{:?}", u.local_defs[0]);
        assert!(u.local_defs[1].contains(&LocalDef::MappingTable {
            mapping_type: MappingType::STRING,
            map: IdMap::Dense(vec![5, 4, 3, 2, 1, 0]),
        }));
        assert!(u.local_defs[1].contains(&LocalDef::MappingTable {
            mapping_type: MappingType::COMM,
            map: IdMap::Dense(vec![1]),
        }));
        assert_eq!(u.locations, vec![vec![0, 1 << 32], vec![1, (1 << 32) | 1]]);
    }

    #[test]
    fn members_of_a_lost_part_get_placeholder_locations() {
        let mut a = part(0, 1, &["", "host", "node", "rank", "thread", "region"], 0);
        // The process's view of a two-process group: itself and location 1, whose part is lost.
        a.defs.push(GlobalDef::Group {
            id: 7,
            name: 0,
            group_type: GroupType::COMM_LOCATIONS,
            paradigm: Paradigm::MPI,
            group_flags: GroupFlag::NONE,
            members: vec![0, 1],
        });
        a.defs.push(GlobalDef::Group {
            id: 8,
            name: 0,
            group_type: GroupType::COMM_GROUP,
            paradigm: Paradigm::MPI,
            group_flags: GroupFlag::NONE,
            members: vec![0, 1],
        });
        let u = unify(&[a]).unwrap();
        assert_eq!(u.placeholders, vec![1]);
        assert!(u.defs.iter().any(|d| matches!(
            d,
            GlobalDef::Location {
                id: 1,
                number_of_events: 0,
                location_group: 1,
                ..
            }
        )));
        let world = u.defs.iter().find_map(|d| match d {
            GlobalDef::Group {
                group_type: GroupType::COMM_GROUP,
                paradigm: Paradigm::MPI,
                members,
                ..
            } => Some(members.clone()),
            _ => None,
        });
        assert_eq!(world, Some(vec![0, 1]), "ranks keep indexing the group");
    }

    #[test]
    fn clashing_locations_and_clocks_are_errors() {
        let a = part(0, 1, &["", "host", "node", "rank", "thread", "region"], 0);
        let err = unify(&[a.clone(), a.clone()]).unwrap_err();
        assert!(
            err.contains("location 0 is defined by parts 0 and 1"),
            "{err}"
        );
        let mut b = part(1, 1, &["", "host", "node", "rank", "thread", "region"], 0);
        if let GlobalDef::ClockProperties {
            timer_resolution, ..
        } = &mut b.defs[0]
        {
            *timer_resolution = 3;
        }
        let err = unify(&[a, b]).unwrap_err();
        assert!(err.contains("cannot be merged"), "{err}");
    }

    #[test]
    fn undefined_references_are_errors() {
        let mut a = part(0, 1, &["", "host", "node", "rank", "thread", "region"], 0);
        a.defs
            .retain(|d| !matches!(d, GlobalDef::String { id: 5, .. }));
        let err = unify(&[a]).unwrap_err();
        assert!(
            err.contains("string 5 is used before it is defined"),
            "{err}"
        );
    }
}
