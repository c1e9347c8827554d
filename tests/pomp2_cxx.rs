//! A C++ program (namespaces, classes, templates, std::vector) instrumented by the real `opari2`
//! compiles against our headers with g++ and links with the shared library (with and without an
//! init file) and with the static archive. Each build runs with 1, 2 and 4 threads and its trace
//! is read back through the reference reader; every location's records must match the sequence
//! the program implies (semantics doc 4.3), with the runtime's choices (which thread runs a
//! section, the single block, a task; how often a test lock fails) left open, and exact counts
//! over the whole trace.

#[path = "support/sequence.rs"]
mod sequence;
mod support;

use std::path::PathBuf;
use std::process::Command;

use sequence::*;
use support::pomp2::*;
use support::{run, Scratch};

const THREADS: [u32; 3] = [1, 2, 4];
const FILE: &str = "cxx_constructs.cpp";
const TASKS: usize = 5;

/// The implicit barrier region of the construct region `construct` (it spans the construct's
/// last line: E1..E2 where the construct spans S1..E2).
fn implicit_barrier_of(view: &View, construct: &str) -> String {
    let c = view.region(construct);
    let found: Vec<&str> = view
        .regions
        .values()
        .filter(|r| r.role == "IMPLICIT_BARRIER" && r.file == c.file && r.begin == c.end)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(found.len(), 1, "implicit barrier of {construct}: {found:?}");
    found[0].to_string()
}

/// Region names of the program's constructs (implicit barriers are looked up in the trace).
struct Names {
    s: Source,
    // Counter::run
    par: String,
    for1: String,
    for2: String,
    barrier: String,
    sections: String,
    section: String,
    single: String,
    sblock: String,
    master: String,
    critical: String,
    critical_sblock: String,
    named: String,
    named_sblock: String,
    atomic: String,
    flush: String,
    pfor_par: String,
    pfor_for: String,
    ordered: String,
    ordered_sblock: String,
    // scaled_sum
    sum_par: String,
    sum_for: String,
    // Tasks::run
    tpar: String,
    tsingle: String,
    tsblock: String,
    create: String,
    task: String,
    taskwait: String,
    // locks()
    lpar: String,
    // user regions
    main: String,
    early: String,
}

impl Names {
    fn new() -> Self {
        let s = Source::new(FILE);
        let sections = s.line("#pragma omp sections");
        let single = s.line_after(
            "#pragma omp single",
            s.line("void run(std::vector<int>& data)"),
        );
        let critical = s.line("#pragma omp critical");
        let named = s.line("#pragma omp critical(cxx_named)");
        let pfor = s.line("#pragma omp parallel for ordered schedule(static, 1)");
        let ordered = s.line("#pragma omp ordered");
        let sum = s.line("#pragma omp parallel for reduction(+ : total) schedule(static)");
        let tasks_run = s.line("void run(int ntasks)");
        let tsingle = s.line_after("#pragma omp single", tasks_run);
        let task = s.line("#pragma omp task firstprivate(i)");
        let user = |name: &str| {
            format!(
                "!$pomp user({name}) @{FILE}:{}",
                s.line(&format!("#pragma pomp inst begin({name})"))
            )
        };
        Self {
            par: s.omp("parallel", s.line("#pragma omp parallel shared(data)")),
            for1: s.omp("for", s.line("#pragma omp for schedule(static)")),
            for2: s.omp("for", s.line("#pragma omp for schedule(static) nowait")),
            barrier: s.omp("barrier", s.line("#pragma omp barrier")),
            sections: s.omp("sections", sections),
            section: s.omp("section", sections),
            single: s.omp("single", single),
            sblock: s.omp("single sblock", single),
            master: s.omp("master", s.line("#pragma omp master")),
            critical: s.omp("critical", critical),
            critical_sblock: s.omp("critical sblock", critical),
            named: s.omp("critical (cxx_named)", named),
            named_sblock: s.omp("critical sblock", named),
            atomic: s.omp("atomic", s.line("#pragma omp atomic")),
            flush: s.omp("flush", s.line("#pragma omp flush")),
            pfor_par: s.omp("parallel", pfor),
            pfor_for: s.omp("for", pfor),
            ordered: s.omp("ordered", ordered),
            ordered_sblock: s.omp("ordered sblock", ordered),
            sum_par: s.omp("parallel", sum),
            sum_for: s.omp("for", sum),
            tpar: s.omp("parallel", s.line_after("#pragma omp parallel", tasks_run)),
            tsingle: s.omp("single", tsingle),
            tsblock: s.omp("single sblock", tsingle),
            create: s.omp("create task", task),
            task: s.omp("task", task),
            taskwait: s.omp("taskwait", s.line("#pragma omp taskwait")),
            lpar: s.omp("parallel", s.line("#pragma omp parallel shared(k)")),
            main: user("cxx_main"),
            early: user("cxx_early"),
            s,
        }
    }
}

