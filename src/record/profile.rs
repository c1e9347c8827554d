//! A location's call-path profile: one tree of call paths, built on the recording thread as
//! its regions are entered and left (a child lookup per Enter, an update per Leave), with
//! plain stores to memory only that thread touches. The tree grows only when a call path is
//! new, up to a cap on nodes and on depth, so its memory follows the program's call paths and
//! not the length of the run.
//!
//! What a node holds per call path: visits, the sum, minimum and maximum of the inclusive time
//! of its visits (in clock ticks), and the inclusive sums of the synchronous metrics. The
//! exclusive time follows at the end: inclusive less the children's inclusive.
//!
//! The frames of the regions open on the location parallel its open-region stack one to one
//! (every Enter the trace records pushes one, every Leave pops one, in the same order), so the
//! profile and the trace of a run always agree on what was open when. Which tree a frame's
//! node belongs to is decided by tasks:
//!
//! - The location's implicit task (the base segment) builds the location's own tree. On a team
//!   member other than thread 0 it starts under a *thread start* node, which stands for the
//!   call path of the construct that forked the team (published by the forking thread as
//!   location and node, see [`Profile::current_path`]); the end of the run replaces it by that
//!   path, as Score-P does.
//! - An explicit task gets a segment of its own from its begin to its end, and its own tree:
//!   its task region's node, with the task's regions below it, hangs under the call path of the
//!   implicit task where it runs (a barrier, a taskwait, a task creation of the implicit task),
//!   never under another explicit task, so recursive tasks do not nest call paths. While
//!   another task runs on the location (a child run inside its taskwait, or inside its
//!   creation), the task is suspended: the time and metrics of its open frames stop, and
//!   resume when that task ends. So a task counts one visit and only the time it ran, and a
//!   barrier's exclusive time is its waiting, not the tasks it ran.
//! - The implicit task of a team is the task its thread ran at the team's begin: for the
//!   master of a team forked inside an explicit task, that task (it is then never suspended
//!   while it is the team's implicit task).
//!
//! Tasks nest on a location as the trace nests them (a tied task resumes only where it was
//! suspended). An untied task that a runtime resumes on another thread (libgomp never does)
//! is not visible to POMP2 as such: its events there nest where the trace puts them.

use otf2::UNDEFINED_U32;

/// No node: the parent of a root, a folded frame, an empty hot-child slot.
pub(crate) const NONE: u32 = UNDEFINED_U32;

/// What a node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// A region entered on the location.
    Region = 0,
    /// The call path of the construct that forked the team this location worked in; `region`
    /// is its index in the thread starts.
    ThreadStart = 1,
}

/// One call path. The fields read on every Enter come first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub region: u32,
    pub parent: u32,
    /// The child entered last from here: an Enter in a loop finds its node with one compare.
    hot_child: u32,
    pub depth: u16,
    pub kind: Kind,
    pub visits: u64,
    /// Sum of the inclusive time of the visits, in clock ticks.
    pub time: u64,
    pub min: u64,
    pub max: u64,
}

/// An open region: the node it updates (NONE when folded into an ancestor), the node that was
/// current before, and its start in the owning segment's own clock (time less the time the
/// segment was suspended).
#[derive(Clone, Copy, Debug)]
struct Frame {
    node: u32,
    restore: u32,
    start: u64,
}

/// The frames of one task on this location (the base segment is the implicit task's).
#[derive(Clone, Copy, Debug)]
struct Segment {
    /// Index of its first frame.
    start: u32,
    /// The node of its innermost open frame: the parent of its next Enter.
    current: u32,
    /// Time it spent suspended so far.
    offset: u64,
    /// When it was suspended (meaningful while it is not on top).
    suspended_at: u64,
    /// Open frames folded into an ancestor (their regions and everything under them fold).
    folded: u32,
}

/// Why a call path was not kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Folded {
    /// Visits deeper than the depth cap.
    pub depth: u64,
    /// Visits of new call paths past the node cap.
    pub nodes: u64,
}

