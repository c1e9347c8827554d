//! Fortran programs instrumented by the real `opari2` and built with gfortran: free form (`.f90`),
//! fixed form (`.f`), and `.F90` through the C preprocessor, with the Fortran spellings of the
//! POMP2 entry points (`pomp2_*_`, CTC strings with hidden lengths, handles in COMMON blocks,
//! the runtime's Fortran lock entries). Each program runs with 1, 2 and 4 threads and its trace
//! is read back through the reference reader; every location's records must match the sequence
//! the program implies (semantics doc 4.3), with the choices the runtime makes (which thread runs
//! a section, the single block, a task; how often a test lock fails) left open, and exact counts
//! over the whole trace.

#[path = "support/sequence.rs"]
mod sequence;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use sequence::*;
use support::pomp2::*;
use support::{repo_root, run, Scratch};

const THREADS: [u32; 3] = [1, 2, 4];

// ---- building and running ---------------------------------------------------------------------

/// Copies `c-tests/<file>` into `dir` and instruments it with `opari2`. The output gets an
/// upper-case extension (`.mod.F`, `.mod.F90`) so that gfortran runs the preprocessor over the
/// `#line` directives OPARI2 writes.
fn instrument_fortran(file: &str, dir: &Path) -> PathBuf {
    let src = dir.join(file);
    std::fs::copy(repo_root().join("c-tests").join(file), &src).unwrap();
    let (stem, ext) = file.rsplit_once('.').unwrap();
    let out = dir.join(format!("{stem}.mod.{}", ext.to_ascii_uppercase()));
    run(Command::new("opari2").arg(&src).arg(&out).current_dir(dir));
    out
}

fn copy_source(file: &str, dir: &Path) -> PathBuf {
    let dst = dir.join(file);
    std::fs::copy(repo_root().join("c-tests").join(file), &dst).unwrap();
    dst
}

fn gfortran(dir: &Path, init_file: bool) -> Build<'_> {
    Build {
        dir,
        compiler: "gfortran",
        init_file,
        link: Link::Shared,
    }
}

// ---- free form: every construct ---------------------------------------------------------------

/// The regions of f_constructs.f90 and what its run must record.
struct Constructs {
    s: Source,
    par: String,
    par_ibar: String,
    do1: String,
    do1_ibar: String,
    do2: String,
    do2_ibar: String,
    sections: String,
    section: String,
    sections_ibar: String,
    single: String,
    sblock: String,
    single_ibar: String,
    master: String,
    barrier: String,
    critical: String,
    critical_sblock: String,
    named: String,
    named_sblock: String,
    atomic: String,
    flush: String,
    workshare: String,
    workshare_ibar: String,
    pdo_par: String,
    pdo_do: String,
    pdo_ibar: String,
    ordered: String,
    ordered_sblock: String,
    fwork: String,
    fuser: String,
}

impl Constructs {
    fn new() -> Self {
        let s = Source::new("f_constructs.f90");
        let par_line =
            s.line("!$omp parallel private(i) shared(a, b, s, s2, c1, c2, at, once, masters)");
        let pdo = s.line("!$omp parallel do ordered schedule(static, 1) shared(ord)");
        let sections = s.line("!$omp sections");
        let critical = s.line("!$omp critical");
        let named = s.line("!$omp critical (fcrit)");
        let ordered = s.line("!$omp ordered");
        let ibar = |line: &str| s.omp("implicit barrier", s.line(line));
        Self {
            par: s.omp("parallel", par_line),
            par_ibar: ibar("!$omp end parallel"),
            do1: s.omp("do", s.line("!$omp do schedule(static)")),
            do1_ibar: ibar("!$omp end do"),
            do2: s.omp("do", s.line("!$omp do")),
            do2_ibar: ibar("!$omp end do nowait"),
            sections: s.omp("sections", sections),
            section: s.omp("section", sections),
            sections_ibar: ibar("!$omp end sections"),
            single: s.omp("single", s.line("!$omp single")),
            sblock: s.omp("single sblock", s.line("!$omp single")),
            single_ibar: ibar("!$omp end single"),
            master: s.omp("master", s.line("!$omp master")),
            barrier: s.omp("barrier", s.line("!$omp barrier")),
            critical: s.omp("critical", critical),
            critical_sblock: s.omp("critical sblock", critical),
            named: s.omp("critical (fcrit)", named),
            named_sblock: s.omp("critical sblock", named),
            atomic: s.omp("atomic", s.line("!$omp atomic")),
            flush: s.omp("flush", s.line("!$omp flush")),
            workshare: s.omp("workshare", s.line("!$omp workshare")),
            workshare_ibar: ibar("!$omp end workshare"),
            pdo_par: s.omp("parallel", pdo),
            pdo_do: s.omp("do", pdo),
            pdo_ibar: ibar("!$omp end parallel do"),
            ordered: s.omp("ordered", ordered),
            ordered_sblock: s.omp("ordered sblock", ordered),
            fwork: format!(
                "!$pomp user(fwork) @f_constructs.f90:{}",
                s.line("!$pomp inst begin(fwork)")
            ),
            fuser: format!(
                "!$pomp user(fuser) @f_constructs.f90:{}",
                s.line("!$pomp inst begin(fuser)")
            ),
            s,
        }
    }

