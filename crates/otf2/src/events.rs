//! Event (and snapshot) writers: records are encoded straight into the current chunk.
//!
//! The common events have inlined encoders: appending an Enter/Leave is a room check, an
//! optional 9-byte TIMESTAMP, an id byte and a compressed region id, all into a pre-sized chunk;
//! no allocation, no lock, no dynamic dispatch (the sink is a type parameter and only reached
//! when a chunk is full). Chunk breaks, TIMESTAMP placement and length forms follow libotf2, so
//! the same calls give byte-identical files.

use std::io;

use super::chunk::*;
use super::records::{
    self, attribute_list_bound, event_id, length_field_bound, Event, Record, SnapRecord,
};
use super::types::*;
use super::wire::{put_cu32_at, put_cu64_at, put_framed};
use super::TIMESTAMP;

/// Room libotf2 reserves for a timestamp record before every event, written or not.
const TIMESTAMP_BOUND: usize = 9;
/// Room for Enter/Leave: timestamp + id + compressed u32 (no length field).
const REGION_EVENT_BOUND: usize = TIMESTAMP_BOUND + 1 + 5;
/// Room for an Enter/Leave record itself (id + compressed u32).
const U32_SINGLETON_BOUND: usize = REGION_EVENT_BOUND - TIMESTAMP_BOUND;

/// Room an encoded Enter/Leave record takes while it is written: id + the encoded value stored
/// as one 8-byte word (of which at most 5 bytes are the value's).
const ENCODED_RECORD_ROOM: usize = 1 + 8;
/// Room the fast writes of an encoded Enter/Leave check for: timestamp + the record's room.
const ENCODED_REGION_EVENT_ROOM: usize = TIMESTAMP_BOUND + ENCODED_RECORD_ROOM;

/// A u32 value in the wire form of an Enter or Leave record's value (OTF2's compressed
/// integer), encoded once, so that a fast write stores it as one word
/// ([`EventWriter::try_enter_encoded`]). The bytes are those `Enter`/`Leave` of the value
/// write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodedU32 {
    /// The encoded bytes, little-endian, zero past them.
    word: u64,
    /// The bytes an Enter or Leave of the value takes with its TIMESTAMP record.
    event_len: u8,
}

impl EncodedU32 {
    /// The value 0.
    pub const ZERO: EncodedU32 = EncodedU32 {
        word: 0,
        event_len: (TIMESTAMP_BOUND + 2) as u8,
    };

    pub fn new(value: u32) -> Self {
        let mut bytes = [0u8; 8];
        let len = put_cu32_at(&mut bytes, value);
        EncodedU32 {
            word: u64::from_le_bytes(bytes),
            event_len: (TIMESTAMP_BOUND + 1 + len) as u8,
        }
    }
}

/// Bytes an Enter or a Leave of `region` takes in an event chunk, with the TIMESTAMP record
/// before it (every event that comes later than its predecessor has one): what a visit of the
/// region costs a trace is twice this.
pub fn region_event_bytes(region: u32) -> usize {
    TIMESTAMP_BOUND + encode_u32_singleton(&mut [0; U32_SINGLETON_BOUND], event_id::ENTER, region)
}

/// Room for a record with a short payload of at most `payload_bound` bytes (< 255): id, length
/// byte, payload.
const fn small_bound(payload_bound: usize) -> usize {
    2 + payload_bound
}

/// Room for a one-entry UINT64 attribute list and the record (as `small_bound`) it precedes.
fn small_with_u64_attribute_bound(payload_bound: usize) -> usize {
    attribute_list_bound(1) + 1 + length_field_bound(payload_bound) + payload_bound
}

/// A singleton record with a compressed u32 value into `out`; returns the bytes used.
#[inline(always)]
fn encode_u32_singleton(out: &mut [u8], id: u8, value: u32) -> usize {
    out[0] = id;
    1 + put_cu32_at(&mut out[1..], value)
}

/// A record with a short payload (written by `encode`, which returns its length) into `out`;
/// returns the bytes used.
#[inline(always)]
fn encode_small(out: &mut [u8], id: u8, encode: impl FnOnce(&mut [u8]) -> usize) -> usize {
    out[0] = id;
    let len = encode(&mut out[2..]);
    out[1] = len as u8;
    2 + len
}

/// A one-entry UINT64 attribute list, then the record `encode_small` writes, into `out`; the
/// same bytes as libotf2's framing of such a list. Returns the bytes used.
#[inline(always)]
fn encode_small_with_u64_attribute(
    out: &mut [u8],
    attribute: u32,
    value: u64,
    id: u8,
    encode: impl FnOnce(&mut [u8]) -> usize,
) -> usize {
    out[0] = super::ATTRIBUTE_LIST;
    let mut n = 2;
    n += put_cu32_at(&mut out[n..], 1);
    n += put_cu32_at(&mut out[n..], attribute);
    out[n] = Type::UINT64.0;
    n += 1;
    n += put_cu64_at(&mut out[n..], value);
    out[1] = (n - 2) as u8;
    n + encode_small(&mut out[n..], id, encode)
}

/// Payload bound of ThreadTeamBegin/End: a compressed u32 (the team's Comm).
const TEAM_PAYLOAD_BOUND: usize = 5;

/// The largest set of records a `PreparedRecords` holds (also the size of its copy).
pub const PREPARED_CAPACITY: usize = 48;

/// A few records that encode to the same bytes every time (the same ids, references and
/// attribute values; only their time differs), kept to be written again at a later time with
/// one room check and one copy (`EventWriter::write_prepared`). A thread that begins the same
/// team position region after region writes the same team begin and Enter each time.
#[derive(Clone)]
pub struct PreparedRecords {
    bytes: [u8; PREPARED_CAPACITY],
    len: u8,
    /// Records held; 0 also for a set given up (a record did not fit).
    events: u8,
    /// What libotf2's rule, applied record by record, reserves for these records: each one's
    /// TIMESTAMP room and its own bound. A chunk with this much room after a TIMESTAMP would
    /// have taken all of them.
    reserved: u16,
    /// `reserved`, but never less than the copy `write_prepared` makes.
    room: u16,
    given_up: bool,
}