/// A location's profile (see the module documentation).
///
/// The running segment's state and the current node's likely next child are plain fields, so
/// that the common Enter and Leave read no chain of pointers: a compare of the region against
/// `hot_region` finds the node, and the rest are stores.
pub(crate) struct Profile {
    frames: Vec<Frame>,
    /// The running segment (the top of the stack).
    top: Segment,
    /// A child of `top.current` and its region (NONE: none known): what an Enter of that
    /// region finds without a lookup.
    hot_node: u32,
    hot_region: u32,
    /// The latest time seen: a time read earlier on another CPU counts as this one (the trace
    /// records it so too).
    last: u64,
    /// Enters and Leaves may take the simple paths: no metrics and nothing folded open.
    simple: bool,
    /// A simple Leave needs more frames than this (a task's first frame ends the task).
    leave_floor: u32,
    nodes: Vec<Node>,
    /// `metrics` inclusive sums per node, node after node.
    node_metrics: Vec<u64>,
    /// (parent, region) -> child, open addressing; grows with the nodes.
    children: ChildTable,
    /// `metrics` start values per frame (already less the segment's metric offsets).
    frame_metrics: Vec<u64>,
    /// The segments below the running one (the implicit task's first), suspended or waiting
    /// for the tasks above to end.
    below: Vec<Segment>,
    /// Per segment (the running one last): `metrics` offsets, then `metrics` values at its
    /// suspension.
    segment_metrics: Vec<u64>,
    /// Per team level, the segment that is its implicit task (see the module documentation).
    bases: Vec<u32>,
    /// (forking location << 32 | node) of each thread start node, in creation order.
    thread_starts: Vec<(u64, u32)>,
    /// The thread start used last (index into `thread_starts`).
    last_thread_start: usize,
    /// The root entered last (roots have no parent to hold a hot child).
    hot_root: u32,
    metrics: usize,
    max_nodes: usize,
    max_depth: u16,
    folded: Folded,
}

/// Nodes reserved up front; the arena doubles from there up to the cap, only when a call
/// path is new.
const INITIAL_NODES: usize = 256;
/// Frames reserved up front (a location rarely has more regions open at once).
const INITIAL_FRAMES: usize = 64;
/// Nesting levels of teams and of tasks suspended on one location reserved up front.
const INITIAL_LEVELS: usize = 8;

impl Segment {
    const fn new(start: u32, current: u32) -> Self {
        Self {
            start,
            current,
            offset: 0,
            suspended_at: 0,
            folded: 0,
        }
    }
}

impl Profile {
    /// An empty profile keeping at most `max_nodes` call paths of at most `max_depth`
    /// regions, with `metrics` synchronous metric values per Enter and Leave.
    pub fn new(max_nodes: u32, max_depth: u32, metrics: usize) -> Self {
        let max_nodes = (max_nodes as usize).clamp(1, NONE as usize - 2);
        let initial = INITIAL_NODES.min(max_nodes);
        let mut bases = Vec::with_capacity(INITIAL_LEVELS);
        bases.push(0);
        Self {
            frames: Vec::with_capacity(INITIAL_FRAMES),
            top: Segment::new(0, NONE),
            hot_node: NONE,
            hot_region: NONE,
            last: 0,
            simple: metrics == 0,
            leave_floor: 0,
            nodes: Vec::with_capacity(initial),
            node_metrics: Vec::with_capacity(initial * metrics),
            children: ChildTable::new(),
            frame_metrics: Vec::with_capacity(INITIAL_FRAMES * metrics),
            below: Vec::with_capacity(INITIAL_LEVELS),
            segment_metrics: vec![0; 2 * metrics],
            bases,
            thread_starts: Vec::new(),
            last_thread_start: 0,
            hot_root: NONE,
            metrics,
            max_nodes,
            max_depth: max_depth.clamp(1, u16::MAX as u32) as u16,
            folded: Folded::default(),
        }
    }

