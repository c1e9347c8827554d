//! Where a trace's bytes cost CPU time, per byte, side by side in one run: what a recording
//! thread pays to fault in fresh memory for its chunks, against what the writer thread pays to
//! write a full chunk out so that its buffer can be filled again.
//!
//! - *fresh memory*: 1 MiB chunks of a new mapping, each byte written once (a page fault per
//!   4 KiB); *memory used before*: the same stores into one chunk written over and over (the
//!   cost of the stores alone).
//! - *direct write*: `ChunkFile` on the temp directory's file system, which takes whole pages
//!   with `O_DIRECT` where it can (ext4, xfs: no copy into the page cache), from a buffer of
//!   4 KiB pages; *direct write from huge pages*: the same from a slot of a transparent huge
//!   page (as the writer's buffers end up: `otf2::background`); *buffered write*:
//!   the same chunks with an ordinary `pwrite` there (a copy into newly allocated page cache;
//!   the kernel's later writeback is not counted, so this understates it); *tmpfs write*:
//!   `ChunkFile` on `/dev/shm`, whose files are page cache; *tmpfs write, pages allocated*:
//!   the same into a file whose pages `fallocate` allocated before the timed part (what is
//!   left of a tmpfs write when no thread of the program allocates the pages: the copy).
//!
//! Each figure is the calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) per byte, the best
//! of `ROUNDS` rounds that alternate the kinds. The closing lines divide the writes by the
//! faults of fresh memory (the share of the recording threads' cost that streaming chunks out
//! costs the writer instead, the measurement behind `POMPTRACE_KEEP_IN_MEMORY`'s default), and
//! give the share of a tmpfs write that allocates its pages (what a thread that allocated them
//! ahead, in moments no core is busy, could take off the program; see `docs/benchmarks.md`).
//!
//! Run: `cargo run --release --example chunk_memory_bench [MIB]` (64 MiB per kind by default).

use std::os::unix::fs::FileExt;
use std::path::Path;

use otf2::chunk_buffer::HugePageSlots;
use otf2::{ChunkBuffer, ChunkFile};

const CHUNK: usize = 1 << 20;
const ROUNDS: usize = 5;

/// CPU time of the calling thread, in ns.
fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill in.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// Writes every byte of `chunk` with a pattern, as an encoder fills a chunk front to back.
fn fill(chunk: &mut [u8], seed: u8) {
    for (i, b) in chunk.iter_mut().enumerate() {
        *b = seed.wrapping_add(i as u8);
    }
    std::hint::black_box(&chunk[..]);
}

/// CPU ns per byte to fill `chunks` chunks of fresh memory, each a new buffer.
fn fresh_memory(chunks: usize) -> f64 {
    let start = thread_cpu_ns();
    for i in 0..chunks {
        let mut buffer = ChunkBuffer::zeroed(CHUNK);
        fill(&mut buffer, i as u8);
    }
    (thread_cpu_ns() - start) / (chunks * CHUNK) as f64
}

/// CPU ns per byte to fill one buffer used before, `chunks` times.
fn used_memory(buffer: &mut ChunkBuffer, chunks: usize) -> f64 {
    let start = thread_cpu_ns();
    for i in 0..chunks {
        fill(buffer, i as u8);
    }
    (thread_cpu_ns() - start) / (chunks * CHUNK) as f64
}

/// CPU ns per byte to write `buffer` `chunks` times at consecutive chunk offsets.
fn write_chunks(chunks: usize, write: impl Fn(u64) -> std::io::Result<()>) -> f64 {
    let start = thread_cpu_ns();
    for i in 0..chunks {
        write((i * CHUNK) as u64).expect("write a chunk");
    }
    (thread_cpu_ns() - start) / (chunks * CHUNK) as f64
}

const KINDS: [&str; 7] = [
    "fresh memory",
    "memory used before",
    "direct write",
    "buffered write",
    "tmpfs write",
    "direct write from huge pages",
    "tmpfs write, pages allocated",
];

