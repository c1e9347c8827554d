//! The thread tree's data: nodes (positions a thread can take), teams (one OTF2 Comm each),
//! and what a thread remembers of its position between team begins. Append-only and never
//! freed, so a pointer into it stays valid for the whole run; changed only under its locks when
//! a position or a team is new. How a thread finds its node is `team.rs`'s business.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::output::facts::Fact;
use crate::output::journal;
use crate::record::location::{Location, LocationCell};
use otf2::UNDEFINED_U32;

/// What a thread was before it joined a team, restored when it leaves that team.
pub(crate) struct Saved {
    pub location: *mut Location,
    pub node: *const Node,
    pub team: *const Team,
    /// The location the thread recorded into in the team, and the team that location was in
    /// before (the master's location continues into the team and back).
    pub team_location: *mut Location,
    pub team_before: u32,
    /// The location whose ownership word the thread took at the team begin, to give back at
    /// its end (null: it held the word before, or recorded into a location of its own).
    pub claimed: *const LocationCell,
}

/// Levels of nesting whose positions a thread remembers between team begins.
pub(crate) const CACHED_LEVELS: usize = 4;

/// The position a thread resolved at a team begin, valid for as long as the OpenMP runtime
/// reports the same ancestry (nodes and teams are never removed from the tree).
#[derive(Clone, Copy)]
pub(crate) struct CachedPosition {
    /// (team size, ancestor thread number) per level 1..=level.
    pub ancestry: [(u32, u32); CACHED_LEVELS],
    pub level: u32,
    /// The root the position was resolved from.
    pub root: *const Node,
    pub node: *const Node,
    pub team: *const Team,
    pub thread: u32,
}

/// The position a thread took at its last team begin from the node its fork handed it
/// (`pomp_tpd`, see `team.rs`): valid while the same node forks from the same team and the
/// runtime gives the same size and thread number.
#[derive(Clone, Copy)]
pub(crate) struct ForkPosition {
    pub parent: *const Node,
    pub forking_team: *const Team,
    pub size: u32,
    pub thread: u32,
    pub node: *const Node,
    pub team: *const Team,
}

/// One thread team (one Comm in the trace).
pub(crate) struct Team {
    pub comm: u32,
    pub size: u32,
    /// Comm of the team the forking thread was in (UNDEFINED for the initial team).
    pub parent_comm: u32,
    /// Location number of each member, by OpenMP thread number (u32::MAX: not seen).
    members: Box<[AtomicU32]>,
}

impl Team {
    #[inline(always)]
    pub(crate) fn set_member(&self, thread: u32, location: u32) {
        if let Some(slot) = self.members.get(thread as usize) {
            if slot.load(Ordering::Relaxed) != location {
                self.new_member(slot, thread, location);
            }
        }
    }

    /// A position of this team taken by another location than before (or the first time).
    #[cold]
    #[inline(never)]
    fn new_member(&self, slot: &AtomicU32, thread: u32, location: u32) {
        slot.store(location, Ordering::Relaxed);
        journal::record(&Fact::Member {
            comm: self.comm,
            thread,
            location,
        });
    }
}

/// A position in the thread tree.
pub(crate) struct Node {
    pub location: &'static LocationCell,
    /// Index in the table of all nodes (what the fork channel carries).
    pub(crate) index: u32,
    /// Name stem for the locations of this node's children.
    pub(crate) label: String,
    pub(crate) is_root: bool,
    /// The node whose thread forked the team this node is a member of (None for a root).
    pub(crate) parent: Option<&'static Node>,
    children: Mutex<Vec<Option<&'static Node>>>,
    teams: Mutex<Vec<&'static Team>>,
    /// Set by this node's thread before it forks, read by the new team's members.
    pub(crate) fork: ForkInfo,
}

/// What a forking node tells its new team (see the module documentation).
pub(crate) struct ForkInfo {
    /// Comm of the team the forking thread is in (UNDEFINED at level 0).
    pub(crate) parent_comm: AtomicU32,
    /// The team the forking thread is in.
    pub(crate) team: AtomicPtr<Team>,
    /// The default-device value the members put back.
    pub(crate) saved_device: AtomicI32,
    /// The forking thread's call path in the profile (location << 32 | node, see
    /// `Location::profile_path`), when profiling: the members' profiles hang under it.
    /// Written only when it changes, so that a fork in a loop costs its members no miss.
    pub(crate) profile_path: AtomicU64,
}

