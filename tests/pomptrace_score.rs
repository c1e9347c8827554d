//! `pomptrace score`: per region and per kind the visits and bytes of a real trace agree with
//! the reference reader and the files; its estimate of the trace's size is within 10 % of the
//! real one, and so is its estimate of the trace that a filter gives (checked by running the
//! program again with the filter `--suggest` wrote). Bad input gets one clear line.

mod support;

use std::collections::BTreeMap;
use std::process::Command;

use pomptrace::filtering::Filter;
use serde_json::Value;
use support::budget::*;
use support::pomp2::{pomptrace_command, run_traced_with_args};
use support::Scratch;

const THREADS: u64 = 2;
/// Flushes per thread: a trace of about 10 MB.
const SPINS: u64 = 200_000;

fn score_text(dir: &std::path::Path, args: &[&str]) -> String {
    let out = support::run(
        Command::new(pomptrace_command())
            .arg("score")
            .arg(dir)
            .args(args),
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn score_counts_the_trace_and_foresees_the_filtered_run() {
    let scratch = Scratch::new("score");
    let exe = spin_program(&scratch.path);
    let spins = SPINS.to_string();
    let plain = run_traced_with_args(
        &exe,
        &["flush", &spins],
        THREADS as u32,
        "plain",
        &[("POMPTRACE_MAX_TRACE_SIZE", "0")],
    );
    let size = archive_bytes(&plain.experiment);
    let json = score_json(&plain.experiment, &[]);
    assert_eq!(json["trace_bytes"].as_u64(), Some(size));
    let estimate = json["estimated_bytes"].as_u64().unwrap();
    assert!(within(estimate, size, 10.0), "{estimate} for {size}");
    assert_eq!(json["unrecorded_visits"].as_u64(), Some(0));

    // Visits per region as the reference reader counts them.
    let counts = reference_counts(&plain.anchor());
    let mut reference: BTreeMap<String, u64> = BTreeMap::new();
    for regions in counts["counts"].as_object().unwrap().values() {
        for (region, pair) in regions.as_object().unwrap() {
            *reference.entry(region.clone()).or_default() += pair[0].as_u64().unwrap();
        }
    }
    let regions = json["regions"].as_array().unwrap();
    let scored: BTreeMap<String, u64> = regions
        .iter()
        .map(|r| {
            (
                r["region"].as_str().unwrap().to_string(),
                r["visits"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(scored, reference);
    let flush = spin_flush();
    assert_eq!(scored[&flush], THREADS * SPINS);
    // Regions by bytes, the flush first; its Enter and Leave take 12 bytes each with their
    // timestamps (region ids below 256), a few without one when two events share a tick.
    assert_eq!(regions[0]["region"], flush.as_str());
    let flush_bytes = regions[0]["bytes"].as_u64().unwrap();
    assert!(flush_bytes <= 24 * THREADS * SPINS, "{flush_bytes}");
    assert!(
        flush_bytes >= 24 * THREADS * SPINS * 99 / 100,
        "{flush_bytes}"
    );
    // The kinds add up to ALL; event bytes are the event files less their chunk framing.
    let kinds = json["kinds"].as_array().unwrap();
    let kind = |label: &str| kinds.iter().find(|k| k["kind"] == label).cloned();
    let all = kind("ALL").unwrap();
    let openmp = kind("OpenMP").unwrap();
    let user = kind("user").unwrap();
    assert_eq!(
        all["visits"].as_u64(),
        Some(openmp["visits"].as_u64().unwrap() + user["visits"].as_u64().unwrap())
    );
    let region_bytes: u64 = regions.iter().map(|r| r["bytes"].as_u64().unwrap()).sum();
    let other = kind("(other events)").unwrap()["bytes"].as_u64().unwrap();
    assert_eq!(all["bytes"].as_u64(), Some(region_bytes + other));
    let event_files: u64 = support::pomp2::event_files(&plain.experiment)
        .iter()
        .map(|(_, p)| std::fs::metadata(p).unwrap().len())
        .sum();
    let all_bytes = all["bytes"].as_u64().unwrap();
    assert!(all_bytes < event_files && all_bytes > event_files * 99 / 100);

    // The table: the kinds, the top regions, every region with -r; CSV as JSON.
    let table = score_text(&plain.experiment, &[]);
    for label in ["ALL", "OpenMP", "user", "(other events)"] {
        assert!(table.lines().any(|l| l.starts_with(label)), "{table}");
    }
    let region_lines = |text: &str| {
        text.lines()
            .filter(|l| l.contains(" @budget_spin.c:"))
            .count()
    };
    assert_eq!(region_lines(&table), 10, "{table}");
    assert!(table.contains(&format!("-r: all {}", regions.len())));
    assert_eq!(
        region_lines(&score_text(&plain.experiment, &["-r"])),
        regions.len()
    );
    let csv = score_text(&plain.experiment, &["--csv"]);
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("region,kind,file,line,visits,"));
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(first[0], flush);
    assert_eq!(first[4].parse::<u64>().unwrap(), THREADS * SPINS);
    assert_eq!(csv.lines().count(), regions.len() + 1);

    // A filter for 1 MB, and what it gives.
    let filter = scratch.join("suggested.filter");
    support::run(Command::new(pomptrace_command()).args([
        "score",
        plain.experiment.to_str().unwrap(),
        "--suggest",
        "--budget",
        "1M",
        "-o",
        filter.to_str().unwrap(),
    ]));
    let text = std::fs::read_to_string(&filter).unwrap();
    assert!(
        text.contains(&format!("  EXCLUDE {}\n", flush.replace(' ', "\\ "))),
        "{text}"
    );
    assert!(Filter::parse(&text)
        .unwrap()
        .excludes(&flush, "budget_spin.c"));
    let foreseen = score_json(&plain.experiment, &["--filter", filter.to_str().unwrap()]);
    let estimate = foreseen["estimated_bytes_with_filter"].as_u64().unwrap();
    let excluded: Vec<&Value> = foreseen["regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["excluded_by_filter"] == true)
        .collect();
    assert_eq!(excluded.len(), 1, "{excluded:?}");
    assert_eq!(excluded[0]["region"], flush.as_str());

    let filtered = run_traced_with_args(
        &exe,
        &["flush", &spins],
        THREADS as u32,
        "filtered",
        &[
            ("POMPTRACE_MAX_TRACE_SIZE", "0"),
            ("POMPTRACE_FILTERING_FILE", filter.to_str().unwrap()),
        ],
    );
    let filtered_size = archive_bytes(&filtered.experiment);
    assert!(filtered_size < 1 << 20, "{filtered_size}");
    assert!(
        within(estimate, filtered_size, 10.0),
        "{estimate} for {filtered_size}"
    );
    let counts = reference_counts(&filtered.anchor());
    assert!(counts["regions"].get(&flush).is_none());
}

#[test]
fn score_bad_input_gets_one_clear_line() {
    let scratch = Scratch::new("score-bad-input");
    let exe = spin_program(&scratch.path);
    let run = run_traced_with_args(&exe, &["flush", "100"], 1, "small", &[]);
    let score = |args: &[&str]| {
        Command::new(pomptrace_command())
            .arg("score")
            .args(args)
            .output()
            .unwrap()
    };
    let dir = run.experiment.to_str().unwrap();
    let malformed = scratch.join("malformed.filter");
    std::fs::write(&malformed, "EXCLUDE foo\n").unwrap();
    let missing = scratch.join("missing.filter");
    for (args, status, says) in [
        (
            vec![dir, "--filter", missing.to_str().unwrap()],
            1,
            "cannot read the filter file",
        ),
        (
            vec![dir, "--filter", scratch.path.to_str().unwrap()],
            1,
            "cannot read the filter file",
        ),
        (
            vec![dir, "--filter", malformed.to_str().unwrap()],
            1,
            "line 1: `EXCLUDE` outside",
        ),
        (
            vec![dir, "--suggest", "--budget", "12XB", "-o", "/dev/null"],
            2,
            "--budget 12XB is not a size",
        ),
        (vec![dir, "--suggest"], 2, "--output"),
        (vec![scratch.path.to_str().unwrap()], 1, "holds no trace"),
    ] {
        let out = score(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{args:?}: {stderr}");
        assert!(stderr.starts_with("pomptrace: "), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
