//! A directory that files are created in without ever following a symbolic link: experiment
//! directories often live in shared scratch space, where another user could otherwise plant a
//! link at a name the writer is about to use and have a victim file truncated or the trace
//! written elsewhere.
//!
//! A [`Directory`] is identified by its device and inode, taken when it was made or first
//! opened (never through a symbolic link, and only if it belongs to this user and is not
//! writable by others). Every later operation opens it again by path without following links,
//! checks that it is still that directory, and works relative to that descriptor (`openat`,
//! `mkdirat`, `renameat`, `unlinkat`), always with `O_NOFOLLOW`. No descriptor is kept between
//! operations: the program being traced may close any descriptor.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A name for the temporary file that is renamed over `name` once written whole: the writer's
/// own (process and call), so that writers of one name in one directory at once (the ranks of
/// a job, threads) never meet in it.
pub(crate) fn temporary_name(name: &str) -> String {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    )
}

/// How [`Directory::create`] treats a directory that already exists at the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Use it, after checking that it is a directory of this user's that others cannot write.
    Reuse,
    /// Refuse it ([`io::ErrorKind::AlreadyExists`]): the name must be made now, by this call.
    Refuse,
}

/// A directory verified at creation; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directory {
    path: PathBuf,
    device: u64,
    inode: u64,
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))
}

/// One plain name inside a directory: no `/`, not `.` or `..`, not empty.
fn c_name(name: &str) -> io::Result<CString> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a file name"),
        ));
    }
    c_path(Path::new(name))
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn fstat(fd: &OwnedFd) -> io::Result<libc::stat> {
    // SAFETY: an all-zero stat is a valid value for fstat to overwrite.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open (owned), and `st` is writable.
    check(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok(st)
}

/// Why a directory is not one to write into: not this user's, or writable by others.
fn refusal(path: &Path, st: &libc::stat) -> Option<io::Error> {
    // SAFETY: geteuid has no preconditions.
    let user = unsafe { libc::geteuid() };
    let why = if st.st_uid != user {
        format!("belongs to user {}, not to this user ({user})", st.st_uid)
    } else if st.st_mode & 0o002 != 0 {
        "is writable by other users".to_string()
    } else {
        return None;
    };
    Some(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{} {why}", path.display()),
    ))
}

