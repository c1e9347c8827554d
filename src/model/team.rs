//! The thread tree: which location and which thread team an OpenMP thread records into.
//!
//! As in the reference, a thread is identified by its position in the tree of teams, not by its
//! OS thread: thread `k` of a team forked from node `P` is `P`'s child `k`, created on first use
//! and reused whenever that position recurs, whichever OS thread runs it. Child 0 shares its
//! parent's location (the master continues its stream); the others get their own. Teams of one
//! thread add no node. A team is identified by the node it was forked from, the team that node
//! was in at the fork, and its size, and becomes one OTF2 Comm (with a COMM_GROUP of its
//! members); a one-thread team inside a one-thread team is the same team.
//!
//! Every thread of control that is not an OpenMP worker (the initial thread, each pthread that
//! calls POMP2) is the root of a tree of its own. A forking thread stores its node in
//! `pomp_tpd`, the thread-private variable of OPARI2's `--omp-tpd` (which `pomptrace gcc`
//! passes): OpenMP copies it into every member of the team (`copyin`), so each member reads its
//! parent at its team begin, asks the runtime for its team's size and its own number, and
//! remembers the result; the forking thread itself (thread 0 of its team) finds its own node
//! there in any case. Shared tables are only touched when a position is new.
//!
//! A team forked by code instrumented without `--omp-tpd` (the classic `opari2 file.c`) does
//! not receive the value. While there is only one root, its members find their position by
//! walking the OpenMP ancestry from that root, as remembered from their last team begin: a
//! parallel region in a loop re-resolves with three runtime queries and no lock. Once a second
//! root exists the ancestry is ambiguous (every root's teams start at level 1), so the forking
//! thread hands its node to such a team through the default-device ICV, which OpenMP copies
//! into every implicit task of the team; each member reads it first thing in the region and
//! puts the original value back before any code of the program runs, whether the measurement
//! still runs or not. Which teams receive `pomp_tpd` each parallel construct learns from its
//! first worker to begin, and the process from the first construct that does: from then on a
//! fork writes no ICV for them.
//!
//! A position is one location's one writer: a thread takes the location's ownership word when
//! it takes the position and gives it back at the team's end. A thread that finds it taken (a
//! position inferred wrongly, e.g. for a thread first seen inside a parallel region that was
//! not instrumented) records into a location of its own, with one warning, never into the
//! other thread's buffer.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};

use crate::base::diagnostics::warn_once;
use crate::model::thread::ThreadState;
use crate::model::tree::{
    CachedPosition, Factory, ForkPosition, Node, Saved, Team, CACHED_LEVELS, NODES, SEVERAL_ROOTS,
};
use crate::openmp;
use crate::output::registry::{TPD_COPIED, TPD_NOT_COPIED, TPD_UNKNOWN};
use crate::record::location::{Location, LocationCell};
use otf2::UNDEFINED_U32;

/// Top-level team sizes, as workers learn them without asking the runtime (single root only).
/// The runtime's answer lives in its team structure, which the master has just written: asking
/// costs a worker a cross-core miss, and the master another when it writes that line again,
/// both on the region's critical path (60-100 ns per 2-thread region measured here). A team's
/// size follows from what its fork asked for (if clause, thread count) while dynamic
/// adjustment is off, so the master publishes the size its team got, the next top-level fork
/// keeps it while it asks for the same, and a worker uses it while it holds (its own thread
/// number is below it); each is written only when it changes, so in a steady run the line
/// stays shared and costs nobody a miss. The master still asks (its own line: no miss) and
/// checks: a different answer for the same request turns predictions off for the run.
#[repr(align(64))]
struct Padded<T>(T);
/// The size of the last top-level team while the forks since asked for the same; 0: ask.
static TOP_TEAM_SIZE: Padded<AtomicU32> = Padded(AtomicU32::new(0));
/// What the last top-level fork asked for (`request_key`, 0 for none or a dynamic one;
/// written by forking threads only).
static TOP_FORK_REQUEST: Padded<AtomicU64> = Padded(AtomicU64::new(0));
/// A top-level team got another size than the same request had before: never predict again.
static TOP_PREDICTION_OFF: AtomicBool = AtomicBool::new(false);

/// Default-device values that carry a node index: far above any real device number.
const CHANNEL_BASE: i32 = 0x5000_0000;
const CHANNEL_END: i32 = 0x6000_0000;

