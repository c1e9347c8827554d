//! `pomptrace summary` on call-path profiles and on traces of recursive tasks.
//!
//! A profile here is the one the runtime writes, DIR/profile.cubex, in the run that also wrote
//! DIR/traces.otf2 (`POMPTRACE_ENABLE_PROFILING=1`): the summary of DIR (which picks the
//! profile) must give, per region and thread, the visits and the inclusive and exclusive times
//! the summary of the trace gives, and the same waiting headline, on programs without explicit
//! tasks (where the two agree by definition: a profile counts a task only while it runs, a
//! trace's summary counts it where it nests).
//!
//! On a trace of recursive untied tasks, no region's inclusive time may exceed the run's total
//! thread time (the sum over locations of the time from their first to their last event, read
//! with the python `otf2` module), as nested visits of one region count once.

mod pomptrace_traces;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use pomptrace_traces::*;
use support::pomp2::{instrument, pomptrace_command, run_traced_with_args, Build, View};
use support::{run, Scratch};

fn summary(path: &Path, args: &[&str]) -> String {
    let out = run(Command::new(pomptrace_command())
        .arg("summary")
        .arg(path)
        .args(args));
    String::from_utf8(out.stdout).unwrap()
}

fn json_summary(path: &Path) -> serde_json::Value {
    serde_json::from_str(&summary(path, &["--json", "--by-thread"])).unwrap()
}

/// Profiling and tracing together: the trace and the profile of one run.
const PROFILED: (&str, &str) = ("POMPTRACE_ENABLE_PROFILING", "1");

/// `c-tests/<file>` instrumented with `opari_args`, run on `threads` threads with `args`,
/// profiled and traced.
fn trace_of(
    scratch: &Scratch,
    file: &str,
    opari_args: &[&str],
    threads: u32,
    args: &[&str],
) -> PathBuf {
    let source = instrument(file, &scratch.path, opari_args);
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let exe = Build::c(&scratch.path).executable(&[source], stem);
    run_traced_with_args(&exe, args, threads, "trace", &[PROFILED]).anchor()
}

/// The jacobi solver of the main job, built by `jacobi_trace`, run again profiled and traced.
fn profiled_jacobi(dir: &Path, args: &[&str]) -> PathBuf {
    jacobi_trace(dir, args);
    run_jacobi(dir, args, &dir.join("profiled"), &[PROFILED])
}

/// The profile the run of `anchor` wrote beside it.
fn profile_beside(anchor: &Path) -> PathBuf {
    let path = anchor.parent().unwrap().join("profile.cubex");
    assert!(path.is_file(), "{} was written", path.display());
    path
}

fn close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
    // Times pass through seconds in a double: well below a nanosecond apart.
    (a - b).abs() <= 1e-6 + 1e-9 * b.abs()
}

/// (region, thread) → the `--by-thread` row.
fn by_thread(json: &serde_json::Value) -> BTreeMap<(String, String), serde_json::Value> {
    json["by_thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                (
                    row["region"].as_str().unwrap().to_string(),
                    row["thread"].as_str().unwrap().to_string(),
                ),
                row.clone(),
            )
        })
        .collect()
}

fn profile_summary_agrees_with_the_trace_summary(anchor: &Path, program: &str) {
    let profile = profile_beside(anchor);
    let dir = anchor.parent().unwrap();
    let from_trace = json_summary(anchor);
    let from_profile = json_summary(dir);
    assert_eq!(
        from_profile["profile"].as_str(),
        Some(profile.to_str().unwrap()),
        "a directory with a profile is summarised from it"
    );
    assert!(from_profile.get("trace").is_none());
    assert_eq!(from_profile["locations"], from_trace["locations"]);
    let mut trace_rows = by_thread(&from_trace);
    let mut profile_rows = by_thread(&from_profile);
    // The profile's root, the program, is no region of the trace: visited once, by the
    // initial thread, for the whole run.
    let root = profile_rows
        .remove(&(program.to_string(), "Master thread".to_string()))
        .expect("the program's root");
    assert_eq!(root["visits"], 1);
    assert!(
        close(&root["inclusive_ms"], &from_trace["duration_ms"]),
        "{root}"
    );
    assert_eq!(
        profile_rows.keys().collect::<Vec<_>>(),
        trace_rows.keys().collect::<Vec<_>>()
    );
    for (key, row) in &profile_rows {
        let expected = trace_rows.remove(key).unwrap();
        assert_eq!(row["visits"], expected["visits"], "{key:?}");
        for column in ["inclusive_ms", "exclusive_ms"] {
            assert!(
                close(&row[column], &expected[column]),
                "{key:?} {column}: profile {row}, trace {expected}"
            );
        }
    }
    for key in ["parallel_ms", "barrier_wait_ms", "lock_wait_ms"] {
        assert!(
            close(&from_profile[key], &from_trace[key]),
            "{key}: {} against {}",
            from_profile[key],
            from_trace[key]
        );
    }
    assert_eq!(from_profile["headline"], from_trace["headline"]);
    // The per-region rows: the same regions in the same order (the root aside). Both are sorted
    // by exclusive time, which the profile carries in seconds: two regions whose times are
    // within a tick of each other may come in either order.
    let rows = |json: &serde_json::Value| -> Vec<serde_json::Value> {
        json["regions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["region"] != program)
            .cloned()
            .collect()
    };
    let key = |r: &serde_json::Value| (r["region"].clone(), r["file"].clone(), r["line"].clone());
    let (profile_regions, trace_regions) = (rows(&from_profile), rows(&from_trace));
    assert_eq!(profile_regions.len(), trace_regions.len());
    for (p, in_place) in profile_regions.iter().zip(&trace_regions) {
        assert!(
            key(p) == key(in_place) || close(&p["exclusive_ms"], &in_place["exclusive_ms"]),
            "order: {p} {in_place}"
        );
        let t = trace_regions
            .iter()
            .find(|t| key(t) == key(p))
            .unwrap_or_else(|| panic!("{p} is not in the trace's summary"));
        assert_eq!(p["threads"], t["threads"], "{p} {t}");
        for column in [
            "inclusive_min_ms",
            "inclusive_mean_ms",
            "inclusive_max_ms",
            "exclusive_ms",
        ] {
            assert!(close(&p[column], &t[column]), "{column}: {p} {t}");
        }
    }

    // The table and CSV of the profile: its header, the same columns as a trace's.
    let table = summary(dir, &[]);
    let first = table.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("profile {}: ", profile.display()))
            && first.contains(" call paths, duration "),
        "{table}"
    );
    assert!(table.contains("incl. min / mean / max [ms]"), "{table}");
    let csv = summary(&profile, &["--csv", "--top", "2"]);
    assert_eq!(
        csv.lines().next(),
        summary(anchor, &["--csv"]).lines().next(),
        "same CSV columns"
    );
    assert_eq!(csv.lines().count(), 3, "{csv}");
}

