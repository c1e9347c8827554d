//! Archive layout on disk: `DIR/NAME.otf2` (anchor), `DIR/NAME.def` (global definitions) and
//! `DIR/NAME/<L>.evt|.def|.snap` per location; while it is written, `DIR/.NAME.lock` (held by
//! the one process writing it, removed when it has written the archive) and
//! `DIR/.NAME.reserve` (room for the definitions and the anchor on a disk that fills up
//! meanwhile). When several processes write the locations of one archive, each holds `DIR/.NAME.WRITER.lock` and `DIR/.NAME.WRITER.reserve` of its own.

use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use super::anchor::Anchor;
use super::archive_lock::ArchiveLock;
use super::background::{BackgroundSink, BackgroundWriter};
use super::chunk::{validate_chunk_size, ChunkBuffer, FileSink};
use super::chunk_file::ChunkFile;
use super::defs::{GlobalDefWriter, LocalDefWriter};
use super::directory::{Directory, Existing};
use super::events::{EventWriter, SnapWriter};

/// Disk space set aside at the start for the definitions and the anchor, given back just before
/// they are written: a trace whose events filled the disk can still be finished (or recovered).
const RESERVE_BYTES: usize = 256 * 1024;

/// Settings fixed for the whole archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchiveConfig {
    pub event_chunk_size: usize,
    pub def_chunk_size: usize,
    pub machine_name: String,
    pub creator: String,
    pub description: String,
    /// Anchor properties, names like `POMPTRACE::VERSION`.
    pub properties: Vec<(String, String)>,
    pub trace_id: u64,
}

impl Default for ArchiveConfig {
    /// libotf2's defaults: 1 MiB event chunks, 4 MiB definition chunks.
    fn default() -> Self {
        Self {
            event_chunk_size: 1024 * 1024,
            def_chunk_size: 4 * 1024 * 1024,
            machine_name: String::new(),
            creator: String::new(),
            description: String::new(),
            properties: Vec::new(),
            trace_id: 0,
        }
    }
}

/// Writes one archive. Event and snapshot files are streamed as they are written; definitions
/// and the anchor are written by [`ArchiveWriter::finish`].
pub struct ArchiveWriter {
    dir: Directory,
    /// `DIR/NAME/`, the locations' files.
    locations: Directory,
    name: String,
    config: ArchiveConfig,
    snapshots: u32,
    /// `NAME`, or `NAME.WRITER` for one of several writers: names the lock and the reserve.
    writer_stem: String,
    lock: ArchiveLock,
}

impl ArchiveWriter {
    /// Creates `dir` (and parents) and `dir/name/`, and takes the archive's lock for as long as
    /// the writer lives. Fails if `dir/name.otf2` already exists, so an existing trace is never
    /// overwritten, and with [`io::ErrorKind::WouldBlock`] (naming the process) while another
    /// process writes the same archive.
    pub fn create(dir: &Path, name: &str, config: ArchiveConfig) -> io::Result<Self> {
        Self::create_in(
            Directory::create(dir, 0o777, Existing::Reuse)?,
            name,
            config,
        )
    }

    /// [`create`](Self::create) in a directory made or checked by the caller (see
    /// [`Directory`]): no file of the archive is ever created through a symbolic link.
    pub fn create_in(dir: Directory, name: &str, config: ArchiveConfig) -> io::Result<Self> {
        Self::create_for(dir, name, config, name.to_string())
    }

    /// [`create`](Self::create) for one of several processes that each write their own
    /// locations of the archive, `writer` naming this one: the writers do not lock each other
    /// out (a second process as the same `writer` is), and the anchor and global definitions
    /// are written by other means (this writer ends with [`close_unanchored`](Self::close_unanchored)).
    pub fn create_shared(
        dir: &Path,
        name: &str,
        config: ArchiveConfig,
        writer: &str,
    ) -> io::Result<Self> {
        let dir = Directory::create(dir, 0o777, Existing::Reuse)?;
        Self::create_shared_in(dir, name, config, writer)
    }

