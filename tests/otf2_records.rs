//! Every record kind the writer knows, written with edge values (zero and large ids, u64::MAX,
//! i64::MIN, doubles, NaN and infinities, empty and non-ASCII strings, UNDEFINED references),
//! read back by (a) `otf2-print` (-G, -A, -M -C), (b) the python `otf2` module
//! (tests/support/otf2_dump.py) and (c) our own reader.
//!
//! One archive (`write_archive`) holds all of it: two locations (ids 0 and 2^40 + 7), every
//! global definition kind, local definitions with a dense and a sparse mapping table that really
//! translate ids (a region and an interrupt generator id), clock offsets, every event kind with
//! attribute lists of every attribute type, and a snapshot. The expected views of the reference
//! readers are derived from what was written: `Ctx::p_*` renders `otf2-print`'s line for each
//! record, `Ctx::py_*` the python dump's object; our reader must give back exactly what was
//! written (mapping tables are reported, not applied).
//!
//! Reference-reader behaviour the expectations encode (libotf2 / python-otf2 3.0.2):
//! * `otf2-print` shows FLOAT and DOUBLE values with `%g` (6 digits), so (a) checks doubles
//!   only that far; (b) and (c) check them exactly;
//! * the python binding calls LocationType 2 by its pre-3.0 name `GPU` and resolves COMM_GROUP
//!   ranks to location ids; it does not read snapshots or local definitions;
//! * libotf2 does not translate snapshot records through the mapping tables (a mapped local
//!   region id showed as `INVALID <4>`), so the snapshot uses ids the tables leave alone;
//! * libotf2 cannot read an empty id map ("Invalid capacity value"), so no table is empty.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use pomptrace::otf2::*;
use support::*;

// ---------------------------------------------------------------------------------------------
// The archive
// ---------------------------------------------------------------------------------------------

const L0: u64 = 0;
/// A location id beyond 32 bits.
const L1: u64 = (1 << 40) + 7;
const U: u32 = UNDEFINED_U32;

const HELLO: &str = "héllo ✓ 日本";

