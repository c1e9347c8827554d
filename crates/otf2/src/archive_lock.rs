//! The lock that makes one process the only writer of an archive: `flock` on a lock file in the
//! archive's directory, held for the writer's life, with the holder's process id inside so that
//! a second process can say who has it. A writer that ends normally removes the file; one that
//! is killed leaves it, unlocked.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;

use super::directory::Directory;

pub struct ArchiveLock {
    file: Option<File>,
    dir: Directory,
    name: String,
    /// Identity of the lock file: the program may close our descriptor and get the number
    /// back for a file of its own, which we must then not close.
    identity: (u64, u64),
}

impl ArchiveLock {
    /// Takes the lock file `name` in `dir` without waiting; [`io::ErrorKind::WouldBlock`]
    /// naming the holder's process id if another process has it.
    pub fn take(dir: &Directory, name: &str) -> io::Result<Self> {
        // A holder that ends removes the file after taking it over: a lock taken on the
        // removed file is taken again on the new one.
        loop {
            let lock = Self::take_file(dir, name)?;
            if dir.identity_of(name) == Some(lock.identity) {
                return Ok(lock);
            }
        }
    }

    fn take_file(dir: &Directory, name: &str) -> io::Result<Self> {
        let mut file = dir.open_file(name, libc::O_RDWR | libc::O_CREAT, 0o666)?;
        // SAFETY: flock only reads the descriptor, which `file` keeps open during the call.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::WouldBlock {
                return Err(e);
            }
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                match holder(&mut file) {
                    Some(pid) => format!("in use by process {pid}"),
                    None => "in use by another process".to_string(),
                },
            ));
        }
        file.set_len(0)?;
        file.rewind()?;
        write!(file, "{}", std::process::id())?;
        let md = file.metadata()?;
        Ok(Self {
            file: Some(file),
            dir: dir.clone(),
            name: name.to_string(),
            identity: (md.dev(), md.ino()),
        })
    }

    /// Lets go of the lock at a normal end, removing the lock file while still holding it.
    pub fn release(self) {
        if self.file.is_some() && self.dir.identity_of(&self.name) == Some(self.identity) {
            let _ = self.dir.remove_file(&self.name);
        }
    }
}

/// The holder's process id; it writes it just after taking the lock, so an empty file is given
/// a few milliseconds.
fn holder(file: &mut File) -> Option<u32> {
    for _ in 0..100 {
        let mut text = String::new();
        if file.rewind().is_ok() && file.read_to_string(&mut text).is_ok() {
            if let Ok(pid) = text.trim().parse() {
                return Some(pid);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    None
}

impl Drop for ArchiveLock {
    fn drop(&mut self) {
        let Some(file) = self.file.take() else {
            return;
        };
        match file.metadata() {
            Ok(md) if (md.dev(), md.ino()) == self.identity => drop(file),
            // Closed by the program and perhaps reused: the descriptor is not ours to close
            // (and the lock went with our descriptor).
            _ => std::mem::forget(file),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_refused_with_the_holders_pid_until_the_first_lets_go() {
        let top = crate::test_dir("archive-lock");
        let dir = Directory::open(&top).unwrap();
        let path = top.join(".traces.lock");
        let first = ArchiveLock::take(&dir, ".traces.lock").unwrap();
        // flock locks belong to the open file: a second open in this process conflicts too.
        let e = ArchiveLock::take(&dir, ".traces.lock")
            .err()
            .expect("second lock refused");
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        assert!(
            e.to_string()
                .contains(&format!("process {}", std::process::id())),
            "{e}"
        );
        drop(first);
        let second = ArchiveLock::take(&dir, ".traces.lock").expect("free again");
        assert!(
            path.exists(),
            "a lock dropped without release leaves its file"
        );
        second.release();
        assert!(!path.exists(), "a released lock removes its file");
        ArchiveLock::take(&dir, ".traces.lock")
            .expect("taken again")
            .release();
        std::fs::remove_dir_all(&top).unwrap();
    }
}