#[test]
fn a_profiles_summary_is_the_traces_on_the_main_jobs_program() {
    let scratch = Scratch::new("profile-summary-jacobi");
    let anchor = profiled_jacobi(&scratch.path, &["40", "20"]);
    profile_summary_agrees_with_the_trace_summary(&anchor, "jacobi");
}

#[test]
fn a_profiles_summary_is_the_traces_with_nested_teams_and_locks() {
    let scratch = Scratch::new("profile-summary-nested");
    let anchor = trace_of(&scratch, "nested_teams.c", &[], 2, &["2", "3"]);
    profile_summary_agrees_with_the_trace_summary(&anchor, "nested_teams");
    let scratch = Scratch::new("profile-summary-locks");
    let anchor = trace_of(&scratch, "fam_locks.c", &[], 3, &[]);
    profile_summary_agrees_with_the_trace_summary(&anchor, "fam_locks");
    let json = json_summary(anchor.parent().unwrap());
    assert!(json["lock_wait_ms"].as_f64().unwrap() > 0.0, "{json}");
}

/// Per location, last event time less first, summed (ticks), from the reference reader.
fn total_thread_ticks(view: &View) -> u64 {
    view.events
        .values()
        .filter(|events| !events.is_empty())
        .map(|events| events.last().unwrap().time - events[0].time)
        .sum()
}

#[test]
fn recursive_untied_tasks_never_count_more_inclusive_time_than_the_threads_had() {
    let scratch = Scratch::new("summary-untied-recursion");
    let anchor = trace_of(
        &scratch,
        "task_fib_untied.c",
        &["--omp-task-untied=keep"],
        4,
        &[],
    );
    let view = View::read(&anchor);
    let total_ms = total_thread_ticks(&view) as f64 * 1000.0 / view.timer_resolution as f64;
    let json: serde_json::Value = serde_json::from_str(&summary(&anchor, &["--json"])).unwrap();
    let regions = json["regions"].as_array().unwrap();
    let task = regions
        .iter()
        .find(|r| r["region"].as_str().unwrap().starts_with("!$omp task @"))
        .expect("a task region");
    // The recursion nests: the tasks' visits, summed as they nest, would exceed the threads'
    // time many times over (what this guards against).
    let enters = view.enters_of(task["region"].as_str().unwrap()) as u64;
    assert_eq!(task["visits"].as_u64(), Some(enters));
    for row in regions {
        let inclusive = row["inclusive_ms"].as_f64().unwrap();
        assert!(
            inclusive <= total_ms,
            "{}: {inclusive} ms inclusive, the threads had {total_ms} ms",
            row["region"]
        );
        assert!(row["inclusive_max_ms"].as_f64().unwrap() <= total_ms);
    }
    // Each thread's inclusive time in a region is at most its own time span.
    let spans: BTreeMap<String, f64> = view
        .locations
        .iter()
        .map(|(id, (name, _))| {
            let events = &view.events[id];
            let ticks = events.last().unwrap().time - events[0].time;
            (
                name.clone(),
                ticks as f64 * 1000.0 / view.timer_resolution as f64,
            )
        })
        .collect();
    let json = json_summary(&anchor);
    for row in json["by_thread"].as_array().unwrap() {
        let span = spans[row["thread"].as_str().unwrap()];
        assert!(
            row["inclusive_ms"].as_f64().unwrap() <= span + 1e-9,
            "{row} within {span} ms"
        );
    }
}

#[test]
fn a_damaged_profile_gets_one_clear_line() {
    let scratch = Scratch::new("profile-summary-damaged");
    let path = scratch.join("profile.cubex");
    std::fs::write(&path, b"not a tar archive").unwrap();
    for command in ["summary", "view"] {
        let out = Command::new(pomptrace_command())
            .arg(command)
            .arg(&scratch.path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("pomptrace: {}: ", path.display())),
            "{stderr}"
        );
    }
}
