//! Metrics and snapshots through the reference readers: counters at every Enter/Leave
//! (`POMPTRACE_METRICS`), the process-metrics sampler (`POMPTRACE_SAMPLING_INTERVAL`), and
//! snapshots (`POMPTRACE_SNAPSHOT_INTERVAL`) checked record for record against what OTF2's own
//! `otf2-snapshots` appends to the same trace.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use otf2::{Anchor, ArchiveReader, SnapRecord, SnapshotRecord};
use support::pomp2::*;
use support::{otf2_print, run, Scratch};

/// `c-tests/metrics_steps.c`, instrumented, built and run in a scratch directory of its own
/// with `threads` threads and `env`; the scratch directory lives as long as the run is needed.
fn traced_metrics_steps(label: &str, threads: u32, env: &[(&str, &str)]) -> (Scratch, Run) {
    let scratch = Scratch::new(label);
    let source = instrument("metrics_steps.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "metrics_steps");
    let run = run_traced(&exe, threads, label, env);
    assert_eq!(run.stdout(), "sum=28\n");
    (scratch, run)
}

const THREADS: u32 = 2;
/// Bytes each thread touches per step (`BLOCK` in metrics_steps.c).
const BLOCK: u64 = 4 << 20;
const STEPS: usize = 4;

/// Per visit of `region` (in order): how much each metric grew from its Enter to its Leave.
fn visit_deltas(events: &[Ev], region: &str) -> Vec<Vec<u64>> {
    let enters = values_at(events, "Enter", region);
    let leaves = values_at(events, "Leave", region);
    assert_eq!(enters.len(), leaves.len(), "visits of {region}");
    enters
        .iter()
        .zip(&leaves)
        .map(|((_, at_enter), (_, at_leave))| {
            at_leave.iter().zip(at_enter).map(|(l, e)| l - e).collect()
        })
        .collect()
}

/// `(time, values)` of the Metric events of a location that precede `kind` events of `region`.
fn values_at(events: &[Ev], kind: &str, region: &str) -> Vec<(u64, Vec<u64>)> {
    events
        .windows(2)
        .filter(|w| w[1].kind == kind && w[1].detail[0].contains(region))
        .map(|w| {
            assert_eq!(
                w[0].kind, "Metric",
                "{kind} {region} without a metric before it"
            );
            (
                w[0].time,
                w[0].detail[1..]
                    .iter()
                    .map(|v| v.parse().unwrap())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn counters_are_recorded_at_every_enter_and_leave() {
    let (_scratch, run) = traced_metrics_steps(
        "metrics-sync",
        THREADS,
        &[("POMPTRACE_METRICS", "page-faults,task-clock,ru_utime")],
    );
    assert!(
        !run.stderr().contains("POMPTRACE_METRICS"),
        "all three metrics work here: {}",
        run.stderr()
    );

    // otf2-print shows the definitions.
    let printed = otf2_print(&["-A"], &run.anchor(), &[]);
    for (member, mode) in [
        (
            "\"page-faults\"",
            "Type: OTHER, Mode: ACCUMULATED_START, Value Type: UINT64",
        ),
        (
            "\"task-clock\"",
            "Type: OTHER, Mode: ACCUMULATED_START, Value Type: UINT64",
        ),
        (
            "\"ru_utime\"",
            "Type: RUSAGE, Mode: ACCUMULATED_START, Value Type: UINT64",
        ),
    ] {
        assert!(
            printed
                .lines()
                .any(|l| l.starts_with("METRIC_MEMBER") && l.contains(member) && l.contains(mode)),
            "no METRIC_MEMBER {member} with {mode} in:\n{printed}"
        );
    }
    assert!(
        printed.lines().any(|l| l.starts_with("METRIC_CLASS")
            && l.contains("Occurrence: SYNCHRONOUS_STRICT")
            && l.contains("3 Members: \"page-faults\" <0>, \"task-clock\" <1>, \"ru_utime\" <2>")),
        "no synchronous metric class in:\n{printed}"
    );

    // The python reader: a Metric of class 0 with three values right before every Enter and
    // Leave of every thread, at the same time.
    let view = View::read(&run.anchor());
    view.assert_well_formed();
    assert_eq!(
        view.metric_classes[&0],
        (
            "SYNCHRONOUS_STRICT".to_string(),
            vec![
                "page-faults:#:ACCUMULATED_START".to_string(),
                "task-clock:ns:ACCUMULATED_START".into(),
                "ru_utime:usec:ACCUMULATED_START".into()
            ]
        )
    );
    let threads: Vec<String> = (1..THREADS).map(|t| format!("OMP thread {t}")).collect();
    let mut region_events = 0;
    for name in std::iter::once("Master thread").chain(threads.iter().map(String::as_str)) {
        let events = view.events_of(name);
        for (i, e) in events.iter().enumerate() {
            if e.kind == "Enter" || e.kind == "Leave" {
                region_events += 1;
                let m = &events[i - 1];
                assert_eq!(
                    (m.kind.as_str(), m.time, m.detail.len()),
                    ("Metric", e.time, 4),
                    "{name}: {e:?} is not preceded by its metric values ({m:?})"
                );
                assert_eq!(m.detail[0], "0", "the synchronous class");
            }
        }
        // Every value is the thread's running total: it never decreases.
        let metrics: Vec<Vec<u64>> = events
            .iter()
            .filter(|e| e.kind == "Metric")
            .map(|e| e.detail[1..].iter().map(|v| v.parse().unwrap()).collect())
            .collect();
        for pair in metrics.windows(2) {
            for k in 0..3 {
                assert!(
                    pair[1][k] >= pair[0][k],
                    "{name}: metric {k} decreased: {pair:?}"
                );
            }
        }
        // Touching a new 4 MiB block faults in its pages; computing faults (almost) nothing.
        let touch = visit_deltas(events, "touch");
        let compute = visit_deltas(events, "compute");
        assert_eq!((touch.len(), compute.len()), (STEPS, STEPS), "{name}");
        for (step, (touch, compute)) in touch.iter().zip(&compute).enumerate() {
            let faults = touch[0];
            assert!(
                faults >= BLOCK / 4096 * 9 / 10,
                "{name}, step {step}: {faults} page faults while touching {BLOCK} bytes"
            );
            let faults = compute[0];
            assert!(
                faults < 64,
                "{name}, step {step}: {faults} page faults computing"
            );
            // task-clock counts the compute loop (several ms of CPU).
            let ran = compute[1];
            assert!(
                ran >= 1_000_000,
                "{name}, step {step}: computing took {ran} ns of CPU"
            );
        }
    }
    assert!(region_events >= 2 * 4 * STEPS * THREADS as usize);
}

/// Whether this machine can count CPU cycles of a thread.
fn machine_counts_cycles() -> Result<(), String> {
    pomptrace::cpu_cycles_countable()
}

#[test]
fn hardware_counters_where_the_machine_has_them_and_one_clear_line_where_not() {
    let (_scratch, run) = traced_metrics_steps(
        "metrics-hw",
        THREADS,
        &[("POMPTRACE_METRICS", "cycles,task-clock")],
    );
    let view = View::read(&run.anchor());
    view.assert_well_formed();
    let members = &view.metric_classes[&0].1;
    let warnings: Vec<String> = run
        .stderr()
        .lines()
        .filter(|l| l.contains("POMPTRACE_METRICS"))
        .map(String::from)
        .collect();
    match machine_counts_cycles() {
        Ok(()) => {
            assert!(warnings.is_empty(), "{warnings:?}");
            assert_eq!(members[0], "cycles:#:ACCUMULATED_START");
            let events = view.events_of("Master thread");
            // 3 million dependent multiply-adds take far more than a million cycles.
            assert!(visit_deltas(events, "compute")[0][0] > 1_000_000);
        }
        Err(why) => {
            assert_eq!(
                warnings,
                [format!(
                    "pomptrace: POMPTRACE_METRICS: cannot count \"cycles\": {why}; tracing without it"
                )]
            );
            assert_eq!(members, &["task-clock:ns:ACCUMULATED_START".to_string()]);
        }
    }
}

#[test]
fn a_kernel_that_refuses_perf_counters_gets_one_clear_line_and_the_rest_is_traced() {
    // perf_event_open fails with EACCES, as with perf_event_paranoid 3 or a seccomp profile.
    let shim_dir = Scratch::new("deny-perf");
    let shim = shim_dir.join("deny_perf_events.so");
    run(Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o"])
        .arg(&shim)
        .arg(support::repo_root().join("c-tests/deny_perf_events.c"))
        .arg("-ldl"));
    let preload = shim.to_str().unwrap();
    let (_scratch, run) = traced_metrics_steps(
        "metrics-denied",
        THREADS,
        &[
            ("POMPTRACE_METRICS", "task-clock,ru_utime"),
            ("LD_PRELOAD", preload),
        ],
    );
    let stderr = run.stderr();
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("METRICS")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with(
            "pomptrace: POMPTRACE_METRICS: cannot count \"task-clock\": the kernel refuses it \
             (permission denied; /proc/sys/kernel/perf_event_paranoid is"
        ) && lines[0].ends_with("; tracing without it"),
        "{}",
        lines[0]
    );
    let view = View::read(&run.anchor());
    view.assert_well_formed();
    assert_eq!(
        view.metric_classes[&0].1,
        ["ru_utime:usec:ACCUMULATED_START".to_string()]
    );
}

#[test]
fn an_unknown_metric_name_lists_the_valid_ones() {
    let (_scratch, run) = traced_metrics_steps(
        "metrics-unknown",
        THREADS,
        &[("POMPTRACE_METRICS", "task-clock,page_faults")],
    );
    let stderr = run.stderr();
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("METRICS")).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("pomptrace: POMPTRACE_METRICS: unknown metric \"page_faults\"; valid names are cycles, instructions,"),
        "{}",
        lines[0]
    );
    for name in [
        "page-faults",
        "task-clock",
        "context-switches",
        "cpu-migrations",
        "ru_maxrss",
    ] {
        assert!(lines[0].contains(name), "{}", lines[0]);
    }
    let view = View::read(&run.anchor());
    assert_eq!(
        view.metric_classes[&0].1,
        ["task-clock:ns:ACCUMULATED_START".to_string()]
    );
}

#[test]
fn the_sampler_follows_the_resident_size_step_by_step() {
    let (_scratch, run) = traced_metrics_steps(
        "metrics-sampler",
        THREADS,
        &[("POMPTRACE_SAMPLING_INTERVAL", "4ms")],
    );
    let view = View::read(&run.anchor());
    view.assert_well_formed();
    let (&id, _) = view
        .location_types
        .iter()
        .find(|(_, t)| *t == "METRIC")
        .expect("a METRIC location");
    assert_eq!(view.locations[&id].0, "Process metrics");
    assert_eq!(view.metric_classes[&0].0, "ASYNCHRONOUS");
    assert_eq!(
        view.metric_classes[&0].1[0],
        "resident_set_size:B:ABSOLUTE_POINT"
    );
    let samples: Vec<(u64, u64)> = view.events[&id]
        .iter()
        .map(|e| {
            assert_eq!((e.kind.as_str(), e.detail[0].as_str()), ("Metric", "0"));
            (e.time, e.detail[1].parse().unwrap())
        })
        .collect();
    // At most one value per interval: a sampler that wakes late (this machine is shared and
    // may be very busy) skips the intervals it missed instead of catching up.
    let span_ns = (samples.last().unwrap().0 - samples[0].0) as u128 * 1_000_000_000
        / view.timer_resolution as u128;
    let intervals = (span_ns / 4_000_000) as usize + 1;
    assert!(
        samples.len() <= intervals + 1 && samples.len() >= 2 * STEPS,
        "{} samples over {span_ns} ns at 4 ms",
        samples.len()
    );
    // Between the parallel regions (the initial thread sleeps 50 ms after each join) the
    // resident size has grown by the blocks the threads touched and kept.
    let master = view.events_of("Master thread");
    let joins = view.times_of("Master thread", "ThreadJoin");
    let forks = view.times_of("Master thread", "ThreadFork");
    assert_eq!((joins.len(), forks.len()), (STEPS, STEPS));
    // After the last step the blocks are freed: that pause ends where the steps region does.
    let steps_end = master
        .iter()
        .find(|e| e.kind == "Leave" && e.detail[0].contains("user(steps)"))
        .unwrap()
        .time;
    let before = samples
        .iter()
        .filter(|s| s.0 < forks[0])
        .map(|s| s.1)
        .max()
        .unwrap();
    let mut previous = before;
    for (step, &join) in joins.iter().enumerate() {
        let until = forks.get(step + 1).copied().unwrap_or(steps_end);
        let pause: Vec<u64> = samples
            .iter()
            .filter(|s| s.0 > join && s.0 < until)
            .map(|s| s.1)
            .collect();
        assert!(
            !pause.is_empty(),
            "no sample in the pause after step {step}"
        );
        let level = *pause.iter().min().unwrap();
        assert!(
            level >= previous + THREADS as u64 * BLOCK * 9 / 10,
            "step {step}: resident size {level} after {previous}"
        );
        previous = level;
    }
}

/// Every snapshot record of every location, as our reader reads them.
fn snapshots(anchor: &Path) -> BTreeMap<u64, Vec<SnapshotRecord>> {
    let reader = ArchiveReader::open(anchor).unwrap();
    reader
        .locations()
        .unwrap()
        .into_iter()
        .map(|l| (l, reader.snapshots(l).unwrap()))
        .collect()
}

/// A copy of the archive in `dir` without its snapshots.
fn copy_without_snapshots(experiment: &Path, dir: &Path) -> PathBuf {
    run(Command::new("cp").arg("-r").arg(experiment).arg(dir));
    for entry in std::fs::read_dir(dir.join("traces")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "snap") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let anchor = dir.join("traces.otf2");
    let mut decoded = Anchor::decode(&std::fs::read(&anchor).unwrap()).unwrap();
    decoded.number_of_snapshots = 0;
    std::fs::write(&anchor, decoded.encode()).unwrap();
    anchor
}

#[test]
fn snapshots_match_what_otf2_snapshots_appends_to_the_same_trace() {
    let (scratch, run) = traced_metrics_steps(
        "snapshots",
        THREADS,
        &[
            ("POMPTRACE_SNAPSHOT_INTERVAL", "7ms"),
            ("POMPTRACE_METRICS", "page-faults,task-clock"),
            ("POMPTRACE_SAMPLING_INTERVAL", "5ms"),
        ],
    );
    // Both reference readers accept the archive with its snapshots, and otf2-snapshots writes
    // the same records at the same break times.
    let ours = assert_snapshots_match_the_reference(&run, 7_000_000, &scratch);
    let starts = ours[&0]
        .iter()
        .filter(|r| matches!(r.record, SnapRecord::SnapshotStart { .. }))
        .count();
    assert!(
        starts >= 10,
        "{starts} snapshots in a run of over 100 ms at 7 ms"
    );
    // Regions were open, nested, at some snapshot: steps > parallel > touch or compute.
    let deepest = ours[&0]
        .split(|r| matches!(r.record, SnapRecord::SnapshotEnd { .. }))
        .map(|s| {
            s.iter()
                .filter(|r| matches!(r.record, SnapRecord::Enter { .. }))
                .count()
        })
        .max()
        .unwrap();
    assert!(deepest >= 3, "at most {deepest} regions open at a snapshot");
    for records in ours.values() {
        assert!(
            records
                .iter()
                .any(|r| matches!(r.record, SnapRecord::Metric { .. })),
            "every location restates its metric values"
        );
    }
}

/// Runs `otf2-snapshots` with our break interval on a copy of the trace without our snapshots
/// and checks that both hold the same snapshot records; checks that both reference readers
/// accept ours, and that the anchor counts them. Returns ours.
fn assert_snapshots_match_the_reference(
    traced: &Run,
    interval_ns: u128,
    scratch: &Scratch,
) -> BTreeMap<u64, Vec<SnapshotRecord>> {
    let view = View::read(&traced.anchor());
    view.assert_well_formed();
    let printed = otf2_print(&["-A"], &traced.anchor(), &[]);
    assert!(printed.contains("=== Snapshots"), "{printed}");
    let ours = snapshots(&traced.anchor());
    let reference_anchor = copy_without_snapshots(&traced.experiment, &scratch.join("reference"));
    let interval_ticks = interval_ns * view.timer_resolution as u128 / 1_000_000_000;
    run(Command::new("otf2-snapshots")
        .arg("-p")
        .arg(interval_ticks.to_string())
        .arg(&reference_anchor));
    let theirs = snapshots(&reference_anchor);
    assert_eq!(ours.len(), theirs.len());
    for (location, records) in &ours {
        assert_eq!(
            records, &theirs[location],
            "location {location}: our snapshots differ from otf2-snapshots'"
        );
    }
    let count = |anchor: &Path| {
        Anchor::decode(&std::fs::read(anchor).unwrap())
            .unwrap()
            .number_of_snapshots
    };
    assert_eq!(count(&traced.anchor()), count(&reference_anchor));
    let starts = ours[&0]
        .iter()
        .filter(|r| matches!(r.record, SnapRecord::SnapshotStart { .. }))
        .count();
    assert_eq!(starts as u32, count(&traced.anchor()));
    ours
}

#[test]
fn snapshots_of_held_locks_open_forks_and_tasks_match_the_reference() {
    let scratch = Scratch::new("snapshots-sync");
    let source = instrument("snapshot_sync.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "snapshot_sync");
    let run = run_traced(&exe, 3, "sync", &[("POMPTRACE_SNAPSHOT_INTERVAL", "1ms")]);
    assert_eq!(run.stdout(), "done=3\n");
    let ours = assert_snapshots_match_the_reference(&run, 1_000_000, &scratch);
    let records = || ours.values().flatten().map(|r| &r.record);
    assert!(
        records().any(|r| matches!(r, SnapRecord::OmpFork { .. })),
        "no snapshot caught the fork open"
    );
    assert!(
        records().any(|r| matches!(r, SnapRecord::OmpAcquireLock { .. })),
        "no snapshot caught a lock held"
    );
}

#[test]
fn a_snapshot_at_the_end_restates_the_last_metric_values() {
    let (_scratch, run) = traced_metrics_steps(
        "snapshot-end",
        THREADS,
        &[
            ("POMPTRACE_SNAPSHOT_AT_END", "1"),
            ("POMPTRACE_METRICS", "task-clock"),
        ],
    );
    let view = View::read(&run.anchor());
    let reader = ArchiveReader::open(run.anchor()).unwrap();
    assert_eq!(reader.anchor().number_of_snapshots, 1);
    let clock = reader
        .global_defs()
        .unwrap()
        .into_iter()
        .find_map(|d| match d {
            otf2::GlobalDef::ClockProperties {
                global_offset,
                trace_length,
                ..
            } => Some(global_offset + trace_length),
            _ => None,
        })
        .unwrap();
    for (&location, (name, _)) in &view.locations {
        let records = reader.snapshots(location).unwrap();
        let last_metric = view.events[&location]
            .iter()
            .rev()
            .find(|e| e.kind == "Metric")
            .unwrap();
        let kinds: Vec<&SnapRecord> = records.iter().map(|r| &r.record).collect();
        assert!(
            records.iter().all(|r| r.time == clock),
            "{name}: {records:?}"
        );
        match kinds.as_slice() {
            [SnapRecord::SnapshotStart {
                number_of_records: 1,
            }, SnapRecord::Metric { values, .. }, SnapRecord::SnapshotEnd { .. }] => {
                assert_eq!(values[0].raw.to_string(), last_metric.detail[1], "{name}");
            }
            other => panic!("{name}: unexpected end snapshot {other:?}"),
        }
    }
}
