//! Task programs: fibonacci, producer/consumer, untied and if(0) tasks.

use super::*;

pub(crate) const FIB_N: u64 = 20;
pub(crate) const FIB_CUTOFF: u64 = 8;

pub(crate) fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// Calls of the task version of fib (n > CUTOFF): each creates two tasks and waits once.
pub(crate) fn fib_task_calls(n: u64) -> usize {
    if n <= FIB_CUTOFF {
        0
    } else {
        1 + fib_task_calls(n - 1) + fib_task_calls(n - 2)
    }
}

#[test]
fn fibonacci_tasks_are_created_run_and_completed_once() {
    let p = Program::build("task_fib", &[]);
    assert_eq!((p.define("N"), p.define("CUTOFF")), (FIB_N, FIB_CUTOFF));
    let calls = fib_task_calls(FIB_N);
    let tasks = 2 * calls;
    assert!(tasks > 500, "a real recursion: {tasks} tasks");
    let parallel = p.region("parallel", "omp parallel");
    let single = p.region("single", "omp single");
    let (create_a, create_b) = (
        p.region("create task", "shared(a)"),
        p.region("create task", "shared(b)"),
    );
    let (task_a, task_b) = (p.region("task", "shared(a)"), p.region("task", "shared(b)"));
    let taskwait = p.region("taskwait", "omp taskwait");
    for t in THREADS {
        let r = p.run(t, &[], false);
        r.assert_team_locations(t);
        let n = t as usize;
        assert_eq!(r.printed("fib"), fib(FIB_N) as i64);
        r.assert_enters(&[
            (&parallel, n),
            (&r.implicit_barrier_of(&parallel), n),
            (&single, n),
            (
                &format!("!$omp single sblock @task_fib.c:{}", p.line("omp single")),
                1,
            ),
            (&r.implicit_barrier_of(&single), n),
            (&create_a, calls),
            (&create_b, calls),
            (&task_a, calls),
            (&task_b, calls),
            (&taskwait, calls),
        ]);
        // Resumes: at most one per create end, taskwait, and implicit barrier.
        r.assert_tasks(tasks, tasks + calls + 2 * n);
        let enters = 4 * n + 1 + 5 * calls;
        r.assert_one_team_task_kinds(n, enters, tasks);
        assert_eq!(r.a.forks, [("Master thread".to_string(), t as u64)]);
    }
}

pub(crate) const PRODUCER_ROUNDS: u64 = 4;
pub(crate) const PRODUCER_BATCH: u64 = 300;

#[test]
fn producer_tasks_from_a_single_nowait_are_consumed_by_the_team() {
    let p = Program::build("task_producer", &[]);
    let task_line = "omp task firstprivate";
    assert_eq!(
        (p.define("ROUNDS"), p.define("BATCH")),
        (PRODUCER_ROUNDS, PRODUCER_BATCH)
    );
    let rounds = PRODUCER_ROUNDS as usize;
    let tasks = (PRODUCER_ROUNDS * PRODUCER_BATCH) as usize;
    let parallel = p.region("parallel", "omp parallel");
    let single = p.region("single", "omp single nowait");
    let barrier = p.region("barrier", "omp barrier");
    for t in THREADS {
        let r = p.run(t, &[], false);
        r.assert_team_locations(t);
        let n = t as usize;
        assert_eq!(r.printed("sum"), (tasks * (tasks + 1) / 2) as i64);
        // single nowait: no implicit barrier of the single is entered.
        r.assert_enters(&[
            (&parallel, n),
            (&r.implicit_barrier_of(&parallel), n),
            (&single, n),
            (&p.region("single sblock", "omp single nowait"), 1),
            (&p.region("create task", task_line), tasks),
            (&p.region("task", task_line), tasks),
            (&p.region("atomic", "omp atomic"), tasks),
            (&p.region("taskwait", "omp taskwait"), rounds),
            (&barrier, n),
        ]);
        // Resumes: at most one per create end, taskwait, barrier and implicit barrier.
        r.assert_tasks(tasks, tasks + rounds + 2 * n);
        if n == 1 {
            // One thread cannot queue a whole batch (libgomp runs a task at once beyond 64
            // queued per thread, libomp beyond 256): tasks run inside their creation, the
            // rest at the taskwait.
            let at = |role: &str| r.a.begun_in.get(role).copied().unwrap_or(0);
            assert!(
                at("TASK_CREATE") > 0 && at("TASK_WAIT") > 0,
                "{}: tasks begun in {:?}",
                r.label,
                r.a.begun_in
            );
        }
        // Per thread: parallel, its barrier, single, the explicit barrier; the single block;
        // per task: creation, task, atomic; the taskwaits.
        let enters = 4 * n + 1 + 3 * tasks + rounds;
        r.assert_one_team_task_kinds(n, enters, tasks);
    }
}

