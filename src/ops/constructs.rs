//! What each POMP2 call records (semantics doc, section 4.2), in terms of constructs, tasks and
//! the calling thread's location. The FFI layer converts arguments and calls these.
//!
//! "Entering" calls start the measurement if needed; the others do nothing before it starts.
//! Parallel fork/begin/end/join are recorded even while recording is off (POMP2_Off), so the
//! team structure stays whole; everything else only while it is on. Task bookkeeping happens in
//! every state, so task ids stay consistent across POMP2_Off/On.

use std::sync::atomic::{AtomicPtr, Ordering};

use crate::base::diagnostics::warn;
use crate::base::diagnostics::warn_once;
use crate::lifecycle::active::Active;
use crate::lifecycle::active::{active, active_fast, active_on, Outcome};
use crate::lifecycle::measurement::Measurement;
use crate::model::tasks;
use crate::model::team;
use crate::model::thread::{self, ThreadState};
use crate::model::tree;
use crate::output::registry::REGISTRY;
use crate::output::registry::{Construct, FastRegion, NO_REGION};
use crate::record::location::Location;
use otf2::EncodedU32;

/// The construct behind a handle, assigning it from `ctc` when the handle is still empty.
/// Calls that carry no CTC string get None for an empty handle (their entering call ran while
/// the measurement was off, or the instrumenter left out the string) and record nothing.
/// `ctc` is only asked for when the handle is empty (reading a C string costs a scan).
#[inline(always)]
pub fn construct<'a>(
    slot: &AtomicPtr<Construct>,
    ctc: impl FnOnce() -> Option<&'a [u8]>,
    user: bool,
) -> Option<&'static Construct> {
    let p = slot.load(Ordering::Acquire);
    // SAFETY: handles are only ever written by `assign` (OPARI2 zero-initialises them), which
    // stores pointers to leaked, immutable `Construct`s with release ordering.
    if let Some(c) = unsafe { p.as_ref() } {
        return Some(c);
    }
    construct_slow(slot, ctc(), user)
}

#[cold]
#[inline(never)]
fn construct_slow(
    slot: &AtomicPtr<Construct>,
    ctc: Option<&[u8]>,
    user: bool,
) -> Option<&'static Construct> {
    match ctc {
        Some(text) => Some(assign(slot, text, user)),
        None => {
            warn_once("unassigned-handle", || {
                "a POMP2 call without a CTC string came with an unassigned region handle; its events are skipped".into()
            });
            None
        }
    }
}

/// POMP2_Assign_handle / POMP2_USER_Assign_handle: defines the construct's regions once.
#[cold]
pub fn assign(slot: &AtomicPtr<Construct>, ctc: &[u8], user: bool) -> &'static Construct {
    // The filter decides how the construct is defined.
    crate::output::registry::load_filter_once(|| crate::base::config::Config::from_env(|_| {}));
    let mut registry = REGISTRY.lock();
    let existing = slot.load(Ordering::Acquire);
    // SAFETY: see `construct`.
    if let Some(c) = unsafe { existing.as_ref() } {
        return c;
    }
    let (c, problem) = registry.define_construct(ctc, user);
    slot.store(c as *const Construct as *mut Construct, Ordering::Release);
    drop(registry);
    if let Some(message) = problem {
        warn(&message);
    }
    c
}

/// The calling thread's location, giving it one if it has none yet (a thread that records
/// outside any instrumented parallel region).
#[inline(always)]
#[allow(clippy::mut_from_ref)] // the location is this thread's by the thread-tree contract
fn location(a: &Active) -> &'static mut Location {
    match team::location_of(a.thread()) {
        Some(loc) => loc,
        None => attach(a.get(), a.thread()),
    }
}

/// Threads of control other than the initial thread seen so far (for their names).
static OTHER_ROOTS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

