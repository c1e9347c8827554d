//! Free form (`.f90`): every construct, with the init file, without it, and from a shared
//! library under LD_PRELOAD.

use super::*;

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