impl Default for PreparedRecords {
    fn default() -> Self {
        Self::new()
    }
}

impl PreparedRecords {
    /// No records: `write_prepared` refuses it.
    pub const fn new() -> Self {
        Self {
            bytes: [0; PREPARED_CAPACITY],
            len: 0,
            events: 0,
            reserved: 0,
            room: PREPARED_CAPACITY as u16,
            given_up: false,
        }
    }

    /// The bytes of the records prepared so far.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Records held (0 for a set given up).
    pub fn events(&self) -> u8 {
        self.events
    }

    /// Appends one record of at most `bound` bytes, written by `encode`. A record that does not
    /// fit gives the whole set up: it is never written prepared, and the caller writes its
    /// records one by one.
    fn append(&mut self, bound: usize, encode: impl FnOnce(&mut [u8]) -> usize) -> &mut Self {
        let at = self.len as usize;
        if self.given_up || at + bound > PREPARED_CAPACITY {
            *self = Self::new();
            self.given_up = true;
            return self;
        }
        let used = encode(&mut self.bytes[at..at + bound]);
        self.len = (at + used) as u8;
        self.events += 1;
        self.reserved += (TIMESTAMP_BOUND + bound) as u16;
        self.room = self.reserved.max(PREPARED_CAPACITY as u16);
        self
    }

    /// An Enter (as `EventWriter::enter`).
    pub fn enter(&mut self, region: u32) -> &mut Self {
        self.append(U32_SINGLETON_BOUND, |out| {
            encode_u32_singleton(out, event_id::ENTER, region)
        })
    }

    /// A Leave (as `EventWriter::leave`).
    pub fn leave(&mut self, region: u32) -> &mut Self {
        self.append(U32_SINGLETON_BOUND, |out| {
            encode_u32_singleton(out, event_id::LEAVE, region)
        })
    }

    /// As `EventWriter::thread_team_begin_with_u64_attribute`.
    pub fn thread_team_begin_with_u64_attribute(
        &mut self,
        team: u32,
        attribute: u32,
        value: u64,
    ) -> &mut Self {
        self.append(small_with_u64_attribute_bound(TEAM_PAYLOAD_BOUND), |out| {
            encode_small_with_u64_attribute(
                out,
                attribute,
                value,
                event_id::THREAD_TEAM_BEGIN,
                |out| put_cu32_at(out, team),
            )
        })
    }

    /// As `EventWriter::thread_team_end`.
    pub fn thread_team_end(&mut self, team: u32) -> &mut Self {
        self.append(small_bound(TEAM_PAYLOAD_BOUND), |out| {
            encode_small(out, event_id::THREAD_TEAM_END, |out| put_cu32_at(out, team))
        })
    }
}

/// A timed, chunked record stream: the part event and snapshot files share.
pub struct TimedChunks<S: ChunkSink> {
    chunk: ChunkBuffer,
    pos: usize,
    /// Where the room for records ends: the chunk's length, or 0 from
    /// `write_held_at_next_event` until the next record is written, which takes the slow path
    /// (`no_room`) and has the sink write what it held back first.
    limit: usize,
    /// Events (records) in all earlier chunks, for the chunk header.
    events_before_chunk: u64,
    events: u64,
    last_time: u64,
    chunk_has_timestamp: bool,
    sink: S,
    /// Reused by `write_record`: the payload, and the whole framed record.
    payload: Vec<u8>,
    scratch: Vec<u8>,
    clamped_timestamps: u64,
    oversized: u64,
    /// Full chunks handed to the sink so far.
    chunks_filled: u64,
}

impl<S: ChunkSink> TimedChunks<S> {
    /// `chunk_size` must be one the readers accept (see [`validate_chunk_size`]) unless the
    /// stream is only read back by this crate.
    pub fn new(chunk_size: usize, sink: S) -> Self {
        Self::with_buffer(ChunkBuffer::zeroed(chunk_size), sink)
    }

    /// Starts in a caller-provided (e.g. recycled) buffer whose length is the chunk size.
    pub fn with_buffer(chunk: ChunkBuffer, sink: S) -> Self {
        assert!(chunk.len() >= 64, "chunk buffer too small");
        let limit = chunk.len();
        let mut s = Self {
            chunk,
            pos: 0,
            limit,
            events_before_chunk: 0,
            events: 0,
            last_time: 0,
            chunk_has_timestamp: false,
            sink,
            payload: Vec::with_capacity(64),
            scratch: Vec::with_capacity(64),
            clamped_timestamps: 0,
            oversized: 0,
            chunks_filled: 0,
        };
        s.start_chunk();
        s
    }

