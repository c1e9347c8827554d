//! What becomes the trace's definitions, and the files beside the events: the registry of
//! strings and regions, the journal that makes them durable as they are made, the facts the
//! definitions are written from, a job's naming of ranks and directories, and recovery of a run
//! that never ended. Never on the hot path: entered when something is defined for the first time,
//! and at the end.

pub(crate) mod communicators;
pub(crate) mod facts;
pub(crate) mod job;
pub(crate) mod journal;
pub(crate) mod metric_definitions;
pub(crate) mod recover;
pub(crate) mod registry;