pub(crate) const UNTIED_OUTER: u64 = 8;
pub(crate) const UNTIED_INNER: u64 = 5;

#[test]
fn untied_tasks_kept_by_opari2_still_complete_once_and_nest() {
    let p = Program::build("task_untied", &["--omp-task-untied=keep"]);
    assert_eq!(
        (p.define("OUTER"), p.define("INNER")),
        (UNTIED_OUTER, UNTIED_INNER)
    );
    let (outer, inner) = (UNTIED_OUTER as usize, UNTIED_INNER as usize);
    let children = outer * inner;
    let tasks = outer + children;
    let parallel = p.region("parallel", "omp parallel");
    let single = p.region("single", "omp single");
    let outer_line = "untied firstprivate(i) private(j)";
    let inner_line = "untied firstprivate(i, j)";
    for t in THREADS {
        let r = p.run(t, &[], true);
        r.assert_team_locations(t);
        let n = t as usize;
        // sum over (i, j) of i * INNER + j + 1, plus 1000 per outer task.
        assert_eq!(
            r.printed("sum"),
            (children * (children + 1) / 2 + 1000 * outer) as i64
        );
        r.assert_enters(&[
            (&parallel, n),
            (&r.implicit_barrier_of(&parallel), n),
            (&single, n),
            (&p.region("single sblock", "omp single"), 1),
            (&r.implicit_barrier_of(&single), n),
            (&p.region("create task", outer_line), outer),
            (&p.region("task", outer_line), outer),
            (&p.region("create task", inner_line), children),
            (&p.region("task", inner_line), children),
            (&p.region_above("atomic", "sum += i * INNER"), children),
            (&p.region_above("atomic", "sum += 1000"), outer),
            (&p.region("taskwait", "omp taskwait"), outer),
        ]);
        r.assert_tasks(tasks, tasks + outer + 2 * n);
        let enters = 4 * n + 1 + 3 * tasks + outer;
        r.assert_one_team_task_kinds(n, enters, tasks);
    }
}

pub(crate) const IF0_N: u64 = 16;
pub(crate) const IF0_INCLUDED: u64 = 4;

