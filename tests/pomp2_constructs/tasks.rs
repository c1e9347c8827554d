//! The task family: creation, execution and task switches.

use super::*;

/// Tasks that may run on this thread at this point, each as Switch(task) Enter(task)
/// Leave(task) Complete(task) (captured as `run` and `done`), then a switch back (`back`).
fn tasks_here(p: &Program, at: &str) -> Seq {
    let task = p.omp("task", "task");
    Seq::new()
        .rep(
            &format!("run@{at}"),
            vec![
                Tok::Cap("run".into(), "ThreadTaskSwitch ".into()),
                Tok::Is(format!("Enter {task}")),
                Tok::Is(format!("Leave {task}")),
                Tok::Cap("done".into(), "ThreadTaskComplete ".into()),
            ],
        )
        .rep(
            &format!("back@{at}"),
            vec![Tok::Cap("back".into(), "ThreadTaskSwitch ".into())],
        )
}

const NTASKS: usize = 4;

fn check_tasks(p: &Program, n: u32) {
    let mut r = Checked::run(p, n, &[]);
    r.definitions(
        n,
        p.defs(&[
            (C::Task, "serial"),
            (C::Parallel, "par"),
            (C::Single, "sgl"),
            (C::Task, "task"),
            (C::Taskwait, "tw"),
        ]),
    );
    let sblock = format!("Enter {}", p.omp("single sblock", "sgl"));
    let executors: Vec<u32> = (0..n)
        .filter(|&k| r.v.texts(&loc_name(k), &[]).contains(&sblock))
        .collect();
    assert_eq!(executors.len(), 1, "threads that executed the single block");
    let executor = executors[0];
    let wait_points: Vec<String> = (0..NTASKS)
        .map(|i| format!("create{i}"))
        .chain(["taskwait".into(), "ibar".into()])
        .collect();
    for k in 0..n {
        let body = Seq::new()
            .region(p.omp("single", "sgl"), |s| {
                s.when(k == executor, |s| {
                    s.region(p.omp("single sblock", "sgl"), |mut s| {
                        for i in 0..NTASKS {
                            // A task may also run at once, inside its creation (doc 4.3).
                            s = s.region(p.omp("create task", "task"), |s| {
                                s.cap("create", "ThreadTaskCreate ")
                                    .then(tasks_here(p, &format!("create{i}")))
                            });
                        }
                        s.region(p.omp("taskwait", "tw"), |s| {
                            s.then(tasks_here(p, "taskwait"))
                        })
                    })
                })
                // The others may run tasks while they wait at the single's barrier.
                .region(p.ibar_name("sgl"), |s| s.then(tasks_here(p, "ibar")))
            })
            .then(p.ibar("par"));
        // The task created outside any parallel region runs at once on the initial thread.
        let serial = Seq::new().region(p.omp("create task", "serial"), |s| {
            s.cap("serial:create", "ThreadTaskCreate ")
                .cap("serial:run", "ThreadTaskSwitch ")
                .region(p.omp("task", "serial"), |s| s)
                .cap("serial:done", "ThreadTaskComplete ")
                .cap("serial:back", "ThreadTaskSwitch ")
        });
        let seq = Seq::new()
            .when(k == 0, |s| s.is("ProgramBegin").then(serial))
            .then(p.team("par", k == 0, n, body))
            .when(k == 0, |s| s.is("ProgramEnd 0"));
        r.expect(k, seq);
    }
    let team = r.team("par", n);

    // The serial task: thread 0's first task id (0, 1), in a team of the initial thread only;
    // the switch back names the initial thread's implicit task (location 0, generation 0).
    let serial = r.one("serial:create");
    assert_eq!(r.one("serial:run"), serial);
    assert_eq!(r.one("serial:done"), serial);
    let serial_team: u32 = serial.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(serial, format!("{serial_team} 0 1"), "serial task id");
    assert_eq!(r.one("serial:back"), format!("{serial_team} 0 0"));
    let master_only = vec![r.id("Master thread")];
    assert_eq!(
        r.v.comms[&serial_team].members, master_only,
        "serial task team"
    );

    // Created: ids (executor's thread number, that thread's counter), all in the team.
    let created: BTreeSet<String> = r.values("create").into_iter().collect();
    assert_eq!(r.values("create").len(), NTASKS);
    // The initial thread's counter already gave 1 to the serial task.
    let first = if executor == 0 { 2 } else { 1 };
    let want: BTreeSet<String> = (first..first + NTASKS)
        .map(|g| format!("{team} {executor} {g}"))
        .collect();
    assert_eq!(created, want, "created task ids");

    // Every task runs exactly once, is completed where it ran, and each wait point where
    // tasks ran switches back to the implicit task of the location before it is left.
    let mut ran = Vec::new();
    for k in 0..n {
        let name = loc_name(k);
        let m = &r.matched[&name];
        let (run, done) = (m.values("run"), m.values("done"));
        assert_eq!(run, done, "{name}: completed tasks are the ones that ran");
        ran.extend(run.into_iter().map(String::from));
        for at in &wait_points {
            let tasks = m.reps(&format!("run@{at}"));
            assert_eq!(
                m.reps(&format!("back@{at}")),
                usize::from(tasks > 0),
                "{name}: a switch back at {at} iff tasks ran there ({tasks})"
            );
        }
        let implicit = format!("{team} {} 0", r.number(&name));
        for back in m.values("back") {
            assert_eq!(back, implicit, "{name}: switch back to the implicit task");
        }
    }
    ran.sort();
    assert_eq!(
        ran,
        created.into_iter().collect::<Vec<_>>(),
        "tasks that ran"
    );
}

#[test]
fn task_family_records_creation_execution_and_switches() {
    let p = Program::build("fam_tasks.c");
    for n in THREAD_COUNTS {
        check_tasks(&p, n);
    }
}
