//! Record ids, payload encoding and decoding of every record kind this crate knows, and the
//! payload size bounds libotf2 uses to decide chunk breaks and length forms (needed for
//! byte-identical output).
//!
//! Payload layouts follow the wire order of OTF2 3.0: fields sorted by the version that
//! introduced them, attic fields still present.

use super::types::*;
use super::wire::*;

/// Event record ids.
pub mod event_id {
    pub const BUFFER_FLUSH: u8 = 10;
    pub const MEASUREMENT_ON_OFF: u8 = 11;
    pub const ENTER: u8 = 12;
    pub const LEAVE: u8 = 13;
    pub const METRIC: u8 = 31;
    pub const PARAMETER_STRING: u8 = 32;
    pub const PARAMETER_INT: u8 = 33;
    pub const PARAMETER_UNSIGNED_INT: u8 = 34;
    pub const THREAD_FORK: u8 = 53;
    pub const THREAD_JOIN: u8 = 54;
    pub const THREAD_TEAM_BEGIN: u8 = 55;
    pub const THREAD_TEAM_END: u8 = 56;
    pub const THREAD_ACQUIRE_LOCK: u8 = 57;
    pub const THREAD_RELEASE_LOCK: u8 = 58;
    pub const THREAD_TASK_CREATE: u8 = 59;
    pub const THREAD_TASK_SWITCH: u8 = 60;
    pub const THREAD_TASK_COMPLETE: u8 = 61;
    pub const PROGRAM_BEGIN: u8 = 83;
    pub const PROGRAM_END: u8 = 84;
}

/// Global definition record ids.
pub mod def_id {
    pub const CLOCK_PROPERTIES: u8 = 5;
    pub const PARADIGM: u8 = 6;
    pub const PARADIGM_PROPERTY: u8 = 7;
    pub const STRING: u8 = 10;
    pub const ATTRIBUTE: u8 = 11;
    pub const SYSTEM_TREE_NODE: u8 = 12;
    pub const LOCATION_GROUP: u8 = 13;
    pub const LOCATION: u8 = 14;
    pub const REGION: u8 = 15;
    pub const CALLSITE: u8 = 16;
    pub const GROUP: u8 = 18;
    pub const METRIC_MEMBER: u8 = 19;
    pub const METRIC_CLASS: u8 = 20;
    pub const METRIC_INSTANCE: u8 = 21;
    pub const COMM: u8 = 22;
    pub const PARAMETER: u8 = 23;
    pub const METRIC_CLASS_RECORDER: u8 = 25;
    pub const SYSTEM_TREE_NODE_PROPERTY: u8 = 26;
    pub const SYSTEM_TREE_NODE_DOMAIN: u8 = 27;
    pub const LOCATION_GROUP_PROPERTY: u8 = 28;
    pub const LOCATION_PROPERTY: u8 = 29;
    pub const INTERRUPT_GENERATOR: u8 = 36;
    /// Local definitions only.
    pub const MAPPING_TABLE: u8 = 5;
    pub const CLOCK_OFFSET: u8 = 6;
}

/// Snapshot record ids.
pub mod snap_id {
    pub const SNAPSHOT_START: u8 = 10;
    pub const SNAPSHOT_END: u8 = 11;
    pub const MEASUREMENT_ON_OFF: u8 = 12;
    pub const ENTER: u8 = 13;
    pub const METRIC: u8 = 26;
    pub const PARAMETER_STRING: u8 = 27;
    pub const PARAMETER_INT: u8 = 28;
    pub const PARAMETER_UNSIGNED_INT: u8 = 29;
}

/// Event records written without a length field (the OTF2 1.0/1.1 one-value events), with
/// whether their value is 64-bit.
pub fn singleton_event(id: u8) -> Option<bool> {
    match id {
        12 | 13 | 24 => Some(false),
        16 | 17 | 20 | 21 | 28 | 29 | 30 => Some(true),
        _ => None,
    }
}

// Upper bounds libotf2 assumes per wire type.
const B_U8: usize = 1;
const B_U64: usize = 8;
const B_CU32: usize = 5;
const B_CU64: usize = 9;
const B_CI64: usize = 9;
/// One attribute-list entry: attribute id, type byte, value.
const B_ATTRIBUTE_ENTRY: usize = 15;

/// The room libotf2 reserves for the length field of a record with this payload bound.
pub fn length_field_bound(payload_bound: usize) -> usize {
    if payload_bound < 255 {
        1
    } else {
        9
    }
}

/// libotf2's bound of an attribute list: count + entries, plus its id and length field.
pub fn attribute_list_bound(entries: usize) -> usize {
    let payload = entries * B_ATTRIBUTE_ENTRY + B_CU32;
    1 + length_field_bound(payload) + payload
}

pub fn put_typed_value(buf: &mut Vec<u8>, v: TypedValue) {
    match v.value_type {
        Type::UINT8 | Type::INT8 => put_u8(buf, v.raw as u8),
        Type::UINT16 | Type::INT16 => put_u16(buf, v.raw as u16),
        Type::UINT32 => put_cu32(buf, v.raw as u32),
        Type::INT32 => put_ci32(buf, v.raw as i64 as i32),
        Type::INT64 => put_ci64(buf, v.raw as i64),
        Type::FLOAT => put_u32(buf, v.raw as u32),
        Type::DOUBLE => put_u64(buf, v.raw),
        Type::STRING
        | Type::ATTRIBUTE
        | Type::REGION
        | Type::GROUP
        | Type::METRIC
        | Type::COMM
        | Type::PARAMETER
        | Type::RMA_WIN
        | Type::SOURCE_CODE_LOCATION
        | Type::CALLING_CONTEXT
        | Type::INTERRUPT_GENERATOR
        | Type::IO_FILE
        | Type::IO_HANDLE
        | Type::LOCATION_GROUP => put_cu32(buf, v.raw as u32),
        // UINT64, LOCATION, NONE and unknown types.
        _ => put_cu64(buf, v.raw),
    }
}

