//! A pure-Rust CUBE4 (`.cubex`) writer and reader.
//!
//! CUBE4 is the call-path profile format of Score-P and Scalasca, read by the Cube GUI,
//! cubelib's `cube_dump`/`cube_stat` and Python's pycubexr. This module knows nothing of who
//! measured the profile: it takes a plain [`Profile`] (metrics, regions, call tree, system tree,
//! one dense value matrix per metric), checks it, and writes it; [`read`] gives it back. It
//! uses nothing but `std`.
//!
//! ```no_run
//! # fn main() -> std::io::Result<()> {
//! use otf2::cube::*;
//! let profile = Profile {
//!     attributes: vec![("Creator".into(), "me".into()), ("CUBE_CT_AGGR".into(), "SUM".into())],
//!     metrics: Metric::scorep_defaults().to_vec(),
//!     regions: vec![Region { name: "main".into(), canonical_name: "main".into(), ..Region::default() }],
//!     cnodes: vec![Cnode { region: 0, parent: None, line: None }],
//!     system: vec![SystemNode {
//!         name: "machine Linux".into(),
//!         class: "machine".into(),
//!         groups: vec![LocationGroup {
//!             name: "Process".into(),
//!             rank: 0,
//!             kind: LocationGroupKind::Process,
//!             locations: vec![Location { name: "Master thread".into(), rank: 0, kind: LocationKind::Thread }],
//!         }],
//!         ..SystemNode::default()
//!     }],
//!     // one call path × one location, for visits, time, min_time, max_time
//!     values: vec![Values::U64(vec![1]), Values::F64(vec![0.5]), Values::F64(vec![0.5]), Values::F64(vec![0.5])],
//! };
//! profile.write(std::path::Path::new("profile.cubex"))?;
//! let back = read(std::path::Path::new("profile.cubex"))?;
//! assert_eq!(back, profile);
//! # Ok(()) }
//! ```
//!
//! # The format, as this module writes and reads it
//!
//! The facts come from the sources of cubew (the C writer Score-P links: `cubew_cube.c`,
//! `cubew_metric.c`, `cubew_tar_writing.c`, `cubew_region.c`, `cubew_cnode.c`,
//! `cubew_system_tree_node.c`, `cubew_location_group.c`, `cubew_location.c`,
//! `cubew_services.c`), cubelib (the C++ reader: `Cube4Parser.yy`, `CubeIndexHeader.cpp`,
//! `CubeSparseIndex.cpp`, `CubeInclusiveMetric.cpp`, `CubeExclusiveMetric.cpp`,
//! `CubeServices.cpp`) and Score-P's profile writer (`scorep_profile_cube4_writer.c`,
//! `scorep_definition_cube4.c`), all as vendored in Score-P 8.4.
//!
//! **Container.** A POSIX ustar archive (`cubew_tar_writing.c`): 512-byte headers, data padded
//! to 512 bytes, two zero blocks at the end. Members: `anchor.xml` (the definitions), and per
//! metric with id `N` the files `N.index` and `N.data`; other members (Score-P adds
//! `scorep.spec`) are ignored. cubew writes each metric's data and index as it finishes it and
//! the anchor last; this writer keeps that order. (cubew pads a member whose size is a multiple
//! of 512 with one extra zero block; the reader tolerates that, this writer does not do it.)
//!
//! **Anchor.** `<cube version="4.4">` (`4.7` once a location is an accelerator stream), then
//! `<attr key value/>`s (cubew always writes `CubePL Version`, `Cube Version` and
//! `Cube anchor.xml syntax version` first), `<doc><mirrors/></doc>`, `<metrics>` (nested
//! `<metric id type>` with `disp_name`, `uniq_name`, `dtype`, `uom`, `url`, `descr`),
//! `<program>` (all `<region id mod begin end>` with `name`, `mangled_name`, `paradigm`, `role`,
//! `url`, `descr`, then the nested `<cnode id [line] calleeId>` tree), `<system>` (nested
//! `<systemtreenode Id>` with `name`, `class`, optional `descr`, its `<locationgroup Id>`s (each
//! `name`, `rank`, `type` and at least one `<location Id>` with `name`, `rank`, `type`) before its
//! child nodes), and an empty `<topologies>`. Text is escaped with exactly the five entities
//! `& < > ' "` (cubelib's `escapeFromXML` undoes no others), so this writer refuses control
//! characters it could not carry. Location `Id`s are the columns of the data files; this writer
//! numbers everything in document order.
//!
//! **Index file** (`cubew_metric.c` `cube_metric_finish`, cubelib `CubeIndexHeader.cpp`):
//! `CUBEX.INDEX`, a `u32` 1 in the writer's byte order (the byte order mark: a reader that sees
//! it swapped swaps every value), a `u16` version 0, a `u8` format (1 sparse, 3 dense). Sparse
//! adds a `u32` count and that many `u32` row positions; dense adds nothing (every row stored).
//! Score-P always writes sparse (it passes the bit vector of call paths with data), and
//! pycubexr reads only sparse, so this writer writes sparse, listing every row.
//!
//! **Data file:** `CUBEX.DATA` then one row per listed position, each row the values of all
//! locations in `Id` order, 8 bytes each for every type this module handles (`ZCUBEX.DATA` is
//! cubew's zlib-compressed form, not supported). This writer writes little endian.
//!
//! **Row order.** Rows are not in cnode id order but in an order that depends on the metric
//! (`cube_metric_create_enumeration`): an `EXCLUSIVE` metric numbers the call tree depth first
//! (preorder, cubelib's `DeepSearchEnumerator`); an `INCLUSIVE` metric numbers each root, then
//! all children of a node before descending into the first child (cubew's
//! `cube_metric_traverse_cnodes_wide_search__`, cubelib's `WideSearchEnumerator`). Index
//! positions refer to that numbering.
//!
//! **Inclusive and exclusive.** The `type` attribute says what a stored value means, and readers
//! convert: for an `INCLUSIVE` metric the stored value already includes the callees, and the
//! exclusive value is the stored value minus the children's stored values; for an `EXCLUSIVE`
//! metric the stored value is the call path's own, and the inclusive value aggregates the
//! subtree (a sum, or the minimum/maximum for `MINDOUBLE`/`MAXDOUBLE`; cubew refuses those two,
//! and `TAU_ATOMIC`, for inclusive metrics). Score-P's default (scalar) profile
//! (`write_metric_definitions` in `scorep_definition_cube4.c`) defines, in this order:
//! `visits` (`UINT64`, `EXCLUSIVE`, `occ`), `time` (`DOUBLE`, **`INCLUSIVE`**, `sec`: each call
//! path's sum of inclusive visit durations in seconds, `inclusive_time.sum / clock resolution`),
//! `min_time` (`MINDOUBLE`, `EXCLUSIVE`) and `max_time` (`MAXDOUBLE`, `EXCLUSIVE`), both
//! holding each call path's shortest/longest *inclusive* visit duration; its hardware and
//! rusage counters are `INCLUSIVE` sums. [`Metric::scorep_defaults`] gives those four
//! definitions. Score-P also writes the attributes `Creator` and `CUBE_CT_AGGR = SUM`.
//!
//! **Readers' limits.** pycubexr (2.1) reads only sparse indices and insists on exactly one
//! call-tree root and one system-tree root; cubelib takes several of each. cubelib treats a
//! `CLUSTERING` attribute as a promise of clustering data, so the writer refuses attributes
//! starting with `CLUSTER`.

