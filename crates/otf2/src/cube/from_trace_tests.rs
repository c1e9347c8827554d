//! The replay rules on hand-made event streams, and the profile read back from disk.

use super::*;
use crate::types::{CommFlag, GroupFlag, RegionFlag, Type, TypedValue};

const PAR: u32 = 0;
const BAR: u32 = 1;
const TASK: u32 = 2;
const TASKWAIT: u32 = 3;
const USER: u32 = 4;
const ATOMIC: u32 = 5;

/// Strings, clock (1000 ticks per second), machine/node/process, `threads` thread locations
/// (ids 0..), the regions above, and one team per entry of `teams` (members by location id,
/// thread 0 first); metric class 0 with `metrics` members when there are any.
fn defs(threads: u64, teams: &[&[u64]], metrics: &[&str]) -> Vec<GlobalDef> {
    let mut strings = vec![
        "", "prog", "machine", "Linux", "node", "host", "Process", "parallel", "barrier", "task",
        "taskwait", "user", "atomic", "t.c",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    for t in 0..threads {
        strings.push(format!("thread {t}"));
    }
    let first_thread_string = 14;
    for m in metrics {
        strings.push(m.to_string());
    }
    let mut out: Vec<GlobalDef> = vec![GlobalDef::ClockProperties {
        timer_resolution: 1000,
        global_offset: 0,
        trace_length: 1000,
        realtime_timestamp: 0,
    }];
    for (id, s) in strings.iter().enumerate() {
        out.push(GlobalDef::String {
            id: id as u32,
            string: s.clone(),
        });
    }
    out.push(GlobalDef::SystemTreeNode {
        id: 0,
        name: 3,
        class_name: 2,
        parent: UNDEFINED_U32,
    });
    out.push(GlobalDef::SystemTreeNode {
        id: 1,
        name: 5,
        class_name: 4,
        parent: 0,
    });
    out.push(GlobalDef::LocationGroup {
        id: 0,
        name: 6,
        location_group_type: LocationGroupType::PROCESS,
        system_tree_parent: 1,
        creating_location_group: UNDEFINED_U32,
    });
    for t in 0..threads {
        out.push(GlobalDef::Location {
            id: t,
            name: first_thread_string + t as u32,
            location_type: LocationType::CPU_THREAD,
            number_of_events: 1,
            location_group: 0,
        });
    }
    for (id, (name, role, paradigm)) in [
        (7, RegionRole::PARALLEL, Paradigm::OPENMP),
        (8, RegionRole::IMPLICIT_BARRIER, Paradigm::OPENMP),
        (9, RegionRole::TASK_UNTIED, Paradigm::OPENMP),
        (10, RegionRole::TASK_WAIT, Paradigm::OPENMP),
        (11, RegionRole::FUNCTION, Paradigm::USER),
        (12, RegionRole::ATOMIC, Paradigm::OPENMP),
    ]
    .into_iter()
    .enumerate()
    {
        out.push(GlobalDef::Region {
            id: id as u32,
            name,
            canonical_name: name,
            description: 0,
            region_role: role,
            paradigm,
            region_flags: RegionFlag::NONE,
            source_file: 13,
            begin_line: 10 + id as u32,
            end_line: 20 + id as u32,
        });
    }
    out.push(GlobalDef::Group {
        id: 0,
        name: 0,
        group_type: GroupType::COMM_LOCATIONS,
        paradigm: Paradigm::OPENMP,
        group_flags: GroupFlag::NONE,
        members: (0..threads).collect(),
    });
    for (comm, members) in teams.iter().enumerate() {
        out.push(GlobalDef::Group {
            id: comm as u32 + 1,
            name: 0,
            group_type: GroupType::COMM_GROUP,
            paradigm: Paradigm::OPENMP,
            group_flags: GroupFlag::NONE,
            members: members.to_vec(),
        });
        out.push(GlobalDef::Comm {
            id: comm as u32,
            name: UNDEFINED_U32,
            group: comm as u32 + 1,
            parent: UNDEFINED_U32,
            flags: CommFlag::NONE,
        });
    }
    if !metrics.is_empty() {
        let first = (first_thread_string as u64 + threads) as u32;
        for i in 0..metrics.len() as u32 {
            out.push(GlobalDef::MetricMember {
                id: i,
                name: first + i,
                description: 0,
                metric_type: crate::types::MetricType::OTHER,
                metric_mode: crate::types::MetricMode::ACCUMULATED_START,
                value_type: Type::UINT64,
                base: crate::types::Base::DECIMAL,
                exponent: 0,
                unit: 0,
            });
        }
        out.push(GlobalDef::MetricClass {
            id: 0,
            members: (0..metrics.len() as u32).collect(),
            occurrence: MetricOccurrence::SYNCHRONOUS_STRICT,
            recorder_kind: crate::types::RecorderKind::CPU,
        });
    }
    out
}

fn enter(t: u64, region: u32) -> (u64, Event) {
    (t, Event::Enter { region })
}
fn leave(t: u64, region: u32) -> (u64, Event) {
    (t, Event::Leave { region })
}
fn team_begin(t: u64, team: u32) -> (u64, Event) {
    (t, Event::ThreadTeamBegin { team })
}
fn team_end(t: u64, team: u32) -> (u64, Event) {
    (t, Event::ThreadTeamEnd { team })
}
fn program_begin(t: u64) -> (u64, Event) {
    (
        t,
        Event::ProgramBegin {
            program_name: 1,
            arguments: vec![],
        },
    )
}
fn program_end(t: u64) -> (u64, Event) {
    (t, Event::ProgramEnd { exit_status: 0 })
}

/// Replays `streams` (location id, events) in the model's order.
fn build(defs: &[GlobalDef], streams: &[(u64, Vec<(u64, Event)>)]) -> FromTrace {
    let model = TraceModel::new(defs);
    let mut builder = Builder::new(&model);
    for index in model.replay_order() {
        let id = model.locations[index].id;
        let Some((_, events)) = streams.iter().find(|(l, _)| *l == id) else {
            continue;
        };
        let mut replay = builder.location(index);
        for (t, e) in events {
            replay.event(*t, e);
        }
        replay.finish();
    }
    builder.finish("test")
}

/// (path of region names, location index, visits, time in ticks) of every value.
fn entries(p: &Profile) -> Vec<(Vec<String>, usize, u64, u64)> {
    let locations = p.location_count();
    let mut out = Vec::new();
    for c in 0..p.cnodes.len() {
        let mut path = vec![p.regions[p.cnodes[c].region].name.clone()];
        let mut up = p.cnodes[c].parent;
        while let Some(u) = up {
            path.push(p.regions[p.cnodes[u].region].name.clone());
            up = p.cnodes[u].parent;
        }
        path.reverse();
        for l in 0..locations {
            let visits = p.value(0, c, l).unwrap() as u64;
            let time = (p.value(1, c, l).unwrap() * 1000.0).round() as u64;
            if visits > 0 || time > 0 {
                out.push((path.clone(), l, visits, time));
            }
        }
    }
    out.sort();
    out
}

fn path(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn workers_hang_under_the_fork_and_their_callers_get_their_time() {
    // Location 1 is listed first but replayed after its team's thread 0.
    let defs = defs(2, &[&[0, 1]], &[]);
    let master = vec![
        program_begin(0),
        enter(1, USER),
        team_begin(10, 0),
        enter(10, PAR),
        leave(20, PAR),
        team_end(20, 0),
        team_begin(30, 0),
        enter(30, PAR),
        leave(34, PAR),
        team_end(34, 0),
        leave(35, USER),
        program_end(40),
    ];
    let worker = vec![
        team_begin(11, 0),
        enter(11, PAR),
        leave(18, PAR),
        team_end(18, 0),
        team_begin(31, 0),
        enter(31, PAR),
        leave(35, PAR),
        team_end(35, 0),
    ];
    let built = build(&defs, &[(1, worker), (0, master)]);
    assert_eq!(built.damage, ReplayDamage::default());
    assert_eq!(
        entries(&built.profile),
        [
            (path(&["prog"]), 0, 1, 40),
            (path(&["prog"]), 1, 0, 7 + 4),
            (path(&["prog", "user"]), 0, 1, 34),
            // The worker never entered the user region: no visit, the time below it.
            (path(&["prog", "user"]), 1, 0, 7 + 4),
            (path(&["prog", "user", "parallel"]), 0, 2, 14),
            (path(&["prog", "user", "parallel"]), 1, 2, 11),
        ]
    );
    let p = &built.profile;
    assert_eq!(p.locations()[1].name, "thread 1");
    assert_eq!(p.system[0].name, "machine Linux");
    assert_eq!(p.system[0].children[0].name, "node host");
    let user = p.regions.iter().find(|r| r.name == "user").unwrap();
    assert_eq!(
        (user.paradigm.as_str(), user.role.as_str()),
        ("user", "function")
    );
    assert_eq!(user.source_file, "t.c");
    let root = &p.regions[p.cnodes[0].region];
    assert_eq!(
        (root.paradigm.as_str(), root.role.as_str()),
        ("measurement", "artificial")
    );
}

#[test]
fn a_task_counts_once_and_only_while_it_runs() {
    let defs = defs(1, &[&[0]], &[]);
    let events = vec![
        team_begin(0, 0),
        enter(0, PAR),
        enter(10, BAR),
        // T1 begins in the barrier; at its taskwait it runs child T2 (suspended meanwhile).
        enter(20, TASK),
        enter(25, TASKWAIT),
        enter(30, TASK),
        enter(31, ATOMIC),
        leave(33, ATOMIC),
        leave(40, TASK), // T2 ends: T1 resumes
        leave(45, TASKWAIT),
        leave(50, TASK), // T1 ends
        leave(90, BAR),
        leave(100, PAR),
        team_end(100, 0),
    ];
    let built = build(&defs, &[(0, events)]);
    assert_eq!(
        entries(&built.profile),
        [
            // No ProgramBegin: the root is the sum of what is below it.
            (path(&["program"]), 0, 0, 100),
            (path(&["program", "parallel"]), 0, 1, 100),
            (path(&["program", "parallel", "barrier"]), 0, 1, 80),
            // Both tasks under the barrier: T1 ran 20..30 and 40..50, T2 30..40.
            (path(&["program", "parallel", "barrier", "task"]), 0, 2, 30),
            (
                path(&["program", "parallel", "barrier", "task", "atomic"]),
                0,
                1,
                2
            ),
            // T1's taskwait 25..45 less T2's 10.
            (
                path(&["program", "parallel", "barrier", "task", "taskwait"]),
                0,
                1,
                10
            ),
        ]
    );
}

#[test]
fn a_killed_trace_leaves_open_regions_at_the_last_event_and_says_so() {
    let defs = defs(2, &[&[0, 1]], &[]);
    let master = vec![
        program_begin(0),
        team_begin(5, 0),
        enter(5, PAR),
        enter(6, USER),
    ];
    // The worker's file holds more than the master's (its chunk reached the disk).
    let worker = vec![
        team_begin(6, 0),
        enter(6, PAR),
        leave(8, PAR),
        team_end(8, 0),
        team_begin(9, 0),
        enter(9, PAR),
        leave(12, USER),
    ];
    let built = build(&defs, &[(0, master), (1, worker)]);
    assert_eq!(
        built.damage,
        ReplayDamage {
            unmatched_leaves: 0,
            misnested_leaves: 1,
            open_at_end: 2,
            unmatched_team_begins: 1,
        }
    );
    assert_eq!(built.damage.warnings().len(), 3);
    assert_eq!(
        entries(&built.profile),
        [
            // The root lasts until the last event of the trace.
            (path(&["prog"]), 0, 1, 12),
            (path(&["prog"]), 1, 0, 2 + 3),
            (path(&["prog", "parallel"]), 0, 1, 1),
            (path(&["prog", "parallel"]), 1, 2, 2 + 3),
            (path(&["prog", "parallel", "user"]), 0, 1, 0),
        ]
    );
}

#[test]
fn metrics_sum_per_call_path_and_stop_while_a_task_is_suspended() {
    let defs = defs(1, &[&[0]], &["cycles"]);
    let metric = |t: u64, v: u64| {
        (
            t,
            Event::Metric {
                metric: 0,
                values: vec![TypedValue::new(Type::UINT64, v)],
            },
        )
    };
    let events = vec![
        program_begin(0),
        team_begin(0, 0),
        metric(0, 100),
        enter(0, PAR),
        metric(10, 110),
        enter(10, TASK),
        metric(20, 150),
        enter(20, TASK), // the first task is suspended at 150
        metric(30, 170),
        leave(30, TASK), // the second ends at 170: the first resumes
        metric(40, 200),
        leave(40, TASK), // the first ran 110..150 and 170..200
        metric(50, 210),
        leave(50, PAR),
        team_end(50, 0),
        program_end(60),
    ];
    let p = build(&defs, &[(0, events)]).profile;
    assert_eq!(p.metrics.len(), 5);
    assert_eq!(p.metrics[4].unique_name, "cycles");
    assert_eq!(p.metrics[4].kind, MetricKind::Inclusive);
    let c = |names: &[&str]| {
        (0..p.cnodes.len())
            .find(|&c| {
                let mut path = vec![p.regions[p.cnodes[c].region].name.as_str()];
                let mut up = p.cnodes[c].parent;
                while let Some(u) = up {
                    path.push(&p.regions[p.cnodes[u].region].name);
                    up = p.cnodes[u].parent;
                }
                path.reverse();
                path == names
            })
            .unwrap()
    };
    let task = c(&["prog", "parallel", "task"]);
    assert_eq!(p.value(0, task, 0), Some(2.0));
    assert_eq!(p.value(4, task, 0), Some(((40 + 30) + 20) as f64));
    assert_eq!(p.value(4, c(&["prog", "parallel"]), 0), Some(110.0));
    // The root's value is what was measured below it.
    assert_eq!(p.value(4, c(&["prog"]), 0), Some(110.0));
    assert_eq!(
        p.value(2, task, 0),
        Some(0.01),
        "min_time: the shorter task ran 10 ticks"
    );
    assert_eq!(p.value(3, task, 0), Some(0.02));
}

#[test]
fn the_profile_of_a_trace_round_trips_through_a_file() {
    let defs = defs(2, &[&[0, 1]], &[]);
    let master = vec![
        program_begin(0),
        team_begin(1, 0),
        enter(1, PAR),
        leave(9, PAR),
        team_end(9, 0),
        program_end(10),
    ];
    let worker = vec![
        team_begin(2, 0),
        enter(2, PAR),
        leave(8, PAR),
        team_end(8, 0),
    ];
    let built = build(&defs, &[(0, master), (1, worker)]);
    let dir = crate::test_dir("cube-from-trace");
    let file = dir.join("profile.cubex");
    built.profile.write(&file).unwrap();
    assert_eq!(super::super::read(&file).unwrap(), built.profile);
}
