//! The parallel sections defect of OPARI2.

use super::*;

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
