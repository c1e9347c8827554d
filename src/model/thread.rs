//! Everything the hot path needs to know about the calling thread, behind one thread-local
//! pointer: whether it is inside a recording call (the busy flag that finalize waits on), the
//! location it records into, its place in the thread tree, its current task and the position it
//! resolved at its last team begin.
//!
//! The pointer lives in C (`src/openmp_shim.c`) with the initial-exec TLS model, and x86-64
//! reads it with one `%fs`-relative load: in the shared library a Rust `thread_local!` would cost
//! a call to `__tls_get_addr` on every event. States are allocated on a thread's first call and
//! never freed (finalize may look at the busy flag of any thread that ever recorded); when a
//! thread ends, a pthread key's destructor runs the exit hook (`set_exit_hook`) and keeps its
//! state for the next new thread, so a program that starts a thread per request holds as many
//! states as it has threads at once.

use std::cell::{Cell, RefCell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};
use std::sync::OnceLock;

use crate::base::signal_safe_mutex::SignalSafeMutex;
use crate::model::lock_table::{LockCache, CACHE_SLOTS};
use crate::model::tree::{CachedPosition, ForkPosition, Node, Saved, Team};
use crate::record::location::{Location, LocationCell};

/// One thread's state. Only its own thread touches it, except `busy` and `location`, which
/// finalize reads (hence atomics; on x86 their relaxed accesses are plain moves).
///
/// Aligned to its own cache lines: the busy flag is written twice per event.
#[repr(C, align(128))]
pub struct ThreadState {
    pub(crate) busy: AtomicBool,
    /// An asynchronous fatal signal that arrived while `busy` was set (0: none): its handler
    /// left it here for the end of the call (`end_call`), so that the trace is written with
    /// this thread's location complete. Only this thread and its signal handlers touch it;
    /// atomic only so that the two see each other's accesses in program order.
    pub(crate) pending_signal: AtomicI32,
    location: AtomicPtr<Location>,
    pub(crate) node: Cell<*const Node>,
    /// The node was guessed from the OpenMP ancestry: the thread was first seen inside a team
    /// it did not see begin (`team::adopt`).
    pub(crate) guessed: Cell<bool>,
    /// The team the thread works in now (null: its root's own team).
    pub(crate) team: Cell<*const Team>,
    pub(crate) task: Cell<i64>,
    task_counter: Cell<u32>,
    /// The OS thread id, for the ThreadId attribute and the locations' ownership words (read
    /// once, when the state is given to its thread).
    pub(crate) tid: Cell<u32>,
    /// What the thread was before each team begin not ended yet (`push_saved`, `pop_saved`).
    saved: UnsafeCell<Vec<Saved>>,
    pub(crate) position: Cell<Option<CachedPosition>>,
    /// The position taken at the last team begin from the node the fork handed over.
    pub(crate) fork_position: Cell<Option<ForkPosition>>,
    /// Forks of this thread not joined yet.
    pub(crate) forks_open: Cell<u32>,
    /// (fork depth, default-device value) to restore at the joins of this thread's forks that
    /// changed it (see `team.rs`).
    pub(crate) fork_restores: RefCell<Vec<(u32, i32)>>,
    /// Locations of this thread's own that stand in for positions whose location another
    /// thread held when this one took them: (that location, the stand-in). See `team.rs`.
    pub(crate) stand_ins: RefCell<Vec<(*const LocationCell, &'static LocationCell)>>,
    /// The OpenMP locks this thread used last (see `locks.rs`).
    lock_cache: UnsafeCell<LockCache>,
    /// The mapping of the alternate signal stack this library gave the thread (null: none;
    /// see `give_alt_stack`).
    alt_stack: Cell<*mut libc::c_void>,
}

impl ThreadState {
    /// Ends a recording call: clears `busy`, then raises the signal that arrived meanwhile, if
    /// any. The load comes after the store in program order (the compiler fence; a handler runs
    /// on this same thread): a signal before the store is left in `pending_signal` and seen
    /// here, one after it finds the thread not busy and is handled at once.
    #[inline(always)]
    pub(crate) fn end_call(&self) {
        if self.end_call_quietly() {
            self.raise_pending_signal();
        }
    }