    /// Number of event records written so far (the Location's `numberOfEvents`).
    pub fn events(&self) -> u64 {
        self.events
    }
    pub fn last_time(&self) -> u64 {
        self.last_time
    }
    /// How many events came with a time earlier than their predecessor's and were recorded at
    /// the predecessor's time instead (a location's timestamps must never decrease).
    pub fn clamped_timestamps(&self) -> u64 {
        self.clamped_timestamps
    }
    /// Records left out because, with their timestamp, they are larger than a chunk (a record
    /// may not straddle two chunks, and the chunk size is fixed for the whole file).
    pub fn oversized_records(&self) -> u64 {
        self.oversized
    }
    pub fn sink(&self) -> &S {
        &self.sink
    }
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }
    pub fn chunk_size(&self) -> usize {
        self.chunk.len()
    }
    /// Bytes used in the current chunk.
    pub fn chunk_fill(&self) -> usize {
        self.pos
    }
    /// Full chunks handed to the sink so far (the last, partial one at `finish` not counted): a
    /// producer that compares it with the count it saw last learns, off its fast path, that a
    /// chunk was filled.
    pub fn chunks_filled(&self) -> u64 {
        self.chunks_filled
    }

    fn start_chunk(&mut self) {
        self.events_before_chunk = self.events;
        self.pos = CHUNK_HEADER_LEN;
        self.chunk_has_timestamp = false;
    }

    /// Closes the current chunk (header numbers, END_OF_CHUNK padding) and continues in the
    /// buffer the sink hands back.
    /// `time` is the time of the event that needs the room: if the sink had to wait for a
    /// free buffer, the new chunk starts with a BufferFlush at that time whose stop time is the
    /// end of the wait (as libotf2 records its own flushes), so the trace shows the stall.
    #[cold]
    #[inline(never)]
    fn next_chunk(&mut self, time: u64) {
        let (first, last) = (self.events_before_chunk + 1, self.events);
        write_chunk_header(&mut self.chunk, first, last);
        self.chunk[self.pos..].fill(END_OF_CHUNK);
        let full = std::mem::replace(&mut self.chunk, ChunkBuffer::empty());
        let len = full.len();
        self.chunk = self.sink.submit(full, len);
        self.limit = self.chunk.len();
        self.chunks_filled += 1;
        self.start_chunk();
        if let Some(stop_time) = self.sink.stall_end() {
            self.timestamp(time);
            let out = &mut self.chunk[self.pos..self.pos + 10];
            out[0] = event_id::BUFFER_FLUSH;
            out[1] = 8;
            out[2..10].copy_from_slice(&stop_time.to_le_bytes());
            self.pos += 10;
            self.events += 1;
        }
    }

    /// Makes room for a record of `bound` bytes (libotf2's rule: at least one byte must stay
    /// free for END_OF_CHUNK) for an event at `time`.
    #[inline(always)]
    fn reserve(&mut self, bound: usize, time: u64) {
        if self.pos + bound >= self.limit {
            self.no_room(bound, time);
        }
    }

    /// `reserve` past the limit: first what the sink held back, if it is due, then a new chunk
    /// if this one has no room for `bound` bytes.
    #[cold]
    #[inline(never)]
    fn no_room(&mut self, bound: usize, time: u64) {
        if self.limit != self.chunk.len() {
            self.write_held(time);
        }
        if self.pos + bound >= self.chunk.len() && self.pos > CHUNK_HEADER_LEN {
            self.next_chunk(time);
        }
    }

    /// The next record written, whatever it is, first has the sink write the chunks it held
    /// back ([`ChunkSink::write_held`]): the caller knows the moment has come (e.g. the lock
    /// it held is released) but is still inside the section that must not wait.
    #[inline]
    pub fn write_held_at_next_event(&mut self) {
        self.limit = 0;
    }

    /// Has the sink write what it held back, before an event at `time`; if that held the
    /// producer up, a BufferFlush at `time` covers the wait (as in `next_chunk`).
    fn write_held(&mut self, time: u64) {
        self.limit = self.chunk.len();
        self.sink.write_held();
        if let Some(stop_time) = self.sink.stall_end() {
            self.buffer_flush(time, stop_time);
        }
    }

    /// A BufferFlush: the producer stalled from `time` until `stop_time` to make room.
    fn buffer_flush(&mut self, time: u64, stop_time: u64) {
        self.write_small::<8>(time, event_id::BUFFER_FLUSH, |out| {
            out[..8].copy_from_slice(&stop_time.to_le_bytes());
            8
        });
    }

    /// `reserve` for `record_room`, out of line: a new chunk if this one has no room for `need`
    /// bytes; a record larger than a whole chunk is a bug of its caller (the bounds of the
    /// records written this way are fixed and far below the smallest chunk).
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, need: usize, time: u64) {
        self.no_room(need, time);
        assert!(
            self.pos + need <= self.chunk.len(),
            "a record of {need} bytes does not fit a chunk of {} bytes",
            self.chunk.len()
        );
    }

    /// Writes the TIMESTAMP record when libotf2 would: first event of a chunk, a later time,
    /// or time 0 (only the stall record of `next_chunk` uses this; events use `record_room`).
    fn timestamp(&mut self, time: u64) {
        if let Some(time) = self.stamp(time) {
            let out = &mut self.chunk[self.pos..self.pos + TIMESTAMP_BOUND];
            out[0] = TIMESTAMP;
            out[1..].copy_from_slice(&time.to_le_bytes());
            self.pos += TIMESTAMP_BOUND;
        }
    }

    /// The time of a TIMESTAMP record due before an event at `time`, if one is due; a time
    /// earlier than the last one is clamped to it (timestamps never decrease).
    #[inline(always)]
    fn stamp(&mut self, time: u64) -> Option<u64> {
        if time > self.last_time {
            // The common case: every recording call reads the clock anew.
            self.last_time = time;
            self.chunk_has_timestamp = true;
            Some(time)
        } else if self.holds_last_timestamp(time) {
            // The second event of a call that writes several at one time (a team begin and
            // the Enter of its region): the chunk's last TIMESTAMP holds.
            None
        } else {
            self.stamp_not_later(time)
        }
    }

    /// Whether an event at `time` needs no TIMESTAMP record of its own: `time` is the last
    /// one (not 0), and this chunk already has a TIMESTAMP record.
    #[inline(always)]
    fn holds_last_timestamp(&self, time: u64) -> bool {
        time == self.last_time && time != 0 && self.chunk_has_timestamp
    }

    /// `stamp` for a time not after the last one: the first event of a chunk at the last
    /// time, time 0, or a clock that went backwards.
    #[inline(never)]
    fn stamp_not_later(&mut self, time: u64) -> Option<u64> {
        if time < self.last_time {
            self.clamped_timestamps += 1;
        }
        let time = self.last_time;
        (time == 0 || !self.chunk_has_timestamp).then(|| {
            self.chunk_has_timestamp = true;
            time
        })
    }

    /// Makes room for an event of at most `bound` bytes after its timestamp at `time`, writes
    /// the TIMESTAMP record if one is due, and returns the `bound` bytes where the event goes
    /// and their offset in the chunk (the caller then calls `commit` with that offset). One
    /// bounds check covers both records; the chunk position is stored once, by `commit`.
    #[inline(always)]
    fn record_room(&mut self, bound: usize, time: u64) -> (&mut [u8], usize) {
        let need = TIMESTAMP_BOUND + bound;
        if self.pos + need >= self.limit {
            self.make_room(need, time);
        }
        let stamp = self.stamp(time);
        let pos = self.pos;
        // SAFETY: `pos + need < limit <= len` where `make_room` was skipped, and `make_room`
        // returns only with `pos + need <= len` (it panics otherwise); every event pays this
        // range's bounds check otherwise.
        let room = unsafe { self.chunk.get_unchecked_mut(pos..pos + need) };
        let start = match stamp {
            Some(time) => {
                room[0] = TIMESTAMP;
                room[1..TIMESTAMP_BOUND].copy_from_slice(&time.to_le_bytes());
                TIMESTAMP_BOUND
            }
            None => 0,
        };
        (&mut room[start..start + bound], pos + start)
    }

    /// Ends an event of `len` bytes at offset `at`, begun with `record_room`.
    #[inline(always)]
    fn commit(&mut self, at: usize, len: usize) {
        self.pos = at + len;
        self.events += 1;
    }

    /// One singleton record with a compressed u32 value (Enter, Leave).
    #[inline(always)]
    pub fn write_u32_singleton(&mut self, time: u64, id: u8, value: u32) {
        let (out, at) = self.record_room(U32_SINGLETON_BOUND, time);
        let len = encode_u32_singleton(out, id, value);
        self.commit(at, len);
    }

    /// `write_u32_singleton` in the common case only: the record goes into this chunk (no new
    /// one is due) and `time` is later than the last time. Then it writes the record and
    /// returns true; otherwise it writes nothing and returns false, and the caller writes the
    /// record with `write_u32_singleton`. Calls nothing, so a caller's fast path stays a leaf.
    #[inline(always)]
    pub fn try_write_u32_singleton(&mut self, time: u64, id: u8, value: u32) -> bool {
        let pos = self.pos;
        if pos + REGION_EVENT_BOUND >= self.limit || time <= self.last_time {
            return false;
        }
        self.last_time = time;
        self.chunk_has_timestamp = true;
        // SAFETY: `pos + REGION_EVENT_BOUND < limit <= len`, checked above.
        let room = unsafe { self.chunk.get_unchecked_mut(pos..pos + REGION_EVENT_BOUND) };
        room[0] = TIMESTAMP;
        room[1..TIMESTAMP_BOUND].copy_from_slice(&time.to_le_bytes());
        let len = encode_u32_singleton(&mut room[TIMESTAMP_BOUND..], id, value);
        self.commit(pos + TIMESTAMP_BOUND, len);
        true
    }

    /// `try_write_u32_singleton` with the value encoded before (`EncodedU32`): the same bytes,
    /// stored as two words.
    #[inline(always)]
    pub fn try_write_encoded_singleton(&mut self, time: u64, id: u8, value: EncodedU32) -> bool {
        let pos = self.pos;
        if pos + ENCODED_REGION_EVENT_ROOM >= self.limit || time <= self.last_time {
            return false;
        }
        self.last_time = time;
        self.chunk_has_timestamp = true;
        // SAFETY: `pos + ENCODED_REGION_EVENT_ROOM < limit <= len`, checked above.
        let room = unsafe {
            self.chunk
                .get_unchecked_mut(pos..pos + ENCODED_REGION_EVENT_ROOM)
        };
        room[0] = TIMESTAMP;
        room[1..TIMESTAMP_BOUND].copy_from_slice(&time.to_le_bytes());
        room[TIMESTAMP_BOUND] = id;
        // The word's bytes past the value are room the chunk's next record or its END_OF_CHUNK
        // padding overwrites.
        room[TIMESTAMP_BOUND + 1..].copy_from_slice(&value.word.to_le_bytes());
        self.commit(pos, usize::from(value.event_len));
        true
    }

    /// `try_write_encoded_singleton` for a record at the time of the record before it, in
    /// the same chunk (the second record of a call that writes several at one time): no
    /// TIMESTAMP record of its own, as `write_u32_singleton` would write it.
    #[inline(always)]
    pub fn try_write_encoded_singleton_at_last_time(
        &mut self,
        time: u64,
        id: u8,
        value: EncodedU32,
    ) -> bool {
        let pos = self.pos;
        if pos + ENCODED_REGION_EVENT_ROOM >= self.limit || !self.holds_last_timestamp(time) {
            return false;
        }
        // SAFETY: `pos + ENCODED_REGION_EVENT_ROOM < limit <= len`, checked above, and
        // `ENCODED_RECORD_ROOM` is less.
        let room = unsafe { self.chunk.get_unchecked_mut(pos..pos + ENCODED_RECORD_ROOM) };
        room[0] = id;
        room[1..].copy_from_slice(&value.word.to_le_bytes());
        self.commit(pos, usize::from(value.event_len) - TIMESTAMP_BOUND);
        true
    }

    /// One record with a short, fixed payload written by `encode` into `out` (at least
    /// `PAYLOAD_BOUND` bytes) returning the bytes used. `PAYLOAD_BOUND` must be < 255.
    #[inline(always)]
    pub fn write_small<const PAYLOAD_BOUND: usize>(
        &mut self,
        time: u64,
        id: u8,
        encode: impl FnOnce(&mut [u8]) -> usize,
    ) {
        let (out, at) = self.record_room(small_bound(PAYLOAD_BOUND), time);
        let len = encode_small(out, id, encode);
        self.commit(at, len);
    }

    /// `write_small` preceded by an attribute list of one UINT64 entry, encoded in place: the
    /// same bytes and chunk breaks as [`Self::write_record`] with a one-entry list, without
    /// building the list.
    #[inline(always)]
    pub fn write_small_with_u64_attribute<const PAYLOAD_BOUND: usize>(
        &mut self,
        time: u64,
        attribute: u32,
        value: u64,
        id: u8,
        encode: impl FnOnce(&mut [u8]) -> usize,
    ) {
        let (out, at) = self.record_room(small_with_u64_attribute_bound(PAYLOAD_BOUND), time);
        let len = encode_small_with_u64_attribute(out, attribute, value, id, encode);
        self.commit(at, len);
    }

    /// Writes `prepared` at `time` if that gives the bytes and chunk breaks writing its records
    /// one by one would give: the time is later than the last one (so each set of records
    /// starts with its own TIMESTAMP, as one by one), and the chunk has the room libotf2's rule
    /// would reserve for them one by one (so no record would have started a new chunk). False,
    /// with nothing written, otherwise: the caller then writes the records one by one.
    #[inline(always)]
    pub fn write_prepared(&mut self, time: u64, prepared: &PreparedRecords) -> bool {
        let pos = self.pos;
        if time <= self.last_time
            || prepared.events == 0
            || pos + TIMESTAMP_BOUND + prepared.room as usize >= self.limit
        {
            return false;
        }
        self.last_time = time;
        self.chunk_has_timestamp = true;
        // SAFETY: `pos + TIMESTAMP_BOUND + room < limit <= len`, checked above, and `room` is
        // at least PREPARED_CAPACITY (`PreparedRecords::append` keeps it so).
        let out = unsafe {
            self.chunk
                .get_unchecked_mut(pos..pos + TIMESTAMP_BOUND + PREPARED_CAPACITY)
        };
        out[0] = TIMESTAMP;
        out[1..TIMESTAMP_BOUND].copy_from_slice(&time.to_le_bytes());
        // The whole array: a fixed-size copy is a few vector stores, a `len`-byte one a call;
        // the bytes past `len` are overwritten by the next record or the chunk's padding.
        out[TIMESTAMP_BOUND..].copy_from_slice(&prepared.bytes);
        self.pos = pos + TIMESTAMP_BOUND + prepared.len as usize;
        self.events += prepared.events as u64;
        true
    }

    /// Any record, with an optional attribute list, in libotf2's framing: attribute list, id,
    /// length (unless a singleton), payload.
    pub fn write_record(
        &mut self,
        time: u64,
        attributes: Option<&AttributeList>,
        record: &impl Record,
    ) {
        let (id, singleton) = (record.record_id(), record.is_singleton());
        let payload_bound = record.payload_bound();
        let attributes = attributes.filter(|a| !a.is_empty());
        let length_bound = if singleton {
            0
        } else {
            length_field_bound(payload_bound)
        };
        let attribute_bound = attributes.map_or(0, |a| attribute_list_bound(a.len()));
        let bound = TIMESTAMP_BOUND + attribute_bound + 1 + length_bound + payload_bound;
        let mut payload = std::mem::take(&mut self.payload);
        payload.clear();
        record.encode_payload(&mut payload);
        let mut framed = std::mem::take(&mut self.scratch);
        framed.clear();
        if let Some(list) = attributes {
            records::put_attribute_list(&mut framed, list);
        }
        if singleton {
            framed.push(id);
            framed.extend_from_slice(&payload);
        } else {
            put_framed(&mut framed, id, &payload, payload_bound >= 255);
        }
        self.payload = payload;
        let space = TIMESTAMP_BOUND + framed.len();
        // A record that cannot fit into any chunk is left out (and counted): OTF2 records never
        // straddle chunks.
        if space < self.chunk.len() - CHUNK_HEADER_LEN {
            self.reserve(bound.max(space), time);
            self.timestamp(time);
            self.chunk[self.pos..self.pos + framed.len()].copy_from_slice(&framed);
            self.pos += framed.len();
            self.events += 1;
        } else {
            self.oversized += 1;
        }
        self.scratch = framed;
    }

    /// Ends the file (END_OF_FILE, END_OF_BUFFER), hands the last chunk to the sink and returns
    /// the sink with the first I/O error, if any.
    pub fn finish(mut self) -> (S, io::Result<()>) {
        let (first, last) = (self.events_before_chunk + 1, self.events);
        write_chunk_header(&mut self.chunk, first, last);
        self.chunk[self.pos] = END_OF_FILE;
        self.pos += 1;
        if self.pos < self.chunk.len() {
            self.chunk[self.pos] = END_OF_BUFFER;
            self.pos += 1;
        }
        let chunk = std::mem::replace(&mut self.chunk, ChunkBuffer::empty());
        self.sink.submit_last(chunk, self.pos);
        let result = self.sink.finish();
        (self.sink, result)
    }
}

