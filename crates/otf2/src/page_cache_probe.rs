//! Test support, shared with the runtime's integration tests (`tests/support`): which pages of
//! a file are in the page cache, to tell a direct write from a buffered one.

use std::os::fd::AsRawFd;
use std::path::Path;

/// Pages (4 KiB) of the first `len` bytes of `path` that are in the page cache.
pub fn cached_pages(path: &Path, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    let file = std::fs::File::open(path).unwrap();
    // SAFETY: a new shared read-only mapping of an open file, unmapped below; mincore writes
    // one byte per page into `resident`, which has room for every page.
    unsafe {
        let map = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(map, libc::MAP_FAILED);
        let mut resident = vec![0u8; len.div_ceil(4096)];
        assert_eq!(libc::mincore(map, len, resident.as_mut_ptr()), 0);
        libc::munmap(map, len);
        resident.iter().filter(|&&r| r & 1 != 0).count()
    }
}