    /// The node an Enter of `region` would update, if finding it takes nothing but the hot
    /// child: no fold, no new node, room for the frame, no metrics, `time` not earlier than
    /// the last. None otherwise (then `enter` does it). Changes nothing.
    #[inline(always)]
    pub fn simple_enter(&self, time: u64, region: u32) -> Option<u32> {
        (self.simple
            && region == self.hot_region
            && self.frames.len() != self.frames.capacity()
            && time >= self.last)
            .then_some(self.hot_node)
    }

    /// The Enter for `node` as `simple_enter` found it. Calls nothing.
    #[inline(always)]
    pub fn enter_simple(&mut self, time: u64, node: u32) {
        self.last = time;
        let frame = Frame {
            node,
            restore: self.top.current,
            start: time.wrapping_sub(self.top.offset),
        };
        self.top.current = node;
        let depth = self.frames.len();
        // SAFETY: `simple_enter` checked that `depth < capacity`; the stack grows by that one
        // initialised element (a plain `push` would keep its growth call here).
        unsafe {
            self.frames.as_mut_ptr().add(depth).write(frame);
            self.frames.set_len(depth + 1);
        }
        // The next Enter's guess: the child entered from here last time. Nothing waits for
        // these loads.
        // SAFETY: `hot_node` is a node of this arena, and so is any node's hot child.
        unsafe {
            let hot = self.nodes.get_unchecked(node as usize).hot_child;
            self.hot_node = hot;
            self.hot_region = match self.nodes.get(hot as usize) {
                Some(child) => child.region,
                None => NONE,
            };
        }
    }

    /// Whether the next Leave is simple: it pops a frame of the running segment that is not a
    /// task's first, not folded, without metrics, and `time` is not earlier than the last.
    #[inline(always)]
    pub fn simple_leave(&self, time: u64) -> bool {
        self.simple && self.frames.len() > self.leave_floor as usize && time >= self.last
    }

    /// The Leave `simple_leave` allowed, of a region of id `region`. Calls nothing.
    #[inline(always)]
    pub fn leave_simple(&mut self, time: u64, region: u32) {
        self.last = time;
        let depth = self.frames.len() - 1;
        // SAFETY: `simple_leave` saw more frames than `leave_floor` >= 0.
        let frame = unsafe {
            self.frames.set_len(depth);
            *self.frames.as_ptr().add(depth)
        };
        self.top.current = frame.restore;
        // The region just left is a child of the node now current.
        self.hot_node = frame.node;
        self.hot_region = region;
        let inclusive = time.wrapping_sub(self.top.offset).wrapping_sub(frame.start);
        // SAFETY: a frame's node (not NONE: nothing is folded while `simple`) is a node of
        // this arena.
        let node = unsafe { self.nodes.get_unchecked_mut(frame.node as usize) };
        node.visits += 1;
        node.time += inclusive;
        node.min = node.min.min(inclusive);
        node.max = node.max.max(inclusive);
    }

    /// An Enter of `region` at `time`; `values` are the synchronous metrics read with it
    /// (`metrics` of them).
    pub fn enter(&mut self, time: u64, region: u32, values: &[u64]) {
        let time = self.clamp(time);
        let node = if self.top.folded != 0 {
            self.folded.depth += 1;
            None
        } else {
            self.child(self.top.current, region, Kind::Region)
        };
        self.push_frame(time, node, values);
        self.refresh();
    }

    /// The begin of an explicit task whose task region is `region` (the Enter of that region):
    /// a running explicit task is suspended, and the task's tree starts under the implicit
    /// task's call path.
    pub fn begin_task(&mut self, time: u64, region: u32, values: &[u64]) {
        let time = self.clamp(time);
        let base = self.base();
        let running = self.below.len();
        if running > base {
            self.suspend_top(time, values);
        }
        let (parent, folded) = {
            let b = self.segment(base);
            (b.current, b.folded)
        };
        let node = if folded != 0 {
            self.folded.depth += 1;
            None
        } else {
            self.child(parent, region, Kind::Region)
        };
        let task = Segment::new(self.frames.len() as u32, parent);
        self.below.push(std::mem::replace(&mut self.top, task));
        let n = self.metrics;
        self.segment_metrics
            .extend(std::iter::repeat(0).take(2 * n));
        self.push_frame(time, node, values);
        self.refresh();
    }

