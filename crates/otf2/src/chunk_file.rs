//! A chunked file that keeps no descriptor open: every chunk is written with its own
//! open/pwrite/close at the chunk's offset, relative to its verified directory and never
//! through a symbolic link (see `directory.rs`).
//!
//! A program may close any descriptor (e.g. 3..1023 before it opens its own files) and any
//! number of locations may exist; a descriptor held between writes could end up pointing at the
//! program's file or run the process out of descriptors. A chunk that cannot be written whole
//! (no space left) is cut off again, so the file only ever holds whole chunks.
//!
//! On a local disk file system that takes them, whole pages at page offsets are written with
//! `O_DIRECT`: from the buffer to the device, without a copy into the page cache. Measured on
//! the development VM (ext4 on a virtio disk, 1 MiB writes from a buffer used before,
//! `chunk_memory_bench`): 0.06–0.07 ns of CPU per byte, against 0.16 for a buffered write,
//! which allocates and fills page cache (and 0.35 to tmpfs). Other file systems are written
//! as before (see `takes_direct_writes`); so is a write that is not whole pages.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::directory::Directory;

/// The unit of a direct write: its buffer, length and offset are multiples of it. The base
/// page size: at least the logical block size of the devices this runs on.
const DIRECT_UNIT: usize = 4096;

#[derive(Debug)]
pub struct ChunkFile {
    dir: Directory,
    name: String,
    path: PathBuf,
    /// Whole pages go to the device directly (`O_DIRECT`).
    direct: bool,
    /// (device, inode) of the file created: a descriptor that names anything else is not ours.
    identity: Option<(u64, u64)>,
}

impl ChunkFile {
    /// Creates the file `name` in `dir`; it must not exist yet.
    pub fn create_in(dir: &Directory, name: &str) -> io::Result<Self> {
        let file = dir.create_new_file(name)?;
        Ok(Self {
            dir: dir.clone(),
            name: name.to_string(),
            path: dir.join(name),
            direct: takes_direct_writes(&file),
            identity: identity(&file),
        })
    }

    /// Creates the file at `path` (in an existing directory of this user's); it must not
    /// exist yet.
    pub fn create(path: &Path) -> io::Result<Self> {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is no file path", path.display()),
            ));
        };
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        Self::create_in(&Directory::open(parent)?, &name.to_string_lossy())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether chunk files created in `dir` will write directly (`writes_directly`), found with
    /// a probe file that is removed again.
    pub fn directory_takes_direct_writes(dir: &Directory) -> bool {
        let probe = format!(".direct-write-probe-{}", std::process::id());
        let Ok(file) = dir.create_new_file(&probe) else {
            return false;
        };
        let direct = takes_direct_writes(&file);
        drop(file);
        let _ = dir.remove_file(&probe);
        direct
    }

    /// Whether whole pages are written to the device directly, bypassing the page cache:
    /// writing then costs little CPU time and the buffer can be used again at once.
    pub fn writes_directly(&self) -> bool {
        self.direct
    }

    /// Writes `bytes` at `offset`; on failure the file is cut back to `offset`.
    ///
    /// It may run on a thread of the program, whose descriptors the program may close and
    /// reuse at any moment (see `use_own_descriptor_table`): the descriptor is checked to name
    /// this file right after it is opened and again before it is closed, so that nothing is
    /// written into, cut back or closed on a file of the program's that took its number
    /// before the check. (A reuse between the check and the write itself cannot be seen.)
    pub fn write_at(&self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        self.write_at_with(offset, bytes, true)
    }

    /// `write_at` through the page cache even where the file takes direct writes: the write
    /// costs more CPU time (a copy) but returns without waiting for the device, which is what
    /// counts when the writing thread is one the program waits for.
    pub fn write_at_through_cache(&self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        self.write_at_with(offset, bytes, false)
    }

    fn write_at_with(&self, offset: u64, bytes: &[u8], direct: bool) -> io::Result<()> {
        if direct && self.direct && whole_pages(offset, bytes) {
            match self
                .open_ours(true)
                .and_then(|file| self.write_or_cut_back(file, offset, bytes))
            {
                // A file system that took O_DIRECT at open may still refuse a write (EINVAL,
                // e.g. a device with larger blocks): the same write without it.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
                result => return result,
            }
        }
        self.write_or_cut_back(self.open_ours(false)?, offset, bytes)
    }

    /// The file, opened for writing, on a descriptor checked to name it.
    fn open_ours(&self, direct: bool) -> io::Result<File> {
        for _ in 0..3 {
            let file = self.open(direct)?;
            if self.names_this_file(&file) {
                return Ok(file);
            }
            // Closed and reused by the program since the open: the number is its now.
            std::mem::forget(file);
        }
        Err(io::Error::other(format!(
            "{}: the program keeps closing and reusing our descriptors",
            self.path.display()
        )))
    }

    fn names_this_file(&self, file: &File) -> bool {
        self.identity.is_none() || identity(file) == self.identity
    }

    fn write_or_cut_back(&self, file: File, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let result = file.write_all_at(bytes, offset);
        if !self.names_this_file(&file) {
            // Not ours any more: neither cut back nor closed here.
            std::mem::forget(file);
            return result.and(Err(io::Error::other(format!(
                "{}: the program closed and reused our descriptor during a write",
                self.path.display()
            ))));
        }
        if result.is_err() {
            cut_back(&file, offset);
        }
        result
    }

    fn open(&self, direct: bool) -> io::Result<File> {
        // With O_CLOEXEC (`open_file`): a program that execs keeps none of our files either.
        let direct = if direct { libc::O_DIRECT } else { 0 };
        self.dir.open_file(&self.name, libc::O_WRONLY | direct, 0)
    }
}

