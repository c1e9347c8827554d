//! Reading OTF2 archives back: anchor, global and local definitions, events and snapshots.
//!
//! Files are read one chunk at a time, so a location with many millions of events is streamed,
//! not loaded whole: a reader holds at most one chunk of a file (at most 16 MiB, less for a
//! smaller file). Only regular files are read (a FIFO or a device under a trace file's name is
//! refused before anything is read, see [`super::regular_file`]), and a file whose size cannot
//! be what its name says (an empty chunked file, an anchor larger than [`MAX_ANCHOR_SIZE`]) is
//! refused before its first byte is read. Damage (a truncated file, a bad chunk header, a record
//! running past its chunk) is reported as a [`ReadError`] naming the file and the byte offset;
//! nothing panics.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::anchor::Anchor;
use super::chunk::{
    CHUNK_HEADER, CHUNK_HEADER_LEN, END_OF_CHUNK, END_OF_FILE, LITTLE_ENDIAN, MAX_CHUNK_SIZE,
    MIN_CHUNK_SIZE,
};
use super::records::{
    get_attribute_list_payload, singleton_event, Event, GlobalDef, LocalDef, SnapRecord,
};
use super::regular_file::open_regular;
use super::types::*;
use super::wire::{DecodeError, DecodeResult, Decoder};
use super::{ATTRIBUTE_LIST, TIMESTAMP};

/// A read failure: which file, where in it, and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    pub file: PathBuf,
    pub offset: u64,
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: offset {}: {}",
            self.file.display(),
            self.offset,
            self.message
        )
    }
}

impl std::error::Error for ReadError {}

impl ReadError {
    fn io(file: &Path, offset: u64, e: io::Error) -> Self {
        Self {
            file: file.to_path_buf(),
            offset,
            message: e.to_string(),
        }
    }
    fn decode(file: &Path, e: DecodeError) -> Self {
        Self {
            file: file.to_path_buf(),
            offset: e.offset,
            message: e.message,
        }
    }
}

pub type ReadResult<T> = Result<T, ReadError>;

/// The largest anchor file read. An anchor holds a few numbers, the machine name, the creator
/// and the description (pomptrace writes the command line there: Linux caps a command line
/// with its environment at 6 MiB) and the properties; anything larger is not an anchor, and is
/// refused by its size before it is read.
pub const MAX_ANCHOR_SIZE: u64 = 16 * 1024 * 1024;

/// One event as read: its time, the attribute list that preceded it, and the event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRecord {
    pub time: u64,
    pub attributes: AttributeList,
    pub event: Event,
}

/// One snapshot record as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotRecord {
    pub time: u64,
    pub attributes: AttributeList,
    pub record: SnapRecord,
}

/// An archive opened through its anchor file.
pub struct ArchiveReader {
    anchor: Anchor,
    dir: PathBuf,
    name: String,
}

