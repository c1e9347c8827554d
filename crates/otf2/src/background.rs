//! Where full chunks go while the producers go on encoding, and the end of a stream, with no
//! thread to wait for.
//!
//! Each file's [`BackgroundSink`] owns a bounded pool of chunk buffers. A sink may keep its
//! first full chunks in memory ([`BackgroundSink::keep_in_memory`]): a stream that fits is
//! written at its end by the thread that finishes it, and no thread but the program's runs
//! meanwhile. Past that budget (or at once, with none) chunks *stream*: each full chunk is
//! written while the run goes on, by the thread that filled it or by a writer thread
//! ([`StreamFrom`]). Kept chunks are lost if the process is killed, and each of them is fresh
//! memory; a chunk that streams comes back to be filled again (a free buffer is always taken
//! before a new one), so a file on a local disk ([`BackgroundSink::writes_directly`]) is best
//! not kept at all: writing a chunk there (0.16 ns per byte through the page cache on the
//! development VM) costs half of faulting in a fresh one (0.335).
//!
//! Who writes the chunks that stream, and how, is decided once, when the first one streams,
//! by whether a core is idle then ([`StreamFrom::Auto`]):
//! - A core is idle: the writer thread, through the page cache. Its CPU time costs the program
//!   nothing, and a copy into the page cache is done soonest: a direct write (`O_DIRECT`) waits
//!   for the device, one write at a time (1.7 GB/s on the development VM's disk, less than one
//!   recording thread fills).
//! - No core is idle, and the file is on a local disk ([`BackgroundSink::writes_directly`]): the
//!   writer thread, each chunk straight to the device while the disk keeps up (no other chunk
//!   waits for the writer thread), else through the page cache. Its CPU time is now taken from
//!   the program's threads, and a direct write takes less of it (0.065 against 0.16 ns per byte
//!   on the development VM); the wait for the device stops none of them.
//! - No core is idle, and the file is elsewhere (tmpfs, a network file system): the thread that
//!   filled the chunk, through the page cache; a writer thread would copy the same bytes on a
//!   core the program needs, and take that core at moments the program does not choose.
//!
//! A thread of the program writes through the page cache, since a direct write would make it
//! wait for the device; the one exception is a chunk that the writer thread is writing directly
//! when it is written again (below, at the end of a stream): that write goes the same way, so
//! that a direct and a buffered write of one range never meet in the page cache (the kernel
//! then reports a stale page cache, and an I/O error to the file's next `fsync`). A killed
//! process loses nothing that reached the page cache or the device.
//!
//! No thread is started before there is work only it can do: the writer thread starts with the
//! first chunk queued to it, the preparing thread (below) with it. Nothing ever waits for either
//! to be scheduled in order to make progress the waiting thread could make itself: a producer
//! whose buffers are all queued writes its own oldest queued chunk instead of waiting for it,
//! and finishing a sink (or [`BackgroundWriter::take_over`], at the end of a run) writes every
//! chunk still queued from the finishing thread. A chunk the writer thread is writing at that
//! moment is written again from the finishing thread: the same bytes at the same offset, so
//! whichever write ends last leaves the file as it should be, and no one waits for the other.
//! The only waits are for a write under way: a producer with every buffer in a write on the
//! writer thread (the disk is slower than the program; it records a BufferFlush), for at most
//! `WRITE_UNDER_WAY_WAIT`, and hooks' own locks. Memory per file is at most `buffers × chunk
//! size` (one more while a write that outlasted that wait is still under way).
//!
//! Fresh memory is expensive to touch (a page fault per 4 KiB: 0.3–0.8 ns per byte measured
//! on the development VM, close to one event's whole cost). Once chunks stream to the writer
//! thread, a sink keeps two buffers of its pool in preparation on a second thread, which faults
//! their pages in (`MADV_POPULATE_WRITE`) and hands them back, and the producer continues in one
//! of them when its chunk is full. Those buffers are slots of one region of transparent huge
//! pages where the kernel has them ([`super::chunk_buffer`]): one fault per 2 MiB, a fifth of
//! the 4 KiB pages' cost when the memory was used before, but four times it on a VM whose host
//! reclaims the guest's free memory (1.5–1.7 ns per byte measured there, 3.5 ms for one huge
//! page). It runs at normal priority, like the writer thread: in the idle scheduling class it
//! was starved whenever every core was busy, while faulting in a huge page with the process's
//! memory map locked, and every `mmap` and `munmap` of the process waited for it (2 threads
//! streaming 46 MB next to two busy processes took 1.7–3.2 s instead of 0.2–0.4 in three runs
//! of seven on the development VM; none did at normal priority; with both helpers in the idle
//! class, every syncbench construct at 2 threads on 2 cores cost more than with either writer
//! at normal priority: `docs/benchmarks.md`). A buffer whose preparation has not come back
//! in time is not waited for: the producer takes a fresh one from the heap
//! (4 KiB pages, faulted in as it writes: a huge page's fault would stop the producer for
//! milliseconds at once, and a team that waits for it at its next barrier with it); while the
//! pool may grow, the late one is used next, and once it may not, it is freed when it comes
//! (so the pool may exceed its size by one buffer for that moment).
//!
//! While chunks stream, the same few buffers go round all run long, and the first of them are
//! 4 KiB pages (the producer's first buffer, and any it faulted in itself). A buffer back from
//! the writer that is not a slot gives way to a prepared slot (it is unmapped on the writer
//! thread), so that the pool ends up in huge pages.
//!
//! The sinks of one writer may share a limit on the buffers they allocate
//! ([`BackgroundWriter::limit_buffers`]): beyond its first two buffers a sink takes each new
//! one from that shared allowance, and when it is used up the sink stops keeping chunks and
//! streams every full chunk as it fills, recycling the buffers it has. So many threads each
//! allowed a large buffer stay within one bound for the process together.
//!
//! Each chunk is written at its own offset (`index × file chunk size`, fixed when it is full)
//! with one write, so a file only ever holds whole chunks. In-memory chunks may be smaller than
//! the file's chunk size (OTF2 readers require at least 256 KiB): each one is then followed by
//! a hole up to the next file chunk boundary, which reads as END_OF_CHUNK padding and takes no
//! disk space.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::chunk::ChunkSink;
use super::chunk_buffer::{ChunkBuffer, HugePageSlots};
use super::chunk_file::ChunkFile;

/// Who writes a full chunk that streams (goes to disk while the run goes on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFrom {
    /// The thread that filled it, at once, before it goes on: no thread of the writer's runs,
    /// and the program pays for each write where it happens (as, on a node whose cores are all
    /// busy, it pays for a writer thread's CPU time, plus the hand-offs).
    FillingThread,
    /// The writer thread, started with the first such chunk, while the producer goes on (it
    /// costs the program nothing where a core is idle), through the page cache.
    WriterThread,
    /// The writer thread, each chunk straight to the device (`O_DIRECT`) while the disk keeps
    /// up and where the file takes that ([`BackgroundSink::writes_directly`]), else through the
    /// page cache: less CPU time than a copy, where the writer thread's is the program's.
    WriterThreadDirect,
    /// Decided once per writer, when the first chunk streams: the writer thread if a core is
    /// idle then; else the writer thread writing directly for a file that takes that, and the
    /// filling thread for any other (see the module's comment).
    Auto,
}