mod model;
mod reader;
mod tar;
mod writer;
mod xml;

pub use model::{
    Cnode, DataType, Location, LocationGroup, LocationGroupKind, LocationKind, Metric, MetricKind,
    Profile, Region, SystemNode, Values, FORMAT_ATTRIBUTE_KEYS,
};
pub use reader::{read, read_with, ReadLimits, Reading};

const ANCHOR_NAME: &str = "anchor.xml";
const ANCHOR_VERSION: &str = "4.4";
const ANCHOR_VERSION_ACCELERATOR: &str = "4.7";
const CUBEPL_VERSION: &str = "1.1";
/// The cubew release vendored with Score-P 8.4, whose output this writer reproduces.
const CUBEW_VERSION: &str = "4.8.2";
const INDEX_MARKER: &[u8] = b"CUBEX.INDEX";
const DATA_MARKER: &[u8] = b"CUBEX.DATA";
const ZDATA_MARKER: &[u8] = b"ZCUBEX.DATA";
const ENDIANNESS_MARK: u32 = 1;
const INDEX_VERSION: u16 = 0;
const INDEX_FORMAT_SPARSE: u8 = 1;
const INDEX_FORMAT_DENSE: u8 = 3;

/// A CUBE `role` or `paradigm` from an OTF2 name (`IMPLICIT_BARRIER` → `implicit barrier`), as
/// Score-P writes them.
pub fn cube_word(name: Option<&str>) -> String {
    name.unwrap_or("unknown")
        .to_ascii_lowercase()
        .replace('_', " ")
}

/// A CUBE unique name: cubew keeps `[A-Za-z0-9_:=]` and makes everything else `_`.
pub fn unique_name(name: &str) -> String {
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

/// Row order of an `EXCLUSIVE` metric: call paths depth first, preorder.
fn deep_enumeration(roots: &[usize], children: &[Vec<usize>]) -> Vec<usize> {
    let mut order = Vec::with_capacity(children.len());
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(node) = stack.pop() {
        order.push(node);
        stack.extend(children[node].iter().rev());
    }
    order
}

/// Row order of an `INCLUSIVE` metric: per root, the root, then for each node all its children
/// before the subtree of its first child.
fn wide_enumeration(roots: &[usize], children: &[Vec<usize>]) -> Vec<usize> {
    let mut order = Vec::with_capacity(children.len());
    for &root in roots {
        order.push(root);
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            order.extend(children[node].iter());
            stack.extend(children[node].iter().rev());
        }
    }
    order
}

#[cfg(test)]
mod tests;