#[test]
fn if0_tasks_record_nothing_and_included_tasks_run_inside_their_creation() {
    let p = Program::build("task_if0", &[]);
    assert_eq!((p.define("N"), p.define("INCLUDED")), (IF0_N, IF0_INCLUDED));
    let (count, included) = (IF0_N as usize, IF0_INCLUDED as usize);
    // if(i % 2): the odd i give tasks; the even ones run undeferred, with no POMP2 call.
    let deferred = (0..count).filter(|i| i % 2 != 0).count();
    let undeferred = count - deferred;
    // + the final task and its included children + the task created inside the if(0) task.
    let tasks = deferred + 1 + included + 1;
    let parallel = p.region("parallel", "omp parallel");
    let single = p.region("single", "omp single");
    let sblock = p.region("single sblock", "omp single");
    let conditional = "if(i % 2)";
    let final_task = "final(1)";
    let child = "task firstprivate(k)";
    let if0 = "task if(0)";
    let nested_in_if0 = "nested in if0";
    let odd_atomic = p.region_above("atomic", "sum += i + 1");
    for t in THREADS {
        let r = p.run(t, &[], false);
        r.assert_team_locations(t);
        let n = t as usize;
        assert_eq!(
            r.printed("sum"),
            (count * (count + 1) / 2 + 100 * included * (included + 1) / 2 + 10000) as i64
        );
        assert!(r
            .view
            .regions
            .values()
            .any(|g| g.name == p.region("task", if0)));
        r.assert_enters(&[
            (&parallel, n),
            (&r.implicit_barrier_of(&parallel), n),
            (&single, n),
            (&sblock, 1),
            (&r.implicit_barrier_of(&single), n),
            (&p.region("create task", conditional), deferred),
            (&p.region("task", conditional), deferred),
            (&odd_atomic, count),
            (&p.region("create task", final_task), 1),
            (&p.region("task", final_task), 1),
            (&p.region("create task", child), included),
            (&p.region("task", child), included),
            (&p.region_above("atomic", "100 * (k + 1)"), included),
            (&p.region("create task", nested_in_if0), 1),
            (&p.region("task", nested_in_if0), 1),
            (&p.region_above("atomic", "sum += 10000"), 1),
            (&p.region("taskwait", "for the nested task"), 1),
            (&p.region("taskwait", "for all"), 1),
        ]);
        // Tasks run at create end (included) resume the creator there: at most one resume
        // per create end, taskwait and implicit barrier.
        r.assert_tasks(tasks, tasks + 2 + 2 * n);
        let enters = 4 * n + 1 + 2 * tasks + count + included + 1 + 2;
        r.assert_one_team_task_kinds(n, enters, tasks);
        // The undeferred (if(0)) bodies are part of the encountering task: their atomics sit
        // directly in the single block; the included children run inside their creation:
        // Enter(create) Create Switch Enter(task) ... Leave(task) Complete Switch(back)
        // Leave(create), all on one location.
        let mut in_sblock = 0;
        let mut nested_runs = 0;
        let child_create = p.region("create task", child);
        let child_task = p.region("task", child);
        for events in r.view.events.values() {
            let mut open: Vec<&str> = Vec::new();
            for (i, e) in events.iter().enumerate() {
                match e.kind.as_str() {
                    "Enter" => {
                        if e.detail[0] == odd_atomic && open.last() == Some(&sblock.as_str()) {
                            in_sblock += 1;
                        }
                        if e.detail[0] == child_create {
                            let kinds: Vec<String> = events[i..i + 8]
                                .iter()
                                .map(|e| match e.kind.as_str() {
                                    "Enter" | "Leave" => e.text(),
                                    k => k.to_string(),
                                })
                                .collect();
                            assert_eq!(
                                kinds,
                                [
                                    format!("Enter {child_create}"),
                                    "ThreadTaskCreate".into(),
                                    "ThreadTaskSwitch".into(),
                                    format!("Enter {child_task}"),
                                    format!("Enter {}", p.region_above("atomic", "100 * (k + 1)")),
                                    format!("Leave {}", p.region_above("atomic", "100 * (k + 1)")),
                                    format!("Leave {child_task}"),
                                    "ThreadTaskComplete".into(),
                                ],
                                "{}: an included task does not run inside its creation",
                                r.label
                            );
                            let (created, switched, completed, back) = (
                                &events[i + 1],
                                &events[i + 2],
                                &events[i + 7],
                                &events[i + 8],
                            );
                            assert_eq!(created.detail, switched.detail);
                            assert_eq!(created.detail, completed.detail);
                            assert_eq!(back.kind, "ThreadTaskSwitch", "{}", r.label);
                            assert_eq!(events[i + 9].text(), format!("Leave {child_create}"));
                            nested_runs += 1;
                        }
                        open.push(&e.detail[0]);
                    }
                    "Leave" => {
                        open.pop();
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(in_sblock, undeferred, "{}: undeferred task bodies", r.label);
        assert_eq!(nested_runs, included, "{}: included tasks", r.label);
    }
}