    /// Thread `k`'s records of the first parallel region.
    fn first_region(&self, k: u32) -> Pat {
        seq([
            team_begin(),
            enter(&self.par),
            region(&self.do1, [region(&self.do1_ibar, [])]),
            region(&self.do2, []),
            region(
                &self.sections,
                [
                    star(region(&self.section, [])),
                    region(&self.sections_ibar, []),
                ],
            ),
            region(
                &self.single,
                [opt(region(&self.sblock, [])), region(&self.single_ibar, [])],
            ),
            if k == 0 {
                region(&self.master, [])
            } else {
                empty()
            },
            region(&self.barrier, []),
            region(
                &self.critical,
                [acquire(), region(&self.critical_sblock, []), release()],
            ),
            region(
                &self.named,
                [acquire(), region(&self.named_sblock, []), release()],
            ),
            region(&self.atomic, []),
            region(&self.flush, []),
            region(&self.workshare, [region(&self.workshare_ibar, [])]),
            region(&self.par_ibar, []),
            leave(&self.par),
            team_end(),
        ])
    }

    /// Thread `k`'s records of the parallel do with `schedule(static, 1)` over 8 iterations.
    fn second_region(&self, k: u32, threads: u32) -> Pat {
        let iterations = (0..8).filter(|i| i % threads == k).count();
        seq([
            team_begin(),
            enter(&self.pdo_par),
            enter(&self.pdo_do),
            times(
                iterations,
                region(&self.ordered, [region(&self.ordered_sblock, [])]),
            ),
            region(&self.pdo_ibar, []),
            leave(&self.pdo_do),
            leave(&self.pdo_par),
            team_end(),
        ])
    }

