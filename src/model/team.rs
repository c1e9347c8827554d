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
//! calls POMP2) is the root of a tree of its own. While there is only one root, a team member
//! finds its position by walking the OpenMP ancestry from that root, and remembers the result:
//! a parallel region in a loop re-resolves with three runtime queries and no lock. Once a
//! second root exists the ancestry is ambiguous (every root's teams start at level 1), so the
//! forking thread hands its node to the new team through the default-device ICV, which OpenMP
//! copies into every implicit task of the team; each member reads it first thing in the region
//! and puts the original value back. Shared tables are only touched when a position is new.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use crate::model::thread::ThreadState;
use crate::model::tree::{
    CachedPosition, Factory, Node, Saved, Team, CACHED_LEVELS, NODES, SEVERAL_ROOTS,
};
use crate::openmp;
use crate::record::location::Location;
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

/// Makes the calling thread act as `node` (a root, at its first call).
pub fn adopt(thread: &ThreadState, node: &'static Node) {
    thread.node.set(node);
    thread.set_location(node.location.as_ptr());
    #[cfg(debug_assertions)]
    // SAFETY: only reads the location's claim word.
    unsafe { &*node.location.as_ptr() }.claim(thread.tid);
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

/// The position of a member of a team forked from `parent` (through the fork channel).
#[cold]
#[inline(never)]
fn resolve_from_fork(
    parent: &'static Node,
    factory: &dyn Factory,
) -> (&'static Node, &'static Team, u32) {
    let level = openmp::level();
    let size = openmp::team_size(level).unwrap_or(1);
    let k = openmp::thread_num().min(size - 1);
    let forking_team = parent.fork.team.load(Ordering::Acquire);
    // SAFETY: teams are leaked, never freed.
    let forking_team = unsafe { forking_team.as_ref() };
    let team = match forking_team {
        Some(t) if size == 1 && level > 1 && t.size == 1 => t,
        _ => parent.team(
            size,
            parent.fork.parent_comm.load(Ordering::Acquire),
            factory,
        ),
    };
    let node = if size > 1 {
        parent.child(k, factory)
    } else {
        parent
    };
    (node, team, k)
}

/// Parallel_fork, on the forking thread: with several roots, hands this thread's node to the
/// team about to be forked. `current_team` is the team the thread is in now.
/// Every fork is matched by one `join`, whether the measurement runs or not.
/// `request`: (if clause, requested threads), what the fork asks the runtime for.
#[inline(always)]
pub fn fork(thread: &ThreadState, current_team: Option<&'static Team>, request: (bool, i32)) {
    let depth = thread.forks_open.get() + 1;
    thread.forks_open.set(depth);
    if SEVERAL_ROOTS.load(Ordering::Acquire) {
        hand_node_to_team(thread, current_team, depth);
    } else if thread.team.get().is_null() {
        // In its root's own team: a top-level fork.
        note_top_fork(request.0, request.1);
    }
}

#[cold]
#[inline(never)]
fn hand_node_to_team(thread: &ThreadState, current_team: Option<&'static Team>, depth: u32) {
    // SAFETY: nodes are leaked, never freed.
    let node = unsafe { thread.node.get().as_ref() };
    let (Some(node), Some(current_team)) = (node, current_team) else {
        return;
    };
    let level = openmp::level();
    node.fork.parent_comm.store(
        if level == 0 {
            UNDEFINED_U32
        } else {
            current_team.comm
        },
        Ordering::Release,
    );
    node.fork
        .team
        .store(current_team as *const Team as *mut Team, Ordering::Release);
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
    if SEVERAL_ROOTS.load(Ordering::Acquire) {
        restore_default_device(thread, depth);
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

/// The node a fork handed to the calling team member, if any (and puts the ICV back).
#[inline(always)]
fn received_fork() -> Option<&'static Node> {
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
#[inline(always)]
pub fn join_team(
    thread: &ThreadState,
    root: &'static Node,
    root_team: &'static Team,
    factory: &dyn Factory,
) -> (&'static Team, u32) {
    let (node, team, k) = match received_fork() {
        Some(parent) => resolve_from_fork(parent, factory),
        None => resolve(thread, root, root_team, factory),
    };
    // SAFETY: this thread now owns the position `node`, hence its location.
    let loc = unsafe { node.location.get() };
    #[cfg(debug_assertions)]
    loc.claim(thread.tid);
    thread.push_saved(Saved {
        location: thread.location_ptr(),
        node: thread.node.get(),
        team: thread.team.get(),
        team_location: node.location.as_ptr(),
        team_before: loc.team,
    });
    thread.node.set(node);
    thread.team.set(team);
    thread.set_location(node.location.as_ptr());
    loc.team = team.comm;
    team.set_member(k, loc.number);
    (team, k)
}

/// Parallel_end: the calling thread goes back to what it was before the matching begin.
pub fn leave_team(thread: &ThreadState) {
    if let Some(saved) = thread.pop_saved() {
        // SAFETY: the position is still this thread's until the line below hands it back.
        if let Some(loc) = unsafe { saved.team_location.as_mut() } {
            loc.team = saved.team_before;
            #[cfg(debug_assertions)]
            if saved.team_location != saved.location {
                loc.release(thread.tid);
            }
        }
        thread.node.set(saved.node);
        thread.team.set(saved.team);
        thread.set_location(saved.location);
    }
}

/// The location behind `thread`'s current position (for callers that hold its state).
pub(crate) fn location_of(thread: &ThreadState) -> Option<&'static mut Location> {
    // SAFETY: the state only ever holds the location of a position this thread owns.
    unsafe { thread.location_ptr().as_mut() }
}