/// String ids are dense from 0; `S_FAR` is the one deliberately sparse id.
const STRINGS: &[&str] = &[
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
const S_FAR: u32 = 1_000_000_007;
const S_FAR_TEXT: &str = "far string ✓";
/// Attribute names are strings `S_ATTR + i` ("attr UINT8", ...).
const S_ATTR: u32 = STRINGS.len() as u32;

/// The attribute types in the order of their attribute ids (id = position).
const ATTRIBUTE_TYPES: [Type; 25] = [
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
const R_FAR: u32 = 0x0123_4567;
/// Local region ids that location mapping tables translate.
const R_L0_LOCAL: u32 = 4; // L0: dense table, index 4 -> R_FAR
const R_L1_LOCAL: u32 = 77; // L1: sparse table, 77 -> 2

type Timed<T> = (u64, AttributeList, T);

/// What was written.
struct Written {
    _scratch: Scratch,
    anchor: PathBuf,
    defs: Vec<GlobalDef>,
    locals: Vec<(u64, Vec<LocalDef>)>,
    events: Vec<(u64, Vec<Timed<Event>>)>,
    snaps: Vec<(u64, Vec<Timed<SnapRecord>>)>,
}

fn attrs(entries: &[(u32, TypedValue)]) -> AttributeList {
    let mut list = AttributeList::new();
    for &(a, v) in entries {
        list.add(a, v);
    }
    list
}

/// One value of every attribute type: extreme values, then a second set of "other" extremes.
fn all_types_list(first: bool) -> AttributeList {
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

fn global_definitions(events: &[(u64, Vec<Timed<Event>>)]) -> Vec<GlobalDef> {
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

fn event_streams() -> Vec<(u64, Vec<Timed<Event>>)> {
    use Event as E;
    let none = AttributeList::new;
    let l0 = vec![
        (
            0,
            all_types_list(true),
            E::ProgramBegin {
                program_name: 36,
                arguments: vec![0, 37, 1, S_FAR],
            },
        ),
        (
            0,
            none(),
            E::MeasurementOnOff {
                mode: MeasurementMode::OFF,
            },
        ),
        (
            10,
            none(),
            E::MeasurementOnOff {
                mode: MeasurementMode::ON,
            },
        ),
        (10, none(), E::Enter { region: 0 }),
        (
            20,
            attrs(&[(9, TypedValue::f64(f64::NAN)), (3, TypedValue::u64(42))]),
            E::ThreadFork {
                model: Paradigm::OPENMP,
                number_of_requested_threads: u32::MAX,
            },
        ),
        (30, none(), E::ThreadTeamBegin { team: 0 }),
        (40, none(), E::Enter { region: R_L0_LOCAL }),
        (
            50,
            none(),
            E::ThreadAcquireLock {
                model: Paradigm::OPENMP,
                lock_id: 0,
                acquisition_order: u32::MAX - 1,
            },
        ),
        (
            60,
            none(),
            E::ThreadReleaseLock {
                model: Paradigm::OPENMP,
                lock_id: 123_456,
                acquisition_order: 0,
            },
        ),
        (
            70,
            none(),
            E::ThreadTaskCreate {
                team: 0,
                creating_thread: 0,
                generation_number: 1,
            },
        ),
        (
            80,
            none(),
            E::ThreadTaskSwitch {
                team: 0,
                creating_thread: 1,
                generation_number: u32::MAX - 1,
            },
        ),
        (
            90,
            none(),
            E::ThreadTaskComplete {
                team: 1,
                creating_thread: 0,
                generation_number: 0,
            },
        ),
        (
            100,
            none(),
            E::Metric {
                metric: 0,
                values: vec![
                    TypedValue::u64(u64::MAX),
                    TypedValue::i64(i64::MIN),
                    TypedValue::f64(-2.5e300),
                ],
            },
        ),
        (
            100,
            none(),
            E::Metric {
                metric: 2,
                values: vec![TypedValue::f64(0.1)],
            },
        ),
        (
            110,
            none(),
            E::ParameterString {
                parameter: 0,
                string: 0,
            },
        ),
        (
            111,
            none(),
            E::ParameterString {
                parameter: 0,
                string: 1,
            },
        ),
        (
            120,
            none(),
            E::ParameterInt {
                parameter: 1,
                value: i64::MIN,
            },
        ),
        (
            121,
            none(),
            E::ParameterInt {
                parameter: 1,
                value: -1,
            },
        ),
        (
            122,
            none(),
            E::ParameterInt {
                parameter: 1,
                value: i64::MAX,
            },
        ),
        (
            130,
            none(),
            E::ParameterUnsignedInt {
                parameter: 2,
                value: u64::MAX,
            },
        ),
        (
            131,
            none(),
            E::ParameterUnsignedInt {
                parameter: 2,
                value: 0,
            },
        ),
        (
            132,
            none(),
            E::MpiSend {
                receiver: 1,
                communicator: 0,
                msg_tag: u32::MAX - 1,
                msg_length: u64::MAX,
            },
        ),
        (
            133,
            none(),
            E::MpiIsend {
                receiver: 0,
                communicator: 1,
                msg_tag: 0,
                msg_length: 0,
                request_id: u64::MAX - 1,
            },
        ),
        (
            134,
            attrs(&[(3, TypedValue::u64(7))]),
            E::MpiIsendComplete {
                request_id: u64::MAX - 1,
            },
        ),
        (134, none(), E::MpiIrecvRequest { request_id: 0 }),
        (
            135,
            none(),
            E::MpiRecv {
                sender: 1,
                communicator: 0,
                msg_tag: 42,
                msg_length: 1 << 40,
            },
        ),
        (
            136,
            none(),
            E::MpiIrecv {
                sender: 0,
                communicator: 1,
                msg_tag: u32::MAX - 1,
                msg_length: 3,
                request_id: 0,
            },
        ),
        (
            137,
            none(),
            E::MpiRequestTest {
                request_id: 1 << 40,
            },
        ),
        (
            137,
            none(),
            E::MpiRequestCancelled {
                request_id: u64::MAX - 1,
            },
        ),
        (138, none(), E::MpiCollectiveBegin {}),
        (
            139,
            none(),
            E::MpiCollectiveEnd {
                collective_op: CollectiveOp::ALLREDUCE,
                communicator: 0,
                root: U,
                size_sent: 8,
                size_received: u64::MAX - 1,
            },
        ),
        (140, none(), E::Leave { region: R_L0_LOCAL }),
        (150, none(), E::ThreadTeamEnd { team: 0 }),
        (
            160,
            none(),
            E::ThreadJoin {
                model: Paradigm::OPENMP,
            },
        ),
        (170, none(), E::BufferFlush { stop_time: 175 }),
        (180, none(), E::Leave { region: 0 }),
        (1 << 62, none(), E::ProgramEnd { exit_status: -1 }),
    ];
    let l1 = vec![
        (
            5,
            none(),
            E::ProgramBegin {
                program_name: 0,
                arguments: vec![],
            },
        ),
        (5, all_types_list(false), E::Enter { region: R_L1_LOCAL }),
        (
            6,
            none(),
            E::ThreadFork {
                model: Paradigm::PTHREAD,
                number_of_requested_threads: 0,
            },
        ),
        (7, none(), E::Enter { region: 1 }),
        (
            8,
            attrs(&[
                (7, TypedValue::i64(i64::MAX)),
                (10, TypedValue::reference(Type::STRING, S_FAR as u64)),
            ]),
            E::Metric {
                metric: 0,
                values: vec![
                    TypedValue::u64(0),
                    TypedValue::i64(i64::MAX),
                    TypedValue::f64(f64::INFINITY),
                ],
            },
        ),
        (
            9,
            none(),
            E::Metric {
                metric: 5,
                values: vec![
                    TypedValue::u64(1),
                    TypedValue::i64(-1),
                    TypedValue::f64(f64::NAN),
                ],
            },
        ),
        (
            10,
            none(),
            E::Metric {
                metric: 4,
                values: vec![TypedValue::f64(f64::NEG_INFINITY)],
            },
        ),
        (11, none(), E::Leave { region: 1 }),
        (
            12,
            none(),
            E::ThreadJoin {
                model: Paradigm::PTHREAD,
            },
        ),
        (
            12,
            attrs(&[(3, TypedValue::u64(0))]),
            E::MpiCollectiveBegin {},
        ),
        (
            12,
            none(),
            E::MpiCollectiveEnd {
                collective_op: CollectiveOp::DESTROY_HANDLE_AND_DEALLOCATE,
                communicator: 1,
                root: 0,
                size_sent: 0,
                size_received: 0,
            },
        ),
        (13, none(), E::Leave { region: R_L1_LOCAL }),
        (
            u64::MAX - 1,
            none(),
            E::ProgramEnd {
                exit_status: i64::MIN,
            },
        ),
    ];
    vec![(L0, l0), (L1, l1)]
}

fn snapshot_streams() -> Vec<(u64, Vec<Timed<SnapRecord>>)> {
    use SnapRecord as S;
    let none = AttributeList::new;
    let l0 = vec![
        (
            155,
            none(),
            S::SnapshotStart {
                number_of_records: 19,
            },
        ),
        (
            155,
            none(),
            S::MeasurementOnOff {
                orig_event_time: 10,
                mode: MeasurementMode::ON,
            },
        ),
        (
            155,
            none(),
            S::Enter {
                orig_event_time: 10,
                region: 0,
            },
        ),
        (
            155,
            attrs(&[
                (1, TypedValue::u16(7)),
                (12, TypedValue::reference(Type::LOCATION, L1)),
            ]),
            S::Enter {
                orig_event_time: 40,
                region: 2,
            },
        ),
        (
            155,
            none(),
            S::Metric {
                orig_event_time: 100,
                metric: 0,
                values: vec![
                    TypedValue::u64(u64::MAX),
                    TypedValue::i64(i64::MIN),
                    TypedValue::f64(-2.5e300),
                ],
            },
        ),
        (
            155,
            none(),
            S::ParameterString {
                orig_event_time: 111,
                parameter: 0,
                string: 1,
            },
        ),
        (
            155,
            none(),
            S::ParameterInt {
                orig_event_time: 122,
                parameter: 1,
                value: i64::MIN,
            },
        ),
        (
            155,
            none(),
            S::ParameterUnsignedInt {
                orig_event_time: 131,
                parameter: 2,
                value: u64::MAX,
            },
        ),
        (
            155,
            none(),
            S::MpiSend {
                orig_event_time: 132,
                receiver: 1,
                communicator: 0,
                msg_tag: u32::MAX - 1,
                msg_length: u64::MAX,
            },
        ),
        (
            155,
            none(),
            S::MpiIsend {
                orig_event_time: 133,
                receiver: 0,
                communicator: 1,
                msg_tag: 0,
                msg_length: 0,
                request_id: u64::MAX - 1,
            },
        ),
        (
            155,
            none(),
            S::MpiIsendComplete {
                orig_event_time: 134,
                request_id: u64::MAX - 1,
            },
        ),
        (
            155,
            none(),
            S::MpiRecv {
                orig_event_time: 135,
                sender: 1,
                communicator: 0,
                msg_tag: 42,
                msg_length: 1 << 40,
            },
        ),
        (
            155,
            none(),
            S::MpiIrecvRequest {
                orig_event_time: 134,
                request_id: 0,
            },
        ),
        (
            155,
            none(),
            S::MpiIrecv {
                orig_event_time: 136,
                sender: 0,
                communicator: 1,
                msg_tag: 7,
                msg_length: 3,
                request_id: 0,
            },
        ),
        (
            155,
            none(),
            S::MpiCollectiveBegin {
                orig_event_time: 138,
            },
        ),
        (
            155,
            none(),
            S::MpiCollectiveEnd {
                orig_event_time: 139,
                collective_op: CollectiveOp::ALLREDUCE,
                communicator: 0,
                root: U,
                size_sent: 8,
                size_received: u64::MAX - 1,
            },
        ),
        (
            155,
            none(),
            S::OmpFork {
                orig_event_time: 20,
                number_of_requested_threads: u32::MAX,
            },
        ),
        (
            155,
            none(),
            S::OmpAcquireLock {
                orig_event_time: 50,
                lock_id: 0,
                acquisition_order: u32::MAX - 1,
            },
        ),
        (
            155,
            none(),
            S::OmpTaskCreate {
                orig_event_time: 70,
                task_id: u64::MAX,
            },
        ),
        (
            155,
            none(),
            S::OmpTaskSwitch {
                orig_event_time: 80,
                task_id: 1 << 40,
            },
        ),
        (
            155,
            none(),
            S::SnapshotEnd {
                cont_read_pos: u64::MAX,
            },
        ),
    ];
    // L1 gets no snapshot: `finish` writes its empty .snap file.
    vec![(L0, l0)]
}

fn local_definitions() -> Vec<(u64, Vec<LocalDef>)> {
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

fn write_archive() -> Written {
    write_archive_with(false)
}

/// One event through `EventWriter::write`, or, with `dedicated` and no attributes, through
/// the event's own encoder where it has one.
fn write_event(
    w: &mut EventWriter<FileSink>,
    time: u64,
    list: &AttributeList,
    event: &Event,
    dedicated: bool,
) {
    use Event as E;
    if !dedicated || !list.is_empty() {
        w.write(time, Some(list), event);
        return;
    }
    match *event {
        E::Enter { region } => w.enter(time, region),
        E::Leave { region } => w.leave(time, region),
        E::ThreadFork {
            model,
            number_of_requested_threads,
        } => w.thread_fork(time, model, number_of_requested_threads),
        E::ThreadJoin { model } => w.thread_join(time, model),
        E::ThreadTeamBegin { team } => w.thread_team_begin(time, team),
        E::ThreadTeamEnd { team } => w.thread_team_end(time, team),
        E::ThreadAcquireLock {
            model,
            lock_id,
            acquisition_order,
        } => w.thread_acquire_lock(time, model, lock_id, acquisition_order),
        E::ThreadReleaseLock {
            model,
            lock_id,
            acquisition_order,
        } => w.thread_release_lock(time, model, lock_id, acquisition_order),
        E::ThreadTaskCreate {
            team,
            creating_thread,
            generation_number,
        } => w.thread_task_create(time, team, creating_thread, generation_number),
        E::ThreadTaskSwitch {
            team,
            creating_thread,
            generation_number,
        } => w.thread_task_switch(time, team, creating_thread, generation_number),
        E::ThreadTaskComplete {
            team,
            creating_thread,
            generation_number,
        } => w.thread_task_complete(time, team, creating_thread, generation_number),
        E::BufferFlush { stop_time } => w.buffer_flush(time, stop_time),
        _ => w.write(time, Some(list), event),
    }
}

fn write_archive_with(dedicated: bool) -> Written {
    let scratch = Scratch::new("records");
    let dir = scratch.join("archive");
    let mut archive = ArchiveWriter::create(&dir, "traces", ArchiveConfig::default()).unwrap();
    let events = event_streams();
    let snaps = snapshot_streams();
    let locals = local_definitions();
    let defs = global_definitions(&events);
    for (loc, stream) in &events {
        let mut w = archive.event_writer(*loc).unwrap();
        for (time, list, event) in stream {
            write_event(&mut w, *time, list, event, dedicated);
        }
        assert_eq!(w.events(), stream.len() as u64);
        w.finish().1.unwrap();
    }
    archive.set_snapshot_count(1);
    for (loc, stream) in &snaps {
        let mut w = archive.snap_writer(*loc).unwrap();
        for (time, list, record) in stream {
            w.write(*time, Some(list), record);
        }
        w.finish().1.unwrap();
    }
    for (loc, list) in &locals {
        let mut w = archive.local_def_writer();
        for def in list {
            w.write(def);
        }
        archive.write_local_defs(*loc, w).unwrap();
    }
    let mut w = archive.global_def_writer();
    for def in &defs {
        w.write(def);
    }
    archive.finish(w, &[L0, L1]).unwrap();
    Written {
        anchor: dir.join("traces.otf2"),
        _scratch: scratch,
        defs,
        locals,
        events,
        snaps,
    }
}
// ---------------------------------------------------------------------------------------------
// A small JSON reader for the python dump
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(BTreeMap<String, Json>),
}

impl Json {
    fn parse(text: &str) -> Json {
        let mut p = JsonParser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value();
        p.ws();
        assert_eq!(
            p.i,
            p.s.len(),
            "trailing characters after the JSON document"
        );
        v
    }
    fn get(&self, key: &str) -> &Json {
        match self {
            Json::Obj(m) => m
                .get(key)
                .unwrap_or_else(|| panic!("no {key:?} in {self:?}")),
            _ => panic!("not an object: {self:?}"),
        }
    }
    fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(a) => a,
            _ => panic!("not an array: {self:?}"),
        }
    }
}

struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl JsonParser<'_> {
    fn ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }
    fn next(&mut self) -> u8 {
        let c = *self.s.get(self.i).expect("JSON ends early");
        self.i += 1;
        c
    }
    fn expect(&mut self, c: u8) {
        self.ws();
        let got = self.next();
        assert_eq!(
            got as char,
            c as char,
            "JSON: unexpected byte at {}",
            self.i - 1
        );
    }
    fn literal(&mut self, word: &str, value: Json) -> Json {
        assert!(
            self.s[self.i..].starts_with(word.as_bytes()),
            "JSON: bad literal"
        );
        self.i += word.len();
        value
    }
    fn value(&mut self) -> Json {
        self.ws();
        match self.s.get(self.i).copied().expect("JSON ends early") {
            b'{' => {
                self.i += 1;
                let mut m = BTreeMap::new();
                self.ws();
                if self.s[self.i] == b'}' {
                    self.i += 1;
                    return Json::Obj(m);
                }
                loop {
                    self.ws();
                    let key = self.string();
                    self.expect(b':');
                    let value = self.value();
                    assert!(m.insert(key, value).is_none(), "JSON: repeated key");
                    self.ws();
                    match self.next() {
                        b',' => continue,
                        b'}' => return Json::Obj(m),
                        c => panic!("JSON: unexpected {:?} in object", c as char),
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.s[self.i] == b']' {
                    self.i += 1;
                    return Json::Arr(a);
                }
                loop {
                    a.push(self.value());
                    self.ws();
                    match self.next() {
                        b',' => continue,
                        b']' => return Json::Arr(a),
                        c => panic!("JSON: unexpected {:?} in array", c as char),
                    }
                }
            }
            b'"' => Json::Str(self.string()),
            b't' => self.literal("true", Json::Bool(true)),
            b'f' => self.literal("false", Json::Bool(false)),
            b'n' => self.literal("null", Json::Null),
            _ => {
                let start = self.i;
                while matches!(
                    self.s.get(self.i),
                    Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                ) {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                if t.contains(['.', 'e', 'E']) {
                    Json::Float(t.parse().unwrap_or_else(|_| panic!("JSON: bad number {t}")))
                } else {
                    Json::Int(
                        t.parse()
                            .unwrap_or_else(|_| panic!("JSON: bad number {t:?}")),
                    )
                }
            }
        }
    }
    fn hex4(&mut self) -> u32 {
        let t = std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap();
        self.i += 4;
        u32::from_str_radix(t, 16).expect("JSON: bad \\u escape")
    }
    fn string(&mut self) -> String {
        self.expect(b'"');
        let mut out = Vec::new();
        loop {
            match self.next() {
                b'"' => return String::from_utf8(out).expect("JSON: string is not UTF-8"),
                b'\\' => {
                    let c = match self.next() {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let mut cp = self.hex4();
                            if (0xd800..0xdc00).contains(&cp) {
                                assert_eq!(
                                    &self.s[self.i..self.i + 2],
                                    b"\\u",
                                    "JSON: lone surrogate"
                                );
                                self.i += 2;
                                let low = self.hex4();
                                assert!((0xdc00..0xe000).contains(&low), "JSON: bad low surrogate");
                                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                            }
                            char::from_u32(cp).expect("JSON: bad code point")
                        }
                        c => panic!("JSON: bad escape {:?}", c as char),
                    };
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                c => out.push(c),
            }
        }
    }
}

fn js(s: &str) -> Json {
    Json::Str(s.to_string())
}
fn ji(v: impl Into<i128>) -> Json {
    Json::Int(v.into())
}
/// A float as the dump writes it (non-finite values as strings).
fn jf(v: f64) -> Json {
    if v.is_nan() {
        js("NaN")
    } else if v.is_infinite() {
        js(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        Json::Float(v)
    }
}
fn jobj(fields: Vec<(&str, Json)>) -> Json {
    Json::Obj(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

#[test]
fn the_json_reader_handles_what_the_dump_can_contain() {
    let v = Json::parse(
        r#" {"a": [1, -2, 18446744073709551615, -9223372036854775808, 0.1, -2.5e+300, 1E-5],
             "b": "h\u00e9\"\\\/\n\t\ud83d\ude00 ✓", "c": {}, "d": [], "e": [true, false, null]} "#,
    );
    assert_eq!(
        v,
        jobj(vec![
            (
                "a",
                Json::Arr(vec![
                    ji(1),
                    ji(-2),
                    ji(u64::MAX),
                    ji(i64::MIN),
                    Json::Float(0.1),
                    Json::Float(-2.5e300),
                    Json::Float(1e-5),
                ])
            ),
            ("b", js("hé\"\\/\n\t😀 ✓")),
            ("c", jobj(vec![])),
            ("d", Json::Arr(vec![])),
            (
                "e",
                Json::Arr(vec![Json::Bool(true), Json::Bool(false), Json::Null])
            ),
        ])
    );
}

// ---------------------------------------------------------------------------------------------
// What the reference readers should show, derived from what was written
// ---------------------------------------------------------------------------------------------

/// C's `%g` (6 significant digits), as `otf2-print` formats FLOAT and DOUBLE values.
fn fmt_g(v: f64) -> String {
    fn strip(s: &str) -> &str {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            s
        }
    }
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{v:.5e}");
    let (mantissa, exp) = e.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    if (-4..6).contains(&exp) {
        strip(&format!("{:.*}", (5 - exp) as usize, v)).to_string()
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mantissa), exp.abs())
    }
}

#[test]
fn fmt_g_matches_c() {
    let cases = [
        (0.1, "0.1"),
        (-2.5e300, "-2.5e+300"),
        (1.0 / 3.0, "0.333333"),
        (-2.0 / 3.0e-300, "-6.66667e+299"),
        (123456.0, "123456"),
        (1234567.0, "1.23457e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-1.5, "-1.5"),
        (f64::NAN, "nan"),
        (f64::NEG_INFINITY, "-inf"),
    ];
    for (v, s) in cases {
        assert_eq!(fmt_g(v), s, "{v:e}");
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `otf2-print` shows ClockProperties' realtime timestamp as a local date ("2023-11-14
/// 22:13:20.123456789 +0000"); turn it back into nanoseconds since the epoch, "@<ns>".
fn normalize_date(rest: &str) -> String {
    let Some((head, date)) = rest.split_once("Date: ") else {
        return rest.to_string();
    };
    let parts: Vec<&str> = date.split([' ', '-', ':', '.']).collect();
    let [y, mo, d, h, mi, s, frac, tz] = parts[..] else {
        panic!("unexpected date {date:?}");
    };
    let n = |t: &str| {
        t.parse::<i64>()
            .unwrap_or_else(|_| panic!("bad date {date:?}"))
    };
    let (tz_sign, tz) = if let Some(t) = tz.strip_prefix('+') {
        (1, t)
    } else {
        (-1, tz.strip_prefix('-').expect("time zone"))
    };
    assert_eq!(frac.len(), 9, "nanoseconds in {date:?}");
    let offset = tz_sign * (n(&tz[..2]) * 3600 + n(&tz[2..]) * 60);
    let secs = days_from_civil(n(y), n(mo), n(d)) * 86_400 + n(h) * 3600 + n(mi) * 60 + n(s);
    let ns = (secs - offset) as i128 * 1_000_000_000 + n(frac) as i128;
    format!("{head}Date: @{ns}")
}

fn is_undefined_ref(t: Type, id: u64) -> bool {
    match t {
        Type::LOCATION => id == UNDEFINED_U64,
        _ => id == UNDEFINED_U32 as u64,
    }
}

fn mapping_type_of(t: Type) -> Option<MappingType> {
    Some(match t {
        Type::STRING => MappingType::STRING,
        Type::ATTRIBUTE => MappingType::ATTRIBUTE,
        Type::LOCATION => MappingType::LOCATION,
        Type::REGION => MappingType::REGION,
        Type::GROUP => MappingType::GROUP,
        Type::METRIC => MappingType::METRIC,
        Type::COMM => MappingType::COMM,
        Type::PARAMETER => MappingType::PARAMETER,
        Type::RMA_WIN => MappingType::RMA_WIN,
        Type::SOURCE_CODE_LOCATION => MappingType::SOURCE_CODE_LOCATION,
        Type::CALLING_CONTEXT => MappingType::CALLING_CONTEXT,
        Type::INTERRUPT_GENERATOR => MappingType::INTERRUPT_GENERATOR,
        Type::IO_FILE => MappingType::IO_FILE,
        Type::IO_HANDLE => MappingType::IO_HANDLE,
        Type::LOCATION_GROUP => MappingType::LOCATION_GROUP,
        _ => return None,
    })
}

/// `otf2-print`'s bit-set notation: `NONE` or `{A, B}`.
fn print_flags(bits: u32, names: &[(u32, &str)]) -> String {
    if bits == 0 {
        return "NONE".into();
    }
    let set: Vec<&str> = names
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    format!("{{{}}}", set.join(", "))
}

/// The dump's bit-set notation: `NONE`, `A`, `A|B`.
fn py_flags(bits: u32, names: &[(u32, &str)]) -> Json {
    if bits == 0 {
        return js("NONE");
    }
    let set: Vec<&str> = names
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    js(&set.join("|"))
}

const REGION_FLAGS: &[(u32, &str)] = &[(1, "DYNAMIC"), (2, "PHASE")];
const GROUP_FLAGS: &[(u32, &str)] = &[(1, "GLOBAL_MEMBERS")];
const COMM_FLAGS: &[(u32, &str)] = &[(1, "CREATE_DESTROY_EVENTS")];

/// An enum's name (the value itself where this crate has no name for it).
fn en<T: std::fmt::Debug>(v: T) -> String {
    format!("{v:?}")
}

/// Looks things up in what was written.
struct Ctx<'a> {
    w: &'a Written,
}

impl Ctx<'_> {
    fn text(&self, id: u32) -> &str {
        self.w
            .defs
            .iter()
            .find_map(|d| match d {
                GlobalDef::String { id: i, string } if *i == id => Some(string.as_str()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("string {id} not written"))
    }
    fn find<T>(&self, what: &str, f: impl Fn(&GlobalDef) -> Option<T>) -> T {
        self.w
            .defs
            .iter()
            .find_map(f)
            .unwrap_or_else(|| panic!("{what} not written"))
    }
    /// The name string of a definition that has an id.
    fn name_of(&self, t: Type, id: u64) -> u32 {
        use GlobalDef as D;
        self.find(&format!("{t:?} {id}"), |d| match (t, d) {
            (Type::ATTRIBUTE, D::Attribute { id: i, name, .. })
            | (Type::REGION, D::Region { id: i, name, .. })
            | (Type::GROUP, D::Group { id: i, name, .. })
            | (Type::COMM, D::Comm { id: i, name, .. })
            | (Type::PARAMETER, D::Parameter { id: i, name, .. })
            | (Type::INTERRUPT_GENERATOR, D::InterruptGenerator { id: i, name, .. })
            | (Type::LOCATION_GROUP, D::LocationGroup { id: i, name, .. })
                if *i as u64 == id =>
            {
                Some(*name)
            }
            (Type::LOCATION, D::Location { id: i, name, .. }) if *i == id => Some(*name),
            _ => None,
        })
    }
    fn metric_members(&self, metric: u32) -> Vec<u32> {
        self.find(&format!("metric {metric}"), |d| match d {
            GlobalDef::MetricClass { id, members, .. } if *id == metric => Some(members.clone()),
            GlobalDef::MetricInstance {
                id, metric_class, ..
            } if *id == metric => Some(self.metric_members(*metric_class)),
            _ => None,
        })
    }
    fn member_name_and_type(&self, member: u32) -> (u32, Type) {
        self.find(&format!("metric member {member}"), |d| match d {
            GlobalDef::MetricMember {
                id,
                name,
                value_type,
                ..
            } if *id == member => Some((*name, *value_type)),
            _ => None,
        })
    }
    fn group(&self, group: u32) -> (GroupType, Paradigm, Vec<u64>) {
        self.find(&format!("group {group}"), |d| match d {
            GlobalDef::Group {
                id,
                group_type,
                paradigm,
                members,
                ..
            } if *id == group => Some((*group_type, *paradigm, members.clone())),
            _ => None,
        })
    }
    /// The location a COMM_GROUP rank stands for (an index into the COMM_LOCATIONS group of
    /// the same paradigm).
    fn rank_location(&self, paradigm: Paradigm, rank: u64) -> u64 {
        let all = self.find("COMM_LOCATIONS group", |d| match d {
            GlobalDef::Group {
                group_type: GroupType::COMM_LOCATIONS,
                paradigm: p,
                members,
                ..
            } if *p == paradigm => Some(members.clone()),
            _ => None,
        });
        all[rank as usize]
    }

    /// The id a reference reader sees for `id` (of type `t`) written on `location`: local
    /// mapping tables translate it; ids missing from a table pass unchanged.
    fn map(&self, location: u64, t: Type, id: u64) -> u64 {
        let Some(mt) = mapping_type_of(t) else {
            return id;
        };
        let tables = &self
            .w
            .locals
            .iter()
            .find(|(l, _)| *l == location)
            .unwrap()
            .1;
        for def in tables {
            match def {
                LocalDef::MappingTable { mapping_type, map } if *mapping_type == mt => {
                    return match map {
                        IdMap::Dense(g) => g.get(id as usize).copied().unwrap_or(id),
                        IdMap::Sparse(p) => p.iter().find(|(l, _)| *l == id).map_or(id, |p| p.1),
                    };
                }
                _ => {}
            }
        }
        id
    }
    fn map32(&self, location: u64, t: Type, id: u32) -> u32 {
        self.map(location, t, id as u64) as u32
    }
    fn map_value(&self, location: u64, v: TypedValue) -> TypedValue {
        TypedValue::new(v.value_type, self.map(location, v.value_type, v.raw))
    }
    /// An event as a reference reader reports it: ids translated by the location's tables.
    fn global_event(&self, location: u64, event: &Event) -> Event {
        use Event as E;
        let m = |t, id| self.map32(location, t, id);
        let mut e = event.clone();
        match &mut e {
            E::Enter { region } | E::Leave { region } => *region = m(Type::REGION, *region),
            E::Metric { metric, .. } => *metric = m(Type::METRIC, *metric),
            E::ParameterString { parameter, string } => {
                *parameter = m(Type::PARAMETER, *parameter);
                *string = m(Type::STRING, *string);
            }
            E::ParameterInt { parameter, .. } | E::ParameterUnsignedInt { parameter, .. } => {
                *parameter = m(Type::PARAMETER, *parameter)
            }
            E::ThreadTeamBegin { team }
            | E::ThreadTeamEnd { team }
            | E::ThreadTaskCreate { team, .. }
            | E::ThreadTaskSwitch { team, .. }
            | E::ThreadTaskComplete { team, .. } => *team = m(Type::COMM, *team),
            E::MpiSend { communicator, .. }
            | E::MpiIsend { communicator, .. }
            | E::MpiRecv { communicator, .. }
            | E::MpiIrecv { communicator, .. }
            | E::MpiCollectiveEnd { communicator, .. } => {
                *communicator = m(Type::COMM, *communicator)
            }
            E::ProgramBegin {
                program_name,
                arguments,
            } => {
                *program_name = m(Type::STRING, *program_name);
                for a in arguments {
                    *a = m(Type::STRING, *a);
                }
            }
            _ => {}
        }
        e
    }
    fn global_attributes(&self, location: u64, list: &AttributeList) -> Vec<(u32, TypedValue)> {
        list.entries()
            .iter()
            .map(|&(a, v)| {
                (
                    self.map32(location, Type::ATTRIBUTE, a),
                    self.map_value(location, v),
                )
            })
            .collect()
    }
    fn attribute_type(&self, attribute: u32) -> Type {
        self.find(&format!("attribute {attribute}"), |d| match d {
            GlobalDef::Attribute {
                id, attribute_type, ..
            } if *id == attribute => Some(*attribute_type),
            _ => None,
        })
    }

    // --- otf2-print's notation ---

    fn p_str(&self, id: u32) -> String {
        if id == U {
            "UNDEFINED".into()
        } else {
            format!("\"{}\" <{id}>", self.text(id))
        }
    }
    fn p_ref(&self, t: Type, id: u64) -> String {
        if is_undefined_ref(t, id) {
            return "UNDEFINED".into();
        }
        match t {
            Type::STRING => self.p_str(id as u32),
            Type::METRIC => id.to_string(),
            _ => format!("\"{}\" <{id}>", self.text(self.name_of(t, id))),
        }
    }
    fn p_region(&self, id: u32) -> String {
        self.p_ref(Type::REGION, id as u64)
    }
    fn p_location(&self, id: u64) -> String {
        self.p_ref(Type::LOCATION, id)
    }
    fn p_node(&self, node: u32) -> String {
        if node == U {
            return "UNDEFINED".into();
        }
        let (name, class) = self.find(&format!("node {node}"), |d| match d {
            GlobalDef::SystemTreeNode {
                id,
                name,
                class_name,
                ..
            } if *id == node => Some((*name, *class_name)),
            _ => None,
        });
        format!("\"{}::{}\" <{node}>", self.text(class), self.text(name))
    }
    /// A paradigm: by its definition's name where it has one.
    fn p_paradigm(&self, p: Paradigm) -> String {
        self.w
            .defs
            .iter()
            .find_map(|d| match d {
                GlobalDef::Paradigm { paradigm, name, .. } if *paradigm == p => {
                    Some(format!("\"{}\" <{}>", self.text(*name), p.0))
                }
                _ => None,
            })
            .unwrap_or_else(|| en(p))
    }
    fn p_member(&self, member: u32) -> String {
        format!(
            "\"{}\" <{member}>",
            self.text(self.member_name_and_type(member).0)
        )
    }
    fn p_value(&self, v: TypedValue) -> String {
        match v.value_type {
            Type::UINT8 | Type::UINT16 | Type::UINT32 | Type::UINT64 => v.raw.to_string(),
            Type::INT8 | Type::INT16 | Type::INT32 | Type::INT64 => v.as_i64().to_string(),
            Type::FLOAT | Type::DOUBLE => fmt_g(v.as_f64()),
            t => self.p_ref(t, v.raw),
        }
    }
    /// `Type: T, Value: V` of properties.
    fn p_property(&self, v: TypedValue) -> String {
        format!("Type: {:?}, Value: {}", v.value_type, self.p_value(v))
    }
    fn p_list(items: Vec<String>, one: &str, many: &str) -> String {
        let word = if items.len() == 1 { one } else { many };
        if items.is_empty() {
            format!("0 {many}")
        } else {
            format!("{} {word}: {}", items.len(), items.join(", "))
        }
    }
    fn p_attributes(&self, entries: &[(u32, TypedValue)]) -> Option<String> {
        if entries.is_empty() {
            return None;
        }
        let items: Vec<String> = entries
            .iter()
            .map(|&(a, v)| {
                format!(
                    "({}; {:?}; {})",
                    self.p_ref(Type::ATTRIBUTE, a as u64),
                    v.value_type,
                    self.p_value(v)
                )
            })
            .collect();
        Some(items.join(", "))
    }
    fn p_metric_values(&self, metric: u32, values: &[TypedValue]) -> String {
        let members = self.metric_members(metric);
        let items = members
            .iter()
            .zip(values)
            .map(|(&m, &v)| {
                format!(
                    "({}; {:?}; {})",
                    self.p_member(m),
                    v.value_type,
                    self.p_value(v)
                )
            })
            .collect();
        format!(
            "Metric: {metric}, {}",
            Self::p_list(items, "Value", "Values")
        )
    }

    /// A global definition as `otf2-print -G` shows it: (record name, id column, the rest).
    fn p_def(&self, d: &GlobalDef) -> (&'static str, String, String) {
        use GlobalDef as D;
        let none = String::new;
        match d {
            D::ClockProperties {
                timer_resolution,
                global_offset,
                trace_length,
                realtime_timestamp,
            } => (
                "CLOCK_PROPERTIES",
                none(),
                format!(
                    "Ticks per Seconds: {timer_resolution}, Global Offset: {global_offset}, \
                     Length: {trace_length}, Date: @{realtime_timestamp}"
                ),
            ),
            D::String { id, string } => ("STRING", id.to_string(), format!("\"{string}\"")),
            D::Paradigm {
                paradigm,
                name,
                paradigm_class,
            } => (
                "PARADIGM",
                paradigm.0.to_string(),
                format!(
                    "{}, Name: {}, Class: {}",
                    en(*paradigm),
                    self.p_str(*name),
                    en(*paradigm_class)
                ),
            ),
            D::ParadigmProperty {
                paradigm,
                property,
                value,
            } => {
                // RMA_ONLY is a boolean property.
                let typed =
                    if *property == ParadigmProperty::RMA_ONLY && value.value_type == Type::UINT8 {
                        format!(
                            "Type: BOOLEAN, Value: {}",
                            if value.raw != 0 { "TRUE" } else { "FALSE" }
                        )
                    } else {
                        self.p_property(*value)
                    };
                (
                    "PARADIGM_PROPERTY",
                    none(),
                    format!(
                        "Paradigm: {}, Property: {}, {typed}",
                        self.p_paradigm(*paradigm),
                        en(*property)
                    ),
                )
            }
            D::Attribute {
                id,
                name,
                description,
                attribute_type,
            } => (
                "ATTRIBUTE",
                id.to_string(),
                format!(
                    "Name: {}, Description: {}, Type: {}",
                    self.p_str(*name),
                    self.p_str(*description),
                    en(*attribute_type)
                ),
            ),
            D::SystemTreeNode {
                id,
                name,
                class_name,
                parent,
            } => (
                "SYSTEM_TREE_NODE",
                id.to_string(),
                format!(
                    "Name: {}, Class: {}, Parent: {}",
                    self.p_str(*name),
                    self.p_str(*class_name),
                    self.p_node(*parent)
                ),
            ),
            D::SystemTreeNodeProperty { node, name, value } => (
                "SYSTEM_TREE_NODE_PROPERTY",
                none(),
                format!(
                    "System Tree Node: {}, Name: {}, {}",
                    self.p_node(*node),
                    self.p_str(*name),
                    self.p_property(*value)
                ),
            ),
            D::SystemTreeNodeDomain { node, domain } => (
                "SYSTEM_TREE_NODE_DOMAIN",
                none(),
                format!(
                    "System Tree Node: {}, Domain: {}",
                    self.p_node(*node),
                    en(*domain)
                ),
            ),
            D::LocationGroup {
                id,
                name,
                location_group_type,
                system_tree_parent,
                creating_location_group,
            } => (
                "LOCATION_GROUP",
                id.to_string(),
                format!(
                    "Name: {}, Type: {}, Parent: {}, Creator: {}",
                    self.p_str(*name),
                    en(*location_group_type),
                    self.p_node(*system_tree_parent),
                    self.p_ref(Type::LOCATION_GROUP, *creating_location_group as u64)
                ),
            ),
            D::LocationGroupProperty {
                location_group,
                name,
                value,
            } => (
                "LOCATION_GROUP_PROPERTY",
                none(),
                format!(
                    "Location Group: {}, Name: {}, {}",
                    self.p_ref(Type::LOCATION_GROUP, *location_group as u64),
                    self.p_str(*name),
                    self.p_property(*value)
                ),
            ),
            D::Location {
                id,
                name,
                location_type,
                number_of_events,
                location_group,
            } => (
                "LOCATION",
                id.to_string(),
                format!(
                    "Name: {}, Type: {}, # Events: {number_of_events}, Group: {}",
                    self.p_str(*name),
                    en(*location_type),
                    self.p_ref(Type::LOCATION_GROUP, *location_group as u64)
                ),
            ),
            D::LocationProperty {
                location,
                name,
                value,
            } => (
                "LOCATION_PROPERTY",
                none(),
                format!(
                    "Location: {}, Name: {}, {}",
                    self.p_location(*location),
                    self.p_str(*name),
                    self.p_property(*value)
                ),
            ),
            D::Region {
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
            } => (
                "REGION",
                id.to_string(),
                format!(
                    "Name: {} (Aka. {}), Descr.: {}, Role: {}, Paradigm: {}, Flags: {}, \
                     File: {}, Begin: {begin_line}, End: {end_line}",
                    self.p_str(*name),
                    self.p_str(*canonical_name),
                    self.p_str(*description),
                    en(*region_role),
                    self.p_paradigm(*paradigm),
                    print_flags(region_flags.0, REGION_FLAGS),
                    self.p_str(*source_file)
                ),
            ),
            D::Callsite {
                id,
                source_file,
                line_number,
                entered_region,
                left_region,
            } => (
                "CALLSITE",
                id.to_string(),
                format!(
                    "File: {}, Line Number: {line_number}, Entered Region: {}, Left Region: {}",
                    self.p_str(*source_file),
                    self.p_region(*entered_region),
                    self.p_region(*left_region)
                ),
            ),
            D::Group {
                id,
                name,
                group_type,
                paradigm,
                group_flags,
                members,
            } => {
                let items = members
                    .iter()
                    .map(|&m| match *group_type {
                        GroupType::LOCATIONS | GroupType::COMM_LOCATIONS => self.p_location(m),
                        GroupType::REGIONS => self.p_region(m as u32),
                        // otf2-print names the members of a METRIC group by metric member.
                        GroupType::METRIC => self.p_member(m as u32),
                        GroupType::COMM_GROUP => {
                            format!(
                                "{m} ({})",
                                self.p_location(self.rank_location(*paradigm, m))
                            )
                        }
                        t => panic!("no members expected in a {t:?} group"),
                    })
                    .collect();
                (
                    "GROUP",
                    id.to_string(),
                    format!(
                        "Name: {}, Type: {}, Paradigm: {}, Flags: {}, {}",
                        self.p_str(*name),
                        en(*group_type),
                        self.p_paradigm(*paradigm),
                        print_flags(group_flags.0, GROUP_FLAGS),
                        Self::p_list(items, "Member", "Members")
                    ),
                )
            }
            D::MetricMember {
                id,
                name,
                description,
                metric_type,
                metric_mode,
                value_type,
                base,
                exponent,
                unit,
            } => (
                "METRIC_MEMBER",
                id.to_string(),
                format!(
                    "Name: {}, Descr.: {}, Type: {}, Mode: {}, Value Type: {}, Base: {}, \
                     Exponent: {exponent}, Unit: {}",
                    self.p_str(*name),
                    self.p_str(*description),
                    en(*metric_type),
                    en(*metric_mode),
                    en(*value_type),
                    en(*base),
                    self.p_str(*unit)
                ),
            ),
            D::MetricClass {
                id,
                members,
                occurrence,
                recorder_kind,
            } => (
                "METRIC_CLASS",
                id.to_string(),
                format!(
                    "Occurrence: {}, Kind: {}, {}",
                    en(*occurrence),
                    en(*recorder_kind),
                    Self::p_list(
                        members.iter().map(|&m| self.p_member(m)).collect(),
                        "Member",
                        "Members"
                    )
                ),
            ),
            D::MetricInstance {
                id,
                metric_class,
                recorder,
                scope_type,
                scope,
            } => {
                let scope_ref = match *scope_type {
                    MetricScope::LOCATION => self.p_location(*scope),
                    MetricScope::LOCATION_GROUP => self.p_ref(Type::LOCATION_GROUP, *scope),
                    MetricScope::SYSTEM_TREE_NODE => self.p_node(*scope as u32),
                    MetricScope::GROUP => self.p_ref(Type::GROUP, *scope),
                    s => panic!("scope {s:?}"),
                };
                (
                    "METRIC_INSTANCE",
                    id.to_string(),
                    format!(
                        "Class: {metric_class}, Recorder: {}, Scope: {} {scope_ref}",
                        self.p_location(*recorder),
                        en(*scope_type)
                    ),
                )
            }
            D::MetricClassRecorder { metric, recorder } => (
                "METRIC_CLASS_RECORDER",
                none(),
                format!("Class: {metric}, Recorder: {}", self.p_location(*recorder)),
            ),
            D::Comm {
                id,
                name,
                group,
                parent,
                flags,
            } => (
                "COMM",
                id.to_string(),
                format!(
                    "Name: {}, Group: {}, Parent: {}, Flags: {}",
                    self.p_str(*name),
                    self.p_ref(Type::GROUP, *group as u64),
                    self.p_ref(Type::COMM, *parent as u64),
                    print_flags(flags.0, COMM_FLAGS)
                ),
            ),
            D::Parameter {
                id,
                name,
                parameter_type,
            } => (
                "PARAMETER",
                id.to_string(),
                format!("Name: {}, Type: {}", self.p_str(*name), en(*parameter_type)),
            ),
            D::InterruptGenerator {
                id,
                name,
                mode,
                base,
                exponent,
                period,
            } => (
                "INTERRUPT_GENERATOR",
                id.to_string(),
                format!(
                    "Name: {}, Mode: {}, Base: {}, Exponent: {exponent}, Period: {period}",
                    self.p_str(*name),
                    en(*mode),
                    en(*base)
                ),
            ),
            D::Unknown { .. } => panic!("not written"),
        }
    }

    /// A rank of a communicator as `otf2-print` shows it: the rank and the location it stands
    /// for, seen from `location`.
    fn p_rank(&self, location: u64, comm: u32, rank: u32) -> String {
        let group = self.find(&format!("comm {comm}"), |d| match d {
            GlobalDef::Comm { id, group, .. } if *id == comm => Some(*group),
            _ => None,
        });
        let rank_location = match self.group(group) {
            (GroupType::COMM_GROUP, p, members) => self.rank_location(p, members[rank as usize]),
            (GroupType::COMM_SELF, _, _) => location,
            (t, _, _) => panic!("communicator group type {t:?}"),
        };
        format!("{rank} ({})", self.p_location(rank_location))
    }

    /// An event (already translated to global ids) as `otf2-print` shows it: record name and
    /// the rest of the line.
    fn p_event(&self, location: u64, event: &Event) -> (&'static str, String) {
        use Event as E;
        let task = |kind, team: u32, creator: u32, generation: u32| {
            (
                kind,
                format!(
                    "Thread Team: {}, Creating Thread: {}, Generation Number: {generation}",
                    self.p_ref(Type::COMM, team as u64),
                    self.p_rank(location, team, creator)
                ),
            )
        };
        let peer = |kind, role: &str, rank: u32, comm: u32, tag: u32, length: u64| {
            (
                kind,
                format!(
                    "{role}: {}, Communicator: {}, Tag: {tag}, Length: {length}",
                    self.p_rank(location, comm, rank),
                    self.p_ref(Type::COMM, comm as u64)
                ),
            )
        };
        match event {
            E::BufferFlush { stop_time } => ("BUFFER_FLUSH", format!("Stop Time: {stop_time}")),
            E::MeasurementOnOff { mode } => ("MEASUREMENT_ON_OFF", format!("Mode: {}", en(*mode))),
            E::Enter { region } => ("ENTER", format!("Region: {}", self.p_region(*region))),
            E::Leave { region } => ("LEAVE", format!("Region: {}", self.p_region(*region))),
            E::Metric { metric, values } => ("METRIC", self.p_metric_values(*metric, values)),
            E::ParameterString { parameter, string } => (
                "PARAMETER_STRING",
                format!(
                    "Parameter: {}, Value: {}",
                    self.p_ref(Type::PARAMETER, *parameter as u64),
                    self.p_str(*string)
                ),
            ),
            E::ParameterInt { parameter, value } => (
                "PARAMETER_INT64",
                format!(
                    "Parameter: {}, Value: {value}",
                    self.p_ref(Type::PARAMETER, *parameter as u64)
                ),
            ),
            E::ParameterUnsignedInt { parameter, value } => (
                "PARAMETER_UINT64",
                format!(
                    "Parameter: {}, Value: {value}",
                    self.p_ref(Type::PARAMETER, *parameter as u64)
                ),
            ),
            E::ThreadFork {
                model,
                number_of_requested_threads,
            } => (
                "THREAD_FORK",
                format!(
                    "Model: {}, # Requested Threads: {number_of_requested_threads}",
                    self.p_paradigm(*model)
                ),
            ),
            E::ThreadJoin { model } => {
                ("THREAD_JOIN", format!("Model: {}", self.p_paradigm(*model)))
            }
            E::ThreadTeamBegin { team } => (
                "THREAD_TEAM_BEGIN",
                format!("Thread Team: {}", self.p_ref(Type::COMM, *team as u64)),
            ),
            E::ThreadTeamEnd { team } => (
                "THREAD_TEAM_END",
                format!("Thread Team: {}", self.p_ref(Type::COMM, *team as u64)),
            ),
            E::ThreadAcquireLock {
                model,
                lock_id,
                acquisition_order,
            } => (
                "THREAD_ACQUIRE_LOCK",
                format!(
                    "Model: {}, Lock: {lock_id}, Acquisition Order: {acquisition_order}",
                    self.p_paradigm(*model)
                ),
            ),
            E::ThreadReleaseLock {
                model,
                lock_id,
                acquisition_order,
            } => (
                "THREAD_RELEASE_LOCK",
                format!(
                    "Model: {}, Lock: {lock_id}, Acquisition Order: {acquisition_order}",
                    self.p_paradigm(*model)
                ),
            ),
            E::ThreadTaskCreate {
                team,
                creating_thread,
                generation_number,
            } => task(
                "THREAD_TASK_CREATE",
                *team,
                *creating_thread,
                *generation_number,
            ),
            E::ThreadTaskSwitch {
                team,
                creating_thread,
                generation_number,
            } => task(
                "THREAD_TASK_SWITCH",
                *team,
                *creating_thread,
                *generation_number,
            ),
            E::ThreadTaskComplete {
                team,
                creating_thread,
                generation_number,
            } => task(
                "THREAD_TASK_COMPLETE",
                *team,
                *creating_thread,
                *generation_number,
            ),
            E::ProgramBegin {
                program_name,
                arguments,
            } => (
                "PROGRAM_BEGIN",
                format!(
                    "Name: {}, {}",
                    self.p_str(*program_name),
                    Self::p_list(
                        arguments.iter().map(|&a| self.p_str(a)).collect(),
                        "Argument",
                        "Arguments"
                    )
                ),
            ),
            E::ProgramEnd { exit_status } => (
                "PROGRAM_END",
                // OTF2_UNDEFINED_INT64 is i64::MIN.
                if *exit_status == i64::MIN {
                    "Exit status: UNDEFINED".into()
                } else {
                    format!("Exit status: {exit_status}")
                },
            ),
            E::MpiSend {
                receiver,
                communicator,
                msg_tag,
                msg_length,
            } => peer(
                "MPI_SEND",
                "Receiver",
                *receiver,
                *communicator,
                *msg_tag,
                *msg_length,
            ),
            E::MpiRecv {
                sender,
                communicator,
                msg_tag,
                msg_length,
            } => peer(
                "MPI_RECV",
                "Sender",
                *sender,
                *communicator,
                *msg_tag,
                *msg_length,
            ),
            E::MpiIsend {
                receiver,
                communicator,
                msg_tag,
                msg_length,
                request_id,
            } => {
                let (kind, rest) = peer(
                    "MPI_ISEND",
                    "Receiver",
                    *receiver,
                    *communicator,
                    *msg_tag,
                    *msg_length,
                );
                (kind, format!("{rest}, Request: {request_id}"))
            }
            E::MpiIrecv {
                sender,
                communicator,
                msg_tag,
                msg_length,
                request_id,
            } => {
                let (kind, rest) = peer(
                    "MPI_IRECV",
                    "Sender",
                    *sender,
                    *communicator,
                    *msg_tag,
                    *msg_length,
                );
                (kind, format!("{rest}, Request: {request_id}"))
            }
            E::MpiIsendComplete { request_id } => {
                ("MPI_ISEND_COMPLETE", format!("Request: {request_id}"))
            }
            E::MpiIrecvRequest { request_id } => {
                ("MPI_IRECV_REQUEST", format!("Request: {request_id}"))
            }
            E::MpiRequestTest { request_id } => {
                ("MPI_REQUEST_TEST", format!("Request: {request_id}"))
            }
            E::MpiRequestCancelled { request_id } => {
                ("MPI_REQUEST_CANCELLED", format!("Request: {request_id}"))
            }
            E::MpiCollectiveBegin {} => ("MPI_COLLECTIVE_BEGIN", String::new()),
            E::MpiCollectiveEnd {
                collective_op,
                communicator,
                root,
                size_sent,
                size_received,
            } => (
                "MPI_COLLECTIVE_END",
                format!(
                    "Operation: {}, Communicator: {}, Root: {}, Sent: {size_sent}, Received: \
                     {size_received}",
                    en(*collective_op),
                    self.p_ref(Type::COMM, *communicator as u64),
                    // OTF2_COLLECTIVE_ROOT_NONE
                    if *root == U {
                        "NONE".to_string()
                    } else {
                        self.p_rank(location, *communicator, *root)
                    }
                ),
            ),
            E::Unknown { .. } => panic!("not written"),
        }
    }

    /// A snapshot record as `otf2-print` shows it: record name, time column (the original event
    /// time for records that capture an event), rest of the line.
    fn p_snap(&self, location: u64, time: u64, record: &SnapRecord) -> (&'static str, u64, String) {
        use SnapRecord as S;
        if let Some((orig_event_time, event)) = captured_event(record) {
            let (kind, rest) = self.p_event(location, &event);
            return (kind, orig_event_time, rest);
        }
        match record {
            S::SnapshotStart { number_of_records } => (
                "SNAPSHOT_START",
                time,
                format!("# Events: {number_of_records}"),
            ),
            S::SnapshotEnd { cont_read_pos } => (
                "SNAPSHOT_END",
                time,
                format!("Cont. Read Position: {cont_read_pos}"),
            ),
            S::OmpFork {
                orig_event_time,
                number_of_requested_threads,
            } => (
                "OMP_FORK",
                *orig_event_time,
                format!("# Requested Threads: {number_of_requested_threads}"),
            ),
            S::OmpAcquireLock {
                orig_event_time,
                lock_id,
                acquisition_order,
            } => (
                "OMP_ACQUIRE_LOCK",
                *orig_event_time,
                format!("Lock: {lock_id}, Acquisition Order: {acquisition_order}"),
            ),
            S::OmpTaskCreate {
                orig_event_time,
                task_id,
            } => (
                "OMP_TASK_CREATE",
                *orig_event_time,
                format!("Task: {task_id}"),
            ),
            S::OmpTaskSwitch {
                orig_event_time,
                task_id,
            } => (
                "OMP_TASK_SWITCH",
                *orig_event_time,
                format!("Task: {task_id}"),
            ),
            other => panic!("not written: {other:?}"),
        }
    }

    // --- the python dump's notation ---

    fn py_str(&self, id: u32) -> Json {
        if id == U {
            Json::Null
        } else {
            js(self.text(id))
        }
    }
    fn py_ref(&self, t: Type, id: u64) -> Json {
        if is_undefined_ref(t, id) {
            Json::Null
        } else if t == Type::STRING {
            self.py_str(id as u32)
        } else {
            ji(id)
        }
    }
    fn py_value(&self, v: TypedValue) -> Json {
        match v.value_type {
            Type::UINT8 | Type::UINT16 | Type::UINT32 | Type::UINT64 => ji(v.raw),
            Type::INT8 | Type::INT16 | Type::INT32 | Type::INT64 => ji(v.as_i64()),
            Type::FLOAT | Type::DOUBLE => jf(v.as_f64()),
            t => self.py_ref(t, v.raw),
        }
    }
    fn py_def(&self, d: &GlobalDef) -> Json {
        use GlobalDef as D;
        let r32 = |t, id: u32| self.py_ref(t, id as u64);
        let (kind, id, mut fields): (&str, Json, Vec<(&str, Json)>) = match d {
            D::ClockProperties {
                timer_resolution,
                global_offset,
                trace_length,
                realtime_timestamp,
            } => (
                "ClockProperties",
                Json::Null,
                vec![
                    ("timer_resolution", ji(*timer_resolution)),
                    ("global_offset", ji(*global_offset)),
                    ("trace_length", ji(*trace_length)),
                    ("realtime_timestamp", ji(*realtime_timestamp)),
                ],
            ),
            D::String { id, string } => ("String", ji(*id), vec![("name", js(string))]),
            D::Paradigm {
                paradigm,
                name,
                paradigm_class,
            } => (
                "Paradigm",
                Json::Null,
                vec![
                    ("paradigm", js(&en(*paradigm))),
                    ("name", self.py_str(*name)),
                    ("paradigm_class", js(&en(*paradigm_class))),
                ],
            ),
            D::ParadigmProperty {
                paradigm,
                property,
                value,
            } => (
                "ParadigmProperty",
                Json::Null,
                vec![
                    ("paradigm", js(&en(*paradigm))),
                    ("property", js(&en(*property))),
                    ("type", js(&en(value.value_type))),
                    ("value", self.py_value(*value)),
                ],
            ),
            D::Attribute {
                id,
                name,
                description,
                attribute_type,
            } => (
                "Attribute",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("description", self.py_str(*description)),
                    ("type", js(&en(*attribute_type))),
                ],
            ),
            D::SystemTreeNode {
                id,
                name,
                class_name,
                parent,
            } => (
                "SystemTreeNode",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("class_name", self.py_str(*class_name)),
                    ("parent", r32(Type::NONE, *parent)),
                ],
            ),
            D::SystemTreeNodeProperty { node, name, value } => (
                "SystemTreeNodeProperty",
                Json::Null,
                vec![
                    ("system_tree_node", ji(*node)),
                    ("name", self.py_str(*name)),
                    ("type", js(&en(value.value_type))),
                    ("value", self.py_value(*value)),
                ],
            ),
            D::SystemTreeNodeDomain { node, domain } => (
                "SystemTreeNodeDomain",
                Json::Null,
                vec![
                    ("system_tree_node", ji(*node)),
                    ("system_tree_node_domain", js(&en(*domain))),
                ],
            ),
            D::LocationGroup {
                id,
                name,
                location_group_type,
                system_tree_parent,
                creating_location_group,
            } => (
                "LocationGroup",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("location_group_type", js(&en(*location_group_type))),
                    ("system_tree_parent", r32(Type::NONE, *system_tree_parent)),
                    (
                        "creating_location_group",
                        r32(Type::NONE, *creating_location_group),
                    ),
                ],
            ),
            D::LocationGroupProperty {
                location_group,
                name,
                value,
            } => (
                "LocationGroupProperty",
                Json::Null,
                vec![
                    ("location_group", ji(*location_group)),
                    ("name", self.py_str(*name)),
                    ("type", js(&en(value.value_type))),
                    ("value", self.py_value(*value)),
                ],
            ),
            D::Location {
                id,
                name,
                location_type,
                number_of_events,
                location_group,
            } => (
                "Location",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    // The binding (3.0.2) still uses the pre-3.0 name of type 2.
                    (
                        "type",
                        js(if *location_type == LocationType::ACCELERATOR_STREAM {
                            "GPU".into()
                        } else {
                            en(*location_type)
                        }
                        .as_str()),
                    ),
                    ("number_of_events", ji(*number_of_events)),
                    ("group", ji(*location_group)),
                ],
            ),
            D::LocationProperty {
                location,
                name,
                value,
            } => (
                "LocationProperty",
                Json::Null,
                vec![
                    ("location", ji(*location)),
                    ("name", self.py_str(*name)),
                    ("type", js(&en(value.value_type))),
                    ("value", self.py_value(*value)),
                ],
            ),
            D::Region {
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
            } => (
                "Region",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("canonical_name", self.py_str(*canonical_name)),
                    ("description", self.py_str(*description)),
                    ("region_role", js(&en(*region_role))),
                    ("paradigm", js(&en(*paradigm))),
                    ("region_flags", py_flags(region_flags.0, REGION_FLAGS)),
                    ("source_file", self.py_str(*source_file)),
                    ("begin_line_number", ji(*begin_line)),
                    ("end_line_number", ji(*end_line)),
                ],
            ),
            D::Callsite {
                id,
                source_file,
                line_number,
                entered_region,
                left_region,
            } => (
                "Callsite",
                ji(*id),
                vec![
                    ("source_file", self.py_str(*source_file)),
                    ("line_number", ji(*line_number)),
                    ("entered_region", r32(Type::REGION, *entered_region)),
                    ("left_region", r32(Type::REGION, *left_region)),
                ],
            ),
            D::Group {
                id,
                name,
                group_type,
                paradigm,
                group_flags,
                members,
            } => {
                // The binding turns COMM_GROUP ranks into location ids.
                let members = members
                    .iter()
                    .map(|&m| match *group_type {
                        GroupType::COMM_GROUP => ji(self.rank_location(*paradigm, m)),
                        _ => ji(m),
                    })
                    .collect();
                (
                    "Group",
                    ji(*id),
                    vec![
                        ("name", self.py_str(*name)),
                        ("group_type", js(&en(*group_type))),
                        ("paradigm", js(&en(*paradigm))),
                        ("group_flags", py_flags(group_flags.0, GROUP_FLAGS)),
                        ("members", Json::Arr(members)),
                    ],
                )
            }
            D::MetricMember {
                id,
                name,
                description,
                metric_type,
                metric_mode,
                value_type,
                base,
                exponent,
                unit,
            } => (
                "MetricMember",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("description", self.py_str(*description)),
                    ("metric_type", js(&en(*metric_type))),
                    ("metric_mode", js(&en(*metric_mode))),
                    ("value_type", js(&en(*value_type))),
                    ("base", js(&en(*base))),
                    ("exponent", ji(*exponent)),
                    ("unit", self.py_str(*unit)),
                ],
            ),
            D::MetricClass {
                id,
                members,
                occurrence,
                recorder_kind,
            } => (
                "MetricClass",
                ji(*id),
                vec![
                    (
                        "members",
                        Json::Arr(members.iter().map(|&m| ji(m)).collect()),
                    ),
                    ("occurrence", js(&en(*occurrence))),
                    ("recorder_kind", js(&en(*recorder_kind))),
                ],
            ),
            D::MetricInstance {
                id,
                metric_class,
                recorder,
                scope_type,
                scope,
            } => (
                "MetricInstance",
                ji(*id),
                vec![
                    ("metric_class", ji(*metric_class)),
                    ("recorder", ji(*recorder)),
                    ("metric_scope", js(&en(*scope_type))),
                    ("scope", ji(*scope)),
                ],
            ),
            D::MetricClassRecorder { metric, recorder } => (
                "MetricClassRecorder",
                Json::Null,
                vec![("metric_class", ji(*metric)), ("recorder", ji(*recorder))],
            ),
            D::Comm {
                id,
                name,
                group,
                parent,
                flags,
            } => (
                "Comm",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("group", r32(Type::GROUP, *group)),
                    ("parent", r32(Type::COMM, *parent)),
                    ("flags", py_flags(flags.0, COMM_FLAGS)),
                ],
            ),
            D::Parameter {
                id,
                name,
                parameter_type,
            } => (
                "Parameter",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("parameter_type", js(&en(*parameter_type))),
                ],
            ),
            D::InterruptGenerator {
                id,
                name,
                mode,
                base,
                exponent,
                period,
            } => (
                "InterruptGenerator",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("interrupt_generator_mode", js(&en(*mode))),
                    ("base", js(&en(*base))),
                    ("exponent", ji(*exponent)),
                    ("period", ji(*period)),
                ],
            ),
            D::Unknown { .. } => panic!("not written"),
        };
        fields.push(("kind", js(kind)));
        fields.push(("ref", id));
        jobj(fields)
    }

    /// An event (already translated to global ids) as the dump shows it.
    fn py_event(
        &self,
        location: u64,
        time: u64,
        attributes: &[(u32, TypedValue)],
        event: &Event,
    ) -> Json {
        use Event as E;
        let model = |p: &Paradigm| js(&en(*p));
        let task = |team: &u32, creator: &u32, generation: &u32| {
            vec![
                ("thread_team", ji(*team)),
                ("creating_thread", ji(*creator)),
                ("generation_number", ji(*generation)),
            ]
        };
        let lock = |m: &Paradigm, id: &u32, order: &u32| {
            vec![
                ("model", model(m)),
                ("lock_id", ji(*id)),
                ("acquisition_order", ji(*order)),
            ]
        };
        let (kind, mut fields): (&str, Vec<(&str, Json)>) = match event {
            E::BufferFlush { stop_time } => ("BufferFlush", vec![("stop_time", ji(*stop_time))]),
            E::MeasurementOnOff { mode } => (
                "MeasurementOnOff",
                vec![("measurement_mode", js(&en(*mode)))],
            ),
            E::Enter { region } => ("Enter", vec![("region", ji(*region))]),
            E::Leave { region } => ("Leave", vec![("region", ji(*region))]),
            E::Metric { metric, values } => {
                // The binding decodes the values with the members' value types.
                let values = self
                    .metric_members(*metric)
                    .iter()
                    .zip(values)
                    .map(|(&m, v)| {
                        let t = self.member_name_and_type(m).1;
                        let value = match t {
                            Type::UINT64 => ji(v.raw),
                            Type::INT64 => ji(v.raw as i64),
                            Type::DOUBLE => jf(f64::from_bits(v.raw)),
                            t => panic!("metric value type {t:?}"),
                        };
                        Json::Arr(vec![js(&en(t)), value])
                    })
                    .collect();
                (
                    "Metric",
                    vec![("metric", ji(*metric)), ("values", Json::Arr(values))],
                )
            }
            E::ParameterString { parameter, string } => (
                "ParameterString",
                vec![
                    ("parameter", ji(*parameter)),
                    ("string", self.py_str(*string)),
                ],
            ),
            E::ParameterInt { parameter, value } => (
                "ParameterInt",
                vec![("parameter", ji(*parameter)), ("value", ji(*value))],
            ),
            E::ParameterUnsignedInt { parameter, value } => (
                "ParameterUnsignedInt",
                vec![("parameter", ji(*parameter)), ("value", ji(*value))],
            ),
            E::ThreadFork {
                model: m,
                number_of_requested_threads,
            } => (
                "ThreadFork",
                vec![
                    ("model", model(m)),
                    (
                        "number_of_requested_threads",
                        ji(*number_of_requested_threads),
                    ),
                ],
            ),
            E::ThreadJoin { model: m } => ("ThreadJoin", vec![("model", model(m))]),
            E::ThreadTeamBegin { team } => ("ThreadTeamBegin", vec![("thread_team", ji(*team))]),
            E::ThreadTeamEnd { team } => ("ThreadTeamEnd", vec![("thread_team", ji(*team))]),
            E::ThreadAcquireLock {
                model: m,
                lock_id,
                acquisition_order,
            } => ("ThreadAcquireLock", lock(m, lock_id, acquisition_order)),
            E::ThreadReleaseLock {
                model: m,
                lock_id,
                acquisition_order,
            } => ("ThreadReleaseLock", lock(m, lock_id, acquisition_order)),
            E::ThreadTaskCreate {
                team,
                creating_thread,
                generation_number,
            } => (
                "ThreadTaskCreate",
                task(team, creating_thread, generation_number),
            ),
            E::ThreadTaskSwitch {
                team,
                creating_thread,
                generation_number,
            } => (
                "ThreadTaskSwitch",
                task(team, creating_thread, generation_number),
            ),
            E::ThreadTaskComplete {
                team,
                creating_thread,
                generation_number,
            } => (
                "ThreadTaskComplete",
                task(team, creating_thread, generation_number),
            ),
            E::ProgramBegin {
                program_name,
                arguments,
            } => (
                "ProgramBegin",
                vec![
                    ("program_name", self.py_str(*program_name)),
                    (
                        "program_arguments",
                        Json::Arr(arguments.iter().map(|&a| self.py_str(a)).collect()),
                    ),
                ],
            ),
            E::ProgramEnd { exit_status } => {
                ("ProgramEnd", vec![("exit_status", ji(*exit_status))])
            }
            E::MpiSend {
                receiver,
                communicator,
                msg_tag,
                msg_length,
            } => (
                "MpiSend",
                vec![
                    ("receiver", ji(*receiver)),
                    ("communicator", ji(*communicator)),
                    ("msg_tag", ji(*msg_tag)),
                    ("msg_length", ji(*msg_length)),
                ],
            ),
            E::MpiIsend {
                receiver,
                communicator,
                msg_tag,
                msg_length,
                request_id,
            } => (
                "MpiIsend",
                vec![
                    ("receiver", ji(*receiver)),
                    ("communicator", ji(*communicator)),
                    ("msg_tag", ji(*msg_tag)),
                    ("msg_length", ji(*msg_length)),
                    ("request_id", ji(*request_id)),
                ],
            ),
            E::MpiRecv {
                sender,
                communicator,
                msg_tag,
                msg_length,
            } => (
                "MpiRecv",
                vec![
                    ("sender", ji(*sender)),
                    ("communicator", ji(*communicator)),
                    ("msg_tag", ji(*msg_tag)),
                    ("msg_length", ji(*msg_length)),
                ],
            ),
            E::MpiIrecv {
                sender,
                communicator,
                msg_tag,
                msg_length,
                request_id,
            } => (
                "MpiIrecv",
                vec![
                    ("sender", ji(*sender)),
                    ("communicator", ji(*communicator)),
                    ("msg_tag", ji(*msg_tag)),
                    ("msg_length", ji(*msg_length)),
                    ("request_id", ji(*request_id)),
                ],
            ),
            E::MpiIsendComplete { request_id } => {
                ("MpiIsendComplete", vec![("request_id", ji(*request_id))])
            }
            E::MpiIrecvRequest { request_id } => {
                ("MpiIrecvRequest", vec![("request_id", ji(*request_id))])
            }
            E::MpiRequestTest { request_id } => {
                ("MpiRequestTest", vec![("request_id", ji(*request_id))])
            }
            E::MpiRequestCancelled { request_id } => {
                ("MpiRequestCancelled", vec![("request_id", ji(*request_id))])
            }
            E::MpiCollectiveBegin {} => ("MpiCollectiveBegin", vec![]),
            E::MpiCollectiveEnd {
                collective_op,
                communicator,
                root,
                size_sent,
                size_received,
            } => (
                "MpiCollectiveEnd",
                vec![
                    ("collective_op", js(&en(*collective_op))),
                    ("communicator", ji(*communicator)),
                    ("root", ji(*root)),
                    ("size_sent", ji(*size_sent)),
                    ("size_received", ji(*size_received)),
                ],
            ),
            E::Unknown { .. } => panic!("not written"),
        };
        let attributes = attributes
            .iter()
            .map(|&(a, v)| {
                Json::Arr(vec![
                    ji(a),
                    js(&en(self.attribute_type(a))),
                    self.py_value(v),
                ])
            })
            .collect();
        fields.extend([
            ("kind", js(kind)),
            ("location", ji(location)),
            ("time", ji(time)),
            ("attributes", Json::Arr(attributes)),
        ]);
        jobj(fields)
    }
}