    fn check(&self, stdout: &str, view: &View, threads: u32, what: &str) {
        let t = threads as usize;
        assert_eq!(
            stdout,
            format!("total={} r1=0 r3=1\n", 6415 + 3 * t),
            "{what}"
        );
        let master = seq([
            enter(&self.fwork),
            fork(threads),
            self.first_region(0),
            join(),
            fork(threads),
            self.second_region(0, threads),
            join(),
            leave(&self.fwork),
            region(&self.fuser, []),
            region(&self.fuser, []),
        ]);
        assert_location(view, "Master thread", &master, what);
        for k in 1..threads {
            let worker = seq([self.first_region(k), self.second_region(k, threads)]);
            assert_location(view, &format!("OMP thread {k}"), &worker, what);
        }

        let per_thread = [
            &self.par,
            &self.par_ibar,
            &self.do1,
            &self.do1_ibar,
            &self.do2,
            &self.sections,
            &self.sections_ibar,
            &self.single,
            &self.single_ibar,
            &self.barrier,
            &self.critical,
            &self.critical_sblock,
            &self.named,
            &self.named_sblock,
            &self.atomic,
            &self.flush,
            &self.workshare,
            &self.workshare_ibar,
            &self.pdo_par,
            &self.pdo_do,
            &self.pdo_ibar,
        ];
        let mut expected: Vec<(String, usize)> =
            per_thread.iter().map(|r| (r.to_string(), t)).collect();
        expected.extend([
            (self.section.clone(), 2),
            (self.sblock.clone(), 1),
            (self.master.clone(), 1),
            (self.ordered.clone(), 8),
            (self.ordered_sblock.clone(), 8),
            (self.fwork.clone(), 1),
            (self.fuser.clone(), 2),
        ]);
        assert_enters(view, &expected, what);
        let mut kinds = view.kind_counts();
        kinds.remove("BufferFlush");
        let enters: usize = expected.iter().map(|(_, n)| n).sum();
        let want: BTreeMap<String, usize> = [
            ("ProgramBegin", 1),
            ("ProgramEnd", 1),
            ("Enter", enters),
            ("Leave", enters),
            ("ThreadFork", 2),
            ("ThreadJoin", 2),
            ("ThreadTeamBegin", 2 * t),
            ("ThreadTeamEnd", 2 * t),
            ("ThreadAcquireLock", 2 * t),
            ("ThreadReleaseLock", 2 * t),
        ]
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
        assert_eq!(kinds, want, "{what}: records per kind");
        // Two critical-section locks (unnamed and fcrit), each taken once per thread.
        let locks = assert_locks_consistent(view);
        assert_eq!(
            locks.values().copied().collect::<Vec<_>>(),
            [t, t],
            "{what}"
        );

        let mut names: Vec<String> = per_thread.iter().map(|r| r.to_string()).collect();
        names.extend([
            self.do2_ibar.clone(),
            self.section.clone(),
            self.sblock.clone(),
            self.master.clone(),
            self.ordered.clone(),
            self.ordered_sblock.clone(),
            self.fwork.clone(),
            self.fuser.clone(),
        ]);
        assert_regions(view, &names, what);
        let s = &self.s;
        let f = s.file;
        let line = |l: &str| s.line(l);
        let (do1, do1_end) = (line("!$omp do schedule(static)"), line("!$omp end do"));
        assert_region(view, &self.do1, "LOOP", f, (do1, do1_end));
        assert_region(
            view,
            &self.do1_ibar,
            "IMPLICIT_BARRIER",
            f,
            (do1_end, do1_end),
        );
        let (secs, secs_end) = (line("!$omp sections"), line("!$omp end sections"));
        assert_region(view, &self.sections, "SECTIONS", f, (secs, secs_end));
        assert_region(view, &self.section, "SECTION", f, (secs, secs_end));
        let (par, par_end) = (
            line("!$omp parallel private(i) shared(a, b, s, s2, c1, c2, at, once, masters)"),
            line("!$omp end parallel"),
        );
        assert_region(view, &self.par, "PARALLEL", f, (par, par_end));
        let (ws, ws_end) = (line("!$omp workshare"), line("!$omp end workshare"));
        assert_region(view, &self.workshare, "WORKSHARE", f, (ws, ws_end));
        assert_region(
            view,
            &self.named,
            "CRITICAL",
            f,
            (
                line("!$omp critical (fcrit)"),
                line("!$omp end critical (fcrit)"),
            ),
        );
        assert_region(
            view,
            &self.fuser,
            "FUNCTION",
            f,
            (
                line("!$pomp inst begin(fuser)"),
                line("!$pomp inst end(fuser)"),
            ),
        );
        assert_eq!(view.region(&self.fuser).paradigm, "USER");
        assert_eq!(view.region(&self.pdo_do).paradigm, "OPENMP");
    }
}

fn build_constructs(dir: &Path, init_file: bool, name: &str) -> PathBuf {
    let instrumented = instrument_fortran("f_constructs.f90", dir);
    let main = copy_source("f_main.f90", dir);
    gfortran(dir, init_file).executable(&[main, instrumented], name)
}

#[test]
fn free_form_every_construct() {
    let scratch = Scratch::new("fortran-constructs");
    let exe = build_constructs(&scratch.path, true, "f_constructs");
    let c = Constructs::new();
    for threads in THREADS {
        let (stdout, view) = traced(&exe, threads, &format!("t{threads}"), &[]);
        c.check(
            &stdout,
            &view,
            threads,
            &format!("init file, {threads} threads"),
        );
    }
}