/// Makes the calling thread act as `node` for good (a root, at its first call, or a thread
/// first seen inside a team it did not see begin, `guessed` from the OpenMP ancestry): it holds
/// the location's ownership word until it ends.
pub fn adopt(thread: &ThreadState, node: &'static Node, guessed: bool, factory: &dyn Factory) {
    thread.guessed.set(guessed);
    let tid = thread.tid.get();
    let location = if node.location.holds(tid) || node.location.take(tid) {
        node.location
    } else {
        stand_in(thread, node.location, factory)
    };
    thread.node.set(node);
    thread.set_location(location.as_ptr());
}

/// The location a thread records into for a position whose location another thread holds: one
/// of its own, made the first time (with one warning for the run).
#[cold]
#[inline(never)]
fn stand_in(
    thread: &ThreadState,
    taken: &'static LocationCell,
    factory: &dyn Factory,
) -> &'static LocationCell {
    if let Some((_, own)) = thread
        .stand_ins
        .borrow()
        .iter()
        .find(|(of, _)| std::ptr::eq(*of, taken))
    {
        return own;
    }
    // SAFETY: only the name is read, which never changes after the location is made.
    let name = unsafe { &(*taken.as_ptr()).name }.clone();
    let tid = thread.tid.get();
    let own = factory.new_location(format!("{name} (OS thread {tid})"));
    // Nobody else knows of it; taken so that the end of the thread retires it.
    own.take(tid);
    warn_once("second-writer", || {
        format!(
            "OS thread {tid} took the position of location \"{name}\" while another thread \
             recorded into it (a parallel region that was not instrumented, or one forked \
             where its team could not be told which thread forked it); it records into a \
             location of its own, \"{name} (OS thread {tid})\""
        )
    });
    thread.stand_ins.borrow_mut().push((taken, own));
    own
}

/// (team size, this thread's ancestor's thread number) at nesting level `level`, as the OpenMP
/// runtime reports them.
#[inline(always)]
fn team_shape_at(level: u32) -> (u32, u32) {
    let size = openmp::team_size(level).unwrap_or(1);
    let k = openmp::ancestor_thread_num(level)
        .unwrap_or(0)
        .min(size - 1);
    (size, k)
}

/// The calling thread's position for the team it is in now, from its cached position when
/// the OpenMP runtime reports the same ancestry, else by walking from `root`.
/// Returns (node, team, thread number).
#[inline(always)]
pub fn resolve(
    thread: &ThreadState,
    root: &'static Node,
    root_team: &'static Team,
    factory: &dyn Factory,
) -> (&'static Node, &'static Team, u32) {
    let (level, thread_num) = openmp::level_and_thread_num();
    let position = match cached_position(thread, root, level, thread_num) {
        Some(hit) => hit,
        None => resolve_by_walking(thread, root, root_team, factory, level, thread_num),
    };
    if level == 1 && position.2 == 0 {
        publish_top_team_size(position.1.size);
    }
    position
}

/// (team size, thread number) of the calling thread's top-level team, given its thread number
/// `k` in it: a worker takes the published size while it holds (see `TOP_TEAM_SIZE`),
/// everybody else asks the runtime.
#[inline(always)]
fn top_team_shape(k: u32) -> (u32, u32) {
    if k != 0 {
        let predicted = TOP_TEAM_SIZE.0.load(Ordering::Relaxed);
        if k < predicted && !SEVERAL_ROOTS.load(Ordering::Acquire) {
            return (predicted, k);
        }
    }
    // At level 1 the current team is the top-level one.
    let size = openmp::num_threads();
    (size, k.min(size - 1))
}

/// The master of a top-level team publishes its size (only when it changed, see
/// `TOP_TEAM_SIZE`); a size other than the one published for the same request turns
/// predictions off (the runtime gives one thread to a request it gave several before when no
/// level may be active: that changes nothing for workers).
#[inline(always)]
fn publish_top_team_size(size: u32) {
    let published = TOP_TEAM_SIZE.0.load(Ordering::Relaxed);
    if published != size {
        publish_changed_top_team_size(published, size);
    }
}

#[cold]
#[inline(never)]
fn publish_changed_top_team_size(published: u32, size: u32) {
    if SEVERAL_ROOTS.load(Ordering::Acquire) {
        return;
    }
    // Workers that took a published size of another team of several threads are in the wrong
    // team. (A one-thread team has no workers, and none took a published 1.)
    let mistaken = published > 1 && size > 1;
    if mistaken && !TOP_PREDICTION_OFF.swap(true, Ordering::Relaxed) {
        crate::base::diagnostics::warn(&format!(
            "a top-level team got {size} threads where the same request (if clause, \
             num_threads) had got {published}: its workers may be recorded in a team of \
             {published}; from now on every worker asks the OpenMP runtime"
        ));
    }
    let next = if TOP_PREDICTION_OFF.load(Ordering::Relaxed) {
        0
    } else {
        size
    };
    TOP_TEAM_SIZE.0.store(next, Ordering::Relaxed);
}