/// The event a snapshot record captures, with the time that event happened.
fn captured_event(record: &SnapRecord) -> Option<(u64, Event)> {
    use Event as E;
    use SnapRecord as S;
    Some(match record.clone() {
        S::MeasurementOnOff {
            orig_event_time,
            mode,
        } => (orig_event_time, E::MeasurementOnOff { mode }),
        S::Enter {
            orig_event_time,
            region,
        } => (orig_event_time, E::Enter { region }),
        S::MpiSend {
            orig_event_time,
            receiver,
            communicator,
            msg_tag,
            msg_length,
        } => (
            orig_event_time,
            E::MpiSend {
                receiver,
                communicator,
                msg_tag,
                msg_length,
            },
        ),
        S::MpiIsend {
            orig_event_time,
            receiver,
            communicator,
            msg_tag,
            msg_length,
            request_id,
        } => (
            orig_event_time,
            E::MpiIsend {
                receiver,
                communicator,
                msg_tag,
                msg_length,
                request_id,
            },
        ),
        S::MpiIsendComplete {
            orig_event_time,
            request_id,
        } => (orig_event_time, E::MpiIsendComplete { request_id }),
        S::MpiRecv {
            orig_event_time,
            sender,
            communicator,
            msg_tag,
            msg_length,
        } => (
            orig_event_time,
            E::MpiRecv {
                sender,
                communicator,
                msg_tag,
                msg_length,
            },
        ),
        S::MpiIrecvRequest {
            orig_event_time,
            request_id,
        } => (orig_event_time, E::MpiIrecvRequest { request_id }),
        S::MpiIrecv {
            orig_event_time,
            sender,
            communicator,
            msg_tag,
            msg_length,
            request_id,
        } => (
            orig_event_time,
            E::MpiIrecv {
                sender,
                communicator,
                msg_tag,
                msg_length,
                request_id,
            },
        ),
        S::MpiCollectiveBegin { orig_event_time } => (orig_event_time, E::MpiCollectiveBegin {}),
        S::MpiCollectiveEnd {
            orig_event_time,
            collective_op,
            communicator,
            root,
            size_sent,
            size_received,
        } => (
            orig_event_time,
            E::MpiCollectiveEnd {
                collective_op,
                communicator,
                root,
                size_sent,
                size_received,
            },
        ),
        S::Metric {
            orig_event_time,
            metric,
            values,
        } => (orig_event_time, E::Metric { metric, values }),
        S::ParameterString {
            orig_event_time,
            parameter,
            string,
        } => (orig_event_time, E::ParameterString { parameter, string }),
        S::ParameterInt {
            orig_event_time,
            parameter,
            value,
        } => (orig_event_time, E::ParameterInt { parameter, value }),
        S::ParameterUnsignedInt {
            orig_event_time,
            parameter,
            value,
        } => (
            orig_event_time,
            E::ParameterUnsignedInt { parameter, value },
        ),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Reading the reference readers' output
// ---------------------------------------------------------------------------------------------

/// The only warning `otf2-print` may give: region ids are deliberately not dense.
const SPARSE_REGION_WARNING: &str =
    "warning: out of order Region definition: \"far region\" <19088743>";

/// One record line of `otf2-print`: the record name, the numeric columns (id; location and
/// time; location), the rest of the line and the "ADDITIONAL ATTRIBUTES:" line after it.
#[derive(Clone, Debug, PartialEq)]
struct Printed {
    kind: String,
    columns: Vec<String>,
    rest: String,
    attributes: Option<String>,
}

/// The records of the section headed `=== {title}` with up to `columns` numeric columns.
fn printed_section(output: &str, title: &str, columns: usize) -> Vec<Printed> {
    let mut lines = output.lines();
    assert!(
        lines
            .by_ref()
            .any(|l| l.starts_with(&format!("=== {title}"))),
        "no {title} section in:\n{output}"
    );
    assert!(lines.by_ref().any(|l| l.starts_with("-----")));
    let mut records: Vec<Printed> = Vec::new();
    for line in lines {
        if line.trim().is_empty() || line.starts_with("===") {
            break;
        }
        if line.starts_with(' ') {
            let list = line
                .trim()
                .strip_prefix("ADDITIONAL ATTRIBUTES: ")
                .unwrap_or_else(|| panic!("unexpected continuation line {line:?}"));
            let last = records.last_mut().expect("attributes before any record");
            assert!(last.attributes.is_none());
            last.attributes = Some(list.to_string());
            continue;
        }
        let (kind, mut rest) = line.split_once(' ').unwrap_or((line, ""));
        let mut cols = Vec::new();
        while cols.len() < columns {
            let trimmed = rest.trim_start();
            let (token, after) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
            if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
                break;
            }
            cols.push(token.to_string());
            rest = after;
        }
        records.push(Printed {
            kind: kind.to_string(),
            columns: cols,
            rest: normalize_date(rest.trim()),
            attributes: None,
        });
    }
    records
}

fn printed(kind: &str, columns: Vec<String>, rest: String, attributes: Option<String>) -> Printed {
    Printed {
        kind: kind.to_string(),
        columns,
        rest,
        attributes,
    }
}

fn assert_same<T: std::fmt::Debug + PartialEq>(what: &str, actual: &[T], expected: &[T]) {
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert_eq!(a, e, "{what}: record {i} differs");
    }
    assert_eq!(
        actual.len(),
        expected.len(),
        "{what}: {} records, expected {}:\n{actual:#?}\nexpected:\n{expected:#?}",
        actual.len(),
        expected.len()
    );
}

fn dump(w: &Written) -> Json {
    Json::parse(&python_dump(&w.anchor))
}

fn def_kind(d: &GlobalDef) -> &'static str {
    use GlobalDef as D;
    match d {
        D::ClockProperties { .. } => "ClockProperties",
        D::Paradigm { .. } => "Paradigm",
        D::ParadigmProperty { .. } => "ParadigmProperty",
        D::String { .. } => "String",
        D::Attribute { .. } => "Attribute",
        D::SystemTreeNode { .. } => "SystemTreeNode",
        D::LocationGroup { .. } => "LocationGroup",
        D::Location { .. } => "Location",
        D::Region { .. } => "Region",
        D::Callsite { .. } => "Callsite",
        D::Group { .. } => "Group",
        D::MetricMember { .. } => "MetricMember",
        D::MetricClass { .. } => "MetricClass",
        D::MetricInstance { .. } => "MetricInstance",
        D::Comm { .. } => "Comm",
        D::Parameter { .. } => "Parameter",
        D::MetricClassRecorder { .. } => "MetricClassRecorder",
        D::SystemTreeNodeProperty { .. } => "SystemTreeNodeProperty",
        D::SystemTreeNodeDomain { .. } => "SystemTreeNodeDomain",
        D::LocationGroupProperty { .. } => "LocationGroupProperty",
        D::LocationProperty { .. } => "LocationProperty",
        D::InterruptGenerator { .. } => "InterruptGenerator",
        D::Unknown { .. } => "Unknown",
    }
}

