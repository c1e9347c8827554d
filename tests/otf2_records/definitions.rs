//! The archive's definitions: string, attribute, region, ... ids and the global and local
//! definition records written, every kind with edge values.

use super::*;

// ---------------------------------------------------------------------------------------------
// The archive
// ---------------------------------------------------------------------------------------------

pub(crate) const L0: u64 = 0;
/// A location id beyond 32 bits.
pub(crate) const L1: u64 = (1 << 40) + 7;
pub(crate) const U: u32 = UNDEFINED_U32;

pub(crate) const HELLO: &str = "héllo ✓ 日本";

/// String ids are dense from 0; `S_FAR` is the one deliberately sparse id.
pub(crate) const STRINGS: &[&str] = &[
    "",               // 0
    HELLO,            // 1
    "machine",        // 2
    "node 0",         // 3
    "process",        // 4
    "accelerator",    // 5
    "Master thread",  // 6
    "stream ✓",       // 7
    "main",           // 8
    "src/main.c",     // 9
    "loop",           // 10
    "OpenMP",         // 11
    "OMP team ${id}", // 12
    "cycles",         // 13
    "temperature",    // 14
    "°C",             // 15
    "ratio",          // 16
    "#",              // 17
    "all locations",  // 18
    "some regions",   // 19
    "team locations", // 20
    "team",           // 21
    "self",           // 22
    "metrics",        // 23
    "p_string",       // 24
    "p_int",          // 25
    "p_uint",         // 26
    "timer",          // 27
    "prop_u64",       // 28
    "prop_double",    // 29
    "prop_string",    // 30
    "prop_i64",       // 31
    "prop_i32",       // 32
    "prop_float",     // 33
    "parallel",       // 34
    "far region",     // 35
    "a.out",          // 36
    "--flag=ü",       // 37
];
pub(crate) const S_FAR: u32 = 1_000_000_007;
pub(crate) const S_FAR_TEXT: &str = "far string ✓";
/// Attribute names are strings `S_ATTR + i` ("attr UINT8", ...).
pub(crate) const S_ATTR: u32 = STRINGS.len() as u32;

/// The attribute types in the order of their attribute ids (id = position).
pub(crate) const ATTRIBUTE_TYPES: [Type; 25] = [
    Type::UINT8,
    Type::UINT16,
    Type::UINT32,
    Type::UINT64,
    Type::INT8,
    Type::INT16,
    Type::INT32,
    Type::INT64,
    Type::FLOAT,
    Type::DOUBLE,
    Type::STRING,
    Type::ATTRIBUTE,
    Type::LOCATION,
    Type::REGION,
    Type::GROUP,
    Type::METRIC,
    Type::COMM,
    Type::PARAMETER,
    Type::RMA_WIN,
    Type::SOURCE_CODE_LOCATION,
    Type::CALLING_CONTEXT,
    Type::INTERRUPT_GENERATOR,
    Type::IO_FILE,
    Type::IO_HANDLE,
    Type::LOCATION_GROUP,
];

/// A region id with a 4-byte compressed form; regions 0..=2 are dense.
pub(crate) const R_FAR: u32 = 0x0123_4567;
/// Local region ids that location mapping tables translate.
pub(crate) const R_L0_LOCAL: u32 = 4; // L0: dense table, index 4 -> R_FAR
pub(crate) const R_L1_LOCAL: u32 = 77; // L1: sparse table, 77 -> 2

pub(crate) fn attrs(entries: &[(u32, TypedValue)]) -> AttributeList {
    let mut list = AttributeList::new();
    for &(a, v) in entries {
        list.add(a, v);
    }
    list
}

