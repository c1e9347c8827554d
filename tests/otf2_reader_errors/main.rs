//! Damaged archives: the reader must answer every kind of damage with a `ReadError` naming the
//! damaged file, the offset of the damage and what is wrong -- never a panic, never an endless
//! stream of phantom events. Every read runs in a thread with a deadline, so a hang fails the
//! test instead of stalling CI.
//!
//! Each test writes a small valid archive (checked by `otf2-print --silent`), damages a copy,
//! and reads everything (anchor, global definitions, then local definitions and events of each
//! location) until the first error.
//!
//! One test binary (this directory): `fixture` writes the pristine archive, `deadline` reads it
//! back, `layout` finds where to damage it; the tests are in `evt_truncation`, `evt_corruption`
//! and `definitions_and_anchor`.

#[path = "../support/mod.rs"]
mod support;

mod deadline;
mod definitions_and_anchor;
mod evt_corruption;
mod evt_truncation;
mod fixture;
mod layout;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use otf2::*;
use support::*;

use deadline::*;
use fixture::*;
use layout::*;

const CHUNK: usize = 256 * 1024;
const HEADER: usize = 18;
/// Enter/Leave pairs on location 0 (every 4th inside a ThreadFork/ThreadJoin pair): about
/// 780 KB, two full chunks and a partial third.
const PAIRS: u64 = 25_000;
const REGIONS: u32 = 300;
const DEADLINE: Duration = Duration::from_secs(20);

const ENTER: u8 = 12;
const LEAVE: u8 = 13;
const THREAD_FORK: u8 = 53;
const THREAD_JOIN: u8 = 54;
const TIMESTAMP_ID: u8 = 0x05;
const ATTRIBUTE_LIST_ID: u8 = 0x06;
