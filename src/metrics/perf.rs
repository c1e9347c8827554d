//! Linux perf counters of the calling thread (`perf_event_open(2)`, pid 0, any CPU).
//!
//! Software events (task-clock, page-faults, ...) are opened as one group and read with one
//! `read(2)` of the group leader: about one system call per read, whatever their number.
//! Hardware events (cycles, instructions, ...) each get their own descriptor and its first page
//! mapped; where the kernel allows user-space reads (`cap_user_rdpmc`), a value is `rdpmc` plus
//! the page's offset under its sequence lock, about as cheap as a TSC read; otherwise `read(2)`.

use std::io;

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER5` (112 bytes), which every kernel since
/// 4.1 accepts.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved: u16,
}

pub const TYPE_HARDWARE: u32 = 0;
pub const TYPE_SOFTWARE: u32 = 1;
const FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;

/// One perf event: `(type, config)` as in `perf_event_open(2)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfEvent {
    pub kind: u32,
    pub config: u64,
}

/// Why an event cannot be counted, worded for the one-line message.
pub fn explain(error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
            "this machine has no hardware counter for it (no PMU, e.g. in a virtual machine)".into()
        }
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "the kernel refuses it (permission denied; /proc/sys/kernel/perf_event_paranoid is \
             {}: above 2, or a seccomp profile such as a container's, forbids perf counters to \
             unprivileged processes)",
            std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unreadable".into())
        ),
        Some(libc::ENOSYS) => "the kernel has no perf_event_open".into(),
        Some(libc::EMFILE) | Some(libc::ENFILE) => "no file descriptors are left".into(),
        _ => format!("perf_event_open failed: {error}"),
    }
}

/// Opens `event` for the calling thread; `group` is the leader's descriptor or -1. Counting
/// starts at once. User-space-only counting is tried when the kernel refuses kernel counting
/// (perf_event_paranoid 2), so the thread's own events still count.
fn open(event: PerfEvent, group: i32, read_format: u64) -> io::Result<i32> {
    let mut attr = PerfEventAttr {
        kind: event.kind,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: event.config,
        read_format,
        ..Default::default()
    };
    let mut last = io::Error::from_raw_os_error(libc::EINVAL);
    for flags in [0, FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV] {
        attr.flags = flags;
        // SAFETY: `attr` is a valid perf_event_attr whose `size` field says how much the kernel
        // may read; the other arguments are plain integers (pid 0 = this thread, cpu -1 = any).
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                0 as libc::pid_t,
                -1 as libc::c_int,
                group as libc::c_int,
                FLAG_FD_CLOEXEC,
            )
        };
        if fd >= 0 {
            return Ok(fd as i32);
        }
        last = io::Error::last_os_error();
        if !matches!(last.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)) {
            break;
        }
    }
    Err(last)
}

/// Whether `event` can be counted on this machine for this thread.
pub fn probe(event: PerfEvent) -> io::Result<()> {
    let fd = open(event, -1, 0)?;
    // SAFETY: `fd` was just opened by us and is closed once.
    unsafe { libc::close(fd) };
    Ok(())
}

fn read_u64s(fd: i32, out: &mut [u64]) -> bool {
    let bytes = std::mem::size_of_val(out);
    // SAFETY: `out` is writable for `bytes` bytes.
    let n = unsafe { libc::read(fd, out.as_mut_ptr() as *mut libc::c_void, bytes) };
    n == bytes as isize
}

/// A hardware counter with its mapped control page.
struct MappedCounter {
    fd: i32,
    page: *mut u8,
}

/// Offsets in `struct perf_event_mmap_page`.
const PAGE_LOCK: usize = 8;
const PAGE_INDEX: usize = 12;
const PAGE_OFFSET: usize = 16;
const PAGE_CAPABILITIES: usize = 40;
const PAGE_PMC_WIDTH: usize = 48;
const CAP_USER_RDPMC: u64 = 1 << 2;

impl MappedCounter {
    fn open(event: PerfEvent) -> io::Result<Self> {
        let fd = open(event, -1, 0)?;
        // SAFETY: maps the first page of a perf descriptor read-only, as perf_event_open(2)
        // documents; failure is checked.
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page_size(),
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        let page = if page == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            page as *mut u8
        };
        Ok(Self { fd, page })
    }

    #[inline]
    fn read(&self) -> u64 {
        if let Some(v) = self.read_user_space() {
            return v;
        }
        let mut v = [0u64];
        if read_u64s(self.fd, &mut v) {
            v[0]
        } else {
            0
        }
    }

    /// The seqlock-protected user-space read perf_event_open(2) describes; None where the
    /// kernel does not allow it (then `read(2)` is the way).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn read_user_space(&self) -> Option<u64> {
        use std::sync::atomic::{compiler_fence, Ordering};
        if self.page.is_null() {
            return None;
        }
        // SAFETY: `page` is a live read-only mapping of the counter's control page (a whole
        // page, so every offset below is in bounds); the kernel updates it concurrently,
        // hence volatile reads under its sequence lock.
        unsafe {
            let at = |offset: usize| self.page.add(offset);
            loop {
                let seq = std::ptr::read_volatile(at(PAGE_LOCK) as *const u32);
                compiler_fence(Ordering::SeqCst);
                let caps = std::ptr::read_volatile(at(PAGE_CAPABILITIES) as *const u64);
                let index = std::ptr::read_volatile(at(PAGE_INDEX) as *const u32);
                if caps & CAP_USER_RDPMC == 0 || index == 0 {
                    return None;
                }
                let offset = std::ptr::read_volatile(at(PAGE_OFFSET) as *const i64);
                let width = std::ptr::read_volatile(at(PAGE_PMC_WIDTH) as *const u16) as u32;
                let raw = rdpmc(index - 1);
                // The counter is `width` bits wide and sign-extended from there.
                let shift = 64 - width.clamp(1, 64);
                let pmc = ((raw << shift) as i64) >> shift;
                compiler_fence(Ordering::SeqCst);
                if std::ptr::read_volatile(at(PAGE_LOCK) as *const u32) == seq {
                    return Some(offset.wrapping_add(pmc) as u64);
                }
            }
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline]
    fn read_user_space(&self) -> Option<u64> {
        None
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn rdpmc(counter: u32) -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: only called when the kernel advertises cap_user_rdpmc for this counter, which
    // makes RDPMC legal in user mode for it; it reads two registers and touches no memory.
    unsafe {
        std::arch::asm!("rdpmc", in("ecx") counter, out("eax") lo, out("edx") hi,
            options(nomem, nostack, preserves_flags));
    }
    (hi as u64) << 32 | lo as u64
}

