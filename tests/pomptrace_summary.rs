//! `pomptrace summary` against the reference reader: on a real trace, every number of
//! `--json --by-thread` (visits, inclusive and exclusive time per region and thread) and of the
//! per-region rows (totals, min/mean/max over threads, imbalance, the waiting headline) is
//! recomputed from the python `otf2` module's events; `--top`, `--csv` agree with `--json`.

mod pomptrace_traces;
mod support;

use std::collections::BTreeMap;
use std::process::Command;

use pomptrace_traces::*;
use support::pomp2::{pomptrace_command, View};
use support::{run, Scratch};

fn summary(anchor: &std::path::Path, args: &[&str]) -> String {
    let out = run(Command::new(pomptrace_command())
        .arg("summary")
        .arg(anchor)
        .args(args));
    String::from_utf8(out.stdout).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 + 1e-9 * b.abs()
}

#[test]
fn summary_numbers_match_the_reference_reader() {
    let scratch = Scratch::new("summary-vs-python");
    let anchor = jacobi_trace(&scratch.path, &["60", "30"]);
    let view = View::read(&anchor);
    let ms = |ticks: u64| ticks as f64 * 1000.0 / view.timer_resolution as f64;
    let visits = reference_visits(&view);

    // (region, thread) → (visits, inclusive ms, exclusive ms), from the reference reader.
    let mut expected: BTreeMap<(String, String), (u64, f64, f64)> = BTreeMap::new();
    let mut barrier_wait = 0u64;
    let mut parallel = 0u64;
    for (thread, list) in &visits {
        for v in list {
            let e = expected
                .entry((v.region.clone(), thread.clone()))
                .or_default();
            e.0 += 1;
            e.1 += ms(v.end - v.start);
            e.2 += ms(v.exclusive);
            if v.region.contains("barrier") {
                barrier_wait += v.exclusive;
            }
            // The jacobi program has no nested parallelism.
            if v.region.starts_with("!$omp parallel ") {
                parallel += v.end - v.start;
            }
        }
    }

    let json: serde_json::Value =
        serde_json::from_str(&summary(&anchor, &["--json", "--by-thread"])).unwrap();
    let by_thread = json["by_thread"].as_array().unwrap();
    assert_eq!(
        by_thread.len(),
        expected.len(),
        "one row per region and thread"
    );
    for row in by_thread {
        let key = (
            row["region"].as_str().unwrap().to_string(),
            row["thread"].as_str().unwrap().to_string(),
        );
        let (visits, inclusive, exclusive) = expected[&key];
        assert_eq!(row["visits"].as_u64(), Some(visits), "{key:?}");
        assert!(
            close(row["inclusive_ms"].as_f64().unwrap(), inclusive),
            "{key:?} {row}"
        );
        assert!(
            close(row["exclusive_ms"].as_f64().unwrap(), exclusive),
            "{key:?} {row}"
        );
    }
    let events: usize = view.events.values().map(Vec::len).sum();
    assert_eq!(json["events"].as_u64(), Some(events as u64));

    // Per region over threads.
    let regions = json["regions"].as_array().unwrap();
    let mut previous_exclusive = f64::INFINITY;
    for row in regions {
        let name = row["region"].as_str().unwrap();
        let threads: Vec<&(u64, f64, f64)> = expected
            .iter()
            .filter(|((r, _), _)| r == name)
            .map(|(_, v)| v)
            .collect();
        let inclusive: Vec<f64> = threads.iter().map(|t| t.1).collect();
        let max = inclusive.iter().copied().fold(0.0, f64::max);
        let min = inclusive.iter().copied().fold(f64::INFINITY, f64::min);
        let mean = inclusive.iter().sum::<f64>() / inclusive.len() as f64;
        let exclusive: f64 = threads.iter().map(|t| t.2).sum();
        assert_eq!(
            row["threads"].as_u64(),
            Some(threads.len() as u64),
            "{name}"
        );
        assert_eq!(
            row["visits"].as_u64(),
            Some(threads.iter().map(|t| t.0).sum()),
            "{name}"
        );
        assert!(
            close(
                row["inclusive_ms"].as_f64().unwrap(),
                inclusive.iter().sum()
            ),
            "{name}"
        );
        assert!(
            close(row["exclusive_ms"].as_f64().unwrap(), exclusive),
            "{name}"
        );
        assert!(
            close(row["inclusive_min_ms"].as_f64().unwrap(), min),
            "{name}"
        );
        assert!(
            close(row["inclusive_max_ms"].as_f64().unwrap(), max),
            "{name}"
        );
        assert!(
            close(row["inclusive_mean_ms"].as_f64().unwrap(), mean),
            "{name}"
        );
        let imbalance = (max - mean) / max * 100.0;
        assert!(
            (row["imbalance_percent"].as_f64().unwrap() - imbalance).abs() < 1e-6,
            "{name}"
        );
        assert!(
            exclusive <= previous_exclusive + 1e-9,
            "sorted by exclusive time"
        );
        previous_exclusive = exclusive;
    }
    assert_eq!(
        regions.len(),
        expected
            .keys()
            .map(|k| &k.0)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    );

    // The headline: barrier time against parallel time.
    assert!(close(
        json["barrier_wait_ms"].as_f64().unwrap(),
        ms(barrier_wait)
    ));
    assert!(close(json["parallel_ms"].as_f64().unwrap(), ms(parallel)));
    let percent = barrier_wait as f64 / parallel as f64 * 100.0;
    let headline = json["headline"].as_str().unwrap();
    assert!(
        headline.starts_with(&format!(
            "threads waited {percent:.1}% of the parallel time in barriers"
        )),
        "{headline}"
    );

    // The table: the headline, then one row per region, most exclusive time first.
    let table = summary(&anchor, &[]);
    assert!(table.contains(headline), "{table}");
    let first_region = regions[0]["region"].as_str().unwrap();
    let header = table
        .lines()
        .position(|l| l.starts_with("region "))
        .unwrap();
    assert!(
        table
            .lines()
            .nth(header + 1)
            .unwrap()
            .starts_with(first_region),
        "{table}"
    );

    // --top and --csv agree with --json.
    let top: serde_json::Value =
        serde_json::from_str(&summary(&anchor, &["--json", "--top", "3"])).unwrap();
    assert_eq!(top["regions"].as_array().unwrap()[..], regions[..3]);
    let csv = summary(&anchor, &["--csv"]);
    let mut lines = csv.lines();
    let columns: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(columns[0], "region");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), regions.len());
    for (row, json_row) in rows.iter().zip(regions) {
        assert_eq!(row.len(), columns.len());
        assert_eq!(row[0], json_row["region"].as_str().unwrap());
        let exclusive: f64 = row[columns.iter().position(|c| *c == "exclusive_ms").unwrap()]
            .parse()
            .unwrap();
        assert!(close(exclusive, json_row["exclusive_ms"].as_f64().unwrap()));
    }
}

