//! The CUBE4 writer against the reference reader: a synthetic profile (a nested call tree with a
//! recursive path, 2 processes × 2 threads, Score-P's four default metrics) written by
//! `otf2::cube` (crates/otf2) and read back by pycubexr (tests/support/cube_dump.py, run with
//! /usr/bin/python3, installed by scripts/setup.sh): call tree, regions, system tree, and per
//! call path and location the stored values and pycubexr's inclusive and exclusive views.

mod support;

use std::process::Command;

use otf2::cube::*;
use serde_json::Value;
use support::*;

const LOCATIONS: usize = 4;

fn region(name: &str, paradigm: &str, role: &str, lines: (u32, u32)) -> Region {
    Region {
        name: name.into(),
        canonical_name: name.into(),
        source_file: "jacobi.c".into(),
        begin_line: Some(lines.0),
        end_line: Some(lines.1),
        paradigm: paradigm.into(),
        role: role.into(),
        description: String::new(),
    }
}

fn process(node: &str, rank: u32) -> SystemNode {
    let thread = |name: &str, rank| Location {
        name: name.into(),
        rank,
        kind: LocationKind::Thread,
    };
    SystemNode {
        name: format!("node {node}"),
        class: "node".into(),
        groups: vec![LocationGroup {
            name: format!("MPI Rank {rank}"),
            rank,
            kind: LocationGroupKind::Process,
            locations: vec![thread("Master thread", 0), thread("OMP thread 1", 1)],
        }],
        ..SystemNode::default()
    }
}

/// ```text
/// 0 main
/// ├─ 1 !$omp parallel (call site line 10)
/// │  ├─ 2 fib
/// │  │  ├─ 3 fib
/// │  │  │  └─ 4 fib
/// │  │  └─ 5 !$omp barrier
/// │  └─ 6 !$omp barrier
/// └─ 7 fib
/// ```
/// Visits and exclusive times are made up per call path and location; inclusive time is the
/// exclusive time plus the children's inclusive times, so the profile is consistent. Times are
/// multiples of 1/256 s, exact in any summation order.
fn synthetic_profile() -> Profile {
    let regions = vec![
        region("main", "user", "function", (1, 40)),
        region(
            "!$omp parallel @jacobi.c:10",
            "openmp",
            "parallel",
            (10, 20),
        ),
        region("fib", "user", "function", (42, 50)),
        region("!$omp barrier @jacobi.c:15", "openmp", "barrier", (15, 15)),
    ];
    let tree: [(usize, Option<usize>); 8] = [
        (0, None),
        (1, Some(0)),
        (2, Some(1)),
        (2, Some(2)),
        (2, Some(3)),
        (3, Some(2)),
        (3, Some(1)),
        (2, Some(0)),
    ];
    let cnodes: Vec<Cnode> = tree
        .iter()
        .enumerate()
        .map(|(i, &(region, parent))| Cnode {
            region,
            parent,
            line: (i == 1).then_some(10),
        })
        .collect();
    let n = cnodes.len();
    let visits: Vec<u64> = (0..n * LOCATIONS)
        .map(|i| ((i * 7 + 3) % 11) as u64 + 1)
        .collect();
    let exclusive: Vec<f64> = (0..n * LOCATIONS)
        .map(|i| ((i * 13 + 5) % 37 + 1) as f64 / 256.0)
        .collect();
    let mut inclusive = exclusive.clone();
    for c in (0..n).rev() {
        if let Some(p) = cnodes[c].parent {
            for l in 0..LOCATIONS {
                inclusive[p * LOCATIONS + l] += inclusive[c * LOCATIONS + l];
            }
        }
    }
    // Per visit, the shortest and longest inclusive duration.
    let min_time: Vec<f64> = (0..n * LOCATIONS)
        .map(|i| inclusive[i] / visits[i] as f64 / 2.0)
        .collect();
    let max_time: Vec<f64> = (0..n * LOCATIONS)
        .map(|i| inclusive[i] - min_time[i] * (visits[i] - 1) as f64)
        .collect();
    Profile {
        attributes: vec![
            ("Creator".into(), "pomptrace test".into()),
            ("CUBE_CT_AGGR".into(), "SUM".into()),
        ],
        metrics: Metric::scorep_defaults().to_vec(),
        regions,
        cnodes,
        system: vec![SystemNode {
            name: "machine Linux".into(),
            class: "machine".into(),
            children: vec![process("n0", 0), process("n1", 1)],
            ..SystemNode::default()
        }],
        values: vec![
            Values::U64(visits),
            Values::F64(inclusive),
            Values::F64(min_time),
            Values::F64(max_time),
        ],
    }
}