    /// `end_call` that leaves raising the signal to the caller: true if one is pending (the
    /// fast paths, which call nothing, raise it on their way out).
    #[inline(always)]
    pub(crate) fn end_call_quietly(&self) -> bool {
        self.busy.store(false, Ordering::Release);
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        self.pending_signal.load(Ordering::Relaxed) != 0
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn raise_pending_signal(&self) {
        let signal = self.pending_signal.swap(0, Ordering::Relaxed);
        if signal != 0 {
            // SAFETY: raise(3) sends a signal to this thread; its handler (pomptrace's, which
            // now finds the thread not busy) runs before raise returns, unless the signal is
            // blocked here, in which case it runs when it is unblocked.
            unsafe { libc::raise(signal) };
        }
    }

    /// The location this thread records into (null: none yet).
    #[inline(always)]
    pub(crate) fn location_ptr(&self) -> *mut Location {
        self.location.load(Ordering::Relaxed)
    }

    pub(crate) fn set_location(&self, location: *mut Location) {
        self.location.store(location, Ordering::Relaxed);
    }

    /// Remembers what this thread was before a team begin (restored by `pop_saved`).
    #[inline(always)]
    pub(crate) fn push_saved(&self, saved: Saved) {
        // SAFETY: only this thread touches `saved`, and only here and in `pop_saved`, neither
        // of which calls out while it holds the reference (a RefCell's flag costs every team
        // begin and end a check and two stores).
        unsafe { (*self.saved.get()).push(saved) }
    }

    /// What this thread was before its innermost team begin not ended yet.
    #[inline(always)]
    pub(crate) fn pop_saved(&self) -> Option<Saved> {
        // SAFETY: see `push_saved`.
        unsafe { (*self.saved.get()).pop() }
    }

    /// Runs `f` on this thread's cache of lock states (`locks.rs`).
    #[inline(always)]
    pub(crate) fn with_lock_cache<R>(&self, f: impl FnOnce(&mut LockCache) -> R) -> R {
        // SAFETY: only this thread touches its lock cache, and only through this function,
        // whose callers in `locks.rs` never call it again from `f`.
        f(unsafe { &mut *self.lock_cache.get() })
    }

    /// A fresh id for a task created by this thread: `(OpenMP thread number << 32) | counter`
    /// with a counter starting at 1 and never reset (semantics doc, section 1.7).
    pub(crate) fn new_task_id(&self) -> i64 {
        let n = self.task_counter.get();
        self.task_counter.set(n.wrapping_add(1).max(1));
        ((crate::openmp::thread_num() as i64) << 32) | n as i64
    }
}

/// Every state ever created, for finalize.
pub(crate) struct StatePtr(&'static ThreadState);
// SAFETY: other threads only touch the atomic fields of a state (busy, location).
unsafe impl Send for StatePtr {}
/// Signal-safe: the trace writer for fatal signals walks it. Held across fork().
pub(crate) static STATES: SignalSafeMutex<Vec<StatePtr>> = SignalSafeMutex::new(Vec::new());

/// The calling thread's state, created on its first call.
#[inline(always)]
pub(crate) fn state() -> &'static ThreadState {
    match existing() {
        Some(s) => s,
        None => create(),
    }
}

/// The calling thread's state if it has one already (fast paths, which leave its creation to
/// their general path).
#[inline(always)]
pub(crate) fn existing() -> Option<&'static ThreadState> {
    // SAFETY: the slot only ever holds null or a leaked state created by this thread.
    unsafe { slot::get().as_ref() }
}

/// States of threads that have ended, for new threads. Held across fork() like `STATES`.
pub(crate) static SPARE_STATES: SignalSafeMutex<Vec<StatePtr>> = SignalSafeMutex::new(Vec::new());

#[cold]
#[inline(never)]
fn create() -> &'static ThreadState {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as u32;
    let spare = SPARE_STATES.lock().pop();
    let state: &'static ThreadState = match spare {
        Some(StatePtr(state)) => {
            // The ended thread left it as `fresh` makes one (see `thread_ended`).
            state.tid.set(tid);
            state
        }
        None => {
            let state: &'static ThreadState = Box::leak(Box::new(fresh(tid)));
            STATES.lock().push(StatePtr(state));
            state
        }
    };
    set_slot(state as *const ThreadState as *mut ThreadState);
    watch_exit(state);
    give_alt_stack(state);
    state
}

