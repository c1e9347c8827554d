//! The trace-size budget (`POMPTRACE_MAX_TRACE_SIZE`): a run that spins on a very short region
//! for about two seconds writes at most its budget (plus a chunk per thread), keeps every event
//! of every other region, marks in the trace where the hot region stops being recorded and how
//! many of its visits were left out, names it at the end, and writes a filter file with which
//! the same run fits without stopping anything. Both reference readers read what it wrote.
//!
//! Every other region of `budget_spin.c` runs a fixed number of times whatever the spin's
//! length, so a short unbudgeted run of the same program says how many events of theirs the
//! long one must hold.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use pomptrace::filtering::Filter;
use serde_json::Value;
use support::budget::*;
use support::pomp2::run_traced_with_args;
use support::{otf2_print, Scratch};

/// Spins per thread of the long runs: about two seconds at two threads (most of the spins not
/// recorded), 60 million visits of the hot region.
const SPINS: u64 = 30_000_000;
const BUDGET: u64 = 50 << 20;
/// The event chunk size in the files (POMPTRACE_CHUNK_SIZE's default).
const CHUNK: u64 = 1 << 20;
const THREADS: u64 = 2;

/// The event-rate test needs the machine's cores to itself (its trace must grow by more than
/// 100 MB/s for over a second): it holds this for writing, every other test for reading.
static CORES: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn sharing_the_cores() -> std::sync::RwLockReadGuard<'static, ()> {
    CORES.read().unwrap_or_else(|e| e.into_inner())
}

/// Region → (enters, leaves) over all locations, from the reference reader's counts (which
/// thread runs a `single` block differs from run to run).
fn visits(counts: &Value) -> BTreeMap<String, (u64, u64)> {
    let mut out = BTreeMap::new();
    for regions in counts["counts"].as_object().unwrap().values() {
        for (region, pair) in regions.as_object().unwrap() {
            let total: &mut (u64, u64) = out.entry(region.clone()).or_default();
            total.0 += pair[0].as_u64().unwrap();
            total.1 += pair[1].as_u64().unwrap();
        }
    }
    out
}

/// (enters, leaves) of `region` on each location that has any.
fn per_location(counts: &Value, region: &str) -> Vec<(u64, u64)> {
    counts["counts"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|regions| regions.get(region))
        .map(|pair| (pair[0].as_u64().unwrap(), pair[1].as_u64().unwrap()))
        .collect()
}

/// `U` of a description `…; U visits left out`.
fn left_out(description: &str) -> u64 {
    description
        .strip_suffix(" visits left out")
        .and_then(|d| d.rsplit_once("; "))
        .and_then(|(_, c)| c.parse().ok())
        .unwrap_or_else(|| panic!("no count in the description {description:?}"))
}

/// `U` of the end's line `… "REGION" (U visits not recorded, on N locations) …`.
fn not_recorded_in_line(line: &str, region: &str) -> u64 {
    let after = line
        .split_once(&format!("\"{region}\" ("))
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("{region} is not named in {line:?}"));
    after
        .split_once(" visits not recorded, on ")
        .and_then(|(u, _)| u.parse().ok())
        .unwrap_or_else(|| panic!("no count for {region} in {line:?}"))
}

