//! Making the event files of an interrupted writer readable: keep every whole chunk that reached
//! the disk, cut off a torn one, and end the file the way readers expect.
//!
//! Event files are written one whole chunk at a time at `index × file chunk size` (see
//! `chunk_file.rs`), `memory chunk size` bytes each (the rest up to the file chunk size is a
//! hole that reads as END_OF_CHUNK padding). A chunk is whole when all its bytes are there and
//! its header continues the event numbering of the chunk before it.

use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use super::chunk::{
    write_chunk_header, CHUNK_HEADER, CHUNK_HEADER_LEN, END_OF_BUFFER, END_OF_FILE, LITTLE_ENDIAN,
};
use super::regular_file::refuse_unless_regular;

/// What [`salvage_event_file`] kept and dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Salvaged {
    /// Events in the whole chunks (the Location's `numberOfEvents`).
    pub events: u64,
    pub chunks: u64,
    pub dropped_chunks: u64,
    pub dropped_bytes: u64,
}

/// Keeps the whole chunks of the event file at `path` (created empty if missing), cuts off the
/// rest and ends the file with an empty final chunk, unless it already ends as a finished file.
pub fn salvage_event_file(
    path: &Path,
    file_chunk_size: u64,
    memory_chunk_size: u64,
) -> io::Result<Salvaged> {
    // A device is not even opened; a FIFO opened for reading and writing does not wait for a
    // writer, but reading it would.
    if let Ok(metadata) = std::fs::metadata(path) {
        refuse_unless_regular(metadata.file_type())?;
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let metadata = file.metadata()?;
    refuse_unless_regular(metadata.file_type())?;
    let len = metadata.len();
    let chunk_len = memory_chunk_size.min(file_chunk_size);
    let mut kept = Salvaged::default();
    let mut kept_end = 0;
    loop {
        let offset = kept.chunks * file_chunk_size;
        if offset >= len {
            break;
        }
        let mut header = [0u8; CHUNK_HEADER_LEN];
        if file.read_exact_at(&mut header, offset).is_err() {
            break;
        }
        let first = u64::from_le_bytes(header[2..10].try_into().expect("8 bytes"));
        let last = u64::from_le_bytes(header[10..18].try_into().expect("8 bytes"));
        let continues = header[0] == CHUNK_HEADER
            && header[1] == LITTLE_ENDIAN
            && first == kept.events + 1
            && last + 1 >= first;
        if !continues {
            break;
        }
        let available = len - offset;
        if available < chunk_len && !ends_finished(&file, offset + available)? {
            break;
        }
        kept.chunks += 1;
        kept.events = last;
        kept_end = offset + available.min(chunk_len);
        if available < chunk_len {
            // The final chunk of a file that was finished: nothing to add.
            return Ok(kept);
        }
    }
    kept.dropped_bytes = len.saturating_sub(kept_end);
    let cut = kept.chunks * file_chunk_size;
    kept.dropped_chunks = len.saturating_sub(cut).div_ceil(file_chunk_size);
    file.set_len(cut)?;
    let mut end = [0u8; CHUNK_HEADER_LEN + 2];
    write_chunk_header(&mut end, kept.events + 1, kept.events);
    end[CHUNK_HEADER_LEN] = END_OF_FILE;
    end[CHUNK_HEADER_LEN + 1] = END_OF_BUFFER;
    file.write_all_at(&end, cut)?;
    Ok(kept)
}

/// Whether the file, `end` bytes long, ends as a finished event file's last chunk does.
fn ends_finished(file: &std::fs::File, end: u64) -> io::Result<bool> {
    let mut tail = [0u8; 2];
    if end < CHUNK_HEADER_LEN as u64 + 2 {
        return Ok(false);
    }
    file.read_exact_at(&mut tail, end - 2)?;
    Ok(tail == [END_OF_FILE, END_OF_BUFFER])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ArchiveConfig, ArchiveReader, ArchiveWriter, GlobalDef, UNDEFINED_U32};

    const CHUNK: usize = 256 * 1024;

    /// An archive whose location 0 has `events` Enter/Leave events in 256 KiB chunks; returns
    /// the anchor path and the event file.
    fn archive(dir: &Path, events: u64) -> (std::path::PathBuf, std::path::PathBuf) {
        let _ = std::fs::remove_dir_all(dir);
        let config = ArchiveConfig {
            event_chunk_size: CHUNK,
            ..ArchiveConfig::default()
        };
        let archive = ArchiveWriter::create(dir, "traces", config).unwrap();
        let mut w = archive.event_writer(0).unwrap();
        for i in 0..events / 2 {
            w.enter(2 * i + 1, 0);
            w.leave(2 * i + 2, 0);
        }
        w.finish().1.unwrap();
        let mut defs = archive.global_def_writer();
        defs.write(&GlobalDef::ClockProperties {
            timer_resolution: 1_000_000_000,
            global_offset: 0,
            trace_length: events,
            realtime_timestamp: crate::UNDEFINED_U64,
        });
        defs.write(&GlobalDef::String {
            id: 0,
            string: "r".into(),
        });
        defs.write(&GlobalDef::SystemTreeNode {
            id: 0,
            name: 0,
            class_name: 0,
            parent: UNDEFINED_U32,
        });
        defs.write(&GlobalDef::LocationGroup {
            id: 0,
            name: 0,
            location_group_type: crate::LocationGroupType::PROCESS,
            system_tree_parent: 0,
            creating_location_group: UNDEFINED_U32,
        });
        defs.write(&GlobalDef::Location {
            id: 0,
            name: 0,
            location_type: crate::LocationType::CPU_THREAD,
            number_of_events: events,
            location_group: 0,
        });
        let evt = archive.event_path(0);
        let anchor = archive.anchor_path();
        archive.finish(defs, &[0]).unwrap();
        (anchor, evt)
    }

    fn read_events(anchor: &Path) -> usize {
        let reader = ArchiveReader::open(anchor).unwrap();
        let events: Vec<_> = reader.events(0).unwrap().collect::<Result<_, _>>().unwrap();
        events.len()
    }

    #[test]
    fn a_torn_chunk_is_cut_off_and_the_whole_ones_stay_readable() {
        let dir = std::env::temp_dir().join(format!("salvage-torn-{}", std::process::id()));
        let (anchor, evt) = archive(&dir, 200_000);
        let len = std::fs::metadata(&evt).unwrap().len();
        assert!(len > 3 * CHUNK as u64, "several chunks: {len}");
        // Killed halfway through writing the third chunk.
        let torn = 2 * CHUNK as u64 + 1000;
        OpenOptions::new()
            .write(true)
            .open(&evt)
            .unwrap()
            .set_len(torn)
            .unwrap();
        let first_two = {
            let bytes = std::fs::read(&evt).unwrap();
            u64::from_le_bytes(bytes[CHUNK + 10..CHUNK + 18].try_into().unwrap())
        };
        let s = salvage_event_file(&evt, CHUNK as u64, CHUNK as u64).unwrap();
        assert_eq!(s.chunks, 2);
        assert_eq!(s.events, first_two);
        assert_eq!(s.dropped_chunks, 1);
        assert_eq!(s.dropped_bytes, 1000);
        assert_eq!(read_events(&anchor), first_two as usize);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_finished_file_is_left_as_it_is() {
        let dir = std::env::temp_dir().join(format!("salvage-done-{}", std::process::id()));
        let (anchor, evt) = archive(&dir, 100_000);
        let before = std::fs::read(&evt).unwrap();
        let s = salvage_event_file(&evt, CHUNK as u64, CHUNK as u64).unwrap();
        assert_eq!(s.events, 100_000);
        assert_eq!((s.dropped_chunks, s.dropped_bytes), (0, 0));
        assert_eq!(std::fs::read(&evt).unwrap(), before);
        assert_eq!(read_events(&anchor), 100_000);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_without_a_whole_chunk_becomes_an_empty_stream() {
        let dir = std::env::temp_dir().join(format!("salvage-empty-{}", std::process::id()));
        let (anchor, evt) = archive(&dir, 100_000);
        OpenOptions::new()
            .write(true)
            .open(&evt)
            .unwrap()
            .set_len(10)
            .unwrap();
        let s = salvage_event_file(&evt, CHUNK as u64, CHUNK as u64).unwrap();
        assert_eq!((s.events, s.chunks, s.dropped_chunks), (0, 0, 1));
        assert_eq!(read_events(&anchor), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