/// A Metric event's fields, borrowed (the `Event::Metric` variant owns its values).
struct MetricValues<'a> {
    metric: u32,
    values: &'a [TypedValue],
}

impl Record for MetricValues<'_> {
    fn record_id(&self) -> u8 {
        event_id::METRIC
    }
    fn payload_bound(&self) -> usize {
        records::metric_payload_bound(self.values.len())
    }
    fn is_singleton(&self) -> bool {
        false
    }
    fn encode_payload(&self, buf: &mut Vec<u8>) {
        records::put_metric_payload(buf, self.metric, self.values);
    }
}

/// Writes the events of one location.
pub struct EventWriter<S: ChunkSink> {
    chunks: TimedChunks<S>,
}

impl<S: ChunkSink> EventWriter<S> {
    pub fn new(chunk_size: usize, sink: S) -> Self {
        Self {
            chunks: TimedChunks::new(chunk_size, sink),
        }
    }
    pub fn with_buffer(chunk: ChunkBuffer, sink: S) -> Self {
        Self {
            chunks: TimedChunks::with_buffer(chunk, sink),
        }
    }

    pub fn events(&self) -> u64 {
        self.chunks.events()
    }
    pub fn last_time(&self) -> u64 {
        self.chunks.last_time()
    }
    pub fn clamped_timestamps(&self) -> u64 {
        self.chunks.clamped_timestamps()
    }
    /// Events left out because they are larger than a chunk.
    pub fn oversized_events(&self) -> u64 {
        self.chunks.oversized_records()
    }
    /// Full chunks handed to the sink so far (see `TimedChunks::chunks_filled`).
    pub fn chunks_filled(&self) -> u64 {
        self.chunks.chunks_filled()
    }
    pub fn chunk_size(&self) -> usize {
        self.chunks.chunk_size()
    }
    pub fn sink(&self) -> &S {
        self.chunks.sink()
    }
    pub fn sink_mut(&mut self) -> &mut S {
        self.chunks.sink_mut()
    }
    /// See [`TimedChunks::write_held_at_next_event`].
    #[inline]
    pub fn write_held_at_next_event(&mut self) {
        self.chunks.write_held_at_next_event();
    }