pub fn get_typed_value(d: &mut Decoder, value_type: Type) -> DecodeResult<TypedValue> {
    let raw = match value_type {
        Type::UINT8 => d.u8()? as u64,
        Type::INT8 => d.u8()? as i8 as i64 as u64,
        Type::UINT16 => d.u16()? as u64,
        Type::INT16 => d.u16()? as i16 as i64 as u64,
        Type::UINT32 => d.cu32()? as u64,
        Type::INT32 => d.ci32()? as i64 as u64,
        Type::INT64 => d.ci64()? as u64,
        Type::FLOAT => d.u32()? as u64,
        Type::DOUBLE => d.u64()?,
        Type::STRING
        | Type::ATTRIBUTE
        | Type::REGION
        | Type::GROUP
        | Type::METRIC
        | Type::COMM
        | Type::PARAMETER
        | Type::RMA_WIN
        | Type::SOURCE_CODE_LOCATION
        | Type::CALLING_CONTEXT
        | Type::INTERRUPT_GENERATOR
        | Type::IO_FILE
        | Type::IO_HANDLE
        | Type::LOCATION_GROUP => d.cu32()? as u64,
        _ => d.cu64()?,
    };
    Ok(TypedValue::new(value_type, raw))
}

/// The whole attribute-list record (id, length, payload) in libotf2's length form.
pub fn put_attribute_list(buf: &mut Vec<u8>, list: &AttributeList) {
    let mut payload = Vec::with_capacity(list.len() * 6 + 2);
    put_cu32(&mut payload, list.len() as u32);
    for &(attribute, value) in list.entries() {
        put_cu32(&mut payload, attribute);
        put_u8(&mut payload, value.value_type.0);
        put_typed_value(&mut payload, value);
    }
    let bound = list.len() * B_ATTRIBUTE_ENTRY + B_CU32;
    put_framed(buf, super::ATTRIBUTE_LIST, &payload, bound >= 255);
}

pub fn get_attribute_list_payload(d: &mut Decoder) -> DecodeResult<AttributeList> {
    let count = d.cu32()?;
    let mut entries: Vec<(u32, TypedValue)> = Vec::with_capacity(count.min(1024) as usize);
    for _ in 0..count {
        let at = d.offset();
        let attribute = d.cu32()?;
        let value_type = Type(d.u8()?);
        let value = get_typed_value(d, value_type)?;
        if entries.iter().any(|(a, _)| *a == attribute) {
            return Err(DecodeError {
                offset: at,
                message: format!("attribute {attribute} repeated in one attribute list"),
            });
        }
        entries.push((attribute, value));
    }
    Ok(AttributeList::from_entries(entries))
}

/// libotf2's payload bound of a Metric event (and, plus a u64, of a MetricSnap) with `n` values.
pub fn metric_payload_bound(n: usize) -> usize {
    B_CU32 + B_U8 + n * (B_U8 + B_CU64)
}

/// The payload of a Metric event.
pub fn put_metric_payload(buf: &mut Vec<u8>, metric: u32, values: &[TypedValue]) {
    put_cu32(buf, metric);
    put_metric_values(buf, values);
}

fn put_metric_values(buf: &mut Vec<u8>, values: &[TypedValue]) {
    put_u8(buf, values.len() as u8);
    for v in values {
        put_u8(buf, v.value_type.0);
        // Metric values are the raw 64 bits whatever the type.
        put_cu64(buf, v.raw);
    }
}

fn get_metric_values(d: &mut Decoder) -> DecodeResult<Vec<TypedValue>> {
    let n = d.u8()?;
    (0..n)
        .map(|_| {
            let t = Type(d.u8()?);
            Ok(TypedValue::new(t, d.cu64()?))
        })
        .collect()
}

/// Property records carry the attic `stringValue`: the value itself when it is a string,
/// UNDEFINED otherwise.
fn put_property_value(buf: &mut Vec<u8>, value: TypedValue) {
    let attic = if value.value_type == Type::STRING {
        value.raw as u32
    } else {
        UNDEFINED_U32
    };
    put_cu32(buf, attic);
    put_u8(buf, value.value_type.0);
    put_typed_value(buf, value);
}

fn get_property_value(d: &mut Decoder) -> DecodeResult<TypedValue> {
    let attic = d.cu32()?;
    if d.is_empty() {
        return Ok(TypedValue::new(Type::STRING, attic as u64));
    }
    let t = Type(d.u8()?);
    get_typed_value(d, t)
}

