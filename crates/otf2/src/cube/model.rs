//! The plain data a CUBE4 profile holds: metrics, regions, the call tree, the system tree and one
//! dense value matrix per metric. [`Profile::write`](super::Profile::write) stores it,
//! [`read`](super::read) gives it back.

/// A whole profile, as written to or read from one `.cubex` file.
///
/// Indices tie the parts together: [`Cnode::region`] indexes [`Profile::regions`],
/// [`Cnode::parent`] and [`Metric::parent`] index their own vectors, and the columns of every
/// [`Values`] matrix are the locations in [`Profile::locations`] order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    /// Free `key = value` attributes of the whole profile (Score-P writes `Creator` and
    /// `CUBE_CT_AGGR = SUM`). The three keys that describe the file format itself
    /// ([`FORMAT_ATTRIBUTE_KEYS`]) are written by the writer and not given back by the reader.
    pub attributes: Vec<(String, String)>,
    /// The metrics; the one at index `i` is stored as `i.index` / `i.data`.
    pub metrics: Vec<Metric>,
    /// The code regions the call tree refers to.
    pub regions: Vec<Region>,
    /// The call tree, one entry per call path. A parent comes before its children; siblings
    /// keep their order in this vector.
    pub cnodes: Vec<Cnode>,
    /// The roots of the system tree (usually one machine).
    pub system: Vec<SystemNode>,
    /// One matrix per metric (same order as [`Profile::metrics`]).
    pub values: Vec<Values>,
}

/// The attribute keys that cubew writes into every anchor to describe the format itself.
pub const FORMAT_ATTRIBUTE_KEYS: [&str; 3] = [
    "CubePL Version",
    "Cube Version",
    "Cube anchor.xml syntax version",
];

/// One metric of the metric tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metric {
    /// `uniq_name`: the name tools look metrics up by (`time`, `visits`). Only `[A-Za-z0-9_:=]`
    /// (cubew's `cube_make_unique_name`), unique in the profile.
    pub unique_name: String,
    /// `disp_name`: what a GUI shows.
    pub display_name: String,
    /// `uom`: unit of measurement (`sec`, `occ`, `bytes`).
    pub unit: String,
    /// `descr`.
    pub description: String,
    /// How one value is stored.
    pub data_type: DataType,
    /// Whether a call path's value includes its callees' values.
    pub kind: MetricKind,
    /// The parent in the metric tree (an index below this metric's own), or `None` for a root.
    pub parent: Option<usize>,
}

/// Whether a stored value already contains the call path's callees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MetricKind {
    /// `type="INCLUSIVE"`: the value of a call path includes its whole subtree (Score-P's
    /// `time` and hardware counters). Readers get the exclusive value by subtracting the
    /// children's values.
    Inclusive,
    /// `type="EXCLUSIVE"`: the value belongs to the call path alone (Score-P's `visits`,
    /// `min_time`, `max_time`). Readers get the inclusive value by aggregating the subtree.
    Exclusive,
}

impl MetricKind {
    /// The `type` attribute's text.
    pub fn as_str(self) -> &'static str {
        match self {
            MetricKind::Inclusive => "INCLUSIVE",
            MetricKind::Exclusive => "EXCLUSIVE",
        }
    }
}

/// How the values of one metric are stored (`dtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `UINT64`: counts such as `visits`. Stored in [`Values::U64`].
    U64,
    /// `INT64`. Stored in [`Values::I64`].
    I64,
    /// `DOUBLE`: sums such as `time` in seconds. Stored in [`Values::F64`].
    F64,
    /// `MINDOUBLE`: a double that aggregates by minimum (`min_time`). Stored in [`Values::F64`];
    /// CUBE allows it only for exclusive metrics.
    MinF64,
    /// `MAXDOUBLE`: a double that aggregates by maximum (`max_time`). Stored in
    /// [`Values::F64`]; CUBE allows it only for exclusive metrics.
    MaxF64,
}