    #[inline(always)]
    pub fn enter(&mut self, time: u64, region: u32) {
        self.chunks
            .write_u32_singleton(time, event_id::ENTER, region);
    }

    /// `enter` in the common case only (see `TimedChunks::try_write_u32_singleton`).
    #[inline(always)]
    pub fn try_enter(&mut self, time: u64, region: u32) -> bool {
        self.chunks
            .try_write_u32_singleton(time, event_id::ENTER, region)
    }

    /// `leave` in the common case only (see `TimedChunks::try_write_u32_singleton`).
    #[inline(always)]
    pub fn try_leave(&mut self, time: u64, region: u32) -> bool {
        self.chunks
            .try_write_u32_singleton(time, event_id::LEAVE, region)
    }

    /// `try_enter` of a region encoded before (see `EncodedU32`).
    #[inline(always)]
    pub fn try_enter_encoded(&mut self, time: u64, region: EncodedU32) -> bool {
        self.chunks
            .try_write_encoded_singleton(time, event_id::ENTER, region)
    }

    /// `try_enter_encoded` at the time of the record before it (see
    /// `TimedChunks::try_write_encoded_singleton_at_last_time`).
    #[inline(always)]
    pub fn try_enter_encoded_at_last_time(&mut self, time: u64, region: EncodedU32) -> bool {
        self.chunks
            .try_write_encoded_singleton_at_last_time(time, event_id::ENTER, region)
    }