impl Event {
    pub fn record_id(&self) -> u8 {
        use event_id::*;
        match self {
            Event::BufferFlush { .. } => BUFFER_FLUSH,
            Event::MeasurementOnOff { .. } => MEASUREMENT_ON_OFF,
            Event::Enter { .. } => ENTER,
            Event::Leave { .. } => LEAVE,
            Event::Metric { .. } => METRIC,
            Event::ParameterString { .. } => PARAMETER_STRING,
            Event::ParameterInt { .. } => PARAMETER_INT,
            Event::ParameterUnsignedInt { .. } => PARAMETER_UNSIGNED_INT,
            Event::ThreadFork { .. } => THREAD_FORK,
            Event::ThreadJoin { .. } => THREAD_JOIN,
            Event::ThreadTeamBegin { .. } => THREAD_TEAM_BEGIN,
            Event::ThreadTeamEnd { .. } => THREAD_TEAM_END,
            Event::ThreadAcquireLock { .. } => THREAD_ACQUIRE_LOCK,
            Event::ThreadReleaseLock { .. } => THREAD_RELEASE_LOCK,
            Event::ThreadTaskCreate { .. } => THREAD_TASK_CREATE,
            Event::ThreadTaskSwitch { .. } => THREAD_TASK_SWITCH,
            Event::ThreadTaskComplete { .. } => THREAD_TASK_COMPLETE,
            Event::ProgramBegin { .. } => PROGRAM_BEGIN,
            Event::ProgramEnd { .. } => PROGRAM_END,
            Event::Unknown { record_id, .. } => *record_id,
        }
    }

    /// libotf2's upper bound of the payload (decides chunk breaks and the length form).
    pub fn payload_bound(&self) -> usize {
        match self {
            Event::BufferFlush { .. } => B_U64,
            Event::MeasurementOnOff { .. } | Event::ThreadJoin { .. } => B_U8,
            Event::Enter { .. } | Event::Leave { .. } => B_CU32,
            Event::Metric { values, .. } => metric_payload_bound(values.len()),
            Event::ParameterString { .. } => 2 * B_CU32,
            Event::ParameterInt { .. } => B_CU32 + B_CI64,
            Event::ParameterUnsignedInt { .. } => B_CU32 + B_CU64,
            Event::ThreadFork { .. } => B_U8 + B_CU32,
            Event::ThreadTeamBegin { .. } | Event::ThreadTeamEnd { .. } => B_CU32,
            Event::ThreadAcquireLock { .. } | Event::ThreadReleaseLock { .. } => B_U8 + 2 * B_CU32,
            Event::ThreadTaskCreate { .. }
            | Event::ThreadTaskSwitch { .. }
            | Event::ThreadTaskComplete { .. } => 3 * B_CU32,
            Event::ProgramBegin { arguments, .. } => 2 * B_CU32 + arguments.len() * B_CU32,
            Event::ProgramEnd { .. } => B_CI64,
            Event::Unknown { payload, .. } => payload.len(),
        }
    }

    pub fn is_singleton(&self) -> bool {
        matches!(self, Event::Enter { .. } | Event::Leave { .. })
    }

    pub fn encode_payload(&self, buf: &mut Vec<u8>) {
        match self {
            Event::BufferFlush { stop_time } => put_u64(buf, *stop_time),
            Event::MeasurementOnOff { mode } => put_u8(buf, mode.0),
            Event::Enter { region } | Event::Leave { region } => put_cu32(buf, *region),
            Event::Metric { metric, values } => put_metric_payload(buf, *metric, values),
            Event::ParameterString { parameter, string } => {
                put_cu32(buf, *parameter);
                put_cu32(buf, *string);
            }
            Event::ParameterInt { parameter, value } => {
                put_cu32(buf, *parameter);
                put_ci64(buf, *value);
            }
            Event::ParameterUnsignedInt { parameter, value } => {
                put_cu32(buf, *parameter);
                put_cu64(buf, *value);
            }
            Event::ThreadFork {
                model,
                number_of_requested_threads,
            } => {
                put_u8(buf, model.0);
                put_cu32(buf, *number_of_requested_threads);
            }
            Event::ThreadJoin { model } => put_u8(buf, model.0),
            Event::ThreadTeamBegin { team } | Event::ThreadTeamEnd { team } => put_cu32(buf, *team),
            Event::ThreadAcquireLock {
                model,
                lock_id,
                acquisition_order,
            }
            | Event::ThreadReleaseLock {
                model,
                lock_id,
                acquisition_order,
            } => {
                put_u8(buf, model.0);
                put_cu32(buf, *lock_id);
                put_cu32(buf, *acquisition_order);
            }
            Event::ThreadTaskCreate {
                team,
                creating_thread,
                generation_number,
            }
            | Event::ThreadTaskSwitch {
                team,
                creating_thread,
                generation_number,
            }
            | Event::ThreadTaskComplete {
                team,
                creating_thread,
                generation_number,
            } => {
                put_cu32(buf, *team);
                put_cu32(buf, *creating_thread);
                put_cu32(buf, *generation_number);
            }
            Event::ProgramBegin {
                program_name,
                arguments,
            } => {
                put_cu32(buf, *program_name);
                put_cu32(buf, arguments.len() as u32);
                for a in arguments {
                    put_cu32(buf, *a);
                }
            }
            Event::ProgramEnd { exit_status } => put_ci64(buf, *exit_status),
            Event::Unknown { payload, .. } => buf.extend_from_slice(payload),
        }
    }

