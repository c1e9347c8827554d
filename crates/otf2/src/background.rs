//! A writer thread that writes full chunks to their files while the producers go on encoding.
//!
//! One thread serves any number of files. Each file's [`BackgroundSink`] owns a bounded pool of
//! chunk buffers: a full chunk is queued to the thread, and the producer continues in a free
//! buffer, which only blocks when all of the file's buffers are still queued (the disk is
//! slower than the program). Memory per file is therefore at most `buffers × chunk size`.
//!
//! A sink may keep its first full chunks in memory ([`BackgroundSink::keep_in_memory`]): a
//! stream that fits is written at its end, and the writer thread takes no CPU time from a
//! program that uses every core while it runs; past that budget all kept chunks are queued at
//! once and from then on every full chunk as it fills. Kept chunks are lost if the process is
//! killed, and each of them is fresh memory. A chunk that is written as it fills comes back to
//! be filled again (a free buffer is always taken before a new one), so a file that takes
//! direct writes ([`BackgroundSink::writes_directly`]) is best not kept at all: writing a chunk
//! there costs a fifth of faulting in a fresh one.
//!
//! Fresh memory is expensive to touch (a page fault per 4 KiB: 0.3–0.8 ns per byte measured
//! on the development VM, close to one event's whole cost), and where it can, the producer
//! does not touch fresh memory at all:
//! once its first chunk is full, a sink keeps two buffers of its pool in preparation on a
//! second thread, which faults their pages in (`MADV_POPULATE_WRITE`) and hands them back, and
//! the producer continues in one of them when its chunk is full. Those buffers are slots of one
//! region of transparent huge pages where the kernel has them ([`super::chunk_buffer`]): one
//! fault per 2 MiB, a fifth of the 4 KiB pages' cost when the memory was used before, but
//! four times it on a VM whose host reclaims the guest's free memory (1.5–1.7 ns per byte
//! measured there, 3.5 ms for one huge page). That thread runs in the idle scheduling class,
//! so it only uses a core nobody else wants (one thread of a one-thread program, or the cores
//! of threads waiting at a barrier): with every core busy it falls behind, and a buffer whose
//! preparation has not come back in time is not waited for: the producer takes a fresh one
//! from the heap (4 KiB pages, faulted in as it writes: a huge page's fault would stop the
//! producer for milliseconds at once, and a team that waits for it at its next barrier with
//! it); while the pool may grow, the late one is used next, and once it may not, it is freed
//! when it comes (so the pool may exceed its size by one buffer for that moment). A run that
//! never fills a chunk never prepares one: a starved idle-class thread with work left would
//! hold up the process's exit.
//!
//! While chunks are written as they fill, the same few buffers go round all run long, and the
//! first of them are 4 KiB pages (the producer's first buffer, and any it faulted in itself).
//! A buffer back from the writer that is not a slot gives way to a prepared slot (it is
//! unmapped on the writer thread): the writer writes a chunk from huge pages for about half the
//! CPU time (the kernel pins one page for the write instead of 256; `chunk_memory_bench`:
//! 0.028 against 0.059 ns per byte on the development VM).
//!
//! The sinks of one writer may share a limit on the buffers they allocate
//! ([`BackgroundWriter::limit_buffers`]): beyond its first two buffers a sink takes each new
//! one from that shared allowance, and when it is used up the sink stops keeping chunks and
//! writes every full chunk as it fills, recycling the buffers it has. So many threads each
//! allowed a large buffer stay within one bound for the process together.
//!
//! Each chunk is written at its own offset (`index × file chunk size`) with one write, so a file
//! only ever holds whole chunks. In-memory chunks may be smaller than the file's chunk size
//! (OTF2 readers require at least 256 KiB): each one is then followed by a hole up to the next
//! file chunk boundary, which reads as END_OF_CHUNK padding and takes no disk space.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::chunk::ChunkSink;
use super::chunk_buffer::{ChunkBuffer, HugePageSlots};
use super::chunk_file::ChunkFile;

enum Job {
    Chunk {
        target: Arc<Target>,
        chunk: ChunkBuffer,
        len: usize,
    },
    /// Reply once every job queued before this one is done.
    Barrier(Sender<()>),
    /// A buffer the pool no longer needs: unmapping it costs the thread that does it (and
    /// every core the process ran on a TLB flush), so the writer does, not the producer.
    Retired(ChunkBuffer),
}

/// A buffer whose pages the preparing thread faults in before handing it back to its sink.
struct Preparation {
    target: Arc<Target>,
    buffer: ChunkBuffer,
}

/// Runs in the writer thread before it writes a chunk, e.g. to save what the chunk refers to
/// first. An error keeps the chunk from the disk (and is reported for its file).
pub type BeforeWrite = Box<dyn FnMut() -> io::Result<()> + Send>;

