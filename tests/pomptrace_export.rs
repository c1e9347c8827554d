//! `pomptrace export --chrome` against the reference reader: the JSON parses; each location
//! is one thread (named after it) of its location group's process; there is one complete event
//! per Enter/Leave pair with the reference reader's region name, start and duration in µs;
//! fork/join, task and lock events appear as instant and flow events, as many as the trace has;
//! `-o NAME.gz` writes the same document gzip-compressed.

mod pomptrace_traces;
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use pomptrace_traces::*;
use support::pomp2::{pomptrace_command, View};
use support::{run, Scratch};

fn export(anchor: &Path, output: &Path) -> serde_json::Value {
    run(Command::new(pomptrace_command())
        .args(["export", "--chrome"])
        .arg(anchor)
        .arg("-o")
        .arg(output));
    serde_json::from_slice(&std::fs::read(output).unwrap()).expect("the export is JSON")
}

/// Checks the export of `anchor` against the reference reader; returns the trace events.
fn check_against_reference(anchor: &Path, json: &serde_json::Value) -> Vec<serde_json::Value> {
    let view = View::read(anchor);
    let offset = global_offset(anchor);
    let micros = |ticks: u64| ticks as f64 * 1e6 / view.timer_resolution as f64;
    let events = json["traceEvents"].as_array().unwrap().clone();

    let mut thread_names: BTreeMap<(u64, u64), String> = BTreeMap::new();
    for e in events.iter().filter(|e| e["name"] == "thread_name") {
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        thread_names.insert(key, e["args"]["name"].as_str().unwrap().to_string());
    }
    assert_eq!(
        thread_names.len(),
        view.locations.len(),
        "one thread per location"
    );
    assert!(events.iter().any(|e| e["name"] == "process_name"
        && e["args"]["name"].as_str().unwrap().starts_with("Process")));

    // (start µs, duration µs, region) per thread name, exported and expected.
    let mut exported: BTreeMap<String, Vec<(f64, f64, String)>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        exported
            .entry(thread_names[&key].clone())
            .or_default()
            .push((
                e["ts"].as_f64().unwrap(),
                e["dur"].as_f64().unwrap(),
                e["name"].as_str().unwrap().to_string(),
            ));
    }
    let reference = reference_visits(&view);
    let pairs: usize = reference.values().map(Vec::len).sum();
    let enters: usize = view
        .events
        .values()
        .flatten()
        .filter(|e| e.kind == "Enter")
        .count();
    assert_eq!(pairs, enters);
    assert_eq!(
        exported.values().map(Vec::len).sum::<usize>(),
        pairs,
        "one complete event per Enter/Leave pair"
    );
    for (thread, visits) in &reference {
        let mut expected: Vec<(f64, f64, String)> = visits
            .iter()
            .map(|v| {
                (
                    micros(v.start - offset),
                    micros(v.end - v.start),
                    v.region.clone(),
                )
            })
            .collect();
        let mut got = exported.remove(thread).unwrap_or_default();
        let order = |a: &(f64, f64, String), b: &(f64, f64, String)| {
            a.0.total_cmp(&b.0)
                .then(b.1.total_cmp(&a.1))
                .then(a.2.cmp(&b.2))
        };
        expected.sort_by(order);
        got.sort_by(order);
        assert_eq!(got.len(), expected.len(), "{thread}");
        for (g, e) in got.iter().zip(&expected) {
            // Written to the nanosecond (3 decimals of µs).
            assert!(
                (g.0 - e.0).abs() < 0.0011 && (g.1 - e.1).abs() < 0.0011 && g.2 == e.2,
                "{thread}: exported {g:?}, reference {e:?}"
            );
        }
    }

    // Marks: as many as the reference reader has events of each kind.
    let count_kind = |kind: &str| {
        view.events
            .values()
            .flatten()
            .filter(|e| e.kind == kind)
            .count()
    };
    let count =
        |pred: &dyn Fn(&serde_json::Value) -> bool| events.iter().filter(|e| pred(e)).count();
    let name_starts =
        |e: &serde_json::Value, p: &str| e["name"].as_str().is_some_and(|n| n.starts_with(p));
    assert_eq!(
        count(&|e| e["ph"] == "i" && name_starts(e, "fork (")),
        count_kind("ThreadFork")
    );
    assert_eq!(
        count(&|e| e["ph"] == "i" && e["name"] == "join"),
        count_kind("ThreadJoin")
    );
    assert_eq!(count(&|e| e["ph"] == "s"), count_kind("ThreadTaskCreate"));
    assert_eq!(count(&|e| e["ph"] == "f"), count_kind("ThreadTaskSwitch"));
    assert_eq!(
        count(&|e| name_starts(e, "acquire lock")),
        count_kind("ThreadAcquireLock")
    );
    assert_eq!(
        count(&|e| name_starts(e, "release lock")),
        count_kind("ThreadReleaseLock")
    );
    events
}

#[test]
fn chrome_export_of_the_jacobi_trace_matches_the_reference_reader() {
    let scratch = Scratch::new("export-jacobi");
    let anchor = jacobi_trace(&scratch.path, &["60", "30"]);
    let json = export(&anchor, &scratch.join("trace.json"));
    check_against_reference(&anchor, &json);

    // Gzip: the same document.
    let gz = scratch.join("trace.json.gz");
    run(Command::new(pomptrace_command())
        .args(["export", "--chrome"])
        .arg(&anchor)
        .arg("-o")
        .arg(&gz));
    let unzipped = run(Command::new("gzip").arg("-dc").arg(&gz)).stdout;
    assert_eq!(unzipped, std::fs::read(scratch.join("trace.json")).unwrap());
}

#[test]
fn chrome_export_of_tasks_and_locks_has_flows_and_lock_marks() {
    let scratch = Scratch::new("export-tasks");
    let tasks = c_test_trace(&scratch.path, "fam_tasks.c", 3);
    let events = check_against_reference(&tasks, &export(&tasks, &scratch.join("tasks.json")));
    assert!(events.iter().any(|e| e["ph"] == "s"), "task flows");
    let locks_dir = scratch.join("locks");
    std::fs::create_dir_all(&locks_dir).unwrap();
    let locks = c_test_trace(&locks_dir, "fam_locks.c", 3);
    let events = check_against_reference(&locks, &export(&locks, &scratch.join("locks.json")));
    assert!(events.iter().any(|e| e["cat"] == "lock"), "lock marks");
}

#[test]
fn export_errors() {
    let scratch = Scratch::new("export-errors");
    let out = Command::new(pomptrace_command())
        .args(["export", "--chrome"])
        .arg(scratch.join("missing.otf2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("pomptrace: "));
    let out = Command::new(pomptrace_command())
        .args(["export", "x.otf2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a format is required");
}