/// One value of every attribute type: extreme values, then a second set of "other" extremes.
pub(crate) fn all_types_list(first: bool) -> AttributeList {
    let r = |t, id| TypedValue::reference(t, id);
    let values: [TypedValue; 25] = if first {
        [
            TypedValue::u8(u8::MAX),
            TypedValue::u16(0),
            TypedValue::u32(u32::MAX),
            TypedValue::u64(u64::MAX),
            TypedValue::i8(i8::MIN),
            TypedValue::i16(i16::MIN),
            TypedValue::i32(i32::MIN),
            TypedValue::i64(i64::MIN),
            TypedValue::f32(-1.5),
            TypedValue::f64(-2.5e300),
            r(Type::STRING, 1),
            r(Type::ATTRIBUTE, 24),
            r(Type::LOCATION, L1),
            r(Type::REGION, R_FAR as u64),
            r(Type::GROUP, 3),
            r(Type::METRIC, 2),
            r(Type::COMM, 1),
            r(Type::PARAMETER, 2),
            r(Type::RMA_WIN, U as u64),
            r(Type::SOURCE_CODE_LOCATION, U as u64),
            r(Type::CALLING_CONTEXT, U as u64),
            r(Type::INTERRUPT_GENERATOR, 1),
            r(Type::IO_FILE, U as u64),
            r(Type::IO_HANDLE, U as u64),
            r(Type::LOCATION_GROUP, 1),
        ]
    } else {
        [
            TypedValue::u8(0),
            TypedValue::u16(u16::MAX),
            TypedValue::u32(0),
            TypedValue::u64(0),
            TypedValue::i8(i8::MAX),
            TypedValue::i16(-1),
            TypedValue::i32(i32::MAX),
            TypedValue::i64(-1),
            TypedValue::f32(0.1),
            TypedValue::f64(0.1),
            r(Type::STRING, 0),
            r(Type::ATTRIBUTE, 0),
            r(Type::LOCATION, L0),
            r(Type::REGION, 0),
            r(Type::GROUP, 0),
            r(Type::METRIC, 0),
            r(Type::COMM, 0),
            r(Type::PARAMETER, 0),
            r(Type::RMA_WIN, U as u64),
            r(Type::SOURCE_CODE_LOCATION, U as u64),
            r(Type::CALLING_CONTEXT, U as u64),
            r(Type::INTERRUPT_GENERATOR, 0),
            r(Type::IO_FILE, U as u64),
            r(Type::IO_HANDLE, U as u64),
            r(Type::LOCATION_GROUP, 0),
        ]
    };
    let mut list = AttributeList::new();
    // Second list in reverse order: the list keeps insertion order.
    let order: Vec<usize> = if first {
        (0..25).collect()
    } else {
        (0..25).rev().collect()
    };
    for i in order {
        list.add(i as u32, values[i]);
    }
    list
}

