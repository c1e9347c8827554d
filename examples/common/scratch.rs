//! Shared by the examples that run C programs: where their builds and traces go.

use std::path::{Path, PathBuf};

/// A fresh directory for one example run's builds and traces, removed when dropped.
pub struct Scratch {
    /// Builds: under the temp directory.
    pub work: PathBuf,
    /// Traces: in memory (`/dev/shm`) where possible, so that at tens of millions of events
    /// per second the disk, not the recording path, does not set the pace; or under the temp
    /// directory, as a user's traces go.
    pub traces: PathBuf,
}

impl Scratch {
    /// `traces_in_memory`: traces to `/dev/shm` where there is one, else on the temp
    /// directory's file system.
    pub fn new(example: &str, traces_in_memory: bool) -> Self {
        let name = format!("pomptrace-{example}-{}", std::process::id());
        let work = std::env::temp_dir().join(&name);
        let shm = Path::new("/dev/shm");
        let traces = if traces_in_memory && shm.is_dir() {
            shm.join(&name)
        } else {
            work.join("traces")
        };
        for dir in [&work, &traces] {
            std::fs::create_dir_all(dir)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        }
        Self { work, traces }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.traces);
        let _ = std::fs::remove_dir_all(&self.work);
    }
}