impl DataType {
    /// The `dtype` element's text.
    pub fn as_str(self) -> &'static str {
        match self {
            DataType::U64 => "UINT64",
            DataType::I64 => "INT64",
            DataType::F64 => "DOUBLE",
            DataType::MinF64 => "MINDOUBLE",
            DataType::MaxF64 => "MAXDOUBLE",
        }
    }

    /// The `dtype` names this crate reads, including cubelib's aliases (`FLOAT` is a double in
    /// CUBE, `INTEGER` a signed and `UNSIGNED INTEGER` an unsigned 64-bit integer).
    pub fn from_cube_name(name: &str) -> Option<DataType> {
        match name.trim() {
            "UINT64" | "UNSIGNED INTEGER" => Some(DataType::U64),
            "INT64" | "INTEGER" | "SIGNED INTEGER" => Some(DataType::I64),
            "DOUBLE" | "FLOAT" => Some(DataType::F64),
            "MINDOUBLE" => Some(DataType::MinF64),
            "MAXDOUBLE" => Some(DataType::MaxF64),
            _ => None,
        }
    }

    /// An all-zero matrix of this type.
    pub fn zeros(self, len: usize) -> Values {
        match self {
            DataType::U64 => Values::U64(vec![0; len]),
            DataType::I64 => Values::I64(vec![0; len]),
            DataType::F64 | DataType::MinF64 | DataType::MaxF64 => Values::F64(vec![0.0; len]),
        }
    }
}

/// A code region (function, OpenMP construct, user region).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// `name`: what tools show.
    pub name: String,
    /// `mangled_name`: Score-P writes the canonical name here.
    pub canonical_name: String,
    /// The `mod` attribute: the source file.
    pub source_file: String,
    /// First source line, `None` when unknown (written as -1, as cubew does).
    pub begin_line: Option<u32>,
    /// Last source line, `None` when unknown.
    pub end_line: Option<u32>,
    /// `paradigm`: Score-P writes `openmp`, `user`, `mpi`, `compiler`, `measurement`...
    pub paradigm: String,
    /// `role`: Score-P writes its region type (`function`, `parallel`, `barrier`, `loop`...).
    pub role: String,
    /// `descr`.
    pub description: String,
}

/// One call path: a region reached through its parent's call path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cnode {
    /// Index into [`Profile::regions`].
    pub region: usize,
    /// Index of the calling call path (below this one's own index), `None` for a root.
    pub parent: Option<usize>,
    /// The call site's source line (the `line` attribute), when known.
    pub line: Option<u32>,
}

/// A node of the system tree: a machine, a node, or any other grouping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SystemNode {
    /// `name` (Score-P writes `CLASS NAME`, e.g. `machine Linux`, `node host1`).
    pub name: String,
    /// `class` (`machine`, `node`).
    pub class: String,
    /// `descr`, left out of the file when empty.
    pub description: String,
    /// The location groups (processes) directly under this node; written before `children`,
    /// as CUBE's grammar wants.
    pub groups: Vec<LocationGroup>,
    /// Nested system tree nodes.
    pub children: Vec<SystemNode>,
}

/// A location group: a process (or an accelerator context).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocationGroup {
    /// `name` (Score-P: `MPI Rank 0`, or the process name without MPI).
    pub name: String,
    /// `rank`: the process rank.
    pub rank: u32,
    /// `type`.
    pub kind: LocationGroupKind,
    /// The group's locations; CUBE wants at least one.
    pub locations: Vec<Location>,
}

/// The `type` of a location group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LocationGroupKind {
    /// `process`.
    Process,
    /// `accelerator`.
    Accelerator,
    /// `metrics`.
    Metrics,
}