    /// A Leave at `time` (of the innermost open region: the caller keeps the open regions);
    /// `values` as for `enter`. Leaving a task's region ends the task: the task below resumes.
    pub fn leave(&mut self, time: u64, values: &[u64]) {
        let Some(frame) = self.frames.pop() else {
            return;
        };
        let time = self.clamp(time);
        let n = self.metrics;
        let depth = self.frames.len();
        let top = self.below.len();
        self.top.current = frame.restore;
        if frame.node == NONE {
            self.top.folded = self.top.folded.saturating_sub(1);
        } else {
            let inclusive = time.wrapping_sub(self.top.offset).wrapping_sub(frame.start);
            let node = &mut self.nodes[frame.node as usize];
            node.visits += 1;
            node.time += inclusive;
            node.min = node.min.min(inclusive);
            node.max = node.max.max(inclusive);
            if n != 0 {
                let offsets = &self.segment_metrics[top * 2 * n..top * 2 * n + n];
                let starts = &self.frame_metrics[depth * n..depth * n + n];
                let sums = &mut self.node_metrics[frame.node as usize * n..][..n];
                for i in 0..n {
                    let now = values.get(i).copied().unwrap_or(0).wrapping_sub(offsets[i]);
                    sums[i] = sums[i].wrapping_add(now.wrapping_sub(starts[i]));
                }
            }
        }
        self.frame_metrics.truncate(depth * n);
        if top > 0 && depth == self.top.start as usize {
            self.end_task(time, values);
        }
        self.refresh();
    }

    /// Leaves every region still open at `time`, innermost first (a run that ended without
    /// leaving them: a visit that began counts, up to the last thing the location did).
    pub fn leave_open(&mut self, time: u64, values: &[u64]) {
        while !self.frames.is_empty() {
            self.leave(time, values);
        }
    }

    /// The end of the running explicit task (its region was left): the task below resumes.
    fn end_task(&mut self, time: u64, values: &[u64]) {
        let Some(below) = self.below.pop() else {
            return;
        };
        self.top = below;
        let n = self.metrics;
        let top = self.below.len();
        self.segment_metrics.truncate((top + 1) * 2 * n);
        if top <= self.base() {
            return;
        }
        self.top.offset += time.saturating_sub(self.top.suspended_at);
        if n != 0 {
            let (offsets, suspended) =
                self.segment_metrics[top * 2 * n..top * 2 * n + 2 * n].split_at_mut(n);
            for i in 0..n {
                let now = values.get(i).copied().unwrap_or(0);
                offsets[i] = offsets[i].wrapping_add(now.wrapping_sub(suspended[i]));
            }
        }
    }

    /// The location begins work in a team: the task it runs now is that team's implicit task.
    #[inline(always)]
    pub fn team_begin(&mut self) {
        self.bases.push(self.below.len() as u32);
    }

    /// The location's work in its innermost team ends.
    #[inline(always)]
    pub fn team_end(&mut self) {
        if self.bases.len() > 1 {
            self.bases.pop();
        }
    }

    /// The segment of the innermost team's implicit task (one that has ended counts as the
    /// task below it).
    fn base(&self) -> usize {
        let base = self.bases.last().copied().unwrap_or(0) as usize;
        base.min(self.below.len())
    }

    /// Segment `index` (0: the implicit task's; `below.len()`: the running one).
    fn segment(&self, index: usize) -> &Segment {
        self.below.get(index).unwrap_or(&self.top)
    }

    /// Recomputes what the simple paths read, after anything but them changed the state.
    fn refresh(&mut self) {
        self.simple = self.metrics == 0 && self.top.folded == 0;
        self.leave_floor = if self.below.is_empty() {
            0
        } else {
            self.top.start + 1
        };
        let hot = match self.top.current {
            NONE => self.hot_root,
            parent => self.nodes[parent as usize].hot_child,
        };
        self.hot_node = hot;
        self.hot_region = match self.nodes.get(hot as usize) {
            Some(child) if child.kind == Kind::Region => child.region,
            _ => NONE,
        };
    }

