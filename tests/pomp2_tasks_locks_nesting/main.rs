//! OpenMP tasks, locks and nested parallelism, traced exactly.
//!
//! Each program in `c-tests/` is instrumented with the real `opari2`, built against pomptrace, run
//! with 1, 2 and 4 OpenMP threads (the nested one also with nesting enabled through
//! `OMP_MAX_ACTIVE_LEVELS=2` or `omp_set_nested(1)`, and disabled), and read back through the
//! reference readers. Every trace is checked for
//!
//! * the number of records of every kind and of Enters per region, computed here from the
//!   program's parameters (the `#define`s, which the tests compare with their own constants);
//! * per-location consistency: Enter/Leave nesting, each region left by the task that entered it,
//!   task switches only to live tasks (begins right before the task region, resumes only at the
//!   scheduling points OPARI2 instruments, back to the task that entered the waiting region),
//!   every created task begun and completed exactly once, implicit tasks named after their
//!   location, task records carrying the location's current team;
//! * locks: per lock id, acquisition orders 1, 2, ... without gaps, acquire and release
//!   alternating in time, nest locks repeating the order for inner acquisitions, a failed test
//!   writing no acquire record;
//! * thread teams: ThreadTeamBegin/End nested per location, forks and joins on the team's
//!   master, one Comm per team with the right members (by thread number) and parent Comm, and no
//!   location ever joining a team in two positions at once.
//!
//! One test binary (this directory): `harness` builds and runs, `analysis` checks every trace,
//! the tests are in `tasks`, `locks`, `nesting`, `parallel_edges` and `check_rejections`.

#[path = "../support/mod.rs"]
mod support;

mod analysis;
mod check_rejections;
mod disabled;
mod harness;
mod locks;
mod nesting;
mod parallel_edges;
mod tasks;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use support::pomp2::{instrument, run_traced, Build, Ev, View};
use support::Scratch;

use analysis::*;
use harness::*;

const THREADS: [u32; 3] = [1, 2, 4];