fn check(n: &Names, stdout: &str, view: &View, threads: u32, what: &str) {
    let t = threads as usize;
    assert_eq!(
        stdout,
        format!("sum=2080 scaled=30 tasks=15 k={} crit={t} e=1\n", 2 * t),
        "{what}"
    );
    let ibar = |construct: &str| implicit_barrier_of(view, construct);
    let (par_ibar, for1_ibar, for2_ibar) = (ibar(&n.par), ibar(&n.for1), ibar(&n.for2));
    let (sections_ibar, single_ibar) = (ibar(&n.sections), ibar(&n.single));
    let (pfor_ibar, sum_ibar) = (ibar(&n.pfor_for), ibar(&n.sum_for));
    let (tpar_ibar, tsingle_ibar, lpar_ibar) = (ibar(&n.tpar), ibar(&n.tsingle), ibar(&n.lpar));

    let counter = |k: u32| {
        seq([
            team_begin(),
            enter(&n.par),
            region(&n.for1, [region(&for1_ibar, [])]),
            region(&n.for2, []),
            region(&n.barrier, []),
            region(
                &n.sections,
                [star(region(&n.section, [])), region(&sections_ibar, [])],
            ),
            region(
                &n.single,
                [opt(region(&n.sblock, [])), region(&single_ibar, [])],
            ),
            if k == 0 {
                region(&n.master, [])
            } else {
                empty()
            },
            region(
                &n.critical,
                [acquire(), region(&n.critical_sblock, []), release()],
            ),
            region(
                &n.named,
                [acquire(), region(&n.named_sblock, []), release()],
            ),
            region(&n.atomic, []),
            region(&n.flush, []),
            region(&par_ibar, []),
            leave(&n.par),
            team_end(),
        ])
    };
    let ordered = |k: u32| {
        let iterations = (0..8).filter(|i| i % threads == k).count();
        seq([
            team_begin(),
            enter(&n.pfor_par),
            enter(&n.pfor_for),
            times(
                iterations,
                region(&n.ordered, [region(&n.ordered_sblock, [])]),
            ),
            region(&pfor_ibar, []),
            leave(&n.pfor_for),
            leave(&n.pfor_par),
            team_end(),
        ])
    };
    let scaled = || {
        seq([
            team_begin(),
            enter(&n.sum_par),
            region(&n.sum_for, [region(&sum_ibar, [])]),
            leave(&n.sum_par),
            team_end(),
        ])
    };
    let run_task = task_run(
        &n.task,
        seq([
            region("omp_set_lock", [acquire()]),
            region("omp_unset_lock", [release()]),
        ]),
    );
    let tasks = || {
        seq([
            team_begin(),
            enter(&n.tpar),
            enter(&n.tsingle),
            opt(region(
                &n.tsblock,
                [
                    times(TASKS, creating(&n.create, &run_task)),
                    waiting(&n.taskwait, &run_task),
                ],
            )),
            waiting(&tsingle_ibar, &run_task),
            leave(&n.tsingle),
            waiting(&tpar_ibar, &run_task),
            leave(&n.tpar),
            team_end(),
        ])
    };
    let locks = || {
        seq([
            team_begin(),
            enter(&n.lpar),
            star(region("omp_test_lock", [])),
            region("omp_test_lock", [acquire()]),
            region("omp_unset_lock", [release()]),
            region("omp_set_nest_lock", [acquire()]),
            region("omp_set_nest_lock", [acquire()]),
            region("omp_unset_nest_lock", [release()]),
            region("omp_unset_nest_lock", [release()]),
            region(&lpar_ibar, []),
            leave(&n.lpar),
            team_end(),
        ])
    };
    let master = seq([
        enter(&n.main),
        fork(threads),
        counter(0),
        join(),
        fork(threads),
        ordered(0),
        join(),
        fork(threads),
        scaled(),
        join(),
        region("omp_init_lock", []),
        fork(threads),
        tasks(),
        join(),
        region("omp_destroy_lock", []),
        region("omp_init_lock", []),
        region("omp_init_nest_lock", []),
        fork(threads),
        locks(),
        join(),
        region("omp_destroy_nest_lock", []),
        region("omp_destroy_lock", []),
        leave(&n.main),
        region(&n.early, []),
        region(&n.early, []),
    ]);
    assert_location(view, "Master thread", &master, what);
    for k in 1..threads {
        let worker = seq([counter(k), ordered(k), scaled(), tasks(), locks()]);
        assert_location(view, &format!("OMP thread {k}"), &worker, what);
    }

    let per_thread = [
        &n.par,
        &par_ibar,
        &n.for1,
        &for1_ibar,
        &n.for2,
        &n.barrier,
        &n.sections,
        &sections_ibar,
        &n.single,
        &single_ibar,
        &n.critical,
        &n.critical_sblock,
        &n.named,
        &n.named_sblock,
        &n.atomic,
        &n.flush,
        &n.pfor_par,
        &n.pfor_for,
        &pfor_ibar,
        &n.sum_par,
        &n.sum_for,
        &sum_ibar,
        &n.tpar,
        &tpar_ibar,
        &n.tsingle,
        &tsingle_ibar,
        &n.lpar,
        &lpar_ibar,
    ];
    let tests = enters(view).get("omp_test_lock").copied().unwrap_or(0);
    assert!(tests >= t, "{what}: {tests} omp_test_lock calls");
    let mut expected: Vec<(String, usize)> =
        per_thread.iter().map(|r| (r.to_string(), t)).collect();
    expected.extend(
        [
            (n.section.as_str(), 2),
            (&n.sblock, 1),
            (&n.master, 1),
            (&n.ordered, 8),
            (&n.ordered_sblock, 8),
            (&n.tsblock, 1),
            (&n.create, TASKS),
            (&n.task, TASKS),
            (&n.taskwait, 1),
            (&n.main, 1),
            (&n.early, 2),
            ("omp_init_lock", 2),
            ("omp_destroy_lock", 2),
            ("omp_init_nest_lock", 1),
            ("omp_destroy_nest_lock", 1),
            ("omp_set_lock", TASKS),
            ("omp_unset_lock", TASKS + t),
            ("omp_test_lock", tests),
            ("omp_set_nest_lock", 2 * t),
            ("omp_unset_nest_lock", 2 * t),
        ]
        .map(|(r, c)| (r.to_string(), c)),
    );
    assert_enters(view, &expected, what);
    assert_eq!(assert_tasks_consistent(view), TASKS, "{what}");
    // Critical sections: unnamed and cxx_named once per thread. OpenMP locks: the tasks' lock
    // once per task, the test lock once per thread, the nest lock twice per thread.
    let mut locks: Vec<usize> = assert_locks_consistent(view).into_values().collect();
    locks.sort_unstable();
    let mut want = vec![t, t, TASKS, t, 2 * t];
    want.sort_unstable();
    assert_eq!(locks, want, "{what}: acquisitions per lock");

    let mut names: Vec<String> = per_thread.iter().map(|r| r.to_string()).collect();
    names.extend(
        [
            &for2_ibar,
            &n.section,
            &n.sblock,
            &n.master,
            &n.ordered,
            &n.ordered_sblock,
            &n.tsblock,
            &n.create,
            &n.task,
            &n.taskwait,
            &n.main,
            &n.early,
        ]
        .map(String::clone),
    );
    assert_regions(view, &names, what);
    let s = &n.s;
    let line = |l: &str| s.line(l);
    let for1 = line("#pragma omp for schedule(static)");
    assert_region(
        view,
        &n.for1,
        "LOOP",
        FILE,
        (for1, line("data[i] = static_cast<int>(i);")),
    );
    assert_region(
        view,
        &n.named,
        "CRITICAL",
        FILE,
        (
            line("#pragma omp critical(cxx_named)"),
            line("named_++;") + 1,
        ),
    );
    assert_eq!(view.region(&n.early).role, "FUNCTION");
    assert_eq!(view.region(&n.early).paradigm, "USER");
}

