//! What both fuzzers share: a seeded generator, byte mutations, and a runner that counts
//! panics and aborts (naming the case) when one case runs longer than a second of CPU time.
//!
//! Every case gets a generator of its own, derived from the seed and the case's index, so any
//! case can be replayed alone: `-- 1 SEED INDEX`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// splitmix64: small, fast, and good enough to drive mutations.
pub struct Rng(u64);

impl Rng {
    pub fn for_case(seed: u64, case: u64) -> Self {
        let mut r = Rng(seed ^ case.wrapping_mul(0xa076_1d64_78bd_642f));
        r.next();
        r
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True with probability 1/n.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    /// A number biased towards edges: small, around powers of two, or anything.
    pub fn interesting_u64(&mut self) -> u64 {
        match self.below(6) {
            0 => self.below(4) as u64,
            1 => (1u64 << self.below(64)).wrapping_sub(self.below(3) as u64),
            2 => u64::MAX - self.below(3) as u64,
            3 => u32::MAX as u64 - self.below(3) as u64,
            _ => self.next(),
        }
    }
}

/// Mutates `data` in place with 1 to 4 edits: flipped bits, bytes set to edge values or to
/// bytes from `alphabet`, inserted and deleted runs, duplicated runs, truncation, and splices
/// from `donor`.
pub fn mutate(rng: &mut Rng, data: &mut Vec<u8>, donor: &[u8], alphabet: &[u8]) {
    for _ in 0..1 + rng.below(4) {
        let len = data.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = *rng.pick(&[0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff]);
            }
            2 if len > 0 && !alphabet.is_empty() => {
                let i = rng.below(len);
                data[i] = *rng.pick(alphabet);
            }
            3 => {
                let at = rng.below(len + 1);
                let n = 1 + rng.below(8);
                let bytes: Vec<u8> = (0..n)
                    .map(|_| {
                        if alphabet.is_empty() || rng.one_in(2) {
                            rng.next() as u8
                        } else {
                            *rng.pick(alphabet)
                        }
                    })
                    .collect();
                data.splice(at..at, bytes);
            }
            4 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below((len - at).min(16));
                data.drain(at..at + n);
            }
            5 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below((len - at).min(32));
                let run = data[at..at + n].to_vec();
                let to = rng.below(len + 1);
                data.splice(to..to, run);
            }
            6 => data.truncate(rng.below(len + 1)),
            7 if !donor.is_empty() => {
                // Splice: a piece of `data`, then a piece of the donor.
                let cut = rng.below(len + 1);
                let from = rng.below(donor.len());
                let n = 1 + rng.below(donor.len() - from);
                data.truncate(cut);
                data.extend_from_slice(&donor[from..from + n]);
            }
            8 if len >= 8 => {
                // A little-endian word set to an edge value (lengths, counts, sizes).
                let at = rng.below(len - 7);
                let width = *rng.pick(&[1usize, 2, 4, 8]);
                let value = rng.interesting_u64().to_le_bytes();
                data[at..at + width].copy_from_slice(&value[..width]);
            }
            _ => {}
        }
    }
}

pub struct Report {
    pub cases: u64,
    pub panics: u64,
    pub elapsed: Duration,
}

/// Runs cases `first..first + cases`, each with `Rng::for_case(seed, index)`. A panic is
/// counted (and its case named on stderr); a case that uses more than `HANG_CPU` of processor
/// time, or blocks for `HANG_WALL`, aborts the process, naming the seed and the case. (CPU
/// time, so that a busy shared machine does not pass for a hang.)
pub fn run_cases(
    name: &str,
    cases: u64,
    seed: u64,
    first: u64,
    mut case: impl FnMut(&mut Rng),
) -> Report {
    const HANG_CPU: Duration = Duration::from_secs(1);
    const HANG_WALL: Duration = Duration::from_secs(30);
    let current = Arc::new(AtomicU64::new(first));
    let finished = Arc::new(AtomicBool::new(false));
    let cpu_clock = this_thread_cpu_clock();
    let watchdog = {
        let (current, finished, name) = (current.clone(), finished.clone(), name.to_string());
        std::thread::spawn(move || {
            let mut seen = u64::MAX;
            let (mut since, mut cpu_since) = (Instant::now(), Duration::ZERO);
            while !finished.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(50));
                let now = current.load(Ordering::Acquire);
                let cpu = cpu_time(cpu_clock);
                if now != seen {
                    (seen, since, cpu_since) = (now, Instant::now(), cpu);
                } else if cpu.saturating_sub(cpu_since) > HANG_CPU || since.elapsed() > HANG_WALL {
                    eprintln!(
                        "fuzz {name}: HANG: case {now} (seed {seed}) used {:?} of CPU in {:?}; \
                         replay with `-- 1 {seed} {now}`",
                        cpu.saturating_sub(cpu_since),
                        since.elapsed()
                    );
                    std::process::abort();
                }
            }
        })
    };
    let start = Instant::now();
    let mut panics = 0;
    for index in first..first + cases {
        current.store(index, Ordering::Release);
        let mut rng = Rng::for_case(seed, index);
        if catch_unwind(AssertUnwindSafe(|| case(&mut rng))).is_err() {
            panics += 1;
            eprintln!("fuzz {name}: PANIC in case {index}; replay with `-- 1 {seed} {index}`");
        }
    }
    finished.store(true, Ordering::Release);
    let _ = watchdog.join();
    Report {
        cases,
        panics,
        elapsed: start.elapsed(),
    }
}

/// The clock that measures the calling thread's processor time.
fn this_thread_cpu_clock() -> libc::clockid_t {
    let mut clock: libc::clockid_t = libc::CLOCK_THREAD_CPUTIME_ID;
    // SAFETY: asks for the calling thread's CPU clock id into a valid clockid_t.
    unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
    clock
}

fn cpu_time(clock: libc::clockid_t) -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: reads a clock into a valid timespec.
    unsafe { libc::clock_gettime(clock, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// `N [SEED [FIRST_CASE]]` from the command line.
pub fn arguments(default_cases: u64) -> (u64, u64, u64) {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| {
            a.replace('_', "").parse().unwrap_or_else(|_| {
                eprintln!("usage: N [SEED [FIRST_CASE]] (numbers), got {a:?}");
                std::process::exit(2)
            })
        })
        .collect();
    (
        args.first().copied().unwrap_or(default_cases),
        args.get(1).copied().unwrap_or(1),
        args.get(2).copied().unwrap_or(0),
    )
}

/// Prints the counts; exits with status 1 if any case panicked.
pub fn print_report(name: &str, what: &str, seed: u64, first: u64, report: &Report) {
    println!(
        "{name}: {} {what} (seed {seed}, from case {first}) in {:.1} s: {} panics, 0 hangs",
        report.cases,
        report.elapsed.as_secs_f64(),
        report.panics
    );
    if report.panics > 0 {
        std::process::exit(1);
    }
}
