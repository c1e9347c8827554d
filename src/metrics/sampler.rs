//! Asynchronous metrics (`POMPTRACE_SAMPLING_INTERVAL`): a thread of its own samples process
//! metrics (resident size, CPU time, I/O bytes) once per interval and records them on a
//! location of type METRIC, through a metric class with a MetricClassRecorder. The recording
//! threads are never touched.
//!
//! The location's id is only known at the end (after every thread location), so its events go
//! to a file of their own that the end of the measurement renames to `<id>.evt`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::base::clock;
use crate::base::helper_threads;
use crate::metrics::synchronous::Member;
use otf2::{EventWriter, FileSink, MetricMode, MetricType, TypedValue};

/// What the sampler records, in value order.
pub const MEMBERS: [Member; 4] = [
    Member {
        mode: MetricMode::ABSOLUTE_POINT,
        ..Member::counter(
            "resident_set_size",
            "Resident set size of the process (/proc/self/statm)",
            "B",
            MetricType::OTHER,
        )
    },
    Member::counter(
        "process_cpu_time",
        "User and system CPU time of all threads of the process",
        "usec",
        MetricType::RUSAGE,
    ),
    Member::counter(
        "read_bytes",
        "Bytes the process read through read-like calls (/proc/self/io rchar)",
        "B",
        MetricType::OTHER,
    ),
    Member::counter(
        "written_bytes",
        "Bytes the process wrote through write-like calls (/proc/self/io wchar)",
        "B",
        MetricType::OTHER,
    ),
];

/// The name of the metric location.
pub const LOCATION_NAME: &str = "Process metrics";

/// One sample of the process, in [`MEMBERS`] order.
pub fn sample_process() -> [u64; 4] {
    let page = {
        // SAFETY: sysconf has no preconditions.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if size > 0 {
            size as u64
        } else {
            4096
        }
    };
    let rss_pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    // SAFETY: an all-zero rusage is valid; getrusage writes only into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage.
    let cpu = if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0 {
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        us(usage.ru_utime) + us(usage.ru_stime)
    } else {
        0
    };
    let (mut read, mut written) = (0, 0);
    if let Ok(io) = std::fs::read_to_string("/proc/self/io") {
        for line in io.lines() {
            let value = |prefix: &str| line.strip_prefix(prefix)?.trim().parse::<u64>().ok();
            if let Some(v) = value("rchar:") {
                read = v;
            }
            if let Some(v) = value("wchar:") {
                written = v;
            }
        }
    }
    [rss_pages * page, cpu, read, written]
}

struct Shared {
    stop: Mutex<bool>,
    wake: Condvar,
    /// The sampler's event writer: the thread samples into it, and `stop` takes it (None then).
    writer: Mutex<Option<EventWriter<FileSink>>>,
}

/// The running sampler.
pub struct Sampler {
    shared: Arc<Shared>,
    path: PathBuf,
}

/// What the sampler recorded: its event file (to be renamed) and how many events it holds.
pub struct Recorded {
    pub path: PathBuf,
    pub events: u64,
    pub result: io::Result<()>,
}

impl Sampler {
    /// Starts sampling every `interval` into `path` (OTF2 event chunks of `chunk_size`),
    /// values of metric class `class`. Sampling is work only a thread of its own can do: this
    /// starts one (a helper thread).
    pub fn start(
        interval: Duration,
        path: &Path,
        chunk_size: usize,
        class: u32,
    ) -> io::Result<Self> {
        let file = otf2::ChunkFile::create(path)?;
        let mut writer = EventWriter::new(chunk_size, FileSink::new(file));
        let sample = move |writer: &mut EventWriter<FileSink>| {
            let values = sample_process().map(TypedValue::u64);
            writer.metric(clock::now(), class, &values);
        };
        // The first sample is taken here, before the program goes on: the sampler thread may
        // be scheduled late on a busy machine, and the start is a value worth having.
        let mut next = Instant::now();
        sample(&mut writer);
        let shared = Arc::new(Shared {
            stop: Mutex::new(false),
            wake: Condvar::new(),
            writer: Mutex::new(Some(writer)),
        });
        let seen = Arc::clone(&shared);
        let body = Box::new(move || {
            // It reads /proc and writes its file while the program runs.
            otf2::chunk_file::use_own_descriptor_table();
            loop {
                {
                    let mut stopped = seen.stop.lock();
                    // A fixed schedule: a slow sample does not shift the ones after it, and
                    // intervals missed while the machine was busy are skipped, not caught up.
                    next += interval;
                    let now = Instant::now();
                    if next <= now {
                        next = now + interval;
                    }
                    seen.wake.wait_until(&mut stopped, next);
                    if *stopped {
                        return;
                    }
                }
                match seen.writer.lock().as_mut() {
                    Some(writer) => sample(writer),
                    None => return,
                }
            }
        });
        helper_threads::spawn("pomptrace-sampler".into(), body)?;
        Ok(Self {
            shared,
            path: path.to_path_buf(),
        })
    }

    /// Stops sampling and closes the file, from the calling thread: the sampler thread is not
    /// waited for (only a sample it is taking at this moment is), it ends when it next runs.
    pub fn stop(self) -> Recorded {
        *self.shared.stop.lock() = true;
        self.shared.wake.notify_all();
        match self.shared.writer.lock().take() {
            Some(writer) => {
                let events = writer.events();
                let (_, result) = writer.finish();
                Recorded {
                    path: self.path,
                    events,
                    result,
                }
            }
            None => Recorded {
                path: self.path,
                events: 0,
                result: Err(io::Error::other("the sampler was stopped twice")),
            },
        }
    }
}

/// The sampler's metric class id: after the synchronous class, if there is one.
pub fn class_id() -> u32 {
    if crate::metrics::synchronous::synchronous() {
        crate::metrics::synchronous::SYNCHRONOUS_CLASS + 1
    } else {
        0
    }
}

/// The sampler of this measurement, if one runs.
pub static RUNNING: Mutex<Option<Sampler>> = Mutex::new(None);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resident_size_follows_allocations() {
        let before = sample_process();
        let block = vec![1u8; 64 << 20];
        let touched: u64 = block.iter().step_by(4096).map(|&b| b as u64).sum();
        let after = sample_process();
        assert!(touched > 0);
        assert!(
            after[0] >= before[0] + (48 << 20),
            "64 MiB touched: rss {} -> {}",
            before[0],
            after[0]
        );
        assert!(after[1] >= before[1], "CPU time never decreases");
    }

    #[test]
    fn the_thread_samples_once_per_interval_until_stopped() {
        let dir = crate::test_dir("pomptrace-sampler");
        let path = dir.join("sampler.evt");
        let sampler = Sampler::start(Duration::from_millis(10), &path, 256 * 1024, 3).unwrap();
        std::thread::sleep(Duration::from_millis(105));
        let recorded = sampler.stop();
        recorded.result.unwrap();
        // One at the start, then one per 10 ms: about 11 (the machine may be busy).
        assert!(
            (6..=13).contains(&recorded.events),
            "{} samples in 105 ms",
            recorded.events
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
