//! Opening a trace's files for reading: only regular files, and their size known before the
//! first byte is read.
//!
//! A FIFO or a device under a trace file's name would hang a reader (opening a FIFO for
//! reading waits for a writer; reading a terminal waits for input) or feed it without end
//! (`/dev/zero`). The type is checked on the name before opening, so a device is never opened,
//! and again on the open file, which is opened with `O_NONBLOCK` so that a FIFO swapped in
//! between the two cannot block the open (on a regular file the flag changes nothing).

use std::fs::{File, FileType, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Opens `path` for reading if it is a regular file (symbolic links followed), with its length.
/// Anything else is refused with an `InvalidInput` error naming what it is.
pub fn open_regular(path: &Path) -> io::Result<(File, u64)> {
    refuse_unless_regular(std::fs::metadata(path)?.file_type())?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let metadata = file.metadata()?;
    refuse_unless_regular(metadata.file_type())?;
    Ok((file, metadata.len()))
}

/// `Err` naming the kind of file unless `file_type` is a regular file's.
pub fn refuse_unless_regular(file_type: FileType) -> io::Result<()> {
    match not_regular(file_type) {
        None => Ok(()),
        Some(kind) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {kind}, not a regular file"),
        )),
    }
}

/// What a file that is not a regular file is ("a FIFO", "a directory", ...); None for a
/// regular file.
pub fn not_regular(file_type: FileType) -> Option<&'static str> {
    if file_type.is_file() {
        None
    } else if file_type.is_dir() {
        Some("a directory")
    } else if file_type.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else if file_type.is_socket() {
        Some("a socket")
    } else {
        Some("a special file")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_fifo_a_device_and_a_directory_are_refused_at_once_and_a_file_opens_with_its_length() {
        let dir = crate::test_dir("regular-file");
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `name` is a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let started = Instant::now();
        for (path, kind) in [
            (fifo.as_path(), "a FIFO"),
            (Path::new("/dev/zero"), "a character device"),
            (dir.as_path(), "a directory"),
        ] {
            let e = open_regular(path).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{path:?}: {e}");
            assert!(e.to_string().starts_with(&format!("is {kind}")), "{e}");
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        let file = dir.join("file");
        std::fs::write(&file, b"12345").unwrap();
        assert_eq!(open_regular(&file).unwrap().1, 5);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