impl Drop for MappedCounter {
    fn drop(&mut self) {
        // SAFETY: the mapping and the descriptor are ours and released once.
        unsafe {
            if !self.page.is_null() {
                libc::munmap(self.page as *mut libc::c_void, page_size());
            }
            libc::close(self.fd);
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}

/// The perf counters of one thread, read into caller-chosen slots.
pub struct ThreadPerf {
    hardware: Vec<(MappedCounter, usize)>,
    /// Leader first; read together through the leader.
    software: Vec<(i32, usize)>,
    buffer: Vec<u64>,
}

impl ThreadPerf {
    /// Opens `events` (each with the output slot its value goes to) for the calling thread.
    pub fn open(events: &[(PerfEvent, usize)]) -> io::Result<Self> {
        let mut me = Self {
            hardware: Vec::new(),
            software: Vec::new(),
            buffer: Vec::new(),
        };
        // Software events are opened one by one, not as a group: in a group, only the events
        // of the leader's PMU counted here (the clocks have a PMU of their own; with task-clock
        // leading, page faults stayed 0, and the other way round task-clock did).
        for &(event, slot) in events {
            if event.kind == TYPE_HARDWARE {
                me.hardware.push((MappedCounter::open(event)?, slot));
            } else {
                me.software.push((open(event, -1, 0)?, slot));
            }
        }
        me.buffer = vec![0; 1];
        Ok(me)
    }

    /// Current values into `out[slot]`.
    #[inline]
    pub fn read(&mut self, out: &mut [u64]) {
        for (counter, slot) in &self.hardware {
            out[*slot] = counter.read();
        }
        for &(fd, slot) in &self.software {
            if read_u64s(fd, &mut self.buffer[..1]) {
                out[slot] = self.buffer[0];
            }
        }
    }
}

impl Drop for ThreadPerf {
    fn drop(&mut self) {
        for &(fd, _) in self.software.iter().rev() {
            // SAFETY: our descriptors, closed once.
            unsafe { libc::close(fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK_CLOCK: PerfEvent = PerfEvent {
        kind: TYPE_SOFTWARE,
        config: 1,
    };
    const PAGE_FAULTS: PerfEvent = PerfEvent {
        kind: TYPE_SOFTWARE,
        config: 2,
    };

    #[test]
    fn the_attribute_struct_has_the_kernels_ver5_size() {
        assert_eq!(std::mem::size_of::<PerfEventAttr>(), 112);
    }

    #[test]
    fn a_software_group_counts_this_threads_time_and_faults() {
        let mut perf = ThreadPerf::open(&[(TASK_CLOCK, 1), (PAGE_FAULTS, 0)])
            .expect("software perf events work on Linux with perf_event_paranoid <= 2");
        let mut before = [0u64; 2];
        perf.read(&mut before);
        // Fresh pages from the kernel: a Vec may reuse heap memory an earlier test touched
        // (glibc raises its mmap threshold after a large free).
        let len = 16 << 20;
        // SAFETY: an anonymous private mapping of `len` bytes, unmapped below.
        let block = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(block, libc::MAP_FAILED);
        for i in (0..len).step_by(4096) {
            // SAFETY: inside the mapping.
            unsafe { (block as *mut u8).add(i).write_volatile(1) };
        }
        // SAFETY: the mapping made above, no longer used.
        unsafe { libc::munmap(block, len) };
        let mut after = [0u64; 2];
        perf.read(&mut after);
        assert!(
            after[0] >= before[0] + 1000,
            "touching 4096 new pages faults: {before:?} -> {after:?}"
        );
        assert!(
            after[1] > before[1],
            "task-clock runs: {before:?} -> {after:?}"
        );
    }

    #[test]
    fn a_refusal_is_explained() {
        let text = explain(&io::Error::from_raw_os_error(libc::ENOENT));
        assert!(text.contains("no hardware counter"), "{text}");
        let text = explain(&io::Error::from_raw_os_error(libc::EACCES));
        assert!(text.contains("perf_event_paranoid"), "{text}");
    }
}
