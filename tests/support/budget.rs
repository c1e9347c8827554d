//! The trace-size budget's tests: `c-tests/budget_spin.c`, the size of an archive as the budget
//! counts it, what the reference reader counts in a large trace, and `pomptrace score`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use super::pomp2::{instrumented_c_program, pomptrace_command};
use super::{repo_root, run};

/// A spin on `#pragma omp flush` or on a user region among constructs that run a fixed number
/// of times (see the program), built into `dir`.
pub fn spin_program(dir: &Path) -> PathBuf {
    instrumented_c_program(dir, "budget_spin.c")
}

/// The line of `budget_spin.c` that contains `text` and follows a line containing `previous`.
pub fn spin_line(text: &str, previous: &str) -> usize {
    let source = std::fs::read_to_string(repo_root().join("c-tests/budget_spin.c")).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    lines
        .windows(2)
        .position(|w| w[0].contains(previous) && w[1].contains(text))
        .unwrap_or_else(|| panic!("no line with {text:?} after {previous:?} in budget_spin.c"))
        + 2
}

/// The flush region of the plain spin (`budget_spin flush N`).
pub fn spin_flush() -> String {
    format!(
        "!$omp flush @budget_spin.c:{}",
        spin_line("#pragma omp flush", "i < spins")
    )
}

/// The user region `hot` of `budget_spin user N`.
pub fn spin_user_region() -> String {
    format!(
        "!$pomp user(hot) @budget_spin.c:{}",
        spin_line("#pragma pomp inst begin(hot)", "i < spins")
    )
}

/// The flush region of the paced spin (`budget_spin paced N S`).
pub fn paced_flush() -> String {
    format!(
        "!$omp flush @budget_spin.c:{}",
        spin_line("#pragma omp flush", "done < due")
    )
}

/// The bytes of an experiment's trace: its anchor, its definitions and its location files.
pub fn archive_bytes(experiment: &Path) -> u64 {
    fn tree(path: &Path) -> u64 {
        match std::fs::symlink_metadata(path) {
            Ok(md) if md.is_dir() => std::fs::read_dir(path)
                .unwrap()
                .map(|e| tree(&e.unwrap().path()))
                .sum(),
            Ok(md) => md.len(),
            Err(_) => 0,
        }
    }
    ["traces.otf2", "traces.def", "traces"]
        .iter()
        .map(|name| tree(&experiment.join(name)))
        .sum()
}

/// What the python `otf2` module counts in a trace (`tests/support/otf2_region_counts.py`).
pub fn reference_counts(anchor: &Path) -> serde_json::Value {
    let out = run(Command::new("/usr/bin/python3")
        .arg(repo_root().join("tests/support/otf2_region_counts.py"))
        .arg(anchor));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.trim().is_empty(),
        "python otf2 reader complained:\n{stderr}"
    );
    serde_json::from_slice(&out.stdout).expect("the counts are JSON")
}

/// `pomptrace score --json DIR ARGS...`.
pub fn score_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = run(Command::new(pomptrace_command())
        .arg("score")
        .arg(dir)
        .arg("--json")
        .args(args));
    serde_json::from_slice(&out.stdout).expect("score --json prints JSON")
}

/// Whether `estimate` is within `percent` % of `actual`.
pub fn within(estimate: u64, actual: u64, percent: f64) -> bool {
    (estimate as f64 - actual as f64).abs() <= actual as f64 * percent / 100.0
}

/// The lines of `stderr` that start with `pomptrace:` and contain `text`.
pub fn lines_with<'a>(stderr: &'a str, text: &str) -> Vec<&'a str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("pomptrace:") && l.contains(text))
        .collect()
}