/// What the user of a writer adds to its work (e.g. saving what chunks refer to first, signal
/// masks). Every method has a default that does nothing special.
pub trait WriterHooks: Send + Sync + 'static {
    /// Runs before a chunk is written, on the thread that writes it; an error keeps the chunk
    /// from the disk (and is reported for its file). `kept`: a place for a file the hook may
    /// keep open from one call to the next, on the writer thread only (whose descriptor table
    /// is its own, see [`super::chunk_file::use_own_descriptor_table`]); None on the program's
    /// threads, where a descriptor kept open could be closed and reused by the program.
    fn before_write(&self, kept: Option<&mut Option<File>>) -> io::Result<()> {
        let _ = kept;
        Ok(())
    }

    /// Runs `write` (one chunk's write, `before_write` included) on a thread of the program: the
    /// thread that filled the chunk, or one that finishes a sink or the writer.
    fn on_program_thread(&self, write: &mut dyn FnMut()) {
        write()
    }

    /// Starts a thread of the writer's (the writer thread, the preparing thread) named `name`.
    fn spawn(&self, name: String, body: Box<dyn FnOnce() + Send>) -> io::Result<()> {
        std::thread::Builder::new().name(name).spawn(body).map(drop)
    }

    /// Called on a producer's thread whenever one of its chunks is full (once per chunk, off
    /// its hot path).
    fn chunk_filled(&self) {}
}

/// Hooks that add nothing.
pub struct NoHooks;
impl WriterHooks for NoHooks {}

/// A full chunk on its way to the disk. Whoever drops the last handle to it gives its buffer
/// back to its sink's pool, so a chunk written twice (see the module's comment) or taken back
/// by its producer still returns exactly once.
struct Outgoing {
    target: Arc<Target>,
    chunk: Option<ChunkBuffer>,
    len: usize,
    offset: u64,
    /// Its write goes straight to the device: set by the writer thread (under the queue's
    /// lock, as it takes the chunk) and followed by whoever writes it again.
    direct: AtomicBool,
}

impl Outgoing {
    fn bytes(&self) -> &[u8] {
        self.chunk.as_deref().map_or(&[], |c| &c[..self.len])
    }
}

impl Drop for Outgoing {
    fn drop(&mut self) {
        if let Some(chunk) = self.chunk.take() {
            // The producer may be gone (finished); then the buffer is just freed.
            let _ = self.target.free.send(chunk);
        }
    }
}

enum Job {
    Chunk(Arc<Outgoing>),
    /// A buffer the pool no longer needs: unmapping it costs the thread that does it (and
    /// every core the process ran on a TLB flush), so the writer does, not the producer.
    Retired(ChunkBuffer),
}

/// A buffer whose pages the preparing thread faults in before handing it back to its sink.
struct Preparation {
    target: Arc<Target>,
    buffer: ChunkBuffer,
}

struct Target {
    /// None once the sink has finished.
    output: Mutex<Option<Arc<ChunkFile>>>,
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

/// The writer thread's side of the queue.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WriterThread {
    NotStarted,
    Running,
    /// It could not be started: chunks are written by their producers.
    Unavailable,
}

struct Queue {
    jobs: VecDeque<Job>,
    /// The chunk the writer thread is writing now.
    current: Option<Arc<Outgoing>>,
    thread: WriterThread,
    /// `take_over` ran: every chunk is written by the thread that has it from now on.
    taken_over: bool,
}

// Who writes the chunks that stream (`Shared::stream_from`): a `StreamFrom` as a number.
const FROM_FILLING_THREAD: u8 = 0;
const FROM_WRITER_THREAD: u8 = 1;
const FROM_WRITER_THREAD_DIRECT: u8 = 2;
/// `StreamFrom::Auto`, until a chunk streams.
const UNDECIDED: u8 = 3;

impl StreamFrom {
    fn number(self) -> u8 {
        match self {
            StreamFrom::FillingThread => FROM_FILLING_THREAD,
            StreamFrom::WriterThread => FROM_WRITER_THREAD,
            StreamFrom::WriterThreadDirect => FROM_WRITER_THREAD_DIRECT,
            StreamFrom::Auto => UNDECIDED,
        }
    }

    fn from_number(number: u8) -> StreamFrom {
        match number {
            FROM_FILLING_THREAD => StreamFrom::FillingThread,
            FROM_WRITER_THREAD => StreamFrom::WriterThread,
            FROM_WRITER_THREAD_DIRECT => StreamFrom::WriterThreadDirect,
            _ => StreamFrom::Auto,
        }
    }
}

struct Shared {
    name: String,
    hooks: Box<dyn WriterHooks>,
    /// `StreamFrom::number`.
    stream_from: AtomicU8,
    queue: Mutex<Queue>,
    /// Wakes the writer thread: a job, or the end.
    work: Condvar,
    /// The preparing thread's queue, once started (None if it could not be).
    preparations: OnceLock<Option<Sender<Preparation>>>,
    /// The OS thread ids of the writer thread and the preparing thread (shared with the
    /// preparing thread, which holds nothing else of the writer's).
    threads: Arc<Mutex<Vec<i32>>>,
}

impl Shared {
    /// Who writes the chunks that stream, `Auto` decided on the first call (the module's
    /// comment) for a file that takes direct writes or not (`direct`: the asking sink's).
    fn stream_from(&self, direct: bool) -> StreamFrom {
        let decided = match self.stream_from.load(Ordering::Relaxed) {
            UNDECIDED => {
                let from = decide_stream_from(a_core_is_idle(), direct).number();
                match self.stream_from.compare_exchange(
                    UNDECIDED,
                    from,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => from,
                    Err(other) => other,
                }
            }
            decided => decided,
        };
        StreamFrom::from_number(decided)
    }

    /// The writer thread writes straight to the device while the disk keeps up.
    fn writer_thread_writes_directly(&self) -> bool {
        self.stream_from.load(Ordering::Relaxed) == FROM_WRITER_THREAD_DIRECT
    }

    /// Queues `chunk` to the writer thread, starting it if this is the first; hands it back
    /// when the writer has been taken over or cannot be started.
    fn queue(self: &Arc<Self>, chunk: Arc<Outgoing>) -> Result<(), Arc<Outgoing>> {
        let mut queue = lock(&self.queue);
        if queue.taken_over {
            return Err(chunk);
        }
        if queue.thread == WriterThread::NotStarted {
            let shared = Arc::clone(self);
            let started = self
                .hooks
                .spawn(self.name.clone(), Box::new(move || run_writer(&shared)));
            queue.thread = match started {
                Ok(()) => WriterThread::Running,
                Err(_) => WriterThread::Unavailable,
            };
        }
        if queue.thread == WriterThread::Unavailable {
            return Err(chunk);
        }
        queue.jobs.push_back(Job::Chunk(chunk));
        drop(queue);
        self.work.notify_one();
        Ok(())
    }