/// The run over its budget and the run with its filter file, for the hot region `hot` of
/// `mode` (`flush` or `user`), whose filter file line is `EXCLUDE pattern` and whose construct
/// a filter knows as `construct`.
fn over_budget_then_filtered(mode: &str, hot: &str, pattern: &str, construct: &str) {
    let _cores = sharing_the_cores();
    let scratch = Scratch::new(&format!("budget-{mode}"));
    let exe = spin_program(&scratch.path);
    let spins = SPINS.to_string();

    // Every other region's events, from a short run without a budget.
    let short = run_traced_with_args(
        &exe,
        &[mode, "2000"],
        THREADS as u32,
        "short",
        &[("POMPTRACE_MAX_TRACE_SIZE", "0")],
    );
    let expected = visits(&reference_counts(&short.anchor()));
    let others: BTreeMap<String, (u64, u64)> = expected
        .iter()
        .filter(|(r, _)| *r != hot)
        .map(|(r, c)| (r.clone(), *c))
        .collect();
    assert!(others.len() >= 10, "{others:?}");
    assert!(expected.contains_key(hot));

    let long = run_traced_with_args(
        &exe,
        &[mode, &spins],
        THREADS as u32,
        "budget",
        &[("POMPTRACE_MAX_TRACE_SIZE", "50M")],
    );
    let stderr = long.stderr();
    // One line names the region and the visits it left out.
    let said = lines_with(&stderr, "size budget");
    assert_eq!(said.len(), 1, "{stderr}");
    let all_visits = THREADS * SPINS;
    let said_unrecorded = not_recorded_in_line(said[0], hot);
    let filter_path = long.experiment.join("pomptrace.filter");
    assert!(
        said[0].contains(&filter_path.display().to_string()),
        "{stderr}"
    );

    let size = archive_bytes(&long.experiment);
    assert!(
        size <= BUDGET + THREADS * CHUNK,
        "{size} bytes over a budget of {BUDGET}"
    );
    // It did write most of what it was allowed to.
    assert!(size > BUDGET / 2, "{size} bytes");

    // The filter file names the region; it parses as the runtime reads it.
    let filter_text = std::fs::read_to_string(&filter_path).unwrap();
    assert!(
        filter_text.contains(&format!("  EXCLUDE {pattern}\n")),
        "{filter_text}"
    );
    let filter = Filter::parse(&filter_text).unwrap();
    assert!(filter.excludes(construct, "/x/budget_spin.c"));

    // The reference readers: every other region's events all there, well nested; the hot
    // region's partly, balanced, with a marker per location and its counts in the definitions.
    let counts = reference_counts(&long.anchor());
    assert_eq!(counts["nesting_errors"], Value::Array(vec![]), "{counts}");
    let recorded = visits(&counts);
    for (region, count) in &others {
        assert_eq!(recorded.get(region), Some(count), "{region}");
    }
    let hot_recorded = per_location(&counts, hot);
    assert_eq!(hot_recorded.len(), THREADS as usize, "{recorded:?}");
    for &(enters, leaves) in &hot_recorded {
        assert_eq!(enters, leaves);
        assert!(enters > 0 && enters < SPINS, "{enters}");
    }
    assert_eq!(recorded.len(), others.len() + 1, "no other regions");
    let markers = counts["parameter_strings"].as_array().unwrap();
    assert_eq!(markers.len(), THREADS as usize, "{markers:?}");
    for marker in markers {
        assert_eq!(marker[1], "pomptrace: not recorded from here");
        assert_eq!(marker[2], hot);
    }
    let description = counts["regions"][hot]["description"].as_str().unwrap();
    let unrecorded = left_out(description);
    assert_eq!(unrecorded, said_unrecorded);
    // Every visit is either in the trace or counted as left out.
    let hot_enters: u64 = hot_recorded.iter().map(|c| c.0).sum();
    assert_eq!(unrecorded + hot_enters, all_visits, "{description}");
    let per_location: u64 = counts["location_properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert_eq!(p[1], "POMPTRACE::VISITS_NOT_RECORDED");
            p[2].as_u64().unwrap()
        })
        .sum();
    assert_eq!(per_location, unrecorded);
    otf2_print(&["--silent"], &long.anchor(), &[]);
    let definitions = otf2_print(&["-G"], &long.anchor(), &[]);
    assert!(
        definitions.contains("Name: \"pomptrace: not recorded from here\""),
        "{definitions}"
    );
    assert!(definitions.contains(&format!("Descr.: \"{description}\"")));

    // `score` on it: its size within 10 %, and what the run left out.
    let score = score_json(&long.experiment, &[]);
    let estimate = score["estimated_bytes"].as_u64().unwrap();
    assert!(within(estimate, size, 10.0), "{estimate} for {size}");
    assert_eq!(score["unrecorded_visits"].as_u64(), Some(unrecorded));

    // Again with the filter file: under the budget, nothing stopped, every other event there.
    let filtered = run_traced_with_args(
        &exe,
        &[mode, &spins],
        THREADS as u32,
        "filtered",
        &[
            ("POMPTRACE_MAX_TRACE_SIZE", "50M"),
            ("POMPTRACE_FILTERING_FILE", filter_path.to_str().unwrap()),
        ],
    );
    let stderr = filtered.stderr();
    assert!(lines_with(&stderr, "size budget").is_empty(), "{stderr}");
    assert!(!filtered.experiment.join("pomptrace.filter").exists());
    let filtered_size = archive_bytes(&filtered.experiment);
    assert!(filtered_size < BUDGET, "{filtered_size}");
    let counts = reference_counts(&filtered.anchor());
    assert!(counts["regions"].get(hot).is_none());
    assert!(counts["parameter_strings"].as_array().unwrap().is_empty());
    assert_eq!(visits(&counts), others);

    // `score --filter` on the budgeted run foresaw it within 10 %.
    let score = score_json(
        &long.experiment,
        &["--filter", filter_path.to_str().unwrap()],
    );
    let estimate = score["estimated_bytes_with_filter"].as_u64().unwrap();
    assert!(
        within(estimate, filtered_size, 10.0),
        "{estimate} for {filtered_size}"
    );
}

#[test]
fn a_flush_spin_over_its_budget_keeps_every_other_event_and_leaves_a_filter_that_fits() {
    let hot = spin_flush();
    over_budget_then_filtered("flush", &hot, &hot.replace(' ', "\\ "), &hot);
}

#[test]
fn a_short_user_region_in_a_hot_loop_over_its_budget_keeps_every_other_event() {
    over_budget_then_filtered("user", &spin_user_region(), "hot", "hot");
}