/// A top-level fork (single root): a request other than the last one's withdraws the
/// published size before the team starts (the runtime's team start orders this store before
/// the workers' loads).
fn note_top_fork(if_clause: bool, requested_threads: i32) {
    // With dynamic adjustment on, the runtime may give any size up to the request: every such
    // fork withdraws the published size. (A request for one thread gets one in any case, and
    // is not worth asking about: one-thread runs make many of them.)
    let one_thread = !if_clause || requested_threads <= 1;
    let key = if one_thread || !openmp::dynamic() {
        request_key(if_clause, requested_threads)
    } else {
        0 // matches no request, not even the next one
    };
    if key == 0 || TOP_FORK_REQUEST.0.load(Ordering::Relaxed) != key {
        TOP_FORK_REQUEST.0.store(key, Ordering::Relaxed);
        if TOP_TEAM_SIZE.0.load(Ordering::Relaxed) != 0 {
            TOP_TEAM_SIZE.0.store(0, Ordering::Relaxed);
        }
    }
}

/// A fork's request as one word (never 0, the value before any fork).
fn request_key(if_clause: bool, requested_threads: i32) -> u64 {
    (requested_threads as u32 as u64) | (u64::from(if_clause) << 32) | (1 << 33)
}

/// The cached position when it still holds: same root, same level, and the runtime reports the
/// same (team size, ancestor thread number) at every level, compared outermost first so that a
/// change stops the queries early. `thread_num`: the thread's number at `level`.
#[inline(always)]
fn cached_position(
    thread: &ThreadState,
    root: &'static Node,
    level: u32,
    thread_num: u32,
) -> Option<(&'static Node, &'static Team, u32)> {
    // SAFETY: a thread's cached position is only read and written by that thread, here and in
    // `resolve_by_walking`, and neither calls back into the other.
    let p = unsafe { &*thread.position.as_ptr() }.as_ref()?;
    if p.level != level || !std::ptr::eq(p.root, root) {
        return None;
    }
    if level == 1 {
        if top_team_shape(thread_num) != p.ancestry[0] {
            return None;
        }
    } else {
        for (l, shape) in (1..=level).zip(p.ancestry.iter()) {
            if team_shape_at(l) != *shape {
                return None;
            }
        }
    }
    // SAFETY: cached nodes and teams are leaked, never freed.
    Some(unsafe { (&*p.node, &*p.team, p.thread) })
}

#[cold]
#[inline(never)]
fn resolve_by_walking(
    thread: &ThreadState,
    root: &'static Node,
    root_team: &'static Team,
    factory: &dyn Factory,
    level: u32,
    thread_num: u32,
) -> (&'static Node, &'static Team, u32) {
    let mut ancestry = [(0u32, 0u32); CACHED_LEVELS];
    let mut node = root;
    let mut team = root_team;
    for l in 1..=level {
        let (size, k) = team_shape_at(l);
        if let Some(slot) = ancestry.get_mut(l as usize - 1) {
            *slot = (size, k);
        }
        // Top-level teams have no parent team (the initial thread's own team is ours, not
        // OpenMP's).
        let parent = if l == 1 { UNDEFINED_U32 } else { team.comm };
        if size == 1 && l > 1 && team.size == 1 {
            // A one-thread team inside a one-thread team (of the same node) reuses its Comm,
            // as the reference does: recursion into such teams adds no definitions.
            continue;
        }
        team = node.team(size, parent, factory);
        if size > 1 {
            node = node.child(k, factory);
        }
    }
    let k = if level == 0 {
        0
    } else {
        thread_num.min(team.size.saturating_sub(1))
    };
    if level as usize <= CACHED_LEVELS {
        thread.position.set(Some(CachedPosition {
            ancestry,
            level,
            root,
            node,
            team,
            thread: k,
        }));
    }
    (node, team, k)
}