    /// Decodes a payload; `d` spans exactly the record's announced length (extra trailing bytes
    /// are ignored, as the reference reader does).
    pub fn decode(id: u8, d: &mut Decoder) -> DecodeResult<Event> {
        use event_id::*;
        let task = |d: &mut Decoder| -> DecodeResult<(u32, u32, u32)> {
            Ok((d.cu32()?, d.cu32()?, d.cu32()?))
        };
        let lock = |d: &mut Decoder| -> DecodeResult<(Paradigm, u32, u32)> {
            Ok((Paradigm(d.u8()?), d.cu32()?, d.cu32()?))
        };
        Ok(match id {
            BUFFER_FLUSH => Event::BufferFlush {
                stop_time: d.u64()?,
            },
            MEASUREMENT_ON_OFF => Event::MeasurementOnOff {
                mode: MeasurementMode(d.u8()?),
            },
            ENTER => Event::Enter { region: d.cu32()? },
            LEAVE => Event::Leave { region: d.cu32()? },
            METRIC => Event::Metric {
                metric: d.cu32()?,
                values: get_metric_values(d)?,
            },
            PARAMETER_STRING => Event::ParameterString {
                parameter: d.cu32()?,
                string: d.cu32()?,
            },
            PARAMETER_INT => Event::ParameterInt {
                parameter: d.cu32()?,
                value: d.ci64()?,
            },
            PARAMETER_UNSIGNED_INT => Event::ParameterUnsignedInt {
                parameter: d.cu32()?,
                value: d.cu64()?,
            },
            THREAD_FORK => Event::ThreadFork {
                model: Paradigm(d.u8()?),
                number_of_requested_threads: d.cu32()?,
            },
            THREAD_JOIN => Event::ThreadJoin {
                model: Paradigm(d.u8()?),
            },
            THREAD_TEAM_BEGIN => Event::ThreadTeamBegin { team: d.cu32()? },
            THREAD_TEAM_END => Event::ThreadTeamEnd { team: d.cu32()? },
            THREAD_ACQUIRE_LOCK => {
                let (model, lock_id, acquisition_order) = lock(d)?;
                Event::ThreadAcquireLock {
                    model,
                    lock_id,
                    acquisition_order,
                }
            }
            THREAD_RELEASE_LOCK => {
                let (model, lock_id, acquisition_order) = lock(d)?;
                Event::ThreadReleaseLock {
                    model,
                    lock_id,
                    acquisition_order,
                }
            }
            THREAD_TASK_CREATE => {
                let (team, creating_thread, generation_number) = task(d)?;
                Event::ThreadTaskCreate {
                    team,
                    creating_thread,
                    generation_number,
                }
            }
            THREAD_TASK_SWITCH => {
                let (team, creating_thread, generation_number) = task(d)?;
                Event::ThreadTaskSwitch {
                    team,
                    creating_thread,
                    generation_number,
                }
            }
            THREAD_TASK_COMPLETE => {
                let (team, creating_thread, generation_number) = task(d)?;
                Event::ThreadTaskComplete {
                    team,
                    creating_thread,
                    generation_number,
                }
            }
            PROGRAM_BEGIN => {
                let program_name = d.cu32()?;
                let n = d.cu32()?;
                let arguments = (0..n).map(|_| d.cu32()).collect::<DecodeResult<_>>()?;
                Event::ProgramBegin {
                    program_name,
                    arguments,
                }
            }
            PROGRAM_END => Event::ProgramEnd {
                exit_status: d.ci64()?,
            },
            other => {
                let payload = d.bytes(d.remaining())?.to_vec();
                Event::Unknown {
                    record_id: other,
                    payload,
                }
            }
        })
    }
}

impl SnapRecord {
    pub fn record_id(&self) -> u8 {
        use snap_id::*;
        match self {
            SnapRecord::SnapshotStart { .. } => SNAPSHOT_START,
            SnapRecord::SnapshotEnd { .. } => SNAPSHOT_END,
            SnapRecord::MeasurementOnOff { .. } => MEASUREMENT_ON_OFF,
            SnapRecord::Enter { .. } => ENTER,
            SnapRecord::Metric { .. } => METRIC,
            SnapRecord::ParameterString { .. } => PARAMETER_STRING,
            SnapRecord::ParameterInt { .. } => PARAMETER_INT,
            SnapRecord::ParameterUnsignedInt { .. } => PARAMETER_UNSIGNED_INT,
            SnapRecord::Unknown { record_id, .. } => *record_id,
        }
    }

    pub fn payload_bound(&self) -> usize {
        match self {
            SnapRecord::SnapshotStart { .. } | SnapRecord::SnapshotEnd { .. } => B_CU64,
            SnapRecord::MeasurementOnOff { .. } => B_U64 + B_U8,
            SnapRecord::Enter { .. } => B_U64 + B_CU32,
            SnapRecord::Metric { values, .. } => {
                B_U64 + B_CU32 + B_U8 + values.len() * (B_U8 + B_CU64)
            }
            SnapRecord::ParameterString { .. } => B_U64 + 2 * B_CU32,
            SnapRecord::ParameterInt { .. } => B_U64 + B_CU32 + B_CI64,
            SnapRecord::ParameterUnsignedInt { .. } => B_U64 + B_CU32 + B_CU64,
            SnapRecord::Unknown { payload, .. } => payload.len(),
        }
    }