    /// Takes back the oldest chunk of `target` that the writer thread has not started on.
    fn take_back_oldest(&self, target: &Arc<Target>) -> Option<Arc<Outgoing>> {
        let mut queue = lock(&self.queue);
        let at = queue.jobs.iter().position(|job| match job {
            Job::Chunk(chunk) => Arc::ptr_eq(&chunk.target, target),
            Job::Retired(_) => false,
        })?;
        match queue.jobs.remove(at) {
            Some(Job::Chunk(chunk)) => Some(chunk),
            _ => None,
        }
    }

    /// Every chunk of `target` still to be written: the one the writer thread is writing now
    /// (shared with it), then the queued ones, oldest first (taken from the queue).
    fn outstanding(&self, target: &Arc<Target>) -> Vec<Arc<Outgoing>> {
        let mut queue = lock(&self.queue);
        let mut chunks: Vec<Arc<Outgoing>> = queue
            .current
            .iter()
            .filter(|c| Arc::ptr_eq(&c.target, target))
            .cloned()
            .collect();
        let mut others = VecDeque::new();
        for job in queue.jobs.drain(..) {
            match job {
                Job::Chunk(chunk) if Arc::ptr_eq(&chunk.target, target) => chunks.push(chunk),
                other => others.push_back(other),
            }
        }
        queue.jobs = others;
        chunks
    }

    /// Writes `chunk` on the calling thread, a thread of the program.
    fn write_here(&self, chunk: &Outgoing) {
        self.hooks
            .on_program_thread(&mut || write_chunk(&*self.hooks, chunk, None));
    }

    /// The preparing thread's queue, starting the thread on the first call (None if it cannot
    /// be started).
    fn preparer(self: &Arc<Self>) -> Option<Sender<Preparation>> {
        self.preparations
            .get_or_init(|| spawn_preparer(self))
            .clone()
    }
}

/// `StreamFrom::Auto` decided: where a core is idle the writer thread copies; where none is, it
/// writes a file that takes direct writes (`direct`) directly, and the filling thread writes
/// any other.
fn decide_stream_from(core_is_idle: bool, direct: bool) -> StreamFrom {
    if core_is_idle {
        StreamFrom::WriterThread
    } else if direct {
        StreamFrom::WriterThreadDirect
    } else {
        StreamFrom::FillingThread
    }
}

/// Whether a writer thread would find a core with nothing else to run now. False where the
/// system does not say.
fn a_core_is_idle() -> bool {
    let usable_cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (Some(own_threads), Some(system_runnable), Some(system_cpus)) = (
        threads_of_this_process(),
        runnable_threads_of_the_system(),
        online_cpus_of_the_system(),
    ) else {
        return false;
    };
    a_core_is_left(own_threads, usable_cores, system_runnable, system_cpus)
}

/// The two counts that must both leave a core: this process's threads against the cores it
/// may use (its affinity mask and CPU quota, which a container or a batch job's cpuset sets),
/// and the runnable threads of the whole system against the whole system's CPUs, since
/// `/proc/loadavg` counts the host's threads even inside a container: set against the
/// container's cores, a large host's count says "busy" while the program leaves half of its
/// cores idle. It matters: a team whose members each stop to write their own chunks, at
/// different moments, waits for every one of those writes at its next barrier.
fn a_core_is_left(
    own_threads: usize,
    usable_cores: usize,
    system_runnable: usize,
    system_cpus: usize,
) -> bool {
    own_threads < usable_cores && system_runnable < system_cpus
}

/// The number of threads of this process, sleeping or not: each of them may claim a core.
fn threads_of_this_process() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()
}

/// The CPUs the whole system has online, whatever this process may use of them.
fn online_cpus_of_the_system() -> Option<usize> {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }).ok()
}

/// The threads that are runnable in the whole system now, the calling one included
/// (`/proc/loadavg`'s fourth field).
fn runnable_threads_of_the_system() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let field = text.split_whitespace().nth(3)?;
    field.split('/').next()?.parse().ok()
}

/// The writer: chunks are written by their producers, or by a thread of its own started with
/// the first chunk queued to it (see [`StreamFrom`]).
pub struct BackgroundWriter {
    shared: Arc<Shared>,
    /// Shared by the sinks (unlimited unless `limit_buffers` says otherwise).
    allowance: Arc<BufferAllowance>,
    spare: Arc<SpareBuffers>,
}

impl BackgroundWriter {
    /// A writer whose streaming chunks go as `stream_from` says; its threads (if any) are named
    /// after `name`. Starts no thread.
    pub fn new(name: &str, stream_from: StreamFrom, hooks: Box<dyn WriterHooks>) -> Self {
        Self {
            shared: Arc::new(Shared {
                name: name.to_string(),
                hooks,
                stream_from: AtomicU8::new(stream_from.number()),
                queue: Mutex::new(Queue {
                    jobs: VecDeque::new(),
                    current: None,
                    thread: WriterThread::NotStarted,
                    taken_over: false,
                }),
                work: Condvar::new(),
                preparations: OnceLock::new(),
                threads: Arc::new(Mutex::new(Vec::new())),
            }),
            allowance: Arc::new(BufferAllowance {
                left: AtomicUsize::new(usize::MAX),
            }),
            spare: Arc::default(),
        }
    }

    /// The CPU time the writer's threads (writing chunks, preparing buffers) have used so far:
    /// time a program that uses every core did not get. None where the system does not say
    /// (it is read from `/proc`, Linux only).
    pub fn cpu_time(&self) -> Option<Duration> {
        let ids = lock(&self.shared.threads).clone();
        cpu_time_of(&ids)
    }

    /// How many threads the writer has started (the writer thread, the preparing thread).
    pub fn threads_started(&self) -> usize {
        let queue = lock(&self.shared.queue);
        let writer = usize::from(queue.thread == WriterThread::Running);
        let preparing = self.shared.preparations.get().is_some_and(|p| p.is_some());
        writer + usize::from(preparing)
    }