struct Output {
    file: ChunkFile,
    /// Where the next chunk goes.
    offset: u64,
}

struct Target {
    output: Mutex<Option<Output>>,
    /// Chunk size of the file; larger than the in-memory chunks when they are padded.
    file_chunk_size: usize,
    error: Mutex<Option<io::Error>>,
    free: Sender<ChunkBuffer>,
    /// Buffers whose pages the preparing thread has faulted in.
    prepared: Sender<ChunkBuffer>,
}

/// Buffers that the sinks of one writer may still allocate beyond their first two.
struct BufferAllowance {
    left: AtomicUsize,
}

impl BufferAllowance {
    fn take(&self) -> bool {
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    fn give_back(&self, buffers: usize) {
        if buffers > 0 {
            let _ = self
                .left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                    Some(n.saturating_add(buffers))
                });
        }
    }
}

/// Buffers of finished sinks ([`BackgroundWriter::give_back`]), which the writer's new sinks
/// take before they allocate: a program that starts a thread per request records each one in
/// the memory of those that ended, not in fresh memory.
#[derive(Default)]
struct SpareBuffers(Mutex<Vec<ChunkBuffer>>);

/// Spare buffers kept at most; more are freed.
const SPARE_LIMIT: usize = 256;

impl SpareBuffers {
    fn take(&self, len: usize) -> Option<ChunkBuffer> {
        let mut spare = lock(&self.0);
        let at = spare.iter().rposition(|b| b.len() == len)?;
        Some(spare.swap_remove(at))
    }
}

/// The thread and the queue feeding it.
pub struct BackgroundWriter {
    queue: Option<Sender<Job>>,
    /// Shared by the sinks (unlimited unless `limit_buffers` says otherwise).
    allowance: Arc<BufferAllowance>,
    spare: Arc<SpareBuffers>,
    /// The preparing thread's queue (None if it could not be started). The thread is not
    /// joined: it holds nothing that needs closing, and at idle priority it may not get a core
    /// soon.
    preparations: Option<Sender<Preparation>>,
    thread: Option<JoinHandle<()>>,
    /// The OS thread ids of the writer thread and the preparing thread.
    threads: Arc<Mutex<Vec<i32>>>,
}

impl BackgroundWriter {
    pub fn spawn(name: &str) -> io::Result<Self> {
        Self::spawn_with(name, Box::new(|| Ok(())))
    }

