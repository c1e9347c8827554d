//! A writer thread that appends full chunks to their files while the producers go on encoding.
//!
//! One thread serves any number of files. Each file's [`BackgroundSink`] owns a bounded pool of
//! chunk buffers: a full chunk is queued to the thread, and the producer continues in a free
//! buffer, which only blocks when all of the file's buffers are still queued (the disk is
//! slower than the program). Memory per file is therefore at most `buffers × chunk size`.
//!
//! In-memory chunks may be smaller than the file's chunk size (OTF2 readers require at least
//! 256 KiB): each one is then followed by a hole up to the next file chunk boundary, which reads
//! as END_OF_CHUNK padding and takes no disk space.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::chunk::ChunkSink;

enum Job {
    Chunk {
        target: Arc<Target>,
        chunk: Box<[u8]>,
        len: usize,
    },
    /// Reply once every job queued before this one is done.
    Barrier(Sender<()>),
}

struct Target {
    file: Mutex<Option<File>>,
    /// Chunk size of the file; larger than the in-memory chunks when they are padded.
    file_chunk_size: usize,
    error: Mutex<Option<io::Error>>,
    free: Sender<Box<[u8]>>,
}

/// The thread and the queue feeding it.
pub struct BackgroundWriter {
    queue: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl BackgroundWriter {
    pub fn spawn(name: &str) -> io::Result<Self> {
        let (queue, jobs) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                for job in jobs {
                    match job {
                        Job::Chunk { target, chunk, len } => {
                            write_chunk(&target, &chunk[..len], len == chunk.len());
                            // The producer may be gone (finished); then the buffer is just freed.
                            let _ = target.free.send(chunk);
                        }
                        Job::Barrier(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            })?;
        Ok(Self {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// A sink appending to `file` with at most `buffers` chunks of `chunk_size` in flight;
    /// `file_chunk_size` (≥ `chunk_size`) is the chunk size the anchor file announces.
    pub fn sink(
        &self,
        file: File,
        chunk_size: usize,
        file_chunk_size: usize,
        buffers: usize,
    ) -> BackgroundSink {
        let (free_tx, free_rx) = mpsc::channel();
        BackgroundSink {
            queue: self.queue.clone().expect("writer running"),
            target: Arc::new(Target {
                file: Mutex::new(Some(file)),
                file_chunk_size: file_chunk_size.max(chunk_size),
                error: Mutex::new(None),
                free: free_tx,
            }),
            free: free_rx,
            chunk_size,
            buffers_left: buffers.max(2) - 1,
            waited: Duration::ZERO,
            waits: 0,
            clock: None,
            stalled_until: None,
        }
    }

    /// Waits until everything queued so far is written.
    pub fn drain(&self) {
        if let Some(queue) = &self.queue {
            let (tx, rx) = mpsc::channel();
            if queue.send(Job::Barrier(tx)).is_ok() {
                let _ = rx.recv();
            }
        }
    }
}

impl Drop for BackgroundWriter {
    fn drop(&mut self) {
        self.queue.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Appends a chunk; a full chunk smaller than the file's chunk size is padded with a hole.
fn write_chunk(target: &Target, bytes: &[u8], full: bool) {
    let mut error = target.error.lock().unwrap_or_else(|e| e.into_inner());
    if error.is_some() {
        return;
    }
    let mut file = target.file.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = file.as_mut() {
        let pad = target.file_chunk_size - bytes.len();
        let result = f.write_all(bytes).and_then(|()| {
            if full && pad > 0 {
                f.seek(SeekFrom::Current(pad as i64)).map(drop)
            } else {
                Ok(())
            }
        });
        if let Err(e) = result {
            *error = Some(e);
        }
    }
}

/// The producer's end for one file.
pub struct BackgroundSink {
    queue: Sender<Job>,
    target: Arc<Target>,
    free: Receiver<Box<[u8]>>,
    chunk_size: usize,
    /// Buffers that may still be allocated before the producer has to wait for a free one.
    buffers_left: usize,
    waited: Duration,
    waits: u64,
    /// The producer's clock, to report when a wait ended (see `ChunkSink::stall_end`).
    clock: Option<fn() -> u64>,
    stalled_until: Option<u64>,
}

impl BackgroundSink {
    /// Total time the producer spent waiting for a free buffer, and how many times it waited.
    pub fn waited(&self) -> (Duration, u64) {
        (self.waited, self.waits)
    }

    /// Reports the end of every wait for a free buffer in the producer's clock, so the event
    /// writer records a BufferFlush covering it.
    pub fn set_stall_clock(&mut self, clock: fn() -> u64) {
        self.clock = Some(clock);
    }
}

impl ChunkSink for BackgroundSink {
    fn submit(&mut self, chunk: Box<[u8]>, len: usize) -> Box<[u8]> {
        let job = Job::Chunk {
            target: self.target.clone(),
            chunk,
            len,
        };
        if let Err(mpsc::SendError(Job::Chunk { target, chunk, len })) = self.queue.send(job) {
            // The writer thread is gone: write here so nothing is lost.
            write_chunk(&target, &chunk[..len], len == chunk.len());
            return chunk;
        }
        if let Ok(buffer) = self.free.try_recv() {
            return buffer;
        }
        if self.buffers_left > 0 {
            self.buffers_left -= 1;
            return vec![0u8; self.chunk_size].into_boxed_slice();
        }
        let start = Instant::now();
        let buffer = self
            .free
            .recv()
            .unwrap_or_else(|_| vec![0u8; self.chunk_size].into());
        self.waited += start.elapsed();
        self.waits += 1;
        self.stalled_until = self.clock.map(|now| now());
        buffer
    }

    fn stall_end(&mut self) -> Option<u64> {
        self.stalled_until.take()
    }

    fn finish(&mut self) -> io::Result<()> {
        let (tx, rx) = mpsc::channel();
        if self.queue.send(Job::Barrier(tx)).is_ok() {
            let _ = rx.recv();
        }
        self.target
            .file
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match self
            .target
            .error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
