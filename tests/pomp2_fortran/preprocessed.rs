//! `.F90` through the C preprocessor.

use super::*;

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