impl LocationGroupKind {
    /// The `type` element's text.
    pub fn as_str(self) -> &'static str {
        match self {
            LocationGroupKind::Process => "process",
            LocationGroupKind::Accelerator => "accelerator",
            LocationGroupKind::Metrics => "metrics",
        }
    }

    fn from_cube_name(name: &str) -> Option<Self> {
        match name.trim() {
            "process" => Some(LocationGroupKind::Process),
            "accelerator" => Some(LocationGroupKind::Accelerator),
            "metrics" => Some(LocationGroupKind::Metrics),
            _ => None,
        }
    }
}

/// A location: one column of every value matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// `name` (Score-P: `Master thread`, `OMP thread 1`).
    pub name: String,
    /// `rank`: the location's number within its group.
    pub rank: u32,
    /// `type`.
    pub kind: LocationKind,
}

/// The `type` of a location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LocationKind {
    /// `thread`: a CPU thread.
    Thread,
    /// `accelerator stream` (makes the anchor syntax version 4.7, as in cubew).
    AcceleratorStream,
    /// `metric`.
    Metric,
}

impl LocationKind {
    /// The `type` element's text.
    pub fn as_str(self) -> &'static str {
        match self {
            LocationKind::Thread => "thread",
            LocationKind::AcceleratorStream => "accelerator stream",
            LocationKind::Metric => "metric",
        }
    }

    fn from_cube_name(name: &str) -> Option<Self> {
        match name.trim() {
            "thread" => Some(LocationKind::Thread),
            "accelerator stream" => Some(LocationKind::AcceleratorStream),
            "metric" => Some(LocationKind::Metric),
            _ => None,
        }
    }
}

pub(super) fn group_kind(name: &str) -> Option<LocationGroupKind> {
    LocationGroupKind::from_cube_name(name)
}

pub(super) fn location_kind(name: &str) -> Option<LocationKind> {
    LocationKind::from_cube_name(name)
}

/// The values of one metric: a dense matrix, row `c` for call path `c`, column `l` for
/// location `l` (`values[c * locations + l]`), as the metric's data type prescribes.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// For [`DataType::U64`].
    U64(Vec<u64>),
    /// For [`DataType::I64`].
    I64(Vec<i64>),
    /// For [`DataType::F64`], [`DataType::MinF64`] and [`DataType::MaxF64`].
    F64(Vec<f64>),
}

