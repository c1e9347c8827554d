//! pomptrace: the runtime measurement library that OPARI2-instrumented programs link. It
//! implements POMP2 and writes OTF2 traces (through the `otf2` crate, which knows nothing of
//! POMP2).
//!
//! Rooms, from the top down; an arrow only ever points down, and no two modules import each
//! other (tests/module_graph.rs checks it):
//!
//! - `ffi`: every exported symbol, and nothing else.
//! - `ops`: what each POMP2 and MPI call records.
//! - `lifecycle`: start, who is recording, finalize, signals, fork, the experiment directory.
//! - `model`: threads, teams, tasks and locks: who records where.
//! - `record`: a location's event buffers, written on the hot path.
//! - `output`: definitions (registry, journal, facts), job naming and recovery.
//! - `metrics`: hardware and rusage counters, the sampler, snapshots.
//! - `base`: configuration, the clock, diagnostics, signal-safe locks, the launcher's view.
//! - leaves: `ctc` (CTC strings), `filter` (filter files), `filter_suggest` (filters that keep a
//!   trace under a size), `openmp` (the OpenMP runtime).
//!
//! The crate's public Rust API is only what the command line and the tests read: the settings
//! table, recovery, the CTC parser, and whether this machine counts hardware events. Everything
//! else is crate-private.

mod base;
pub mod ctc;
mod ffi;
mod filter;
mod filter_suggest;
mod lifecycle;
mod metrics;
mod model;
mod openmp;
mod ops;
mod output;
mod record;

/// The `POMPTRACE_*` settings: their table, defaults and a description of the environment.
pub mod settings {
    pub use crate::base::config::{
        default_buffer_size, describe_environment, parse_size, switch_on, value, Variable,
        INSTRUMENT_ALL, KEEP_FILES, NO_MPI, OPARI2, SKIP_UNINSTRUMENTABLE, STATIC, VARIABLES,
        WRAPPER_VERBOSE,
    };
}

/// Making the remains of a run that never ended a readable trace: one process's, or one rank's
/// part of a job's.
pub mod recovery {
    pub use crate::output::recover::{journaled_ranks, recover, recover_rank, Recovered};
}
pub use lifecycle::profile_recover::recover_profile;
pub use recovery::{recover, Recovered};

/// Filter files: reading them as the runtime does, and suggesting one that keeps a trace under
/// a size (`pomptrace score`, and the runtime's own `pomptrace.filter` at the end of a run
/// over its budget).
pub mod filtering {
    pub use crate::filter::{Filter, FilterError};
    pub use crate::filter_suggest::{
        choose, escape_pattern, exclude_pattern, filter_file, filterable, is_structure,
        user_region_name, Candidate, Filterable,
    };
}

/// Whether this machine lets a thread count its CPU cycles (perf_event); the error says why not,
/// in the words the run itself would use.
pub fn cpu_cycles_countable() -> Result<(), String> {
    use metrics::perf;
    perf::probe(perf::PerfEvent {
        kind: perf::TYPE_HARDWARE,
        config: 0,
    })
    .map_err(|e| perf::explain(&e))
}

/// A unit test's directory, `<name>-<pid>` in the system's temporary directory (created).
#[cfg(test)]
pub(crate) fn test_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