/// The position of a member of a team forked from `parent`, which the fork handed over
/// (`pomp_tpd` or the ICV channel): from the member's last team begin when the same node forked
/// from the same team and the runtime gives the same size and thread number, else looked up.
/// Returns (node, team, thread number).
#[inline(always)]
fn from_fork(
    thread: &ThreadState,
    parent: &'static Node,
    factory: &dyn Factory,
) -> (&'static Node, &'static Team, u32) {
    let (size, k) = openmp::team_size_and_thread_num();
    let k = k.min(size - 1);
    let forking_team = parent.fork.team.load(Ordering::Acquire);
    if let Some(p) = thread.fork_position.get() {
        if std::ptr::eq(p.parent, parent)
            && std::ptr::eq(p.forking_team, forking_team)
            && p.size == size
            && p.thread == k
        {
            // SAFETY: cached nodes and teams are leaked, never freed.
            return unsafe { (&*p.node, &*p.team, k) };
        }
    }
    from_fork_looked_up(thread, parent, forking_team, size, k, factory)
}

#[cold]
#[inline(never)]
fn from_fork_looked_up(
    thread: &ThreadState,
    parent: &'static Node,
    forking_team: *mut Team,
    size: u32,
    k: u32,
    factory: &dyn Factory,
) -> (&'static Node, &'static Team, u32) {
    let parent_comm = parent.fork.parent_comm.load(Ordering::Acquire);
    // SAFETY: teams are leaked, never freed.
    let team = match unsafe { forking_team.as_ref() } {
        // A one-thread team inside a one-thread team (below the top level) is the same team,
        // as in `resolve_by_walking`.
        Some(t) if size == 1 && parent_comm != UNDEFINED_U32 && t.size == 1 => t,
        _ => parent.team(size, parent_comm, factory),
    };
    let node = if size > 1 {
        parent.child(k, factory)
    } else {
        parent
    };
    thread.fork_position.set(Some(ForkPosition {
        parent,
        forking_team,
        size,
        thread: k,
        node,
        team,
    }));
    (node, team, k)
}

/// Whether a team member found its parent in `pomp_tpd` since the process started: then a
/// construct not yet known to copy it in is taken to do so (see the module documentation).
static PROCESS_COPIES_TPD: AtomicBool = AtomicBool::new(false);

/// Parallel_fork, on the forking thread: hands this thread's node to the team about to be
/// forked (`pomp_tpd`, and with several roots, to a team that may not receive it, the ICV
/// channel). `current_team` is the team the thread is in now (None: the measurement does not
/// run). `copies_tpd`: what the construct is known to do (`Construct::copies_tpd`).
/// Every fork is matched by one `join`, whether the measurement runs or not.
/// `request`: (if clause, requested threads), what the fork asks the runtime for.
#[inline(always)]
pub fn fork(
    thread: &ThreadState,
    current_team: Option<&'static Team>,
    request: (bool, i32),
    copies_tpd: &AtomicU8,
) {
    let depth = thread.forks_open.get() + 1;
    thread.forks_open.set(depth);
    // A thread whose node was guessed, outside any team it saw begin, hands nothing over: the
    // team it is in is unknown here, and its members guess from the same ancestry.
    let node = if thread.guessed.get() && thread.team.get().is_null() {
        std::ptr::null()
    } else {
        thread.node.get()
    };
    // Written only when it changes (see `reset_tpd`).
    if tpd::get() != node as i64 {
        tpd::set(node as i64);
    }
    // SAFETY: nodes are leaked, never freed.
    let node = unsafe { node.as_ref() };
    if let (Some(node), Some(team)) = (node, current_team) {
        note_forking_team(thread, node, team);
    }
    if SEVERAL_ROOTS.load(Ordering::Acquire) {
        // A team of one thread needs no channel: its thread 0 is the forking thread.
        if request.0 && request.1 != 1 && may_miss_tpd(copies_tpd) {
            hand_node_through_icv(thread, node, current_team, depth);
        }
    } else if thread.team.get().is_null() {
        // In its root's own team: a top-level fork.
        note_top_fork(request.0, request.1);
    }
}

/// Whether a team of the construct may not receive `pomp_tpd` (see `PROCESS_COPIES_TPD`).
#[inline(always)]
fn may_miss_tpd(copies_tpd: &AtomicU8) -> bool {
    match copies_tpd.load(Ordering::Relaxed) {
        TPD_COPIED => false,
        TPD_UNKNOWN => !PROCESS_COPIES_TPD.load(Ordering::Relaxed),
        _ => true,
    }
}