impl Values {
    /// Number of entries (call paths × locations).
    pub fn len(&self) -> usize {
        match self {
            Values::U64(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }

    /// Whether the matrix has no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `index` as a double (exact for integers below 2^53), `None` past the end.
    pub fn get_f64(&self, index: usize) -> Option<f64> {
        match self {
            Values::U64(v) => v.get(index).map(|&x| x as f64),
            Values::I64(v) => v.get(index).map(|&x| x as f64),
            Values::F64(v) => v.get(index).copied(),
        }
    }

    /// Whether this matrix can hold values of `data_type`.
    pub fn fits(&self, data_type: DataType) -> bool {
        matches!(
            (self, data_type),
            (Values::U64(_), DataType::U64)
                | (Values::I64(_), DataType::I64)
                | (
                    Values::F64(_),
                    DataType::F64 | DataType::MinF64 | DataType::MaxF64
                )
        )
    }
}

impl Metric {
    /// Score-P's `visits`: `UINT64`, exclusive, unit `occ`, the number of times each call path
    /// was entered (scorep_definition_cube4.c, scalar layout).
    pub fn scorep_visits() -> Metric {
        Metric {
            unique_name: "visits".into(),
            display_name: "Visits".into(),
            unit: "occ".into(),
            description: "Number of visits".into(),
            data_type: DataType::U64,
            kind: MetricKind::Exclusive,
            parent: None,
        }
    }

    /// Score-P's `time`: `DOUBLE` seconds, **inclusive**: each call path stores the sum of its
    /// visits' inclusive durations.
    pub fn scorep_time() -> Metric {
        Metric {
            unique_name: "time".into(),
            display_name: "Time".into(),
            unit: "sec".into(),
            description: "Total CPU allocation time".into(),
            data_type: DataType::F64,
            kind: MetricKind::Inclusive,
            parent: None,
        }
    }

    /// Score-P's `min_time`: `MINDOUBLE` seconds, exclusive metric type, each call path storing
    /// the shortest inclusive duration of one of its visits.
    pub fn scorep_min_time() -> Metric {
        Metric {
            unique_name: "min_time".into(),
            display_name: "Minimum Inclusive Time".into(),
            unit: "sec".into(),
            description: "Minimum inclusive CPU allocation time".into(),
            data_type: DataType::MinF64,
            kind: MetricKind::Exclusive,
            parent: None,
        }
    }

    /// Score-P's `max_time`: `MAXDOUBLE` seconds, exclusive metric type, each call path storing
    /// the longest inclusive duration of one of its visits.
    pub fn scorep_max_time() -> Metric {
        Metric {
            unique_name: "max_time".into(),
            display_name: "Maximum Inclusive Time".into(),
            unit: "sec".into(),
            description: "Maximum inclusive CPU allocation time".into(),
            data_type: DataType::MaxF64,
            kind: MetricKind::Exclusive,
            parent: None,
        }
    }

    /// Score-P's four default metrics in its definition order (so with its metric ids 0..3):
    /// `visits`, `time`, `min_time`, `max_time`.
    pub fn scorep_defaults() -> [Metric; 4] {
        [
            Metric::scorep_visits(),
            Metric::scorep_time(),
            Metric::scorep_min_time(),
            Metric::scorep_max_time(),
        ]
    }
}

impl Profile {
    /// The locations, i.e. the value matrices' columns, in order: depth first through
    /// [`Profile::system`], each node's groups before its children.
    pub fn locations(&self) -> Vec<&Location> {
        let mut out = Vec::new();
        self.for_each_group(|group| out.extend(group.locations.iter()));
        out
    }

    /// The location groups (processes) in [`Profile::locations`] order.
    pub fn location_groups(&self) -> Vec<&LocationGroup> {
        let mut out = Vec::new();
        self.for_each_group(|group| out.push(group));
        out
    }

    /// Number of locations (columns).
    pub fn location_count(&self) -> usize {
        let mut count = 0usize;
        self.for_each_group(|group| count = count.saturating_add(group.locations.len()));
        count
    }

    /// The children of every call path, each list in [`Profile::cnodes`] order. Entries whose
    /// parent is out of range are left out.
    pub fn children(&self) -> Vec<Vec<usize>> {
        let mut children = vec![Vec::new(); self.cnodes.len()];
        for (index, cnode) in self.cnodes.iter().enumerate() {
            if let Some(list) = cnode.parent.and_then(|p| children.get_mut(p)) {
                list.push(index);
            }
        }
        children
    }

    /// The call paths without a parent, in order.
    pub fn roots(&self) -> Vec<usize> {
        (0..self.cnodes.len())
            .filter(|&c| self.cnodes[c].parent.is_none())
            .collect()
    }

    /// The index of the metric whose unique name is `name`.
    pub fn metric_index(&self, name: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m.unique_name == name)
    }

    /// Value of `metric` for call path `cnode` on location `location`, as a double; `None`
    /// when an index is out of range.
    pub fn value(&self, metric: usize, cnode: usize, location: usize) -> Option<f64> {
        let locations = self.location_count();
        if location >= locations {
            return None;
        }
        let index = cnode.checked_mul(locations)?.checked_add(location)?;
        self.values.get(metric)?.get_f64(index)
    }

    /// Calls `f` for every location group, depth first, without recursion (a system tree
    /// handed in by a caller may be arbitrarily deep).
    pub(super) fn for_each_group<'a>(&'a self, mut f: impl FnMut(&'a LocationGroup)) {
        let mut stack: Vec<&'a SystemNode> = self.system.iter().rev().collect();
        while let Some(node) = stack.pop() {
            node.groups.iter().for_each(&mut f);
            stack.extend(node.children.iter().rev());
        }
    }
}