fn fresh(tid: u32) -> ThreadState {
    ThreadState {
        busy: AtomicBool::new(false),
        pending_signal: AtomicI32::new(0),
        location: AtomicPtr::new(std::ptr::null_mut()),
        node: Cell::new(std::ptr::null()),
        guessed: Cell::new(false),
        team: Cell::new(std::ptr::null()),
        task: Cell::new(0),
        task_counter: Cell::new(1),
        tid: Cell::new(tid),
        saved: UnsafeCell::new(Vec::new()),
        position: Cell::new(None),
        fork_position: Cell::new(None),
        forks_open: Cell::new(0),
        fork_restores: RefCell::new(Vec::new()),
        stand_ins: RefCell::new(Vec::new()),
        lock_cache: UnsafeCell::new([(0, 0, None); CACHE_SLOTS]),
        alt_stack: Cell::new(std::ptr::null_mut()),
    }
}

/// Usable size of the alternate signal stack each thread with a state gets: a fatal signal's
/// handler writes the whole trace on it when the signal came from a stack overflow (the
/// thread's own stack is used up then). Writing a trace and a profile that way touched 12 KiB
/// of it (a debug build; 8 KiB was too little): the rest is room for what that measurement
/// did not see, and costs address space only, as a page becomes memory when first touched.
const ALT_STACK_SIZE: usize = 1 << 20;

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// Gives the calling thread an alternate signal stack (a guard page below it) unless it has
/// one: a program's own is never replaced.
fn give_alt_stack(state: &ThreadState) {
    let page = page_size();
    // SAFETY: sigaltstack with a NULL new stack only fills `current`; the new mapping is
    // private and anonymous, so no existing memory is touched; the stack handed to the kernel
    // is that mapping less its guard page, which stays mapped until `take_back_alt_stack`.
    let base = unsafe {
        let mut current: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(std::ptr::null(), &mut current) != 0
            || current.ss_flags & libc::SS_DISABLE == 0
        {
            return;
        }
        let base = libc::mmap(
            std::ptr::null_mut(),
            page + ALT_STACK_SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
            -1,
            0,
        );
        if base == libc::MAP_FAILED {
            return;
        }
        let stack = libc::stack_t {
            ss_sp: base.cast::<u8>().add(page).cast(),
            ss_flags: 0,
            ss_size: ALT_STACK_SIZE,
        };
        if libc::mprotect(base, page, libc::PROT_NONE) != 0
            || libc::sigaltstack(&stack, std::ptr::null_mut()) != 0
        {
            libc::munmap(base, page + ALT_STACK_SIZE);
            return;
        }
        base
    };
    state.alt_stack.set(base);
}

/// Disables and unmaps the calling thread's alternate signal stack if it is still the one
/// `give_alt_stack` gave it (one the program put in its place keeps ours in use for all we
/// know: that mapping is left alone).
fn take_back_alt_stack(state: &ThreadState) {
    let base = state.alt_stack.replace(std::ptr::null_mut());
    if base.is_null() {
        return;
    }
    let page = page_size();
    // SAFETY: sigaltstack with a NULL new stack only fills `current`; ours is disabled before
    // its mapping goes, and only while this thread is not running on it.
    unsafe {
        let mut current: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(std::ptr::null(), &mut current) != 0
            || current.ss_sp != base.cast::<u8>().add(page).cast()
            || current.ss_flags & libc::SS_ONSTACK != 0
        {
            return;
        }
        let disable = libc::stack_t {
            ss_sp: std::ptr::null_mut(),
            ss_flags: libc::SS_DISABLE,
            ss_size: 0,
        };
        if libc::sigaltstack(&disable, std::ptr::null_mut()) == 0 {
            libc::munmap(base, page + ALT_STACK_SIZE);
        }
    }
}