    /// Who writes the chunks that stream: as given to `new`, `Auto` decided once a chunk has
    /// streamed.
    pub fn stream_from(&self) -> StreamFrom {
        StreamFrom::from_number(self.shared.stream_from.load(Ordering::Relaxed))
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
            shared: Arc::clone(&self.shared),
            allowance: self.allowance.clone(),
            spare: self.spare.clone(),
            borrowed: 0,
            preparations: None,
            target: Arc::new(Target {
                output: Mutex::new(Some(Arc::new(file))),
                error: Mutex::new(None),
                free: free_tx,
                prepared: prepared_tx,
            }),
            free: free_rx,
            prepared: prepared_rx,
            preparing: 0,
            orphaned: 0,
            chunk_size,
            file_chunk_size: file_chunk_size.max(chunk_size) as u64,
            next_offset: 0,
            // The producer's first buffer is its own (a thread that records little touches few
            // pages of it); the buffers prepared for it once chunks stream are slots of one
            // region.
            slots: HugePageSlots::new(chunk_size, buffers - 1),
            buffers_left: buffers - 1,
            kept: VecDeque::new(),
            keep: 0,
            locks_held: 0,
            max_keep: buffers - 1,
            in_flight: 0,
            late: 0,
            waited: Duration::ZERO,
            waits: 0,
            held_up: None,
            clock: None,
            stalled_until: None,
        }
    }

    /// Writes everything queued so far: what the writer thread has not started on from the
    /// calling thread, and the chunk it is writing now a second time (see the module's
    /// comment). Returns without waiting for the writer thread.
    pub fn drain(&self) {
        let (current, jobs) = {
            let mut queue = lock(&self.shared.queue);
            let jobs: Vec<Job> = queue.jobs.drain(..).collect();
            (queue.current.clone(), jobs)
        };
        self.write_all_here(current, jobs);
    }

    /// The end of the writer's work: from now on every chunk is written by the thread that has
    /// it, and everything queued is written now, from the calling thread (as `drain`). The
    /// writer thread, if it runs, stops once it notices.
    pub fn take_over(&self) {
        let (current, jobs) = {
            let mut queue = lock(&self.shared.queue);
            queue.taken_over = true;
            let jobs: Vec<Job> = queue.jobs.drain(..).collect();
            (queue.current.take(), jobs)
        };
        self.shared.work.notify_all();
        self.write_all_here(current, jobs);
    }

    fn write_all_here(&self, current: Option<Arc<Outgoing>>, jobs: Vec<Job>) {
        let chunks = current
            .into_iter()
            .chain(jobs.into_iter().filter_map(|job| match job {
                Job::Chunk(chunk) => Some(chunk),
                Job::Retired(_) => None,
            }));
        for chunk in chunks {
            self.shared.write_here(&chunk);
        }
    }
}

impl Drop for BackgroundWriter {
    fn drop(&mut self) {
        // Nothing queued is lost; the writer thread ends on its own.
        self.take_over();
    }
}

