//! pthreads that open OpenMP teams: each thread of control is a root of its own, its teams'
//! threads get locations of their own (`Pthread k`, `Pthread k OMP thread 1`), and no location
//! is ever written by two OS threads at once (debug builds check that on every team begin; a
//! violation would show as a `pomptrace: internal error` line).
//!
//! The program prints, per thread of control, which OS threads ran its teams; the trace's
//! ThreadId attributes (on every ThreadTeamBegin) must say the same.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use support::pomp2::*;
use support::{otf2_print, Scratch};

/// OS thread ids behind each location's ProgramBegin/ThreadTeamBegin, by location name, and
/// how many team begins each location has.
fn thread_ids(anchor: &std::path::Path, view: &View) -> BTreeMap<String, (BTreeSet<u64>, usize)> {
    let printed = otf2_print(&[], anchor, &[]);
    let lines: Vec<&str> = printed.lines().collect();
    let mut ids: BTreeMap<String, (BTreeSet<u64>, usize)> = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        let team_begin = line.starts_with("THREAD_TEAM_BEGIN");
        if !(team_begin || line.starts_with("PROGRAM_BEGIN")) {
            continue;
        }
        let location: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        let tid: u64 = lines[i + 1]
            .trim()
            .strip_prefix("ADDITIONAL ATTRIBUTES: (\"ThreadId\" <0>; UINT64; ")
            .and_then(|rest| rest.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{line} has no ThreadId"))
            .parse()
            .unwrap();
        let entry = ids.entry(view.locations[&location].0.clone()).or_default();
        entry.0.insert(tid);
        entry.1 += usize::from(team_begin);
    }
    ids
}

/// (master tid, worker tids) per thread of control, as the program printed them.
fn controls(stdout: &str) -> Vec<(u64, BTreeSet<u64>)> {
    stdout
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(
                (f[0], f[2], f[4]),
                ("control", "master", "workers"),
                "{line}"
            );
            let workers = f
                .get(5)
                .map(|w| w.split(',').map(|t| t.parse().unwrap()).collect())
                .unwrap_or_default();
            (f[3].parse().unwrap(), workers)
        })
        .collect()
}

fn check_run(pthreads: usize, regions: usize, run: &Run) {
    assert!(
        !run.stderr().contains("internal error"),
        "a location was shared or a call failed:\n{}",
        run.stderr()
    );
    let view = View::read(&run.anchor());
    view.assert_well_formed();
    let ids = thread_ids(&run.anchor(), &view);
    let controls = controls(&run.stdout());
    assert_eq!(controls.len(), pthreads + 1);

    let mut names: Vec<String> = vec!["Master thread".into(), "OMP thread 1".into()];
    for k in 1..=pthreads {
        names.push(format!("Pthread {k}"));
        names.push(format!("Pthread {k} OMP thread 1"));
    }
    let mut defined: Vec<String> = view.locations.values().map(|l| l.0.clone()).collect();
    defined.sort();
    names.sort();
    assert_eq!(
        defined, names,
        "one master and one worker location per thread of control"
    );

    // Each thread of control's master location runs on that thread only, and its worker
    // location only on the OS threads that the program saw working for it.
    for (master, workers) in &controls {
        let (root, (_, root_begins)) = ids
            .iter()
            .find(|(name, (tids, _))| !name.contains("OMP") && tids.contains(master))
            .unwrap_or_else(|| panic!("no location ran on master thread {master}: {ids:?}"));
        assert_eq!(
            ids[root].0.len(),
            1,
            "{root} ran on several OS threads: {ids:?}"
        );
        let expected_begins = if root == "Master thread" {
            regions + 1
        } else {
            regions
        };
        assert_eq!(*root_begins, expected_begins, "team begins of {root}");
        let worker_location = if root == "Master thread" {
            "OMP thread 1".to_string()
        } else {
            format!("{root} OMP thread 1")
        };
        let (worker_tids, worker_begins) = &ids[&worker_location];
        assert_eq!(
            *worker_begins, expected_begins,
            "team begins of {worker_location}"
        );
        assert!(
            worker_tids.is_subset(workers),
            "{worker_location} ran on {worker_tids:?}, but {root}'s teams ran on {workers:?}"
        );
    }
}

#[test]
fn pthreads_opening_teams_each_get_locations_of_their_own() {
    let scratch = Scratch::new("pthreads");
    let source = instrument("pthread_teams.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "pthread_teams");
    let regions = 2000;
    for pthreads in [2usize, 4, 8] {
        for round in 0..2 {
            let run = run_traced_with_args(
                &exe,
                &[&pthreads.to_string(), &regions.to_string()],
                2,
                &format!("p{pthreads}-{round}"),
                &[("OMP_WAIT_POLICY", "passive")],
            );
            check_run(pthreads, regions, &run);
        }
    }
}