/// (device, inode) of an open file.
fn identity(file: &File) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().ok().map(|md| (md.dev(), md.ino()))
}

/// A write `O_DIRECT` takes: buffer, length and offset on unit boundaries.
fn whole_pages(offset: u64, bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && (bytes.as_ptr() as usize) % DIRECT_UNIT == 0
        && bytes.len() % DIRECT_UNIT == 0
        && offset % DIRECT_UNIT as u64 == 0
}

/// Local disk file systems, by `statfs` magic number, whose direct writes go to the device
/// without a round trip per request: ext2/3/4, xfs, btrfs, f2fs, zfs, and overlayfs (which
/// hands them to the file system under it, often one of those).
const LOCAL_DISK_FILE_SYSTEMS: [u32; 6] = [
    0xEF53,
    0x5846_5342,
    0x9123_683E,
    0xF2F5_2010,
    0x2FC1_2FC1,
    0x794C_7630,
];

/// Whether `file` is on a local disk file system that takes `O_DIRECT`. Others keep
/// buffered writes: a memory file system (tmpfs) gains nothing, its files are page cache; on a
/// network or parallel one (NFS, Lustre, GPFS, BeeGFS) a direct write waits for its own round
/// trip, which the one writer thread would serialise, while the page cache lets the client
/// write back many at once; an unknown one is left as it was.
fn takes_direct_writes(file: &File) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let mut fs = std::mem::MaybeUninit::<libc::statfs>::zeroed();
        // SAFETY: `file` is an open descriptor and `fs` has room for one statfs.
        if unsafe { libc::fstatfs(file.as_raw_fd(), fs.as_mut_ptr()) } != 0 {
            return false;
        }
        // SAFETY: fstatfs succeeded and filled it in. (f_type's width differs between
        // targets; the magic numbers are 32-bit.)
        let kind = unsafe { fs.assume_init() }.f_type as u32;
        if !LOCAL_DISK_FILE_SYSTEMS.contains(&kind) {
            return false;
        }
        // Setting O_DIRECT on the open descriptor fails (EINVAL) where the file system does
        // not take it: no second open to find out.
        // SAFETY: F_GETFL/F_SETFL only read and set the status flags of an open descriptor
        // that is ours alone (it is dropped after this probe).
        unsafe {
            let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            flags != -1 && libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags | libc::O_DIRECT) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        false
    }
}

