//! The ways a program gets pomptrace (shared, static, without an init file, LD_PRELOAD into an
//! instrumented shared library), the measurement lifecycle (where the trace goes, the closing
//! summary line, finalize, exit, POMPTRACE_ENABLE=0), and robustness: malformed CTC strings,
//! NULL handles, calls before the start, an unwritable output directory, and 10^6 events per
//! thread through 64 KiB chunks.
//!
//! One test binary (this directory): the shared helpers are here, the tests in `linking`,
//! `lifecycle`, `robustness`, `many_events` and `fork_and_exit`.

#[path = "../support/mod.rs"]
mod support;

mod fork_and_exit;
mod lifecycle;
mod linking;
mod many_events;
mod robustness;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use otf2::{ArchiveReader, Event, GlobalDef};
use support::pomp2::*;
use support::{run, Scratch};

// ---- helpers ----------------------------------------------------------------------------------

const SUMMARY: &str = "pomptrace: trace written to ";

/// The numbers of the one closing summary line: (anchor path, locations, events, bytes).
fn summary(stderr: &str) -> (PathBuf, u64, u64, u64) {
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with(SUMMARY)).collect();
    assert_eq!(
        lines.len(),
        1,
        "expected exactly one summary line:\n{stderr}"
    );
    let rest = &lines[0][SUMMARY.len()..];
    let (path, numbers) = rest
        .rsplit_once(" (")
        .unwrap_or_else(|| panic!("summary line without numbers: {rest}"));
    let numbers = numbers
        .strip_suffix(" bytes)")
        .unwrap_or_else(|| panic!("summary line does not end in ` bytes)`: {rest}"));
    let fields: Vec<&str> = numbers.split(", ").collect();
    let number = |i: usize, unit: &str| -> u64 {
        fields
            .get(i)
            .and_then(|f| f.strip_suffix(unit))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("field {i} ({unit}) of summary line: {rest}"))
    };
    (
        PathBuf::from(path),
        number(0, " locations"),
        number(1, " events"),
        fields
            .get(2)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("bytes of summary line: {rest}")),
    )
}

/// Total size of the files below `dir`.
fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let e = e.unwrap();
            let md = e.metadata().unwrap();
            if md.is_dir() {
                dir_size(&e.path())
            } else {
                md.len()
            }
        })
        .sum()
}

/// Checks the one summary line against the trace in `experiment` (as the reference reader saw
/// it); `cwd` resolves a relative path in the line.
fn check_summary(stderr: &str, view: &View, experiment: &Path, cwd: Option<&Path>) {
    let (anchor, locations, events, bytes) = summary(stderr);
    let anchor = match cwd {
        Some(cwd) if anchor.is_relative() => cwd.join(anchor),
        _ => anchor,
    };
    assert_eq!(anchor, experiment.join("traces.otf2"), "summary path");
    assert_eq!(
        locations as usize,
        view.locations.len(),
        "summary locations"
    );
    assert_eq!(events as usize, view.total_events(), "summary events");
    assert_eq!(bytes, dir_size(experiment), "summary bytes");
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every stderr line is pomptrace's, and none reports an internal error.
fn assert_only_pomptrace_lines(stderr: &str) {
    for line in stderr.lines() {
        assert!(
            line.starts_with("pomptrace: "),
            "stray line on stderr: {line:?}\nfull stderr:\n{stderr}"
        );
        assert!(!line.contains("internal error"), "{stderr}");
    }
}

/// Names of the entries of a directory, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Local time as `YYYYmmdd_HHMMSS`, as the default directory name has it.
fn local_timestamp() -> String {
    let out = run(Command::new("date").arg("+%Y%m%d_%H%M%S"));
    stdout_of(&out).trim().to_string()
}

/// Count of each event text (kind and region) on all locations.
fn text_counts(view: &View) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for e in view.events.values().flatten() {
        *counts.entry(e.text()).or_insert(0) += 1;
    }
    counts
}

/// As `run_traced`, with command-line arguments.
fn run_traced_with(
    exe: &Path,
    args: &[&str],
    threads: u32,
    label: &str,
    env: &[(&str, &str)],
) -> Run {
    let experiment = exe.parent().unwrap().join(label);
    let _ = std::fs::remove_dir_all(&experiment);
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("OMP_NUM_THREADS", threads.to_string())
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("LD_PRELOAD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = run(&mut cmd);
    Run { output, experiment }
}

fn count(view: &View, kind: &str) -> usize {
    view.kind_counts().get(kind).copied().unwrap_or(0)
}
