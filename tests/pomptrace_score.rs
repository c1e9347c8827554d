//! `pomptrace score`: per region and per kind the visits and bytes of a real trace agree with
//! the reference reader and the files; its estimate of the trace's size is within 10 % of the
//! real one, and so is its estimate of the trace that a filter gives (checked by running the
//! program again with the filter `--suggest` wrote); from a CUBE profile of the same visits,
//! its estimate of the trace is within 10 % of the trace the run wrote. Bad input gets one
//! clear line.

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
        (
            vec![scratch.path.to_str().unwrap()],
            1,
            "holds neither a trace",
        ),
    ] {
        let out = score(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{args:?}: {stderr}");
        assert!(stderr.starts_with("pomptrace: "), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// The profile of a run as pomptrace writes it (CUBE4: visits and time per call path and
/// location), for the trace at `anchor`: its regions, one call path each, with the visits the
/// trace holds.
fn profile_of_trace(anchor: &std::path::Path, output: &std::path::Path) -> BTreeMap<String, u64> {
    use otf2::cube;
    let reader = otf2::ArchiveReader::open(anchor).unwrap();
    let defs = reader.global_defs().unwrap();
    let mut strings = BTreeMap::new();
    let mut regions = Vec::new();
    let mut locations = Vec::new();
    for def in &defs {
        match def {
            otf2::GlobalDef::String { id, string } => {
                strings.insert(*id, string.clone());
            }
            otf2::GlobalDef::Region {
                id,
                name,
                source_file,
                begin_line,
                end_line,
                region_role,
                paradigm,
                ..
            } => regions.push((
                *id,
                *name,
                *source_file,
                *begin_line,
                *end_line,
                *region_role,
                *paradigm,
            )),
            otf2::GlobalDef::Location { id, name, .. } => locations.push((*id, *name)),
            _ => {}
        }
    }
    let word = |name: Option<&str>| name.unwrap().to_ascii_lowercase().replace('_', " ");
    // Visits per (region, location) as the trace holds them.
    let mut visits = vec![0u64; regions.len() * locations.len()];
    for (l, (location, _)) in locations.iter().enumerate() {
        for record in reader.events(*location).unwrap() {
            if let otf2::Event::Enter { region } = record.unwrap().event {
                let r = regions.iter().position(|d| d.0 == region).unwrap();
                visits[r * locations.len() + l] += 1;
            }
        }
    }
    let profile = cube::Profile {
        attributes: vec![("CUBE_CT_AGGR".into(), "SUM".into())],
        metrics: cube::Metric::scorep_defaults().to_vec(),
        regions: regions
            .iter()
            .map(
                |&(_, name, file, begin, end, role, paradigm)| cube::Region {
                    name: strings[&name].clone(),
                    canonical_name: strings[&name].clone(),
                    source_file: strings[&file].clone(),
                    begin_line: Some(begin),
                    end_line: Some(end),
                    paradigm: word(paradigm.name()),
                    role: word(role.name()),
                    description: String::new(),
                },
            )
            .collect(),
        cnodes: (0..regions.len())
            .map(|region| cube::Cnode {
                region,
                parent: None,
                line: None,
            })
            .collect(),
        system: vec![cube::SystemNode {
            name: "machine Linux".into(),
            class: "machine".into(),
            groups: vec![cube::LocationGroup {
                name: "Process".into(),
                rank: 0,
                kind: cube::LocationGroupKind::Process,
                locations: locations
                    .iter()
                    .enumerate()
                    .map(|(rank, (_, name))| cube::Location {
                        name: strings[name].clone(),
                        rank: rank as u32,
                        kind: cube::LocationKind::Thread,
                    })
                    .collect(),
            }],
            ..cube::SystemNode::default()
        }],
        values: vec![
            cube::Values::U64(visits.clone()),
            cube::Values::F64(visits.iter().map(|&v| v as f64 * 1e-7).collect()),
            cube::Values::F64(vec![1e-7; visits.len()]),
            cube::Values::F64(vec![1e-7; visits.len()]),
        ],
    };
    profile.write(output).unwrap();
    regions
        .iter()
        .enumerate()
        .map(|(r, d)| {
            let total = (0..locations.len())
                .map(|l| visits[r * locations.len() + l])
                .sum();
            (strings[&d.1].clone(), total)
        })
        .collect()
}

/// A profile: visits as it holds them, and the trace's size estimated from visits × record
/// sizes within 10 % of the trace the same run wrote; a filter suggested from it.
#[test]
fn score_estimates_the_trace_of_a_profile() {
    let scratch = Scratch::new("score-profile");
    let exe = spin_program(&scratch.path);
    let spins = SPINS.to_string();
    let run = run_traced_with_args(
        &exe,
        &["flush", &spins],
        THREADS as u32,
        "traced",
        &[("POMPTRACE_MAX_TRACE_SIZE", "0")],
    );
    let size = archive_bytes(&run.experiment);
    let profiled = scratch.join("profiled");
    std::fs::create_dir_all(&profiled).unwrap();
    let visits = profile_of_trace(&run.anchor(), &profiled.join("profile.cubex"));

    let json = score_json(&profiled, &[]);
    assert!(json["profile"].as_str().unwrap().ends_with("profile.cubex"));
    assert_eq!(json["trace_bytes"], Value::Null);
    let scored: BTreeMap<String, u64> = json["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["region"].as_str().unwrap().to_string(),
                r["visits"].as_u64().unwrap(),
            )
        })
        .collect();
    let visited: BTreeMap<String, u64> = visits.into_iter().filter(|(_, v)| *v > 0).collect();
    assert_eq!(scored, visited);
    let estimate = json["estimated_bytes"].as_u64().unwrap();
    assert!(within(estimate, size, 10.0), "{estimate} for {size}");
    let kinds: Vec<&str> = json["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["ALL", "OpenMP", "user", "(other events)"]);

    let filter = scratch.join("from-profile.filter");
    support::run(Command::new(pomptrace_command()).args([
        "score",
        profiled.to_str().unwrap(),
        "--suggest",
        "--budget",
        "1M",
        "-o",
        filter.to_str().unwrap(),
    ]));
    let text = std::fs::read_to_string(&filter).unwrap();
    let flush = spin_flush();
    assert!(
        text.contains(&format!("  EXCLUDE {}\n", flush.replace(' ', "\\ "))),
        "{text}"
    );
    let with_filter = score_json(&profiled, &["--filter", filter.to_str().unwrap()]);
    assert!(with_filter["estimated_bytes_with_filter"].as_u64().unwrap() < 1 << 20);
}