impl ArchiveReader {
    /// Opens `DIR/NAME.otf2`.
    pub fn open(anchor_path: impl AsRef<Path>) -> ReadResult<Self> {
        let path = anchor_path.as_ref();
        let data = read_anchor_file(path)?;
        let anchor = Anchor::decode(&data).map_err(|e| ReadError::decode(path, e))?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".otf2").or_else(|| n.strip_suffix(".OTF2")))
            .ok_or_else(|| ReadError {
                file: path.to_path_buf(),
                offset: 0,
                message: "anchor file name must end in .otf2".into(),
            })?
            .to_string();
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        // The chunk sizes are at fixed offsets: after the 2-byte header, "OTF2\0", the two
        // format bytes and the three version bytes.
        for (what, size, offset) in [
            ("event", anchor.event_chunk_size, 12),
            ("definition", anchor.def_chunk_size, 20),
        ] {
            if !(MIN_CHUNK_SIZE as u64..=MAX_CHUNK_SIZE as u64).contains(&size) {
                return Err(ReadError {
                    file: path.to_path_buf(),
                    offset,
                    message: format!("invalid {what} chunk size {size}"),
                });
            }
        }
        Ok(Self { anchor, dir, name })
    }

    pub fn anchor(&self) -> &Anchor {
        &self.anchor
    }
    pub fn global_def_path(&self) -> PathBuf {
        self.dir.join(format!("{}.def", self.name))
    }
    pub fn event_path(&self, location: u64) -> PathBuf {
        self.dir.join(&self.name).join(format!("{location}.evt"))
    }
    pub fn local_def_path(&self, location: u64) -> PathBuf {
        self.dir.join(&self.name).join(format!("{location}.def"))
    }
    pub fn snap_path(&self, location: u64) -> PathBuf {
        self.dir.join(&self.name).join(format!("{location}.snap"))
    }

    /// All global definitions in file order.
    pub fn global_defs(&self) -> ReadResult<Vec<GlobalDef>> {
        let mut file = ChunkedFile::open(&self.global_def_path(), self.anchor.def_chunk_size)?;
        let mut defs = Vec::new();
        while let Some(def) = file.next_record(RecordKind::Definition, GlobalDef::decode)? {
            defs.push(def.2);
        }
        Ok(defs)
    }

    /// The ids of all Location definitions.
    pub fn locations(&self) -> ReadResult<Vec<u64>> {
        Ok(self
            .global_defs()?
            .iter()
            .filter_map(|d| match d {
                GlobalDef::Location { id, .. } => Some(*id),
                _ => None,
            })
            .collect())
    }

    /// The local definitions of a location; a missing file means none.
    pub fn local_defs(&self, location: u64) -> ReadResult<Vec<LocalDef>> {
        let path = self.local_def_path(location);
        if !path.exists() {
            return Ok(Vec::new());
        }
        let mut file = ChunkedFile::open(&path, self.anchor.def_chunk_size)?;
        let mut defs = Vec::new();
        while let Some(def) = file.next_record(RecordKind::Definition, LocalDef::decode)? {
            defs.push(def.2);
        }
        Ok(defs)
    }

    /// Streams the events of a location.
    pub fn events(&self, location: u64) -> ReadResult<EventReader> {
        let file = ChunkedFile::open(&self.event_path(location), self.anchor.event_chunk_size)?;
        Ok(EventReader {
            file,
            failed: false,
        })
    }

    /// All snapshot records of a location.
    pub fn snapshots(&self, location: u64) -> ReadResult<Vec<SnapshotRecord>> {
        let mut file = ChunkedFile::open(&self.snap_path(location), self.anchor.event_chunk_size)?;
        let mut records = Vec::new();
        while let Some((time, attributes, record)) =
            file.next_record(RecordKind::Snapshot, SnapRecord::decode)?
        {
            records.push(SnapshotRecord {
                time,
                attributes,
                record,
            });
        }
        Ok(records)
    }
}

/// The bytes of an anchor file, refused by its type or size before any is read.
fn read_anchor_file(path: &Path) -> ReadResult<Vec<u8>> {
    let (file, len) = open_regular(path).map_err(|e| ReadError::io(path, 0, e))?;
    if len > MAX_ANCHOR_SIZE {
        return Err(ReadError {
            file: path.to_path_buf(),
            offset: 0,
            message: format!(
                "{len} bytes is not the size of an OTF2 anchor file (at most {MAX_ANCHOR_SIZE})"
            ),
        });
    }
    let mut data = Vec::with_capacity(len as usize);
    // A file that grows meanwhile is read as long as it was.
    file.take(len)
        .read_to_end(&mut data)
        .map_err(|e| ReadError::io(path, data.len() as u64, e))?;
    Ok(data)
}

/// Streams an event file on its own (no anchor needed), e.g. one just written.
pub fn read_event_file(path: &Path, chunk_size: u64) -> ReadResult<EventReader> {
    Ok(EventReader {
        file: ChunkedFile::open(path, chunk_size)?,
        failed: false,
    })
}

/// Iterator over the events of one location.
pub struct EventReader {
    file: ChunkedFile,
    failed: bool,
}

impl EventReader {
    /// Bytes the last event read takes in its chunk: the record with its TIMESTAMP and
    /// attribute list, if it has them (chunk headers and END_OF_CHUNK padding not counted).
    pub fn last_record_bytes(&self) -> usize {
        self.file.record_bytes
    }
}