    /// [`create_shared`](Self::create_shared) in a directory made or checked by the caller.
    pub fn create_shared_in(
        dir: Directory,
        name: &str,
        config: ArchiveConfig,
        writer: &str,
    ) -> io::Result<Self> {
        if writer.is_empty() || writer.contains('/') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "bad archive writer name",
            ));
        }
        Self::create_for(dir, name, config, format!("{name}.{writer}"))
    }

    fn create_for(
        dir: Directory,
        name: &str,
        config: ArchiveConfig,
        writer_stem: String,
    ) -> io::Result<Self> {
        validate_chunk_size(config.event_chunk_size)?;
        validate_chunk_size(config.def_chunk_size)?;
        if name.is_empty() || name.contains('/') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "bad archive name",
            ));
        }
        let lock = ArchiveLock::take(&dir, &format!(".{writer_stem}.lock"))?;
        if dir.contains(&format!("{name}.otf2")) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} already exists",
                    dir.join(&format!("{name}.otf2")).display()
                ),
            ));
        }
        let locations = dir.subdirectory(name, 0o777)?;
        let writer = Self {
            dir,
            locations,
            name: name.to_string(),
            config,
            snapshots: 0,
            writer_stem,
            lock,
        };
        writer.reserve_space()?;
        Ok(writer)
    }

    fn reserve_name(&self) -> String {
        format!(".{}.reserve", self.writer_stem)
    }

    /// The archive's directory, made or checked when the writer was created.
    pub fn directory(&self) -> &Directory {
        &self.dir
    }

    /// Ends the writer without writing the anchor and the global definitions (something else
    /// writes them, e.g. after merging several processes' definitions): its location files
    /// stay, its disk reserve is given back and its lock released.
    pub fn close_unanchored(self) {
        self.release_reserve();
        self.lock.release();
    }

    /// Gives back the disk space set aside at the start (done by [`finish`](Self::finish)
    /// anyway): for a writer that must end a file on a disk that filled up.
    pub fn release_reserve(&self) {
        let _ = self.dir.remove_file(&self.reserve_name());
    }

    /// Sets [`RESERVE_BYTES`] aside, unless a reserve is already there (left by a killed run).
    fn reserve_space(&self) -> io::Result<()> {
        let file =
            self.dir
                .open_file(&self.reserve_name(), libc::O_WRONLY | libc::O_CREAT, 0o666)?;
        if file.metadata()?.len() >= RESERVE_BYTES as u64 {
            return Ok(());
        }
        // SAFETY: posix_fallocate only takes the descriptor, which `file` keeps open, and a range.
        if unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, RESERVE_BYTES as libc::off_t) } == 0
        {
            return Ok(());
        }
        // Written, not just sized, where the file system cannot allocate: a hole reserves
        // nothing.
        file.write_all_at(&vec![0u8; RESERVE_BYTES], 0)
    }

    pub fn config(&self) -> &ArchiveConfig {
        &self.config
    }
    pub fn anchor_path(&self) -> PathBuf {
        self.dir.join(&format!("{}.otf2", self.name))
    }
    pub fn global_def_path(&self) -> PathBuf {
        self.dir.join(&format!("{}.def", self.name))
    }
    pub fn location_dir(&self) -> PathBuf {
        self.locations.path().to_path_buf()
    }
    /// `DIR/NAME/`, where the locations' files are.
    pub fn location_directory(&self) -> &Directory {
        &self.locations
    }
    pub fn event_path(&self, location: u64) -> PathBuf {
        self.locations.join(&event_name(location))
    }
    pub fn local_def_path(&self, location: u64) -> PathBuf {
        self.locations.join(&local_def_name(location))
    }
    pub fn snap_path(&self, location: u64) -> PathBuf {
        self.locations.join(&snap_name(location))
    }

    pub fn event_writer(&self, location: u64) -> io::Result<EventWriter<FileSink>> {
        let file = ChunkFile::create_in(&self.locations, &event_name(location))?;
        Ok(EventWriter::new(
            self.config.event_chunk_size,
            FileSink::new(file),
        ))
    }

    /// An event writer whose full chunks are written by `writer`'s thread, with at most
    /// `buffers` chunks of `memory_chunk_size` bytes (at most the archive's event chunk size;
    /// smaller chunks are padded in the file) of this location in memory.
    pub fn background_event_writer(
        &self,
        location: u64,
        writer: &BackgroundWriter,
        memory_chunk_size: usize,
        buffers: usize,
    ) -> io::Result<EventWriter<BackgroundSink>> {
        let file = ChunkFile::create_in(&self.locations, &event_name(location))?;
        let file_chunk = self.config.event_chunk_size;
        let size = memory_chunk_size.min(file_chunk);
        // The buffer of a finished location, if the writer keeps one (see `give_back`).
        let first = writer
            .spare_buffer(size)
            .unwrap_or_else(|| ChunkBuffer::zeroed(size));
        Ok(EventWriter::with_buffer(
            first,
            writer.sink(file, size, file_chunk, buffers),
        ))
    }

    /// Snapshots use the event chunk size. Call [`ArchiveWriter::set_snapshot_count`] too.
    pub fn snap_writer(&self, location: u64) -> io::Result<SnapWriter<FileSink>> {
        let file = ChunkFile::create_in(&self.locations, &snap_name(location))?;
        Ok(SnapWriter::new(
            self.config.event_chunk_size,
            FileSink::new(file),
        ))
    }

    /// With a count > 0 readers open `<L>.snap` for every location; [`ArchiveWriter::finish`]
    /// writes empty ones where missing.
    pub fn set_snapshot_count(&mut self, snapshots: u32) {
        self.snapshots = snapshots;
    }

    pub fn local_def_writer(&self) -> LocalDefWriter {
        LocalDefWriter::new(self.config.def_chunk_size)
    }

    pub fn global_def_writer(&self) -> GlobalDefWriter {
        GlobalDefWriter::new(self.config.def_chunk_size)
    }

    pub fn write_local_defs(&self, location: u64, defs: LocalDefWriter) -> io::Result<()> {
        self.locations
            .write_file_atomically(&local_def_name(location), &defs.finish())
    }

    /// Writes the global definitions, fills in the files readers require for every location
    /// (empty `.evt`, `.def` and, with snapshots, `.snap`), and writes the anchor last.
    pub fn finish(self, defs: GlobalDefWriter, locations: &[u64]) -> io::Result<Anchor> {
        let mut anchor = Anchor::new(
            self.config.event_chunk_size as u64,
            self.config.def_chunk_size as u64,
        );
        anchor.number_of_locations = defs.locations();
        anchor.number_of_global_defs = defs.records();
        anchor.machine_name = self.config.machine_name.clone();
        anchor.creator = self.config.creator.clone();
        anchor.description = self.config.description.clone();
        anchor.properties = self.config.properties.clone();
        anchor.trace_id = self.config.trace_id;
        anchor.number_of_snapshots = self.snapshots;
        self.release_reserve();
        self.dir
            .write_file_atomically(&format!("{}.def", self.name), &defs.finish())?;
        for &location in locations {
            if !self.locations.contains(&event_name(location)) {
                let (_, result) = self.event_writer(location)?.finish();
                result?;
            }
            if !self.locations.contains(&local_def_name(location)) {
                self.write_local_defs(location, self.local_def_writer())?;
            }
            if self.snapshots > 0 && !self.locations.contains(&snap_name(location)) {
                let (_, result) = self.snap_writer(location)?.finish();
                result?;
            }
        }
        // Last, and whole (write-then-rename): a reader never sees a half-written anchor.
        self.dir
            .write_file_atomically(&format!("{}.otf2", self.name), &anchor.encode())?;
        self.lock.release();
        Ok(anchor)
    }
}