/// What runs when a thread with a state ends, before its state is kept for another thread
/// (registered by the measurement's start; see `lifecycle::retire`).
static EXIT_HOOK: OnceLock<fn(&'static ThreadState)> = OnceLock::new();

pub(crate) fn set_exit_hook(hook: fn(&'static ThreadState)) {
    let _ = EXIT_HOOK.set(hook);
}

/// The pthread key whose destructor tells of a thread's end (None: it could not be created;
/// states are then never reused).
static EXIT_KEY: OnceLock<Option<libc::pthread_key_t>> = OnceLock::new();

/// Has `thread_ended` run when the calling thread ends (after its own thread-local
/// destructors; the initial thread ends with the process and never runs it).
fn watch_exit(state: &'static ThreadState) {
    let key = EXIT_KEY.get_or_init(|| {
        let mut key: libc::pthread_key_t = 0;
        // SAFETY: `key` is writable; the destructor has C linkage and never unwinds.
        (unsafe { libc::pthread_key_create(&mut key, Some(thread_ended)) } == 0).then_some(key)
    });
    if let Some(key) = key {
        // SAFETY: a key created above; the value is this thread's leaked state.
        unsafe { libc::pthread_setspecific(*key, state as *const ThreadState as *const _) };
    }
}

extern "C" fn thread_ended(value: *mut libc::c_void) {
    // SAFETY: the key's values are only ever leaked states (`watch_exit`).
    let Some(state) = (unsafe { (value as *const ThreadState).as_ref() }) else {
        return;
    };
    // Never unwind into the C runtime.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if let Some(hook) = EXIT_HOOK.get() {
            hook(state);
        }
        // The state goes back as `fresh` makes one: whatever ran after this (another key's
        // destructor calling POMP2) creates a new one.
        state.end_call();
        take_back_alt_stack(state);
        state.set_location(std::ptr::null_mut());
        state.node.set(std::ptr::null());
        state.guessed.set(false);
        state.team.set(std::ptr::null());
        state.task.set(0);
        state.task_counter.set(1);
        // SAFETY: the ending thread is the state's only user (see `push_saved`).
        unsafe { (*state.saved.get()).clear() };
        state.position.set(None);
        state.fork_position.set(None);
        state.forks_open.set(0);
        state.fork_restores.borrow_mut().clear();
        state.stand_ins.borrow_mut().clear();
        state.with_lock_cache(|cache| *cache = [(0, 0, None); CACHE_SLOTS]);
        set_slot(std::ptr::null_mut());
        SPARE_STATES.lock().push(StatePtr(state));
    }));
}

/// Calls `f` with every thread's busy flag and current location (finalize).
pub(crate) fn for_each_state(mut f: impl FnMut(&AtomicBool, *mut Location, bool)) {
    // SAFETY: as in `state`.
    let own = unsafe { slot::get() } as *const ThreadState;
    for s in STATES.lock().iter() {
        f(&s.0.busy, s.0.location_ptr(), std::ptr::eq(s.0, own));
    }
}

extern "C" {
    /// The address of this thread's `pomptrace_thread_state` (src/openmp_shim.c).
    fn pomptrace_thread_state_slot() -> *mut *mut std::ffi::c_void;
}

/// Sets this thread's slot (once, when its state is created: the C call costs nothing there).
fn set_slot(state: *mut ThreadState) {
    // SAFETY: the shim returns the address of this thread's slot.
    unsafe { *pomptrace_thread_state_slot() = state as *mut std::ffi::c_void };
}

#[cfg(target_arch = "x86_64")]
mod slot {
    use super::ThreadState;

    extern "C" {
        /// `__thread void* pomptrace_thread_state`, initial-exec (src/openmp_shim.c).
        static mut pomptrace_thread_state: *mut std::ffi::c_void;
    }

