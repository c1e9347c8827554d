//! Recovery from the first millisecond: runs killed (SIGKILL) at 20 times from 5 ms to 5 s into
//! the run, with and without synchronous metrics. Every location, and the metric definitions,
//! reach the journal when they are made, so `pomptrace recover` gives an archive that both
//! reference readers read, whose every location's events are a prefix of what a run that ends
//! records on that location; or, for a run killed before its measurement began, it exits
//! non-zero with one `pomptrace:` line saying why.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::pomp2::*;
use support::{run, Scratch};

const RUNS: u32 = 20;

/// A location's events as kind and region, without times or metric values.
fn shapes(view: &View) -> BTreeMap<u64, Vec<String>> {
    view.events
        .iter()
        .map(|(id, events)| {
            let shape = events
                .iter()
                .map(|e| match e.kind.as_str() {
                    "Metric" => "Metric".to_string(),
                    _ => e.text(),
                })
                .collect();
            (*id, shape)
        })
        .collect()
}

fn start(exe: &Path, experiment: &Path, per_thread: &str, env: &[(&str, &str)]) -> Command {
    let mut command = program(exe);
    command
        .arg(per_thread)
        .env("OMP_NUM_THREADS", "2")
        // The smallest chunks, so that chunks reach the disk early in a run of paced events.
        .env("POMPTRACE_CHUNK_SIZE", "256K")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("POMPTRACE_METRICS")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    command
}

fn killed_runs_recover(label: &str, env: &[(&str, &str)]) {
    let scratch = Scratch::new(label);
    let exe = instrumented_c_program(&scratch.path, "paced_events.c");

    // What a run that ends records (the killed runs record the same, for longer).
    let full = scratch.join("full");
    assert!(start(&exe, &full, "2000", env).status().unwrap().success());
    let reference = shapes(&View::read(&full.join("traces.otf2")));

    let mut recovered = 0;
    for i in 0..RUNS {
        // 5 ms to 5 s, evenly on a log scale.
        let after =
            Duration::from_secs_f64(0.005 * 1000f64.powf(f64::from(i) / f64::from(RUNS - 1)));
        let experiment = scratch.join(&format!("killed{i}"));
        let mut child = start(&exe, &experiment, "1000000", env).spawn().unwrap();
        let started = Instant::now();
        std::thread::sleep(after.saturating_sub(started.elapsed()));
        child.kill().unwrap();
        child.wait().unwrap();

        let out = Command::new(pomptrace_command())
            .arg("recover")
            .arg(&experiment)
            .output()
            .unwrap();
        let what = format!("{label}, killed after {after:?}");
        if !out.status.success() {
            // Only a run that had not begun its measurement leaves nothing to recover.
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(stderr.lines().count(), 1, "{what}: {stderr}");
            assert!(stderr.starts_with("pomptrace: "), "{what}: {stderr}");
            assert!(
                !experiment.join("traces.journal").exists(),
                "{what}: a started run was not recovered: {stderr}"
            );
            continue;
        }
        recovered += 1;
        let anchor = experiment.join("traces.otf2");
        let print = run(Command::new("timeout")
            .args(["60", "otf2-print", "--silent"])
            .arg(&anchor));
        assert!(
            String::from_utf8_lossy(&print.stderr).trim().is_empty(),
            "{what}: otf2-print complained: {print:?}"
        );
        let view = View::read(&anchor);
        // A run killed before its second thread joined names one location.
        assert!(
            (1..=2).contains(&view.locations.len()),
            "{what}: {:?}",
            view.locations
        );
        for (id, shape) in shapes(&view) {
            let (name, count) = &view.locations[&id];
            assert_eq!(
                *count as usize,
                shape.len(),
                "{what}: {name}: number_of_events"
            );
            let whole = &reference[&id];
            // The reference ends the parallel region and the program; compare what both have.
            let n = shape.len().min(whole.len() - 12);
            assert_eq!(
                shape[..n],
                whole[..n],
                "{what}: {name} is no prefix of a whole run"
            );
        }
    }
    // Most kill times are well after the start: the first ones may not be.
    assert!(
        recovered >= RUNS - 3,
        "{label}: only {recovered} of {RUNS} runs had begun"
    );
}

#[test]
fn runs_killed_from_5_ms_to_5_s_are_recovered() {
    killed_runs_recover("recover-early", &[]);
}

#[test]
fn runs_with_metrics_killed_from_5_ms_to_5_s_are_recovered() {
    killed_runs_recover(
        "recover-early-metrics",
        &[("POMPTRACE_METRICS", "ru_utime")],
    );
}