    pub fn encode_payload(&self, buf: &mut Vec<u8>) {
        match self {
            SnapRecord::SnapshotStart { number_of_records } => put_cu64(buf, *number_of_records),
            SnapRecord::SnapshotEnd { cont_read_pos } => put_cu64(buf, *cont_read_pos),
            SnapRecord::MeasurementOnOff {
                orig_event_time,
                mode,
            } => {
                put_u64(buf, *orig_event_time);
                put_u8(buf, mode.0);
            }
            SnapRecord::Enter {
                orig_event_time,
                region,
            } => {
                put_u64(buf, *orig_event_time);
                put_cu32(buf, *region);
            }
            SnapRecord::Metric {
                orig_event_time,
                metric,
                values,
            } => {
                put_u64(buf, *orig_event_time);
                put_cu32(buf, *metric);
                put_metric_values(buf, values);
            }
            SnapRecord::ParameterString {
                orig_event_time,
                parameter,
                string,
            } => {
                put_u64(buf, *orig_event_time);
                put_cu32(buf, *parameter);
                put_cu32(buf, *string);
            }
            SnapRecord::ParameterInt {
                orig_event_time,
                parameter,
                value,
            } => {
                put_u64(buf, *orig_event_time);
                put_cu32(buf, *parameter);
                put_ci64(buf, *value);
            }
            SnapRecord::ParameterUnsignedInt {
                orig_event_time,
                parameter,
                value,
            } => {
                put_u64(buf, *orig_event_time);
                put_cu32(buf, *parameter);
                put_cu64(buf, *value);
            }
            SnapRecord::Unknown { payload, .. } => buf.extend_from_slice(payload),
        }
    }

    pub fn decode(id: u8, d: &mut Decoder) -> DecodeResult<SnapRecord> {
        use snap_id::*;
        Ok(match id {
            SNAPSHOT_START => SnapRecord::SnapshotStart {
                number_of_records: d.cu64()?,
            },
            SNAPSHOT_END => SnapRecord::SnapshotEnd {
                cont_read_pos: d.cu64()?,
            },
            MEASUREMENT_ON_OFF => SnapRecord::MeasurementOnOff {
                orig_event_time: d.u64()?,
                mode: MeasurementMode(d.u8()?),
            },
            ENTER => SnapRecord::Enter {
                orig_event_time: d.u64()?,
                region: d.cu32()?,
            },
            METRIC => SnapRecord::Metric {
                orig_event_time: d.u64()?,
                metric: d.cu32()?,
                values: get_metric_values(d)?,
            },
            PARAMETER_STRING => SnapRecord::ParameterString {
                orig_event_time: d.u64()?,
                parameter: d.cu32()?,
                string: d.cu32()?,
            },
            PARAMETER_INT => SnapRecord::ParameterInt {
                orig_event_time: d.u64()?,
                parameter: d.cu32()?,
                value: d.ci64()?,
            },
            PARAMETER_UNSIGNED_INT => SnapRecord::ParameterUnsignedInt {
                orig_event_time: d.u64()?,
                parameter: d.cu32()?,
                value: d.cu64()?,
            },
            other => {
                let payload = d.bytes(d.remaining())?.to_vec();
                SnapRecord::Unknown {
                    record_id: other,
                    payload,
                }
            }
        })
    }
}

impl GlobalDef {
    pub fn record_id(&self) -> u8 {
        use def_id::*;
        match self {
            GlobalDef::ClockProperties { .. } => CLOCK_PROPERTIES,
            GlobalDef::Paradigm { .. } => PARADIGM,
            GlobalDef::ParadigmProperty { .. } => PARADIGM_PROPERTY,
            GlobalDef::String { .. } => STRING,
            GlobalDef::Attribute { .. } => ATTRIBUTE,
            GlobalDef::SystemTreeNode { .. } => SYSTEM_TREE_NODE,
            GlobalDef::LocationGroup { .. } => LOCATION_GROUP,
            GlobalDef::Location { .. } => LOCATION,
            GlobalDef::Region { .. } => REGION,
            GlobalDef::Callsite { .. } => CALLSITE,
            GlobalDef::Group { .. } => GROUP,
            GlobalDef::MetricMember { .. } => METRIC_MEMBER,
            GlobalDef::MetricClass { .. } => METRIC_CLASS,
            GlobalDef::MetricInstance { .. } => METRIC_INSTANCE,
            GlobalDef::Comm { .. } => COMM,
            GlobalDef::Parameter { .. } => PARAMETER,
            GlobalDef::MetricClassRecorder { .. } => METRIC_CLASS_RECORDER,
            GlobalDef::SystemTreeNodeProperty { .. } => SYSTEM_TREE_NODE_PROPERTY,
            GlobalDef::SystemTreeNodeDomain { .. } => SYSTEM_TREE_NODE_DOMAIN,
            GlobalDef::LocationGroupProperty { .. } => LOCATION_GROUP_PROPERTY,
            GlobalDef::LocationProperty { .. } => LOCATION_PROPERTY,
            GlobalDef::InterruptGenerator { .. } => INTERRUPT_GENERATOR,
            GlobalDef::Unknown { record_id, .. } => *record_id,
        }
    }