    /// `try_leave` of a region encoded before (see `EncodedU32`).
    #[inline(always)]
    pub fn try_leave_encoded(&mut self, time: u64, region: EncodedU32) -> bool {
        self.chunks
            .try_write_encoded_singleton(time, event_id::LEAVE, region)
    }

    #[inline(always)]
    pub fn leave(&mut self, time: u64, region: u32) {
        self.chunks
            .write_u32_singleton(time, event_id::LEAVE, region);
    }

    #[inline(always)]
    pub fn thread_fork(&mut self, time: u64, model: Paradigm, requested_threads: u32) {
        self.chunks
            .write_small::<6>(time, event_id::THREAD_FORK, |out| {
                out[0] = model.0;
                1 + put_cu32_at(&mut out[1..], requested_threads)
            });
    }

    #[inline(always)]
    pub fn thread_join(&mut self, time: u64, model: Paradigm) {
        self.chunks
            .write_small::<1>(time, event_id::THREAD_JOIN, |out| {
                out[0] = model.0;
                1
            });
    }

    #[inline(always)]
    pub fn thread_team_begin(&mut self, time: u64, team: u32) {
        self.chunks
            .write_small::<TEAM_PAYLOAD_BOUND>(time, event_id::THREAD_TEAM_BEGIN, |out| {
                put_cu32_at(out, team)
            });
    }

    /// ThreadTeamBegin carrying one UINT64 attribute (the reference's ThreadId).
    #[inline(always)]
    pub fn thread_team_begin_with_u64_attribute(
        &mut self,
        time: u64,
        team: u32,
        attribute: u32,
        value: u64,
    ) {
        self.chunks
            .write_small_with_u64_attribute::<TEAM_PAYLOAD_BOUND>(
                time,
                attribute,
                value,
                event_id::THREAD_TEAM_BEGIN,
                |out| put_cu32_at(out, team),
            );
    }

    /// Records prepared earlier, at `time` (see `TimedChunks::write_prepared`); false, with
    /// nothing written, when they must be written one by one.
    #[inline(always)]
    pub fn write_prepared(&mut self, time: u64, prepared: &PreparedRecords) -> bool {
        self.chunks.write_prepared(time, prepared)
    }

    #[inline(always)]
    pub fn thread_team_end(&mut self, time: u64, team: u32) {
        self.chunks
            .write_small::<TEAM_PAYLOAD_BOUND>(time, event_id::THREAD_TEAM_END, |out| {
                put_cu32_at(out, team)
            });
    }

    #[inline(always)]
    fn lock_event(&mut self, time: u64, id: u8, model: Paradigm, lock: u32, order: u32) {
        self.chunks.write_small::<11>(time, id, |out| {
            out[0] = model.0;
            let n = 1 + put_cu32_at(&mut out[1..], lock);
            n + put_cu32_at(&mut out[n..], order)
        });
    }

    #[inline(always)]
    pub fn thread_acquire_lock(&mut self, time: u64, model: Paradigm, lock: u32, order: u32) {
        self.lock_event(time, event_id::THREAD_ACQUIRE_LOCK, model, lock, order);
    }

    #[inline(always)]
    pub fn thread_release_lock(&mut self, time: u64, model: Paradigm, lock: u32, order: u32) {
        self.lock_event(time, event_id::THREAD_RELEASE_LOCK, model, lock, order);
    }

    #[inline(always)]
    fn task_event(&mut self, time: u64, id: u8, team: u32, creator: u32, generation: u32) {
        self.chunks.write_small::<15>(time, id, |out| {
            let mut n = put_cu32_at(out, team);
            n += put_cu32_at(&mut out[n..], creator);
            n + put_cu32_at(&mut out[n..], generation)
        });
    }

    #[inline(always)]
    pub fn thread_task_create(&mut self, time: u64, team: u32, creator: u32, generation: u32) {
        self.task_event(
            time,
            event_id::THREAD_TASK_CREATE,
            team,
            creator,
            generation,
        );
    }

    #[inline(always)]
    pub fn thread_task_switch(&mut self, time: u64, team: u32, creator: u32, generation: u32) {
        self.task_event(
            time,
            event_id::THREAD_TASK_SWITCH,
            team,
            creator,
            generation,
        );
    }