/// Without an init file every handle is assigned from its CTC string (bounded by the hidden
/// length) at the first call; the same again with the instrumented code in a shared library
/// that neither it nor the uninstrumented main program links against pomptrace, which comes in
/// through LD_PRELOAD.
#[test]
fn free_form_without_init_file_and_from_a_shared_library_under_ld_preload() {
    let scratch = Scratch::new("fortran-lazy");
    let dir = &scratch.path;
    let lazy = build_constructs(dir, false, "f_constructs_lazy");

    let instrumented = dir.join("f_constructs.mod.F90");
    let object = dir.join("f_constructs_pic.o");
    run(Command::new("gfortran")
        .args(["-fopenmp", "-fPIC", "-O1", "-g", "-c"])
        .arg(&instrumented)
        .arg("-o")
        .arg(&object)
        .current_dir(dir));
    let library = dir.join("libfconstructs.so");
    run(Command::new("gfortran")
        .args(["-shared", "-fopenmp", "-o"])
        .arg(&library)
        .arg(&object));
    let preload_main = dir.join("preload_main");
    run(Command::new("gfortran")
        .arg("-fopenmp")
        .arg(dir.join("f_main.f90"))
        .arg("-o")
        .arg(&preload_main)
        .arg("-L")
        .arg(dir)
        .arg("-lfconstructs")
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-Wl,--allow-shlib-undefined")
        .current_dir(dir));
    let needed = String::from_utf8(
        run(Command::new("readelf")
            .arg("-d")
            .arg(&preload_main)
            .arg(&library))
        .stdout,
    )
    .unwrap();
    assert!(!needed.contains("pomptrace"), "{needed}");

    let preload = library_dir().join("libpomptrace.so").display().to_string();
    let c = Constructs::new();
    for threads in THREADS {
        let (stdout, view) = traced(&lazy, threads, &format!("lazy-{threads}"), &[]);
        c.check(&stdout, &view, threads, &format!("lazy, {threads} threads"));
        let (stdout, view) = traced(
            &preload_main,
            threads,
            &format!("preload-{threads}"),
            &[("LD_PRELOAD", &preload)],
        );
        c.check(
            &stdout,
            &view,
            threads,
            &format!("LD_PRELOAD, {threads} threads"),
        );
    }
}

// ---- fixed form: tasks and locks --------------------------------------------------------------

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

// ---- .F90 through the C preprocessor ----------------------------------------------------------

#[test]
fn preprocessed_free_form() {
    let scratch = Scratch::new("fortran-cpp");
    let instrumented = instrument_fortran("f_preproc.F90", &scratch.path);
    let with_init =
        gfortran(&scratch.path, true).executable(std::slice::from_ref(&instrumented), "f_pp");
    let lazy = gfortran(&scratch.path, false).executable(&[instrumented], "f_pp_lazy");

    let s = Source::new("f_preproc.F90");
    let pdo = s.line("!$omp parallel do schedule(dynamic, chunk) reduction(+:hits)");
    let pdo_par = s.omp("parallel", pdo);
    let pdo_do = s.omp("do", pdo);
    let pdo_ibar = s.omp("implicit barrier", s.line("!$omp end parallel do"));
    let extra = s.line_after("!$omp parallel", s.line("#ifdef FPP_EXTRA"));
    let extra_par = s.omp("parallel", extra);
    let extra_ibar = s.omp(
        "implicit barrier",
        s.line_after("!$omp end parallel", extra),
    );
    let par2_line = s.line_after("!$omp parallel", s.line("#if NITER > 10"));
    let par2 = s.omp("parallel", par2_line);
    let par2_ibar = s.omp(
        "implicit barrier",
        s.line_after("!$omp end parallel", par2_line),
    );
    let do2 = s.omp("do", s.line("!$omp do reduction(+:evens)"));
    let do2_ibar = s.omp("implicit barrier", s.line("!$omp end do"));
    let fpp = format!(
        "!$pomp user(fpp) @f_preproc.F90:{}",
        s.line("!$pomp inst begin(fpp)")
    );

    let first = seq([
        team_begin(),
        enter(&pdo_par),
        region(&pdo_do, [region(&pdo_ibar, [])]),
        leave(&pdo_par),
        team_end(),
    ]);
    let second = seq([
        team_begin(),
        enter(&par2),
        region(&do2, [region(&do2_ibar, [])]),
        region(&par2_ibar, []),
        leave(&par2),
        team_end(),
    ]);
    let used = vec![
        pdo_par.clone(),
        pdo_do.clone(),
        pdo_ibar.clone(),
        par2.clone(),
        par2_ibar.clone(),
        do2.clone(),
        do2_ibar.clone(),
        fpp.clone(),
    ];
    for threads in THREADS {
        let t = threads as usize;
        for (exe, init_file) in [(&with_init, true), (&lazy, false)] {
            let what = format!("init file {init_file}, {threads} threads");
            let (stdout, view) = traced(exe, threads, &format!("{init_file}-{threads}"), &[]);
            assert_eq!(stdout, "hits=12 evens=6\n", "{what}");
            let master = seq([
                enter(&fpp),
                fork(threads),
                first.clone(),
                join(),
                fork(threads),
                second.clone(),
                join(),
                leave(&fpp),
            ]);
            assert_location(&view, "Master thread", &master, &what);
            for k in 1..threads {
                let worker = seq([first.clone(), second.clone()]);
                assert_location(&view, &format!("OMP thread {k}"), &worker, &what);
            }
            let expected: Vec<(String, usize)> = used
                .iter()
                .map(|r| (r.clone(), if *r == fpp { 1 } else { t }))
                .collect();
            assert_enters(&view, &expected, &what);
            // The init file also registers the region the preprocessor left out (its handle is
            // assigned by OPARI2's init subroutine); lazily only what ran is defined.
            let mut names = used.clone();
            if init_file {
                names.extend([extra_par.clone(), extra_ibar.clone()]);
            }
            assert_regions(&view, &names, &what);
        }
    }
}