/// What the members of the team `node` forks read besides the node: the team the forking
/// thread is in, and that team's Comm (UNDEFINED in its root's own team). Written only when it
/// changed, so that a node forking from the same team keeps the line shared.
#[inline(always)]
fn note_forking_team(thread: &ThreadState, node: &'static Node, team: &'static Team) {
    let team_ptr = team as *const Team as *mut Team;
    if node.fork.team.load(Ordering::Relaxed) != team_ptr {
        let parent_comm = if thread.team.get().is_null() {
            UNDEFINED_U32
        } else {
            team.comm
        };
        node.fork.parent_comm.store(parent_comm, Ordering::Release);
        node.fork.team.store(team_ptr, Ordering::Release);
    }
}

#[cold]
#[inline(never)]
fn hand_node_through_icv(
    thread: &ThreadState,
    node: Option<&'static Node>,
    current_team: Option<&'static Team>,
    depth: u32,
) {
    let (Some(node), Some(_)) = (node, current_team) else {
        return;
    };
    let saved = openmp::default_device();
    node.fork.saved_device.store(saved, Ordering::Release);
    if openmp::set_default_device(CHANNEL_BASE + node.index as i32) {
        thread.fork_restores.borrow_mut().push((depth, saved));
    }
}

/// Parallel_join, on the forking thread: puts back what the matching `fork` changed.
#[inline(always)]
pub fn join(thread: &ThreadState) {
    let depth = thread.forks_open.get();
    thread.forks_open.set(depth.saturating_sub(1));
    reset_tpd(thread);
    if SEVERAL_ROOTS.load(Ordering::Acquire) {
        restore_default_device(thread, depth);
    }
}

/// At a team's end and a fork's join: the calling thread's `pomp_tpd` back to 0, so that a
/// later team that does not copy it in finds no value of an earlier one; but never written
/// when nothing changes, and kept by a root in its own team. Every member of a team reads the
/// forking thread's value (`copyin`), so each write takes the line back from all of them and
/// costs every member a miss at the next fork (about 320 ns per region of 8 threads on a
/// 16-core Xeon, with a write at every fork and end). A root is never a member of another
/// thread's team (OpenMP takes workers from its pool) and reads its value only as thread 0 of
/// its next fork, which hands it the same node: a root forking in a loop writes it once.
#[inline(always)]
fn reset_tpd(thread: &ThreadState) {
    if tpd::get() == 0 {
        return;
    }
    // SAFETY: nodes are leaked, never freed.
    let root = thread.team.get().is_null()
        && unsafe { thread.node.get().as_ref() }.is_some_and(|n| n.is_root);
    if !root {
        tpd::set(0);
    }
}

#[cold]
#[inline(never)]
fn restore_default_device(thread: &ThreadState, depth: u32) {
    let mut restores = thread.fork_restores.borrow_mut();
    if let Some(&(fork_depth, saved)) = restores.last() {
        if fork_depth >= depth {
            restores.pop();
            openmp::set_default_device(saved);
        }
    }
}

/// The node a fork handed to the calling team member through the ICV channel, if any, with
/// the ICV put back. Every team begin calls it first, whether the measurement runs or not, so
/// that the program never sees the channel's value.
#[inline(always)]
pub fn received_fork() -> Option<&'static Node> {
    if !SEVERAL_ROOTS.load(Ordering::Acquire) {
        return None;
    }
    received_fork_channel()
}

#[cold]
#[inline(never)]
fn received_fork_channel() -> Option<&'static Node> {
    let value = openmp::default_device();
    if !(CHANNEL_BASE..CHANNEL_END).contains(&value) {
        return None;
    }
    let node = *NODES.lock().get((value - CHANNEL_BASE) as usize)?;
    openmp::set_default_device(node.fork.saved_device.load(Ordering::Acquire));
    Some(node)
}

