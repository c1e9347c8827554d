//! Fixed form (`.f`): tasks and locks.

use super::*;

#[test]
fn fixed_form_tasks_and_locks() {
    let scratch = Scratch::new("fortran-fixed");
    let instrumented = instrument_fortran("f_tasks_locks.f", &scratch.path);
    let exe = gfortran(&scratch.path, true).executable(&[instrumented], "f_tasks_locks");

    let s = Source::new("f_tasks_locks.f");
    let par = s.line("C$OMP PARALLEL SHARED(TOTAL, K) PRIVATE(I)");
    let par_ibar = s.omp("implicit barrier", s.line("C$OMP END PARALLEL"));
    let par = s.omp("parallel", par);
    let single_line = s.line("C$OMP SINGLE");
    let single = s.omp("single", single_line);
    let sblock = s.omp("single sblock", single_line);
    let single_ibar = s.omp("implicit barrier", s.line("C$OMP END SINGLE"));
    let task_line = s.line("C$OMP TASK FIRSTPRIVATE(I) SHARED(TOTAL)");
    let create = s.omp("create task", task_line);
    let task = s.omp("task", task_line);
    let taskwait = s.omp("taskwait", s.line("C$OMP TASKWAIT"));
    let pdo_line = s.line("C$OMP PARALLEL DO REDUCTION(+:PSUM) SCHEDULE(STATIC)");
    let pdo_par = s.omp("parallel", pdo_line);
    let pdo_do = s.omp("do", pdo_line);
    let pdo_ibar = s.omp("implicit barrier", s.line("C$OMP END PARALLEL DO"));
    // OPARI2 lower-cases the name.
    let user = format!(
        "!$pomp user(ftlmain) @{}:{}",
        s.file,
        s.line("C$POMP INST BEGIN(FTLMAIN)")
    );
    const TASKS: usize = 5;

    let run_task = task_run(
        &task,
        seq([
            region("omp_set_lock", [acquire()]),
            region("omp_unset_lock", [release()]),
        ]),
    );
    let wait = |name: &str| waiting(name, &run_task);
    let create_task = || creating(&create, &run_task);
    let first = || {
        seq([
            team_begin(),
            enter(&par),
            enter(&single),
            opt(region(
                &sblock,
                [times(TASKS, create_task()), wait(&taskwait)],
            )),
            wait(&single_ibar),
            leave(&single),
            star(region("omp_test_lock", [])),
            region("omp_test_lock", [acquire()]),
            region("omp_unset_lock", [release()]),
            region("omp_set_nest_lock", [acquire()]),
            region("omp_set_nest_lock", [acquire()]),
            region("omp_unset_nest_lock", [release()]),
            region("omp_unset_nest_lock", [release()]),
            wait(&par_ibar),
            leave(&par),
            team_end(),
        ])
    };
    let second = || {
        seq([
            team_begin(),
            enter(&pdo_par),
            region(&pdo_do, [region(&pdo_ibar, [])]),
            leave(&pdo_par),
            team_end(),
        ])
    };

    for threads in THREADS {
        let t = threads as usize;
        let what = format!("{threads} threads");
        let (stdout, view) = traced(&exe, threads, &format!("t{threads}"), &[]);
        assert_eq!(
            stdout,
            format!("total=15 k={} psum=5050\n", 2 * t),
            "{what}"
        );
        let master = region(
            &user,
            [
                region("omp_init_lock", []),
                region("omp_init_nest_lock", []),
                fork(threads),
                first(),
                join(),
                fork(threads),
                second(),
                join(),
                region("omp_destroy_lock", []),
                region("omp_destroy_nest_lock", []),
            ],
        );
        assert_location(&view, "Master thread", &master, &what);
        for k in 1..threads {
            assert_location(
                &view,
                &format!("OMP thread {k}"),
                &seq([first(), second()]),
                &what,
            );
        }

        let counted = enters(&view);
        let tests = counted.get("omp_test_lock").copied().unwrap_or(0);
        assert!(tests >= t, "{what}: {tests} omp_test_lock calls");
        let expected: Vec<(String, usize)> = [
            (par.as_str(), t),
            (&par_ibar, t),
            (&single, t),
            (&single_ibar, t),
            (&sblock, 1),
            (&create, TASKS),
            (&task, TASKS),
            (&taskwait, 1),
            (&pdo_par, t),
            (&pdo_do, t),
            (&pdo_ibar, t),
            (&user, 1),
            ("omp_init_lock", 1),
            ("omp_init_nest_lock", 1),
            ("omp_destroy_lock", 1),
            ("omp_destroy_nest_lock", 1),
            ("omp_set_lock", TASKS),
            ("omp_unset_lock", TASKS + t),
            ("omp_test_lock", tests),
            ("omp_set_nest_lock", 2 * t),
            ("omp_unset_nest_lock", 2 * t),
        ]
        .into_iter()
        .map(|(n, c)| (n.to_string(), c))
        .collect();
        assert_enters(&view, &expected, &what);
        assert_eq!(assert_tasks_consistent(&view), TASKS, "{what}");
        // The plain lock: once per task and once per thread (test lock); the nest lock twice per
        // thread (the inner acquisition repeats the order).
        let mut locks: Vec<usize> = assert_locks_consistent(&view).into_values().collect();
        locks.sort_unstable();
        let mut want = vec![TASKS + t, 2 * t];
        want.sort_unstable();
        assert_eq!(locks, want, "{what}: acquisitions per lock");

        assert_regions(
            &view,
            &[
                par.clone(),
                par_ibar.clone(),
                single.clone(),
                sblock.clone(),
                single_ibar.clone(),
                create.clone(),
                task.clone(),
                taskwait.clone(),
                pdo_par.clone(),
                pdo_do.clone(),
                pdo_ibar.clone(),
                user.clone(),
            ],
            &what,
        );
        assert_region(
            &view,
            &task,
            "TASK",
            s.file,
            (task_line, s.line("C$OMP END TASK")),
        );
        assert_region(
            &view,
            &user,
            "FUNCTION",
            s.file,
            (
                s.line("C$POMP INST BEGIN(FTLMAIN)"),
                s.line("C$POMP INST END(FTLMAIN)"),
            ),
        );
        assert_region(
            &view,
            &pdo_do,
            "LOOP",
            s.file,
            (pdo_line, s.line("C$OMP END PARALLEL DO")),
        );
    }
}
