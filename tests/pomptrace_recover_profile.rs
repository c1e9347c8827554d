//! A profiled and traced run killed with SIGKILL in the middle: its journal says it was
//! profiling, and `pomptrace recover DIR` rebuilds DIR/profile.cubex from the recovered trace.
//! pycubexr (tests/support/cube_dump.py) reads the profile, and for every call path and every
//! thread its visits equal the Enter records the python `otf2` module reads from the recovered
//! trace on that call path, the call paths rebuilt here by the profile's rules (the program's
//! root first; a team member's regions under the path its team's thread 0 was in at the same
//! team begin; a task region's path under the implicit task's path). A run without profiling
//! gets no profile.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::pomp2::*;
use support::{repo_root, run, Scratch};

/// Runs the program until at least `bytes` of events are on disk, then kills it.
fn run_and_kill(exe: &Path, experiment: &Path, env: &[(&str, &str)], bytes: u64) {
    let mut cmd = program(exe);
    cmd.args(["1000000", "20"])
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_CHUNK_SIZE", "256K")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("POMPTRACE_ENABLE_PROFILING")
        .env_remove("POMPTRACE_KEEP_IN_MEMORY")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while event_bytes(experiment) < bytes {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before it was killed");
        }
        assert!(
            Instant::now() < deadline,
            "the events never reached the disk"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!experiment.join("traces.otf2").exists());
}

fn recover(experiment: &Path) -> String {
    let out = run(Command::new(pomptrace_command())
        .arg("recover")
        .arg(experiment));
    String::from_utf8(out.stdout).unwrap()
}