#[test]
fn cxx_program_shared_static_and_without_init_file() {
    let scratch = Scratch::new("cxx");
    let instrumented = instrument(FILE, &scratch.path, &[]);
    // The instrumented file compiles cleanly against our headers.
    run(Command::new("g++")
        .args([
            "-fopenmp",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
        ])
        .arg(include_dir())
        .arg(&instrumented)
        .current_dir(&scratch.path));
    let build = |init_file, link, name| -> PathBuf {
        Build {
            dir: &scratch.path,
            compiler: "g++",
            init_file,
            link,
        }
        .executable(std::slice::from_ref(&instrumented), name)
    };
    let variants = [
        ("shared, init file", build(true, Link::Shared, "cxx_shared")),
        (
            "shared, no init file",
            build(false, Link::Shared, "cxx_lazy"),
        ),
        ("static, init file", build(true, Link::Static, "cxx_static")),
    ];
    let names = Names::new();
    for threads in THREADS {
        for (what, exe) in &variants {
            let label = format!("{}-{threads}", exe.file_name().unwrap().to_string_lossy());
            let (stdout, view) = traced(exe, threads, &label, &[]);
            check(
                &names,
                &stdout,
                &view,
                threads,
                &format!("{what}, {threads} threads"),
            );
        }
    }
}
