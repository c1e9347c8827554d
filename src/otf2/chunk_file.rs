//! A chunked file that keeps no descriptor open: every chunk is written with its own
//! open/pwrite/close at the chunk's offset.
//!
//! A program may close any descriptor (e.g. 3..1023 before it opens its own files) and any
//! number of locations may exist; a descriptor held between writes could end up pointing at the
//! program's file or run the process out of descriptors. A chunk that cannot be written whole
//! (no space left) is cut off again, so the file only ever holds whole chunks.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct ChunkFile {
    path: PathBuf,
}

impl ChunkFile {
    /// Creates (or empties) the file at `path`.
    pub fn create(path: &Path) -> io::Result<Self> {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `bytes` at `offset`; on failure the file is cut back to `offset`.
    pub fn write_at(&self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        // std opens with O_CLOEXEC: a program that execs keeps none of our files either.
        let file = OpenOptions::new().write(true).open(&self.path)?;
        let result = file.write_all_at(bytes, offset);
        if result.is_err() {
            cut_back(&file, offset);
        }
        result
    }
}

fn cut_back(file: &File, offset: u64) {
    // Best effort: a device such as /dev/full cannot be truncated, and then nothing was written.
    let _ = file.set_len(offset);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_land_at_their_offsets_and_a_full_device_is_an_error() {
        let dir = crate::otf2::test_dir("chunk-file");
        let f = ChunkFile::create(&dir.join("a.evt")).unwrap();
        f.write_at(8, b"second").unwrap();
        f.write_at(0, b"first").unwrap();
        let bytes = std::fs::read(f.path()).unwrap();
        assert_eq!(&bytes[..5], b"first");
        assert_eq!(&bytes[8..], b"second");

        std::os::unix::fs::symlink("/dev/full", dir.join("full.evt")).unwrap();
        let full = ChunkFile {
            path: dir.join("full.evt"),
        };
        let e = full.write_at(0, b"chunk").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