fn event_kind(e: &Event) -> &'static str {
    use Event as E;
    match e {
        E::BufferFlush { .. } => "BufferFlush",
        E::MeasurementOnOff { .. } => "MeasurementOnOff",
        E::Enter { .. } => "Enter",
        E::Leave { .. } => "Leave",
        E::Metric { .. } => "Metric",
        E::ParameterString { .. } => "ParameterString",
        E::ParameterInt { .. } => "ParameterInt",
        E::ParameterUnsignedInt { .. } => "ParameterUnsignedInt",
        E::ThreadFork { .. } => "ThreadFork",
        E::ThreadJoin { .. } => "ThreadJoin",
        E::ThreadTeamBegin { .. } => "ThreadTeamBegin",
        E::ThreadTeamEnd { .. } => "ThreadTeamEnd",
        E::ThreadAcquireLock { .. } => "ThreadAcquireLock",
        E::ThreadReleaseLock { .. } => "ThreadReleaseLock",
        E::ThreadTaskCreate { .. } => "ThreadTaskCreate",
        E::ThreadTaskSwitch { .. } => "ThreadTaskSwitch",
        E::ThreadTaskComplete { .. } => "ThreadTaskComplete",
        E::ProgramBegin { .. } => "ProgramBegin",
        E::ProgramEnd { .. } => "ProgramEnd",
        E::MpiSend { .. } => "MpiSend",
        E::MpiIsend { .. } => "MpiIsend",
        E::MpiIsendComplete { .. } => "MpiIsendComplete",
        E::MpiIrecvRequest { .. } => "MpiIrecvRequest",
        E::MpiRecv { .. } => "MpiRecv",
        E::MpiIrecv { .. } => "MpiIrecv",
        E::MpiRequestTest { .. } => "MpiRequestTest",
        E::MpiRequestCancelled { .. } => "MpiRequestCancelled",
        E::MpiCollectiveBegin { .. } => "MpiCollectiveBegin",
        E::MpiCollectiveEnd { .. } => "MpiCollectiveEnd",
        E::Unknown { .. } => "Unknown",
    }
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