    pub fn encode_payload(&self, buf: &mut Vec<u8>) {
        match self {
            GlobalDef::ClockProperties {
                timer_resolution,
                global_offset,
                trace_length,
                realtime_timestamp,
            } => {
                put_cu64(buf, *timer_resolution);
                put_cu64(buf, *global_offset);
                put_cu64(buf, *trace_length);
                put_cu64(buf, *realtime_timestamp);
            }
            GlobalDef::Paradigm {
                paradigm,
                name,
                paradigm_class,
            } => {
                put_u8(buf, paradigm.0);
                put_cu32(buf, *name);
                put_u8(buf, paradigm_class.0);
            }
            GlobalDef::ParadigmProperty {
                paradigm,
                property,
                value,
            } => {
                put_u8(buf, paradigm.0);
                put_u8(buf, property.0);
                put_u8(buf, value.value_type.0);
                put_typed_value(buf, *value);
            }
            GlobalDef::String { id, string } => {
                put_cu32(buf, *id);
                put_cstr(buf, string.as_bytes());
            }
            GlobalDef::Attribute {
                id,
                name,
                description,
                attribute_type,
            } => {
                put_cu32(buf, *id);
                put_cu32(buf, *name);
                put_u8(buf, attribute_type.0);
                put_cu32(buf, *description);
            }
            GlobalDef::SystemTreeNode {
                id,
                name,
                class_name,
                parent,
            } => {
                put_cu32(buf, *id);
                put_cu32(buf, *name);
                put_cu32(buf, *class_name);
                put_cu32(buf, *parent);
            }
            GlobalDef::LocationGroup {
                id,
                name,
                location_group_type,
                system_tree_parent,
                creating_location_group,
            } => {
                put_cu32(buf, *id);
                put_cu32(buf, *name);
                put_u8(buf, location_group_type.0);
                put_cu32(buf, *system_tree_parent);
                put_cu32(buf, *creating_location_group);
            }
            GlobalDef::Location {
                id,
                name,
                location_type,
                number_of_events,
                location_group,
            } => {
                put_cu64(buf, *id);
                put_cu32(buf, *name);
                put_u8(buf, location_type.0);
                put_cu64(buf, *number_of_events);
                put_cu32(buf, *location_group);
            }
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
                put_cu32(buf, *id);
                put_cu32(buf, *name);
                put_cu32(buf, *description);
                put_u8(
                    buf,
                    legacy_region_type(*region_role, *paradigm, *region_flags),
                );
                put_cu32(buf, *source_file);
                put_cu32(buf, *begin_line);
                put_cu32(buf, *end_line);
                put_cu32(buf, *canonical_name);
                put_u8(buf, region_role.0);
                put_u8(buf, paradigm.0);
                put_cu32(buf, region_flags.0);
            }
            GlobalDef::Callsite {
                id,
                source_file,
                line_number,
                entered_region,
                left_region,
            } => {
                put_cu32(buf, *id);
                put_cu32(buf, *source_file);
                put_cu32(buf, *line_number);
                put_cu32(buf, *entered_region);
                put_cu32(buf, *left_region);
            }
            GlobalDef::Group {
                id,
                name,
                group_type,
                paradigm,
                group_flags,
                members,
            } => {
                put_cu32(buf, *id);
                put_cu32(buf, *name);
                put_u8(buf, legacy_group_type(*group_type, *paradigm, *group_flags));
                put_cu32(buf, members.len() as u32);
                for m in members {
                    put_cu64(buf, *m);
                }
                put_u8(buf, group_type.0);
                put_u8(buf, paradigm.0);
                put_cu32(buf, group_flags.0);
            }
            GlobalDef::MetricMember {
                id,
                name,
                description,
                metric_type,
                metric_mode,
                value_type,
                base,
                exponent,
                unit,
            } => {
                put_cu32(buf, *id);
                put_cu32(buf, *name);
                put_cu32(buf, *description);
                put_u8(buf, metric_type.0);
                put_u8(buf, metric_mode.0);
                put_u8(buf, value_type.0);
                put_u8(buf, base.0);
                put_ci64(buf, *exponent);
                put_cu32(buf, *unit);
            }
            GlobalDef::MetricClass {
                id,
                members,
                occurrence,
                recorder_kind,
            } => {
                put_cu32(buf, *id);
                put_u8(buf, members.len() as u8);
                for m in members {
                    put_cu32(buf, *m);
                }
                put_u8(buf, occurrence.0);
                put_u8(buf, recorder_kind.0);
            }
            GlobalDef::MetricInstance {
                id,
                metric_class,
                recorder,
                scope_type,
                scope,
            } => {
                put_cu32(buf, *id);
                put_cu32(buf, *metric_class);
                put_cu64(buf, *recorder);
                put_u8(buf, scope_type.0);
                put_cu64(buf, *scope);
            }
            GlobalDef::Comm {
                id,
                name,
                group,
                parent,
                flags,
            } => {
                put_cu32(buf, *id);
                put_cu32(buf, *name);
                put_cu32(buf, *group);
                put_cu32(buf, *parent);
                put_cu32(buf, flags.0);
            }
            GlobalDef::Parameter {
                id,
                name,
                parameter_type,
            } => {
                put_cu32(buf, *id);
                put_cu32(buf, *name);
                put_u8(buf, parameter_type.0);
            }
            GlobalDef::MetricClassRecorder { metric, recorder } => {
                put_cu32(buf, *metric);
                put_cu64(buf, *recorder);
            }
            GlobalDef::SystemTreeNodeProperty { node, name, value } => {
                put_cu32(buf, *node);
                put_cu32(buf, *name);
                put_property_value(buf, *value);
            }
            GlobalDef::SystemTreeNodeDomain { node, domain } => {
                put_cu32(buf, *node);
                put_u8(buf, domain.0);
            }
            GlobalDef::LocationGroupProperty {
                location_group,
                name,
                value,
            } => {
                put_cu32(buf, *location_group);
                put_cu32(buf, *name);
                put_property_value(buf, *value);
            }
            GlobalDef::LocationProperty {
                location,
                name,
                value,
            } => {
                put_cu64(buf, *location);
                put_cu32(buf, *name);
                put_property_value(buf, *value);
            }
            GlobalDef::InterruptGenerator {
                id,
                name,
                mode,
                base,
                exponent,
                period,
            } => {
                put_cu32(buf, *id);
                put_cu32(buf, *name);
                put_u8(buf, mode.0);
                put_u8(buf, base.0);
                put_ci64(buf, *exponent);
                put_cu64(buf, *period);
            }
            GlobalDef::Unknown { payload, .. } => buf.extend_from_slice(payload),
        }
    }

    /// Decodes a payload. Fields newer than a record's first version are read only if bytes
    /// remain (older writers omit them), as the reference reader does.
    pub fn decode(id: u8, d: &mut Decoder) -> DecodeResult<GlobalDef> {
        use def_id::*;
        Ok(match id {
            CLOCK_PROPERTIES => GlobalDef::ClockProperties {
                timer_resolution: d.cu64()?,
                global_offset: d.cu64()?,
                trace_length: d.cu64()?,
                realtime_timestamp: if d.is_empty() {
                    UNDEFINED_U64
                } else {
                    d.cu64()?
                },
            },
            PARADIGM => GlobalDef::Paradigm {
                paradigm: Paradigm(d.u8()?),
                name: d.cu32()?,
                paradigm_class: ParadigmClass(d.u8()?),
            },
            PARADIGM_PROPERTY => {
                let paradigm = Paradigm(d.u8()?);
                let property = ParadigmProperty(d.u8()?);
                let t = Type(d.u8()?);
                GlobalDef::ParadigmProperty {
                    paradigm,
                    property,
                    value: get_typed_value(d, t)?,
                }
            }
            STRING => GlobalDef::String {
                id: d.cu32()?,
                string: d.cstr()?,
            },
            ATTRIBUTE => {
                let id = d.cu32()?;
                let name = d.cu32()?;
                let attribute_type = Type(d.u8()?);
                let description = if d.is_empty() {
                    UNDEFINED_U32
                } else {
                    d.cu32()?
                };
                GlobalDef::Attribute {
                    id,
                    name,
                    description,
                    attribute_type,
                }
            }
            SYSTEM_TREE_NODE => GlobalDef::SystemTreeNode {
                id: d.cu32()?,
                name: d.cu32()?,
                class_name: d.cu32()?,
                parent: d.cu32()?,
            },
            LOCATION_GROUP => GlobalDef::LocationGroup {
                id: d.cu32()?,
                name: d.cu32()?,
                location_group_type: LocationGroupType(d.u8()?),
                system_tree_parent: d.cu32()?,
                creating_location_group: if d.is_empty() {
                    UNDEFINED_U32
                } else {
                    d.cu32()?
                },
            },
            LOCATION => GlobalDef::Location {
                id: d.cu64()?,
                name: d.cu32()?,
                location_type: LocationType(d.u8()?),
                number_of_events: d.cu64()?,
                location_group: d.cu32()?,
            },
            REGION => {
                let id = d.cu32()?;
                let name = d.cu32()?;
                let description = d.cu32()?;
                let _legacy_type = d.u8()?;
                let source_file = d.cu32()?;
                let begin_line = d.cu32()?;
                let end_line = d.cu32()?;
                let (canonical_name, region_role, paradigm, region_flags) = if d.is_empty() {
                    (
                        name,
                        RegionRole::UNKNOWN,
                        Paradigm::UNKNOWN,
                        RegionFlag::NONE,
                    )
                } else {
                    (
                        d.cu32()?,
                        RegionRole(d.u8()?),
                        Paradigm(d.u8()?),
                        RegionFlag(d.cu32()?),
                    )
                };
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
                }
            }
            CALLSITE => GlobalDef::Callsite {
                id: d.cu32()?,
                source_file: d.cu32()?,
                line_number: d.cu32()?,
                entered_region: d.cu32()?,
                left_region: d.cu32()?,
            },
            GROUP => {
                let id = d.cu32()?;
                let name = d.cu32()?;
                let _legacy_type = d.u8()?;
                let n = d.cu32()?;
                let members = (0..n).map(|_| d.cu64()).collect::<DecodeResult<_>>()?;
                let (group_type, paradigm, group_flags) = if d.is_empty() {
                    (GroupType::UNKNOWN, Paradigm::UNKNOWN, GroupFlag::NONE)
                } else {
                    (GroupType(d.u8()?), Paradigm(d.u8()?), GroupFlag(d.cu32()?))
                };
                GlobalDef::Group {
                    id,
                    name,
                    group_type,
                    paradigm,
                    group_flags,
                    members,
                }
            }
            METRIC_MEMBER => GlobalDef::MetricMember {
                id: d.cu32()?,
                name: d.cu32()?,
                description: d.cu32()?,
                metric_type: MetricType(d.u8()?),
                metric_mode: MetricMode(d.u8()?),
                value_type: Type(d.u8()?),
                base: Base(d.u8()?),
                exponent: d.ci64()?,
                unit: d.cu32()?,
            },
            METRIC_CLASS => {
                let id = d.cu32()?;
                let n = d.u8()?;
                let members = (0..n).map(|_| d.cu32()).collect::<DecodeResult<_>>()?;
                let occurrence = MetricOccurrence(d.u8()?);
                let recorder_kind = if d.is_empty() {
                    RecorderKind::UNKNOWN
                } else {
                    RecorderKind(d.u8()?)
                };
                GlobalDef::MetricClass {
                    id,
                    members,
                    occurrence,
                    recorder_kind,
                }
            }
            METRIC_INSTANCE => GlobalDef::MetricInstance {
                id: d.cu32()?,
                metric_class: d.cu32()?,
                recorder: d.cu64()?,
                scope_type: MetricScope(d.u8()?),
                scope: d.cu64()?,
            },
            COMM => GlobalDef::Comm {
                id: d.cu32()?,
                name: d.cu32()?,
                group: d.cu32()?,
                parent: d.cu32()?,
                flags: if d.is_empty() {
                    CommFlag::NONE
                } else {
                    CommFlag(d.cu32()?)
                },
            },
            PARAMETER => GlobalDef::Parameter {
                id: d.cu32()?,
                name: d.cu32()?,
                parameter_type: ParameterType(d.u8()?),
            },
            METRIC_CLASS_RECORDER => GlobalDef::MetricClassRecorder {
                metric: d.cu32()?,
                recorder: d.cu64()?,
            },
            SYSTEM_TREE_NODE_PROPERTY => GlobalDef::SystemTreeNodeProperty {
                node: d.cu32()?,
                name: d.cu32()?,
                value: get_property_value(d)?,
            },
            SYSTEM_TREE_NODE_DOMAIN => GlobalDef::SystemTreeNodeDomain {
                node: d.cu32()?,
                domain: SystemTreeDomain(d.u8()?),
            },
            LOCATION_GROUP_PROPERTY => GlobalDef::LocationGroupProperty {
                location_group: d.cu32()?,
                name: d.cu32()?,
                value: get_property_value(d)?,
            },
            LOCATION_PROPERTY => GlobalDef::LocationProperty {
                location: d.cu64()?,
                name: d.cu32()?,
                value: get_property_value(d)?,
            },
            INTERRUPT_GENERATOR => GlobalDef::InterruptGenerator {
                id: d.cu32()?,
                name: d.cu32()?,
                mode: InterruptGeneratorMode(d.u8()?),
                base: Base(d.u8()?),
                exponent: d.ci64()?,
                period: d.cu64()?,
            },
            other => {
                let payload = d.bytes(d.remaining())?.to_vec();
                GlobalDef::Unknown {
                    record_id: other,
                    payload,
                }
            }
        })
    }
}