    /// # Safety
    /// Reads this thread's slot; always sound, unsafe only as inline assembly is.
    #[inline(always)]
    pub unsafe fn get() -> *mut ThreadState {
        let p: *mut ThreadState;
        // SAFETY: the initial-exec sequence for a TLS variable: load its offset from the
        // thread pointer out of the GOT, then load the value at %fs:offset.
        unsafe {
            core::arch::asm!(
                "mov {p}, qword ptr [rip + {slot}@GOTTPOFF]",
                "mov {p}, qword ptr fs:[{p}]",
                slot = sym pomptrace_thread_state,
                p = out(reg) p,
                options(nostack, readonly, preserves_flags, pure),
            );
        }
        p
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod slot {
    use super::{pomptrace_thread_state_slot, ThreadState};

    /// # Safety
    /// Always sound; unsafe to match the x86-64 version.
    #[inline(always)]
    pub unsafe fn get() -> *mut ThreadState {
        // SAFETY: the shim returns the address of this thread's slot.
        unsafe { *pomptrace_thread_state_slot() as *mut ThreadState }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SIGUSR2 deliveries seen by `count_signal`.
    static SIGNALS_SEEN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

    extern "C" fn count_signal(_: libc::c_int) {
        SIGNALS_SEEN.fetch_add(1, Ordering::Relaxed);
    }

    #[test]
    fn the_end_of_a_call_raises_the_signal_put_off_during_it_once() {
        // SAFETY: installs a handler with C linkage for SIGUSR2, which nothing else here uses.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = count_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGUSR2, &action, std::ptr::null_mut());
        }
        std::thread::spawn(|| {
            let s = state();
            s.busy.store(true, Ordering::Relaxed);
            s.end_call();
            assert_eq!(
                SIGNALS_SEEN.load(Ordering::Relaxed),
                0,
                "nothing was put off"
            );
            s.busy.store(true, Ordering::Relaxed);
            s.pending_signal.store(libc::SIGUSR2, Ordering::Relaxed);
            s.end_call();
            assert!(!s.busy.load(Ordering::Relaxed));
            assert_eq!(SIGNALS_SEEN.load(Ordering::Relaxed), 1, "raised at the end");
            assert_eq!(s.pending_signal.load(Ordering::Relaxed), 0, "and taken");
            s.busy.store(true, Ordering::Relaxed);
            s.end_call();
            assert_eq!(SIGNALS_SEEN.load(Ordering::Relaxed), 1, "only once");
        })
        .join()
        .unwrap();
    }

    fn current_alt_stack() -> libc::stack_t {
        // SAFETY: a NULL new stack only queries.
        unsafe {
            let mut current: libc::stack_t = std::mem::zeroed();
            assert_eq!(libc::sigaltstack(std::ptr::null(), &mut current), 0);
            current
        }
    }

    #[test]
    fn a_thread_without_an_alternate_signal_stack_gets_one_and_gives_it_back() {
        std::thread::spawn(|| {
            // The test harness gives its threads alternate stacks of its own: this one has none.
            let disable = libc::stack_t {
                ss_sp: std::ptr::null_mut(),
                ss_flags: libc::SS_DISABLE,
                ss_size: 0,
            };
            // SAFETY: disables this thread's alternate stack; it is not running on it.
            assert_eq!(
                unsafe { libc::sigaltstack(&disable, std::ptr::null_mut()) },
                0
            );
            let s = state();
            let given = current_alt_stack();
            assert_eq!(given.ss_flags, 0, "enabled");
            assert_eq!(given.ss_size, ALT_STACK_SIZE);
            assert!(!s.alt_stack.get().is_null());
            take_back_alt_stack(s);
            assert_ne!(
                current_alt_stack().ss_flags & libc::SS_DISABLE,
                0,
                "disabled"
            );
            assert!(s.alt_stack.get().is_null());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_threads_own_alternate_signal_stack_is_left_alone() {
        std::thread::spawn(|| {
            let own = vec![0u8; 64 << 10].leak();
            let stack = libc::stack_t {
                ss_sp: own.as_mut_ptr().cast(),
                ss_flags: 0,
                ss_size: own.len(),
            };
            // SAFETY: a leaked buffer, valid for the rest of the process.
            assert_eq!(
                unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) },
                0
            );
            let s = state();
            let after = current_alt_stack();
            assert_eq!((after.ss_sp, after.ss_size), (stack.ss_sp, stack.ss_size));
            assert!(s.alt_stack.get().is_null());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn each_thread_has_its_own_state() {
        let here = state() as *const ThreadState as usize;
        assert_eq!(here, state() as *const ThreadState as usize);
        let there = std::thread::spawn(|| state() as *const ThreadState as usize)
            .join()
            .unwrap();
        assert_ne!(here, there);
        assert_eq!(state().tid.get(), unsafe { libc::gettid() } as u32);
    }

    #[test]
    fn the_state_of_an_ended_thread_goes_to_a_new_one_reset() {
        let first = std::thread::spawn(|| {
            let s = state();
            s.task_counter.set(77);
            s.forks_open.set(3);
            s as *const ThreadState as usize
        })
        .join()
        .unwrap();
        // Threads alive at once take every spare state (other tests' ended threads' too).
        let alive = 32;
        let barrier = std::sync::Barrier::new(alive);
        let reused = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..alive)
                .map(|_| {
                    scope.spawn(|| {
                        let s = state();
                        // SAFETY: gettid has no preconditions.
                        let tid = unsafe { libc::gettid() } as u32;
                        let found = (s as *const ThreadState as usize == first).then(|| {
                            (s.task_counter.get(), s.forks_open.get(), s.tid.get() == tid)
                        });
                        barrier.wait();
                        found
                    })
                })
                .collect();
            threads.into_iter().find_map(|t| t.join().unwrap())
        });
        let (counter, forks, own_tid) = reused.expect("an ended thread's state is reused");
        assert_eq!((counter, forks), (1, 0), "reset as a new state");
        assert!(own_tid, "with the new thread's id");
    }
}
