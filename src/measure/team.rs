//! The thread tree: which location and which thread team an OpenMP thread records into.
//!
//! As in the reference, a thread is identified by its position in the tree of teams, not by its
//! OS thread: thread `k` of a team forked from node `P` is `P`'s child `k`, created on first use
//! and reused whenever that position recurs, whichever OS thread runs it. Child 0 shares its
//! parent's location (the master continues its stream); the others get their own. Teams of one
//! thread add no node. A team is identified by the node it was forked from, the team that node
//! was in at the fork, and its size, and becomes one OTF2 Comm (with a COMM_GROUP of its
//! members); a one-thread team inside a one-thread team is the same team.

use std::cell::{Cell, RefCell};

use parking_lot::Mutex;

use super::location::{self, Location, LocationCell};
use crate::openmp;

/// One thread team (one Comm in the trace).
pub struct Team {
    pub comm: u32,
    pub size: u32,
    /// Comm of the team the forking thread was in (UNDEFINED for the initial team).
    pub parent_comm: u32,
    /// Location number of each member, by OpenMP thread number (u32::MAX: not seen).
    members: Mutex<Vec<u32>>,
}

impl Team {
    pub fn members(&self) -> Vec<u32> {
        self.members.lock().clone()
    }
    pub fn set_member(&self, thread: u32, location: u32) {
        let mut m = self.members.lock();
        if let Some(slot) = m.get_mut(thread as usize) {
            if *slot != location {
                *slot = location;
                super::journal::record(&super::definitions::Fact::Member {
                    comm: self.comm,
                    thread,
                    location,
                });
            }
        }
    }
}

/// A position in the thread tree.
pub struct Node {
    pub location: &'static LocationCell,
    /// Name stem for the locations of this node's children.
    label: String,
    is_root: bool,
    children: Mutex<Vec<Option<&'static Node>>>,
    teams: Mutex<Vec<&'static Team>>,
}

/// Creates locations and Comm ids (implemented by the measurement, which owns files and ids).
pub trait Factory {
    fn new_location(&self, name: String) -> &'static LocationCell;
    fn new_team(&self, size: u32, parent_comm: u32) -> &'static Team;
}

pub fn new_team(comm: u32, size: u32, parent_comm: u32) -> Team {
    Team {
        comm,
        size,
        parent_comm,
        members: Mutex::new(vec![u32::MAX; size as usize]),
    }
}

impl Node {
    pub fn root(location: &'static LocationCell, label: String) -> &'static Node {
        Box::leak(Box::new(Node {
            location,
            label,
            is_root: true,
            children: Mutex::new(Vec::new()),
            teams: Mutex::new(Vec::new()),
        }))
    }

    fn child(&'static self, k: u32, factory: &dyn Factory) -> &'static Node {
        let mut children = self.children.lock();
        if children.len() <= k as usize {
            children.resize(k as usize + 1, None);
        }
        if let Some(node) = children[k as usize] {
            return node;
        }
        let label = if self.is_root {
            format!("OMP thread {k}")
        } else {
            format!("{}:{k}", self.label)
        };
        let location = if k == 0 {
            self.location
        } else {
            factory.new_location(label.clone())
        };
        let node: &'static Node = Box::leak(Box::new(Node {
            location,
            label,
            is_root: false,
            children: Mutex::new(Vec::new()),
            teams: Mutex::new(Vec::new()),
        }));
        children[k as usize] = Some(node);
        node
    }

    /// The team of `size` threads forked from this node while it was in the team with Comm
    /// `parent_comm` (created on first use, together with its children in thread-number order,
    /// so location numbers follow thread numbers). The same size under another enclosing team
    /// is another team: a top-level team and one nested in a one-thread team differ.
    fn team(&'static self, size: u32, parent_comm: u32, factory: &dyn Factory) -> &'static Team {
        let mut teams = self.teams.lock();
        if let Some(team) = teams
            .iter()
            .find(|t| t.size == size && t.parent_comm == parent_comm)
        {
            return team;
        }
        if size > 1 {
            for k in 0..size {
                self.child(k, factory);
            }
        }
        let team = factory.new_team(size, parent_comm);
        teams.push(team);
        team
    }
}

/// What a thread was before it joined a team, restored when it leaves the team.
struct Saved {
    location: *mut Location,
    node: *const Node,
    /// The team the joined location was in before (the master's location continues).
    team_location: *mut Location,
    team_before: u32,
}

thread_local! {
    static NODE: Cell<*const Node> = const { Cell::new(std::ptr::null()) };
    static SAVED: RefCell<Vec<Saved>> = const { RefCell::new(Vec::new()) };
}

/// The node the calling thread currently acts as, if any.
pub fn current_node() -> Option<&'static Node> {
    // SAFETY: NODE only holds pointers to leaked nodes.
    NODE.with(|n| unsafe { n.get().as_ref() })
}

/// Makes the calling thread act as `node` (the initial thread at start).
pub fn adopt(node: &'static Node) {
    NODE.with(|n| n.set(node));
    location::set_current(node.location.as_ptr());
}

/// The calling thread's position for the team it is in now: walks from `root` along the
/// ancestry the OpenMP runtime reports. Returns (node, team, thread number).
pub fn resolve(
    root: &'static Node,
    root_team: &'static Team,
    factory: &dyn Factory,
) -> (&'static Node, &'static Team, u32) {
    let level = openmp::level();
    let mut node = root;
    let mut team = root_team;
    for l in 1..=level {
        let size = openmp::team_size(l).unwrap_or(1);
        // Top-level teams have no parent team (the initial thread's own team is ours, not
        // OpenMP's).
        let parent = if l == 1 {
            crate::otf2::UNDEFINED_U32
        } else {
            team.comm
        };
        if size == 1 && l > 1 && team.size == 1 {
            // A one-thread team inside a one-thread team (of the same node) reuses its Comm,
            // as the reference does: recursion into such teams adds no definitions.
            continue;
        }
        team = node.team(size, parent, factory);
        if size > 1 {
            let k = openmp::ancestor_thread_num(l).unwrap_or(0).min(size - 1);
            node = node.child(k, factory);
        }
    }
    let thread = if level == 0 {
        0
    } else {
        openmp::thread_num().min(team.size.saturating_sub(1))
    };
    (node, team, thread)
}

/// Parallel_begin: the calling thread joins its team; returns (team, thread number).
pub fn join_team(
    root: &'static Node,
    root_team: &'static Team,
    factory: &dyn Factory,
) -> (&'static Team, u32) {
    let (node, team, thread) = resolve(root, root_team, factory);
    // SAFETY: this thread now owns the position `node`, hence its location.
    let loc = unsafe { node.location.get() };
    SAVED.with(|s| {
        s.borrow_mut().push(Saved {
            location: location::current_ptr(),
            node: NODE.with(|n| n.get()),
            team_location: node.location.as_ptr(),
            team_before: loc.team,
        })
    });
    NODE.with(|n| n.set(node));
    location::set_current(node.location.as_ptr());
    loc.team = team.comm;
    team.set_member(thread, loc.number);
    (team, thread)
}

/// Parallel_end: the calling thread goes back to what it was before the matching begin.
pub fn leave_team() {
    if let Some(saved) = SAVED.with(|s| s.borrow_mut().pop()) {
        // SAFETY: the position is still this thread's until the line below hands it back.
        if let Some(loc) = unsafe { saved.team_location.as_mut() } {
            loc.team = saved.team_before;
        }
        NODE.with(|n| n.set(saved.node));
        location::set_current(saved.location);
    }
}
