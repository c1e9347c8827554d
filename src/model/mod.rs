//! Who records where: each thread's state (one thread-local pointer), the tree of teams that
//! gives a thread its location, task ids, and OpenMP locks' acquisition order. Shared tables are
//! touched only when a position, a team or a lock is new; never on a repeated event.

pub(crate) mod lock_table;
pub(crate) mod locks;
pub(crate) mod tasks;
pub(crate) mod team;
pub(crate) mod thread;
pub(crate) mod tree;
