//! OTF2 enumerations and attribute values, shared by the record tables, the writers and the
//! reader.
//!
//! Enumerations are open newtypes rather than Rust enums: a reader must carry values it does not
//! know through unchanged, and a writer may need values newer than this crate.

use std::fmt;

/// Undefined 32-bit reference (encoded as the single byte `ff`).
pub const UNDEFINED_U32: u32 = u32::MAX;
/// Undefined 64-bit reference or timestamp.
pub const UNDEFINED_U64: u64 = u64::MAX;
/// Undefined signed 64-bit value (e.g. a ProgramEnd exit status that is not known).
pub const UNDEFINED_I64: i64 = i64::MIN;

macro_rules! otf2_enum {
    ($(#[$meta:meta])* $name:ident : $repr:ty { $($variant:ident = $value:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
        pub struct $name(pub $repr);

        impl $name {
            $(pub const $variant: Self = Self($value);)*

            /// The OTF2 name of this value (without prefix), if it is a known one.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some(stringify!($variant)),)*
                    _ => None,
                }
            }
        }

        impl From<$repr> for $name {
            fn from(raw: $repr) -> Self {
                Self(raw)
            }
        }

        impl From<$name> for $repr {
            fn from(value: $name) -> Self {
                value.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }
    };
}

otf2_enum!(Paradigm: u8 {
    UNKNOWN = 0, USER = 1, COMPILER = 2, OPENMP = 3, MPI = 4, CUDA = 5, MEASUREMENT_SYSTEM = 6,
    PTHREAD = 7, HMPP = 8, OMPSS = 9, HARDWARE = 10, GASPI = 11, UPC = 12, SHMEM = 13,
    WINTHREAD = 14, QTTHREAD = 15, ACETHREAD = 16, TBBTHREAD = 17, OPENACC = 18, OPENCL = 19,
    MTAPI = 20, SAMPLING = 21, NONE = 22, HIP = 23, KOKKOS = 24,
});
otf2_enum!(ParadigmClass: u8 {
    PROCESS = 0, THREAD_FORK_JOIN = 1, THREAD_CREATE_WAIT = 2, ACCELERATOR = 3,
});
otf2_enum!(ParadigmProperty: u8 {
    COMM_NAME_TEMPLATE = 0, RMA_WIN_NAME_TEMPLATE = 1, RMA_ONLY = 2,
});
otf2_enum!(RegionRole: u8 {
    UNKNOWN = 0, FUNCTION = 1, WRAPPER = 2, LOOP = 3, CODE = 4, PARALLEL = 5, SECTIONS = 6,
    SECTION = 7, WORKSHARE = 8, SINGLE = 9, SINGLE_SBLOCK = 10, MASTER = 11, CRITICAL = 12,
    CRITICAL_SBLOCK = 13, ATOMIC = 14, BARRIER = 15, IMPLICIT_BARRIER = 16, FLUSH = 17,
    ORDERED = 18, ORDERED_SBLOCK = 19, TASK = 20, TASK_CREATE = 21, TASK_WAIT = 22,
    COLL_ONE2ALL = 23, COLL_ALL2ONE = 24, COLL_ALL2ALL = 25, COLL_OTHER = 26, FILE_IO = 27,
    POINT2POINT = 28, RMA = 29, DATA_TRANSFER = 30, ARTIFICIAL = 31, THREAD_CREATE = 32,
    THREAD_WAIT = 33, TASK_UNTIED = 34, ALLOCATE = 35, DEALLOCATE = 36, REALLOCATE = 37,
    FILE_IO_METADATA = 38,
});
otf2_enum!(
    /// Bit set.
    RegionFlag: u32 { NONE = 0, DYNAMIC = 1, PHASE = 2 }
);
otf2_enum!(LocationType: u8 { UNKNOWN = 0, CPU_THREAD = 1, ACCELERATOR_STREAM = 2, METRIC = 3 });
otf2_enum!(LocationGroupType: u8 { UNKNOWN = 0, PROCESS = 1, ACCELERATOR = 2 });
otf2_enum!(SystemTreeDomain: u8 {
    MACHINE = 0, SHARED_MEMORY = 1, NUMA = 2, SOCKET = 3, CACHE = 4, CORE = 5, PU = 6,
    ACCELERATOR_DEVICE = 7, NETWORKING_DEVICE = 8,
});
otf2_enum!(GroupType: u8 {
    UNKNOWN = 0, LOCATIONS = 1, REGIONS = 2, METRIC = 3, COMM_LOCATIONS = 4, COMM_GROUP = 5,
    COMM_SELF = 6,
});
otf2_enum!(
    /// Bit set.
    GroupFlag: u32 { NONE = 0, GLOBAL_MEMBERS = 1 }
);
otf2_enum!(
    /// Bit set.
    CommFlag: u32 { NONE = 0, CREATE_DESTROY_EVENTS = 1 }
);
otf2_enum!(Type: u8 {
    NONE = 0, UINT8 = 1, UINT16 = 2, UINT32 = 3, UINT64 = 4, INT8 = 5, INT16 = 6, INT32 = 7,
    INT64 = 8, FLOAT = 9, DOUBLE = 10, STRING = 11, ATTRIBUTE = 12, LOCATION = 13, REGION = 14,
    GROUP = 15, METRIC = 16, COMM = 17, PARAMETER = 18, RMA_WIN = 19, SOURCE_CODE_LOCATION = 20,
    CALLING_CONTEXT = 21, INTERRUPT_GENERATOR = 22, IO_FILE = 23, IO_HANDLE = 24,
    LOCATION_GROUP = 25,
});
otf2_enum!(MappingType: u8 {
    STRING = 0, ATTRIBUTE = 1, LOCATION = 2, REGION = 3, GROUP = 4, METRIC = 5, COMM = 6,
    PARAMETER = 7, RMA_WIN = 8, SOURCE_CODE_LOCATION = 9, CALLING_CONTEXT = 10,
    INTERRUPT_GENERATOR = 11, IO_FILE = 12, IO_HANDLE = 13, LOCATION_GROUP = 14,
});
otf2_enum!(MetricType: u8 { OTHER = 0, PAPI = 1, RUSAGE = 2, USER = 3 });
otf2_enum!(MetricOccurrence: u8 { SYNCHRONOUS_STRICT = 0, SYNCHRONOUS = 1, ASYNCHRONOUS = 2 });
otf2_enum!(MetricMode: u8 {
    ACCUMULATED_START = 0,
    ACCUMULATED_POINT = 16, ABSOLUTE_POINT = 17, RELATIVE_POINT = 18,
    ACCUMULATED_LAST = 32, ABSOLUTE_LAST = 33, RELATIVE_LAST = 34,
    ACCUMULATED_NEXT = 48, ABSOLUTE_NEXT = 49, RELATIVE_NEXT = 50,
});
otf2_enum!(MetricScope: u8 { LOCATION = 0, LOCATION_GROUP = 1, SYSTEM_TREE_NODE = 2, GROUP = 3 });
otf2_enum!(RecorderKind: u8 { UNKNOWN = 0, ABSTRACT = 1, CPU = 2, GPU = 3 });
otf2_enum!(Base: u8 { BINARY = 0, DECIMAL = 1 });
otf2_enum!(ParameterType: u8 { STRING = 0, INT64 = 1, UINT64 = 2 });
otf2_enum!(MeasurementMode: u8 { ON = 1, OFF = 2 });
otf2_enum!(InterruptGeneratorMode: u8 { TIME = 0, COUNT = 1 });
otf2_enum!(CollectiveOp: u8 {
    BARRIER = 0, BCAST = 1, GATHER = 2, GATHERV = 3, SCATTER = 4, SCATTERV = 5, ALLGATHER = 6,
    ALLGATHERV = 7, ALLTOALL = 8, ALLTOALLV = 9, ALLTOALLW = 10, ALLREDUCE = 11, REDUCE = 12,
    REDUCE_SCATTER = 13, SCAN = 14, EXSCAN = 15, REDUCE_SCATTER_BLOCK = 16, CREATE_HANDLE = 17,
    DESTROY_HANDLE = 18, ALLOCATE = 19, DEALLOCATE = 20, CREATE_HANDLE_AND_ALLOCATE = 21,
    DESTROY_HANDLE_AND_DEALLOCATE = 22,
});

