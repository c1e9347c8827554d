//! Memory for chunk buffers: a mapping of its own (or, below a page, a heap allocation), or one
//! slot of a region of huge pages. Either way a buffer of whole pages starts at a page boundary,
//! as a file opened with `O_DIRECT` needs (see [`super::chunk_file`]).
//!
//! Touching fresh memory costs a page fault per 4 KiB page (0.3–0.8 ms per MiB measured on the
//! development VM, 5–12 ns for a 15-byte event: up to as much as recording the event). A pool
//! of chunk buffers that a producer fills once is fresh memory throughout, and when every core
//! runs a recording thread nobody else can fault it in beforehand. In a region backed by
//! transparent huge pages a fault maps 2 MiB at once: 0.08–0.12 ms per MiB measured when the
//! memory was used before, but 1.5–1.8 ms per MiB (3.5 ms for one huge page) where a VM's host
//! has reclaimed the guest's free memory, so only the preparing thread of
//! [`super::background`] faults region slots in, never a program's thread. The region is only
//! reserved when it is created; a huge page is faulted in (and counts as memory) when a buffer
//! in it is first written.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::Arc;

/// One chunk's memory. Derefs to its bytes; dropping it frees them (a region slot's memory
/// goes back when the last buffer of its region is dropped).
pub struct ChunkBuffer {
    ptr: NonNull<u8>,
    len: usize,
    /// The mapping this buffer is (a plain one of its own) or is a slot of (huge pages); None
    /// for a heap allocation owned by `ptr`.
    region: Option<Arc<Region>>,
}

// SAFETY: a ChunkBuffer is the only handle to its bytes (heap allocation or region slot, never
// handed out twice), like a Box<[u8]>; the region itself is only unmapped on its last drop.
unsafe impl Send for ChunkBuffer {}
// SAFETY: shared access only reads the bytes, as for a Box<[u8]>.
unsafe impl Sync for ChunkBuffer {}

impl ChunkBuffer {
    /// `len` zeroed bytes, faulted in as they are first written: a page-aligned mapping of
    /// their own from a page up, on the heap below (or where mapping fails).
    pub fn zeroed(len: usize) -> Self {
        if len >= PAGE {
            if let Some(region) = Region::map(len, Pages::Base) {
                return Self {
                    ptr: region.base,
                    len,
                    region: Some(Arc::new(region)),
                };
            }
        }
        let bytes: Box<[u8]> = vec![0u8; len].into_boxed_slice();
        let ptr = NonNull::new(Box::into_raw(bytes) as *mut u8).unwrap_or(NonNull::dangling());
        Self {
            ptr,
            len,
            region: None,
        }
    }

    /// Whether this buffer is a slot of a huge-page region.
    pub fn is_region_slot(&self) -> bool {
        self.region.as_ref().is_some_and(|r| r.pages == Pages::Huge)
    }

    /// A buffer of no bytes (a placeholder while the real one is handed over).
    pub fn empty() -> Self {
        Self::zeroed(0)
    }
}

impl From<Box<[u8]>> for ChunkBuffer {
    fn from(bytes: Box<[u8]>) -> Self {
        let len = bytes.len();
        let ptr = NonNull::new(Box::into_raw(bytes) as *mut u8).unwrap_or(NonNull::dangling());
        Self {
            ptr,
            len,
            region: None,
        }
    }
}