/// Gives the calling thread a descriptor table of its own, for a thread that opens, writes and
/// closes files while the program runs. A program may close every descriptor (a daemon, some
/// job launchers) and open its own files meanwhile: in a shared table it could close one of ours
/// between our open and our write, and the number could then name the program's new file, which
/// we would write into or close. In a table of its own nothing the program does reaches our
/// descriptors, nor ours its. The table starts as a copy of the process's: every descriptor but
/// the standard streams (kept for messages) is closed in it at once, so that none of the
/// program's files stays open on our account. Where the system refuses (a seccomp filter), the
/// thread goes on with the shared table.
pub fn use_own_descriptor_table() {
    #[cfg(target_os = "linux")]
    // SAFETY: unshare only detaches the calling thread's descriptor table; the closes act on
    // that private copy, in which this thread (just started) holds nothing of its own.
    unsafe {
        if libc::unshare(libc::CLONE_FILES) != 0 {
            return;
        }
        // close_range (Linux 5.9) through syscall: no glibc 2.34 symbol needed.
        if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) != 0 {
            close_listed_descriptors();
        }
    }
}

/// Closes the calling thread's descriptors above the standard streams that its table lists
/// (for kernels without close_range: a loop up to the limit could be a million closes).
#[cfg(target_os = "linux")]
fn close_listed_descriptors() {
    let listed: Vec<libc::c_int> = std::fs::read_dir("/proc/thread-self/fd")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .filter(|&fd| fd > 2)
                .collect()
        })
        .unwrap_or_default();
    for fd in listed {
        // SAFETY: called only on a thread's own descriptor table, where nothing else holds
        // these; the listing's own descriptor is among them, already closed (EBADF, harmless).
        unsafe { libc::close(fd) };
    }
}