// ---- the parallel sections defect of OPARI2 ---------------------------------------------------

/// OPARI2 calls `POMP2_Sections_enter` for `!$omp parallel sections` without its CTC argument, so
/// the library sees garbage for the string and its length. The handle was assigned by the fork
/// of the same construct, so nothing reads the garbage, with or without an init file.
#[test]
fn parallel_sections_without_the_ctc_argument() {
    let scratch = Scratch::new("fortran-psections");
    let instrumented = instrument_fortran("f_psections.f90", &scratch.path);
    let text = std::fs::read_to_string(&instrumented).unwrap();
    let call = text
        .lines()
        .find(|l| l.contains("call POMP2_Sections_enter"))
        .unwrap();
    assert!(
        call.trim_end().ends_with("(opari2_region_1)"),
        "OPARI2 passes the CTC string after all? {call}"
    );
    let with_init =
        gfortran(&scratch.path, true).executable(std::slice::from_ref(&instrumented), "ps");
    let lazy = gfortran(&scratch.path, false).executable(&[instrumented], "ps_lazy");

    let s = Source::new("f_psections.f90");
    let line = s.line("!$omp parallel sections");
    let par = s.omp("parallel", line);
    let sections = s.omp("sections", line);
    let section = s.omp("section", line);
    let ibar = s.omp("implicit barrier", s.line("!$omp end parallel sections"));
    let team = seq([
        team_begin(),
        enter(&par),
        region(&sections, [star(region(&section, [])), region(&ibar, [])]),
        leave(&par),
        team_end(),
    ]);
    for threads in THREADS {
        let t = threads as usize;
        for (exe, init_file) in [(&with_init, true), (&lazy, false)] {
            let what = format!("init file {init_file}, {threads} threads");
            let (stdout, view) = traced(exe, threads, &format!("{init_file}-{threads}"), &[]);
            assert_eq!(stdout, "sum=6\n", "{what}");
            let master = seq([fork(threads), team.clone(), join()]);
            assert_location(&view, "Master thread", &master, &what);
            for k in 1..threads {
                assert_location(&view, &format!("OMP thread {k}"), &team, &what);
            }
            let expected = [
                (par.clone(), t),
                (sections.clone(), t),
                (section.clone(), 3),
                (ibar.clone(), t),
            ];
            assert_enters(&view, &expected, &what);
            assert_regions(&view, &expected.map(|(n, _)| n), &what);
        }
    }
}

// ---- the exported symbols ---------------------------------------------------------------------