impl LocalDef {
    pub fn record_id(&self) -> u8 {
        match self {
            LocalDef::MappingTable { .. } => def_id::MAPPING_TABLE,
            LocalDef::ClockOffset { .. } => def_id::CLOCK_OFFSET,
            LocalDef::Unknown { record_id, .. } => *record_id,
        }
    }

    pub fn encode_payload(&self, buf: &mut Vec<u8>) {
        match self {
            LocalDef::MappingTable { mapping_type, map } => {
                put_u8(buf, mapping_type.0);
                match map {
                    IdMap::Dense(globals) => {
                        put_cu64(buf, globals.len() as u64);
                        put_u8(buf, 0);
                        for g in globals {
                            put_cu64(buf, *g);
                        }
                    }
                    IdMap::Sparse(pairs) => {
                        put_cu64(buf, pairs.len() as u64);
                        put_u8(buf, 1);
                        for (l, g) in pairs {
                            put_cu64(buf, *l);
                            put_cu64(buf, *g);
                        }
                    }
                }
            }
            LocalDef::ClockOffset {
                time,
                offset,
                standard_deviation,
            } => {
                put_u64(buf, *time);
                put_ci64(buf, *offset);
                put_u64(buf, standard_deviation.to_bits());
            }
            LocalDef::Unknown { payload, .. } => buf.extend_from_slice(payload),
        }
    }

    pub fn decode(id: u8, d: &mut Decoder) -> DecodeResult<LocalDef> {
        Ok(match id {
            def_id::MAPPING_TABLE => {
                let mapping_type = MappingType(d.u8()?);
                let n = d.cu64()?;
                let mode_at = d.offset();
                let map = match d.u8()? {
                    0 => IdMap::Dense((0..n).map(|_| d.cu64()).collect::<DecodeResult<_>>()?),
                    1 => IdMap::Sparse(
                        (0..n)
                            .map(|_| Ok((d.cu64()?, d.cu64()?)))
                            .collect::<DecodeResult<_>>()?,
                    ),
                    m => {
                        return Err(DecodeError {
                            offset: mode_at,
                            message: format!("unknown id map mode {m}"),
                        })
                    }
                };
                LocalDef::MappingTable { mapping_type, map }
            }
            def_id::CLOCK_OFFSET => LocalDef::ClockOffset {
                time: d.u64()?,
                offset: d.ci64()?,
                standard_deviation: d.f64()?,
            },
            other => {
                let payload = d.bytes(d.remaining())?.to_vec();
                LocalDef::Unknown {
                    record_id: other,
                    payload,
                }
            }
        })
    }
}
