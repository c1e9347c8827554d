//! Every OTF2 record kind this crate knows, each described once in the tables at the end of this
//! file: its id, its fields in wire order with their wire types. From that description
//! `record_table!` generates the Rust enum, the record ids, the payload encoder and decoder and
//! libotf2's payload size bound (libotf2 decides chunk breaks and length forms by that bound,
//! so byte-identical output needs it).
//!
//! Payload layouts follow the wire order of OTF2 3.0: fields sorted by the version that
//! introduced them, attic fields still present.

use super::types::*;
use super::wire::*;

/// What the writers need of a record of any family.
pub trait Record {
    fn record_id(&self) -> u8;
    /// libotf2's upper bound of the payload (decides chunk breaks and the length form).
    fn payload_bound(&self) -> usize;
    /// Whether the record is written without a length field.
    fn is_singleton(&self) -> bool;
    fn encode_payload(&self, buf: &mut Vec<u8>);
}

/// How one field travels: its encoding, its decoding and libotf2's upper bound of its size.
pub trait WireCodec<T> {
    fn put(buf: &mut Vec<u8>, value: &T);
    fn get(d: &mut Decoder) -> DecodeResult<T>;
    fn bound(value: &T) -> usize;
}

/// A NUL-terminated string.
pub struct Cstr;
/// A type byte, then the value encoded as that type says.
pub struct Typed;
/// A metric value: a type byte, then the raw 64 bits compressed whatever the type.
pub struct MetricValue;
/// A property value: the attic `stringValue` (the value itself when it is a string, UNDEFINED
/// otherwise), then a typed value.
pub struct Property;
/// A mapping table's id map: count, dense/sparse mode byte, the ids.
pub struct IdMapWire;
/// A count in codec `N`, then that many elements in codec `E`.
pub struct Counted<N, E>(std::marker::PhantomData<(N, E)>);

// Upper bounds libotf2 assumes per wire type.
const B_U8: usize = 1;
const B_U64: usize = 8;
const B_CU32: usize = 5;
const B_CU64: usize = 9;
/// One attribute-list entry: attribute id, type byte, value.
const B_ATTRIBUTE_ENTRY: usize = 15;