#[cold]
#[inline(never)]
#[allow(clippy::mut_from_ref)] // the location is this thread's by the thread-tree contract
fn attach(m: &'static Measurement, thread: &'static ThreadState) -> &'static mut Location {
    let guessed = crate::openmp::level() > 0;
    let node = if !guessed {
        // Not the initial thread (that one has a location from the start): a thread the
        // program created itself is a root of its own, and its teams hang under it.
        let n = OTHER_ROOTS.fetch_add(1, Ordering::Relaxed) + 1;
        let name = format!("Pthread {n}");
        let location = tree::Factory::new_location(m, name.clone());
        tree::Node::root(location, format!("{name} "))
    } else {
        team::resolve(thread, m.root(), m.root_team, m).0
    };
    team::adopt(thread, node, guessed, m);
    // SAFETY: the thread holds the location's ownership word (`adopt`).
    unsafe { &mut *thread.location_ptr() }
}

/// The team the calling thread works in now.
fn current_team(thread: &ThreadState, m: &'static Measurement) -> &'static tree::Team {
    // SAFETY: teams are leaked, never freed.
    unsafe { thread.team.get().as_ref() }.unwrap_or(m.root_team)
}

/// Runs `f` on the calling thread's location with the current time, if recording.
#[inline(always)]
pub(crate) fn record(a: Option<Active>, f: impl FnOnce(&mut Location, u64)) {
    if let Some(a) = a {
        if a.recording() {
            f(location(&a), a.now())
        }
    }
}

// One-event calls (Enter, Leave, the exit of a wait) have a fast path for the common state
// of a run (`active_fast`), written out so that it inlines into each entry point with nothing
// out of line but the encoder's own rare cases; everything else (measurement not running or
// to be started, another clock, metrics, a thread without state or location,
// membarrier not registered yet) takes the general path, out of line. Both record the same.
// A call with nothing to record (the measurement disabled or finished, or recording off)
// skips the general path too, checked only after the fast path missed.

/// Whether this call has nothing to record: the measurement has ended for good (`HOT_ENDED`),
/// or it runs with recording off (`POMP2_Off`, `inst off`). Then a one-event call skips the
/// general path, so a paused region costs what a disabled one does.
#[inline(always)]
fn nothing_to_record() -> bool {
    let hot = crate::lifecycle::state::hot();
    hot & crate::lifecycle::state::HOT_ENDED != 0
        || hot & (crate::lifecycle::state::HOT_RUNNING | crate::lifecycle::state::HOT_RECORDING)
            == crate::lifecycle::state::HOT_RUNNING
}

/// One Enter of `region`, if recording; `start`: the call may start the measurement.
#[inline(always)]
fn enter(start: bool, region: u32) {
    if region != NO_REGION && !enter_fast(region) && !nothing_to_record() {
        enter_general(start, region);
    }
}

/// The guard and location of the fast path (see `active_fast`), or what the entry point has
/// to do instead. Calls nothing.
#[inline(always)]
fn fast_location() -> Result<(Active, &'static mut Location), Outcome> {
    let a = active_fast()?;
    match team::location_of(a.thread()) {
        Some(loc) => Ok((a, loc)),
        None => Err(a.finish(false)),
    }
}

/// `fast_location` for a path that may call: a signal that arrived meanwhile is raised here
/// when it gives way to the general path.
#[inline(always)]
fn fast_location_or_raise() -> Option<(Active, &'static mut Location)> {
    match fast_location() {
        Ok(found) => Some(found),
        Err(_) => {
            crate::lifecycle::active::raise_pending_signal();
            None
        }
    }
}

#[inline(always)]
fn enter_fast(region: u32) -> bool {
    let Some((a, loc)) = fast_location_or_raise() else {
        return false;
    };
    loc.enter_with(a.now(), region, false);
    true
}

#[cold]
#[inline(never)]
fn enter_general(start: bool, region: u32) {
    record(active(start), |loc, t| loc.enter(t, region));
}

/// One Leave of `region`, if recording.
#[inline(always)]
fn leave(region: u32) {
    if region != NO_REGION && !leave_fast(region) && !nothing_to_record() {
        leave_general(region);
    }
}

#[inline(always)]
fn leave_fast(region: u32) -> bool {
    let Some((a, loc)) = fast_location_or_raise() else {
        return false;
    };
    loc.leave_with(a.now(), region, false);
    true
}

#[cold]
#[inline(never)]
fn leave_general(region: u32) {
    record(active(false), |loc, t| loc.leave(t, region));
}

// The entry points of one-event calls try a narrower path first, which calls nothing (see
// `Location::try_enter_fast`): with no call in it, an entry point needs no stack frame and
// nothing on that path can panic, so the FFI layer runs it outside its panic boundary and
// goes to the paths above (in an `extern "C"` function of its own) only when it says no.

/// One Enter or Leave of `region` on the fast path's location: the first try (`counted_at`
/// None) records into a plain location with `fast`, or hands over to the second, which
/// records with `counted` at the time the first read (see `try_enter`).
#[inline(always)]
fn step(
    a: Active,
    loc: &mut Location,
    region: &FastRegion,
    counted_at: Option<u64>,
    fast: impl FnOnce(&mut Location, u64, u32, EncodedU32) -> bool,
    counted: impl FnOnce(&mut Location, u64, u32) -> bool,
) -> Outcome {
    let (wire, region) = (&region.wire, region.id);
    match counted_at {
        None => {
            // A location that is not plain refuses every fast write, so it is asked about only
            // after one failed. The wire form is read only here, after the clock: one value
            // fewer to keep in a register until then.
            let time = a.now();
            if fast(loc, time, region, *wire) {
                a.finish(true)
            } else if loc.plain() {
                a.finish(false)
            } else {
                a.hand_to_counted(time)
            }
        }
        Some(time) => {
            let done = counted(loc, time, region);
            a.finish(done)
        }
    }
}

/// The Enter of `region` on the fast path's location (see `step`).
#[inline(always)]
fn enter_step(
    a: Active,
    loc: &mut Location,
    region: &FastRegion,
    counted_at: Option<u64>,
) -> Outcome {
    step(
        a,
        loc,
        region,
        counted_at,
        Location::try_enter_fast_encoded,
        Location::try_enter_counted,
    )
}

/// The Leave of `region` on the fast path's location (see `step`).
#[inline(always)]
fn leave_step(
    a: Active,
    loc: &mut Location,
    region: &FastRegion,
    counted_at: Option<u64>,
) -> Outcome {
    step(
        a,
        loc,
        region,
        counted_at,
        Location::try_leave_fast_encoded,
        Location::try_leave_counted,
    )
}

/// The Enter of `region` in the common case only: what the entry point still has to do
/// (`Outcome::DONE` when it is recorded, or the region is filtered out). `counted_at`: None
/// for the first try, which calls nothing and records only into a plain location; the time
/// the first try read for the second, which the entry point makes when the outcome asks
/// (`Outcome::counted_at`).
#[inline(always)]
fn try_enter(region: &FastRegion, counted_at: Option<u64>) -> Outcome {
    if region.id == NO_REGION {
        return Outcome::DONE;
    }
    match fast_location() {
        Ok((a, loc)) => enter_step(a, loc, region, counted_at),
        Err(outcome) => outcome,
    }
}

/// The Leave of `region` in the common case only (as `try_enter`).
#[inline(always)]
fn try_leave(region: &FastRegion, counted_at: Option<u64>) -> Outcome {
    if region.id == NO_REGION {
        return Outcome::DONE;
    }
    match fast_location() {
        Ok((a, loc)) => leave_step(a, loc, region, counted_at),
        Err(outcome) => outcome,
    }
}

/// Records a switch back to `old` if another task (`current`) ran on this thread meanwhile.
#[inline(always)]
fn switch_back(loc: &mut Location, time: u64, current: i64, old: i64) {
    if current != old {
        let (creator, generation) = tasks::split(old);
        let team = loc.team;
        if let Some(w) = loc.writer() {
            w.thread_task_switch(time, team, creator, generation);
        }
    }
}

// ---- parallel regions -------------------------------------------------------------------

/// What a fork hands over for a construct whose handle is unassigned: nothing is known of
/// whether its teams receive `pomp_tpd`.
static UNKNOWN_CONSTRUCT: std::sync::atomic::AtomicU8 =
    std::sync::atomic::AtomicU8::new(crate::output::registry::TPD_UNKNOWN);

/// Returns the encountering task (the caller stores it in `pomp2_old_task`). `if_clause` and
/// `requested_threads` are what the program asks the runtime for (OPARI2 passes the values it
/// puts on the directive).
#[inline(always)]
pub fn parallel_fork(c: Option<&Construct>, if_clause: bool, requested_threads: i32) -> i64 {
    let thread = thread::state();
    let old = thread.task.get();
    let mut forking_team = None;
    if let Some(a) = active_on(thread, true) {
        let m = a.get();
        let requested = if requested_threads > 0 {
            requested_threads as u32
        } else {
            crate::openmp::max_threads().max(1) as u32
        };
        let loc = location(&a);
        loc.thread_fork(a.now(), requested);
        if let Some(path) = loc.profile_path() {
            // SAFETY: nodes are leaked, never freed; the location's thread has one.
            if let Some(node) = unsafe { thread.node.get().as_ref() } {
                node.fork.publish_profile_path(path);
            }
        }
        forking_team = Some(current_team(thread, m));
    }
    let copies_tpd = c.map_or(&UNKNOWN_CONSTRUCT, |c| &c.copies_tpd);
    team::fork(
        thread,
        forking_team,
        (if_clause, requested_threads),
        copies_tpd,
    );
    old
}

#[inline(always)]
pub fn parallel_begin(c: Option<&Construct>) {
    // First, and also when nothing is recorded: the program must never see the channel.
    let channel = team::received_fork();
    let Some(a) = active(true) else {
        return;
    };
    let m = a.get();
    let thread = a.thread();
    let Some(root) = m.root else {
        return;
    };
    let copies_tpd = c.map_or(&UNKNOWN_CONSTRUCT, |c| &c.copies_tpd);
    let (team, k) = team::join_team(thread, root, m.root_team, m, channel, copies_tpd);
    let loc = location(&a);
    if k != 0 {
        // Workers run their implicit task; the master continues the task it forked from.
        thread.task.set(tasks::implicit(loc.number));
        if loc.profiling() {
            // SAFETY: nodes are leaked, never freed.
            let node = unsafe { thread.node.get().as_ref() };
            if let Some(forking) = node.and_then(|n| n.parent) {
                loc.profile_thread_start(forking.fork.profile_path.load(Ordering::Acquire));
            }
        }
    }
    loc.profile_team_begin();
    let t = a.now();
    match c.map(|c| c.parallel).filter(|&r| r != NO_REGION) {
        Some(region) => {
            loc.thread_team_begin_and_enter(t, thread.tid.get(), team.comm, region, a.metrics())
        }
        None => loc.thread_team_begin(t, thread.tid.get(), team.comm),
    }
}

#[inline(always)]
pub fn parallel_end(c: Option<&Construct>) {
    let thread = thread::state();
    if let Some(a) = active_on(thread, false) {
        let loc = location(&a);
        let t = a.now();
        match c.map(|c| c.parallel).filter(|&r| r != NO_REGION) {
            Some(region) => loc.leave_and_thread_team_end(t, region, a.metrics()),
            None => loc.thread_team_end(t),
        }
        loc.profile_team_end();
    }
    team::leave_team(thread);
}

#[inline(always)]
pub fn parallel_join(old: i64) {
    let thread = thread::state();
    thread.task.set(old);
    team::join(thread);
    if let Some(a) = active_on(thread, false) {
        location(&a).thread_join(a.now());
    }
}

// ---- worksharing and synchronisation ----------------------------------------------------

/// Enter of a construct's outer region (for/do, sections, single, workshare, critical,
/// ordered, atomic, flush, and the user regions).
#[inline(always)]
pub fn enter_outer(c: &Construct) {
    // `enter`/`leave` check the region first: a filtered region costs a load and a branch.
    enter(true, c.outer);
}

#[inline(always)]
pub fn leave_outer(c: &Construct) {
    // `enter`/`leave` check the region first: a filtered region costs a load and a branch.
    leave(c.outer);
}

/// `enter_outer` in the common case only (see `try_enter`).
#[inline(always)]
pub fn try_enter_outer(c: &Construct, counted_at: Option<u64>) -> Outcome {
    try_enter(&c.fast.outer, counted_at)
}

/// `leave_outer` in the common case only (see `try_enter`).
#[inline(always)]
pub fn try_leave_outer(c: &Construct, counted_at: Option<u64>) -> Outcome {
    try_leave(&c.fast.outer, counted_at)
}

/// `enter_inner` in the common case only (see `try_enter`).
#[inline(always)]
pub fn try_enter_inner(c: &Construct, counted_at: Option<u64>) -> Outcome {
    try_enter(&c.fast.inner, counted_at)
}

/// `leave_inner` in the common case only (see `try_enter`).
#[inline(always)]
pub fn try_leave_inner(c: &Construct, counted_at: Option<u64>) -> Outcome {
    try_leave(&c.fast.inner, counted_at)
}

/// Enter of a construct's inner region (section, single/ordered block, master).
#[inline(always)]
pub fn enter_inner(c: &Construct) {
    // `enter`/`leave` check the region first: a filtered region costs a load and a branch.
    enter(true, c.inner);
}

#[inline(always)]
pub fn leave_inner(c: &Construct) {
    // `enter`/`leave` check the region first: a filtered region costs a load and a branch.
    leave(c.inner);
}

#[inline(always)]
pub fn critical_begin(c: &Construct) {
    if c.filtered {
        return;
    }
    let Some(a) = active(true) else {
        return;
    };
    if a.recording() {
        // The critical section was entered before this call: its time follows that.
        let t = a.now_after_acquiring();
        let loc = location(&a);
        if let Some(lock) = c.critical {
            // The critical section serialises its holders (see `locks::acquired`).
            let order = lock.acquisitions.load(Ordering::Relaxed).wrapping_add(1);
            lock.acquisitions.store(order, Ordering::Relaxed);
            lock.holder_order.store(order, Ordering::Relaxed);
            loc.thread_acquire_lock(t, lock.id, order);
        }
        let inner = &c.fast.inner;
        if inner.id != NO_REGION {
            loc.enter_after_record(t, inner.id, inner.wire, false);
        }
    }
}

#[inline(always)]
pub fn critical_end(c: &Construct) {
    if c.filtered {
        return;
    }
    record(active(false), |loc, t| {
        if c.inner != NO_REGION {
            loc.leave(t, c.inner);
        }
        if let Some(lock) = c.critical {
            let order = lock.holder_order.load(Ordering::Relaxed);
            loc.thread_release_lock(t, lock.id, order);
        }
    });
}

/// Barrier, implicit barrier and taskwait: enter saves the current task (returned, for the
/// caller's `pomp2_old_task`).
#[inline(always)]
pub fn wait_enter(region: u32) -> i64 {
    if region == NO_REGION {
        return tasks::current();
    }
    if let Some(old) = wait_enter_fast(region) {
        return old;
    }
    let old = tasks::current();
    if !nothing_to_record() {
        enter_general(true, region);
    }
    old
}

/// `wait_enter` in the common case only (see `try_enter`): what the entry point still has to
/// do, and the encountering task, which is its result unless the outcome asks for the general
/// path (`wait_enter`). Calls nothing.
/// `counted_at` as for `try_enter`.
#[inline(always)]
pub fn try_wait_enter(region: &FastRegion, counted_at: Option<u64>) -> (Outcome, i64) {
    if region.id == NO_REGION {
        return (Outcome::GENERAL, 0);
    }
    match fast_location() {
        Ok((a, loc)) => {
            let thread = a.thread();
            let outcome = enter_step(a, loc, region, counted_at);
            // Read after the record (no task runs meanwhile): one value fewer to keep through it.
            (outcome, thread.task.get())
        }
        Err(outcome) => (outcome, 0),
    }
}

/// `wait_exit` in the common case only: no other task ran on this thread meanwhile (so there
/// is no switch back to record) and the Leave fits (see `try_enter`); otherwise the outcome
/// asks for `wait_exit`. Calls nothing.
/// `counted_at` as for `try_enter`.
#[inline(always)]
pub fn try_wait_exit(region: &FastRegion, old: i64, counted_at: Option<u64>) -> Outcome {
    if region.id == NO_REGION {
        return Outcome::GENERAL;
    }
    match fast_location() {
        Ok((a, loc)) => {
            if a.thread().task.get() != old {
                return a.finish(false);
            }
            leave_step(a, loc, region, counted_at)
        }
        Err(outcome) => outcome,
    }
}

#[inline(always)]
fn wait_enter_fast(region: u32) -> Option<i64> {
    let (a, loc) = fast_location_or_raise()?;
    let old = a.thread().task.get();
    loc.enter_with(a.now(), region, false);
    Some(old)
}

/// The matching exit: a switch back to `old` if tasks ran here meanwhile, then the Leave.
#[inline(always)]
pub fn wait_exit(region: u32, old: i64) {
    if region == NO_REGION {
        tasks::set_current(old);
    } else if !wait_exit_fast(region, old) {
        if nothing_to_record() {
            tasks::set_current(old);
        } else {
            wait_exit_general(region, old);
        }
    }
}

#[inline(always)]
fn wait_exit_fast(region: u32, old: i64) -> bool {
    let Some((a, loc)) = fast_location_or_raise() else {
        return false;
    };
    let thread = a.thread();
    let t = a.now();
    switch_back(loc, t, thread.task.get(), old);
    loc.leave_with(t, region, false);
    thread.task.set(old);
    true
}

#[cold]
#[inline(never)]
fn wait_exit_general(region: u32, old: i64) {
    record(active(false), |loc, t| {
        switch_back(loc, t, tasks::current(), old);
        loc.leave(t, region);
    });
    tasks::set_current(old);
}

// ---- tasks ------------------------------------------------------------------------------

/// Task creation: returns (new task id, encountering task) for `pomp2_new_task` and
/// `pomp2_old_task`.
pub fn task_create_begin(c: &Construct) -> (i64, i64) {
    let m = active(true);
    if tasks::current() == 0 {
        if let Some(a) = &m {
            // A task created outside any parallel region: its parent is the implicit task.
            tasks::set_current(tasks::implicit(location(a).number));
        }
    }
    let old = tasks::current();
    let new = tasks::new_handle();
    record(m, |loc, t| {
        if c.outer != NO_REGION {
            loc.enter(t, c.outer);
        }
        let (creator, generation) = tasks::split(new);
        let team = loc.team;
        if let Some(w) = loc.writer() {
            w.thread_task_create(t, team, creator, generation);
        }
    });
    (new, old)
}

pub fn task_create_end(c: &Construct, old: i64) {
    wait_exit(c.outer, old);
}

pub fn task_begin(c: &Construct, task: i64) {
    tasks::set_current(task);
    record(active(true), |loc, t| {
        let (creator, generation) = tasks::split(task);
        let team = loc.team;
        if let Some(w) = loc.writer() {
            w.thread_task_switch(t, team, creator, generation);
        }
        let inner = &c.fast.inner;
        if inner.id != NO_REGION {
            loc.enter_after_record(t, inner.id, inner.wire, true);
        }
    });
}

pub fn task_end(c: &Construct) {
    record(active(false), |loc, t| {
        if c.inner != NO_REGION {
            loc.leave(t, c.inner);
        }
        let (creator, generation) = tasks::split(tasks::current());
        let team = loc.team;
        if let Some(w) = loc.writer() {
            w.thread_task_complete(t, team, creator, generation);
        }
    });
}

// ---- locks ------------------------------------------------------------------------------

/// Which lock API function a wrapper stands for (index into the lock API regions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockCall {
    Init = 0,
    Destroy = 1,
    Set = 2,
    Unset = 3,
    Test = 4,
    InitNest = 5,
    DestroyNest = 6,
    SetNest = 7,
    UnsetNest = 8,
    TestNest = 9,
}

