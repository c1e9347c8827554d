//! A pure-Rust OTF2 3.0 writer and reader.
//!
//! This module knows nothing of POMP2 or OpenMP: it mirrors OTF2's own concepts (archive,
//! global and local definitions, event and snapshot writers, readers) and could be published as
//! a crate of its own. Byte layouts follow the OTF2 3.0 format; where libotf2 has a choice
//! (chunk breaks, length forms, when to repeat a timestamp) this writer makes the same one.

pub mod anchor;
pub mod archive;
pub mod archive_lock;
pub mod background;
pub mod chunk;
pub mod chunk_buffer;
pub mod chunk_file;
pub mod cube;
pub mod defs;
pub mod directory;
pub mod events;
#[cfg(all(test, target_os = "linux"))]
mod page_cache_probe;
pub mod profile_unify;
pub mod reader;
pub mod records;
pub mod recovery;
pub mod regular_file;
pub mod types;
pub mod unify;
pub mod wire;

pub use anchor::Anchor;
pub use archive::{ArchiveConfig, ArchiveWriter};
pub use background::{BackgroundSink, BackgroundWriter, NoHooks, StreamFrom, WriterHooks};
pub use chunk::{ChunkSink, FileSink, VecSink};
pub use chunk_buffer::ChunkBuffer;
pub use chunk_file::ChunkFile;
pub use defs::{GlobalDefWriter, LocalDefWriter};
pub use directory::{Directory, Existing};
pub use events::{
    region_event_bytes, EncodedU32, EventWriter, PreparedRecords, SnapWriter, TimedChunks,
};
pub use reader::{ArchiveReader, EventRecord, ReadError, SnapshotRecord};
pub use records::{Event, GlobalDef, LocalDef, Record, SnapRecord};
pub use types::*;

/// Framing byte that starts a TIMESTAMP record in event and snapshot files.
pub const TIMESTAMP: u8 = 0x05;
/// Framing byte that starts an attribute list in event and snapshot files.
pub const ATTRIBUTE_LIST: u8 = 0x06;

/// A unit test's directory, `<name>-<pid>` in the system's temporary directory (created).
#[cfg(test)]
pub(crate) fn test_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A unit test's directory on a disk that takes direct writes: `<name>-<pid>` in the crate's
/// target directory (created), where the system's temporary directory may be tmpfs.
#[cfg(test)]
pub(crate) fn disk_test_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(all(test, target_os = "linux"))]
pub(crate) use page_cache_probe::cached_pages;