/// Global definitions of the given kinds: `otf2-print -G` and `-A`, the python dump and our
/// reader all show exactly what was written, in file order (python: in its registry order).
fn check_definitions(kinds: &[&str]) {
    let w = write_archive();
    let ctx = Ctx { w: &w };
    let written: Vec<&GlobalDef> = w
        .defs
        .iter()
        .filter(|d| kinds.contains(&def_kind(d)))
        .collect();
    for kind in kinds {
        assert!(
            written.iter().any(|d| def_kind(d) == *kind),
            "the archive has no {kind} definition"
        );
    }

    // (a) otf2-print
    let expected: Vec<Printed> = written
        .iter()
        .map(|d| {
            let (kind, id, rest) = ctx.p_def(d);
            let columns = if id.is_empty() { vec![] } else { vec![id] };
            printed(kind, columns, rest, None)
        })
        .collect();
    let print_kinds: Vec<&str> = expected.iter().map(|p| p.kind.as_str()).collect();
    for args in [&["-G"][..], &["-A"]] {
        let out = otf2_print(args, &w.anchor, &[SPARSE_REGION_WARNING]);
        let actual: Vec<Printed> = printed_section(&out, "Global Definitions", 1)
            .into_iter()
            .filter(|p| print_kinds.contains(&p.kind.as_str()))
            .collect();
        assert_same(&format!("otf2-print {args:?}"), &actual, &expected);
    }

    // (b) the python module
    let doc = dump(&w);
    let mut actual: Vec<Json> = doc
        .get("definitions")
        .arr()
        .iter()
        .filter(|d| matches!(d.get("kind"), Json::Str(k) if kinds.contains(&k.as_str())))
        .cloned()
        .collect();
    for d in &written {
        let e = ctx.py_def(d);
        let at = actual
            .iter()
            .position(|a| *a == e)
            .unwrap_or_else(|| panic!("python: no definition {e:?} among\n{actual:#?}"));
        actual.remove(at);
    }
    assert!(
        actual.is_empty(),
        "python: unexpected definitions {actual:#?}"
    );

    // (c) our reader
    let reader = ArchiveReader::open(&w.anchor).unwrap();
    let ours = reader.global_defs().unwrap();
    let ours: Vec<&GlobalDef> = ours
        .iter()
        .filter(|d| kinds.contains(&def_kind(d)))
        .collect();
    assert_same("our reader", &ours, &written);
}