impl Deref for ChunkBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` initialised bytes (zeroed heap memory, or a mapping
        // or a region slot: anonymous mappings read as zeros) for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for ChunkBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; `&mut self` is the only access to these bytes.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for ChunkBuffer {
    fn drop(&mut self) {
        // A mapping is unmapped when its last buffer's Arc goes (`Region::drop`).
        if self.region.is_none() {
            let bytes = std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
            // SAFETY: without a region, `ptr`/`len` came from `Box::into_raw` of a Box<[u8]>
            // (`zeroed`, `From<Box<[u8]>>`) and are given back exactly once, here.
            drop(unsafe { Box::from_raw(bytes) });
        }
    }
}

impl std::fmt::Debug for ChunkBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkBuffer")
            .field("len", &self.len)
            .field("huge_pages", &self.is_region_slot())
            .finish()
    }
}

/// Huge page size of x86-64 and arm64 (4 KiB base pages) transparent huge pages.
const HUGE_PAGE: usize = 2 * 1024 * 1024;
/// The base page size of x86-64 and (usually) arm64; a smaller real one only means some
/// buffers could have been mapped instead of allocated.
const PAGE: usize = 4096;

/// How a region is backed.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Pages {
    /// Base pages (a mapping at a page boundary).
    Base,
    /// Transparent huge pages (a mapping at a huge page boundary).
    Huge,
}

/// An anonymous mapping; unmapped when dropped.
struct Region {
    base: NonNull<u8>,
    len: usize,
    pages: Pages,
}

// SAFETY: the region is plain memory; its slots are handed out to one ChunkBuffer each.
unsafe impl Send for Region {}
// SAFETY: as above; the Region itself is never read or written through.
unsafe impl Sync for Region {}

impl Region {
    /// Maps `len` bytes: with `Pages::Huge` (`len` a multiple of the huge page size) at a huge
    /// page boundary, asking for transparent huge pages. None where that is not available.
    #[cfg(target_os = "linux")]
    fn map(len: usize, pages: Pages) -> Option<Self> {
        if pages == Pages::Base {
            let raw = map_anonymous(len, 0)?;
            return Some(Self {
                base: NonNull::new(raw as *mut u8)?,
                len,
                pages,
            });
        }
        let span = len.checked_add(HUGE_PAGE)?;
        let raw = map_anonymous(span, libc::MAP_NORESERVE)?;
        let start = raw as usize;
        let base = start.next_multiple_of(HUGE_PAGE);
        let head = base - start;
        let tail = span - head - len;
        // SAFETY: the head and tail lie inside the mapping just made and nothing uses them.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((base + len) as *mut libc::c_void, tail);
            }
        }
        // SAFETY: the aligned part is ours; the advice only changes how it is backed.
        let advised = unsafe { libc::madvise(base as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
        let region = Self {
            base: NonNull::new(base as *mut u8)?,
            len,
            pages,
        };
        // Without huge pages the region would only add a mapping per pool to plain buffers.
        (advised == 0).then_some(region)
    }

    #[cfg(not(target_os = "linux"))]
    fn map(_len: usize, _pages: Pages) -> Option<Self> {
        None
    }
}

/// A new private anonymous read-write mapping of `len` bytes (with `flags` added), at a page
/// boundary; None if the kernel refuses it.
#[cfg(target_os = "linux")]
fn map_anonymous(len: usize, flags: libc::c_int) -> Option<*mut libc::c_void> {
    // SAFETY: a new private anonymous mapping; no existing memory is affected.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    (raw != libc::MAP_FAILED).then_some(raw)
}

impl Drop for Region {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        // SAFETY: the mapping made in `map`; every ChunkBuffer in it holds an Arc to this
        // region, so none is left when this runs.
        unsafe {
            libc::munmap(self.base.as_ptr() as *mut libc::c_void, self.len);
        }
    }
}

/// Hands out up to `count` buffers of `chunk_size` bytes from one huge-page region, mapped on
/// the first request; afterwards (or without huge pages) `take` gives None and the caller
/// allocates on the heap.
pub struct HugePageSlots {
    chunk_size: usize,
    count: usize,
    region: Option<Arc<Region>>,
    next: usize,
    /// Mapping failed or was refused: do not try again.
    unavailable: bool,
}

impl HugePageSlots {
    pub fn new(chunk_size: usize, count: usize) -> Self {
        Self {
            chunk_size,
            count,
            region: None,
            next: 0,
            unavailable: chunk_size == 0 || count == 0,
        }
    }

    /// The next unused slot, if there is one.
    pub fn take(&mut self) -> Option<ChunkBuffer> {
        if self.next >= self.count || self.unavailable {
            return None;
        }
        if self.region.is_none() {
            let len = self
                .chunk_size
                .checked_mul(self.count)?
                .checked_next_multiple_of(HUGE_PAGE)?;
            match Region::map(len, Pages::Huge) {
                Some(region) => self.region = Some(Arc::new(region)),
                None => {
                    self.unavailable = true;
                    return None;
                }
            }
        }
        let region = self.region.clone()?;
        // SAFETY: slot `next` < `count` lies inside the region (len ≥ count × chunk_size) and
        // is handed out once (`next` only grows).
        let ptr = unsafe { region.base.as_ptr().add(self.next * self.chunk_size) };
        self.next += 1;
        Some(ChunkBuffer {
            ptr: NonNull::new(ptr)?,
            len: self.chunk_size,
            region: Some(region),
        })
    }
}

/// Whether the kernel gives this process transparent huge pages (a kernel without them, or with
/// them switched off, gives no region slots).
#[cfg(test)]
pub(crate) fn kernel_has_huge_pages() -> bool {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|mode| !mode.contains("[never]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_buffers_are_zeroed_and_writable() {
        for len in [100, 4096, 1 << 20] {
            let mut b = ChunkBuffer::zeroed(len);
            assert!(b.iter().all(|&x| x == 0));
            b[len - 1] = 7;
            assert_eq!(b[len - 1], 7);
            assert!(!b.is_region_slot());
        }
        assert_eq!(ChunkBuffer::empty().len(), 0);
        let from_box = ChunkBuffer::from(vec![1u8, 2, 3].into_boxed_slice());
        assert_eq!(&from_box[..], &[1, 2, 3]);
    }

    #[test]
    fn buffers_of_whole_pages_start_at_a_page_boundary() {
        // Written with O_DIRECT, whose buffers must be aligned to the device's blocks.
        let buffers: Vec<ChunkBuffer> = (1..=8)
            .map(|pages| ChunkBuffer::zeroed(pages * PAGE))
            .collect();
        for b in &buffers {
            assert_eq!(b.as_ptr() as usize % PAGE, 0, "{b:?}");
        }
        let mut slots = HugePageSlots::new(1 << 20, 2);
        for b in std::iter::from_fn(|| slots.take()) {
            assert_eq!(b.as_ptr() as usize % PAGE, 0, "{b:?}");
        }
    }

    #[test]
    fn region_slots_are_distinct_zeroed_and_outlive_the_slots_handle() {
        let mut slots = HugePageSlots::new(1 << 20, 3);
        let mut taken: Vec<ChunkBuffer> = std::iter::from_fn(|| slots.take()).collect();
        drop(slots);
        assert_eq!(taken.len(), if kernel_has_huge_pages() { 3 } else { 0 });
        if let Some(first) = taken.first() {
            assert_eq!(first.as_ptr() as usize % HUGE_PAGE, 0);
        }
        for (i, b) in taken.iter_mut().enumerate() {
            assert_eq!(b.len(), 1 << 20);
            assert!(b.iter().all(|&x| x == 0));
            b.fill(i as u8 + 1);
        }
        for (i, b) in taken.iter().enumerate() {
            assert!(b.iter().all(|&x| x == i as u8 + 1), "slots overlap");
        }
        // Dropping them in any order unmaps the region once, after the last.
        taken.swap(0, 2);
        drop(taken);
    }
}