impl LockCall {
    fn nest(self) -> bool {
        self as usize >= 5
    }
}

/// A lock wrapper: records around `real`, the real OpenMP operation, which runs in every state
/// (before the start, after the end, with recording off). `real` returns the OpenMP result
/// (test functions: non-zero on success; others: 0). The real operation may block for long,
/// so it runs outside the recording sections (the measurement may end meanwhile).
///
/// The events on each side of the real operation share one timestamp (Enter and
/// ThreadReleaseLock before it, ThreadAcquireLock and Leave after it), as critical sections'
/// do: nothing happens between them. An unset writes its Enter and ThreadReleaseLock after
/// the real unset, with the time taken before it: the lock is released without waiting for
/// our encoding (shorter hold times when threads contend for it).
#[inline(always)]
pub fn lock_call(call: LockCall, lock: usize, real: impl FnOnce() -> i32) -> i32 {
    let nest = call.nest();
    let unset = matches!(call, LockCall::Unset | LockCall::UnsetNest);
    // (region, time before, (lock id, order) released), when recording.
    let before = {
        let start = matches!(call, LockCall::Init | LockCall::InitNest);
        let Some(guard) = active(start) else {
            return real();
        };
        // Read while the lock is still held: its counters are only ours until the unset.
        let releasing = unset.then(|| crate::model::locks::releasing(lock, nest));
        guard.recording().then(|| {
            let region = guard.get().lock_api_regions[call as usize];
            let t = guard.now();
            if !unset {
                location(&guard).enter(t, region);
            }
            (region, t, releasing)
        })
    };
    let result = real();
    // The acquisition is counted in every state, so orders stay right.
    let acquisition = match call {
        LockCall::Init | LockCall::InitNest => {
            crate::model::lock_table::register(lock);
            None
        }
        LockCall::Destroy | LockCall::DestroyNest => {
            crate::model::lock_table::unregister(lock);
            None
        }
        LockCall::Set | LockCall::SetNest => Some(crate::model::locks::acquired(lock, nest)),
        LockCall::Test | LockCall::TestNest if result != 0 => {
            Some(crate::model::locks::acquired(lock, nest))
        }
        _ => None,
    };
    if before.is_some() || acquisition.is_some() {
        if let Some(guard) = active(false) {
            let acquisition = acquisition.filter(|_| guard.recording());
            if before.is_some() || acquisition.is_some() {
                let loc = location(&guard);
                if let (true, Some((region, t, releasing))) = (unset, before) {
                    loc.enter(t, region);
                    if let Some((id, order)) = releasing {
                        loc.thread_release_lock(t, id, order);
                    }
                }
                let t = if acquisition.is_some() {
                    guard.now_after_acquiring()
                } else {
                    guard.now()
                };
                if let Some((id, order)) = acquisition {
                    loc.thread_acquire_lock(t, id, order);
                }
                if let Some((region, ..)) = before {
                    loc.leave_after_record(t, region);
                }
            }
        }
    }
    result
}