/// Events of the given kinds on both locations (and their attribute lists): `otf2-print -A`
/// and the python dump show them with ids translated by the mapping tables, our reader
/// exactly as written.
fn check_events(kinds: &[&str]) {
    let w = write_archive();
    let ctx = Ctx { w: &w };
    let out = otf2_print(&["-A"], &w.anchor, &[SPARSE_REGION_WARNING]);
    let printed_events = printed_section(&out, "Events", 2);
    let doc = dump(&w);
    let reader = ArchiveReader::open(&w.anchor).unwrap();
    for kind in kinds {
        assert!(
            w.events
                .iter()
                .any(|(_, s)| s.iter().any(|e| event_kind(&e.2) == *kind)),
            "the archive has no {kind} event"
        );
    }
    for (location, stream) in &w.events {
        let written: Vec<&Timed<Event>> = stream
            .iter()
            .filter(|e| kinds.contains(&event_kind(&e.2)))
            .collect();

        // (a) otf2-print
        let expected: Vec<Printed> = written
            .iter()
            .map(|(time, list, event)| {
                let event = ctx.global_event(*location, event);
                let (kind, rest) = ctx.p_event(*location, &event);
                let attributes = ctx.p_attributes(&ctx.global_attributes(*location, list));
                printed(
                    kind,
                    vec![location.to_string(), time.to_string()],
                    rest,
                    attributes,
                )
            })
            .collect();
        let print_kinds: Vec<&str> = expected.iter().map(|p| p.kind.as_str()).collect();
        let actual: Vec<Printed> = printed_events
            .iter()
            .filter(|p| {
                p.columns[0] == location.to_string() && print_kinds.contains(&p.kind.as_str())
            })
            .cloned()
            .collect();
        assert_same(
            &format!("otf2-print -A, location {location}"),
            &actual,
            &expected,
        );

        // (b) the python module
        let expected: Vec<Json> = written
            .iter()
            .map(|(time, list, event)| {
                let event = ctx.global_event(*location, event);
                ctx.py_event(
                    *location,
                    *time,
                    &ctx.global_attributes(*location, list),
                    &event,
                )
            })
            .collect();
        let actual: Vec<Json> = doc
            .get("events")
            .arr()
            .iter()
            .filter(|e| {
                *e.get("location") == ji(*location)
                    && matches!(e.get("kind"), Json::Str(k) if kinds.contains(&k.as_str()))
            })
            .cloned()
            .collect();
        assert_same(&format!("python, location {location}"), &actual, &expected);

        // (c) our reader
        let ours: Vec<Timed<Event>> = reader
            .events(*location)
            .unwrap()
            .map(|r| r.unwrap())
            .map(|r| (r.time, r.attributes, r.event))
            .filter(|e| kinds.contains(&event_kind(&e.2)))
            .collect();
        let written: Vec<Timed<Event>> = written.into_iter().cloned().collect();
        assert_same(&format!("our reader, location {location}"), &ours, &written);
    }
}