pub(crate) fn global_definitions(events: &[(u64, Vec<Timed<Event>>)]) -> Vec<GlobalDef> {
    use GlobalDef as D;
    let mut defs = vec![D::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: 0,
        trace_length: u64::MAX,
        realtime_timestamp: 1_700_000_000_123_456_789,
    }];
    for (id, s) in STRINGS.iter().enumerate() {
        defs.push(D::String {
            id: id as u32,
            string: s.to_string(),
        });
    }
    for (i, t) in ATTRIBUTE_TYPES.iter().enumerate() {
        defs.push(D::String {
            id: S_ATTR + i as u32,
            string: format!("attr {t:?}"),
        });
    }
    defs.push(D::String {
        id: S_FAR,
        string: S_FAR_TEXT.to_string(),
    });
    defs.extend([
        D::Paradigm {
            paradigm: Paradigm::OPENMP,
            name: 11,
            paradigm_class: ParadigmClass::THREAD_FORK_JOIN,
        },
        D::Paradigm {
            paradigm: Paradigm::MEASUREMENT_SYSTEM,
            name: 1,
            paradigm_class: ParadigmClass::PROCESS,
        },
        D::ParadigmProperty {
            paradigm: Paradigm::OPENMP,
            property: ParadigmProperty::COMM_NAME_TEMPLATE,
            value: TypedValue::reference(Type::STRING, 12),
        },
        D::ParadigmProperty {
            paradigm: Paradigm::OPENMP,
            property: ParadigmProperty::RMA_ONLY,
            value: TypedValue::u8(1),
        },
        D::ParadigmProperty {
            paradigm: Paradigm::MEASUREMENT_SYSTEM,
            property: ParadigmProperty::RMA_WIN_NAME_TEMPLATE,
            value: TypedValue::reference(Type::STRING, 0),
        },
    ]);
    for (i, t) in ATTRIBUTE_TYPES.iter().enumerate() {
        defs.push(D::Attribute {
            id: i as u32,
            name: S_ATTR + i as u32,
            description: match i {
                0 => U,
                1 => 1,
                _ => 0,
            },
            attribute_type: *t,
        });
    }
    defs.extend([
        D::SystemTreeNode {
            id: 0,
            name: 2,
            class_name: 2,
            parent: U,
        },
        D::SystemTreeNode {
            id: 1,
            name: 3,
            class_name: 1,
            parent: 0,
        },
        D::SystemTreeNodeProperty {
            node: 0,
            name: 28,
            value: TypedValue::u64(u64::MAX),
        },
        D::SystemTreeNodeProperty {
            node: 1,
            name: 29,
            value: TypedValue::f64(-2.5e300),
        },
        D::SystemTreeNodeProperty {
            node: 1,
            name: 30,
            value: TypedValue::reference(Type::STRING, 1),
        },
        D::SystemTreeNodeProperty {
            node: 1,
            name: 31,
            value: TypedValue::i64(i64::MIN),
        },
        D::SystemTreeNodeDomain {
            node: 0,
            domain: SystemTreeDomain::MACHINE,
        },
        D::SystemTreeNodeDomain {
            node: 1,
            domain: SystemTreeDomain::SHARED_MEMORY,
        },
        D::SystemTreeNodeDomain {
            node: 1,
            domain: SystemTreeDomain::NETWORKING_DEVICE,
        },
        D::LocationGroup {
            id: 0,
            name: 4,
            location_group_type: LocationGroupType::PROCESS,
            system_tree_parent: 1,
            creating_location_group: U,
        },
        D::LocationGroup {
            id: 1,
            name: 5,
            location_group_type: LocationGroupType::ACCELERATOR,
            system_tree_parent: 1,
            creating_location_group: 0,
        },
        D::LocationGroupProperty {
            location_group: 0,
            name: 32,
            value: TypedValue::i32(-5),
        },
        D::LocationGroupProperty {
            location_group: 1,
            name: 30,
            value: TypedValue::reference(Type::STRING, 0),
        },
    ]);
    let count = |loc: u64| {
        events
            .iter()
            .find(|(l, _)| *l == loc)
            .map_or(0, |(_, e)| e.len() as u64)
    };
    defs.extend([
        D::Location {
            id: L0,
            name: 6,
            location_type: LocationType::CPU_THREAD,
            number_of_events: count(L0),
            location_group: 0,
        },
        D::Location {
            id: L1,
            name: 7,
            location_type: LocationType::ACCELERATOR_STREAM,
            number_of_events: count(L1),
            location_group: 1,
        },
        D::LocationProperty {
            location: L1,
            name: 28,
            value: TypedValue::u64(0),
        },
        D::LocationProperty {
            location: L0,
            name: 33,
            value: TypedValue::f32(0.1),
        },
        D::Region {
            id: 0,
            name: 8,
            canonical_name: 8,
            description: 0,
            region_role: RegionRole::FUNCTION,
            paradigm: Paradigm::USER,
            region_flags: RegionFlag::NONE,
            source_file: 9,
            begin_line: 1,
            end_line: u32::MAX - 1,
        },
        D::Region {
            id: 1,
            name: 1,
            canonical_name: 10,
            description: 1,
            region_role: RegionRole::LOOP,
            paradigm: Paradigm::USER,
            region_flags: RegionFlag(RegionFlag::DYNAMIC.0 | RegionFlag::PHASE.0),
            source_file: U,
            begin_line: 0,
            end_line: 0,
        },
        D::Region {
            id: 2,
            name: 34,
            canonical_name: 34,
            description: U,
            region_role: RegionRole::PARALLEL,
            paradigm: Paradigm::OPENMP,
            region_flags: RegionFlag::NONE,
            source_file: 9,
            begin_line: 10,
            end_line: 20,
        },
        D::Region {
            id: R_FAR,
            name: 35,
            canonical_name: S_FAR,
            description: 0,
            region_role: RegionRole::FILE_IO_METADATA,
            paradigm: Paradigm::KOKKOS,
            region_flags: RegionFlag::DYNAMIC,
            source_file: 1,
            begin_line: u32::MAX,
            end_line: 255,
        },
        D::Callsite {
            id: 0,
            source_file: 9,
            line_number: u32::MAX - 1,
            entered_region: 0,
            left_region: R_FAR,
        },
        D::Callsite {
            id: 1,
            source_file: U,
            line_number: 0,
            entered_region: 2,
            left_region: 1,
        },
        D::Group {
            id: 0,
            name: 18,
            group_type: GroupType::LOCATIONS,
            paradigm: Paradigm::UNKNOWN,
            group_flags: GroupFlag::NONE,
            members: vec![L0, L1],
        },
        D::Group {
            id: 1,
            name: 19,
            group_type: GroupType::REGIONS,
            paradigm: Paradigm::UNKNOWN,
            group_flags: GroupFlag::GLOBAL_MEMBERS,
            members: vec![R_FAR as u64, 0, 1],
        },
        D::Group {
            id: 2,
            name: 20,
            group_type: GroupType::COMM_LOCATIONS,
            paradigm: Paradigm::OPENMP,
            group_flags: GroupFlag::NONE,
            members: vec![L1, L0],
        },
        D::Group {
            id: 3,
            name: 21,
            group_type: GroupType::COMM_GROUP,
            paradigm: Paradigm::OPENMP,
            group_flags: GroupFlag::NONE,
            members: vec![1, 0],
        },
        D::Group {
            id: 4,
            name: 22,
            group_type: GroupType::COMM_SELF,
            paradigm: Paradigm::OPENMP,
            group_flags: GroupFlag::NONE,
            members: vec![],
        },
        D::MetricMember {
            id: 0,
            name: 13,
            description: 0,
            metric_type: MetricType::PAPI,
            metric_mode: MetricMode::ACCUMULATED_START,
            value_type: Type::UINT64,
            base: Base::DECIMAL,
            exponent: 0,
            unit: 17,
        },
        D::MetricMember {
            id: 1,
            name: 14,
            description: 1,
            metric_type: MetricType::USER,
            metric_mode: MetricMode::ABSOLUTE_POINT,
            value_type: Type::INT64,
            base: Base::BINARY,
            exponent: -3,
            unit: 15,
        },
        D::MetricMember {
            id: 2,
            name: 16,
            description: 0,
            metric_type: MetricType::OTHER,
            metric_mode: MetricMode::RELATIVE_NEXT,
            value_type: Type::DOUBLE,
            base: Base::DECIMAL,
            exponent: i64::MIN,
            unit: 0,
        },
        D::MetricClass {
            id: 0,
            members: vec![0, 1, 2],
            occurrence: MetricOccurrence::SYNCHRONOUS_STRICT,
            recorder_kind: RecorderKind::CPU,
        },
        D::MetricClass {
            id: 1,
            members: vec![2],
            occurrence: MetricOccurrence::ASYNCHRONOUS,
            recorder_kind: RecorderKind::ABSTRACT,
        },
        D::MetricInstance {
            id: 2,
            metric_class: 1,
            recorder: L1,
            scope_type: MetricScope::LOCATION,
            scope: L0,
        },
        D::MetricInstance {
            id: 3,
            metric_class: 0,
            recorder: L0,
            scope_type: MetricScope::LOCATION_GROUP,
            scope: 1,
        },
        D::MetricInstance {
            id: 4,
            metric_class: 1,
            recorder: L0,
            scope_type: MetricScope::SYSTEM_TREE_NODE,
            scope: 0,
        },
        D::MetricInstance {
            id: 5,
            metric_class: 0,
            recorder: L1,
            scope_type: MetricScope::GROUP,
            scope: 0,
        },
        D::MetricClassRecorder {
            metric: 0,
            recorder: L1,
        },
        D::MetricClassRecorder {
            metric: 1,
            recorder: L0,
        },
        D::Group {
            id: 5,
            name: 23,
            group_type: GroupType::METRIC,
            paradigm: Paradigm::UNKNOWN,
            group_flags: GroupFlag::NONE,
            members: vec![0, 2],
        },
        D::Comm {
            id: 0,
            name: 21,
            group: 3,
            parent: U,
            flags: CommFlag::NONE,
        },
        D::Comm {
            id: 1,
            name: 1,
            group: 4,
            parent: 0,
            flags: CommFlag::CREATE_DESTROY_EVENTS,
        },
        D::Parameter {
            id: 0,
            name: 24,
            parameter_type: ParameterType::STRING,
        },
        D::Parameter {
            id: 1,
            name: 25,
            parameter_type: ParameterType::INT64,
        },
        D::Parameter {
            id: 2,
            name: 26,
            parameter_type: ParameterType::UINT64,
        },
        D::InterruptGenerator {
            id: 0,
            name: 27,
            mode: InterruptGeneratorMode::TIME,
            base: Base::DECIMAL,
            exponent: -9,
            period: u64::MAX,
        },
        D::InterruptGenerator {
            id: 1,
            name: 1,
            mode: InterruptGeneratorMode::COUNT,
            base: Base::BINARY,
            exponent: i64::MAX,
            period: 0,
        },
    ]);
    defs
}