fn pycubexr_dump(path: &std::path::Path) -> Value {
    let script = repo_root().join("tests/support/cube_dump.py");
    let out = run(Command::new("/usr/bin/python3").arg(script).arg(path));
    serde_json::from_slice(&out.stdout).expect("cube_dump.py prints JSON")
}

/// A number of pycubexr's dump: an integer, or a double given by its bits.
fn number(v: &Value) -> f64 {
    match v.get("f64_bits") {
        Some(bits) => f64::from_bits(bits.as_u64().expect("bits")),
        None => v.as_u64().expect("integer") as f64,
    }
}

fn row(dump: &Value, metric: &str, view: &str, cnode: usize) -> Vec<f64> {
    dump["values"][metric][view][cnode.to_string()]
        .as_array()
        .unwrap_or_else(|| panic!("no {view} values of {metric} for cnode {cnode}"))
        .iter()
        .map(number)
        .collect()
}

fn matrix_row(values: &Values, cnode: usize) -> Vec<f64> {
    (0..LOCATIONS)
        .map(|l| values.get_f64(cnode * LOCATIONS + l).unwrap())
        .collect()
}

#[test]
fn pycubexr_reads_the_call_tree_system_tree_and_every_value() {
    let scratch = Scratch::new("cube-format");
    let path = scratch.join("profile.cubex");
    let profile = synthetic_profile();
    profile.write(&path).unwrap();
    let dump = pycubexr_dump(&path);

    // Metrics: Score-P's definitions, ids in its order.
    let metrics = dump["metrics"].as_array().unwrap();
    let summary: Vec<(u64, &str, &str, &str, &str)> = metrics
        .iter()
        .map(|m| {
            (
                m["id"].as_u64().unwrap(),
                m["name"].as_str().unwrap(),
                m["type"].as_str().unwrap(),
                m["dtype"].as_str().unwrap(),
                m["units"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (0, "visits", "EXCLUSIVE", "UINT64", "occ"),
            (1, "time", "INCLUSIVE", "DOUBLE", "sec"),
            (2, "min_time", "EXCLUSIVE", "MINDOUBLE", "sec"),
            (3, "max_time", "EXCLUSIVE", "MAXDOUBLE", "sec"),
        ]
    );
    assert_eq!(metrics[1]["display_name"], "Time");
    assert_eq!(metrics[1]["description"], "Total CPU allocation time");

    // Regions and the call tree, in pycubexr's depth-first walk.
    let regions: Vec<(&str, &str, &str, i64, i64)> = dump["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["paradigm"].as_str().unwrap(),
                r["role"].as_str().unwrap(),
                r["begin"].as_i64().unwrap(),
                r["end"].as_i64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(&str, &str, &str, i64, i64)> = profile
        .regions
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.paradigm.as_str(),
                r.role.as_str(),
                i64::from(r.begin_line.unwrap()),
                i64::from(r.end_line.unwrap()),
            )
        })
        .collect();
    assert_eq!(regions, expected);
    assert_eq!(dump["regions"][0]["mod"], "jacobi.c");
    let tree: Vec<(u64, &str, Option<u64>, Vec<u64>)> = dump["cnodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_u64().unwrap(),
                c["region"].as_str().unwrap(),
                c["parent"].as_u64(),
                c["children"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect(),
            )
        })
        .collect();
    let (main, parallel, fib, barrier) = (
        "main",
        "!$omp parallel @jacobi.c:10",
        "fib",
        "!$omp barrier @jacobi.c:15",
    );
    assert_eq!(
        tree,
        [
            (0, main, None, vec![1, 7]),
            (1, parallel, Some(0), vec![2, 6]),
            (2, fib, Some(1), vec![3, 5]),
            (3, fib, Some(2), vec![4]),
            (4, fib, Some(3), vec![]),
            (5, barrier, Some(2), vec![]),
            (6, barrier, Some(1), vec![]),
            (7, fib, Some(0), vec![]),
        ]
    );

    // System tree: machine → 2 nodes → a process each → 2 threads each; location ids are the
    // value columns, in order.
    let locations: Vec<(u64, &str, u64, &str)> = dump["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["id"].as_u64().unwrap(),
                l["name"].as_str().unwrap(),
                l["rank"].as_u64().unwrap(),
                l["type"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        locations,
        [
            (0, "Master thread", 0, "thread"),
            (1, "OMP thread 1", 1, "thread"),
            (2, "Master thread", 0, "thread"),
            (3, "OMP thread 1", 1, "thread"),
        ]
    );
    let groups = dump["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    for (rank, group) in groups.iter().enumerate() {
        assert_eq!(group["name"], format!("MPI Rank {rank}"));
        assert_eq!(group["rank"], rank);
        assert_eq!(group["type"], "process");
        assert_eq!(
            group["path"],
            serde_json::json!(["machine Linux", format!("node n{rank}")])
        );
        assert_eq!(
            group["locations"],
            serde_json::json!([2 * rank, 2 * rank + 1])
        );
    }

    // Values. visits is exclusive: stored per call path, pycubexr's inclusive view sums the
    // subtree. time is inclusive, as Score-P stores it: pycubexr's exclusive view subtracts the
    // children. min_time and max_time are stored as written.
    let children = profile.children();
    let Values::U64(visits) = &profile.values[0] else {
        unreachable!()
    };
    let Values::F64(time) = &profile.values[1] else {
        unreachable!()
    };
    let subtree_visits = |c: usize, l: usize| -> f64 {
        let mut stack = vec![c];
        let mut sum = 0u64;
        while let Some(n) = stack.pop() {
            sum += visits[n * LOCATIONS + l];
            stack.extend(&children[n]);
        }
        sum as f64
    };
    for c in 0..profile.cnodes.len() {
        let stored_visits = matrix_row(&profile.values[0], c);
        assert_eq!(row(&dump, "visits", "raw", c), stored_visits, "visits c{c}");
        assert_eq!(
            row(&dump, "visits", "exclusive", c),
            stored_visits,
            "visits c{c}"
        );
        let inclusive_visits: Vec<f64> = (0..LOCATIONS).map(|l| subtree_visits(c, l)).collect();
        assert_eq!(
            row(&dump, "visits", "inclusive", c),
            inclusive_visits,
            "visits c{c}"
        );

        let stored_time = matrix_row(&profile.values[1], c);
        assert_eq!(row(&dump, "time", "raw", c), stored_time, "time c{c}");
        assert_eq!(row(&dump, "time", "inclusive", c), stored_time, "time c{c}");
        let exclusive_time: Vec<f64> = (0..LOCATIONS)
            .map(|l| {
                let children_time: f64 = children[c].iter().map(|&k| time[k * LOCATIONS + l]).sum();
                time[c * LOCATIONS + l] - children_time
            })
            .collect();
        assert_eq!(
            row(&dump, "time", "exclusive", c),
            exclusive_time,
            "time c{c}"
        );
        assert!(exclusive_time.iter().all(|&t| t > 0.0));

        assert_eq!(
            row(&dump, "min_time", "raw", c),
            matrix_row(&profile.values[2], c),
            "min_time c{c}"
        );
        assert_eq!(
            row(&dump, "max_time", "raw", c),
            matrix_row(&profile.values[3], c),
            "max_time c{c}"
        );
    }
    // The recursive path: fib's inclusive time on the outer call path contains the inner ones.
    for l in 0..LOCATIONS {
        let t = |c: usize| time[c * LOCATIONS + l];
        assert!(t(2) > t(3) && t(3) > t(4));
    }

    // And our own reader gives back exactly what was written.
    assert_eq!(read(&path).unwrap(), profile);
}