/// Codecs of one primitive value, for that primitive and every type convertible to and from it
/// (the enumerations, the bit sets).
macro_rules! primitive_codecs {
    ($($(#[$doc:meta])* $codec:ident($raw:ty): $put:path, $get:path, $bound:expr;)*) => {$(
        $(#[$doc])*
        pub struct $codec;

        impl<T: Copy + Into<$raw> + From<$raw>> WireCodec<T> for $codec {
            fn put(buf: &mut Vec<u8>, value: &T) {
                $put(buf, (*value).into())
            }
            fn get(d: &mut Decoder) -> DecodeResult<T> {
                $get(d).map(T::from)
            }
            fn bound(_: &T) -> usize {
                $bound
            }
        }
    )*};
}

primitive_codecs! {
    /// One byte.
    U8(u8): put_u8, Decoder::u8, B_U8;
    /// Fixed-width little-endian 64 bits (timestamps).
    U64(u64): put_u64, Decoder::u64, B_U64;
    /// Compressed unsigned 32 bits.
    Cu32(u32): put_cu32, Decoder::cu32, B_CU32;
    /// Compressed unsigned 64 bits.
    Cu64(u64): put_cu64, Decoder::cu64, B_CU64;
    /// Compressed signed 64 bits.
    Ci64(i64): put_ci64, Decoder::ci64, B_CU64;
    /// An IEEE double by its bits.
    F64(f64): put_f64, Decoder::f64, B_U64;
}

impl WireCodec<String> for Cstr {
    fn put(buf: &mut Vec<u8>, value: &String) {
        put_cstr(buf, value.as_bytes());
    }
    fn get(d: &mut Decoder) -> DecodeResult<String> {
        d.cstr()
    }
    fn bound(value: &String) -> usize {
        value.len() + 1
    }
}

impl WireCodec<TypedValue> for Typed {
    fn put(buf: &mut Vec<u8>, value: &TypedValue) {
        put_u8(buf, value.value_type.0);
        put_typed_value(buf, *value);
    }
    fn get(d: &mut Decoder) -> DecodeResult<TypedValue> {
        let value_type = Type(d.u8()?);
        get_typed_value(d, value_type)
    }
    fn bound(_: &TypedValue) -> usize {
        B_U8 + B_CU64
    }
}

impl WireCodec<TypedValue> for MetricValue {
    fn put(buf: &mut Vec<u8>, value: &TypedValue) {
        put_u8(buf, value.value_type.0);
        put_cu64(buf, value.raw);
    }
    fn get(d: &mut Decoder) -> DecodeResult<TypedValue> {
        let value_type = Type(d.u8()?);
        Ok(TypedValue::new(value_type, d.cu64()?))
    }
    fn bound(_: &TypedValue) -> usize {
        B_U8 + B_CU64
    }
}

impl WireCodec<TypedValue> for Property {
    fn put(buf: &mut Vec<u8>, value: &TypedValue) {
        let attic = if value.value_type == Type::STRING {
            value.raw as u32
        } else {
            UNDEFINED_U32
        };
        put_cu32(buf, attic);
        Typed::put(buf, value);
    }
    /// A writer older than the typed value wrote only the string.
    fn get(d: &mut Decoder) -> DecodeResult<TypedValue> {
        let attic = d.cu32()?;
        if d.is_empty() {
            return Ok(TypedValue::new(Type::STRING, attic as u64));
        }
        Typed::get(d)
    }
    fn bound(value: &TypedValue) -> usize {
        B_CU32 + Typed::bound(value)
    }
}

impl WireCodec<IdMap> for IdMapWire {
    fn put(buf: &mut Vec<u8>, value: &IdMap) {
        match value {
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
    fn get(d: &mut Decoder) -> DecodeResult<IdMap> {
        let n = d.cu64()?;
        let mode_at = d.offset();
        Ok(match d.u8()? {
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
        })
    }
    fn bound(value: &IdMap) -> usize {
        let ids = match value {
            IdMap::Dense(globals) => globals.len(),
            IdMap::Sparse(pairs) => 2 * pairs.len(),
        };
        B_CU64 + B_U8 + ids * B_CU64
    }
}

/// The codecs an array count can be written in.
pub trait CountCodec {
    const BOUND: usize;
    fn put_count(buf: &mut Vec<u8>, n: usize);
    fn get_count(d: &mut Decoder) -> DecodeResult<usize>;
}

/// A count travels as the primitive value of its codec (`n as u8` for `U8`).
macro_rules! count_codecs {
    ($($codec:ident($raw:ty): $bound:expr;)*) => {$(
        impl CountCodec for $codec {
            const BOUND: usize = $bound;
            fn put_count(buf: &mut Vec<u8>, n: usize) {
                <$codec as WireCodec<$raw>>::put(buf, &(n as $raw));
            }
            fn get_count(d: &mut Decoder) -> DecodeResult<usize> {
                Ok(<$codec as WireCodec<$raw>>::get(d)? as usize)
            }
        }
    )*};
}

count_codecs! {
    U8(u8): B_U8;
    Cu32(u32): B_CU32;
}

impl<T, N: CountCodec, E: WireCodec<T>> WireCodec<Vec<T>> for Counted<N, E> {
    fn put(buf: &mut Vec<u8>, value: &Vec<T>) {
        N::put_count(buf, value.len());
        for element in value {
            E::put(buf, element);
        }
    }
    fn get(d: &mut Decoder) -> DecodeResult<Vec<T>> {
        let n = N::get_count(d)?;
        // The count is untrusted input: grow as elements really arrive.
        let mut elements = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            elements.push(E::get(d)?);
        }
        Ok(elements)
    }
    fn bound(value: &Vec<T>) -> usize {
        N::BOUND + value.iter().map(E::bound).sum::<usize>()
    }
}

/// The compressed codecs a singleton event's one value can have, by width.
pub trait SingletonCodec {
    const WIDE: bool;
}
impl SingletonCodec for Cu32 {
    const WIDE: bool = false;
}
impl SingletonCodec for Cu64 {
    const WIDE: bool = true;
}

/// libotf2's payload bound of a Metric event with `n` values.
pub fn metric_payload_bound(n: usize) -> usize {
    B_CU32 + B_U8 + n * MetricValue::bound(&TypedValue::u64(0))
}

/// The payload of a Metric event, without building an `Event` (the hot path writes these).
pub fn put_metric_payload(buf: &mut Vec<u8>, metric: u32, values: &[TypedValue]) {
    put_cu32(buf, metric);
    put_u8(buf, values.len() as u8);
    for v in values {
        MetricValue::put(buf, v);
    }
}

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
        t if is_32bit_reference(t) => put_cu32(buf, v.raw as u32),
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
        t if is_32bit_reference(t) => d.cu32()? as u64,
        _ => d.cu64()?,
    };
    Ok(TypedValue::new(value_type, raw))
}

/// References to definitions are compressed 32-bit values, except LOCATION (64-bit).
fn is_32bit_reference(t: Type) -> bool {
    matches!(
        t,
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
            | Type::LOCATION_GROUP
    )
}

/// The whole attribute-list record (id, length, payload) in libotf2's length form.
pub fn put_attribute_list(buf: &mut Vec<u8>, list: &AttributeList) {
    let mut payload = Vec::with_capacity(list.len() * 6 + 2);
    put_cu32(&mut payload, list.len() as u32);
    for &(attribute, value) in list.entries() {
        put_cu32(&mut payload, attribute);
        Typed::put(&mut payload, &value);
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
        let value = Typed::get(d)?;
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

/// Event records written without a length field, with whether their value is 64-bit: the
/// singletons of the tables, and the OTF2 1.0 OpenMP events (superseded by the Thread* events,
/// read as `Event::Unknown`).
pub fn singleton_event(id: u8) -> Option<bool> {
    const ATTIC_OMP_FORK: u8 = 24;
    const ATTIC_OMP_TASK_EVENTS: std::ops::RangeInclusive<u8> = 28..=30;
    match id {
        ATTIC_OMP_FORK => Some(false),
        id if ATTIC_OMP_TASK_EVENTS.contains(&id) => Some(true),
        id => Event::singleton_width(id),
    }
}

/// Generates one family of records (an enum with an `Unknown` variant for what a reader meets
/// but this crate does not decode), the module of its record ids, and `record_id`,
/// `payload_bound`, `is_singleton`, `encode_payload` and `decode`.
///
/// Each record: `CONST = id [singleton]? => Variant { fields }`, `[singleton]` for the
/// events written without a length field (one compressed value); records with the same fields
/// share one list: `A = 1 => A | B = 2 => B { fields }`. Each field, in wire order:
/// * `name: Type as Codec`: stored and written;
/// * `name: Type as Codec = default`: a field newer than the record, read only if bytes remain
///   (older writers omit it), else `default` (which may name fields decoded before it);
/// * `name: Type as Codec => value`: an attic field, written from `value` (an expression over
///   the other fields, bound by reference) and skipped when read; not part of the enum.
///
/// An attic field is kept out of the enum, its patterns and its constructors by
/// `#[cfg(any())]` (never true); the `doc` attribute after it only names `$attic_value`, which
/// macro_rules needs inside the optional group that repeats on it.
macro_rules! record_table {
    // First every record gets its own entry: `@entries` collects the complete entries and the
    // names that wait for the field list of a later one, `@share` gives it to them.
    (
        $(#[$enum_meta:meta])*
        pub enum $Enum:ident, ids in $ids:ident { $($table:tt)* }
    ) => {
        record_table!(@entries [$(#[$enum_meta])* pub enum $Enum, ids in $ids] [] [] $($table)*);
    };
    (@entries [$($head:tt)*] [$($done:tt)*] []) => {
        record_table!(@generate $($head)* { $($done)* });
    };
    (
        @entries $head:tt $done:tt [$($waiting:tt)*]
        $(#[$m:meta])* $CONST:ident = $id:literal $([$s:ident])? => $Variant:ident | $($rest:tt)*
    ) => {
        record_table!(
            @entries $head $done [$($waiting)* ($(#[$m])* $CONST = $id $([$s])? => $Variant)]
            $($rest)*
        );
    };
    (
        @entries $head:tt $done:tt [$($waiting:tt)*]
        $(#[$m:meta])* $CONST:ident = $id:literal $([$s:ident])? => $Variant:ident $fields:tt
        $(, $($rest:tt)*)?
    ) => {
        record_table!(
            @share $head $done [$($waiting)* ($(#[$m])* $CONST = $id $([$s])? => $Variant)]
            $fields $($($rest)*)?
        );
    };
    (@share $head:tt [$($done:tt)*] [($($entry:tt)*) $($waiting:tt)*] $fields:tt $($rest:tt)*) => {
        record_table!(@share $head [$($done)* $($entry)* $fields,] [$($waiting)*] $fields $($rest)*);
    };
    (@share $head:tt $done:tt [] $fields:tt $($rest:tt)*) => {
        record_table!(@entries $head $done [] $($rest)*);
    };
    (
        @generate
        $(#[$enum_meta:meta])*
        pub enum $Enum:ident, ids in $ids:ident {
            $(
                $(#[$variant_meta:meta])*
                $CONST:ident = $id:literal $([$singleton:ident])? => $Variant:ident {
                    $(
                        $field:ident : $ty:ty as $codec:ty
                        $(= $newer_default:expr)? $(=> $attic_value:expr)?
                    ),* $(,)?
                }
            ),* $(,)?
        }
    ) => {
        #[doc = concat!("Record ids of [`", stringify!($Enum), "`].")]
        pub mod $ids {
            $(pub const $CONST: u8 = $id;)*
        }

        $(#[$enum_meta])*
        pub enum $Enum {
            $(
                $(#[$variant_meta])*
                $Variant {
                    $(
                        $(#[cfg(any())] #[doc = stringify!($attic_value)])?
                        $field: $ty,
                    )*
                },
            )*
            /// A record this crate does not decode (reader only).
            Unknown { record_id: u8, payload: Vec<u8> },
        }

        impl Record for $Enum {
            fn record_id(&self) -> u8 {
                match self {
                    $(Self::$Variant { .. } => $ids::$CONST,)*
                    Self::Unknown { record_id, .. } => *record_id,
                }
            }

            fn payload_bound(&self) -> usize {
                match self {
                    $(
                        Self::$Variant {
                            $($(#[cfg(any())] #[doc = stringify!($attic_value)])? $field,)*
                        } => 0 $(+ <$codec as WireCodec<$ty>>::bound(
                            field_value!($field $(=> $attic_value)?)
                        ))*,
                    )*
                    Self::Unknown { payload, .. } => payload.len(),
                }
            }

            fn is_singleton(&self) -> bool {
                match self {
                    $(Self::$Variant { .. } => is_singleton!($($singleton)?),)*
                    Self::Unknown { .. } => false,
                }
            }

            fn encode_payload(&self, buf: &mut Vec<u8>) {
                match self {
                    $(
                        Self::$Variant {
                            $($(#[cfg(any())] #[doc = stringify!($attic_value)])? $field,)*
                        } => {
                            $(<$codec as WireCodec<$ty>>::put(
                                buf,
                                field_value!($field $(=> $attic_value)?),
                            );)*
                        }
                    )*
                    Self::Unknown { payload, .. } => buf.extend_from_slice(payload),
                }
            }
        }

        impl $Enum {
            /// For the singleton record `id`: whether its value is 64-bit.
            pub fn singleton_width(id: u8) -> Option<bool> {
                match id {
                    $($ids::$CONST => singleton_width!($($singleton)?; $($codec),*),)*
                    _ => None,
                }
            }

            /// Decodes a payload; `d` spans exactly the record's announced length (extra
            /// trailing bytes are ignored, as the reference reader does).
            #[allow(unused_variables)] // attic fields are read and dropped
            pub fn decode(id: u8, d: &mut Decoder) -> DecodeResult<Self> {
                Ok(match id {
                    $(
                        $ids::$CONST => {
                            $(
                                let $field: $ty =
                                    decode_field!(d, $codec, $ty $(, $newer_default)?);
                            )*
                            Self::$Variant {
                                $($(#[cfg(any())] #[doc = stringify!($attic_value)])? $field,)*
                            }
                        }
                    )*
                    other => Self::Unknown {
                        record_id: other,
                        payload: d.bytes(d.remaining())?.to_vec(),
                    },
                })
            }
        }
    };
}

macro_rules! field_value {
    ($field:ident) => {
        $field
    };
    ($field:ident => $attic_value:expr) => {
        &$attic_value
    };
}

macro_rules! decode_field {
    ($d:ident, $codec:ty, $ty:ty) => {
        <$codec as WireCodec<$ty>>::get($d)?
    };
    ($d:ident, $codec:ty, $ty:ty, $newer_default:expr) => {
        if $d.is_empty() {
            $newer_default
        } else {
            <$codec as WireCodec<$ty>>::get($d)?
        }
    };
}

macro_rules! is_singleton {
    () => {
        false
    };
    (singleton) => {
        true
    };
}

macro_rules! singleton_width {
    (; $($codec:ty),*) => {
        None
    };
    (singleton; $codec:ty) => {
        Some(<$codec as SingletonCodec>::WIDE)
    };
}

// The tables: one entry per record kind, fields in wire order with their codecs (above).

record_table! {
    /// Event records (the `NAME/<L>.evt` files).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Event, ids in event_id {
        BUFFER_FLUSH = 10 => BufferFlush { stop_time: u64 as U64 },
        MEASUREMENT_ON_OFF = 11 => MeasurementOnOff { mode: MeasurementMode as U8 },
        ENTER = 12 [singleton] => Enter
        | LEAVE = 13 [singleton] => Leave { region: u32 as Cu32 },
        MPI_SEND = 14 => MpiSend {
            receiver: u32 as Cu32, communicator: u32 as Cu32, msg_tag: u32 as Cu32,
            msg_length: u64 as Cu64,
        },
        MPI_ISEND = 15 => MpiIsend {
            receiver: u32 as Cu32, communicator: u32 as Cu32, msg_tag: u32 as Cu32,
            msg_length: u64 as Cu64, request_id: u64 as Cu64,
        },
        MPI_ISEND_COMPLETE = 16 [singleton] => MpiIsendComplete
        | MPI_IRECV_REQUEST = 17 [singleton] => MpiIrecvRequest { request_id: u64 as Cu64 },
        MPI_RECV = 18 => MpiRecv {
            sender: u32 as Cu32, communicator: u32 as Cu32, msg_tag: u32 as Cu32,
            msg_length: u64 as Cu64,
        },
        MPI_IRECV = 19 => MpiIrecv {
            sender: u32 as Cu32, communicator: u32 as Cu32, msg_tag: u32 as Cu32,
            msg_length: u64 as Cu64, request_id: u64 as Cu64,
        },
        MPI_REQUEST_TEST = 20 [singleton] => MpiRequestTest
        | MPI_REQUEST_CANCELLED = 21 [singleton] => MpiRequestCancelled { request_id: u64 as Cu64 },
        MPI_COLLECTIVE_BEGIN = 22 => MpiCollectiveBegin {},
        MPI_COLLECTIVE_END = 23 => MpiCollectiveEnd {
            collective_op: CollectiveOp as U8, communicator: u32 as Cu32, root: u32 as Cu32,
            size_sent: u64 as Cu64, size_received: u64 as Cu64,
        },
        METRIC = 31 => Metric {
            metric: u32 as Cu32, values: Vec<TypedValue> as Counted<U8, MetricValue>,
        },
        PARAMETER_STRING = 32 => ParameterString { parameter: u32 as Cu32, string: u32 as Cu32 },
        PARAMETER_INT = 33 => ParameterInt { parameter: u32 as Cu32, value: i64 as Ci64 },
        PARAMETER_UNSIGNED_INT = 34 => ParameterUnsignedInt {
            parameter: u32 as Cu32, value: u64 as Cu64,
        },
        THREAD_FORK = 53 => ThreadFork {
            model: Paradigm as U8, number_of_requested_threads: u32 as Cu32,
        },
        THREAD_JOIN = 54 => ThreadJoin { model: Paradigm as U8 },
        THREAD_TEAM_BEGIN = 55 => ThreadTeamBegin
        | THREAD_TEAM_END = 56 => ThreadTeamEnd { team: u32 as Cu32 },
        THREAD_ACQUIRE_LOCK = 57 => ThreadAcquireLock
        | THREAD_RELEASE_LOCK = 58 => ThreadReleaseLock {
            model: Paradigm as U8, lock_id: u32 as Cu32, acquisition_order: u32 as Cu32,
        },
        THREAD_TASK_CREATE = 59 => ThreadTaskCreate
        | THREAD_TASK_SWITCH = 60 => ThreadTaskSwitch
        | THREAD_TASK_COMPLETE = 61 => ThreadTaskComplete {
            team: u32 as Cu32, creating_thread: u32 as Cu32, generation_number: u32 as Cu32,
        },
        PROGRAM_BEGIN = 83 => ProgramBegin {
            program_name: u32 as Cu32, arguments: Vec<u32> as Counted<Cu32, Cu32>,
        },
        PROGRAM_END = 84 => ProgramEnd { exit_status: i64 as Ci64 },
        NON_BLOCKING_COLLECTIVE_REQUEST = 85 => NonBlockingCollectiveRequest {
            request_id: u64 as Cu64,
        },
        NON_BLOCKING_COLLECTIVE_COMPLETE = 86 => NonBlockingCollectiveComplete {
            collective_op: CollectiveOp as U8, communicator: u32 as Cu32, root: u32 as Cu32,
            size_sent: u64 as Cu64, size_received: u64 as Cu64, request_id: u64 as Cu64,
        },
    }
}

record_table! {
    /// Snapshot records (the `NAME/<L>.snap` files): SnapshotStart, the state records (copies
    /// of events with the time they happened), SnapshotEnd.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum SnapRecord, ids in snap_id {
        SNAPSHOT_START = 10 => SnapshotStart { number_of_records: u64 as Cu64 },
        SNAPSHOT_END = 11 => SnapshotEnd { cont_read_pos: u64 as Cu64 },
        MEASUREMENT_ON_OFF = 12 => MeasurementOnOff {
            orig_event_time: u64 as U64, mode: MeasurementMode as U8,
        },
        ENTER = 13 => Enter { orig_event_time: u64 as U64, region: u32 as Cu32 },
        MPI_SEND = 14 => MpiSend {
            orig_event_time: u64 as U64, receiver: u32 as Cu32, communicator: u32 as Cu32,
            msg_tag: u32 as Cu32, msg_length: u64 as Cu64,
        },
        MPI_ISEND = 15 => MpiIsend {
            orig_event_time: u64 as U64, receiver: u32 as Cu32, communicator: u32 as Cu32,
            msg_tag: u32 as Cu32, msg_length: u64 as Cu64, request_id: u64 as Cu64,
        },
        MPI_ISEND_COMPLETE = 16 => MpiIsendComplete {
            orig_event_time: u64 as U64, request_id: u64 as Cu64,
        },
        MPI_RECV = 17 => MpiRecv {
            orig_event_time: u64 as U64, sender: u32 as Cu32, communicator: u32 as Cu32,
            msg_tag: u32 as Cu32, msg_length: u64 as Cu64,
        },
        MPI_IRECV_REQUEST = 18 => MpiIrecvRequest {
            orig_event_time: u64 as U64, request_id: u64 as Cu64,
        },
        MPI_IRECV = 19 => MpiIrecv {
            orig_event_time: u64 as U64, sender: u32 as Cu32, communicator: u32 as Cu32,
            msg_tag: u32 as Cu32, msg_length: u64 as Cu64, request_id: u64 as Cu64,
        },
        MPI_COLLECTIVE_BEGIN = 20 => MpiCollectiveBegin { orig_event_time: u64 as U64 },
        MPI_COLLECTIVE_END = 21 => MpiCollectiveEnd {
            orig_event_time: u64 as U64, collective_op: CollectiveOp as U8,
            communicator: u32 as Cu32, root: u32 as Cu32, size_sent: u64 as Cu64,
            size_received: u64 as Cu64,
        },
        OMP_FORK = 22 => OmpFork {
            orig_event_time: u64 as U64, number_of_requested_threads: u32 as Cu32,
        },
        OMP_ACQUIRE_LOCK = 23 => OmpAcquireLock {
            orig_event_time: u64 as U64, lock_id: u32 as Cu32, acquisition_order: u32 as Cu32,
        },
        OMP_TASK_CREATE = 24 => OmpTaskCreate
        | OMP_TASK_SWITCH = 25 => OmpTaskSwitch { orig_event_time: u64 as U64, task_id: u64 as Cu64 },
        METRIC = 26 => Metric {
            orig_event_time: u64 as U64, metric: u32 as Cu32,
            values: Vec<TypedValue> as Counted<U8, MetricValue>,
        },
        PARAMETER_STRING = 27 => ParameterString {
            orig_event_time: u64 as U64, parameter: u32 as Cu32, string: u32 as Cu32,
        },
        PARAMETER_INT = 28 => ParameterInt {
            orig_event_time: u64 as U64, parameter: u32 as Cu32, value: i64 as Ci64,
        },
        PARAMETER_UNSIGNED_INT = 29 => ParameterUnsignedInt {
            orig_event_time: u64 as U64, parameter: u32 as Cu32, value: u64 as Cu64,
        },
    }
}

record_table! {
    /// Global definition records (the `NAME.def` file).
    #[derive(Clone, Debug, PartialEq)]
    pub enum GlobalDef, ids in def_id {
        CLOCK_PROPERTIES = 5 => ClockProperties {
            timer_resolution: u64 as Cu64, global_offset: u64 as Cu64, trace_length: u64 as Cu64,
            realtime_timestamp: u64 as Cu64 = UNDEFINED_U64,
        },
        PARADIGM = 6 => Paradigm {
            paradigm: Paradigm as U8, name: u32 as Cu32, paradigm_class: ParadigmClass as U8,
        },
        PARADIGM_PROPERTY = 7 => ParadigmProperty {
            paradigm: Paradigm as U8, property: ParadigmProperty as U8, value: TypedValue as Typed,
        },
        STRING = 10 => String { id: u32 as Cu32, string: String as Cstr },
        ATTRIBUTE = 11 => Attribute {
            id: u32 as Cu32, name: u32 as Cu32, attribute_type: Type as U8,
            description: u32 as Cu32 = UNDEFINED_U32,
        },
        SYSTEM_TREE_NODE = 12 => SystemTreeNode {
            id: u32 as Cu32, name: u32 as Cu32, class_name: u32 as Cu32, parent: u32 as Cu32,
        },
        LOCATION_GROUP = 13 => LocationGroup {
            id: u32 as Cu32, name: u32 as Cu32, location_group_type: LocationGroupType as U8,
            system_tree_parent: u32 as Cu32, creating_location_group: u32 as Cu32 = UNDEFINED_U32,
        },
        LOCATION = 14 => Location {
            id: u64 as Cu64, name: u32 as Cu32, location_type: LocationType as U8,
            number_of_events: u64 as Cu64, location_group: u32 as Cu32,
        },
        REGION = 15 => Region {
            id: u32 as Cu32, name: u32 as Cu32, description: u32 as Cu32,
            region_type: u8 as U8 => legacy_region_type(*region_role, *paradigm, *region_flags),
            source_file: u32 as Cu32, begin_line: u32 as Cu32, end_line: u32 as Cu32,
            canonical_name: u32 as Cu32 = name,
            region_role: RegionRole as U8 = RegionRole::UNKNOWN,
            paradigm: Paradigm as U8 = Paradigm::UNKNOWN,
            region_flags: RegionFlag as Cu32 = RegionFlag::NONE,
        },
        CALLSITE = 16 => Callsite {
            id: u32 as Cu32, source_file: u32 as Cu32, line_number: u32 as Cu32,
            entered_region: u32 as Cu32, left_region: u32 as Cu32,
        },
        GROUP = 18 => Group {
            id: u32 as Cu32, name: u32 as Cu32,
            group_type_pre12: u8 as U8 => legacy_group_type(*group_type, *paradigm, *group_flags),
            members: Vec<u64> as Counted<Cu32, Cu64>,
            group_type: GroupType as U8 = GroupType::UNKNOWN,
            paradigm: Paradigm as U8 = Paradigm::UNKNOWN,
            group_flags: GroupFlag as Cu32 = GroupFlag::NONE,
        },
        METRIC_MEMBER = 19 => MetricMember {
            id: u32 as Cu32, name: u32 as Cu32, description: u32 as Cu32,
            metric_type: MetricType as U8, metric_mode: MetricMode as U8, value_type: Type as U8,
            base: Base as U8, exponent: i64 as Ci64, unit: u32 as Cu32,
        },
        METRIC_CLASS = 20 => MetricClass {
            id: u32 as Cu32, members: Vec<u32> as Counted<U8, Cu32>,
            occurrence: MetricOccurrence as U8,
            recorder_kind: RecorderKind as U8 = RecorderKind::UNKNOWN,
        },
        METRIC_INSTANCE = 21 => MetricInstance {
            id: u32 as Cu32, metric_class: u32 as Cu32, recorder: u64 as Cu64,
            scope_type: MetricScope as U8, scope: u64 as Cu64,
        },
        COMM = 22 => Comm {
            id: u32 as Cu32, name: u32 as Cu32, group: u32 as Cu32, parent: u32 as Cu32,
            flags: CommFlag as Cu32 = CommFlag::NONE,
        },
        PARAMETER = 23 => Parameter {
            id: u32 as Cu32, name: u32 as Cu32, parameter_type: ParameterType as U8,
        },
        METRIC_CLASS_RECORDER = 25 => MetricClassRecorder {
            metric: u32 as Cu32, recorder: u64 as Cu64,
        },
        SYSTEM_TREE_NODE_PROPERTY = 26 => SystemTreeNodeProperty {
            node: u32 as Cu32, name: u32 as Cu32, value: TypedValue as Property,
        },
        SYSTEM_TREE_NODE_DOMAIN = 27 => SystemTreeNodeDomain {
            node: u32 as Cu32, domain: SystemTreeDomain as U8,
        },
        LOCATION_GROUP_PROPERTY = 28 => LocationGroupProperty {
            location_group: u32 as Cu32, name: u32 as Cu32, value: TypedValue as Property,
        },
        LOCATION_PROPERTY = 29 => LocationProperty {
            location: u64 as Cu64, name: u32 as Cu32, value: TypedValue as Property,
        },
        INTERRUPT_GENERATOR = 36 => InterruptGenerator {
            id: u32 as Cu32, name: u32 as Cu32, mode: InterruptGeneratorMode as U8,
            base: Base as U8, exponent: i64 as Ci64, period: u64 as Cu64,
        },
    }
}

record_table! {
    /// Local definition records (the `NAME/<L>.def` files).
    #[derive(Clone, Debug, PartialEq)]
    pub enum LocalDef, ids in local_def_id {
        MAPPING_TABLE = 5 => MappingTable {
            mapping_type: MappingType as U8, map: IdMap as IdMapWire,
        },
        CLOCK_OFFSET = 6 => ClockOffset {
            time: u64 as U64, offset: i64 as Ci64, standard_deviation: f64 as F64,
        },
    }
}
