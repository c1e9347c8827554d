//! Nested parallel regions, with nesting enabled and disabled.

use super::*;

pub(crate) const NESTED_REPS: usize = 2;
pub(crate) const OUTER_THREADS: usize = 2;
pub(crate) const INNER_THREADS: usize = 3;

/// The nested program in one configuration: checks locations, Comms and every location's
/// events exactly.
pub(crate) fn check_nested(p: &Program, threads: u32, env: &[(&str, &str)], nested: bool) {
    let r = p.run(threads, env, false);
    let inner = if nested { INNER_THREADS } else { 1 };
    let sum: usize = (0..OUTER_THREADS)
        .flat_map(|o| (0..inner).map(move |i| 10 * o + i + 1))
        .sum();
    assert_eq!(r.printed("sum"), (NESTED_REPS * sum) as i64, "{}", r.label);

    // Locations: the outer team's threads, then, per outer thread k, the inner threads k:j.
    let mut names = vec!["Master thread".to_string(), "OMP thread 1".to_string()];
    let inner_names = |k: usize| -> Vec<String> {
        let head = if k == 0 {
            "Master thread".to_string()
        } else {
            format!("OMP thread {k}")
        };
        std::iter::once(head)
            .chain((1..inner).map(|j| format!("OMP thread {k}:{j}")))
            .collect()
    };
    for k in 0..OUTER_THREADS {
        names.extend(inner_names(k).into_iter().skip(1));
    }
    let mut have = r.location_names();
    have.sort();
    names.sort();
    assert_eq!(have, names, "{}: locations", r.label);

    // Comms: one for the outer team (top level), one per inner team (parent: the outer one),
    // reused by every repetition.
    let outer = r.used_comm(&["Master thread", "OMP thread 1"], None);
    let mut labels = HashMap::from([(outer, "outer".to_string())]);
    for k in 0..OUTER_THREADS {
        let members = inner_names(k);
        let members: Vec<&str> = members.iter().map(String::as_str).collect();
        let c = r.used_comm(&members, Some(outer));
        labels.insert(c, format!("inner{k}"));
    }
    assert_eq!(
        r.a.team_begins.len(),
        1 + OUTER_THREADS,
        "{}: {:?}",
        r.label,
        r.used_comms()
    );

    let par_outer = p.region("parallel", "num_threads(2)");
    let par_inner = p.region("parallel", "num_threads(3)");
    let create = p.region("create task", "omp task");
    let task = p.region("task", "omp task");
    let atomic = p.region("atomic", "omp atomic");
    let ibar_outer = r.implicit_barrier_of(&par_outer);
    let ibar_inner = r.implicit_barrier_of(&par_inner);
    let inner_team = |k: usize, fork: bool| -> Vec<String> {
        let mut v = Vec::new();
        if fork {
            v.push(format!("ThreadFork {INNER_THREADS}"));
        }
        v.extend([
            format!("ThreadTeamBegin inner{k}"),
            format!("Enter {par_inner}"),
            format!("Enter {create}"),
            format!("Leave {create}"),
            format!("Enter {ibar_inner}"),
            format!("Leave {ibar_inner}"),
            format!("Leave {par_inner}"),
            format!("ThreadTeamEnd inner{k}"),
        ]);
        if fork {
            v.push("ThreadJoin".into());
        }
        v
    };
    let outer_member = |k: usize| -> Vec<String> {
        let mut v = Vec::new();
        if k == 0 {
            v.push(format!("ThreadFork {OUTER_THREADS}"));
        }
        v.extend([
            "ThreadTeamBegin outer".to_string(),
            format!("Enter {par_outer}"),
        ]);
        v.extend(inner_team(k, true));
        v.extend([
            format!("Enter {ibar_outer}"),
            format!("Leave {ibar_outer}"),
            format!("Leave {par_outer}"),
            "ThreadTeamEnd outer".to_string(),
        ]);
        if k == 0 {
            v.push("ThreadJoin".into());
        }
        v
    };
    // Each location's events, without the tasks (which any thread of the inner team may run,
    // at its barrier): the checks of `analyse` cover those.
    let without_tasks = |location: &str| -> Vec<String> {
        let task_regions = [
            format!("Enter {task}"),
            format!("Leave {task}"),
            format!("Enter {atomic}"),
            format!("Leave {atomic}"),
        ];
        r.symbolic(location, &labels)
            .into_iter()
            .filter(|e| !e.starts_with("ThreadTask") && !task_regions.contains(e))
            .collect()
    };
    for k in 0..OUTER_THREADS {
        let members = inner_names(k);
        assert_eq!(
            without_tasks(&members[0]),
            vec![outer_member(k); NESTED_REPS].concat(),
            "{}: {}",
            r.label,
            members[0]
        );
        for m in &members[1..] {
            assert_eq!(
                without_tasks(m),
                vec![inner_team(k, false); NESTED_REPS].concat(),
                "{}: {m}",
                r.label
            );
        }
    }
    let locations = names.len();
    // Per repetition: outer threads enter their parallel region and barrier; inner threads
    // theirs, the creation of their task, a task and its atomic.
    let tasks = NESTED_REPS * OUTER_THREADS * inner;
    let enters = NESTED_REPS * OUTER_THREADS * 2 + 5 * tasks;
    r.assert_enters(&[
        (&par_outer, NESTED_REPS * OUTER_THREADS),
        (&ibar_outer, NESTED_REPS * OUTER_THREADS),
        (&par_inner, tasks),
        (&ibar_inner, tasks),
        (&create, tasks),
        (&task, tasks),
        (&atomic, tasks),
    ]);
    // Resumes: at most one per task creation and inner or outer barrier.
    r.assert_tasks(tasks, tasks + tasks + NESTED_REPS * OUTER_THREADS);
    r.assert_kinds(&[
        ("ProgramBegin", 1),
        ("ProgramEnd", 1),
        ("ThreadTaskCreate", tasks),
        ("ThreadTaskComplete", tasks),
        ("ThreadTaskSwitch", tasks + r.a.task_resumes),
        ("ThreadFork", NESTED_REPS * (1 + OUTER_THREADS)),
        ("ThreadJoin", NESTED_REPS * (1 + OUTER_THREADS)),
        (
            "ThreadTeamBegin",
            NESTED_REPS * (OUTER_THREADS + OUTER_THREADS * inner),
        ),
        (
            "ThreadTeamEnd",
            NESTED_REPS * (OUTER_THREADS + OUTER_THREADS * inner),
        ),
        ("Enter", enters),
        ("Leave", enters),
    ]);
    assert_eq!(locations, OUTER_THREADS * inner);
}

#[test]
fn nested_teams_of_2x3_with_max_active_levels_2() {
    let p = Program::build("nested_2x3", &[]);
    assert_eq!(p.define("REPS") as usize, NESTED_REPS);
    for t in THREADS {
        check_nested(&p, t, &[("OMP_MAX_ACTIVE_LEVELS", "2")], true);
    }
    // The same through omp_set_nested(1) in the program.
    check_nested(&p, 2, &[("NESTED_API", "1")], true);
}

#[test]
fn nested_teams_are_singletons_when_nesting_is_disabled() {
    let p = Program::build("nested_2x3", &[]);
    for t in THREADS {
        check_nested(&p, t, &[], false);
    }
    check_nested(&p, 4, &[("OMP_MAX_ACTIVE_LEVELS", "1")], false);
}