/// Parallel_begin: the calling thread joins its team; returns (team, thread number).
/// `channel`: the node `received_fork` returned. `copies_tpd`: see `Construct::copies_tpd`.
#[inline(always)]
pub fn join_team(
    thread: &ThreadState,
    root: &'static Node,
    root_team: &'static Team,
    factory: &dyn Factory,
    channel: Option<&'static Node>,
    copies_tpd: &AtomicU8,
) -> (&'static Team, u32) {
    let handed = tpd::get();
    // SAFETY: a non-zero `pomp_tpd` is a node a fork stored (`fork`): leaked, never freed.
    let (node, team, k) = match unsafe { (handed as *const Node).as_ref() }.or(channel) {
        Some(parent) => {
            let position = from_fork(thread, parent, factory);
            if position.2 == 0 && position.1.parent_comm == UNDEFINED_U32 {
                // The master of a top-level team (see `TOP_TEAM_SIZE`).
                publish_top_team_size(position.1.size);
            }
            position
        }
        None => resolve(thread, root, root_team, factory),
    };
    if k != 0 && copies_tpd.load(Ordering::Relaxed) == TPD_UNKNOWN {
        learn_whether_copied(handed != 0, copies_tpd);
    }
    let tid = thread.tid.get();
    let (cell, claimed) = if node.location.holds(tid) {
        (node.location, std::ptr::null())
    } else if node.location.take(tid) {
        (node.location, node.location as *const LocationCell)
    } else {
        (stand_in(thread, node.location, factory), std::ptr::null())
    };
    // SAFETY: this thread holds the location's ownership word (or it is its own stand-in).
    let loc = unsafe { cell.get() };
    thread.push_saved(Saved {
        location: thread.location_ptr(),
        node: thread.node.get(),
        team: thread.team.get(),
        team_location: cell.as_ptr(),
        team_before: loc.team,
        claimed,
    });
    thread.node.set(node);
    thread.team.set(team);
    thread.set_location(cell.as_ptr());
    loc.team = team.comm;
    team.set_member(k, loc.number);
    (team, k)
}

/// A worker's first team begin of a construct: whether its team received `pomp_tpd`.
#[cold]
#[inline(never)]
fn learn_whether_copied(copied: bool, copies_tpd: &AtomicU8) {
    copies_tpd.store(
        if copied { TPD_COPIED } else { TPD_NOT_COPIED },
        Ordering::Relaxed,
    );
    if copied && !PROCESS_COPIES_TPD.load(Ordering::Relaxed) {
        PROCESS_COPIES_TPD.store(true, Ordering::Relaxed);
    }
}

/// Parallel_end: the calling thread goes back to what it was before the matching begin.
pub fn leave_team(thread: &ThreadState) {
    if let Some(saved) = thread.pop_saved() {
        // SAFETY: the position is still this thread's until the line below hands it back.
        if let Some(loc) = unsafe { saved.team_location.as_mut() } {
            loc.team = saved.team_before;
        }
        // SAFETY: locations are leaked, never freed.
        if let Some(claimed) = unsafe { saved.claimed.as_ref() } {
            claimed.release(thread.tid.get());
        }
        thread.node.set(saved.node);
        thread.team.set(saved.team);
        thread.set_location(saved.location);
    }
    reset_tpd(thread);
}

/// `pomp_tpd`, the variable of OPARI2's `--omp-tpd` (src/openmp_shim.c), of the calling thread.
mod tpd {
    #[cfg(target_arch = "x86_64")]
    extern "C" {
        /// `__thread long long pomp_tpd_` (src/openmp_shim.c, or the program's own).
        static mut pomp_tpd_: i64;
    }

    /// The calling thread's value.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn get() -> i64 {
        let value: i64;
        // SAFETY: the initial-exec sequence for a TLS variable (as `thread::slot::get`): its
        // offset from the thread pointer out of the GOT, then the value at %fs:offset.
        unsafe {
            core::arch::asm!(
                "mov {v}, qword ptr [rip + {tpd}@GOTTPOFF]",
                "mov {v}, qword ptr fs:[{v}]",
                tpd = sym pomp_tpd_,
                v = out(reg) value,
                options(nostack, readonly, preserves_flags),
            );
        }
        value
    }

    /// Sets the calling thread's value.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn set(value: i64) {
        // SAFETY: as in `get`, storing to this thread's own copy of the variable.
        unsafe {
            core::arch::asm!(
                "mov {at}, qword ptr [rip + {tpd}@GOTTPOFF]",
                "mov qword ptr fs:[{at}], {v}",
                tpd = sym pomp_tpd_,
                at = out(reg) _,
                v = in(reg) value,
                options(nostack, preserves_flags),
            );
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    extern "C" {
        fn pomptrace_pomp_tpd_slot() -> *mut i64;
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub fn get() -> i64 {
        // SAFETY: the shim returns the address of this thread's variable.
        unsafe { *pomptrace_pomp_tpd_slot() }
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub fn set(value: i64) {
        // SAFETY: as in `get`.
        unsafe { *pomptrace_pomp_tpd_slot() = value }
    }
}

/// The location behind `thread`'s current position (for callers that hold its state).
pub(crate) fn location_of(thread: &ThreadState) -> Option<&'static mut Location> {
    // SAFETY: the state only ever holds the location of a position this thread owns.
    unsafe { thread.location_ptr().as_mut() }
}