/// (location name, call path) → Enter records, rebuilt from the reference reader's events.
fn enters_per_call_path(view: &View) -> BTreeMap<(String, Vec<String>), u64> {
    let roles: BTreeMap<&str, &str> = view
        .regions
        .values()
        .map(|r| (r.name.as_str(), r.role.as_str()))
        .collect();
    let masters: BTreeMap<u32, u64> = view
        .comms
        .iter()
        .filter_map(|(&id, c)| Some((id, *c.members.first()?)))
        .collect();
    // Every team's thread 0 before the team's other members.
    let mut order: Vec<u64> = view.locations.keys().copied().collect();
    order.sort_by_key(|l| !masters.values().any(|m| m == l));
    let program = view
        .events
        .values()
        .flatten()
        .find(|e| e.kind == "ProgramBegin")
        .map(|e| e.detail[0].rsplit('/').next().unwrap().to_string())
        .expect("a ProgramBegin");
    let root = vec![program];
    let mut forks: BTreeMap<(u32, u64), Vec<String>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for location in order {
        let name = view.locations[&location].0.clone();
        // (first frame, current path) per task; the implicit task's first.
        let mut segments: Vec<(usize, Vec<String>)> = vec![(0, root.clone())];
        let mut bases = vec![0usize];
        // The path current before each open region.
        let mut frames: Vec<Vec<String>> = Vec::new();
        let mut instances: BTreeMap<u32, u64> = BTreeMap::new();
        for event in view.events.get(&location).map_or(&[][..], Vec::as_slice) {
            match event.kind.as_str() {
                "ProgramBegin" => *out.entry((name.clone(), root.clone())).or_default() += 1,
                "ThreadTeamBegin" => {
                    let team: u32 = event.detail[0].parse().unwrap();
                    let count = instances.entry(team).or_default();
                    let k = *count;
                    *count += 1;
                    if masters.get(&team) == Some(&location) {
                        forks.insert((team, k), segments.last().unwrap().1.clone());
                    } else if frames.is_empty() && segments.len() == 1 {
                        segments[0].1 = forks.get(&(team, k)).unwrap_or(&root).clone();
                    }
                    bases.push(segments.len() - 1);
                }
                "ThreadTeamEnd" if bases.len() > 1 => {
                    bases.pop();
                }
                "Enter" => {
                    let region = &event.detail[0];
                    if matches!(roles[region.as_str()], "TASK" | "TASK_UNTIED") {
                        let base = (*bases.last().unwrap()).min(segments.len() - 1);
                        let parent = segments[base].1.clone();
                        segments.push((frames.len(), parent));
                    }
                    let current = &mut segments.last_mut().unwrap().1;
                    frames.push(current.clone());
                    current.push(region.clone());
                    *out.entry((name.clone(), current.clone())).or_default() += 1;
                }
                "Leave" => {
                    let Some(restore) = frames.pop() else {
                        continue;
                    };
                    segments.last_mut().unwrap().1 = restore;
                    if segments.len() > 1 && frames.len() == segments.last().unwrap().0 {
                        segments.pop();
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// (location name, call path) → visits, as pycubexr reads the profile (non-zero only).
fn profile_visits(cubex: &Path) -> (Value, BTreeMap<(String, Vec<String>), u64>) {
    let out = run(Command::new("/usr/bin/python3")
        .arg(repo_root().join("tests/support/cube_dump.py"))
        .arg(cubex));
    let dump: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cnodes: BTreeMap<u64, (String, Option<u64>)> = dump["cnodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_u64().unwrap(),
                (
                    c["region"].as_str().unwrap().to_string(),
                    c["parent"].as_u64(),
                ),
            )
        })
        .collect();
    let path = |mut id: u64| {
        let mut p = Vec::new();
        loop {
            let (region, parent) = &cnodes[&id];
            p.push(region.clone());
            match parent {
                Some(up) => id = *up,
                None => break,
            }
        }
        p.reverse();
        p
    };
    let locations: Vec<String> = dump["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap().to_string())
        .collect();
    let mut out = BTreeMap::new();
    for (cnode, row) in dump["values"]["visits"]["raw"].as_object().unwrap() {
        for (l, v) in row.as_array().unwrap().iter().enumerate() {
            let v = v.as_u64().unwrap();
            if v > 0 {
                out.insert((locations[l].clone(), path(cnode.parse().unwrap())), v);
            }
        }
    }
    (dump, out)
}

#[test]
fn a_killed_profiled_run_gets_its_profile_back_from_its_trace() {
    let scratch = Scratch::new("recover-profile");
    let source = instrument("tasks_paced.c", &scratch.path, &["--omp-task-untied=keep"]);
    let exe = Build::c(&scratch.path).executable(&[source], "tasks_paced");
    let experiment = scratch.join("exp");
    run_and_kill(
        &exe,
        &experiment,
        &[("POMPTRACE_ENABLE_PROFILING", "1")],
        3 * 256 * 1024,
    );
    let cfg = std::fs::read_to_string(experiment.join("pomptrace.cfg")).unwrap();
    assert!(cfg.contains("\nPOMPTRACE_ENABLE_PROFILING=1\n"), "{cfg}");
    let report = recover(&experiment);
    let cubex = experiment.join("profile.cubex");
    assert!(
        report.contains(&format!(
            "pomptrace: profile rebuilt from the trace: {} (",
            cubex.display()
        )),
        "{report}"
    );

    let view = View::read(&experiment.join("traces.otf2"));
    let expected = enters_per_call_path(&view);
    let (dump, got) = profile_visits(&cubex);
    assert_eq!(got, expected);
    // Tasks ran under the implicit task's paths, and their regions below them.
    let task_paths: Vec<&Vec<String>> = got
        .keys()
        .map(|(_, p)| p)
        .filter(|p| {
            p.last()
                .is_some_and(|r| r.starts_with("!$pomp user(task_body)"))
        })
        .collect();
    assert!(!task_paths.is_empty(), "{got:?}");
    for p in task_paths {
        assert!(p[p.len() - 2].starts_with("!$omp task @"), "{p:?}");
        assert_eq!(p[0], "tasks_paced");
        assert!(p[1].starts_with("!$omp parallel @"), "{p:?}");
    }
    // Both threads of the team, each with its own column.
    let threads: Vec<&str> = dump["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(threads, ["Master thread", "OMP thread 1"]);
    assert!(got.keys().any(|(l, p)| l == "OMP thread 1" && p.len() > 2));

    // The summary of the directory reads the profile.
    let out = run(Command::new(pomptrace_command())
        .arg("summary")
        .arg(&experiment)
        .arg("--json"));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["profile"].as_str(), Some(cubex.to_str().unwrap()));
}

#[test]
fn a_killed_run_without_profiling_gets_no_profile() {
    let scratch = Scratch::new("recover-no-profile");
    let exe = instrumented_c_program(&scratch.path, "paced_events.c");
    let experiment = scratch.join("exp");
    run_and_kill(&exe, &experiment, &[], 256 * 1024);
    let report = recover(&experiment);
    assert!(!report.contains("call-path profile"), "{report}");
    assert!(!experiment.join("profile.cubex").exists());
}