/// Lock waiting: the outer `critical` region around the acquire, and `omp_set_lock`.
#[test]
fn summary_counts_lock_waiting() {
    let scratch = Scratch::new("summary-locks");
    let anchor = c_test_trace(&scratch.path, "fam_locks.c", 3);
    let view = View::read(&anchor);
    let mut lock_wait = 0u64;
    for list in reference_visits(&view).values() {
        for v in list {
            let role = view
                .regions
                .values()
                .find(|r| r.name == v.region)
                .map(|r| r.role.clone())
                .unwrap();
            if role == "CRITICAL" || v.region == "omp_set_lock" || v.region == "omp_set_nest_lock" {
                lock_wait += v.exclusive;
            }
        }
    }
    assert!(lock_wait > 0, "the program waits for locks");
    let json: serde_json::Value = serde_json::from_str(&summary(&anchor, &["--json"])).unwrap();
    let expected = lock_wait as f64 * 1000.0 / view.timer_resolution as f64;
    assert!(
        close(json["lock_wait_ms"].as_f64().unwrap(), expected),
        "{json}"
    );
}

#[test]
fn summary_usage_errors() {
    for args in [&["--csv", "--json"][..], &["--top"], &["--top", "x"]] {
        let out = Command::new(pomptrace_command())
            .args(["summary", "a.otf2"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("Usage:"));
    }
}