/// A typed value as it appears in attribute lists, properties and metric events: the OTF2 type
/// plus the raw 64 bits (floats by their bit pattern, signed integers sign-extended).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypedValue {
    pub value_type: Type,
    pub raw: u64,
}

impl TypedValue {
    pub const fn new(value_type: Type, raw: u64) -> Self {
        Self { value_type, raw }
    }
    pub const fn u8(v: u8) -> Self {
        Self::new(Type::UINT8, v as u64)
    }
    pub const fn u16(v: u16) -> Self {
        Self::new(Type::UINT16, v as u64)
    }
    pub const fn u32(v: u32) -> Self {
        Self::new(Type::UINT32, v as u64)
    }
    pub const fn u64(v: u64) -> Self {
        Self::new(Type::UINT64, v)
    }
    pub const fn i8(v: i8) -> Self {
        Self::new(Type::INT8, v as i64 as u64)
    }
    pub const fn i16(v: i16) -> Self {
        Self::new(Type::INT16, v as i64 as u64)
    }
    pub const fn i32(v: i32) -> Self {
        Self::new(Type::INT32, v as i64 as u64)
    }
    pub const fn i64(v: i64) -> Self {
        Self::new(Type::INT64, v as u64)
    }
    pub fn f32(v: f32) -> Self {
        Self::new(Type::FLOAT, v.to_bits() as u64)
    }
    pub fn f64(v: f64) -> Self {
        Self::new(Type::DOUBLE, v.to_bits())
    }
    /// A reference to a definition (`Type::STRING`, `Type::REGION`, ...; `Type::LOCATION` is 64-bit).
    pub const fn reference(value_type: Type, id: u64) -> Self {
        Self::new(value_type, id)
    }

