//! The file structure, to find where to damage it.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    ChunkHeader,
    Timestamp,
    AttributeList,
    /// An event (event files) or definition (definition files) record with this id.
    Record(u8),
    /// END_OF_CHUNK and the padding after it.
    EndOfChunk,
    EndOfFile,
    EndOfBuffer,
}

/// One piece of a chunked file: `bytes[at..end]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unit {
    pub(crate) at: usize,
    pub(crate) end: usize,
    pub(crate) kind: Kind,
}

/// Splits a chunked file into its pieces. Event files: Enter/Leave are the only singletons.
pub(crate) fn walk(bytes: &[u8], event_file: bool) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut chunk = 0;
    loop {
        units.push(Unit {
            at: chunk,
            end: chunk + HEADER,
            kind: Kind::ChunkHeader,
        });
        let mut pos = chunk + HEADER;
        loop {
            let id = bytes[pos];
            let (kind, end) = match id {
                0x00 => (Kind::EndOfChunk, chunk + CHUNK),
                0x02 => (Kind::EndOfFile, pos + 1),
                TIMESTAMP_ID if event_file => (Kind::Timestamp, pos + 9),
                ENTER | LEAVE if event_file => {
                    (Kind::Record(id), pos + 2 + bytes[pos + 1] as usize)
                }
                _ => {
                    assert_ne!(bytes[pos + 1], 0xff, "long length forms are not expected");
                    let end = pos + 2 + bytes[pos + 1] as usize;
                    if id == ATTRIBUTE_LIST_ID && event_file {
                        (Kind::AttributeList, end)
                    } else {
                        (Kind::Record(id), end)
                    }
                }
            };
            units.push(Unit { at: pos, end, kind });
            pos = end;
            match kind {
                Kind::EndOfChunk => break,
                Kind::EndOfFile => {
                    if pos < bytes.len() {
                        assert_eq!(bytes[pos], 0x01);
                        units.push(Unit {
                            at: pos,
                            end: pos + 1,
                            kind: Kind::EndOfBuffer,
                        });
                    }
                    assert_eq!(pos + 1, bytes.len(), "bytes after END_OF_BUFFER");
                    return units;
                }
                _ => {}
            }
        }
        chunk += CHUNK;
    }
}

pub(crate) fn is_event(kind: Kind) -> bool {
    matches!(kind, Kind::Record(_))
}

/// Events whose records lie wholly before `cut`.
pub(crate) fn events_before(units: &[Unit], cut: usize) -> usize {
    units
        .iter()
        .filter(|u| is_event(u.kind) && u.end <= cut)
        .count()
}