impl Iterator for EventReader {
    type Item = ReadResult<EventRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.file.next_record(RecordKind::Event, Event::decode) {
            Ok(Some((time, attributes, event))) => Some(Ok(EventRecord {
                time,
                attributes,
                event,
            })),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RecordKind {
    /// No timestamps or attribute lists; every record has a length.
    Definition,
    /// Timestamps, attribute lists, and the length-less singleton events.
    Event,
    /// Timestamps and attribute lists; every record has a length.
    Snapshot,
}

/// A chunked file read one chunk at a time.
struct ChunkedFile {
    path: PathBuf,
    file: File,
    chunk_size: usize,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    chunk_offset: u64,
    /// Bytes of the current chunk in `buf`; 0 before the first chunk is loaded.
    len: usize,
    pos: usize,
    ended: bool,
    time: u64,
    attributes: Option<AttributeList>,
    /// Bytes of the last record returned, with its TIMESTAMP and attribute list.
    record_bytes: usize,
}

impl ChunkedFile {
    fn open(path: &Path, chunk_size: u64) -> ReadResult<Self> {
        let (file, len) = open_regular(path).map_err(|e| ReadError::io(path, 0, e))?;
        if len == 0 {
            return Err(ReadError {
                file: path.to_path_buf(),
                offset: 0,
                message: "empty file (truncated before its first chunk?)".into(),
            });
        }
        // A file shorter than a chunk is its only chunk: no more memory than its length.
        let buffer_len = chunk_size.min(len) as usize;
        let mut s = Self {
            path: path.to_path_buf(),
            file,
            chunk_size: chunk_size as usize,
            buf: vec![0; buffer_len],
            chunk_offset: 0,
            len: 0,
            pos: 0,
            ended: false,
            time: 0,
            attributes: None,
            record_bytes: 0,
        };
        s.load_chunk(0)?;
        Ok(s)
    }

    fn err<T>(&self, at: usize, message: impl Into<String>) -> ReadResult<T> {
        Err(ReadError {
            file: self.path.clone(),
            offset: self.chunk_offset + at as u64,
            message: message.into(),
        })
    }

    fn load_chunk(&mut self, offset: u64) -> ReadResult<()> {
        self.chunk_offset = offset;
        self.file
            .seek(SeekFrom::Start(offset))
            .map_err(|e| ReadError::io(&self.path, offset, e))?;
        let mut filled = 0;
        while filled < self.buf.len() {
            match self.file.read(&mut self.buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadError::io(&self.path, offset + filled as u64, e)),
            }
        }
        self.len = filled;
        if filled == 0 {
            return self.err(
                0,
                "file ends without END_OF_FILE (truncated at a chunk boundary?)",
            );
        }
        if self.buf[0] != CHUNK_HEADER {
            return self.err(0, "no chunk header where a chunk should start");
        }
        if filled < CHUNK_HEADER_LEN {
            return self.err(filled, "file ends inside a chunk header (truncated)");
        }
        if self.buf[1] != LITTLE_ENDIAN {
            return self.err(
                1,
                format!("unsupported byte order byte {:#04x}", self.buf[1]),
            );
        }
        self.pos = CHUNK_HEADER_LEN;
        Ok(())
    }

    /// The next record as (time, attribute list, decoded record); `None` at END_OF_FILE.
    fn next_record<T>(
        &mut self,
        kind: RecordKind,
        decode: impl Fn(u8, &mut Decoder) -> DecodeResult<T>,
    ) -> ReadResult<Option<(u64, AttributeList, T)>> {
        let mut bytes = 0;
        loop {
            if self.ended {
                return Ok(None);
            }
            if self.pos >= self.len {
                let what = if self.len < self.chunk_size {
                    "file"
                } else {
                    "chunk"
                };
                return self.err(
                    self.pos,
                    format!("{what} ends in the middle of a record stream (truncated?)"),
                );
            }
            let at = self.pos;
            let byte = self.buf[at];
            match byte {
                END_OF_CHUNK => {
                    if self.len < self.chunk_size {
                        return self.err(
                            self.len,
                            format!(
                                "file ends {} bytes into a chunk of {} after END_OF_CHUNK at \
                                 offset {}, without END_OF_FILE (truncated?)",
                                self.len,
                                self.chunk_size,
                                self.chunk_offset + at as u64
                            ),
                        );
                    }
                    let next = self.chunk_offset + self.chunk_size as u64;
                    self.load_chunk(next)?;
                    continue;
                }
                END_OF_FILE => {
                    if self.attributes.is_some() {
                        return self.err(at, "attribute list without a following record");
                    }
                    self.ended = true;
                    return Ok(None);
                }
                TIMESTAMP if kind != RecordKind::Definition => {
                    let mut d = self.decoder(at + 1);
                    self.time = d.u64().map_err(|e| ReadError::decode(&self.path, e))?;
                    self.pos = at + 9;
                    bytes += 9;
                    if self.pos < self.len && self.buf[self.pos] == TIMESTAMP {
                        return self.err(self.pos, "two TIMESTAMP records in a row");
                    }
                    continue;
                }
                ATTRIBUTE_LIST if kind != RecordKind::Definition => {
                    let (mut payload, end) = self.framed_payload(at + 1)?;
                    let list = get_attribute_list_payload(&mut payload)
                        .map_err(|e| ReadError::decode(&self.path, e))?;
                    if self.attributes.is_some() {
                        return self.err(at, "two attribute lists before one record");
                    }
                    self.attributes = Some(list);
                    bytes += end - at;
                    self.pos = end;
                    continue;
                }
                id => {
                    let singleton = if kind == RecordKind::Event {
                        singleton_event(id)
                    } else {
                        None
                    };
                    let (record, end) = match singleton {
                        Some(wide) => {
                            // The value decides its own length: id, length byte, value bytes.
                            let mut d = self.decoder(at + 1);
                            let start = d.pos();
                            if wide {
                                d.cu64()
                            } else {
                                d.cu32().map(u64::from)
                            }
                            .map_err(|e| ReadError::decode(&self.path, e))?;
                            let used = d.pos() - start;
                            let mut payload = Decoder::new(
                                &self.buf[at + 1..at + 1 + used],
                                self.chunk_offset + at as u64 + 1,
                            );
                            let record = decode(id, &mut payload)
                                .map_err(|e| ReadError::decode(&self.path, e))?;
                            (record, at + 1 + used)
                        }
                        None => {
                            let (mut payload, end) = self.framed_payload(at + 1)?;
                            let record = decode(id, &mut payload)
                                .map_err(|e| ReadError::decode(&self.path, e))?;
                            (record, end)
                        }
                    };
                    self.pos = end;
                    self.record_bytes = bytes + end - at;
                    let attributes = self.attributes.take().unwrap_or_default();
                    return Ok(Some((self.time, attributes, record)));
                }
            }
        }
    }

    fn decoder(&self, at: usize) -> Decoder<'_> {
        Decoder::new(&self.buf[at..self.len], self.chunk_offset + at as u64)
    }