/// The writer thread: writes queued chunks, oldest first, until the writer is taken over.
fn run_writer(shared: &Shared) {
    note_thread_id(&shared.threads);
    // It writes while the program runs: out of reach of a program closing its descriptors.
    super::chunk_file::use_own_descriptor_table();
    // A file `before_write` keeps open between chunks, in this thread's own table (and closed
    // in it, when this thread ends).
    let mut kept_file = None;
    loop {
        let job = {
            let mut queue = lock(&shared.queue);
            loop {
                if queue.taken_over {
                    return;
                }
                if let Some(job) = queue.jobs.pop_front() {
                    if let Job::Chunk(chunk) = &job {
                        // Directly while the disk keeps up: with chunks waiting behind this one,
                        // through the page cache, which takes them at copy speed.
                        let backlog = queue.jobs.iter().any(|j| matches!(j, Job::Chunk(_)));
                        let direct = shared.writer_thread_writes_directly() && !backlog;
                        chunk.direct.store(direct, Ordering::Relaxed);
                        queue.current = Some(Arc::clone(chunk));
                    }
                    break job;
                }
                queue = shared.work.wait(queue).unwrap_or_else(|e| e.into_inner());
            }
        };
        match job {
            Job::Chunk(chunk) => {
                write_chunk(&*shared.hooks, &chunk, Some(&mut kept_file));
                // Its buffer goes back with the last handle (here, unless it was taken over
                // meanwhile and is being written again).
                lock(&shared.queue).current = None;
            }
            Job::Retired(buffer) => drop(buffer),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn keep_first_error(target: &Target, e: io::Error) {
    lock(&target.error).get_or_insert(e);
}

/// Writes a chunk at its offset, after `before_write`: straight to the device where the writer
/// thread chose that for it, else through the page cache. After the first error of its file
/// nothing more is written to it, so the file keeps only whole chunks and no gap (chunks of one
/// file are written in order by one thread at a time; only a chunk written a second time at the
/// end of a stream can overlap its first write, the same way).
fn write_chunk(hooks: &dyn WriterHooks, chunk: &Outgoing, kept: Option<&mut Option<File>>) {
    let target = &chunk.target;
    if lock(&target.error).is_some() {
        return;
    }
    let Some(file) = lock(&target.output).clone() else {
        return;
    };
    let written = hooks.before_write(kept).and_then(|()| {
        if chunk.direct.load(Ordering::Relaxed) {
            file.write_at(chunk.offset, chunk.bytes())
        } else {
            file.write_at_through_cache(chunk.offset, chunk.bytes())
        }
    });
    if let Err(e) = written {
        keep_first_error(target, e);
    }
}

/// The producer's end for one file.
pub struct BackgroundSink {
    /// The file takes whole chunks without a copy into the page cache.
    direct: bool,
    shared: Arc<Shared>,
    /// The writer's shared limit on buffers, and how many this sink took from it.
    allowance: Arc<BufferAllowance>,
    spare: Arc<SpareBuffers>,
    borrowed: usize,
    /// The preparing thread's queue, once this sink's chunks stream to the writer thread.
    preparations: Option<Sender<Preparation>>,
    target: Arc<Target>,
    free: Receiver<ChunkBuffer>,
    prepared: Receiver<ChunkBuffer>,
    /// Buffers of the pool being prepared on the preparing thread (at most `PREPARE_AHEAD`).
    preparing: usize,
    /// Prepared buffers that came too late and were replaced by fresh ones (freed on arrival).
    orphaned: usize,
    chunk_size: usize,
    file_chunk_size: u64,
    /// Where the next full chunk goes in the file.
    next_offset: u64,
    /// Where the pool's buffers are allocated: huge pages where the kernel has them.
    slots: HugePageSlots,
    /// Buffers that may still be allocated before the producer has to wait for a free one.
    buffers_left: usize,
    /// Full chunks held back from the disk, oldest first.
    kept: VecDeque<Outgoing>,
    keep: usize,
    /// Locks the producer holds now (`hold_back`, `let_go`).
    locks_held: u32,
    /// The buffer being filled is never kept back.
    max_keep: usize,
    /// Chunks that stream whose buffer has not come back yet.
    in_flight: usize,
    /// Of those, chunks whose write took too long and whose buffer was replaced by a fresh one
    /// (freed when it comes back).
    late: usize,
    waited: Duration,
    waits: u64,
    /// When the `submit` under way was first held up (see `end_hold_up`).
    held_up: Option<Instant>,
    /// The producer's clock, to report when a wait ended (see `ChunkSink::stall_end`).
    clock: Option<fn() -> u64>,
    stalled_until: Option<u64>,
}

impl BackgroundSink {
    /// Total time the producer was held up to get a free buffer, and how many times: waiting
    /// for a write under way, or writing a chunk itself (each chunk that streams from the
    /// filling thread, and any queued chunk the writer thread had not got to).
    pub fn waited(&self) -> (Duration, u64) {
        (self.waited, self.waits)
    }

    /// Reports the end of every hold-up for a free buffer in the producer's clock, so the
    /// event writer records a BufferFlush covering it.
    pub fn set_stall_clock(&mut self, clock: fn() -> u64) {
        self.clock = Some(clock);
    }

    /// Whether the file takes whole chunks directly, bypassing the page cache
    /// ([`ChunkFile::writes_directly`]).
    pub fn writes_directly(&self) -> bool {
        self.direct
    }

    /// Keeps the first `chunks` full chunks (at most the pool size less one) from the disk
    /// until `finish`, or until one more fills up: then all of them stream, and every later
    /// chunk as soon as it is full.
    pub fn keep_in_memory(&mut self, chunks: usize) {
        self.keep = chunks.min(self.max_keep);
    }

    /// The producer holds a lock that other threads may wait for. Until it lets go of every
    /// lock it holds, a chunk that fills and would be written by the producer itself (the
    /// filling thread streams) is held back in one more buffer of the pool, so that the
    /// threads waiting for the lock do not wait for the write as well. A second chunk that
    /// fills meanwhile has the first one written. (A lock whose release the producer never
    /// reports only delays each chunk until the next one fills.)
    #[inline]
    pub fn hold_back(&mut self) {
        self.locks_held = self.locks_held.saturating_add(1);
    }

    /// The producer let go of a lock (`hold_back`). True when it holds none any more and a
    /// chunk is held back: the producer then has it written ([`ChunkSink::write_held`]) once
    /// the lock is released, e.g. with [`super::EventWriter::write_held_at_next_event`].
    #[inline]
    pub fn let_go(&mut self) -> bool {
        self.locks_held = self.locks_held.saturating_sub(1);
        self.held_chunk_is_due()
    }

    /// A chunk was held back (`hold_back`) and no lock is held any more.
    #[inline]
    fn held_chunk_is_due(&self) -> bool {
        // Most often nothing is kept: one test.
        !self.kept.is_empty() && self.locks_held == 0 && self.keep == 0
    }

    /// Full chunks that may stay in memory beyond the budget: one while the producer holds a
    /// lock and would write it itself.
    fn held_back(&self) -> usize {
        usize::from(
            self.locks_held > 0
                && self.keep == 0
                && self.shared.stream_from(self.direct) == StreamFrom::FillingThread,
        )
    }

    /// A full chunk of `len` bytes, at the file's next chunk offset (the next one after it
    /// starts at the next file chunk boundary when it is full, right after it else).
    fn outgoing(&mut self, chunk: ChunkBuffer, len: usize) -> Outgoing {
        let offset = self.next_offset;
        self.next_offset += if len == chunk.len() {
            self.file_chunk_size
        } else {
            len as u64
        };
        Outgoing {
            target: Arc::clone(&self.target),
            chunk: Some(chunk),
            len,
            offset,
            direct: AtomicBool::new(false),
        }
    }

    /// The oldest kept chunk goes to the disk now, from this thread or the writer thread.
    fn stream_oldest(&mut self) {
        let Some(chunk) = self.kept.pop_front() else {
            return;
        };
        self.in_flight += 1;
        let chunk = Arc::new(chunk);
        match self.shared.stream_from(self.direct) {
            StreamFrom::WriterThread | StreamFrom::WriterThreadDirect => {
                match self.shared.queue(chunk) {
                    Ok(()) => {
                        if self.preparations.is_none() {
                            self.preparations = self.shared.preparer();
                        }
                        if self.in_flight > WRITER_THREAD_LAG {
                            // The writer thread falls behind (no core for it): this thread writes
                            // the oldest itself rather than go on in fresh memory.
                            if let Some(oldest) = self.shared.take_back_oldest(&self.target) {
                                self.write_here_held_up(&oldest);
                            }
                        }
                    }
                    Err(chunk) => self.write_here_held_up(&chunk),
                }
            }
            _ => self.write_here_held_up(&chunk),
        }
    }

    /// Writes `chunk` from this thread, the producer's, which is held up meanwhile.
    fn write_here_held_up(&mut self, chunk: &Outgoing) {
        self.held_up.get_or_insert_with(Instant::now);
        self.shared.write_here(chunk);
    }

    /// Accounts for the hold-up of one `submit`, if it had one: at most one BufferFlush per
    /// chunk, however many chunks it wrote or waited for.
    fn end_hold_up(&mut self) {
        if let Some(start) = self.held_up.take() {
            self.waited += start.elapsed();
            self.waits += 1;
            self.stalled_until = self.clock.map(|now| now());
        }
    }

    /// Streams the oldest kept chunks until `left` are kept.
    fn stream_kept_beyond(&mut self, left: usize) {
        while self.kept.len() > left {
            self.stream_oldest();
        }
    }

    /// Streams every kept chunk, and from now on every chunk as it fills.
    fn stop_keeping(&mut self) {
        self.keep = 0;
        self.stream_kept_beyond(0);
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
    /// is still to come, the pool is used up, or there is no preparing thread.
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

    /// A buffer back from a write, if one has come (late ones that were replaced are freed).
    fn take_free(&mut self) -> Option<ChunkBuffer> {
        while let Ok(buffer) = self.free.try_recv() {
            self.in_flight -= 1;
            if self.late > 0 {
                self.late -= 1;
                continue;
            }
            return Some(buffer);
        }
        None
    }

    fn next_buffer(&mut self) -> ChunkBuffer {
        if let Some(buffer) = self.take_free() {
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
            // The writer's sinks together may not allocate more: stream what is kept, and from
            // now on every chunk as it fills, so that buffers come back.
            self.stop_keeping();
        } else if self.in_flight == self.late {
            // Every buffer is kept back: the oldest has to go now.
            self.stream_oldest();
        }
        if let Some(buffer) = self.take_free() {
            // Written from this thread just now.
            return buffer;
        }
        self.held_up.get_or_insert_with(Instant::now);
        if let Some(chunk) = self.shared.take_back_oldest(&self.target) {
            // The writer thread has not got to it: this thread writes it rather than wait
            // until the writer is scheduled.
            self.shared.write_here(&chunk);
            if let Some(buffer) = self.take_free() {
                return buffer;
            }
        }
        // Every buffer is in a write under way on the writer thread: wait for it, a while.
        let deadline = Instant::now() + WRITE_UNDER_WAY_WAIT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.free.recv_timeout(left) {
                Ok(buffer) if self.late > 0 => {
                    self.in_flight -= 1;
                    self.late -= 1;
                    drop(buffer);
                }
                Ok(buffer) => {
                    self.in_flight -= 1;
                    return buffer;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return self.fresh_buffer(),
            }
        }
        // The writer thread lost its core in the middle of the write: a fresh buffer rather
        // than a longer wait; the late one is freed when it comes (the pool exceeds its size by
        // one buffer meanwhile).
        self.late += 1;
        self.fresh_buffer()
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
        let mut queue = lock(&self.shared.queue);
        if queue.thread == WriterThread::Running && !queue.taken_over {
            queue.jobs.push_back(Job::Retired(buffer));
            drop(queue);
            self.shared.work.notify_one();
        }
        // Without the writer thread it is freed here.
    }
}

/// Chunks of a sink that may wait for the writer thread (queued or being written) before the
/// producer writes the oldest queued one itself. Where the writer thread has a core it keeps up
/// on the whole (copying a chunk takes about as long as filling one), and this much slack takes
/// up its jitter: with 2, `otf2_write_bench`'s producer wrote many chunks itself. Where it has
/// no core, a producer that went on in fresh buffers instead would fault in its whole buffer
/// size and leave it all for the end of the run: on the loaded 2-core development VM, 2
/// threads streaming 46 MB took a median 1409 ms so, against 503 ms with each chunk written by
/// its thread (232 ms untraced); this bounds it to 8 chunks.
const WRITER_THREAD_LAG: usize = 8;

/// How long a producer with every buffer in a write under way on the writer thread waits for
/// one before it takes a fresh one: a few scheduler time slices, in case the writer thread lost
/// its core in the middle of the write.
const WRITE_UNDER_WAY_WAIT: Duration = Duration::from_millis(20);

/// Buffers a sink keeps in preparation. With one, a preparation that took about as long as
/// the producer takes to fill a chunk (on the development VM, faulting fresh memory in is
/// several times slower in some periods of the host than in others) came back late every so
/// often, and the producer then faulted a whole fresh buffer in itself; two give the
/// preparing thread a chunk's time of slack.
const PREPARE_AHEAD: usize = 2;

/// Starts the preparing thread (see the module's comment). None if it cannot be started.
fn spawn_preparer(shared: &Shared) -> Option<Sender<Preparation>> {
    let (queue, jobs) = mpsc::channel::<Preparation>();
    // Thread names have 15 bytes: `pomptrace-writer` gives `pomptrace-prep`.
    let name = format!(
        "{}-prep",
        shared.name.strip_suffix("-writer").unwrap_or(&shared.name)
    );
    let ids = Arc::clone(&shared.threads);
    let body = Box::new(move || {
        note_thread_id(&ids);
        for Preparation { target, mut buffer } in jobs {
            populate(&mut buffer);
            let _ = target.prepared.send(buffer);
        }
    });
    shared.hooks.spawn(name, body).ok()?;
    Some(queue)
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
        self.shared.hooks.chunk_filled();
        let chunk = self.outgoing(chunk, len);
        self.kept.push_back(chunk);
        let held_back = self.held_back();
        if self.kept.len() > self.keep + held_back {
            // Past the budget: stream from now on.
            self.keep = 0;
            self.stream_kept_beyond(held_back);
        }
        let buffer = self.free_buffer();
        self.end_hold_up();
        buffer
    }

    fn submit_last(&mut self, chunk: ChunkBuffer, len: usize) {
        // Written by `finish`, after every chunk before it; no buffer is needed any more.
        let chunk = self.outgoing(chunk, len);
        self.kept.push_back(chunk);
    }

    fn stall_end(&mut self) -> Option<u64> {
        self.stalled_until.take()
    }

    fn write_held(&mut self) {
        if self.held_chunk_is_due() {
            self.stream_kept_beyond(0);
            self.end_hold_up();
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        // Oldest first: what streamed and is not written yet (whatever the writer thread is
        // doing), then what was kept.
        for chunk in self.shared.outstanding(&self.target) {
            self.shared.write_here(&chunk);
        }
        while let Some(chunk) = self.kept.pop_front() {
            self.shared.write_here(&chunk);
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
    fn a_core_is_left_only_where_both_the_process_and_the_system_leave_one() {
        // A 16-core container on a 192-CPU host whose other tenants run 40 threads.
        assert!(a_core_is_left(9, 16, 49, 192));
        // The program takes every core it may use, whatever the host does.
        assert!(!a_core_is_left(16, 16, 17, 192));
        // The host is full, though this process leaves cores of its own.
        assert!(!a_core_is_left(3, 16, 192, 192));
        // A node whose cores are this process's: one thread left over, or none.
        assert!(a_core_is_left(1, 2, 1, 2));
        assert!(!a_core_is_left(2, 2, 2, 2));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_counts_behind_an_idle_core_are_read_from_this_system() {
        let own = threads_of_this_process().expect("/proc/self/status names its threads");
        assert!(own >= 1);
        let runnable = runnable_threads_of_the_system().expect("/proc/loadavg");
        assert!(runnable >= 1, "the reading thread itself is runnable");
        let cpus = online_cpus_of_the_system().expect("sysconf(_SC_NPROCESSORS_ONLN)");
        let usable = std::thread::available_parallelism().unwrap().get();
        assert!(cpus >= usable, "{cpus} online, {usable} usable");
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
        let writer = BackgroundWriter::new(name, StreamFrom::WriterThread, Box::new(NoHooks));
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
        let writer = BackgroundWriter::new(
            "allowance-test",
            StreamFrom::WriterThread,
            Box::new(NoHooks),
        );
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
        let writer =
            BackgroundWriter::new("spare-test", StreamFrom::WriterThread, Box::new(NoHooks));
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
        // finished by then). They may be one buffer: the writer thread can write the first
        // chunk and hand its buffer back before the sink asks for its next one.
        let buffers = first.into_buffers();
        let mut back: Vec<usize> = buffers.iter().map(|b| b.as_ptr() as usize).collect();
        assert!(
            used.iter().all(|u| back.contains(u)),
            "{used:?} in {back:?}"
        );
        writer.give_back(buffers);
        // One more, so that two are spare whatever came back.
        let extra = ChunkBuffer::from(vec![0u8; 4096].into_boxed_slice());
        back.push(extra.as_ptr() as usize);
        writer.give_back(vec![extra]);

        assert!(
            writer.spare_buffer(8192).is_none(),
            "only buffers of the size asked for"
        );
        let taken = writer.spare_buffer(4096).expect("a spare buffer");
        assert!(back.contains(&(taken.as_ptr() as usize)));
        // A new sink continues in one instead of new memory: the other spare, or the one it
        // just wrote if the writer thread handed that back first.
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
        let writer =
            BackgroundWriter::new("keep-test", StreamFrom::WriterThread, Box::new(NoHooks));
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

    #[test]
    fn a_chunk_that_fills_while_a_lock_is_held_is_written_once_it_is_let_go() {
        let dir = crate::test_dir("background-hold");
        let size = |path: &std::path::Path| std::fs::metadata(path).unwrap().len();

        let filling =
            BackgroundWriter::new("hold-test", StreamFrom::FillingThread, Box::new(NoHooks));
        let path = dir.join("filling.evt");
        let mut sink = filling.sink(ChunkFile::create(&path).unwrap(), 4096, 4096, 2);
        sink.submit(numbered_chunk(1), 4096);
        assert_eq!(
            size(&path),
            4096,
            "without a lock, the filling thread writes at once"
        );
        sink.hold_back();
        sink.hold_back();
        let second = sink.submit(numbered_chunk(2), 4096);
        assert_eq!(size(&path), 4096, "held back while a lock is held");
        assert_eq!(second.len(), 4096, "the producer goes on in another buffer");
        assert!(!sink.let_go(), "one of the two locks is still held");
        sink.write_held();
        assert_eq!(size(&path), 4096, "nothing is written while a lock is held");
        sink.submit(numbered_chunk(3), 4096);
        assert_eq!(
            size(&path),
            2 * 4096,
            "a second full chunk has the first one written, and is held back itself"
        );
        assert!(sink.let_go(), "no lock held, a chunk waits");
        sink.write_held();
        assert_eq!(size(&path), 3 * 4096);
        assert_eq!(
            sink.waited().1,
            3,
            "each write from this thread is a hold-up"
        );
        sink.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            [bytes[0], bytes[4096], bytes[2 * 4096]],
            [1, 2, 3],
            "every chunk at its own offset"
        );

        // With the writer thread, the lock makes no difference.
        let background =
            BackgroundWriter::new("hold-test-bg", StreamFrom::WriterThread, Box::new(NoHooks));
        let path = dir.join("background.evt");
        let mut sink = background.sink(ChunkFile::create(&path).unwrap(), 4096, 4096, 8);
        sink.hold_back();
        sink.submit(numbered_chunk(4), 4096);
        background.drain();
        assert_eq!(size(&path), 4096, "queued to the writer thread at once");
        assert!(!sink.let_go(), "nothing held back");
        sink.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Hooks whose threads are started but never scheduled (a node whose cores are all
    /// taken, at the extreme): each body is kept, not run.
    type Bodies = Arc<Mutex<Vec<Box<dyn FnOnce() + Send>>>>;
    struct NeverScheduled(Bodies);

    impl WriterHooks for NeverScheduled {
        fn spawn(&self, _name: String, body: Box<dyn FnOnce() + Send>) -> io::Result<()> {
            lock(&self.0).push(body);
            Ok(())
        }
    }

    fn numbered_chunk(n: u8) -> ChunkBuffer {
        ChunkBuffer::from(vec![n; 4096].into_boxed_slice())
    }

    /// The file's 4096-byte chunks, each as the byte it is filled with.
    fn chunk_numbers(path: &std::path::Path) -> Vec<u8> {
        std::fs::read(path)
            .unwrap()
            .chunks(4096)
            .map(|c| {
                assert!(c.iter().all(|&b| b == c[0]), "a chunk is whole");
                c[0]
            })
            .collect()
    }

    #[test]
    fn a_stream_kept_in_memory_starts_no_thread_and_is_written_at_its_end() {
        let dir = crate::test_dir("background-no-thread");
        for from in [
            StreamFrom::WriterThread,
            StreamFrom::WriterThreadDirect,
            StreamFrom::FillingThread,
            StreamFrom::Auto,
        ] {
            let writer = BackgroundWriter::new("no-thread", from, Box::new(NoHooks));
            let path = dir.join(format!("kept-{from:?}.evt"));
            let mut sink = writer.sink(ChunkFile::create(&path).unwrap(), 4096, 4096, 8);
            sink.keep_in_memory(7);
            for n in 1..=3 {
                sink.submit(numbered_chunk(n), 4096);
            }
            sink.submit_last(numbered_chunk(4), 4096);
            sink.finish().unwrap();
            assert_eq!(chunk_numbers(&path), [1, 2, 3, 4]);
            assert_eq!(writer.threads_started(), 0, "{from:?}");
            assert_eq!(
                writer.stream_from(),
                from,
                "nothing streamed, nothing decided"
            );
            assert_eq!(sink.waited().1, 0);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn chunks_stream_from_the_thread_that_filled_them_without_a_thread() {
        let dir = crate::test_dir("background-filling-thread");
        let writer = BackgroundWriter::new("filling", StreamFrom::FillingThread, Box::new(NoHooks));
        let path = dir.join("a.evt");
        let mut sink = writer.sink(ChunkFile::create(&path).unwrap(), 4096, 4096, 2);
        let mut buffer = numbered_chunk(1);
        for n in 1..=5 {
            buffer[..].fill(n);
            buffer = sink.submit(buffer, 4096);
            assert_eq!(
                std::fs::metadata(&path).unwrap().len(),
                n as u64 * 4096,
                "written before submit returns"
            );
        }
        assert_eq!(sink.waited().1, 5, "each write held the producer up once");
        sink.finish().unwrap();
        assert_eq!(chunk_numbers(&path), [1, 2, 3, 4, 5]);
        assert_eq!(writer.threads_started(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn nothing_waits_for_a_writer_thread_that_is_never_scheduled() {
        let dir = crate::test_dir("background-starved");
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let writer = BackgroundWriter::new(
            "starved",
            StreamFrom::WriterThread,
            Box::new(NeverScheduled(bodies.clone())),
        );
        let (a, b) = (dir.join("a.evt"), dir.join("b.evt"));
        // Two buffers: every second chunk finds its other buffer queued to the writer thread,
        // and the producer writes that chunk itself rather than wait.
        let mut first = writer.sink(ChunkFile::create(&a).unwrap(), 4096, 4096, 2);
        let mut buffer = numbered_chunk(0);
        for n in 1..=9 {
            buffer[..].fill(n);
            buffer = first.submit(buffer, 4096);
        }
        assert!(first.waited().1 >= 4, "{:?}", first.waited());
        assert_eq!(
            lock(&bodies).len(),
            2,
            "the writer and the preparing thread"
        );
        // With a larger pool the producer still does not go on in fresh buffers while its
        // chunks wait: past WRITER_THREAD_LAG of them it writes the oldest itself.
        let c = dir.join("c.evt");
        let mut third = writer.sink(ChunkFile::create(&c).unwrap(), 4096, 4096, 32);
        let mut buffer = numbered_chunk(0);
        for n in 1..=30 {
            buffer[..].fill(n);
            buffer = third.submit(buffer, 4096);
        }
        // (Beyond the first: those waiting for the writer, the one being filled, and those
        // put in preparation, which never come back here.)
        let allocated = 31 - third.buffers_left;
        assert!(
            allocated <= WRITER_THREAD_LAG + PREPARE_AHEAD,
            "{allocated} buffers allocated"
        );
        third.submit_last(numbered_chunk(31), 4096);
        third.finish().unwrap();
        assert_eq!(chunk_numbers(&c), (1..=31).collect::<Vec<u8>>());
        // Chunks of another file still queued when the writer is taken over are written by
        // the thread that takes it over; so is a chunk that streams afterwards.
        let mut second = writer.sink(ChunkFile::create(&b).unwrap(), 4096, 4096, 4);
        second.submit(numbered_chunk(7), 4096);
        writer.take_over();
        assert_eq!(chunk_numbers(&b), [7]);
        second.submit(numbered_chunk(8), 4096);
        second.submit_last(numbered_chunk(9), 4096);
        second.finish().unwrap();
        assert_eq!(chunk_numbers(&b), [7, 8, 9]);
        first.submit_last(numbered_chunk(10), 4096);
        first.finish().unwrap();
        assert_eq!(chunk_numbers(&a), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        // Scheduled at last, the writer thread finds it was taken over and ends, and the
        // preparing thread ends with the writer.
        drop((first, second, third, writer));
        let bodies: Vec<_> = lock(&bodies).drain(..).collect();
        for body in bodies {
            std::thread::spawn(body).join().unwrap();
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_chunk_written_twice_gives_its_buffer_back_once() {
        let dir = crate::test_dir("background-twice");
        let writer = BackgroundWriter::new("twice", StreamFrom::WriterThread, Box::new(NoHooks));
        let path = dir.join("a.evt");
        let mut sink = writer.sink(ChunkFile::create(&path).unwrap(), 4096, 4096, 4);
        // As if the writer thread were writing it when the writer is taken over.
        let chunk = Arc::new(sink.outgoing(numbered_chunk(3), 4096));
        sink.in_flight += 1;
        lock(&writer.shared.queue).current = Some(Arc::clone(&chunk));
        writer.drain();
        assert_eq!(chunk_numbers(&path), [3]);
        assert!(
            sink.free.try_recv().is_err(),
            "the writer thread still has it"
        );
        write_chunk(&NoHooks, &chunk, None);
        lock(&writer.shared.queue).current = None;
        drop(chunk);
        assert_eq!(
            sink.free.try_recv().unwrap()[0],
            3,
            "back with the last handle"
        );
        assert!(sink.free.try_recv().is_err(), "and only once");
        assert_eq!(chunk_numbers(&path), [3]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn without_an_idle_core_the_writer_thread_writes_a_local_disk_directly() {
        // (a core is idle, the file takes direct writes) -> who writes, and how.
        for (idle, direct, decided) in [
            (true, true, StreamFrom::WriterThread),
            (true, false, StreamFrom::WriterThread),
            (false, true, StreamFrom::WriterThreadDirect),
            (false, false, StreamFrom::FillingThread),
        ] {
            assert_eq!(
                decide_stream_from(idle, direct),
                decided,
                "a core idle {idle}, direct writes {direct}"
            );
        }
        for from in [
            StreamFrom::FillingThread,
            StreamFrom::WriterThread,
            StreamFrom::WriterThreadDirect,
            StreamFrom::Auto,
        ] {
            assert_eq!(StreamFrom::from_number(from.number()), from);
        }
    }

    /// A page-aligned chunk of `len` bytes, each `n` (a direct write needs the alignment).
    fn aligned_chunk(n: u8, len: usize) -> ChunkBuffer {
        let mut chunk = ChunkBuffer::zeroed(len);
        chunk[..].fill(n);
        chunk
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_writer_thread_writing_directly_leaves_the_page_cache_alone_while_the_disk_keeps_up() {
        const CHUNK: usize = 64 * 1024;
        let dir = crate::disk_test_dir("background-direct");
        for (from, direct) in [
            (StreamFrom::WriterThreadDirect, true),
            (StreamFrom::WriterThread, false),
        ] {
            let writer = BackgroundWriter::new("direct", from, Box::new(NoHooks));
            let path = dir.join(format!("{from:?}.evt"));
            let file = ChunkFile::create(&path).unwrap();
            assert!(file.writes_directly(), "{} is on a disk", dir.display());
            let mut sink = writer.sink(file, CHUNK, CHUNK, 4);
            let mut buffer = aligned_chunk(0, CHUNK);
            for n in 1..=3u8 {
                buffer[..].fill(n);
                buffer = sink.submit(buffer, CHUNK);
                // One at a time, so that no chunk waits behind another (the disk keeps up).
                let deadline = Instant::now() + Duration::from_secs(10);
                while std::fs::metadata(&path).unwrap().len() < u64::from(n) * CHUNK as u64 {
                    assert!(Instant::now() < deadline, "chunk {n} not written");
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            let cached = crate::cached_pages(&path, 3 * CHUNK);
            if direct {
                assert_eq!(cached, 0, "every chunk went straight to the device");
            } else {
                assert_eq!(
                    cached,
                    3 * CHUNK / 4096,
                    "every chunk went through the cache"
                );
            }
            sink.finish().unwrap();
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(bytes.len(), 3 * CHUNK);
            for (i, chunk) in bytes.chunks(CHUNK).enumerate() {
                assert!(chunk.iter().all(|&b| usize::from(b) == i + 1), "chunk {i}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_chunk_written_again_is_written_as_the_writer_thread_writes_it() {
        // A direct and a buffered write of one range must not meet in the page cache.
        const CHUNK: usize = 64 * 1024;
        let dir = crate::disk_test_dir("background-again");
        for direct in [true, false] {
            let writer =
                BackgroundWriter::new("again", StreamFrom::WriterThread, Box::new(NoHooks));
            let path = dir.join(format!("{direct}.evt"));
            let mut sink = writer.sink(ChunkFile::create(&path).unwrap(), CHUNK, CHUNK, 4);
            // As if the writer thread had taken it (and chosen how to write it).
            let chunk = Arc::new(sink.outgoing(aligned_chunk(7, CHUNK), CHUNK));
            chunk.direct.store(direct, Ordering::Relaxed);
            sink.in_flight += 1;
            lock(&writer.shared.queue).current = Some(Arc::clone(&chunk));
            writer.take_over();
            let cached = crate::cached_pages(&path, CHUNK);
            assert_eq!(
                cached,
                if direct { 0 } else { CHUNK / 4096 },
                "direct: {direct}"
            );
            assert!(std::fs::read(&path).unwrap().iter().all(|&b| b == 7));
            drop(chunk);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_write_under_way_that_lost_its_core_is_waited_for_a_while_only() {
        let dir = crate::test_dir("background-late");
        let writer = BackgroundWriter::new("late", StreamFrom::WriterThread, Box::new(NoHooks));
        let mut sink = writer.sink(
            ChunkFile::create(&dir.join("a.evt")).unwrap(),
            4096,
            4096,
            2,
        );
        // The pool's other buffer is in a write that does not end (held here).
        sink.buffers_left = 0;
        let stuck = Arc::new(sink.outgoing(numbered_chunk(1), 4096));
        sink.in_flight = 1;
        let start = Instant::now();
        let fresh = sink.next_buffer();
        let waited = start.elapsed();
        assert!(waited >= WRITE_UNDER_WAY_WAIT, "{waited:?}");
        assert!(waited < Duration::from_secs(5), "{waited:?}");
        assert!(fresh.iter().all(|&b| b == 0), "a fresh buffer");
        assert_eq!((sink.in_flight, sink.late), (1, 1));
        // The late buffer is freed when it comes, not used.
        drop(stuck);
        assert!(sink.take_free().is_none());
        assert_eq!((sink.in_flight, sink.late), (0, 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