pub(crate) fn local_definitions() -> Vec<(u64, Vec<LocalDef>)> {
    vec![
        (
            L0,
            vec![
                LocalDef::MappingTable {
                    mapping_type: MappingType::REGION,
                    map: IdMap::Dense(vec![0, 1, 2, 3, R_FAR as u64]),
                },
                LocalDef::MappingTable {
                    mapping_type: MappingType::INTERRUPT_GENERATOR,
                    map: IdMap::Dense(vec![1, 0]),
                },
                LocalDef::ClockOffset {
                    time: 5,
                    offset: -123_456_789_012,
                    standard_deviation: 0.1,
                },
            ],
        ),
        (
            L1,
            vec![
                LocalDef::MappingTable {
                    mapping_type: MappingType::REGION,
                    map: IdMap::Sparse(vec![(R_L1_LOCAL as u64, 2)]),
                },
                LocalDef::MappingTable {
                    mapping_type: MappingType::IO_HANDLE,
                    map: IdMap::Sparse(vec![(u64::MAX - 1, 0), (0, u64::MAX - 1)]),
                },
                LocalDef::ClockOffset {
                    time: 0,
                    offset: 0,
                    standard_deviation: 0.0,
                },
                LocalDef::ClockOffset {
                    time: 1 << 63,
                    offset: 0,
                    standard_deviation: 2.5e-300,
                },
            ],
        ),
    ]
}