fn cut_back(file: &File, offset: u64) {
    // Best effort: a device such as /dev/full cannot be truncated, and then nothing was written.
    let _ = file.set_len(offset);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_with_its_own_descriptor_table_neither_sees_nor_shows_the_programs() {
        use std::os::fd::AsRawFd;
        let dir = crate::test_dir("own-descriptors");
        let program_file = File::create(dir.join("program.txt")).unwrap();
        let program_fd = program_file.as_raw_fd();
        let inode = |fd: libc::c_int| {
            let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
            // SAFETY: `st` has room for one stat; an unknown fd only makes fstat fail.
            (unsafe { libc::fstat(fd, st.as_mut_ptr()) } == 0)
                // SAFETY: fstat succeeded and filled it in.
                .then(|| unsafe { st.assume_init() }.st_ino)
        };
        let program_inode = inode(program_fd).unwrap();
        let ours_path = dir.join("ours.evt");
        let (ours_fd, ours_inode, seen_from_thread) = std::thread::spawn({
            let ours_path = ours_path.clone();
            move || {
                use_own_descriptor_table();
                let seen = inode(program_fd);
                let ours = File::create(&ours_path).unwrap();
                let fd = ours.as_raw_fd();
                let ino = inode(fd).unwrap();
                // Kept open after the thread ends: the table goes with the thread.
                std::mem::forget(ours);
                (fd, ino, seen)
            }
        })
        .join()
        .unwrap();
        assert_ne!(
            seen_from_thread,
            Some(program_inode),
            "the program's file was visible"
        );
        assert_ne!(
            inode(ours_fd),
            Some(ours_inode),
            "our file was visible to the program"
        );
        assert_eq!(inode(program_fd), Some(program_inode));
        drop(program_file);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn without_close_range_the_listed_descriptors_are_closed() {
        use std::os::fd::IntoRawFd;
        let dir = crate::test_dir("listed-descriptors");
        let path = dir.join("open.txt");
        let still_open = std::thread::spawn(move || {
            // SAFETY: detaches this thread's table only.
            assert_eq!(unsafe { libc::unshare(libc::CLONE_FILES) }, 0);
            let fd = File::create(&path).unwrap().into_raw_fd();
            close_listed_descriptors();
            // SAFETY: F_GETFD only reads the descriptor's flags.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            flags != -1
        })
        .join()
        .unwrap();
        assert!(!still_open);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn whole_pages_go_to_a_disk_directly_and_the_rest_through_the_page_cache() {
        // The crate's target directory is on a disk; /dev/shm is tmpfs.
        let dir = crate::disk_test_dir("chunk-file-direct");
        assert!(ChunkFile::directory_takes_direct_writes(
            &Directory::open(&dir).unwrap()
        ));
        let f = ChunkFile::create(&dir.join("a.evt")).unwrap();
        assert!(f.writes_directly(), "{}", dir.display());

        const CHUNK: usize = 64 * 1024;
        let mut whole = crate::ChunkBuffer::zeroed(CHUNK);
        whole
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = (i % 251) as u8);
        f.write_at(0, &whole).unwrap();
        f.write_at(CHUNK as u64, &whole[..1000]).unwrap();
        let bytes = std::fs::read(f.path()).unwrap();
        assert_eq!(bytes.len(), CHUNK + 1000);
        assert_eq!(&bytes[..CHUNK], &whole[..]);
        assert_eq!(&bytes[CHUNK..], &whole[..1000]);
        // Reading it back cached every page: write again and look before reading.
        f.write_at(0, &whole).unwrap();
        assert_eq!(
            crate::cached_pages(f.path(), CHUNK),
            0,
            "the whole chunk went through the cache"
        );
        std::fs::remove_dir_all(&dir).unwrap();

        let shm = Path::new("/dev/shm").join(format!("chunk-file-{}", std::process::id()));
        let shm = Directory::create(&shm, 0o700, crate::Existing::Refuse).unwrap();
        assert!(!ChunkFile::directory_takes_direct_writes(&shm));
        let in_memory = ChunkFile::create_in(&shm, "a.evt").unwrap();
        assert!(!in_memory.writes_directly());
        in_memory.write_at(0, &whole).unwrap();
        assert_eq!(std::fs::read(in_memory.path()).unwrap(), &whole[..]);
        std::fs::remove_dir_all(shm.path()).unwrap();
    }

    #[test]
    fn chunks_land_at_their_offsets_and_a_full_device_is_an_error() {
        let dir = crate::test_dir("chunk-file");
        let f = ChunkFile::create(&dir.join("a.evt")).unwrap();
        f.write_at(8, b"second").unwrap();
        f.write_at(0, b"first").unwrap();
        let bytes = std::fs::read(f.path()).unwrap();
        assert_eq!(&bytes[..5], b"first");
        assert_eq!(&bytes[8..], b"second");

        let full = ChunkFile {
            dir: Directory::unchecked(Path::new("/dev")).unwrap(),
            name: "full".into(),
            path: "/dev/full".into(),
            direct: false,
            identity: identity(&File::open("/dev/full").unwrap()),
        };
        let e = full.write_at(0, b"chunk").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_descriptor_that_names_another_file_is_neither_written_nor_closed() {
        let dir = crate::test_dir("chunk-file-identity");
        let mut f = ChunkFile::create(&dir.join("a.evt")).unwrap();
        // As if the program had closed our descriptor and opened its own file on the number
        // each time between our open and our check.
        f.identity = identity(&File::create(dir.join("program.txt")).unwrap());
        let e = f.write_at(0, b"chunk").unwrap_err();
        assert!(e.to_string().contains("reusing our descriptors"), "{e}");
        assert_eq!(std::fs::metadata(f.path()).unwrap().len(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