#[test]
fn clock_properties_and_strings() {
    // Empty and non-ASCII strings, and one string id far from the others (the ids of a kind
    // need not be dense).
    check_definitions(&["ClockProperties", "String"]);
    let w = write_archive();
    let ctx = Ctx { w: &w };
    let clock = dump(&w).get("clock").clone();
    let Json::Obj(mut expected) = ctx.py_def(&w.defs[0]) else {
        unreachable!()
    };
    expected.remove("kind");
    expected.remove("ref");
    assert_eq!(clock, Json::Obj(expected));
}

#[test]
fn paradigms_and_attributes() {
    // One attribute of every attribute type; descriptions UNDEFINED, non-ASCII and empty.
    check_definitions(&["Paradigm", "ParadigmProperty", "Attribute"]);
}

#[test]
fn system_tree_location_groups_locations_and_their_properties() {
    check_definitions(&[
        "SystemTreeNode",
        "SystemTreeNodeProperty",
        "SystemTreeNodeDomain",
        "LocationGroup",
        "LocationGroupProperty",
        "Location",
        "LocationProperty",
    ]);
}

#[test]
fn regions_callsites_groups_comms_and_parameters() {
    check_definitions(&["Region", "Callsite", "Group", "Comm", "Parameter"]);
}

#[test]
fn metric_definitions_and_interrupt_generators() {
    check_definitions(&[
        "MetricMember",
        "MetricClass",
        "MetricInstance",
        "MetricClassRecorder",
        "InterruptGenerator",
    ]);
}

