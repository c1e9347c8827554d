//! Fortran programs instrumented by the real `opari2` and built with gfortran: free form (`.f90`),
//! fixed form (`.f`), and `.F90` through the C preprocessor, with the Fortran spellings of the
//! POMP2 entry points (`pomp2_*_`, CTC strings with hidden lengths, handles in COMMON blocks,
//! the runtime's Fortran lock entries). Each program runs with 1, 2 and 4 threads and its trace
//! is read back through the reference reader; every location's records must match the sequence
//! the program implies (semantics doc 4.3), with the choices the runtime makes (which thread runs
//! a section, the single block, a task; how often a test lock fails) left open, and exact counts
//! over the whole trace.
//!
//! One test binary (this directory): building and running are here, the tests in `free_form`,
//! `fixed_form`, `preprocessed`, `sections_defect` and `exported_symbols`.

#[path = "../support/sequence.rs"]
mod sequence;
#[path = "../support/mod.rs"]
mod support;

mod exported_symbols;
mod fixed_form;
mod free_form;
mod preprocessed;
mod sections_defect;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use sequence::*;
use support::pomp2::*;
use support::{repo_root, run, Scratch};

const THREADS: [u32; 3] = [1, 2, 4];

// ---- building and running ---------------------------------------------------------------------

/// Copies `c-tests/<file>` into `dir` and instruments it with `opari2`. The output gets an
/// upper-case extension (`.mod.F`, `.mod.F90`) so that gfortran runs the preprocessor over the
/// `#line` directives OPARI2 writes.
fn instrument_fortran(file: &str, dir: &Path) -> PathBuf {
    let src = dir.join(file);
    std::fs::copy(repo_root().join("c-tests").join(file), &src).unwrap();
    let (stem, ext) = file.rsplit_once('.').unwrap();
    let out = dir.join(format!("{stem}.mod.{}", ext.to_ascii_uppercase()));
    run(Command::new("opari2").arg(&src).arg(&out).current_dir(dir));
    out
}

fn copy_source(file: &str, dir: &Path) -> PathBuf {
    let dst = dir.join(file);
    std::fs::copy(repo_root().join("c-tests").join(file), &dst).unwrap();
    dst
}

fn gfortran(dir: &Path, init_file: bool) -> Build<'_> {
    Build {
        dir,
        compiler: "gfortran",
        init_file,
        link: Link::Shared,
    }
}
