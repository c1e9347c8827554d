//! The runtime's memory allocator: the system's, until a fatal signal's trace is written.
//!
//! The trace of a fatal signal is written by the signal handler, on the thread the signal
//! interrupted (no thread of pomptrace's waits for signals). That thread may have been inside
//! `malloc` or `free`, holding its arena's lock: a `malloc` from the handler would wait for it
//! forever. So from the moment the handler starts writing ([`begin`]) every allocation of this
//! library's code comes from an area of its own, mapped then (`mmap` is async-signal-safe) and
//! handed out front to back; nothing is given back (the process ends right after), and frees
//! of the system's blocks are skipped too (`free` takes the same lock). The program's own
//! allocations (C code) are not affected. Before that moment an allocation costs one load more
//! than the system's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub(crate) struct RuntimeAllocator;

#[global_allocator]
static ALLOCATOR: RuntimeAllocator = RuntimeAllocator;

/// Set once, when a fatal signal's trace writing begins; never cleared.
static RESCUE: AtomicBool = AtomicBool::new(false);
/// The area: its end, and where the next block may start.
static AREA_END: AtomicUsize = AtomicUsize::new(0);
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// Address space reserved for the area, largest first: only what is touched becomes memory.
const AREA_SIZES: [usize; 3] = [1 << 30, 64 << 20, 4 << 20];

/// From now on every allocation of this library comes from the area (mapped now). False, with
/// nothing changed, if no area could be mapped. Async-signal-safe.
pub(crate) fn begin() -> bool {
    if RESCUE.load(Ordering::Acquire) {
        return true;
    }
    for size in AREA_SIZES {
        // SAFETY: a new private anonymous mapping; no existing memory is affected.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if start != libc::MAP_FAILED {
            NEXT.store(start as usize, Ordering::Relaxed);
            AREA_END.store(start as usize + size, Ordering::Relaxed);
            RESCUE.store(true, Ordering::Release);
            return true;
        }
    }
    false
}

/// Whether allocations come from the area (a fatal signal's trace is being written).
pub(crate) fn rescuing() -> bool {
    RESCUE.load(Ordering::Acquire)
}

/// A block of the area for `layout` (null when the area is used up).
fn from_area(layout: Layout) -> *mut u8 {
    let end = AREA_END.load(Ordering::Relaxed);
    let mut next = NEXT.load(Ordering::Relaxed);
    loop {
        let Some(start) = next.checked_next_multiple_of(layout.align()) else {
            return std::ptr::null_mut();
        };
        let Some(stop) = start.checked_add(layout.size()).filter(|&s| s <= end) else {
            return std::ptr::null_mut();
        };
        match NEXT.compare_exchange_weak(next, stop, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return start as *mut u8,
            Err(now) => next = now,
        }
    }
}

// SAFETY: outside the rescue every call goes to the system allocator unchanged; in it, blocks
// are disjoint ranges of a private mapping that is never unmapped, aligned as asked, zeroed
// (fresh anonymous memory, never handed out twice), and never freed.
unsafe impl GlobalAlloc for RuntimeAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if RESCUE.load(Ordering::Acquire) {
            return from_area(layout);
        }
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if RESCUE.load(Ordering::Acquire) {
            return from_area(layout);
        }
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if RESCUE.load(Ordering::Acquire) {
            return;
        }
        // SAFETY: outside the rescue every block came from the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if RESCUE.load(Ordering::Acquire) {
            // SAFETY: the caller guarantees a valid size for this alignment.
            let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
            let new = from_area(new_layout);
            if !new.is_null() {
                // SAFETY: `ptr` holds `layout.size()` bytes, `new` `new_size`, and the area's
                // blocks never overlap another block.
                unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
            }
            return new;
        }
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn area_blocks_are_aligned_disjoint_and_zeroed() {
        // The area itself, without switching this test process over to it.
        // SAFETY: a new private anonymous mapping, left mapped (a test process).
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                1 << 20,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        } as usize;
        let (saved_next, saved_end) = (
            NEXT.load(Ordering::Relaxed),
            AREA_END.load(Ordering::Relaxed),
        );
        NEXT.store(start + 3, Ordering::Relaxed);
        AREA_END.store(start + (1 << 20), Ordering::Relaxed);
        let a = from_area(Layout::from_size_align(10, 1).unwrap()) as usize;
        let b = from_area(Layout::from_size_align(100, 64).unwrap()) as usize;
        let too_big = from_area(Layout::from_size_align(1 << 20, 8).unwrap());
        NEXT.store(saved_next, Ordering::Relaxed);
        AREA_END.store(saved_end, Ordering::Relaxed);
        assert_eq!(a, start + 3);
        assert_eq!(b % 64, 0);
        assert!(b >= a + 10);
        assert!(too_big.is_null(), "past the end of the area");
        // SAFETY: `b` is 100 bytes of the mapping above.
        let bytes = unsafe { std::slice::from_raw_parts(b as *const u8, 100) };
        assert!(bytes.iter().all(|&x| x == 0));
    }
}