/// The POMP2 symbols gfortran references for code instrumented by OPARI2 (semantics doc 2.1),
/// without the `pomp2_` prefix and the trailing underscore.
const FORTRAN_ENTRIES: [&str; 63] = [
    "assign_handle",
    "atomic_enter",
    "atomic_exit",
    "barrier_enter",
    "barrier_exit",
    "begin",
    "critical_begin",
    "critical_end",
    "critical_enter",
    "critical_exit",
    "destroy_lock",
    "destroy_nest_lock",
    "do_enter",
    "do_exit",
    "end",
    "finalize",
    "flush_enter",
    "flush_exit",
    "implicit_barrier_enter",
    "implicit_barrier_exit",
    "init",
    "init_lock",
    "init_nest_lock",
    "lib_get_max_threads",
    "master_begin",
    "master_end",
    "off",
    "on",
    "ordered_begin",
    "ordered_end",
    "ordered_enter",
    "ordered_exit",
    "parallel_begin",
    "parallel_end",
    "parallel_fork",
    "parallel_join",
    "section_begin",
    "section_end",
    "sections_enter",
    "sections_exit",
    "set_lock",
    "set_nest_lock",
    "single_begin",
    "single_end",
    "single_enter",
    "single_exit",
    "task_begin",
    "task_create_begin",
    "task_create_end",
    "task_end",
    "taskwait_begin",
    "taskwait_end",
    "test_lock",
    "test_nest_lock",
    "unset_lock",
    "unset_nest_lock",
    "untied_task_begin",
    "untied_task_create_begin",
    "untied_task_create_end",
    "untied_task_end",
    "user_assign_handle",
    "workshare_enter",
    "workshare_exit",
];

/// Defined text symbols of a library, as `nm` lists them.
fn defined_symbols(args: &[&str], file: &Path) -> BTreeSet<String> {
    let out = run(Command::new("nm").args(args).arg(file));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[1] == "T").then(|| f[2].to_string())
        })
        .collect()
}

#[test]
fn every_fortran_entry_point_is_exported_in_four_spellings() {
    let lib = library_dir();
    let shared = defined_symbols(&["-D", "--defined-only"], &lib.join("libpomptrace.so"));
    let archive = defined_symbols(&["--defined-only"], &lib.join("libpomptrace.a"));
    for entry in FORTRAN_ENTRIES {
        for name in [
            format!("pomp2_{entry}_"),
            format!("pomp2_{entry}"),
            format!("pomp2_{entry}__"),
            format!("POMP2_{}", entry.to_ascii_uppercase()),
        ] {
            assert!(shared.contains(&name), "libpomptrace.so lacks {name}");
            assert!(archive.contains(&name), "libpomptrace.a lacks {name}");
        }
    }
    let upper = |s: &str| s.starts_with("POMP2_") && !s.chars().any(|c| c.is_ascii_lowercase());
    assert_eq!(
        shared
            .iter()
            .filter(|s| s.starts_with("pomp2_") || upper(s))
            .count(),
        4 * FORTRAN_ENTRIES.len(),
        "exactly the Fortran spellings"
    );

    // Everything the instrumented Fortran test programs reference is there.
    let scratch = Scratch::new("fortran-symbols");
    let mut referenced = BTreeSet::new();
    for file in [
        "f_constructs.f90",
        "f_tasks_locks.f",
        "f_preproc.F90",
        "f_psections.f90",
    ] {
        let source = instrument_fortran(file, &scratch.path);
        let object = source.with_extension("o");
        run(Command::new("gfortran")
            .args(["-fopenmp", "-c"])
            .arg(&source)
            .arg("-o")
            .arg(&object)
            .current_dir(&scratch.path));
        let out = run(Command::new("nm").arg("-u").arg(&object));
        referenced.extend(
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .filter_map(|l| l.split_whitespace().last())
                .filter(|s| s.starts_with("pomp2_"))
                .map(String::from),
        );
    }
    assert!(referenced.len() > 40, "{referenced:?}");
    for name in &referenced {
        assert!(
            shared.contains(name),
            "{name} is referenced but not exported"
        );
    }

    // The C headers declare none of them.
    for header in ["pomp2_lib.h", "pomp2_user_lib.h"] {
        let text =
            std::fs::read_to_string(repo_root().join("include/opari2").join(header)).unwrap();
        assert!(
            !text.contains("pomp2_parallel_fork") && !text.contains("POMP2_PARALLEL_FORK"),
            "{header} declares Fortran symbols"
        );
    }
}