    /// A writer thread that calls `before_write` before every chunk it writes.
    pub fn spawn_with(name: &str, mut before_write: BeforeWrite) -> io::Result<Self> {
        let (queue, jobs) = mpsc::channel::<Job>();
        let threads = Arc::new(Mutex::new(Vec::new()));
        let ids = threads.clone();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                note_thread_id(&ids);
                // It writes while the program runs: out of reach of a program closing its
                // descriptors.
                super::chunk_file::use_own_descriptor_table();
                for job in jobs {
                    match job {
                        Job::Chunk { target, chunk, len } => {
                            match before_write() {
                                Ok(()) => write_chunk(&target, &chunk[..len], len == chunk.len()),
                                Err(e) => keep_first_error(&target, e),
                            }
                            // The producer may be gone (finished); then the buffer is just freed.
                            let _ = target.free.send(chunk);
                        }
                        Job::Barrier(done) => {
                            let _ = done.send(());
                        }
                        Job::Retired(buffer) => drop(buffer),
                    }
                }
            })?;
        Ok(Self {
            queue: Some(queue),
            allowance: Arc::new(BufferAllowance {
                left: AtomicUsize::new(usize::MAX),
            }),
            spare: Arc::default(),
            preparations: spawn_preparer(name, threads.clone()),
            thread: Some(thread),
            threads,
        })
    }

    /// The CPU time the writer's threads (writing chunks, preparing buffers) have used so far:
    /// time a program that uses every core did not get. None where the system does not say
    /// (it is read from `/proc`, Linux only).
    pub fn cpu_time(&self) -> Option<Duration> {
        let ids = lock(&self.threads).clone();
        cpu_time_of(&ids)
    }

    /// Limits the buffers all sinks together allocate beyond each one's first two to
    /// `buffers` (from now on; a finished sink gives back what it took).
    pub fn limit_buffers(&self, buffers: usize) {
        self.allowance.left.store(buffers, Ordering::Relaxed);
    }

    /// Keeps `buffers` (those of a finished sink, [`BackgroundSink::into_buffers`]) for the
    /// writer's new sinks, up to a limit; the rest are freed.
    pub fn give_back(&self, buffers: Vec<ChunkBuffer>) {
        let mut spare = lock(&self.spare.0);
        for buffer in buffers {
            if spare.len() < SPARE_LIMIT && !buffer.is_empty() {
                spare.push(buffer);
            }
        }
    }

    /// A buffer of `len` bytes given back by a finished sink, if one is kept.
    pub fn spare_buffer(&self, len: usize) -> Option<ChunkBuffer> {
        self.spare.take(len)
    }

    /// A sink writing to `file` with at most `buffers` chunks of `chunk_size` in memory;
    /// `file_chunk_size` (≥ `chunk_size`) is the chunk size the anchor file announces.
    pub fn sink(
        &self,
        file: ChunkFile,
        chunk_size: usize,
        file_chunk_size: usize,
        buffers: usize,
    ) -> BackgroundSink {
        let (free_tx, free_rx) = mpsc::channel();
        let (prepared_tx, prepared_rx) = mpsc::channel();
        let buffers = buffers.max(2);
        let direct = file.writes_directly();
        BackgroundSink {
            direct,
            queue: self.queue.clone().expect("writer running"),
            allowance: self.allowance.clone(),
            spare: self.spare.clone(),
            borrowed: 0,
            preparations: self.preparations.clone(),
            target: Arc::new(Target {
                output: Mutex::new(Some(Output { file, offset: 0 })),
                file_chunk_size: file_chunk_size.max(chunk_size),
                error: Mutex::new(None),
                free: free_tx,
                prepared: prepared_tx,
            }),
            free: free_rx,
            prepared: prepared_rx,
            preparing: 0,
            orphaned: 0,
            chunk_size,
            // The producer's first buffer is its own (a thread that records little touches few
            // pages of it); the buffers prepared for it once that one is full are slots of one
            // region.
            slots: HugePageSlots::new(chunk_size, buffers - 1),
            buffers_left: buffers - 1,
            kept: VecDeque::new(),
            keep: 0,
            max_keep: buffers - 1,
            in_flight: 0,
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn keep_first_error(target: &Target, e: io::Error) {
    lock(&target.error).get_or_insert(e);
}

/// Writes a chunk at the file's next chunk offset; after a full chunk smaller than the file's
/// chunk size the next one starts at the next file chunk boundary. After the first error
/// nothing more is written, so the file keeps only whole chunks and no gap.
fn write_chunk(target: &Target, bytes: &[u8], full: bool) {
    let mut error = lock(&target.error);
    if error.is_some() {
        return;
    }
    if let Some(out) = lock(&target.output).as_mut() {
        match out.file.write_at(out.offset, bytes) {
            Ok(()) if full => out.offset += target.file_chunk_size as u64,
            Ok(()) => out.offset += bytes.len() as u64,
            Err(e) => *error = Some(e),
        }
    }
}

/// The producer's end for one file.
pub struct BackgroundSink {
    /// The file takes whole chunks without a copy into the page cache.
    direct: bool,
    queue: Sender<Job>,
    /// The writer's shared limit on buffers, and how many this sink took from it.
    allowance: Arc<BufferAllowance>,
    spare: Arc<SpareBuffers>,
    borrowed: usize,
    preparations: Option<Sender<Preparation>>,
    target: Arc<Target>,
    free: Receiver<ChunkBuffer>,
    prepared: Receiver<ChunkBuffer>,
    /// Buffers of the pool being prepared on the preparing thread (at most `PREPARE_AHEAD`).
    preparing: usize,
    /// Prepared buffers that came too late and were replaced by fresh ones (freed on arrival).
    orphaned: usize,
    chunk_size: usize,
    /// Where the pool's buffers are allocated: huge pages where the kernel has them.
    slots: HugePageSlots,
    /// Buffers that may still be allocated before the producer has to wait for a free one.
    buffers_left: usize,
    /// Full chunks held back from the writer thread, oldest first.
    kept: VecDeque<(ChunkBuffer, usize)>,
    keep: usize,
    /// The buffer being filled is never kept back.
    max_keep: usize,
    /// Chunks queued to the writer thread whose buffer has not come back yet.
    in_flight: usize,
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

    /// Whether the file takes whole chunks directly, bypassing the page cache
    /// ([`ChunkFile::writes_directly`]).
    pub fn writes_directly(&self) -> bool {
        self.direct
    }

    /// Keeps the first `chunks` full chunks (at most the pool size less one) from the writer
    /// thread until `finish`, or until one more fills up: then all of them are queued, and
    /// every later chunk as soon as it is full.
    pub fn keep_in_memory(&mut self, chunks: usize) {
        self.keep = chunks.min(self.max_keep);
    }

    fn queue_oldest(&mut self) {
        let Some((chunk, len)) = self.kept.pop_front() else {
            return;
        };
        self.in_flight += 1;
        let job = Job::Chunk {
            target: self.target.clone(),
            chunk,
            len,
        };
        if let Err(mpsc::SendError(Job::Chunk { target, chunk, len })) = self.queue.send(job) {
            // The writer thread is gone: write here so nothing is lost.
            write_chunk(&target, &chunk[..len], len == chunk.len());
            let _ = target.free.send(chunk);
        }
    }

    fn queue_all_kept(&mut self) {
        while !self.kept.is_empty() {
            self.queue_oldest();
        }
    }

    /// Queues every kept chunk, and from now on every chunk as it fills.
    fn stop_keeping(&mut self) {
        self.keep = 0;
        self.queue_all_kept();
    }

    /// A new buffer of the pool for the preparing thread to fault in: a huge-page slot while
    /// there is one, else a spare one.
    fn buffer_to_prepare(&mut self) -> ChunkBuffer {
        self.slots
            .take()
            .or_else(|| self.spare.take(self.chunk_size))
            .unwrap_or_else(|| ChunkBuffer::zeroed(self.chunk_size))
    }

    /// A new buffer of the pool that the producer fills at once: a spare one, else newly
    /// allocated, faulted in by the producer a 4 KiB page at a time as it writes (never a
    /// huge-page slot: see the module's comment).
    fn fresh_buffer(&self) -> ChunkBuffer {
        self.spare
            .take(self.chunk_size)
            .unwrap_or_else(|| ChunkBuffer::zeroed(self.chunk_size))
    }

    /// After `finish`: the buffers of the pool that are back (the writer thread has written
    /// every chunk by then), for [`BackgroundWriter::give_back`]. Buffers still being prepared
    /// are freed when they come back.
    pub fn into_buffers(self) -> Vec<ChunkBuffer> {
        let mut buffers: Vec<ChunkBuffer> = self.free.try_iter().collect();
        buffers.extend(self.prepared.try_iter());
        buffers
    }

    /// Whether the pool may grow by one buffer: within its own size, and beyond its first two
    /// buffers within the writer's shared allowance.
    fn may_grow(&mut self) -> bool {
        if self.buffers_left == 0 {
            return false;
        }
        let second = self.buffers_left == self.max_keep;
        if !second {
            if !self.allowance.take() {
                return false;
            }
            self.borrowed += 1;
        }
        self.buffers_left -= 1;
        true
    }

    /// Puts buffers of the pool in preparation until `PREPARE_AHEAD` are, unless a late one
    /// is still to come or the pool is used up.
    fn prepare_next(&mut self) {
        while self.preparing < PREPARE_AHEAD
            && self.orphaned == 0
            && self.preparations.is_some()
            && self.may_grow()
        {
            self.preparing += 1;
            let job = Preparation {
                target: self.target.clone(),
                buffer: self.buffer_to_prepare(),
            };
            let Some(preparations) = &self.preparations else {
                return;
            };
            if let Err(mpsc::SendError(Preparation { target, buffer })) = preparations.send(job) {
                // The preparing thread is gone: the buffer is simply used as it is.
                let _ = target.prepared.send(buffer);
            }
        }
    }

    /// The prepared buffer, if it has come back (late ones that were replaced are freed).
    fn take_prepared(&mut self) -> Option<ChunkBuffer> {
        while let Ok(buffer) = self.prepared.try_recv() {
            if self.orphaned > 0 {
                self.orphaned -= 1;
                continue;
            }
            self.preparing -= 1;
            return Some(buffer);
        }
        None
    }

    fn free_buffer(&mut self) -> ChunkBuffer {
        let buffer = self.next_buffer();
        self.prepare_next();
        buffer
    }

    fn next_buffer(&mut self) -> ChunkBuffer {
        if let Ok(buffer) = self.free.try_recv() {
            self.in_flight -= 1;
            return self.on_huge_pages(buffer);
        }
        if let Some(buffer) = self.take_prepared() {
            return buffer;
        }
        if self.may_grow() {
            return self.fresh_buffer();
        }
        if self.preparing > 0 {
            // No preparation has come back: a fresh buffer now rather than a wait.
            self.preparing -= 1;
            self.orphaned += 1;
            return self.fresh_buffer();
        }
        if self.buffers_left > 0 {
            // The writer's sinks together may not allocate more: write what is kept, and from
            // now on every chunk as it fills, so that buffers come back.
            self.stop_keeping();
        } else if self.in_flight == 0 {
            // Every buffer is kept back: the oldest has to go now.
            self.queue_oldest();
        }
        let start = Instant::now();
        let buffer = match self.free.recv() {
            Ok(buffer) => {
                self.in_flight -= 1;
                buffer
            }
            Err(_) => self.fresh_buffer(),
        };
        self.waited += start.elapsed();
        self.waits += 1;
        self.stalled_until = self.clock.map(|now| now());
        buffer
    }

    /// `buffer`, back from the writer, or in its place a prepared huge-page slot if `buffer` is
    /// not one and a slot has come back (see the module's comment); the pool does not grow.
    fn on_huge_pages(&mut self, buffer: ChunkBuffer) -> ChunkBuffer {
        if buffer.is_region_slot() {
            return buffer;
        }
        let Some(prepared) = self.take_prepared() else {
            return buffer;
        };
        if !prepared.is_region_slot() {
            // No slot was left for it: it joins the free buffers.
            self.in_flight += 1;
            if self.target.free.send(prepared).is_err() {
                self.in_flight -= 1;
            }
            return buffer;
        }
        self.retire(buffer);
        prepared
    }

    /// Takes `buffer` out of the pool, which may then grow by one again.
    fn retire(&mut self, buffer: ChunkBuffer) {
        self.buffers_left += 1;
        if self.borrowed > 0 {
            self.borrowed -= 1;
            self.allowance.give_back(1);
        }
        // Without the writer thread it is freed here.
        let _ = self.queue.send(Job::Retired(buffer));
    }
}

/// Buffers a sink keeps in preparation. With one, a preparation that took about as long as
/// the producer takes to fill a chunk (on the development VM, faulting fresh memory in is
/// several times slower in some periods of the host than in others) came back late every so
/// often, and the producer then faulted a whole fresh buffer in itself; two give the
/// preparing thread a chunk's time of slack.
const PREPARE_AHEAD: usize = 2;

/// Starts the preparing thread in the idle scheduling class (Linux; elsewhere, or if that is
/// refused, at normal priority). None if the thread cannot be started.
fn spawn_preparer(name: &str, threads: Arc<Mutex<Vec<i32>>>) -> Option<Sender<Preparation>> {
    let (queue, jobs) = mpsc::channel::<Preparation>();
    std::thread::Builder::new()
        // Thread names have 15 bytes: `pomptrace-writer` gives `pomptrace-prep`.
        .name(format!(
            "{}-prep",
            name.strip_suffix("-writer").unwrap_or(name)
        ))
        .spawn(move || {
            note_thread_id(&threads);
            #[cfg(target_os = "linux")]
            {
                let param = libc::sched_param { sched_priority: 0 };
                // SAFETY: pid 0 is the calling thread; `param` is valid for the call.
                let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
            }
            for Preparation { target, mut buffer } in jobs {
                populate(&mut buffer);
                let _ = target.prepared.send(buffer);
            }
        })
        .ok()
        .map(|_| queue)
}

/// Adds the calling thread's OS id to `threads` (for `BackgroundWriter::cpu_time`).
fn note_thread_id(threads: &Mutex<Vec<i32>>) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions.
        let id = unsafe { libc::gettid() };
        lock(threads).push(id);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = threads;
}

/// The CPU time the threads `ids` of this process have used together. A thread that has not
/// noted its id yet has not run its first instruction (a run of a millisecond or two): it
/// counts as none. None where the system does not say.
fn cpu_time_of(ids: &[i32]) -> Option<Duration> {
    if ids.is_empty() {
        let known = std::path::Path::new("/proc/thread-self/schedstat").exists();
        return known.then_some(Duration::ZERO);
    }
    let times: Vec<Duration> = ids.iter().filter_map(|&id| thread_cpu_time(id)).collect();
    (!times.is_empty()).then(|| times.iter().sum())
}

/// The CPU time thread `id` of this process has used: the first field of its `schedstat`, in
/// nanoseconds (None if it has exited or the kernel does not keep the statistics).
fn thread_cpu_time(id: i32) -> Option<Duration> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{id}/schedstat")).ok()?;
    let ns = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Faults in every page of `buffer` (writable, present), in one system call where the kernel
/// has `MADV_POPULATE_WRITE` (Linux 5.14), else by touching each page.
fn populate(buffer: &mut [u8]) {
    const PAGE: usize = 4096;
    #[cfg(target_os = "linux")]
    {
        let start = buffer.as_mut_ptr() as usize;
        let first_page = start.next_multiple_of(PAGE);
        let end = (start + buffer.len()) / PAGE * PAGE;
        if end > first_page {
            // SAFETY: the range lies inside `buffer`, which this thread owns; populating only
            // makes its pages present and does not change their contents.
            let rc = unsafe {
                libc::madvise(
                    first_page as *mut libc::c_void,
                    end - first_page,
                    libc::MADV_POPULATE_WRITE,
                )
            };
            if rc == 0 {
                return;
            }
        }
    }
    for i in (0..buffer.len()).step_by(PAGE) {
        // black_box: the compiler must not drop a store it could prove redundant.
        buffer[i] = std::hint::black_box(buffer[i]);
    }
}

impl Drop for BackgroundSink {
    fn drop(&mut self) {
        // A sink dropped without `finish` (an error path) still returns its buffers' share.
        self.allowance.give_back(std::mem::take(&mut self.borrowed));
    }
}

impl ChunkSink for BackgroundSink {
    fn submit(&mut self, chunk: ChunkBuffer, len: usize) -> ChunkBuffer {
        self.kept.push_back((chunk, len));
        if self.kept.len() > self.keep {
            // Past the budget: write in the background from now on.
            self.stop_keeping();
        }
        self.free_buffer()
    }

    fn submit_last(&mut self, chunk: ChunkBuffer, len: usize) {
        // `finish` queues it with every chunk kept: no buffer to continue in is taken.
        self.kept.push_back((chunk, len));
    }

    fn stall_end(&mut self) -> Option<u64> {
        self.stalled_until.take()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.queue_all_kept();
        let (tx, rx) = mpsc::channel();
        if self.queue.send(Job::Barrier(tx)).is_ok() {
            let _ = rx.recv();
        }
        lock(&self.target.output).take();
        self.allowance.give_back(std::mem::take(&mut self.borrowed));
        match lock(&self.target.error).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[cfg(target_os = "linux")]
    #[test]
    fn threads_that_have_not_started_have_used_no_cpu_time() {
        // The writer's threads note their ids when they first run: a run shorter than their
        // start reported "not known on this system" before.
        assert_eq!(cpu_time_of(&[]), Some(Duration::ZERO));
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() };
        // (The kernel adds a running thread's time at ticks and switches: it may still say 0.)
        assert!(cpu_time_of(&[me]).is_some(), "this thread's CPU time");
    }

    #[test]
    fn populating_a_buffer_keeps_its_contents() {
        let bytes: Box<[u8]> = (0..3 * 4096 + 100).map(|i| (i % 251) as u8).collect();
        let mut buffer = ChunkBuffer::from(bytes.clone());
        populate(&mut buffer);
        assert_eq!(&buffer[..], &bytes[..]);
        let mut unaligned = vec![7u8; 5000].into_boxed_slice();
        populate(&mut unaligned[1..]);
        assert!(unaligned.iter().all(|&b| b == 7));
    }

    /// A sink of `buffers` chunks of `chunk` bytes writing to a file in the new directory
    /// `name`, whose preparing thread never answers: what the sink puts in preparation stays in
    /// the returned receiver (the writer must outlive the sink).
    fn sink_with_silent_preparer(
        name: &str,
        chunk: usize,
        buffers: usize,
    ) -> (
        PathBuf,
        BackgroundWriter,
        BackgroundSink,
        Receiver<Preparation>,
    ) {
        let dir = crate::test_dir(name);
        let writer = BackgroundWriter::spawn(name).unwrap();
        let file = ChunkFile::create(&dir.join("a.evt")).unwrap();
        let mut sink = writer.sink(file, chunk, chunk, buffers);
        let (silent, jobs) = mpsc::channel::<Preparation>();
        sink.preparations = Some(silent);
        (dir, writer, sink, jobs)
    }

    #[test]
    fn a_prepared_buffer_is_taken_and_a_late_one_is_not_waited_for() {
        // A preparing thread that never answers: the producer must not wait for it.
        let (dir, _writer, mut sink, _kept_alive) =
            sink_with_silent_preparer("background-prep", 4096, 2);
        // The full chunk stays in memory, so no written buffer can come back first.
        sink.keep_in_memory(1);
        sink.preparing = 0;
        sink.buffers_left = 1;
        sink.prepare_next();
        assert_eq!(sink.preparing, 1, "as many as the pool allows");
        assert_eq!(sink.buffers_left, 0);
        let first = sink.submit(vec![1u8; 4096].into_boxed_slice().into(), 4096);
        assert_eq!(first.len(), 4096);
        assert_eq!(
            sink.orphaned, 1,
            "the late buffer is replaced, not waited for"
        );
        assert_eq!(sink.waited().1, 0);
        // A preparation that comes back is used (and an orphan is dropped first).
        sink.target
            .prepared
            .send(vec![2u8; 4096].into_boxed_slice().into())
            .unwrap();
        sink.target
            .prepared
            .send(vec![3u8; 4096].into_boxed_slice().into())
            .unwrap();
        sink.preparing = 1;
        let taken = sink.take_prepared().expect("prepared buffer");
        assert_eq!(taken[0], 3);
        assert_eq!(sink.orphaned, 0);
        assert_eq!(sink.preparing, 0);
        sink.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_producer_never_faults_in_a_huge_page_itself() {
        let chunk = 1 << 20;
        // A preparing thread that never answers: every buffer after the first preparations is
        // one the producer takes for itself.
        let (dir, _writer, mut sink, jobs) = sink_with_silent_preparer("background-huge", chunk, 8);
        sink.keep_in_memory(7);
        let mut buffer = ChunkBuffer::zeroed(chunk);
        for _ in 0..5 {
            buffer = sink.submit(buffer, chunk);
            assert!(
                !buffer.is_region_slot(),
                "the producer's own buffer is from the heap"
            );
        }
        let prepared: Vec<ChunkBuffer> = jobs.try_iter().map(|job| job.buffer).collect();
        assert!(!prepared.is_empty(), "buffers were put in preparation");
        assert_eq!(
            prepared.iter().all(ChunkBuffer::is_region_slot),
            crate::chunk_buffer::kernel_has_huge_pages(),
            "prepared buffers are huge-page slots where the kernel has them"
        );
        sink.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn buffers_back_from_the_writer_give_way_to_prepared_huge_page_slots() {
        let chunk = 1 << 20;
        // Nothing is prepared but what this test hands back itself.
        let (dir, _writer, mut sink, _jobs) =
            sink_with_silent_preparer("background-upgrade", chunk, 4);
        let give_back = |sink: &mut BackgroundSink, buffer: ChunkBuffer| {
            sink.in_flight += 1;
            sink.target.free.send(buffer).unwrap();
        };
        let prepare = |sink: &mut BackgroundSink, buffer: ChunkBuffer| {
            sink.preparing += 1;
            sink.target.prepared.send(buffer).unwrap();
        };
        sink.buffers_left = 1;

        // A heap buffer comes back while a slot is prepared: the slot is used, the heap buffer
        // leaves the pool, which may grow by one again.
        let mut slots = HugePageSlots::new(chunk, 2);
        let slot = slots.take();
        assert_eq!(slot.is_some(), crate::chunk_buffer::kernel_has_huge_pages());
        if let Some(slot) = slot {
            give_back(&mut sink, ChunkBuffer::zeroed(chunk));
            prepare(&mut sink, slot);
            let next = sink.next_buffer();
            assert!(
                next.is_region_slot(),
                "the prepared slot replaces the heap buffer"
            );
            assert_eq!((sink.in_flight, sink.preparing), (0, 0));
            assert_eq!(sink.buffers_left, 2, "the heap buffer left the pool");
            // A slot that comes back stays, whatever is prepared.
            give_back(&mut sink, next);
            prepare(&mut sink, slots.take().unwrap());
            assert!(sink.next_buffer().is_region_slot());
            assert_eq!((sink.in_flight, sink.preparing), (0, 1));
            assert_eq!(sink.buffers_left, 2);
            assert!(sink.take_prepared().is_some());
        }

        // A prepared heap buffer (no slot left) does not replace one: it joins the free ones.
        let mut back = ChunkBuffer::zeroed(chunk);
        back[0] = 1;
        let mut prepared = ChunkBuffer::zeroed(chunk);
        prepared[0] = 2;
        give_back(&mut sink, back);
        prepare(&mut sink, prepared);
        let left = sink.buffers_left;
        assert_eq!(sink.next_buffer()[0], 1, "the buffer back from the writer");
        assert_eq!(
            sink.next_buffer()[0],
            2,
            "then the prepared one, from the free list"
        );
        assert_eq!((sink.in_flight, sink.preparing), (0, 0));
        assert_eq!(sink.buffers_left, left);
        sink.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sinks_past_the_shared_limit_on_buffers_write_as_they_fill() {
        let dir = crate::test_dir("background-allowance");
        let writer = BackgroundWriter::spawn("allowance-test").unwrap();
        writer.limit_buffers(2);
        let on_disk = |path: &std::path::Path| {
            writer.drain();
            std::fs::metadata(path).unwrap().len()
        };
        let chunk = || ChunkBuffer::from(vec![7u8; 4096].into_boxed_slice());
        let open = |name: &str| {
            let mut sink = writer.sink(ChunkFile::create(&dir.join(name)).unwrap(), 4096, 4096, 8);
            sink.keep_in_memory(7);
            sink
        };

        // Its second buffer is its own; the third and fourth use up the shared two.
        let mut a = open("a.evt");
        for _ in 0..3 {
            a.submit(chunk(), 4096);
        }
        assert_eq!(on_disk(&dir.join("a.evt")), 0, "within its buffers, kept");
        assert_eq!(a.borrowed, 2);
        a.submit(chunk(), 4096);
        assert_eq!(
            on_disk(&dir.join("a.evt")),
            4 * 4096,
            "no buffer left to share: everything kept is written"
        );
        a.submit(chunk(), 4096);
        assert_eq!(
            on_disk(&dir.join("a.evt")),
            5 * 4096,
            "and every chunk as it fills"
        );

        // Another sink still gets its own second buffer, then has to write too.
        let mut b = open("b.evt");
        b.submit(chunk(), 4096);
        assert_eq!(on_disk(&dir.join("b.evt")), 0);
        b.submit(chunk(), 4096);
        assert_eq!(on_disk(&dir.join("b.evt")), 2 * 4096);
        assert_eq!(b.borrowed, 0);

        // A finished sink gives its share back.
        a.finish().unwrap();
        let mut c = open("c.evt");
        for _ in 0..3 {
            c.submit(chunk(), 4096);
        }
        assert_eq!(
            on_disk(&dir.join("c.evt")),
            0,
            "the shared buffers are free again"
        );
        assert_eq!(c.borrowed, 2);
        b.finish().unwrap();
        c.finish().unwrap();
        assert_eq!(on_disk(&dir.join("c.evt")), 3 * 4096);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_finished_sinks_buffers_go_to_the_next_sinks() {
        let dir = crate::test_dir("background-spare");
        let writer = BackgroundWriter::spawn("spare-test").unwrap();
        let mut first = writer.sink(
            ChunkFile::create(&dir.join("a.evt")).unwrap(),
            4096,
            4096,
            4,
        );
        let chunk = ChunkBuffer::from(vec![1u8; 4096].into_boxed_slice());
        let mut used = vec![chunk.as_ptr() as usize];
        let chunk = first.submit(chunk, 4096);
        used.push(chunk.as_ptr() as usize);
        // The last chunk takes no buffer to continue in.
        first.submit_last(chunk, 100);
        first.finish().unwrap();
        assert_eq!(
            std::fs::metadata(dir.join("a.evt")).unwrap().len(),
            4096 + 100,
            "both chunks were written"
        );
        // Both came back from the writer thread (and any buffer the preparing thread had
        // finished by then).
        let buffers = first.into_buffers();
        let back: Vec<usize> = buffers.iter().map(|b| b.as_ptr() as usize).collect();
        assert!(
            used.iter().all(|u| back.contains(u)),
            "{used:?} in {back:?}"
        );
        writer.give_back(buffers);

        assert!(
            writer.spare_buffer(8192).is_none(),
            "only buffers of the size asked for"
        );
        let taken = writer.spare_buffer(4096).expect("a spare buffer");
        assert!(back.contains(&(taken.as_ptr() as usize)));
        // A new sink continues in one instead of new memory.
        let mut second = writer.sink(
            ChunkFile::create(&dir.join("b.evt")).unwrap(),
            4096,
            4096,
            4,
        );
        let next = second.submit(taken, 4096);
        assert!(
            back.contains(&(next.as_ptr() as usize)),
            "the sink's next buffer is a spare one"
        );
        second.submit_last(next, 10);
        second.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn kept_chunks_reach_the_file_only_past_the_budget_or_at_the_end() {
        let dir = crate::test_dir("background-keep");
        let writer = BackgroundWriter::spawn("keep-test").unwrap();
        let on_disk = |path: &std::path::Path| {
            writer.drain();
            std::fs::metadata(path).unwrap().len()
        };
        let chunk = || ChunkBuffer::from(vec![7u8; 4096].into_boxed_slice());

        let kept = dir.join("kept.evt");
        let mut sink = writer.sink(ChunkFile::create(&kept).unwrap(), 4096, 4096, 8);
        sink.keep_in_memory(3);
        for _ in 0..3 {
            sink.submit(chunk(), 4096);
        }
        assert_eq!(on_disk(&kept), 0, "within the budget nothing is written");
        sink.submit(chunk(), 4096);
        assert_eq!(
            on_disk(&kept),
            4 * 4096,
            "past it, everything kept is written"
        );
        sink.submit(chunk(), 4096);
        assert_eq!(on_disk(&kept), 5 * 4096, "and then every chunk at once");
        sink.finish().unwrap();

        let short = dir.join("short.evt");
        let mut sink = writer.sink(ChunkFile::create(&short).unwrap(), 4096, 4096, 8);
        sink.keep_in_memory(3);
        sink.submit(chunk(), 4096);
        sink.submit(chunk(), 100);
        assert_eq!(on_disk(&short), 0);
        sink.finish().unwrap();
        assert_eq!(
            on_disk(&short),
            4096 + 100,
            "a stream that fits is written at its end"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