#[test]
fn all_global_definitions_and_the_anchor() {
    let w = write_archive();
    let reader = ArchiveReader::open(&w.anchor).unwrap();
    assert_eq!(reader.global_defs().unwrap(), w.defs);
    let anchor = reader.anchor();
    assert_eq!(anchor.number_of_global_defs, w.defs.len() as u64);
    assert_eq!(anchor.number_of_locations, 2);
    assert_eq!(anchor.number_of_snapshots, 1);
    assert_eq!(reader.locations().unwrap(), vec![L0, L1]);

    // Every definition kind is covered.
    let mut kinds: Vec<&str> = w.defs.iter().map(def_kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), 22, "{kinds:?}");

    let out = otf2_print(&["-A"], &w.anchor, &[SPARSE_REGION_WARNING]);
    let info = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key:?} in otf2-print -A"))
            .trim()
            .to_string()
    };
    assert_eq!(info("Number of locations"), "2");
    assert_eq!(
        info("Number of global definitions"),
        w.defs.len().to_string()
    );
    assert_eq!(info("Number of snapshots"), "1");
    // Every definition is printed, every one the python module knows is dumped.
    assert_eq!(
        printed_section(&out, "Global Definitions", 1).len(),
        w.defs.len()
    );
    assert_eq!(dump(&w).get("definitions").arr().len(), w.defs.len());
}

#[test]
fn local_definitions_mapping_tables_and_clock_offsets() {
    let w = write_archive();
    let out = otf2_print(&["-M", "-C"], &w.anchor, &[SPARSE_REGION_WARNING]);
    let actual = printed_section(&out, "Per Location Definitions", 1);
    let mut expected = Vec::new();
    for (location, defs) in &w.locals {
        for def in defs {
            let (kind, rest) = match def {
                LocalDef::MappingTable { mapping_type, map } => {
                    let entries = match map {
                        IdMap::Dense(globals) => format!(
                            "[{}]",
                            globals
                                .iter()
                                .map(u64::to_string)
                                .collect::<Vec<_>>()
                                .join(",")
                        ),
                        IdMap::Sparse(pairs) => {
                            // Shown sorted by local id.
                            let mut pairs = pairs.clone();
                            pairs.sort_unstable();
                            let items: Vec<String> =
                                pairs.iter().map(|(l, g)| format!("{l}=>{g}")).collect();
                            format!("{{{}}}", items.join(","))
                        }
                    };
                    (
                        "MAPPING_TABLE",
                        format!("Type: {}, {entries}", en(*mapping_type)),
                    )
                }
                LocalDef::ClockOffset {
                    time,
                    offset,
                    standard_deviation,
                } => (
                    "CLOCK_OFFSET",
                    format!(
                        "Time: {time}, Offset: {offset:+}, StdDev: {}",
                        fmt_g(*standard_deviation)
                    ),
                ),
                LocalDef::Unknown { .. } => unreachable!(),
            };
            expected.push(printed(kind, vec![location.to_string()], rest, None));
        }
    }
    assert_same("otf2-print -M -C", &actual, &expected);

    // Both mapping modes, both record kinds, on both locations.
    let all: Vec<&LocalDef> = w.locals.iter().flat_map(|(_, d)| d).collect();
    assert!(all.iter().any(|d| matches!(
        d,
        LocalDef::MappingTable {
            map: IdMap::Dense(_),
            ..
        }
    )));
    assert!(all.iter().any(|d| matches!(
        d,
        LocalDef::MappingTable {
            map: IdMap::Sparse(_),
            ..
        }
    )));
    assert!(all
        .iter()
        .any(|d| matches!(d, LocalDef::ClockOffset { .. })));

    // Our reader gives the tables as written (no translation).
    let reader = ArchiveReader::open(&w.anchor).unwrap();
    for (location, defs) in &w.locals {
        assert_eq!(&reader.local_defs(*location).unwrap(), defs);
    }
    // The tables take effect in the reference readers (see the event checks): the python
    // module shows region ids only the tables produce.
    let doc = dump(&w);
    let regions = |location: u64| -> Vec<Json> {
        doc.get("events")
            .arr()
            .iter()
            .filter(|e| {
                *e.get("location") == ji(location)
                    && matches!(e.get("kind"), Json::Str(k) if k == "Enter")
            })
            .map(|e| e.get("region").clone())
            .collect()
    };
    assert_eq!(regions(L0), vec![ji(0), ji(R_FAR)]);
    assert_eq!(regions(L1), vec![ji(2), ji(1)]);
    // The clock offsets leave the times as they are (one offset alone, or a zero offset).
    let times: Vec<Json> = doc
        .get("events")
        .arr()
        .iter()
        .map(|e| e.get("time").clone())
        .collect();
    let mut written: Vec<Json> = w
        .events
        .iter()
        .flat_map(|(_, s)| s.iter().map(|e| ji(e.0)))
        .collect();
    let mut sorted = times.clone();
    let key = |j: &Json| match j {
        Json::Int(i) => *i,
        _ => unreachable!(),
    };
    sorted.sort_by_key(key);
    written.sort_by_key(key);
    assert_eq!(sorted, written);
}

#[test]
fn program_buffer_flush_and_measurement_events() {
    check_events(&[
        "ProgramBegin",
        "ProgramEnd",
        "BufferFlush",
        "MeasurementOnOff",
    ]);
}

#[test]
fn enter_and_leave_through_dense_and_sparse_mapping_tables() {
    check_events(&["Enter", "Leave"]);
}

#[test]
fn thread_fork_join_team_and_lock_events() {
    check_events(&[
        "ThreadFork",
        "ThreadJoin",
        "ThreadTeamBegin",
        "ThreadTeamEnd",
        "ThreadAcquireLock",
        "ThreadReleaseLock",
    ]);
}

#[test]
fn thread_task_events() {
    check_events(&["ThreadTaskCreate", "ThreadTaskSwitch", "ThreadTaskComplete"]);
}

#[test]
fn metric_and_parameter_events() {
    check_events(&[
        "Metric",
        "ParameterString",
        "ParameterInt",
        "ParameterUnsignedInt",
    ]);
}

#[test]
fn mpi_point_to_point_events() {
    check_events(&[
        "MpiSend",
        "MpiIsend",
        "MpiIsendComplete",
        "MpiIrecvRequest",
        "MpiRecv",
        "MpiIrecv",
        "MpiRequestTest",
        "MpiRequestCancelled",
    ]);
}

#[test]
fn mpi_collective_events() {
    check_events(&["MpiCollectiveBegin", "MpiCollectiveEnd"]);
}

#[test]
fn attribute_lists_with_every_attribute_type() {
    // Every event kind is written, and attribute lists carry every attribute type (twice: the
    // extremes in one list, the other extremes in reverse order in another).
    let w = write_archive();
    let mut kinds: Vec<&str> = w
        .events
        .iter()
        .flat_map(|(_, s)| s.iter().map(|e| event_kind(&e.2)))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), 29, "{kinds:?}");
    for first in [true, false] {
        let list = all_types_list(first);
        let mut types: Vec<Type> = list.entries().iter().map(|e| e.1.value_type).collect();
        types.sort_unstable();
        assert_eq!(types, ATTRIBUTE_TYPES);
        assert!(w.events.iter().any(|(_, s)| s.iter().any(|e| e.1 == list)));
    }
    // The full comparison: all events, with their attribute lists.
    check_events(&kinds);
}

#[test]
fn snapshots() {
    let w = write_archive();
    let ctx = &Ctx { w: &w };
    let out = otf2_print(&["-A"], &w.anchor, &[SPARSE_REGION_WARNING]);
    let actual = printed_section(&out, "Snapshots", 2);
    // libotf2 3.0.2 does not translate snapshot records through the mapping tables, so the
    // snapshot records use ids the tables leave alone.
    let expected: Vec<Printed> = w
        .snaps
        .iter()
        .flat_map(|(location, records)| {
            records.iter().map(move |(time, list, record)| {
                let (kind, column, rest) = ctx.p_snap(*location, *time, record);
                printed(
                    kind,
                    vec![location.to_string(), column.to_string()],
                    rest,
                    ctx.p_attributes(list.entries()),
                )
            })
        })
        .collect();
    assert_same("otf2-print -A snapshots", &actual, &expected);

    let mut kinds: Vec<String> = w
        .snaps
        .iter()
        .flat_map(|(_, s)| {
            s.iter()
                .map(|r| format!("{:?}", std::mem::discriminant(&r.2)))
        })
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), 20, "every snapshot record kind");

    // Our reader; L1 has the empty .snap file `finish` wrote.
    let reader = ArchiveReader::open(&w.anchor).unwrap();
    for (location, records) in &w.snaps {
        let ours: Vec<Timed<SnapRecord>> = reader
            .snapshots(*location)
            .unwrap()
            .into_iter()
            .map(|r| (r.time, r.attributes, r.record))
            .collect();
        assert_eq!(&ours, records);
    }
    assert_eq!(reader.snapshots(L1).unwrap(), vec![]);
    // The python module does not read snapshots, but must read the archive that has them.
    assert!(!dump(&w).get("events").arr().is_empty());
}

#[test]
fn dedicated_event_encoders_match_the_generic_one() {
    // Enter, Leave, the thread events and BufferFlush have encoders of their own; the checks
    // above read files written through `EventWriter::write`, so these must give the same bytes.
    let generic = write_archive_with(false);
    let dedicated = write_archive_with(true);
    for (location, _) in &generic.events {
        let file = format!("traces/{location}.evt");
        let a = std::fs::read(generic.anchor.with_file_name(&file)).unwrap();
        let b = std::fs::read(dedicated.anchor.with_file_name(&file)).unwrap();
        assert_eq!(a, b, "{file}");
    }
}
