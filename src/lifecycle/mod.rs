//! The measurement's life: the start on the first call, the guard every recording call holds,
//! the end (once, from POMP2_Finalize, exit or a fatal signal), what a signal or a fork does,
//! the experiment directory, and writing the trace at the end. Only the guard (`active.rs`) and
//! the state word (`state.rs`) are on the hot path; both are a few loads and stores.

pub(crate) mod active;
pub(crate) mod directory;
pub(crate) mod finish;
pub(crate) mod measurement;
pub(crate) mod membarrier;
pub(crate) mod process;
pub(crate) mod profile_recover;
pub(crate) mod profile_write;
pub(crate) mod retire;
pub(crate) mod start;
pub(crate) mod state;
pub(crate) mod streaming;
pub(crate) mod thread_exit;
pub(crate) mod write;
