//! One clock per run: the invariant TSC where the CPU has one (a few cycles per read), else
//! `CLOCK_MONOTONIC`. TSC ticks are converted to seconds with a frequency measured against
//! `CLOCK_MONOTONIC` over the whole run (the longer the run, the better the estimate).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::base::config::ClockChoice;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    Tsc,
    Monotonic,
}

/// Nanoseconds of CLOCK_MONOTONIC.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC has no preconditions; it is only used after `has_invariant_tsc` said so.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(target_arch = "x86_64")]
fn has_invariant_tsc() -> bool {
    use core::arch::x86_64::__cpuid;
    // Leaf 0x8000_0007 exists when the maximum extended leaf covers it.
    let max_extended = __cpuid(0x8000_0000).eax;
    max_extended >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn has_invariant_tsc() -> bool {
    false
}

static KIND_IS_TSC: AtomicBool = AtomicBool::new(false);

/// Chooses the clock. Must run once, before any timestamp is taken.
pub fn select(choice: ClockChoice) -> ClockKind {
    let tsc = match choice {
        ClockChoice::Monotonic => false,
        ClockChoice::Tsc | ClockChoice::Auto => has_invariant_tsc(),
    };
    KIND_IS_TSC.store(tsc, Ordering::Relaxed);
    if tsc {
        ClockKind::Tsc
    } else {
        ClockKind::Monotonic
    }
}

/// The current time in ticks of the selected clock.
#[inline(always)]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // Written once before the measurement is published; a relaxed load is a plain load.
        if KIND_IS_TSC.load(Ordering::Relaxed) {
            return rdtsc();
        }
    }
    monotonic_ns()
}

/// The current time, the clock's kind given by the caller (who read it with other state).
#[inline(always)]
pub fn now_with(tsc: bool) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if tsc {
            return rdtsc();
        }
    }
    let _ = tsc;
    monotonic_ns()
}

/// Like `now_with`, but never earlier than the instructions before it: for a time that must
/// follow an acquisition. RDTSC alone may read the counter before an earlier locked
/// instruction (the lock the program just obtained) has finished, which put acquisitions
/// before the other thread's release in contended-lock traces here; LFENCE waits for every
/// earlier instruction. (The vDSO's monotonic clock orders its own counter read.)
#[inline(always)]
pub fn now_after_with(tsc: bool) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if tsc {
        // SAFETY: LFENCE has no preconditions (SSE2 is part of x86_64).
        unsafe { core::arch::x86_64::_mm_lfence() };
    }
    now_with(tsc)
}

/// Whether the selected clock is the TSC.
pub fn is_tsc() -> bool {
    KIND_IS_TSC.load(Ordering::Relaxed)
}

/// A (ticks, monotonic ns) pair taken as close together as possible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub ticks: u64,
    pub ns: u64,
}

pub fn sample() -> Sample {
    // Bracket the monotonic read with two tick reads and keep the tightest of a few tries.
    let mut best = (u64::MAX, Sample { ticks: 0, ns: 0 });
    for _ in 0..5 {
        let a = now();
        let ns = monotonic_ns();
        let b = now();
        if b.wrapping_sub(a) < best.0 {
            best = (
                b.wrapping_sub(a),
                Sample {
                    ticks: a + (b - a) / 2,
                    ns,
                },
            );
        }
    }
    best.1
}

/// Ticks per second between two samples (1e9 for the monotonic clock).
pub fn resolution(kind: ClockKind, start: Sample, end: Sample) -> u64 {
    match kind {
        ClockKind::Monotonic => 1_000_000_000,
        ClockKind::Tsc => {
            let ns = end.ns.saturating_sub(start.ns).max(1);
            let ticks = end.ticks.saturating_sub(start.ticks);
            ((ticks as u128 * 1_000_000_000) / ns as u128).max(1) as u64
        }
    }
}