    /// A team member other than thread 0 starts working in a team forked at `path` (the
    /// forking location's [`current_path`](Self::current_path)): what it records until the
    /// next one hangs under that call path. Only on an idle location (nothing open).
    pub fn thread_start(&mut self, path: u64) {
        if !self.frames.is_empty() || !self.below.is_empty() {
            return;
        }
        let node = match self.thread_starts.get(self.last_thread_start) {
            Some(&(p, node)) if p == path => Some(node),
            _ => self.find_thread_start(path),
        };
        self.top.current = node.unwrap_or(NONE);
        self.refresh();
    }

    #[cold]
    #[inline(never)]
    fn find_thread_start(&mut self, path: u64) -> Option<u32> {
        if let Some(i) = self.thread_starts.iter().position(|&(p, _)| p == path) {
            self.last_thread_start = i;
            return Some(self.thread_starts[i].1);
        }
        let index = self.thread_starts.len() as u32;
        let node = self.new_node(NONE, index, Kind::ThreadStart, 0)?;
        self.thread_starts.push((path, node));
        self.last_thread_start = index as usize;
        Some(node)
    }

    /// The call path the location records into now (the running task's innermost node, NONE
    /// at the root): what a fork hands to its team, with the location's number.
    #[inline(always)]
    pub fn current_path(&self) -> u32 {
        self.top.current
    }

    /// The nodes, in creation order (a parent before its children).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The metric sums of node `index` (`metrics` of them).
    pub fn node_metrics(&self, index: usize) -> &[u64] {
        &self.node_metrics[index * self.metrics..(index + 1) * self.metrics]
    }

    /// The forking call path (location << 32 | node) of thread start number `index`.
    pub fn thread_start_path(&self, index: u32) -> Option<u64> {
        self.thread_starts.get(index as usize).map(|&(p, _)| p)
    }

    /// Visits counted in an ancestor because of the caps.
    pub fn folded(&self) -> Folded {
        self.folded
    }

    fn clamp(&mut self, time: u64) -> u64 {
        let time = time.max(self.last);
        self.last = time;
        time
    }

    /// Pushes a frame for `node` (None: folded) on the running segment.
    fn push_frame(&mut self, time: u64, node: Option<u32>, values: &[u64]) {
        let n = self.metrics;
        let top = self.below.len();
        let restore = self.top.current;
        let node = match node {
            Some(node) => {
                self.top.current = node;
                node
            }
            None => {
                self.top.folded += 1;
                NONE
            }
        };
        self.frames.push(Frame {
            node,
            restore,
            start: time.wrapping_sub(self.top.offset),
        });
        if n != 0 {
            let offsets = &self.segment_metrics[top * 2 * n..top * 2 * n + n];
            for (i, offset) in offsets.iter().enumerate() {
                let value = values.get(i).copied().unwrap_or(0);
                self.frame_metrics.push(value.wrapping_sub(*offset));
            }
        }
    }

    /// Suspends the running explicit task at `time` (an implicit task's clock runs on: the
    /// tasks it runs are its children).
    fn suspend_top(&mut self, time: u64, values: &[u64]) {
        let n = self.metrics;
        let top = self.below.len();
        self.top.suspended_at = time;
        if n != 0 {
            let suspended = &mut self.segment_metrics[top * 2 * n + n..top * 2 * n + 2 * n];
            for (i, slot) in suspended.iter_mut().enumerate() {
                *slot = values.get(i).copied().unwrap_or(0);
            }
        }
    }