    /// The value as a signed integer (for the INT* types).
    pub fn as_i64(self) -> i64 {
        self.raw as i64
    }
    /// The value as a double (FLOAT is widened).
    pub fn as_f64(self) -> f64 {
        match self.value_type {
            Type::FLOAT => f32::from_bits(self.raw as u32) as f64,
            _ => f64::from_bits(self.raw),
        }
    }
}

impl fmt::Debug for TypedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value_type {
            Type::INT8 | Type::INT16 | Type::INT32 | Type::INT64 => {
                write!(f, "{:?}:{}", self.value_type, self.as_i64())
            }
            Type::FLOAT | Type::DOUBLE => write!(f, "{:?}:{}", self.value_type, self.as_f64()),
            _ => write!(f, "{:?}:{}", self.value_type, self.raw),
        }
    }
}

/// The attribute list that may precede an event: (attribute id, value) pairs in insertion order.
/// Each attribute id may appear at most once (the reference reader rejects repeats).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttributeList {
    entries: Vec<(u32, TypedValue)>,
}

impl AttributeList {
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds an entry; replaces the value if the attribute is already present.
    pub fn add(&mut self, attribute: u32, value: TypedValue) -> &mut Self {
        match self.entries.iter_mut().find(|(a, _)| *a == attribute) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((attribute, value)),
        }
        self
    }
    pub fn entries(&self) -> &[(u32, TypedValue)] {
        &self.entries
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn clear(&mut self) {
        self.entries.clear();
    }
    pub(crate) fn from_entries(entries: Vec<(u32, TypedValue)>) -> Self {
        Self { entries }
    }
}

/// An id map of a local `MappingTable`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdMap {
    /// Local id = index, value = global id.
    Dense(Vec<u64>),
    /// (local id, global id) pairs.
    Sparse(Vec<(u64, u64)>),
}

/// The legacy `Region.regionType` byte libotf2 still writes, derived from role, paradigm and
/// flags exactly as the reference library does, so that definition files match byte for byte.
pub(crate) fn legacy_region_type(role: RegionRole, paradigm: Paradigm, flags: RegionFlag) -> u8 {
    let dynamic = flags.0 & RegionFlag::DYNAMIC.0 != 0;
    let phase = flags.0 & RegionFlag::PHASE.0 != 0;
    match paradigm {
        Paradigm::UNKNOWN | Paradigm::COMPILER => u8::from(role == RegionRole::FUNCTION),
        Paradigm::USER => match role {
            RegionRole::FUNCTION if dynamic => 31,
            RegionRole::FUNCTION => 3,
            RegionRole::FILE_IO => 4,
            RegionRole::LOOP => match (dynamic, phase) {
                (true, true) => 32,
                (true, false) => 30,
                (false, true) => 0,
                (false, false) => 2,
            },
            RegionRole::CODE => match (dynamic, phase) {
                (true, true) => 29,
                (true, false) => 28,
                (false, true) => 27,
                (false, false) => 1,
            },
            _ => 0,
        },
        Paradigm::OPENMP => match role {
            RegionRole::PARALLEL => 5,
            RegionRole::LOOP => 6,
            RegionRole::SECTIONS => 7,
            RegionRole::SECTION => 8,
            RegionRole::WORKSHARE => 9,
            RegionRole::SINGLE => 10,
            RegionRole::MASTER => 11,
            RegionRole::CRITICAL => 12,
            RegionRole::ATOMIC => 13,
            RegionRole::BARRIER => 14,
            RegionRole::IMPLICIT_BARRIER => 15,
            RegionRole::FLUSH => 16,
            RegionRole::CRITICAL_SBLOCK => 17,
            RegionRole::SINGLE_SBLOCK => 18,
            RegionRole::WRAPPER => 19,
            RegionRole::TASK => 20,
            RegionRole::TASK_WAIT => 21,
            RegionRole::TASK_CREATE => 33,
            RegionRole::ORDERED => 34,
            RegionRole::ORDERED_SBLOCK => 35,
            _ => 0,
        },
        Paradigm::MPI => match role {
            RegionRole::BARRIER => 22,
            RegionRole::COLL_ONE2ALL => 23,
            RegionRole::COLL_ALL2ONE => 24,
            RegionRole::COLL_ALL2ALL => 25,
            RegionRole::COLL_OTHER => 26,
            _ => 0,
        },
        _ => 0,
    }
}

/// The legacy `Group.groupTypePre12` byte, derived as the reference library does.
pub(crate) fn legacy_group_type(group_type: GroupType, paradigm: Paradigm, flags: GroupFlag) -> u8 {
    if flags != GroupFlag::NONE {
        return 0;
    }
    match (paradigm, group_type) {
        (Paradigm::UNKNOWN, GroupType::LOCATIONS) => 1,
        (Paradigm::UNKNOWN, GroupType::REGIONS) => 2,
        (Paradigm::UNKNOWN, GroupType::METRIC) => 3,
        (Paradigm::MPI, GroupType::COMM_LOCATIONS) => 6,
        (Paradigm::MPI, GroupType::COMM_GROUP) => 4,
        (Paradigm::MPI, GroupType::COMM_SELF) => 5,
        _ => 0,
    }
}