    #[inline(always)]
    pub fn thread_task_complete(&mut self, time: u64, team: u32, creator: u32, generation: u32) {
        self.task_event(
            time,
            event_id::THREAD_TASK_COMPLETE,
            team,
            creator,
            generation,
        );
    }

    /// A Metric event: `values` of metric class or instance `metric` (no allocation).
    pub fn metric(&mut self, time: u64, metric: u32, values: &[TypedValue]) {
        self.chunks
            .write_record(time, None, &MetricValues { metric, values });
    }

    /// Records that the measurement stalled from `time` until `stop_time` to make room.
    pub fn buffer_flush(&mut self, time: u64, stop_time: u64) {
        self.chunks.buffer_flush(time, stop_time);
    }

    /// Any event, with an optional attribute list.
    pub fn write(&mut self, time: u64, attributes: Option<&AttributeList>, event: &Event) {
        self.chunks.write_record(time, attributes, event);
    }

    pub fn finish(self) -> (S, io::Result<()>) {
        self.chunks.finish()
    }
}

/// Writes the snapshots of one location (the `.snap` file).
pub struct SnapWriter<S: ChunkSink> {
    chunks: TimedChunks<S>,
}

impl<S: ChunkSink> SnapWriter<S> {
    pub fn new(chunk_size: usize, sink: S) -> Self {
        Self {
            chunks: TimedChunks::new(chunk_size, sink),
        }
    }

    pub fn records(&self) -> u64 {
        self.chunks.events()
    }

    /// One snapshot record at snapshot time `time`.
    pub fn write(&mut self, time: u64, attributes: Option<&AttributeList>, record: &SnapRecord) {
        self.chunks.write_record(time, attributes, record);
    }

