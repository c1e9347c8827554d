//! Acceptance tests for the OpenMP construct families (semantics doc 1.10, 4.1-4.4, 5.3).
//!
//! Each program `c-tests/fam_*.c` is instrumented with the real `opari2`, built with the init
//! file against the shared library, run with 1, 2 and 4 threads, and its trace read back through
//! the reference reader. Asserted per run: the exact set of region definitions (names, roles,
//! paradigms, source file, lines), the locations, and per location the exact sequence of records.
//! Where OpenMP scheduling decides (which thread runs a section, a single block or a task), a
//! location's sequence is asserted modulo that choice and the choices are counted over the team.
//!
//! Line numbers come from `/*@name*/` (directive line) and `/*@name.end*/` (end of the
//! structured block) markers in the C sources, so the programs can be edited freely.
//!
//! One test binary (this directory): `program` builds the programs and knows their region
//! definitions, `expected` matches record sequences, `checked` runs and checks a trace; the tests
//! are in `parallel`, `worksharing`, `synchronisation`, `tasks`, `locks` and `user_regions`.

#[path = "../support/mod.rs"]
mod support;

mod checked;
mod expected;
mod locks;
mod parallel;
mod program;
mod synchronisation;
mod tasks;
mod user_regions;
mod worksharing;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use support::pomp2::*;
use support::Scratch;

use checked::*;
use expected::*;
use program::*;

const THREAD_COUNTS: [u32; 3] = [1, 2, 4];