fn main() {
    let mib: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("MIB: a number of MiB"))
        .unwrap_or(64);
    let (best, direct) = measure(mib.max(1));
    println!(
        "chunk_memory_bench: {mib} MiB per kind, best of {ROUNDS} rounds; the temp directory {} \
         direct writes",
        if direct { "takes" } else { "does not take" }
    );
    for (name, ns) in KINDS.iter().zip(best) {
        println!("{name:>28}: {ns:.3} ns of CPU per byte");
    }
    let faults = best[0] - best[1];
    println!(
        "faulting in fresh memory {faults:.3} ns/B (fresh − used before); direct write ÷ that = \
         {:.2}, buffered write ÷ that = {:.2}, tmpfs write ÷ that = {:.2}",
        best[2] / faults,
        best[3] / faults,
        best[4] / faults
    );
    println!(
        "direct write from huge pages ÷ direct write from 4 KiB pages = {:.2}",
        best[5] / best[2]
    );
    println!(
        "tmpfs: allocating the pages {:.3} ns/B (tmpfs write − tmpfs write, pages allocated), \
         {:.0} % of the write",
        best[4] - best[6],
        100.0 * (best[4] - best[6]) / best[4]
    );
}

/// Each kind's best CPU time per byte over `chunks` chunks (in the order of `KINDS`), and
/// whether the temp directory takes direct writes.
fn measure(chunks: usize) -> ([f64; 7], bool) {
    let disk = std::env::temp_dir().join(format!("pomptrace-chunk-memory-{}", std::process::id()));
    let shm = Path::new("/dev/shm").join(format!("pomptrace-chunk-memory-{}", std::process::id()));
    for dir in [&disk, &shm] {
        std::fs::create_dir_all(dir).expect("create a scratch directory");
    }
    // Each measurement writes a new file (`ChunkFile` creates, never opens, one): a tmpfs file
    // written over again would reuse its pages instead of allocating them.
    let new_file = |path: &Path| {
        let _ = std::fs::remove_file(path);
        ChunkFile::create(path).expect("create a chunk file")
    };
    let direct_path = disk.join("direct.evt");
    let tmpfs_path = shm.join("tmpfs.evt");
    let buffered_path = disk.join("buffered.evt");
    let mut chunk = ChunkBuffer::zeroed(CHUNK);
    fill(&mut chunk, 1);
    // Without transparent huge pages (the kernel has them off) that kind measures 4 KiB pages.
    let mut huge = HugePageSlots::new(CHUNK, 2)
        .take()
        .unwrap_or_else(|| ChunkBuffer::zeroed(CHUNK));
    fill(&mut huge, 1);

    let mut best = [f64::INFINITY; 7];
    for round in 0..ROUNDS {
        for kind in 0..KINDS.len() {
            // Each round starts at another kind, so a slow moment of the machine does not
            // always fall on the same one.
            let kind = (kind + round) % KINDS.len();
            let ns = match kind {
                0 => fresh_memory(chunks),
                1 => used_memory(&mut chunk, chunks),
                2 => {
                    let file = new_file(&direct_path);
                    write_chunks(chunks, |at| file.write_at(at, &chunk))
                }
                3 => {
                    let file = std::fs::OpenOptions::new()
                        .create(true)
                        .truncate(true)
                        .write(true)
                        .open(&buffered_path)
                        .expect("open");
                    write_chunks(chunks, |at| file.write_all_at(&chunk, at))
                }
                4 => {
                    let file = new_file(&tmpfs_path);
                    write_chunks(chunks, |at| file.write_at(at, &chunk))
                }
                5 => {
                    let file = new_file(&direct_path);
                    write_chunks(chunks, |at| file.write_at(at, &huge))
                }
                _ => {
                    let file = new_file(&tmpfs_path);
                    allocate(&tmpfs_path, chunks * CHUNK);
                    write_chunks(chunks, |at| file.write_at(at, &chunk))
                }
            };
            best[kind] = best[kind].min(ns);
        }
    }
    let direct = new_file(&direct_path).writes_directly();
    for dir in [&disk, &shm] {
        let _ = std::fs::remove_dir_all(dir);
    }
    (best, direct)
}

/// Allocates the first `len` bytes of the file at `path` (tmpfs: its pages, zeroed).
fn allocate(path: &Path, len: usize) {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open the tmpfs file");
    // SAFETY: fallocate(2) on a descriptor this function holds open.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len as libc::off_t) };
    assert_eq!(rc, 0, "fallocate: {}", std::io::Error::last_os_error());
}