/// Opens the directory `name` relative to `at` (or the path itself with `AT_FDCWD`) without
/// following a link at its last component.
fn open_directory(at: libc::c_int, name: &CString, shown: &Path) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a valid C string; the flags ask for a new descriptor we then own.
    let fd = unsafe {
        libc::openat(
            at,
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        // O_NOFOLLOW on a symbolic link gives ELOOP or, with O_DIRECTORY, ENOTDIR: say which.
        return Err(match e.raw_os_error() {
            Some(libc::ELOOP | libc::ENOTDIR) if is_symbolic_link(at, name) => io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} is a symbolic link", shown.display()),
            ),
            Some(libc::ENOTDIR) => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a directory", shown.display()),
            ),
            _ => e,
        });
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether `name` (relative to `at`) is a symbolic link itself.
fn is_symbolic_link(at: libc::c_int, name: &CString) -> bool {
    // SAFETY: an all-zero stat is valid for fstatat to overwrite.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string; `st` is writable.
    let rc = unsafe { libc::fstatat(at, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    rc == 0 && st.st_mode & libc::S_IFMT == libc::S_IFLNK
}

impl Directory {
    /// Makes the directory at `path` with `mode` (its parents as needed, with the usual
    /// permissions), or with [`Existing::Reuse`] uses the one there. A symbolic link at `path`
    /// is refused either way, as is a directory of another user's or one others can write.
    pub fn create(path: &Path, mode: u32, existing: Existing) -> io::Result<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let c = c_path(path)?;
        // SAFETY: `c` is a valid C string.
        let made = unsafe { libc::mkdir(c.as_ptr(), mode as libc::mode_t) } == 0;
        if !made {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::AlreadyExists || existing == Existing::Refuse {
                return Err(if e.kind() == io::ErrorKind::AlreadyExists {
                    io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        format!("{} already exists", path.display()),
                    )
                } else {
                    e
                });
            }
        }
        let fd = open_directory(libc::AT_FDCWD, &c, path)?;
        Self::verified(path.to_path_buf(), &fd)
    }

    /// The existing directory at `path`, with the same checks as [`create`](Self::create).
    pub fn open(path: &Path) -> io::Result<Self> {
        let fd = open_directory(libc::AT_FDCWD, &c_path(path)?, path)?;
        Self::verified(path.to_path_buf(), &fd)
    }

    fn verified(path: PathBuf, fd: &OwnedFd) -> io::Result<Self> {
        let st = fstat(fd)?;
        if let Some(e) = refusal(&path, &st) {
            return Err(e);
        }
        Ok(Self {
            path,
            device: st.st_dev,
            inode: st.st_ino,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A directory taken as it is, without the owner and permission checks (tests that must
    /// write into a system directory such as `/dev`).
    #[cfg(test)]
    pub(crate) fn unchecked(path: &Path) -> io::Result<Self> {
        let fd = open_directory(libc::AT_FDCWD, &c_path(path)?, path)?;
        let st = fstat(&fd)?;
        Ok(Self {
            path: path.to_path_buf(),
            device: st.st_dev,
            inode: st.st_ino,
        })
    }

    /// The path of `name` inside this directory (for messages and for readers).
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// A descriptor of this directory, opened now; an error if the path no longer leads to it
    /// (replaced, or by a symbolic link).
    fn descriptor(&self) -> io::Result<OwnedFd> {
        let fd = open_directory(libc::AT_FDCWD, &c_path(&self.path)?, &self.path)?;
        let st = fstat(&fd)?;
        if (st.st_dev, st.st_ino) != (self.device, self.inode) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} was replaced while in use", self.path.display()),
            ));
        }
        Ok(fd)
    }

    /// Opens `name` with `flags` (plus `O_NOFOLLOW | O_CLOEXEC`) relative to this directory;
    /// `mode` applies when the file is created.
    pub fn open_file(&self, name: &str, flags: libc::c_int, mode: u32) -> io::Result<File> {
        let c = c_name(name)?;
        let dir = self.descriptor()?;
        // SAFETY: `dir` is open and `c` a valid C string; the result is a new descriptor.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                c.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(if e.raw_os_error() == Some(libc::ELOOP) {
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{} is a symbolic link", self.join(name).display()),
                )
            } else {
                e
            });
        }
        // SAFETY: `fd` was just opened and is owned by nobody else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Creates `name` for writing; it must not exist yet.
    pub fn create_new_file(&self, name: &str) -> io::Result<File> {
        self.open_file(name, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, 0o666)
    }

    /// Creates `name` for writing, or empties the file of this name (never through a link).
    pub fn create_file(&self, name: &str) -> io::Result<File> {
        self.open_file(name, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, 0o666)
    }

    /// Writes `bytes` as the whole content of `name`: into a new temporary file first, renamed
    /// over `name`, so a reader never sees a half-written file. The temporary file's name is
    /// the writer's own (process and call), since the ranks of a job write the same names into
    /// one directory at once; whichever rename comes last stands.
    pub fn write_file_atomically(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        use std::io::Write;
        self.write_file_atomically_with(name, |file| file.write_all(bytes))
    }

    /// [`write_file_atomically`](Self::write_file_atomically) for content that `write` streams
    /// into the new file (and syncs, where it must be on the device before the rename).
    pub fn write_file_atomically_with(
        &self,
        name: &str,
        write: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
        let tmp = temporary_name(name);
        // Left by an earlier process of the same id that died in between.
        let _ = self.remove_file(&tmp);
        let result = self.create_new_file(&tmp).and_then(|mut file| {
            write(&mut file)?;
            drop(file);
            self.rename(&tmp, name)
        });
        if result.is_err() {
            let _ = self.remove_file(&tmp);
        }
        result
    }

    /// The subdirectory `name`, made with `mode` if missing, with the checks of
    /// [`create`](Self::create).
    pub fn subdirectory(&self, name: &str, mode: u32) -> io::Result<Directory> {
        let c = c_name(name)?;
        let dir = self.descriptor()?;
        // SAFETY: `dir` is open and `c` a valid C string.
        if unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) } != 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::AlreadyExists {
                return Err(e);
            }
        }
        let path = self.join(name);
        let fd = open_directory(dir.as_raw_fd(), &c, &path)?;
        Self::verified(path, &fd)
    }

    /// Renames `from` to `to`, both inside this directory.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (from, to) = (c_name(from)?, c_name(to)?);
        let dir = self.descriptor()?;
        let fd = dir.as_raw_fd();
        // SAFETY: both names are valid C strings, relative to the open directory.
        check(unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) }).map(drop)
    }

    /// Removes the file `name` (a link is removed, never followed).
    pub fn remove_file(&self, name: &str) -> io::Result<()> {
        let c = c_name(name)?;
        let dir = self.descriptor()?;
        // SAFETY: a valid C string relative to the open directory.
        check(unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) }).map(drop)
    }

    /// (device, inode) of what has this name here (a link's own, never its target's).
    pub fn identity_of(&self, name: &str) -> Option<(u64, u64)> {
        let (Ok(c), Ok(dir)) = (c_name(name), self.descriptor()) else {
            return None;
        };
        // SAFETY: an all-zero stat is valid for fstatat to overwrite.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid C string relative to the open directory; `st` is writable.
        let rc = unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        (rc == 0).then_some((st.st_dev, st.st_ino))
    }

    /// Whether something (anything, a link included) has this name here.
    pub fn contains(&self, name: &str) -> bool {
        self.identity_of(name).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn scratch(name: &str) -> PathBuf {
        let dir = crate::test_dir(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_planted_link_is_refused_and_its_target_untouched() {
        let top = scratch("directory-links");
        let victim = top.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let target_dir = top.join("elsewhere");
        std::fs::create_dir(&target_dir).unwrap();

        // At the directory's own name.
        symlink(&target_dir, top.join("exp")).unwrap();
        let e = Directory::create(&top.join("exp"), 0o700, Existing::Reuse).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        let e = Directory::create(&top.join("exp"), 0o700, Existing::Refuse).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");

        // At a file's name inside it.
        let dir = Directory::create(&top.join("real"), 0o700, Existing::Refuse).unwrap();
        assert_eq!(
            std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o777,
            0o700
        );
        symlink(&victim, dir.join("0.evt")).unwrap();
        for result in [dir.create_new_file("0.evt"), dir.create_file("0.evt")] {
            assert!(result.is_err());
        }
        // At a subdirectory's name.
        symlink(&target_dir, dir.join("traces")).unwrap();
        assert!(dir
            .subdirectory("traces", 0o700)
            .unwrap_err()
            .to_string()
            .contains("symbolic link"));
        // An atomic write over a link replaces the link, never writes through it.
        dir.write_file_atomically("0.evt", b"ours").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(dir.join("0.evt")).unwrap(), b"ours");
        assert_eq!(std::fs::read_dir(&target_dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn writers_of_one_name_at_once_all_succeed_and_leave_one_whole_file() {
        let top = scratch("atomic-writers");
        let dir = Directory::create(&top.join("exp"), 0o700, Existing::Refuse).unwrap();
        let contents: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'a' + i; 4096]).collect();
        std::thread::scope(|s| {
            for content in &contents {
                let dir = &dir;
                s.spawn(move || {
                    for _ in 0..200 {
                        dir.write_file_atomically("pomptrace.cfg", content).unwrap();
                    }
                });
            }
        });
        let written = std::fs::read(top.join("exp/pomptrace.cfg")).unwrap();
        assert!(contents.contains(&written), "a mixed file");
        let names: Vec<_> = std::fs::read_dir(top.join("exp"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["pomptrace.cfg"], "temporary files left");
        std::fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn a_directory_replaced_while_in_use_is_noticed() {
        let top = scratch("directory-replaced");
        let dir = Directory::create(&top.join("exp"), 0o700, Existing::Refuse).unwrap();
        dir.create_new_file("a").unwrap();
        std::fs::rename(top.join("exp"), top.join("moved")).unwrap();
        std::fs::create_dir(top.join("exp")).unwrap();
        let e = dir.create_new_file("b").unwrap_err();
        assert!(e.to_string().contains("replaced"), "{e}");
        std::fs::remove_dir(top.join("exp")).unwrap();
        symlink(top.join("moved"), top.join("exp")).unwrap();
        assert!(dir.create_new_file("b").is_err());
        assert!(!top.join("moved/b").exists());
        std::fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn a_directory_others_can_write_is_refused() {
        let top = scratch("directory-perms");
        let path = top.join("open");
        std::fs::create_dir(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = Directory::create(&path, 0o700, Existing::Reuse).unwrap_err();
        assert!(e.to_string().contains("writable by other users"), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        Directory::create(&path, 0o700, Existing::Reuse).unwrap();
        assert_eq!(
            Directory::create(&path, 0o700, Existing::Refuse)
                .unwrap_err()
                .kind(),
            io::ErrorKind::AlreadyExists
        );
        std::fs::remove_dir_all(&top).unwrap();
    }
}