    /// The child of `parent` for `region`, created if new; None when the caps fold it into
    /// `parent` (counted).
    fn child(&mut self, parent: u32, region: u32, kind: Kind) -> Option<u32> {
        let hot = match parent {
            NONE => self.hot_root,
            p => self.nodes[p as usize].hot_child,
        };
        let found = match self.nodes.get(hot as usize) {
            Some(n) if n.region == region && n.kind == kind && n.parent == parent => Some(hot),
            _ => self.children.get(parent, region),
        };
        let child = match found {
            Some(child) => child,
            None => {
                let depth = match parent {
                    NONE => 1,
                    p => self.nodes[p as usize].depth.saturating_add(1),
                };
                if depth > self.max_depth {
                    self.folded.depth += 1;
                    return None;
                }
                let child = self.new_node(parent, region, kind, depth)?;
                self.children.insert(parent, region, child);
                child
            }
        };
        match parent {
            NONE => self.hot_root = child,
            p => self.nodes[p as usize].hot_child = child,
        }
        Some(child)
    }

    /// A new node (None, counted, at the cap).
    fn new_node(&mut self, parent: u32, region: u32, kind: Kind, depth: u16) -> Option<u32> {
        if self.nodes.len() >= self.max_nodes {
            self.folded.nodes += 1;
            return None;
        }
        if self.nodes.len() == self.nodes.capacity() {
            let more = self.nodes.len().min(self.max_nodes - self.nodes.len());
            self.nodes.reserve_exact(more.max(1));
            self.node_metrics.reserve_exact(more.max(1) * self.metrics);
        }
        let index = self.nodes.len() as u32;
        self.nodes.push(Node {
            region,
            parent,
            hot_child: NONE,
            depth,
            kind,
            visits: 0,
            time: 0,
            min: u64::MAX,
            max: 0,
        });
        self.node_metrics
            .extend(std::iter::repeat(0).take(self.metrics));
        Some(index)
    }
}

/// (parent, region) -> node, by open addressing with linear probing; doubled at half load.
/// Looked up only when an Enter misses its parent's hot child.
struct ChildTable {
    /// (parent << 32 | region, node); an empty slot has the key `EMPTY`.
    slots: Vec<(u64, u32)>,
    len: usize,
}

/// No (parent, region) pair is this: NONE is never a region entered.
const EMPTY: u64 = u64::MAX;

impl ChildTable {
    fn new() -> Self {
        Self {
            slots: vec![(EMPTY, 0); 64],
            len: 0,
        }
    }

    fn slot_of(&self, key: u64) -> usize {
        // Fibonacci hashing: the high bits of the product mix every bit of the key.
        let hash = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (hash >> (64 - self.slots.len().trailing_zeros())) as usize
    }