    pub fn finish(self) -> (S, io::Result<()>) {
        self.chunks.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that holds chunks back: `write_held` counts its calls and reports a wait that
    /// ended at `stop`.
    #[derive(Default)]
    struct HoldingSink {
        inner: VecSink,
        writes_held: usize,
        stop: Option<u64>,
    }

    impl ChunkSink for HoldingSink {
        fn submit(&mut self, chunk: ChunkBuffer, len: usize) -> ChunkBuffer {
            self.inner.submit(chunk, len)
        }
        fn finish(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn stall_end(&mut self) -> Option<u64> {
            self.stop.take()
        }
        fn write_held(&mut self) {
            self.writes_held += 1;
            self.stop = Some(1_000_000);
        }
    }

    /// After `write_held_at_next_event` the next event, through any path (the fast one included),
    /// has the sink write what it held first, and a BufferFlush covers that write: the same
    /// bytes as a BufferFlush written right before the event, at every offset in a chunk.
    #[test]
    fn held_chunks_are_written_at_the_next_event_with_a_buffer_flush() {
        for at in 0..700u64 {
            let mut held = EventWriter::new(4096, HoldingSink::default());
            let mut plain = EventWriter::new(4096, VecSink::default());
            for i in 0..800u64 {
                if i == at {
                    held.write_held_at_next_event();
                    plain.buffer_flush(10 * i, 1_000_000);
                }
                let region = (i % 200) as u32;
                if i % 2 == 0 {
                    if !held.try_enter(10 * i, region) {
                        held.enter(10 * i, region);
                    }
                    plain.enter(10 * i, region);
                } else {
                    held.leave(10 * i, region);
                    plain.leave(10 * i, region);
                }
            }
            assert_eq!(held.events(), plain.events(), "at event {at}");
            let (held, result) = held.finish();
            result.unwrap();
            let (plain, result) = plain.finish();
            result.unwrap();
            assert_eq!(held.writes_held, 1, "at event {at}");
            assert_eq!(held.inner.bytes, plain.bytes, "at event {at}");
        }
    }

    /// The in-place ThreadTeamBegin+attribute encoder writes what the generic path writes,
    /// across chunk breaks and for small and large values.
    #[test]
    fn team_begin_with_attribute_matches_the_generic_encoding() {
        let values = [0u64, 1, 127, 128, 70_000, u32::MAX as u64 + 5, u64::MAX];
        let run = |fast: bool| {
            let mut w = EventWriter::new(4096, VecSink::default());
            for i in 0..2000u64 {
                let value = values[i as usize % values.len()];
                let team = (i % 300) as u32;
                if fast {
                    w.thread_team_begin_with_u64_attribute(i / 3, team, 0, value);
                } else {
                    let mut list = AttributeList::new();
                    list.add(0, TypedValue::u64(value));
                    w.write(i / 3, Some(&list), &Event::ThreadTeamBegin { team });
                }
                w.enter(i / 3 + 1, i as u32);
            }
            let (sink, result) = w.finish();
            result.unwrap();
            sink.bytes
        };
        let (fast, generic) = (run(true), run(false));
        assert!(fast.len() > 3 * 4096, "the test must cross chunk breaks");
        assert_eq!(fast, generic);
    }

    /// The fast writes of encoded regions give the bytes, chunk breaks and event counts of
    /// `enter`/`leave`, for values of every compressed length, at every offset near a chunk's
    /// end, and refuse a time that is not later than the last one.
    #[test]
    fn encoded_region_writes_match_enter_and_leave() {
        let values = [
            0u32,
            1,
            127,
            128,
            255,
            256,
            70_000,
            1 << 24,
            u32::MAX - 1,
            u32::MAX,
        ];
        let run = |encoded: bool| {
            let mut w = EventWriter::new(4096, VecSink::default());
            let (mut fast, mut refused) = (0, 0);
            for i in 0..6000u64 {
                let region = values[i as usize % values.len()];
                // Every 13th at the time of the one before: the fast write refuses it.
                let time = if i % 13 == 0 { i / 2 * 2 } else { i + 1 };
                let enter = i % 2 == 0;
                let done = encoded && {
                    let value = EncodedU32::new(region);
                    if enter {
                        w.try_enter_encoded(time, value)
                            || w.try_enter_encoded_at_last_time(time, value)
                    } else {
                        w.try_leave_encoded(time, value)
                    }
                };
                if done {
                    fast += 1;
                } else if enter {
                    refused += 1;
                    w.enter(time, region);
                } else {
                    refused += 1;
                    w.leave(time, region);
                }
            }
            let (sink, result) = w.finish();
            result.unwrap();
            (sink.bytes, fast, refused)
        };
        assert_eq!(EncodedU32::ZERO, EncodedU32::new(0));
        let (encoded, fast, refused) = run(true);
        let (plain, _, _) = run(false);
        assert!(
            encoded.len() > 10 * 4096,
            "the test must cross chunk breaks"
        );
        assert!(
            fast > 5000 && refused > 200,
            "{fast} fast, {refused} refused"
        );
        assert_eq!(encoded, plain);
    }

    /// Prepared records give the bytes, chunk breaks and event counts of the same records
    /// written one by one: at every offset before a chunk's end, at a time that is not later
    /// than the last one, and with values of every compressed length.
    #[test]
    fn prepared_records_match_the_records_written_one_by_one() {
        let values = [0u64, 1, 127, 128, 70_000, u32::MAX as u64 + 5, u64::MAX];
        let run = |use_prepared: bool| {
            let mut w = EventWriter::new(4096, VecSink::default());
            let (mut prepared_sets, mut one_by_one) = (0, 0);
            for i in 0..3000u64 {
                let tid = values[i as usize % values.len()];
                let team = (i % 300) as u32;
                let region = (i * 7919 % 100_000) as u32;
                // Fillers of 2 to 6 bytes move the next set across every offset near a
                // chunk's end.
                w.enter(4 * i, (1u32 << (i % 5 * 7)) - 1);
                // Every 11th set at the filler's time: no TIMESTAMP of its own.
                let time = if i % 11 == 0 { 4 * i } else { 4 * i + 1 };
                let mut begin = PreparedRecords::new();
                begin
                    .thread_team_begin_with_u64_attribute(team, 0, tid)
                    .enter(region);
                let mut end = PreparedRecords::new();
                end.leave(region).thread_team_end(team);
                assert_eq!((begin.events(), end.events()), (2, 2));
                if use_prepared && w.write_prepared(time, &begin) {
                    prepared_sets += 1;
                } else {
                    w.thread_team_begin_with_u64_attribute(time, team, 0, tid);
                    w.enter(time, region);
                    one_by_one += 1;
                }
                if use_prepared && w.write_prepared(time + 2, &end) {
                    prepared_sets += 1;
                } else {
                    w.leave(time + 2, region);
                    w.thread_team_end(time + 2, team);
                    one_by_one += 1;
                }
            }
            let events = w.events();
            let (sink, result) = w.finish();
            result.unwrap();
            (sink.bytes, events, prepared_sets, one_by_one)
        };
        let (prepared, events, prepared_sets, fallbacks) = run(true);
        let (one_by_one, one_by_one_events, _, _) = run(false);
        assert!(
            prepared.len() > 20 * 4096,
            "the test must cross many chunk breaks"
        );
        assert!(
            prepared_sets > 4000,
            "{prepared_sets} sets written prepared"
        );
        // Sets at a time not later than the last, and near every chunk's end.
        assert!(fallbacks > 300, "{fallbacks} sets written one by one");
        assert_eq!(events, one_by_one_events);
        assert!(prepared == one_by_one, "the bytes differ");
    }

    /// `try_enter`/`try_leave` write exactly what `enter`/`leave` write when they say yes, and
    /// say no (writing nothing) at a chunk's end and at a time that is not later than the last.
    #[test]
    fn tried_region_events_match_the_general_ones() {
        let run = |tried: bool| {
            let mut w = EventWriter::new(4096, VecSink::default());
            let (mut yes, mut no) = (0, 0);
            for i in 0..5000u64 {
                // Every 7th event at the previous one's time; regions of every compressed
                // length.
                let time = if i % 7 == 0 {
                    3 * i.saturating_sub(1) + 1
                } else {
                    3 * i + 1
                };
                let region = (1u32 << (i % 5 * 7)) - 1;
                let before = (w.events(), w.chunks.pos);
                let done = tried
                    && if i % 2 == 0 {
                        w.try_enter(time, region)
                    } else {
                        w.try_leave(time, region)
                    };
                if done {
                    yes += 1;
                } else {
                    assert_eq!((w.events(), w.chunks.pos), before, "a no wrote something");
                    no += 1;
                    if i % 2 == 0 {
                        w.enter(time, region);
                    } else {
                        w.leave(time, region);
                    }
                }
            }
            let events = w.events();
            let (sink, result) = w.finish();
            result.unwrap();
            (sink.bytes, events, yes, no)
        };
        let (tried, events, yes, no) = run(true);
        let (general, general_events, ..) = run(false);
        assert!(
            tried.len() > 10 * 4096,
            "the test must cross many chunk breaks"
        );
        assert!(yes > 3000, "{yes} written by the tried path");
        // Every 7th at a time not later than the last, and the ends of the chunks.
        assert!(no > 5000 / 7, "{no} left to the general path");
        assert_eq!(events, general_events);
        assert!(tried == general, "the bytes differ");
    }

    /// A set whose records exceed the capacity is given up: never written prepared.
    #[test]
    fn prepared_records_past_the_capacity_are_given_up() {
        let mut p = PreparedRecords::new();
        // Enters of a 4-byte region id: 6 bytes each, their bound.
        for n in 1..=PREPARED_CAPACITY / 6 {
            p.enter(0x1234_5678);
            assert_eq!((p.events() as usize, p.bytes().len()), (n, 6 * n));
        }
        p.enter(0x1234_5678);
        assert_eq!((p.events(), p.bytes().len()), (0, 0));
        p.enter(1);
        assert_eq!(p.events(), 0, "a set given up stays given up");
        let mut w = EventWriter::new(4096, VecSink::default());
        assert!(!w.write_prepared(1, &p));
        assert_eq!(w.events(), 0);
    }
}