impl ForkInfo {
    /// Publishes the forking thread's call path `path` to the team it is about to fork.
    #[inline(always)]
    pub(crate) fn publish_profile_path(&self, path: u64) {
        if self.profile_path.load(Ordering::Relaxed) != path {
            self.profile_path.store(path, Ordering::Release);
        }
    }
}

/// Creates locations and Comm ids (implemented by the measurement, which owns files and ids).
pub(crate) trait Factory {
    fn new_location(&self, name: String) -> &'static LocationCell;
    fn new_team(&self, size: u32, parent_comm: u32) -> &'static Team;
}

pub(crate) fn new_team(comm: u32, size: u32, parent_comm: u32) -> Team {
    Team {
        comm,
        size,
        parent_comm,
        members: (0..size).map(|_| AtomicU32::new(u32::MAX)).collect(),
    }
}

/// Every node, by index; append-only.
pub(crate) static NODES: Mutex<Vec<&'static Node>> = Mutex::new(Vec::new());
/// Whether more than one root exists (then forks hand their node to the team).
pub(crate) static SEVERAL_ROOTS: AtomicBool = AtomicBool::new(false);

impl Node {
    pub(crate) fn new(
        location: &'static LocationCell,
        label: String,
        parent: Option<&'static Node>,
    ) -> &'static Node {
        let mut nodes = NODES.lock();
        let node: &'static Node = Box::leak(Box::new(Node {
            location,
            index: nodes.len() as u32,
            label,
            is_root: parent.is_none(),
            parent,
            children: Mutex::new(Vec::new()),
            teams: Mutex::new(Vec::new()),
            fork: ForkInfo {
                parent_comm: AtomicU32::new(UNDEFINED_U32),
                team: AtomicPtr::new(std::ptr::null_mut()),
                saved_device: AtomicI32::new(0),
                profile_path: AtomicU64::new(u64::MAX),
            },
        }));
        nodes.push(node);
        node
    }

    /// A root: the initial thread (`prefix` empty) or another thread of control (`prefix`
    /// names it, e.g. `Pthread 1 `, and its teams' locations are `Pthread 1 OMP thread 1` ...).
    pub(crate) fn root(location: &'static LocationCell, prefix: String) -> &'static Node {
        let first = NODES.lock().iter().all(|n| !n.is_root);
        if !first {
            SEVERAL_ROOTS.store(true, Ordering::Release);
        }
        Node::new(location, prefix, None)
    }

    /// Every location of this node and the nodes below it, each once (a child 0 shares its
    /// parent's).
    pub(crate) fn subtree_locations(&'static self) -> Vec<&'static LocationCell> {
        let mut out: Vec<&'static LocationCell> = Vec::new();
        let mut pending = vec![self];
        while let Some(node) = pending.pop() {
            if !out.iter().any(|l| std::ptr::eq(*l, node.location)) {
                out.push(node.location);
            }
            pending.extend(node.children.lock().iter().flatten());
        }
        out
    }

    pub(crate) fn child(&'static self, k: u32, factory: &dyn Factory) -> &'static Node {
        let mut children = self.children.lock();
        if children.len() <= k as usize {
            children.resize(k as usize + 1, None);
        }
        if let Some(node) = children[k as usize] {
            return node;
        }
        let label = if self.is_root {
            format!("{}OMP thread {k}", self.label)
        } else {
            format!("{}:{k}", self.label)
        };
        let location = if k == 0 {
            self.location
        } else {
            factory.new_location(label.clone())
        };
        let node = Node::new(location, label, Some(self));
        children[k as usize] = Some(node);
        node
    }

    /// The team of `size` threads forked from this node while it was in the team with Comm
    /// `parent_comm` (created on first use, together with its children in thread-number order,
    /// so location numbers follow thread numbers). The same size under another enclosing team
    /// is another team: a top-level team and one nested in a one-thread team differ.
    pub(crate) fn team(
        &'static self,
        size: u32,
        parent_comm: u32,
        factory: &dyn Factory,
    ) -> &'static Team {
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