    fn get(&self, parent: u32, region: u32) -> Option<u32> {
        let key = (u64::from(parent) << 32) | u64::from(region);
        let mask = self.slots.len() - 1;
        let mut i = self.slot_of(key);
        loop {
            let (k, node) = self.slots[i];
            if k == key {
                return Some(node);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    fn insert(&mut self, parent: u32, region: u32, node: u32) {
        if 2 * (self.len + 1) > self.slots.len() {
            let doubled = vec![(EMPTY, 0); 2 * self.slots.len()];
            let old = std::mem::replace(&mut self.slots, doubled);
            self.len = 0;
            for (key, node) in old.into_iter().filter(|&(k, _)| k != EMPTY) {
                self.put(key, node);
            }
        }
        self.put((u64::from(parent) << 32) | u64::from(region), node);
    }

    fn put(&mut self, key: u64, node: u32) {
        let mask = self.slots.len() - 1;
        let mut i = self.slot_of(key);
        while self.slots[i].0 != EMPTY && self.slots[i].0 != key {
            i = (i + 1) & mask;
        }
        if self.slots[i].0 == EMPTY {
            self.len += 1;
        }
        self.slots[i] = (key, node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (path of region ids from the root, visits, time) of every region node.
    fn paths(p: &Profile) -> Vec<(Vec<u32>, u64, u64)> {
        let nodes = p.nodes();
        let mut out: Vec<_> = nodes
            .iter()
            .filter(|n| n.kind == Kind::Region)
            .map(|n| {
                let mut path = vec![n.region];
                let mut parent = n.parent;
                while parent != NONE {
                    let up = nodes[parent as usize];
                    path.push(match up.kind {
                        Kind::Region => up.region,
                        Kind::ThreadStart => 1000 + up.region,
                    });
                    parent = up.parent;
                }
                path.reverse();
                (path, n.visits, n.time)
            })
            .collect();
        out.sort();
        out
    }

    fn enter(p: &mut Profile, t: u64, r: u32) {
        p.enter(t, r, &[]);
    }
    fn leave(p: &mut Profile, t: u64) {
        p.leave(t, &[]);
    }

    #[test]
    fn visits_and_inclusive_time_per_call_path() {
        let mut p = Profile::new(100, 10, 0);
        enter(&mut p, 0, 1);
        for i in 0..3 {
            enter(&mut p, 10 + 10 * i, 2);
            leave(&mut p, 13 + 10 * i + i);
        }
        enter(&mut p, 50, 3);
        enter(&mut p, 51, 2);
        leave(&mut p, 55);
        leave(&mut p, 60);
        leave(&mut p, 100);
        assert_eq!(
            paths(&p),
            [
                (vec![1], 1, 100),
                (vec![1, 2], 3, 3 + 4 + 5),
                (vec![1, 3], 1, 10),
                (vec![1, 3, 2], 1, 4),
            ]
        );
        let n = p
            .nodes()
            .iter()
            .find(|n| n.region == 2 && n.depth == 2)
            .unwrap();
        assert_eq!((n.min, n.max), (3, 5));
    }

    #[test]
    fn the_simple_path_records_what_the_general_one_does() {
        let mut simple = Profile::new(100, 10, 0);
        let mut general = Profile::new(100, 10, 0);
        for p in [&mut simple, &mut general] {
            enter(p, 1, 7);
            enter(p, 2, 8);
            leave(p, 3);
        }
        for i in 0..5 {
            let node = simple.simple_enter(10 * i + 10, 8).expect("hot child");
            simple.enter_simple(10 * i + 10, node);
            assert!(simple.simple_leave(10 * i + 12 + i));
            simple.leave_simple(10 * i + 12 + i, 8);
            enter(&mut general, 10 * i + 10, 8);
            leave(&mut general, 10 * i + 12 + i);
        }
        // A region not entered from here before is not simple.
        assert_eq!(simple.simple_enter(100, 9), None);
        assert_eq!(paths(&simple), paths(&general));
        assert_eq!(paths(&simple)[1], (vec![7, 8], 6, 1 + 2 + 3 + 4 + 5 + 6));
    }

    #[test]
    fn a_task_counts_once_and_only_while_it_runs() {
        let (par, bar, task, tw, atomic) = (1, 2, 3, 4, 5);
        let mut p = Profile::new(100, 10, 0);
        enter(&mut p, 0, par);
        enter(&mut p, 10, bar);
        // T1 begins in the barrier; at its taskwait it runs child T2 (suspended meanwhile).
        p.begin_task(20, task, &[]);
        enter(&mut p, 25, tw);
        p.begin_task(30, task, &[]);
        enter(&mut p, 31, atomic);
        leave(&mut p, 33);
        leave(&mut p, 40); // T2 ends: T1 resumes
        leave(&mut p, 45); // T1's taskwait
        leave(&mut p, 50); // T1 ends
        leave(&mut p, 90); // barrier
        leave(&mut p, 100);
        assert_eq!(
            paths(&p),
            [
                (vec![par], 1, 100),
                // The barrier includes the tasks it ran.
                (vec![par, bar], 1, 80),
                // Two task begins under the barrier: T1 ran 20..30 and 40..50, T2 30..40.
                (vec![par, bar, task], 2, 30),
                // T1's taskwait 25..45 less T2's 10.
                (vec![par, bar, task, tw], 1, 10),
                (vec![par, bar, task, atomic], 1, 2),
            ]
        );
    }

    #[test]
    fn a_team_forked_inside_a_task_has_that_task_as_its_implicit_task() {
        let (task, par, bar, child) = (1, 2, 3, 4);
        let mut p = Profile::new(100, 10, 0);
        p.begin_task(0, task, &[]);
        p.team_begin();
        enter(&mut p, 1, par);
        enter(&mut p, 2, bar);
        // A task run in the inner team's barrier: under it, and the outer task runs on.
        p.begin_task(3, child, &[]);
        leave(&mut p, 5);
        leave(&mut p, 6);
        leave(&mut p, 7);
        p.team_end();
        leave(&mut p, 10);
        assert_eq!(
            paths(&p),
            [
                (vec![task], 1, 10),
                (vec![task, par], 1, 6),
                (vec![task, par, bar], 1, 4),
                (vec![task, par, bar, child], 1, 2),
            ]
        );
    }

    #[test]
    fn a_worker_hangs_under_its_fork_and_a_fork_hands_its_path() {
        let mut p = Profile::new(100, 10, 0);
        p.thread_start((3 << 32) | 7);
        enter(&mut p, 0, 1);
        leave(&mut p, 5);
        p.thread_start((3 << 32) | 8);
        enter(&mut p, 10, 1);
        assert_eq!(p.current_path(), 3);
        leave(&mut p, 12);
        p.thread_start((3 << 32) | 7);
        enter(&mut p, 20, 1);
        leave(&mut p, 21);
        assert_eq!(paths(&p), [(vec![1000, 1], 2, 6), (vec![1001, 1], 1, 2)]);
        assert_eq!(p.thread_start_path(1), Some((3 << 32) | 8));
        assert_eq!(p.current_path(), 0, "the first thread start");
    }

    #[test]
    fn paths_past_the_caps_fold_into_their_ancestor_and_are_counted() {
        let mut p = Profile::new(100, 2, 0);
        enter(&mut p, 0, 1);
        enter(&mut p, 1, 2);
        enter(&mut p, 2, 3); // depth 3: folded
        enter(&mut p, 3, 2); // under a folded frame: folded too
        leave(&mut p, 4);
        leave(&mut p, 5);
        leave(&mut p, 6);
        leave(&mut p, 7);
        assert_eq!(paths(&p), [(vec![1], 1, 7), (vec![1, 2], 1, 5)]);
        assert_eq!(p.folded(), Folded { depth: 2, nodes: 0 });

        let mut p = Profile::new(2, 10, 0);
        enter(&mut p, 0, 1);
        enter(&mut p, 1, 2);
        leave(&mut p, 2);
        enter(&mut p, 3, 3); // a third call path: no room
        leave(&mut p, 4);
        leave(&mut p, 5);
        assert_eq!(paths(&p), [(vec![1], 1, 5), (vec![1, 2], 1, 1)]);
        assert_eq!(p.folded(), Folded { depth: 0, nodes: 1 });
    }

    #[test]
    fn metrics_sum_per_call_path_and_stop_while_a_task_is_suspended() {
        let mut p = Profile::new(100, 10, 2);
        p.enter(0, 1, &[100, 0]);
        p.begin_task(10, 2, &[110, 1]);
        p.begin_task(20, 2, &[150, 2]); // the first task is suspended at 150
        p.leave(30, &[170, 3]); // the second ends at 170: the first resumes
        p.leave(40, &[200, 4]); // the first ends: ran 110..150 and 170..200
        p.leave(50, &[210, 5]);
        let nodes = p.nodes();
        let root = nodes.iter().position(|n| n.region == 1).unwrap();
        assert_eq!(p.node_metrics(root), [110, 5]);
        let task_root = nodes
            .iter()
            .position(|n| n.region == 2 && n.parent == root as u32)
            .unwrap();
        assert_eq!(nodes[task_root].visits, 2);
        assert_eq!(p.node_metrics(task_root), [(40 + 30) + 20, 2 + 1]);
        assert_eq!(nodes[task_root].time, 20 + 10);
    }

    #[test]
    fn the_child_table_finds_every_child_as_it_grows() {
        let mut t = ChildTable::new();
        for i in 0..1000u32 {
            t.insert(i % 7, i, i + 1);
        }
        for i in 0..1000u32 {
            assert_eq!(t.get(i % 7, i), Some(i + 1));
        }
        assert_eq!(t.get(3, 5000), None);
    }
}
