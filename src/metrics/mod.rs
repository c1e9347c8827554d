//! Measured values beside the events: synchronous counters read at every Enter and Leave (perf
//! events, rusage), the process-metrics sampler, and snapshots. Each is switched on by
//! configuration and costs nothing when off.

pub(crate) mod perf;
pub(crate) mod rusage;
pub(crate) mod sampler;
pub(crate) mod snapshots;
pub(crate) mod synchronous;