fn event_name(location: u64) -> String {
    format!("{location}.evt")
}
fn local_def_name(location: u64) -> String {
    format!("{location}.def")
}
fn snap_name(location: u64) -> String {
    format!("{location}.snap")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_writers_lock_out_only_their_own_name_and_leave_no_reserve() {
        let dir = std::env::temp_dir().join(format!("archive-shared-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let config = ArchiveConfig::default;
        let rank0 = ArchiveWriter::create_shared(&dir, "traces", config(), "rank0").unwrap();
        let rank1 = ArchiveWriter::create_shared(&dir, "traces", config(), "rank1").unwrap();
        let again = ArchiveWriter::create_shared(&dir, "traces", config(), "rank1");
        assert_eq!(
            again.err().map(|e| e.kind()),
            Some(io::ErrorKind::WouldBlock)
        );
        // A single writer of the whole archive is not kept out by the shared ones' locks.
        drop(ArchiveWriter::create(&dir, "traces", config()).unwrap());
        assert!(dir.join(".traces.rank1.reserve").exists());
        rank1.close_unanchored();
        assert!(!dir.join(".traces.rank1.reserve").exists());
        assert!(dir.join(".traces.rank0.reserve").exists());
        ArchiveWriter::create_shared(&dir, "traces", config(), "rank1").expect("free again");
        drop(rank0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
