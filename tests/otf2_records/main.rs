//! Every record kind the writer knows, written with edge values (zero and large ids, u64::MAX,
//! i64::MIN, doubles, NaN and infinities, empty and non-ASCII strings, UNDEFINED references),
//! read back by (a) `otf2-print` (-G, -A, -M -C), (b) the python `otf2` module
//! (tests/support/otf2_dump.py) and (c) our own reader.
//!
//! One archive (`write_archive`) holds all of it: two locations (ids 0 and 2^40 + 7), every
//! global definition kind, local definitions with a dense and a sparse mapping table that really
//! translate ids (a region and an interrupt generator id), clock offsets, every event kind with
//! attribute lists of every attribute type, and a snapshot. The expected views of the reference
//! readers are derived from what was written: `Ctx::p_*` renders `otf2-print`'s line for each
//! record, `Ctx::py_*` the python dump's object; our reader must give back exactly what was
//! written (mapping tables are reported, not applied).
//!
//! Reference-reader behaviour the expectations encode (libotf2 / python-otf2 3.0.2):
//! * `otf2-print` shows FLOAT and DOUBLE values with `%g` (6 digits), so (a) checks doubles
//!   only that far; (b) and (c) check them exactly;
//! * the python binding calls LocationType 2 by its pre-3.0 name `GPU` and resolves COMM_GROUP
//!   ranks to location ids; it does not read local definitions, nor snapshots (its
//!   `_otf2.SnapReaderCallbacks_Set*` call C functions libotf2 does not have, e.g.
//!   `OTF2_SnapReaderCallbacks_SetEnter`), so snapshots are checked by (a), (c) and the byte
//!   identity with libotf2 (tests/otf2_libotf2_identity.rs);
//! * libotf2 does not translate snapshot records through the mapping tables (a mapped local
//!   region id showed as `INVALID <4>`), so the snapshot uses ids the tables leave alone;
//! * libotf2 cannot read an empty id map ("Invalid capacity value"), so no table is empty.
//!
//! The code is split by what it owns: `definitions` and `archive` (what is written),
//! `lookup`, `print_*` and `python_notation` (what each reader should show), `checks`
//! (comparing), and the tests by record family in `*_tests`. One test binary (this
//! directory), so the shared code is compiled once.

#[path = "../support/mod.rs"]
mod support;

mod archive;
mod checks;
mod definition_tests;
mod definitions;
mod event_tests;
mod json;
mod lookup;
mod print_definitions;
mod print_events;
mod python_notation;
mod snapshot_tests;

use std::collections::BTreeMap;
use std::path::PathBuf;

use archive::*;
use checks::*;
use definitions::*;
use json::*;
use lookup::*;
use otf2::*;
use print_definitions::*;
use support::*;