/// A budget smaller than a chunk per thread: every location stops recording at its first full
/// chunk, closing what it has open; the trace stays within the budget and a chunk per thread,
/// and the readers read it.
#[test]
fn a_budget_used_up_stops_recording_and_the_trace_stays_readable() {
    let _cores = sharing_the_cores();
    let scratch = Scratch::new("budget-used-up");
    let exe = spin_program(&scratch.path);
    let run = run_traced_with_args(
        &exe,
        &["flush", "2000000"],
        THREADS as u32,
        "stopped",
        &[("POMPTRACE_MAX_TRACE_SIZE", "1M")],
    );
    let stderr = run.stderr();
    let said = lines_with(&stderr, "size budget");
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("2 locations stopped recording altogether"),
        "{stderr}"
    );
    let size = archive_bytes(&run.experiment);
    assert!(size <= (1 << 20) + THREADS * CHUNK, "{size}");
    let counts = reference_counts(&run.anchor());
    assert_eq!(counts["nesting_errors"], Value::Array(vec![]), "{counts}");
    let markers = counts["parameter_strings"].as_array().unwrap();
    assert_eq!(markers.len(), THREADS as usize, "{markers:?}");
    for marker in markers {
        assert!(marker[2].as_str().unwrap().starts_with("(every region"));
    }
    // Every location's events end at its stop but for what the end writes.
    for (location, kinds) in counts["events"].as_object().unwrap() {
        assert!(kinds.get("ThreadTeamEnd").is_none(), "{location}: {kinds}");
    }
    otf2_print(&["--silent"], &run.anchor(), &[]);
}

/// A malformed size names the variable and the sizes it takes; the run goes on with 2G.
#[test]
fn a_malformed_budget_is_named_with_the_accepted_forms_and_the_default_applies() {
    let _cores = sharing_the_cores();
    let scratch = Scratch::new("budget-malformed");
    let exe = spin_program(&scratch.path);
    let run = run_traced_with_args(
        &exe,
        &["flush", "1000"],
        THREADS as u32,
        "malformed",
        &[("POMPTRACE_MAX_TRACE_SIZE", "12XB")],
    );
    let stderr = run.stderr();
    let said = lines_with(&stderr, "POMPTRACE_MAX_TRACE_SIZE");
    assert_eq!(said.len(), 1, "{stderr}");
    for form in ["12XB", "512K", "50M", "2G", "0 for no limit", "default 2G"] {
        assert!(said[0].contains(form), "{form}: {stderr}");
    }
    let cfg = std::fs::read_to_string(run.experiment.join("pomptrace.cfg")).unwrap();
    assert!(
        cfg.contains("\nPOMPTRACE_MAX_TRACE_SIZE=2147483648\n"),
        "{cfg}"
    );
    let counts = reference_counts(&run.anchor());
    let flush = spin_flush();
    assert_eq!(visits(&counts)[&flush], (1000 * THREADS, 1000 * THREADS));
}

/// A filter file that cannot be read is named once; the run records everything.
#[test]
fn an_unreadable_filter_file_is_named_and_nothing_is_filtered() {
    let _cores = sharing_the_cores();
    let scratch = Scratch::new("budget-unreadable-filter");
    let exe = spin_program(&scratch.path);
    let directory = scratch.join("a-directory");
    std::fs::create_dir_all(&directory).unwrap();
    let run = run_traced_with_args(
        &exe,
        &["flush", "1000"],
        THREADS as u32,
        "unreadable",
        &[("POMPTRACE_FILTERING_FILE", directory.to_str().unwrap())],
    );
    let stderr = run.stderr();
    let said = lines_with(&stderr, "filter file");
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].contains("cannot read the filter file"), "{stderr}");
    assert!(said[0].contains(directory.to_str().unwrap()));
    let counts = reference_counts(&run.anchor());
    let flush = spin_flush();
    assert!(counts["regions"].get(&flush).is_some());
}

/// A trace that grows by more than 100 MB/s for over a second says once which region causes it
/// and how to filter it. The spin is paced to about 190 MB/s at two threads for 1.2 s (4 million
/// flushes a second each, 24 bytes apiece), so that a machine at half the speed still writes
/// more than 100 MB/s.
#[test]
fn a_trace_growing_faster_than_100_mb_per_second_names_the_region_and_its_filter() {
    let _cores = CORES.write().unwrap_or_else(|e| e.into_inner());
    let scratch = Scratch::new("budget-rate");
    let exe = spin_program(&scratch.path);
    let run = run_traced_with_args(
        &exe,
        &["paced", "4000000", "1.2"],
        THREADS as u32,
        "rate",
        &[("POMPTRACE_MAX_TRACE_SIZE", "0")],
    );
    let stderr = run.stderr();
    let said = lines_with(&stderr, "the trace grows by");
    assert_eq!(said.len(), 1, "{stderr}");
    let paced = paced_flush();
    assert!(said[0].contains(&format!("\"{paced}\"")), "{stderr}");
    assert!(
        said[0].contains(&format!("EXCLUDE {}", paced.replace(' ', "\\ "))),
        "{stderr}"
    );
    let rate: f64 = said[0]
        .split("grows by ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|r| r.parse().ok())
        .unwrap();
    assert!(rate > 100.0, "{rate}");
    assert!(Path::new(&run.anchor()).exists());
}