    /// Reads a length field at `at` and returns a decoder over the payload and the end position.
    fn framed_payload(&self, at: usize) -> ReadResult<(Decoder<'_>, usize)> {
        let mut d = self.decoder(at);
        let wrap = |e| ReadError::decode(&self.path, e);
        let len = match d.u8().map_err(wrap)? {
            0xff => d.u64().map_err(wrap)?,
            n => n as u64,
        };
        if len > d.remaining() as u64 {
            // In a chunk shorter than the chunk size the chunk's end is the file's end.
            let end = if self.len < self.chunk_size {
                "file (truncated?)"
            } else {
                "chunk"
            };
            return self.err(
                at,
                format!("record length {len} runs past the end of the {end}"),
            );
        }
        let start = at + d.pos();
        let payload = d.sub(len as usize).map_err(wrap)?;
        Ok((payload, start + len as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{region_event_bytes, EventWriter, VecSink};

    /// The bytes the reader says each event took add up to the file's bytes less its chunk
    /// header and END_OF_FILE/END_OF_BUFFER; an Enter or Leave at a later time takes what
    /// `region_event_bytes` says.
    #[test]
    fn record_bytes_add_up_to_the_file() {
        let mut w = EventWriter::new(1 << 16, VecSink::default());
        let regions = [0u32, 127, 128, 70_000, u32::MAX - 1];
        for (i, &region) in regions.iter().enumerate() {
            let t = 10 * i as u64 + 1;
            w.enter(t, region);
            // Same time: no TIMESTAMP of its own.
            w.leave(t, region);
            w.thread_team_begin_with_u64_attribute(t + 1, 3, 0, 77);
        }
        let (sink, result) = w.finish();
        result.unwrap();
        let dir = crate::test_dir("record-bytes");
        let path = dir.join("0.evt");
        std::fs::write(&path, &sink.bytes).unwrap();
        let mut events = read_event_file(&path, 1 << 16).unwrap();
        let mut total = 0;
        let mut index = 0;
        while let Some(record) = events.next() {
            let record = record.unwrap();
            let bytes = events.last_record_bytes();
            total += bytes;
            match (index % 3, record.event) {
                (0, Event::Enter { region }) => assert_eq!(bytes, region_event_bytes(region)),
                (1, Event::Leave { region }) => assert_eq!(bytes, region_event_bytes(region) - 9),
                (2, Event::ThreadTeamBegin { .. }) => assert!(bytes > 9 + 2),
                (_, other) => panic!("unexpected {other:?}"),
            }
            index += 1;
        }
        assert_eq!(index, 3 * regions.len());
        assert_eq!(total, sink.bytes.len() - CHUNK_HEADER_LEN - 2);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
