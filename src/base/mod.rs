//! What every room stands on: configuration, the clock, the `pomptrace:` diagnostics, locks that
//! are safe against signals and fork, pomptrace's own threads, the allocator (which a fatal
//! signal's trace needs), and what the launcher's environment says of an MPI job.
//! Imports nothing of the rooms above it.

pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod diagnostics;
pub(crate) mod helper_threads;
pub(crate) mod launcher;
pub(crate) mod signal_heap;
pub(crate) mod signal_safe_mutex;
