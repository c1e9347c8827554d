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
    // The first part's clock is the trace's: every other part's timestamps are put on its time
    // line by clock offsets (start, end, realtime of the merged trace).
    let reference = parts
        .iter()
        .find_map(PartClock::of)
        .ok_or("no part has clock properties (no definitions were written)")?;
    let aligned: Vec<Vec<LocalDef>> = parts
        .iter()
        .map(|p| match PartClock::of(p) {
            Some(clock) => aligned_offsets(&p.clock_offsets, &clock, &reference),
            None => p.clock_offsets.clone(),
        })
        .collect();
    let mut clock: Option<(i128, i128, u64)> = None;
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
    // Per paradigm: the merged members, and each one's position in them.
    let mut comm_locations: Vec<(Paradigm, Vec<u64>, HashMap<u64, u64>)> = Vec::new();
    for part in parts {
        for def in &part.defs {
            if let GlobalDef::Group {
                group_type: GroupType::COMM_LOCATIONS,
                paradigm,
                members,
                ..
            } = def
            {
                let index = match comm_locations.iter().position(|(p, _, _)| p == paradigm) {
                    Some(i) => i,
                    None => {
                        comm_locations.push((*paradigm, Vec::new(), HashMap::new()));
                        comm_locations.len() - 1
                    }
                };
                let (_, merged, positions) = &mut comm_locations[index];
                for &m in members {
                    positions.entry(m).or_insert_with(|| {
                        merged.push(m);
                        merged.len() as u64 - 1
                    });
                }
            }
        }
    }
    let position_in = |paradigm: Paradigm, location: u64| -> Option<u64> {
        let (_, _, positions) = comm_locations.iter().find(|(p, _, _)| *p == paradigm)?;
        positions.get(&location).copied()
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
                    global_offset,
                    trace_length,
                    realtime_timestamp,
                    ..
                } => {
                    let offsets = &aligned[index];
                    let start = to_global(offsets, *global_offset);
                    let end = to_global(offsets, global_offset.saturating_add(*trace_length));
                    clock = Some(match clock {
                        None => (start, end, *realtime_timestamp),
                        Some((s0, e0, rt0)) => (
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
                    // Every part's COMM_LOCATIONS group of a paradigm becomes the merged one:
                    // keyed without members (a job's merged group has a member per thread).
                    let merged = (*group_type == GroupType::COMM_LOCATIONS).then(|| {
                        comm_locations
                            .iter()
                            .find(|(p, _, _)| p == paradigm)
                            .map(|(_, m, _)| m)
                    });
                    let members: Vec<u64> = match *group_type {
                        GroupType::COMM_LOCATIONS => {
                            own_comm_locations.insert(paradigm.0, members.clone());
                            Vec::new()
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
                            members: match merged {
                                Some(merged) => merged.cloned().unwrap_or_default(),
                                None => key.4.clone(),
                            },
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
        defs.extend(aligned[index].iter().cloned());
        locations.push(part_locations);
        local_defs.push(defs);
    }
    let mut placeholders: Vec<u64> = Vec::new();
    for (_, members, _) in &comm_locations {
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
    let (start, end, realtime) =
        clock.ok_or("no part has clock properties (no definitions were written)")?;
    let start = start.max(0);
    let mut defs = vec![GlobalDef::ClockProperties {
        timer_resolution: reference.resolution,
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

/// A part's clock, as its ClockProperties and its location group's system tree node say.
struct PartClock {
    resolution: u64,
    start: u64,
    length: u64,
    realtime: u64,
    host: Option<String>,
}

impl PartClock {
    fn of(part: &Part) -> Option<PartClock> {
        let (resolution, start, length, realtime) = part.defs.iter().find_map(|d| match d {
            GlobalDef::ClockProperties {
                timer_resolution,
                global_offset,
                trace_length,
                realtime_timestamp,
            } => Some((
                *timer_resolution,
                *global_offset,
                *trace_length,
                *realtime_timestamp,
            )),
            _ => None,
        })?;
        Some(PartClock {
            resolution,
            start,
            length,
            realtime,
            host: host_of(&part.defs),
        })
    }

    /// Whether this clock ticks like `other`: the same kind of clock (their resolutions
    /// differ by measurement only), read on the same machine.
    fn ticks_like(&self, other: &PartClock) -> bool {
        let (a, b) = (self.resolution as f64, other.resolution as f64);
        (a - b).abs() <= 1e-3 * b && self.host.is_some() && self.host == other.host
    }
}

/// The name of the system tree node of a part's first location group (its host).
fn host_of(defs: &[GlobalDef]) -> Option<String> {
    let node = defs.iter().find_map(|d| match d {
        GlobalDef::LocationGroup {
            system_tree_parent, ..
        } => Some(*system_tree_parent),
        _ => None,
    })?;
    let name = defs.iter().find_map(|d| match d {
        GlobalDef::SystemTreeNode { id, name, .. } if *id == node => Some(*name),
        _ => None,
    })?;
    defs.iter().find_map(|d| match d {
        GlobalDef::String { id, string } if *id == name => Some(string.clone()),
        _ => None,
    })
}

/// The clock offsets that put a part's timestamps on the reference's time line. Offsets the
/// part measured against the reference (two or more: at MPI_Init and MPI_Finalize) are kept:
/// readers interpolate between them and extrapolate beyond, which also corrects a difference
/// in rate. A part with fewer whose clock ticks like the reference's (the same TSC or
/// monotonic clock on the same machine) needs none. Any other gets two: from its one measured
/// offset, or else from the wall-clock time of both starts, and from the ratio of the two
/// resolutions.
fn aligned_offsets(
    measured: &[LocalDef],
    clock: &PartClock,
    reference: &PartClock,
) -> Vec<LocalDef> {
    let points: Vec<(u64, i64, f64)> = measured
        .iter()
        .filter_map(|d| match d {
            LocalDef::ClockOffset {
                time,
                offset,
                standard_deviation,
            } => Some((*time, *offset, *standard_deviation)),
            _ => None,
        })
        .collect();
    if points.len() >= 2 || clock.ticks_like(reference) {
        return measured.to_vec();
    }
    let rate = reference.resolution as f64 / clock.resolution.max(1) as f64;
    let (anchor, anchor_global, deviation) = match points.first() {
        Some(&(time, offset, deviation)) => {
            (time, i128::from(time) + i128::from(offset), deviation)
        }
        None => {
            let since = clock.realtime as f64 - reference.realtime as f64;
            let global = reference.start as f64 + since * reference.resolution as f64 / 1e9;
            // Wall clocks of two machines agree to about a millisecond (NTP).
            (
                clock.start,
                global as i128,
                1e-3 * reference.resolution as f64,
            )
        }
    };
    let later = anchor.saturating_add(clock.length.max(1));
    let later_global = anchor_global + ((later - anchor) as f64 * rate) as i128;
    let offset = |time: u64, global: i128| LocalDef::ClockOffset {
        time,
        offset: (global - i128::from(time)).clamp(i64::MIN.into(), i64::MAX.into()) as i64,
        standard_deviation: deviation,
    };
    vec![offset(anchor, anchor_global), offset(later, later_global)]
}

/// A local time on the global time line, as the readers apply clock offsets: interpolated
/// between consecutive offsets, extrapolated from the first or last pair; one offset alone
/// (or none) changes nothing.
fn to_global(offsets: &[LocalDef], time: u64) -> i128 {
    let points: Vec<(u64, i64)> = offsets
        .iter()
        .filter_map(|d| match d {
            LocalDef::ClockOffset { time, offset, .. } => Some((*time, *offset)),
            _ => None,
        })
        .collect();
    if points.len() < 2 {
        return i128::from(time);
    }
    let pair = points
        .windows(2)
        .find(|w| time <= w[1].0)
        .unwrap_or(&points[points.len() - 2..]);
    let ((t0, o0), (t1, o1)) = (pair[0], pair[1]);
    let slope = (o1 - o0) as f64 / (t1 - t0).max(1) as f64;
    let offset = o0 as f64 + slope * (time as f64 - t0 as f64);
    i128::from(time) + offset.round() as i128
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

/// The number of parts the job has, as the parts written so far say (0 when there are none).
pub fn job_size(parts_dir: &Path) -> u32 {
    part_anchors(parts_dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|(_, path)| ArchiveReader::open(path).ok())
        .filter_map(|reader| expected_parts(&reader))
        .max()
        .unwrap_or(0)
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
        // A process that left neither its definitions nor a journal to rebuild them from: what
        // it recorded cannot be read, and is kept aside (its own files only: every process
        // with definitions keeps its events where they are).
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
        // The machine: "host", unless the order names another.
        let host = if order.contains(&"host") {
            "host"
        } else {
            order[1]
        };
        defs.push(GlobalDef::SystemTreeNode {
            id: 0,
            name: id(host),
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
    fn clashing_locations_are_errors() {
        let a = part(0, 1, &["", "host", "node", "rank", "thread", "region"], 0);
        let err = unify(&[a.clone(), a.clone()]).unwrap_err();
        assert!(
            err.contains("location 0 is defined by parts 0 and 1"),
            "{err}"
        );
    }

    fn set_clock(p: &mut Part, resolution: u64, start: u64, length: u64, realtime: u64) {
        p.defs[0] = GlobalDef::ClockProperties {
            timer_resolution: resolution,
            global_offset: start,
            trace_length: length,
            realtime_timestamp: realtime,
        };
    }

    fn offsets(defs: &[LocalDef]) -> Vec<(u64, i64)> {
        defs.iter()
            .filter_map(|d| match d {
                LocalDef::ClockOffset { time, offset, .. } => Some((*time, *offset)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn parts_with_other_clocks_are_put_on_the_first_parts_time_line() {
        let order = ["", "host", "node", "rank", "thread", "region"];
        let other_host = ["", "elsewhere", "node", "rank", "thread", "region"];
        let mut a = part(0, 1, &order, 0);
        set_clock(&mut a, 2_000_000_000, 1_000, 4_000_000, 5_000_000_000);
        // The same TSC on the same machine, its rate measured a little differently: nothing.
        let mut same = part(1, 1, &order, 0);
        set_clock(&mut same, 2_000_000_100, 3_000, 10, 5_000_000_000);
        // Another machine, same rate, no measured offset, started 1 ms later by the wall
        // clock: its start is 2 000 000 reference ticks after the reference's.
        let mut later = part(2, 1, &other_host, 0);
        set_clock(&mut later, 2_000_000_000, 70, 1_000, 5_001_000_000);
        // A monotonic clock (1 GHz) on the same machine with one offset measured at MPI_Init:
        // that offset, and the rate of 2 reference ticks per tick from there.
        let mut monotonic = part(3, 1, &order, 0);
        set_clock(&mut monotonic, 1_000_000_000, 500, 100, 5_000_000_000);
        monotonic.clock_offsets = vec![LocalDef::ClockOffset {
            time: 600,
            offset: 400,
            standard_deviation: 1.0,
        }];
        // Two measured offsets are the readers' to use as they are.
        let mut measured = part(4, 1, &other_host, 0);
        set_clock(&mut measured, 1_000_000_000, 0, 100, 0);
        measured.clock_offsets = vec![
            LocalDef::ClockOffset {
                time: 10,
                offset: 5,
                standard_deviation: 1.0,
            },
            LocalDef::ClockOffset {
                time: 90,
                offset: 85,
                standard_deviation: 1.0,
            },
        ];
        let u = unify(&[a, same, later, monotonic, measured.clone()]).unwrap();
        assert_eq!(offsets(&u.local_defs[0]), []);
        assert_eq!(offsets(&u.local_defs[1]), []);
        assert_eq!(
            offsets(&u.local_defs[2]),
            [(70, 2_001_000 - 70), (1_070, 2_002_000 - 1_070)]
        );
        assert_eq!(offsets(&u.local_defs[3]), [(600, 400), (700, 500)]);
        assert_eq!(offsets(&u.local_defs[4]), offsets(&measured.clock_offsets));
        assert!(matches!(
            u.defs[0],
            GlobalDef::ClockProperties {
                timer_resolution: 2_000_000_000,
                global_offset: 0,
                ..
            }
        ));
        // The trace spans every part on the common time line: from the measured part's start
        // (offset -5 at 0, clamped to 0) to the end of the first part.
        let GlobalDef::ClockProperties { trace_length, .. } = u.defs[0] else {
            unreachable!()
        };
        assert_eq!(trace_length, 4_001_000);
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
